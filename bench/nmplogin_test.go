package bench

import "testing"

// A server.js that cannot start is reported with node's own one-line reason,
// not its stack or version banner.
func TestNodeReason(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\nError: Cannot find module '/x/server.js'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n}\n\nNode.js v20.20.2\n",
			"Error: Cannot find module '/x/server.js'"},
		{"server: missing --version\nusage: ...\n", "server: missing --version"},
		{"", "no output"},
	} {
		if got := nodeReason(tc.out); got != tc.want {
			t.Errorf("nodeReason(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}
