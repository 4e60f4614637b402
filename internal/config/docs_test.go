package config

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
)

// The docs test keeps docs/configuration.md honest. The page has an "## infrarust.toml"
// part and a "## servers/*.toml" part; each "### " section documents the tables named
// in backticks in its heading (`[keepalive]`, `[motd.online]`, ...), or the top-level
// keys when the heading says "Top-level keys". A key is documented by a table row
// that starts with "| `key` |".

const configDoc = "../../docs/configuration.md"

// docRow is one documented key; array says its section is an array of tables
// ("### `[[webhooks]]` entries"), whose defaults apply per entry.
type docRow struct {
	table, key, def string
	line            int
	array           bool
}

var (
	scopeRe = regexp.MustCompile("`\\[+([a-z0-9_.]+)\\]+`")
	rowRe   = regexp.MustCompile("^\\| `([a-z0-9_]+)` \\| [^|]+ \\| ([^|]+) \\|")
)

// parseConfigDoc returns the documented keys per file part ("main" or "server").
func parseConfigDoc(t *testing.T) map[string][]docRow {
	t.Helper()
	f, err := os.Open(configDoc)
	if err != nil {
		t.Fatalf("open %s: %v", configDoc, err)
	}
	defer f.Close()
	out := map[string][]docRow{}
	part := ""
	var scopes []string
	array := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			scopes = nil
			switch strings.TrimSpace(line[3:]) {
			case "infrarust.toml":
				part = "main"
			case "servers/*.toml":
				part = "server"
			default:
				part = ""
			}
		case strings.HasPrefix(line, "### "):
			scopes = nil
			array = strings.Contains(line, "`[[")
			if strings.Contains(line, "Top-level keys") {
				scopes = []string{""}
			}
			for _, m := range scopeRe.FindAllStringSubmatch(line, -1) {
				scopes = append(scopes, m[1])
			}
		case part != "" && len(scopes) > 0:
			m := rowRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			for _, s := range scopes {
				out[part] = append(out[part], docRow{table: s, key: m[1], def: strings.TrimSpace(m[2]), line: n, array: array})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tomlKeys walks a struct type by its toml tags and returns "table.key" paths of the
// leaves; nested structs and pointers to structs are tables. Duration, slices, maps and
// interfaces are leaves.
func tomlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		path := tag
		if prefix != "" {
			path = prefix + "." + tag
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer || (ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct) {
			ft = ft.Elem() // a pointer table, or an array of tables ([[webhooks]])
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[Duration]() {
			keys = append(keys, tomlKeys(ft, path)...)
			continue
		}
		keys = append(keys, path)
	}
	return keys
}

// addressTableKeys are the keys of an address written as a table; they are parsed by
// hand (addresses is []any), so reflection cannot see them.
var addressTableKeys = []string{"addresses.address", "addresses.weight", "addresses.priority"}

func documentedPaths(rows []docRow) map[string]docRow {
	m := map[string]docRow{}
	for _, r := range rows {
		p := r.key
		if r.table != "" {
			p = r.table + "." + r.key
		}
		m[p] = r
	}
	return m
}

func TestConfigDocsCoverEveryKey(t *testing.T) {
	doc := parseConfigDoc(t)
	cases := []struct {
		part, file string
		keys       []string
	}{
		{"main", "infrarust.toml", tomlKeys(reflect.TypeFor[Config](), "")},
		{"server", "servers/*.toml", append(tomlKeys(reflect.TypeFor[Server](), ""), addressTableKeys...)},
	}
	for _, c := range cases {
		if len(c.keys) < 10 {
			t.Fatalf("reflection found only %d keys in %s; the walker is broken", len(c.keys), c.file)
		}
		documented := documentedPaths(doc[c.part])
		want := map[string]bool{}
		for _, k := range c.keys {
			want[k] = true
			if _, ok := documented[k]; !ok {
				t.Errorf("%s key %q is not documented in docs/configuration.md: add a row \"| `%s` | type | default | description with an example |\" under the %s section",
					c.file, k, k[strings.LastIndex(k, ".")+1:], sectionName(k))
			}
		}
		var stale []string
		for p, r := range documented {
			if !want[p] {
				stale = append(stale, fmt.Sprintf("%s (line %d)", p, r.line))
			}
		}
		sort.Strings(stale)
		for _, s := range stale {
			t.Errorf("docs/configuration.md documents %s key %s, which the code does not have", c.file, s)
		}
		for _, r := range doc[c.part] {
			if !strings.Contains(rowText(t, r.line), "Example: `") {
				t.Errorf("docs/configuration.md line %d (%s %s): the description has no \"Example: `...`\"", r.line, c.file, r.key)
			}
		}
	}
}

func sectionName(path string) string {
	i := strings.LastIndex(path, ".")
	if i < 0 {
		return "\"### Top-level keys\""
	}
	return "\"### `[" + path[:i] + "]`\""
}

func rowText(t *testing.T, line int) string {
	t.Helper()
	data, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	return lines[line-1]
}

// TestConfigDocsDefaultsMatchCode decodes each documented default (a backticked TOML
// value) over the code's defaults and checks that nothing changed: a default changed in
// the code but not in the docs, or the reverse, fails here.
func TestConfigDocsDefaultsMatchCode(t *testing.T) {
	doc := parseConfigDoc(t)
	checked := 0
	for _, r := range doc["main"] {
		if r.array {
			checked += checkArrayEntryDefault(t, r)
			continue
		}
		val, ok := backticked(r.def)
		if !ok {
			t.Errorf("docs/configuration.md line %d: infrarust.toml key %q needs a backticked TOML default, got %q", r.line, r.key, r.def)
			continue
		}
		src := r.key + " = " + val + "\n"
		if r.table != "" {
			src = "[" + r.table + "]\n" + src
		}
		got := Default()
		if err := toml.Unmarshal([]byte(src), got); err != nil {
			t.Errorf("docs/configuration.md line %d: default %s of %q is not valid TOML: %v", r.line, val, r.key, err)
			continue
		}
		if !equalIgnoringEmpty(reflect.ValueOf(got).Elem(), reflect.ValueOf(Default()).Elem()) {
			t.Errorf("docs/configuration.md line %d: documented default %s of [%s] %s differs from config.Default()", r.line, val, r.table, r.key)
		}
		checked++
	}
	for _, r := range doc["server"] {
		val, ok := backticked(r.def)
		if !ok {
			continue // *required*, *inherited*, *unset*: no single default to compare
		}
		key := r.key
		if r.table == "addresses" {
			continue // inline-table entries are checked through the parsed Address below
		}
		baseSrc := "domains = [\"docs.example\"]\n"
		if r.table != "" {
			baseSrc += "[" + r.table + "]\n"
		}
		if r.table == "server_manager" {
			// The table needs its required keys; pick the type that does not need this key.
			if key == "url" || key == "server_id" || key == "api_key" {
				baseSrc += "type = \"local\"\ncommand = \"run\"\n"
			} else {
				baseSrc += "type = \"pterodactyl\"\nurl = \"https://panel\"\nserver_id = \"s\"\napi_key = \"ptlc_k\"\n"
			}
		}
		got, err := ParseServer([]byte(baseSrc+key+" = "+val+"\n"), "docs.toml", Default())
		if err != nil {
			t.Errorf("docs/configuration.md line %d: default %s of %q does not load: %v", r.line, val, key, err)
			continue
		}
		base, err := ParseServer([]byte(baseSrc), "docs.toml", Default())
		if err != nil {
			t.Fatal(err)
		}
		if !equalIgnoringEmpty(reflect.ValueOf(got).Elem(), reflect.ValueOf(base).Elem()) {
			t.Errorf("docs/configuration.md line %d: documented default %s of %q differs from the server defaults", r.line, val, key)
		}
		checked++
	}
	s, err := ParseServer([]byte("domains = [\"d\"]\naddresses = [{ address = \"h\" }]\n"), "d.toml", Default())
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Addresses[0]; a.Weight != 1 || a.Priority != 0 || a.Address != "h:25565" {
		t.Errorf("address table defaults changed (%+v); update the [[addresses]] section", a)
	}
	if checked < 40 {
		t.Fatalf("only %d defaults were checked; the doc parser is broken", checked)
	}
}

func backticked(cell string) (string, bool) {
	if len(cell) < 3 || cell[0] != '`' || cell[len(cell)-1] != '`' || strings.Count(cell, "`") != 2 {
		return "", false
	}
	return cell[1 : len(cell)-1], true
}

// equalIgnoringEmpty is reflect.DeepEqual except that a nil and an empty slice or map
// are equal ("allow = []" documents the nil default), and Raw* fields (the undecoded
// form of addresses and domain_rewrite) are skipped in favour of their parsed twins.
func equalIgnoringEmpty(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Slice, reflect.Map:
		if a.Len() == 0 && b.Len() == 0 {
			return true
		}
		if a.Kind() == reflect.Map {
			return reflect.DeepEqual(a.Interface(), b.Interface())
		}
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalIgnoringEmpty(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalIgnoringEmpty(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalIgnoringEmpty(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); !f.IsExported() || strings.HasPrefix(f.Name, "Raw") {
				continue // Raw* hold the undecoded form; the parsed field next to it is compared
			}
			if !equalIgnoringEmpty(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
}

// TestConfigDocsWalkerSeesNewKeys guards the guard: a struct with a nested table and a
// pointer table yields dotted paths, so a key added anywhere is caught.
func TestConfigDocsWalkerSeesNewKeys(t *testing.T) {
	type inner struct {
		A Duration `toml:"a"`
		B []string `toml:"b"`
	}
	type outer struct {
		X     int    `toml:"x"`
		Skip  string `toml:"-"`
		T     inner  `toml:"t"`
		P     *inner `toml:"p"`
		NoTag string
	}
	got := tomlKeys(reflect.TypeFor[outer](), "")
	want := []string{"x", "t.a", "t.b", "p.a", "p.b"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tomlKeys = %v, want %v", got, want)
	}
}

// arrayEntryBase is the smallest valid entry of each documented array of tables in
// infrarust.toml, so one key at a time can be compared against its default.
var arrayEntryBase = map[string]string{
	"webhooks": "url = \"http://127.0.0.1:9/hook\"\nevents = [\"login\"]\n",
}

// checkArrayEntryDefault loads an entry with the documented default written out and
// one without the key: the two must be equal once the loader filled the defaults.
// Required keys (no backticked default) are skipped. It returns 1 when it compared.
func checkArrayEntryDefault(t *testing.T, r docRow) int {
	t.Helper()
	val, ok := backticked(r.def)
	if !ok {
		return 0
	}
	base, known := arrayEntryBase[r.table]
	if !known {
		t.Errorf("docs/configuration.md line %d: [[%s]] has no base entry in arrayEntryBase", r.line, r.table)
		return 0
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(base), "\n") {
		if !strings.HasPrefix(l, r.key+" =") {
			lines = append(lines, l)
		}
	}
	without := "[[" + r.table + "]]\n" + strings.Join(lines, "\n") + "\n"
	with := without + r.key + " = " + val + "\n"
	got, err := Parse([]byte(with), "docs.toml")
	if err != nil {
		t.Errorf("docs/configuration.md line %d: default %s of [[%s]] %s does not load: %v", r.line, val, r.table, r.key, err)
		return 0
	}
	want, err := Parse([]byte(without), "docs.toml")
	if err != nil {
		t.Fatalf("base [[%s]] entry does not load: %v", r.table, err)
	}
	if !equalIgnoringEmpty(reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()) {
		t.Errorf("docs/configuration.md line %d: documented default %s of [[%s]] %s differs from the loader's default", r.line, val, r.table, r.key)
	}
	return 1
}
