package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// A file is decoded in two steps: go-toml parses it into generic values (syntax errors
// stop there, with go-toml's position), then decodeInto walks the schema structs by
// their toml tags and fills them, collecting every unknown key and wrong type with the
// line the TOML parser saw it on. Doing the mapping ourselves is what lets one pass
// report all of a file's problems in TOML's words instead of stopping at the first
// Go-flavoured one.

// positions maps a key path to the line it is written on. Paths are dotted keys with
// array indices: "rate_limit.window", "domains[1]", "addresses[2].weight".
type positions map[string]int

// line is the line of path, or of its closest parent that has one; 0 when unknown.
func (p positions) line(path string) int {
	for path != "" {
		if l, ok := p[path]; ok {
			return l
		}
		path = parentPath(path)
	}
	return 0
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func indexPath(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// scanPositions records the line of every key, table header and array element of a
// document that go-toml has already parsed without error.
func scanPositions(data []byte) positions {
	pos := positions{}
	var p unstable.Parser
	p.Reset(data)
	s := &posScanner{p: &p, pos: pos, arrays: map[string]int{}}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			s.header(e)
		case unstable.KeyValue:
			s.keyValue(s.table, e)
		}
	}
	return pos
}

type posScanner struct {
	p      *unstable.Parser
	pos    positions
	table  string         // path of the current [table] or [[array]] element
	arrays map[string]int // elements seen so far per [[array]] path
}

func (s *posScanner) lineOf(n *unstable.Node) int {
	if n.Raw.Length == 0 {
		// Arrays carry no range; their first element that does is close enough.
		it := n.Children()
		for it.Next() {
			if l := s.lineOf(it.Node()); l > 0 {
				return l
			}
		}
		return 0
	}
	return s.p.Shape(n.Raw).Start.Line
}

func (s *posScanner) mark(path string, line int) {
	if _, ok := s.pos[path]; !ok && line > 0 {
		s.pos[path] = line
	}
}

// header handles [a.b] and [[a.b]]; earlier [[...]] parts resolve to their latest element.
func (s *posScanner) header(e *unstable.Node) {
	path, line := "", 0
	it := e.Key()
	for it.Next() {
		k := it.Node()
		if line == 0 {
			line = s.lineOf(k)
		}
		if n, ok := s.arrays[path]; ok && path != "" {
			path = indexPath(path, n-1)
		}
		path = joinPath(path, string(k.Data))
		s.mark(path, line)
	}
	if e.Kind == unstable.ArrayTable {
		n := s.arrays[path]
		s.arrays[path] = n + 1
		path = indexPath(path, n)
		s.mark(path, line)
	} else if n, ok := s.arrays[path]; ok {
		path = indexPath(path, n-1)
	}
	s.table = path
}

func (s *posScanner) keyValue(table string, kv *unstable.Node) {
	path, line := table, 0
	it := kv.Key()
	for it.Next() {
		k := it.Node()
		if line == 0 {
			line = s.lineOf(k)
		}
		path = joinPath(path, string(k.Data))
		s.mark(path, line)
	}
	s.value(path, kv.Value())
}

func (s *posScanner) value(path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.Array:
		i := 0
		it := v.Children()
		for it.Next() {
			el := it.Node()
			if el.Kind == unstable.Comment {
				continue
			}
			p := indexPath(path, i)
			s.mark(p, s.lineOf(el))
			s.value(p, el)
			i++
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				s.keyValue(path, kv)
			}
		}
	}
}

// report collects the problems of one file, each tied to a key path and its line.
type report struct {
	file string
	pos  positions
	errs []*Error
	// bad holds paths whose value could not be decoded; they keep their default, and
	// validation stays quiet about them so one mistake is reported once.
	bad map[string]bool
}

func newReport(file string, pos positions) *report {
	return &report{file: file, pos: pos, bad: map[string]bool{}}
}

// add records a problem with the key at path ("" for the whole file).
func (r *report) add(path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	r.errs = append(r.errs, &Error{File: r.file, Line: r.pos.line(path), Key: path, Msg: msg})
}

// invalid records a value that could not be decoded and marks its path.
func (r *report) invalid(path, format string, a ...any) {
	r.add(path, format, a...)
	r.bad[path] = true
}

// unknown records a key the schema does not have; hint says what was probably meant.
func (r *report) unknown(path, hint string) {
	r.errs = append(r.errs, &Error{File: r.file, Line: r.pos.line(path), Key: path, Msg: fmt.Sprintf("unknown key %q%s", path, hint)})
	r.bad[path] = true
}

// check records a validation problem unless the value at path (or a parent, or a
// child) already failed to decode.
func (r *report) check(path, format string, a ...any) {
	for p := path; p != ""; p = parentPath(p) {
		if r.bad[p] {
			return
		}
	}
	for p := range r.bad {
		if strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			return
		}
	}
	r.add(path, format, a...)
}

// err returns every problem in file order, or nil.
func (r *report) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	sort.SliceStable(r.errs, func(i, j int) bool { return r.errs[i].Line < r.errs[j].Line })
	errs := make([]error, len(r.errs))
	for i, e := range r.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// parseTOML parses data into generic values and their positions. A syntax error is
// returned as one *Error at go-toml's position: nothing after it can be trusted.
func parseTOML(data []byte, file string) (map[string]any, positions, error) {
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			msg := strings.TrimPrefix(de.Error(), "toml: ")
			key := strings.Join(de.Key(), ".")
			if key != "" {
				msg = key + ": " + msg
			}
			return nil, nil, &Error{File: file, Line: row, Key: key, Msg: msg}
		}
		return nil, nil, &Error{File: file, Msg: err.Error()}
	}
	return m, scanPositions(data), nil
}

var durationType = reflect.TypeFor[Duration]()

// decodeInto fills the struct that rv points to from a parsed table. Keys missing from
// m leave their field alone, so defaults set beforehand survive.
func decodeInto(r *report, m map[string]any, rv reflect.Value) {
	root := rv.Elem().Type()
	r.table(m, rv.Elem(), "", root)
}

func (r *report) table(m map[string]any, rv reflect.Value, path string, root reflect.Type) {
	fields := tomlFields(rv.Type())
	for _, k := range sortedKeys(m) {
		p := joinPath(path, k)
		i, ok := fields[k]
		if !ok {
			hint, moved := movedKeys[p]
			if !moved {
				hint = unknownKeyHint(k, path, rv.Type(), root)
			}
			r.unknown(p, hint)
			continue
		}
		r.value(m[k], rv.Field(i), p, root)
	}
}

// value decodes one TOML value into rv, or records why it cannot.
func (r *report) value(v any, rv reflect.Value, path string, root reflect.Type) {
	t := rv.Type()
	if t == durationType {
		r.duration(v, rv, path)
		return
	}
	mismatch := func() { r.invalid(path, "expected %s, got %s%s", tomlWant(t), tomlKind(v), quotedHint(v, t)) }
	switch t.Kind() {
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			mismatch()
			return
		}
		rv.SetString(s)
	case reflect.Int, reflect.Int64:
		n, ok := v.(int64)
		if !ok || rv.OverflowInt(n) {
			mismatch()
			return
		}
		rv.SetInt(n)
	case reflect.Float64:
		switch n := v.(type) {
		case int64:
			rv.SetFloat(float64(n))
		case float64:
			rv.SetFloat(n)
		default:
			mismatch()
		}
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			mismatch()
			return
		}
		rv.SetBool(b)
	case reflect.Interface:
		if v != nil {
			rv.Set(reflect.ValueOf(v))
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			mismatch()
			return
		}
		if t.Elem().Kind() == reflect.Interface {
			rv.Set(reflect.ValueOf(arr)) // parsed later by hand (addresses)
			return
		}
		out := reflect.MakeSlice(t, len(arr), len(arr))
		before := len(r.errs)
		for i, el := range arr {
			r.value(el, out.Index(i), indexPath(path, i), root)
		}
		if len(r.errs) == before {
			rv.Set(out)
		} else {
			r.bad[path] = true
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		out := reflect.MakeMapWithSize(t, len(m))
		before := len(r.errs)
		for _, k := range sortedKeys(m) {
			ev := reflect.New(t.Elem()).Elem()
			r.value(m[k], ev, joinPath(path, k), root)
			out.SetMapIndex(reflect.ValueOf(k), ev)
		}
		if len(r.errs) == before {
			rv.Set(out)
		} else {
			r.bad[path] = true
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		r.table(m, rv, path, root)
	case reflect.Pointer:
		m, ok := v.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		if rv.IsNil() {
			rv.Set(reflect.New(t.Elem()))
		}
		r.table(m, rv.Elem(), path, root)
	default:
		r.invalid(path, "cannot be set from a config file")
	}
}

// duration decodes a humantime string. A bare number is refused: "5" could mean
// seconds or milliseconds, and reading it as nanoseconds made every backend look dead.
func (r *report) duration(v any, rv reflect.Value, path string) {
	switch n := v.(type) {
	case string:
		d, err := ParseDuration(n)
		if err != nil {
			r.invalid(path, "%v", err)
			return
		}
		rv.SetInt(int64(d))
	case int64:
		if n == 0 {
			rv.SetInt(0) // zero is zero in every unit
			return
		}
		r.invalid(path, "%s", unitlessHint(strconv.FormatInt(n, 10)))
	case float64:
		if n == 0 {
			rv.SetInt(0)
			return
		}
		r.invalid(path, "%s", unitlessHint(strconv.FormatFloat(n, 'f', -1, 64)))
	default:
		r.invalid(path, "expected a duration such as \"10s\", got %s", tomlKind(v))
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// movedKeys are keys an earlier version read, with where they went.
var movedKeys = map[string]string{
	"forwarding.bungeecord_channel":  "; it moved: set [plugin_messaging] bungeecord = true, and bungeecord_channel = true in each server file whose plugins may use the channel",
	"forwarding.channel_permissions": "; it moved to [plugin_messaging.bungeecord_permissions]",
}

// tomlFields maps a struct's toml keys (and their alias tag, another accepted
// spelling) to field indexes.
func tomlFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		out[tag] = i
		if a := f.Tag.Get("alias"); a != "" {
			out[a] = i
		}
	}
	return out
}

// tomlKind names a decoded value the way a TOML file writes it.
func tomlKind(v any) string {
	switch x := v.(type) {
	case string:
		return "a string"
	case int64:
		return "a whole number"
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "a special float (inf/nan)"
		}
		return "a decimal number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "a date/time"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("an unsupported value (%T)", v)
}

// tomlWant names what a field accepts, in TOML terms.
func tomlWant(t reflect.Type) string {
	if t == durationType {
		return "a duration such as \"10s\""
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Interface {
			return "an array"
		}
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(tomlWant(t.Elem()), "a "), "an ") + "s"
	case reflect.Map:
		return "a table of " + strings.TrimPrefix(tomlWant(t.Elem()), "a ") + "s"
	case reflect.Struct, reflect.Pointer:
		return "a table"
	}
	return "a value"
}

// quotedHint points out a number or boolean written in quotes.
func quotedHint(v any, t reflect.Type) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return fmt.Sprintf(" (write %s without quotes)", strings.TrimSpace(s))
		}
	case reflect.Float64:
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return fmt.Sprintf(" (write %s without quotes)", strings.TrimSpace(s))
		}
	case reflect.Bool:
		if s == "true" || s == "false" {
			return fmt.Sprintf(" (write %s without quotes)", s)
		}
	}
	return ""
}
