package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// unknownKeyHint explains an unknown key in the table at tablePath (of type table, in
// a file whose schema is root), trying in turn: a close key of the same table (a typo),
// other tables that have exactly this key (a misplaced key), a close key of another
// table, and last what the table takes.
func unknownKeyHint(key, tablePath string, table, root reflect.Type) string {
	known := sortedFieldNames(table)
	if best := closestKey(key, known); best != "" {
		return fmt.Sprintf("; did you mean %s?", best)
	}
	others := otherTables(root, tablePath)
	var homes []string
	for _, o := range others {
		for _, k := range o.keys {
			if k == key {
				homes = append(homes, o.label)
			}
		}
	}
	if len(homes) > 0 {
		return fmt.Sprintf("; %s is a key of %s", key, joinOr(homes))
	}
	for _, o := range others {
		if best := closestKey(key, o.keys); best != "" {
			return fmt.Sprintf("; did you mean %s, a key of %s?", best, o.label)
		}
	}
	where := "this file"
	if tablePath != "" {
		where = "[" + tablePath + "]"
	}
	if len(known) <= 8 {
		return fmt.Sprintf("; %s takes %s", where, strings.Join(known, ", "))
	}
	return fmt.Sprintf("; docs/configuration.md lists the keys %s takes", where)
}

// keySet is one table of a schema as an operator writes it ("[web]") and its keys.
type keySet struct {
	label string
	keys  []string
}

// otherTables lists root's tables except the one at skip, the top level first. A
// server file's address tables are parsed by hand, so they are added here.
func otherTables(root reflect.Type, skip string) []keySet {
	var out []keySet
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		if path != skip {
			label := "the top level"
			if path != "" {
				label = "[" + path + "]"
			}
			out = append(out, keySet{label, sortedFieldNames(t)})
		}
		fields := tomlFields(t)
		for _, name := range sortedFieldNames(t) {
			ft := t.Field(fields[name]).Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != durationType {
				walk(ft, joinPath(path, name))
			}
		}
	}
	walk(root, "")
	if root == reflect.TypeFor[Server]() {
		out = append(out, keySet{`an address entry ({ address = "host:port", weight = N, priority = N })`, []string{"address", "priority", "weight"}})
	}
	return out
}

func sortedFieldNames(t reflect.Type) []string {
	fields := tomlFields(t)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// closestKey returns the candidate nearest to key when it is close enough to be a typo:
// one edit for short names, two up to eight characters, three beyond. Case and "-"
// versus "_" do not count. Ties go to the first candidate in order.
func closestKey(key string, candidates []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	k := norm(key)
	limit := 3
	switch {
	case len(k) <= 4:
		limit = 1
	case len(k) <= 8:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(k, norm(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance: insertions, deletions,
// substitutions and swaps of two neighbours ("wieght") each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// joinOr lists items as "a", "a or b", "a, b or c".
func joinOr(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// notOneOf is the message for a value outside a fixed set: the set, and the
// closest member when the value looks like a typo of it.
func notOneOf(v string, choices []string) string {
	msg := fmt.Sprintf("%q is not one of %s", v, strings.Join(choices, ", "))
	if best := closestKey(v, choices); best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return msg
}
