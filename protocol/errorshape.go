package protocol

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// ErrorShape is how a generation writes an error inside an ack
// (spec/generations.md, Errors).
type ErrorShape uint8

const (
	// ErrorShapeNone: the ack is never an error.
	ErrorShapeNone ErrorShape = iota
	// ErrorShapeNested: {"error":{"code","message","details"}}, 0.2.0.
	ErrorShapeNested
	// ErrorShapeFlat: {"code","message","details",…} with the code-specific
	// members at the top level, 0.3.0 and 0.4.0.
	ErrorShapeFlat
)

func (s ErrorShape) String() string {
	switch s {
	case ErrorShapeNested:
		return "nested"
	case ErrorShapeFlat:
		return "flat"
	}
	return "none"
}

// schemaFile is the payload schema of the shape.
func (s ErrorShape) schemaFile() string {
	if s == ErrorShapeFlat {
		return "error_payload_flat.json"
	}
	return "error_payload.json"
}

// IsErrorShaped reports whether a decoded ack value v has the shape s of
// an error payload: for ErrorShapeNested an object with an "error" member,
// for ErrorShapeFlat an object with a numeric "code" member (no answer of
// any event has one). It says which schema checks v, not whether v is
// valid.
func IsErrorShaped(s ErrorShape, v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	switch s {
	case ErrorShapeNested:
		_, ok = m["error"]
		return ok
	case ErrorShapeFlat:
		switch m["code"].(type) {
		case float64, json.Number, int, int64:
			return true
		}
	}
	return false
}

// flatOrder is the order of the code-specific members in a flat error, as
// the Rust reference declares them (the Python reference writes the same
// order for every error it sends).
var flatOrder = []string{"server_version", "client_version", "min_supported", "max_supported", "mcp_server", "capability"}

// In returns e as the ack value of a session of generation g: a
// json.Marshaler that writes g's shape. Pass it to the ack as it is.
func (e *Error) In(g Generation) json.Marshaler {
	s := g.ErrorShape()
	if s == ErrorShapeNone {
		s = ErrorShapeNested
	}
	return shaped{e: e, shape: s}
}

type shaped struct {
	e     *Error
	shape ErrorShape
}

func (s shaped) MarshalJSON() ([]byte, error) { return s.e.MarshalShape(s.shape) }

// MarshalShape encodes e in shape s. Nested: {"error":{"code","message",
// "details"}}, Fields written into details beside its own members (a detail
// of the same name wins). Flat: {"code","message","details",…Fields}, the
// code-specific members in the references' order, then the others sorted.
func (e *Error) MarshalShape(s ErrorShape) ([]byte, error) {
	if s != ErrorShapeFlat {
		details := e.Details
		if len(e.Fields) > 0 {
			details = maps.Clone(e.Fields)
			maps.Copy(details, e.Details)
		}
		var w struct {
			Error struct {
				Code    int            `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details,omitempty"`
			} `json:"error"`
		}
		w.Error.Code, w.Error.Message, w.Error.Details = int(e.Code), e.Message, details
		return json.Marshal(w)
	}
	var b bytes.Buffer
	b.WriteString(`{"code":`)
	code, _ := json.Marshal(int(e.Code))
	b.Write(code)
	member := func(k string, v any) error {
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		key, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
		return nil
	}
	if err := member("message", e.Message); err != nil {
		return nil, err
	}
	if len(e.Details) > 0 {
		if err := member("details", e.Details); err != nil {
			return nil, err
		}
	}
	keys := slices.Collect(maps.Keys(e.Fields))
	slices.SortFunc(keys, func(a, c string) int {
		ia, ic := slices.Index(flatOrder, a), slices.Index(flatOrder, c)
		switch {
		case ia >= 0 && ic >= 0:
			return ia - ic
		case ia >= 0:
			return -1
		case ic >= 0:
			return 1
		}
		return strings.Compare(a, c)
	})
	for _, k := range keys {
		if k == "code" || k == "message" || k == "details" {
			continue
		}
		if err := member(k, e.Fields[k]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// referenceErrorCodes are the codes the 0.4 references treat as an error
// when they find one at the top level of an ack (is_protocol_error_payload).
var referenceErrorCodes = []Code{404, 4006, 4007, 4008, 4014, 4015, 4016, 4017, 4018, 4019}

// DecodeError reads an error payload of either shape, tolerantly: the
// nested shape as DecodeErrorPayload reads it, or the flat shape, a JSON
// object whose "code" is an integer and that either has a string "message"
// or a code the 0.4 references treat as an error (404, 4006–4008,
// 4014–4019). The members of a flat error other than code, message and
// details are kept in Fields. Anything else is (nil, false).
func DecodeError(raw []byte) (*Error, bool) {
	if e, ok := DecodeErrorPayload(raw); ok {
		return e, true
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !bytes.Contains(raw, []byte(`"code"`)) {
		return nil, false
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return DecodeErrorValue(v)
}

// DecodeErrorValue is DecodeError for a payload already decoded into Go
// values, as Socket.IO libraries deliver acks.
func DecodeErrorValue(v any) (*Error, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if inner, ok := m["error"].(map[string]any); ok && len(m) == 1 {
		code, ok := intOf(inner["code"])
		if !ok {
			return nil, false
		}
		msg, _ := inner["message"].(string)
		details, _ := inner["details"].(map[string]any)
		return &Error{Code: Code(code), Message: msg, Details: details}, true
	}
	code, ok := intOf(m["code"])
	if !ok {
		return nil, false
	}
	msg, hasMsg := m["message"].(string)
	if !hasMsg && !slices.Contains(referenceErrorCodes, Code(code)) {
		return nil, false
	}
	e := &Error{Code: Code(code), Message: msg}
	e.Details, _ = m["details"].(map[string]any)
	for k, val := range m {
		if k == "code" || k == "message" || k == "details" {
			continue
		}
		if e.Fields == nil {
			e.Fields = map[string]any{}
		}
		e.Fields[k] = val
	}
	return e, true
}

func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	case json.Number:
		i, err := n.Int64()
		if err == nil && i == int64(int(i)) {
			return int(i), true
		}
	case int:
		return n, true
	case int64:
		return int(n), true
	}
	return 0, false
}

// ComputerNotFound is the refusal of a routed request whose computer is not
// in the sender's office, in generation g: 404 with 0.2.0's message, or
// the 0.4 references' exact payload, {"code":404,"message":"Computer with
// name 'NAME' not found","details":{"computer_name":"NAME"}}. The caller
// bounds name.
func ComputerNotFound(g Generation, name string) *Error {
	if g.ErrorShape() == ErrorShapeFlat {
		return NewNotFound("Computer with name '%s' not found", name).With("computer_name", name)
	}
	return NewNotFound("no computer named %q in this office", name)
}
