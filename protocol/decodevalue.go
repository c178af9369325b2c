package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
)

// bigString is the length from which DecodeValue moves a payload's top-level
// string into its field directly rather than through JSON.
const bigString = 4 << 10

// DecodeValue turns a payload decoded into generic values (as Socket.IO
// libraries and DecodeJSON deliver them) into out, a pointer to a struct,
// as encoding/json does when the payload is encoded and decoded again. A
// long top-level string (a put_blob or get_blob chunk's base64, 350 KB) is
// not: encoding it and decoding it again were the larger part of the
// Computer's CPU per uploaded chunk and of the Agent's per downloaded one
// (docs/performance.md, Blobs). It is set on the field whose JSON name is its key, or, when out
// has no field encoding/json could match it with, left out as
// encoding/json ignores it; any other case (an embedded struct, a field
// whose name matches only case-insensitively, a field that is not a
// string) takes the JSON way, so the result is the same.
func DecodeValue(v any, out any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return remarshal(v, out)
	}
	var direct map[string]string
	for k, x := range m {
		if s, ok := x.(string); ok && len(s) >= bigString {
			if direct == nil {
				direct = map[string]string{}
			}
			direct[k] = s
		}
	}
	if direct == nil {
		return remarshal(v, out)
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return remarshal(v, out)
	}
	st := rv.Elem()
	fields := map[string]reflect.Value{} // key → field to set; invalid: dropped
	for k := range direct {
		f, ok := stringField(st, k)
		if !ok {
			delete(direct, k) // takes the JSON way
			continue
		}
		fields[k] = f
	}
	if len(fields) == 0 {
		return remarshal(v, out)
	}
	rest := make(map[string]any, len(m)-len(fields))
	for k, x := range m {
		if _, ok := fields[k]; !ok {
			rest[k] = x
		}
	}
	if err := remarshal(rest, out); err != nil {
		return err
	}
	for k, f := range fields {
		if f.IsValid() {
			f.SetString(direct[k])
		}
	}
	return nil
}

// stringField finds the field of struct st that encoding/json would
// decode key into: ok with that field when its JSON name is key and it is
// a string, ok with the zero Value when no field could match key (the key
// is ignored), not ok when DecodeValue cannot tell or the field is no string.
func stringField(st reflect.Value, key string) (reflect.Value, bool) {
	var found reflect.Value
	t := st.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return reflect.Value{}, false // promoted fields: leave it to encoding/json
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		switch {
		case name == key:
			if found.IsValid() || sf.Type.Kind() != reflect.String || strings.Contains(","+opts+",", ",string,") {
				return reflect.Value{}, false
			}
			found = st.Field(i)
		case strings.EqualFold(name, key):
			return reflect.Value{}, false
		}
	}
	return found, true
}

// remarshal is DecodeValue through JSON.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
