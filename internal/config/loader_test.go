package config

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// durationPaths lists the dotted key of every Duration field reachable from t.
func durationPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		path := tag
		if prefix != "" {
			path = prefix + "." + tag
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == reflect.TypeFor[Duration]():
			out = append(out, path)
		case ft.Kind() == reflect.Struct:
			out = append(out, durationPaths(ft, path)...)
		}
	}
	return out
}

// tomlAt writes key = value at its dotted path, with the table header on line 1 or 2 so
// the expected line is known: it returns the file text and the line of the key.
func tomlAt(path, value, preamble string) (string, int) {
	i := strings.LastIndex(path, ".")
	if i < 0 {
		return preamble + path + " = " + value + "\n", strings.Count(preamble, "\n") + 1
	}
	head := preamble + "[" + path[:i] + "]\n"
	if path[:i] == "server_manager" {
		head += "type = \"local\"\ncommand = \"java\"\n"
	}
	return head + path[i+1:] + " = " + value + "\n", strings.Count(head, "\n") + 1
}

// TestBareNumberDurationIsRefused covers every duration key of both kinds of file, so a
// new duration key cannot slip back to "5 means 5 nanoseconds".
func TestBareNumberDurationIsRefused(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	files := []struct {
		kind     string
		root     reflect.Type
		preamble string
	}{
		{"main", reflect.TypeFor[Config](), ""},
		{"server", reflect.TypeFor[Server](), "domains = [\"a.example\"]\naddresses = [\"127.0.0.1:25566\"]\n"},
	}
	units := []string{"ns", "us", "ms", "s", "m", "h", "d", "w"}
	for _, f := range files {
		paths := durationPaths(f.root, "")
		if len(paths) < 5 {
			t.Fatalf("%s: found only %d duration keys; the walker is broken", f.kind, len(paths))
		}
		for _, key := range paths {
			for _, value := range []string{"5", `"5"`, "2.5", `"1h30"`} {
				t.Run(f.kind+"/"+key+"="+value, func(t *testing.T) {
					text, line := tomlAt(key, value, f.preamble)
					var main string
					servers := map[string]string{}
					file := "infrarust.toml"
					if f.kind == "main" {
						main = text
					} else {
						servers["s.toml"] = text
						file = "s.toml"
					}
					_, err := Load(writeTree(t, main, servers), true)
					if err == nil {
						t.Fatalf("%s = %s loaded; a duration without a unit must be refused", key, value)
					}
					msg := err.Error()
					for _, want := range []string{file + ":" + strconv.Itoa(line) + ": " + key + ":", "has no unit"} {
						if !strings.Contains(msg, want) {
							t.Errorf("error %q lacks %q", msg, want)
						}
					}
					for _, u := range units {
						if !strings.Contains(msg, " "+u+",") && !strings.Contains(msg, " "+u+";") {
							t.Errorf("error %q does not list the unit %q", msg, u)
						}
					}
				})
			}
		}
	}
}

func TestZeroDurationNeedsNoUnit(t *testing.T) {
	for _, v := range []string{"0", `"0"`, `"0s"`} {
		cfg, err := Parse([]byte("[status_cache]\nttl = "+v+"\n"), "z.toml")
		if err != nil || cfg.StatusCache.TTL != 0 {
			t.Errorf("ttl = %s: %v, %v; zero is zero in every unit", v, cfg, err)
		}
	}
}

// TestCheckRefusesWhatServeRefuses: every startup refusal that comes from a configured
// value is an error of the loader, with the line of the key.
func TestCheckRefusesWhatServeRefuses(t *testing.T) {
	longKey := "0123456789abcdef" // 16
	cases := []struct {
		name, toml, env string
		want            string // "" means it must load
	}{
		{"port out of range", "bind = \"0.0.0.0:99999\"\n", "", "f.toml:1: bind: \"0.0.0.0:99999\" has an invalid port"},
		{"named port", "\nbind = \"127.0.0.1:mc\"\n", "", "f.toml:2: bind: \"127.0.0.1:mc\" has a port that is not a number"},
		{"port zero", "bind = \"0.0.0.0:0\"\n", "", "f.toml:1: bind: \"0.0.0.0:0\" has port 0"},
		{"no port", "bind = \"0.0.0.0\"\n", "", "f.toml:1: bind: \"0.0.0.0\" is not host:port"},
		{"hostname", "bind = \"mc.example.com:25565\"\n", "", "is not an IP address"},
		{"negative port", "bind = \"0.0.0.0:-1\"\n", "", "f.toml:1: bind:"},
		{"ipv6 any", "bind = \"[::]:25565\"\n", "", ""},
		{"all interfaces", "bind = \":25565\"\n", "", ""},
		{"localhost", "bind = \"localhost:25565\"\n", "", ""},
		{"web bind no port", "bind = \"0.0.0.0:25565\"\n[web]\nbind = \"0.0.0.0\"\n", "", "f.toml:3: web.bind: \"0.0.0.0\" is not host:port"},
		{"web bind bad port", "[web]\nbind = \"127.0.0.1:80800\"\n", "", "f.toml:2: web.bind:"},
		{"web bind ignored when disabled", "[web]\nenabled = false\nbind = \"nonsense\"\n", "", ""},
		{"public admin without key", "[web]\nbind = \"0.0.0.0:8080\"\n", "", "f.toml:2: web.bind: \"0.0.0.0:8080\" is reachable from other machines and no API key is set"},
		{"public admin, key in env", "[web]\nbind = \"0.0.0.0:8080\"\n", longKey, ""},
		{"public admin, key in file", "[web]\nbind = \"0.0.0.0:8080\"\napi_key = \"" + longKey + "\"\n", "", ""},
		{"public admin, disabled", "[web]\nenabled = false\nbind = \"0.0.0.0:8080\"\n", "", ""},
		{"short api_key", "[web]\n\napi_key = \"0123456789abcde\"\n", "", "f.toml:3: web.api_key: the key is 15 characters; use at least 16"},
		{"short api_key with spaces", "[web]\napi_key = \"  0123456789abcde  \"\n", "", "the key is 15 characters"},
		{"short env key", "[web]\nenabled = true\n", "0123456789abcde", "environment: INFRARUST_API_KEY is 15 characters"},
		{"the environment wins over the file: a short env key is refused", "[web]\napi_key = \"" + longKey + "\"\n", "short", "environment: INFRARUST_API_KEY is 5 characters"},
		{"loopback, no key", "[web]\nbind = \"127.0.0.1:8080\"\n", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(APIKeyEnv, tc.env)
			_, err := Parse([]byte(tc.toml), "f.toml")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("loaded; want an error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q; want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestShortAPIKeyIsNoLongerOnlyAWarning(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	_, err := Load(writeTree(t, "[web]\napi_key = \"fifteen-chars!!\"\n", nil), true)
	if err == nil || !strings.Contains(err.Error(), "infrarust.toml:2: web.api_key:") {
		t.Fatalf("a 15-character api_key must fail config check like it fails serve; got %v", err)
	}
}

// TestErrorLinesComeFromTheDecoder uses files where searching the text for the key
// name finds the wrong line: a key of the same name in another table, dotted keys,
// inline tables, [[array]] tables and a domain mentioned in a comment.
func TestErrorLinesComeFromTheDecoder(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	main := []struct {
		name, toml, want string
	}{
		{"table after a same-named top-level key", "max_connections = 10\nbind = \"0.0.0.0:25565\"\n\n[rate_limit]\nenabled = true\nmax_connections = 0\n", "f.toml:6: rate_limit.max_connections:"},
		{"rate_limit not at line 1", "bind = \"0.0.0.0:25565\"\n\n[rate_limit]\nenabled = true\nwindow = \"0s\"\n", "f.toml:5: rate_limit.window:"},
		{"web bind below the proxy bind", "bind = \"0.0.0.0:25565\"\n[web]\nbind = \"127.0.0.1:x\"\n", "f.toml:3: web.bind:"},
		{"dotted key", "bind = \"0.0.0.0:25565\"\nrate_limit.ipv6_prefix = 200\n", "f.toml:2: rate_limit.ipv6_prefix:"},
		{"inline table", "bind = \"0.0.0.0:25565\"\nactive_health = {\n  kind = \"ping\" }\n", "f.toml:3: active_health.kind:"},
		{"list element", "trusted_proxies = [\n  \"10.0.0.0/8\",\n  \"not-a-cidr\",\n]\n", "f.toml:3: trusted_proxies[1]:"},
		{"type error in a table", "\n\n[keepalive]\nretries = \"3\"\n", "f.toml:4: keepalive.retries: expected a whole number, got a string (write 3 without quotes)"},
	}
	for _, tc := range main {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.toml), "f.toml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to contain %q", err, tc.want)
			}
		})
	}
	servers := []struct {
		name, toml, want string
	}{
		{"array table entry", "domains = [\"a\"]\n\n[[addresses]]\naddress = \"10.0.0.1\"\n\n[[addresses]]\naddress = \"10.0.0.2\"\nweight = 0\n", "s.toml:8: addresses[1].weight:"},
		{"domain in a comment first", "domains = [\n  # \"bad domain\" was here before\n  \"ok.example\",\n  \"bad domain\",\n]\n", "s.toml:4: domains[1]:"},
		{"per-server ip_filter", "domains = [\"a\"]\n[ip_filter]\nallow = [\"10.0.0.0/8\"]\ndeny = [\n  \"x\",\n]\n", "s.toml:5: ip_filter.deny[0]:"},
		{"server manager key", "domains = [\"a\"]\n[server_manager]\ntype = \"local\"\ncommand = \"java\"\nready_pattern = \"(\"\n", "s.toml:5: server_manager.ready_pattern:"},
	}
	for _, tc := range servers {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseServer([]byte(tc.toml), "s.toml", Default())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDomainConflictLineIsTheDomainsLine(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	path := writeTree(t, "", map[string]string{
		"a.toml": "domains = [\"a.com\"]\n",
		"b.toml": "name = \"b\"\ndomains = [\n  # a.com moved here from a.toml\n  \"b.com\",\n  \"a.com\",\n]\n",
	})
	_, err := Load(path, true)
	if err == nil || !strings.Contains(err.Error(), "b.toml:5: domain \"a.com\" is already claimed by server \"a\"") {
		t.Fatalf("error %v; want the conflict at b.toml:5", err)
	}
}

// TestTypeErrorsSpeakTOML: an operator reads "whole number" and "string", never Go types.
func TestTypeErrorsSpeakTOML(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	cases := []struct{ toml, want string }{
		{"max_connections = \"many\"\n", "max_connections: expected a whole number, got a string"},
		{"max_connections = 1.5\n", "max_connections: expected a whole number, got a decimal number"},
		{"receive_proxy_protocol = 1\n", "receive_proxy_protocol: expected true or false, got a whole number"},
		{"receive_proxy_protocol = \"true\"\n", "expected true or false, got a string (write true without quotes)"},
		{"bind = 25565\n", "bind: expected a string, got a whole number"},
		{"trusted_proxies = \"10.0.0.0/8\"\n", "trusted_proxies: expected an array of strings, got a string"},
		{"trusted_proxies = [\"10.0.0.0/8\", 7]\n", "trusted_proxies[1]: expected a string, got a whole number"},
		{"web = 5\n", "web: expected a table, got a whole number"},
		{"[web]\nbind = [\"127.0.0.1:8080\"]\n", "web.bind: expected a string, got an array"},
		{"connect_timeout = true\n", "connect_timeout: expected a duration such as \"10s\", got a boolean"},
		{"connect_timeout = 1979-05-27\n", "got a date/time"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.toml), "f.toml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to contain %q", tc.toml, err, tc.want)
			continue
		}
		for _, goism := range []string{"struct field", "config.", "int64", "float64", "interface", "[]string", "toml: "} {
			if strings.Contains(err.Error(), goism) {
				t.Errorf("%q: error %q speaks Go (%q)", tc.toml, err, goism)
			}
		}
	}
	sCases := []struct{ toml, want string }{
		{"domains = \"a\"\n", "domains: expected an array of strings, got a string"},
		{"domains = [\"a\"]\nslow_start_aggression = \"fast\"\n", "slow_start_aggression: expected a number, got a string"},
		{"domains = [\"a\"]\naddresses = [7]\n", "addresses[0]: each entry is \"host:port\" or { address = \"host:port\", weight = N, priority = N }, not a whole number"},
		{"domains = [\"a\"]\naddresses = [{ address = \"x\", weight = \"2\" }]\n", "addresses[0].weight: expected a whole number from 1 to 1000000, got a string"},
		{"domains = [\"a\"]\n[server_manager]\ntype = \"local\"\ncommand = \"java\"\nenv = { A = 1 }\n", "server_manager.env.A: expected a string, got a whole number"},
	}
	for _, tc := range sCases {
		_, err := ParseServer([]byte(tc.toml), "s.toml", Default())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to contain %q", tc.toml, err, tc.want)
		}
	}
}

// TestEveryErrorOfAFileIsReported: one run of `config check` lists them all, in file
// order, across infrarust.toml and the server files.
func TestEveryErrorOfAFileIsReported(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	path := writeTree(t, `max_connections = "many"
conect_timeout = "1s"
handshake_timeout = 10

[rate_limit]
enabled = true
max_connections = 0

[web]
requests_per_minute = 1.5
`, map[string]string{
		"a.toml": "domains = [\"a\"]\nbalanse = \"least_conn\"\nslow_start = 30\n",
		"b.toml": "domains = [\"b\"]\nproxy_mode = \"warp\"\n",
	})
	_, err := Load(path, true)
	if err == nil {
		t.Fatal("loaded")
	}
	want := []string{
		"infrarust.toml:1: max_connections:",
		"infrarust.toml:2: unknown key \"conect_timeout\"",
		"infrarust.toml:3: handshake_timeout:",
		"infrarust.toml:7: rate_limit.max_connections:",
		"infrarust.toml:10: web.requests_per_minute:",
		"a.toml:2: unknown key \"balanse\"",
		"a.toml:3: slow_start:",
		"b.toml:2: proxy_mode:",
	}
	msg := err.Error()
	last := -1
	for _, w := range want {
		i := strings.Index(msg, w)
		if i < 0 {
			t.Errorf("error lacks %q:\n%s", w, msg)
			continue
		}
		if i < last {
			t.Errorf("%q is out of file order:\n%s", w, msg)
		}
		last = i
	}
	if n := strings.Count(msg, "\n") + 1; n != len(want) {
		t.Errorf("%d errors reported, want %d (each problem once):\n%s", n, len(want), msg)
	}
}

func TestUnknownKeySuggestsTheClosestKey(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	cases := []struct{ toml, want string }{
		{"conect_timeout = \"1s\"\n", "f.toml:1: unknown key \"conect_timeout\"; did you mean connect_timeout?"},
		{"Connect-Timeout = \"1s\"\n", "did you mean connect_timeout?"},
		{"conect_timout = \"1s\"\n", "did you mean connect_timeout?"},
		{"[rate_limit]\nwindw = \"1s\"\n", "f.toml:2: unknown key \"rate_limit.windw\"; did you mean window?"},
		{"api_key = \"0123456789abcdef\"\n", "unknown key \"api_key\"; api_key is a key of [web]"},
		{"[keepalive]\ncolour = 1\n", "unknown key \"keepalive.colour\"; [keepalive] takes interval, retries, time"},
		{"bnd = \"0.0.0.0:1\"\n", "did you mean bind?"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.toml), "f.toml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to contain %q", tc.toml, err, tc.want)
		}
	}
	// Far from every key: no guess.
	_, err := Parse([]byte("colour = \"red\"\n"), "f.toml")
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("colour: %v; want an unknown-key error without a guess", err)
	}
	_, err = ParseServer([]byte("domains = [\"a\"]\naddresses = [{ address = \"x\", wieght = 2 }]\n"), "s.toml", Default())
	if err == nil || !strings.Contains(err.Error(), "s.toml:2: addresses[0].wieght: unknown key \"wieght\" in an address table; did you mean weight?") {
		t.Errorf("address table: %v", err)
	}
	_, err = ParseServer([]byte("domains = [\"a\"]\n[motd.ofline]\ntext = \"x\"\n"), "s.toml", Default())
	if err == nil || !strings.Contains(err.Error(), "s.toml:2: unknown key \"motd.ofline\"; did you mean offline?") {
		t.Errorf("motd table: %v", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"wieght", "weight", 1}, {"conect_timeout", "connect_timeout", 1},
		{"kitten", "sitting", 3}, {"ca", "abc", 3}, {"bind", "bind", 0},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := closestKey("xyz", []string{"bind", "web"}); got != "" {
		t.Errorf("closestKey(xyz) = %q; a three-letter key is one edit from nothing here", got)
	}
	if got := closestKey("retrys", []string{"retries", "time"}); got != "retries" {
		t.Errorf("closestKey(retrys) = %q, want retries", got)
	}
}

// A 1×1 PNG: the loader only checks the signature, the client draws it.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func TestFaviconsAreReadAtLoad(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	png, err := base64.StdEncoding.DecodeString(tinyPNG)
	if err != nil {
		t.Fatal(err)
	}
	path := writeTree(t, "[default_motd]\nfavicon = \"icons/default.png\"\n", map[string]string{
		"a.toml": "domains = [\"a\"]\n[motd.offline]\ntext = \"down\"\nfavicon = \"icons/default.png\"\n",
	})
	dir := filepath.Dir(path)
	if err := os.MkdirAll(filepath.Join(dir, "icons"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "icons", "default.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // relative to infrarust.toml, not to the working directory
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "data:image/png;base64," + tinyPNG
	if cfg.DefaultMOTD.Favicon != want || cfg.Servers[0].MOTD.Offline.Favicon != want {
		t.Fatalf("favicons not loaded as data URIs: %q / %q", cfg.DefaultMOTD.Favicon, cfg.Servers[0].MOTD.Offline.Favicon)
	}

	if err := os.WriteFile(filepath.Join(dir, "icons", "default.png"), []byte("GIF89a..."), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path, true)
	if err == nil || !strings.Contains(err.Error(), "infrarust.toml:2: default_motd.favicon:") || !strings.Contains(err.Error(), "a.toml:4: motd.offline.favicon:") || !strings.Contains(err.Error(), "not a PNG") {
		t.Fatalf("a favicon that is not a PNG must be an error at its line: %v", err)
	}
	os.Remove(filepath.Join(dir, "icons", "default.png"))
	_, err = Load(path, true)
	if err == nil || !strings.Contains(err.Error(), "infrarust.toml:2: default_motd.favicon: cannot read the icon") {
		t.Fatalf("a missing favicon must be an error at its line: %v", err)
	}
}

func TestPterodactylNeedsWhatTheManagerNeeds(t *testing.T) {
	base := "domains = [\"a\"]\n[server_manager]\ntype = \"pterodactyl\"\nserver_id = \"1a2b\"\n"
	for _, tc := range []struct{ extra, want string }{
		{"url = \"https://panel.example.com\"\napi_key = \"ptlc_x\"\n", ""},
		{"url = \"https://panel.example.com\"\napi_key = \"env:PANEL_KEY\"\n", ""},
		{"url = \"https://panel.example.com\"\n", "needs api_key"},
		{"url = \"https://panel.example.com\"\napi_key = \"env:\"\n", "needs api_key"},
		{"url = \"panel.example.com\"\napi_key = \"ptlc_x\"\n", "s.toml:5: server_manager.url: \"panel.example.com\" is not an http(s) panel address"},
	} {
		_, err := ParseServer([]byte(base+tc.extra), "s.toml", Default())
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want %q", tc.extra, err, tc.want)
		}
	}
}

func TestParseServerWithoutGlobal(t *testing.T) {
	s, err := ParseServer([]byte("domains = [\"a\"]\n[active_health]\nkind = \"status_ping\"\n"), "s.toml", nil)
	if err != nil || s.ActiveHealth.Timeout.D() != Default().ActiveHealth.Timeout.D() {
		t.Fatalf("nil global must mean the defaults: %+v, %v", s, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("bind = \"0.0.0.0:25565\"\n[rate_limit]\nenabled = true\nwindow = \"10s\"\n"))
	f.Add([]byte("connect_timeout = 5\nrate_limit.window = 1.5\n[[web]]\nx = 1\n"))
	f.Add([]byte("a = [1, [2, { b = 3 }]]\n[[c.d]]\ne = 1\n[[c.d]]\n[c.d.f]\ng = 2\n"))
	f.Add([]byte("[web]\nbind = \"[::]:99999\"\napi_key = \"short\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(data, "f.toml")
		_ = scanPositions(data) // must not panic on any input, parsed or not
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10s", "1h 30m", "5", "1.5.5s", "9999999999999999999d", "0", "1 week 3 days", "µs", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseDuration(%q) = %v: negative", s, d)
		}
	})
}

// Every problem of an address table is reported at once, with the same hint for a
// quoted number as a top-level key gets.
func TestAddressTableReportsEveryProblem(t *testing.T) {
	_, err := ParseServer([]byte("domains = [\"a\"]\naddresses = [{ address = \"10.0.0.1\", weight = \"3\", priority = \"1\" }, { weight = 2 }]\n"), "s.toml", Default())
	if err == nil {
		t.Fatal("a quoted weight and priority must be refused")
	}
	for _, want := range []string{
		`s.toml:2: addresses[0].weight: expected a whole number from 1 to 1000000, got a string (write 3 without quotes)`,
		`s.toml:2: addresses[0].priority: expected a whole number from 0 to 1000, got a string (write 1 without quotes)`,
		`addresses[1]: an address table needs address = "host:port"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}

// VanillaName is the rule VanillaNames says, letter for letter.
func TestVanillaNameMatchesItsRegexp(t *testing.T) {
	re := regexp.MustCompile(VanillaNames)
	for _, name := range []string{"", "ab", "abc", "Notch", "a_b_0", "0123456789abcdef", "0123456789abcdefg", "a b_0", "§cR_0", "../x_0", "Ünïcode", "ab-c", "abc\\n", "ABC_xyz_123"} {
		if got, want := VanillaName(name), re.MatchString(name); got != want {
			t.Errorf("VanillaName(%q) = %v, the regexp says %v", name, got, want)
		}
	}
}
