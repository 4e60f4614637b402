package config

import "testing"

// FuzzEnvValue: any pair of NAME and NAME_FILE values gives a value, nothing, or
// an error; never a panic, and a set direct value is returned trimmed.
func FuzzEnvValue(f *testing.F) {
	f.Add("0123456789abcdef", "")
	f.Add("", "/nonexistent/secret")
	f.Add("  spaced  ", "")
	f.Add("a", "b")
	f.Fuzz(func(t *testing.T, direct, file string) {
		env := map[string]string{"X": direct, "X_FILE": file}
		v, ok, err := EnvValue("X", func(k string) (string, bool) { s, ok := env[k]; return s, ok })
		if err == nil && ok && v == "" {
			t.Fatal("ok with an empty value")
		}
	})
}
