package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// DecodeJSON decodes the JSON value b into the generic values
// encoding/json's Unmarshal gives an any: map[string]any, []any, string,
// float64, bool and nil, with the same result (a repeated member's last
// value, invalid UTF-8 as U+FFFD, a number out of float64's range
// refused). It reads b once, where encoding/json checks it, then scans it
// again and unescapes every string: for a payload of a 256 KiB blob chunk
// that was the larger part of validating it (docs/performance.md, Blobs).
// Bytes after the value are refused.
func DecodeJSON(b []byte) (any, error) { return decodeJSON(b, false) }

// decodeJSON is DecodeJSON with numbers as json.Number when numbers is
// set, as jsonschema.UnmarshalJSON (encoding/json with UseNumber) gives
// them for validation.
func decodeJSON(b []byte, numbers bool) (any, error) {
	d := jsontext.NewDecoder(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	v, err := readJSON(d, numbers)
	if err != nil {
		return nil, err
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

func readJSON(d *jsontext.Decoder, numbers bool) (any, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		if numbers {
			return json.Number(tok.String()), nil
		}
		f, err := strconv.ParseFloat(tok.String(), 64)
		if err != nil {
			return nil, err
		}
		return f, nil
	case '{':
		m := map[string]any{}
		for d.PeekKind() != '}' {
			tok, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := readJSON(d, numbers)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		return m, nil
	case '[':
		a := []any{}
		for d.PeekKind() != ']' {
			v, err := readJSON(d, numbers)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := d.ReadToken(); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, errors.New("unexpected JSON token")
}
