package dpe

import (
	"encoding/json"
	"strconv"
)

// Element content is a JSON object (map[string]any). Values come either from
// encoding/json (string, float64, bool, []any, map[string]any, or
// json.Number with UseNumber) or from Go code ([]string, [][]string, int,
// ...); the accessors below read both without decoding into structs.

// contentString returns m[k] when it is a string.
func contentString(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

// contentInt returns m[k] when it is an integral number.
func contentInt(m map[string]any, k string) (int, bool) {
	switch x := m[k].(type) {
	case float64:
		if x == float64(int(x)) {
			return int(x), true
		}
	case int:
		return x, true
	case int64:
		return int(x), true
	case int32:
		return int(x), true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return int(n), true
		}
	}
	return 0, false
}

// contentBool returns m[k] when it is a boolean.
func contentBool(m map[string]any, k string) (bool, bool) {
	b, ok := m[k].(bool)
	return b, ok
}

// listLen returns the length of a list value, or -1 when v is not a list.
func listLen(v any) int {
	switch x := v.(type) {
	case []any:
		return len(x)
	case []string:
		return len(x)
	}
	return -1
}

// listValue returns item i of a list value (listLen(v) > i).
func listValue(v any, i int) any {
	switch x := v.(type) {
	case []any:
		return x[i]
	case []string:
		return x[i]
	}
	return nil
}

// listItem returns item i of a list value (listLen(v) > i) as text.
func listItem(v any, i int) string {
	switch x := v.(type) {
	case []any:
		return scalar(x[i])
	case []string:
		return x[i]
	}
	return ""
}

// scalar renders a JSON value as text: strings as they are, numbers in
// their shortest form, null as "", objects and arrays as compact JSON.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// tableRows reads the "rows" of a table without copying them.
type tableRows struct {
	a []any      // from JSON: each row a []any (or []string)
	s [][]string // from Go code
}

func newTableRows(v any) (tableRows, bool) {
	switch x := v.(type) {
	case []any:
		return tableRows{a: x}, true
	case [][]string:
		return tableRows{s: x}, true
	case nil:
		return tableRows{}, true
	}
	return tableRows{}, false
}

func (t tableRows) len() int {
	if t.s != nil {
		return len(t.s)
	}
	return len(t.a)
}

func (t tableRows) width(i int) int {
	if t.s != nil {
		return len(t.s[i])
	}
	if n := listLen(t.a[i]); n > 0 {
		return n
	}
	return 0
}

func (t tableRows) cell(i, j int) string {
	if t.s != nil {
		return t.s[i][j]
	}
	return listItem(t.a[i], j)
}
