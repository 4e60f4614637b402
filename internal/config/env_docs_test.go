package config

import (
	"os"
	"strings"
	"testing"
)

// Every variable the loader reads is in the precedence table of docs/configuration.md.
func TestEnvironmentVariablesAreDocumented(t *testing.T) {
	data, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if len(EnvOverrides) < 5 {
		t.Fatalf("only %d overrides; the list is broken", len(EnvOverrides))
	}
	for _, o := range EnvOverrides {
		row := "| `" + o.Name + "` | `"
		if !strings.Contains(doc, row) {
			t.Errorf("%s (sets %s) has no row starting %q in docs/configuration.md's precedence table", o.Name, o.Key, row)
		}
	}
}
