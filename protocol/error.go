package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
)

// Code is a protocol error code (spec/protocol.md, Errors). The constants are
// generated from schema/errors.json.
type Code int

// String returns the code's name, or its number when it is not a protocol
// code.
func (c Code) String() string {
	if info, ok := codeInfo[c]; ok {
		return info.name
	}
	return strconv.Itoa(int(c))
}

// codeData is one code's row of codeInfo (errors_gen.go).
type codeData struct {
	name, group, meaning string
	status               map[Generation]CodeStatus
	topLevel             []string
	details              []string
	reasons              []string
	carriedIn            string
}

// Meaning returns the protocol's one-line meaning of the code, or "" when it
// is not a protocol code.
func (c Code) Meaning() string { return codeInfo[c].meaning }

// TopLevel lists the code-specific members a flat error of code c carries
// beside code, message and details (4008: server_version, client_version,
// min_supported, max_supported; 4014: mcp_server; 4015: mcp_server,
// capability), in the order the references write them.
func (c Code) TopLevel() []string { return append([]string(nil), codeInfo[c].topLevel...) }

// DetailKeys lists the members of details the references write for code c
// (404: computer_name; 4017: reason, rel_path, total_size; …).
func (c Code) DetailKeys() []string { return append([]string(nil), codeInfo[c].details...) }

// Reasons lists the values of details.reason the references define for
// code c (4017, 4018, 4019). The vocabulary is open: a reader must accept
// others, treating them as "do not retry".
func (c Code) Reasons() []string { return append([]string(nil), codeInfo[c].reasons...) }

// CarriedIn says where code c travels when it is not an error payload
// (4006 and 4007 in a CallToolResult's meta, 4008 in the body of an HTTP
// 400), or "" for an error payload.
func (c Code) CarriedIn() string { return codeInfo[c].carriedIn }

// Known reports whether c is one of the protocol's codes.
func (c Code) Known() bool {
	_, ok := codeInfo[c]
	return ok
}

// ParseRefusal reads the reason of an office ack's refusal, (false, reason)
// (spec/protocol.md, Offices). When the reason starts with a protocol code,
// as the text of an *Error does ("4101 RoomFull: office ..."), it returns
// that code and the message after the code's name; otherwise, as other
// servers write free text there, CodeForbidden and the whole reason.
func ParseRefusal(reason string) (Code, string) {
	head, rest, ok := strings.Cut(reason, " ")
	if !ok {
		return CodeForbidden, reason
	}
	n, err := strconv.Atoi(head)
	if err != nil || !Code(n).Known() {
		return CodeForbidden, reason
	}
	if name, tail, ok := strings.Cut(rest, ": "); ok && name == Code(n).String() {
		rest = tail
	}
	return Code(n), rest
}

// Retryable reports whether a request refused with c may succeed when sent
// again, unchanged, a moment later: 429 (a rate or in-flight bound) and 503
// (a target that cannot serve now), as their meanings say
// (spec/protocol.md, Errors).
func (c Code) Retryable() bool { return c == CodeTooManyRequests || c == CodeUnavailable }

// Error is the one error type of smcp-go. It travels inside an ack in the
// shape of the session's generation (spec/generations.md, Errors): nested in
// 0.2.0, {"error": {"code", "message", "details"}}
// (schema/error_payload.json), flat from 0.3.0 on, {"code", "message",
// "details", …} with code-specific members at the top level
// (schema/error_payload_flat.json). It is what every SDK call returns for a
// refusal, so callers can branch on the code:
//
//	var perr *protocol.Error
//	if errors.As(err, &perr) && perr.Code == protocol.CodePageOutOfRange { ... }
//
// Details and Fields must never carry secrets, internal addresses or stack
// traces.
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	// Fields are the members of a flat error other than code, message and
	// details: the code-specific members of 0.3.0 and 0.4.0 (server_version,
	// client_version, min_supported and max_supported of a 4008; mcp_server
	// of a 4014; mcp_server and capability of a 4015; Code.TopLevel), and
	// any other a peer wrote, kept as decoded so they are written back as
	// they came. The nested shape has no place for them: it writes them
	// into details, beside the members details already has.
	Fields map[string]any
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error implements the error interface: "4201 DocumentNotFound: message".
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%d %s: %s", int(e.Code), e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code, so
// errors.Is(err, &protocol.Error{Code: protocol.CodeNotFound}) matches any
// not-found error whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && t.Code == e.Code
}

// WithField returns a copy of e with one more top-level member of the flat
// shape (Fields); e is not modified.
func (e *Error) WithField(key string, value any) *Error {
	c := *e
	c.Fields = withKey(e.Fields, key, value)
	return &c
}

// With returns a copy of e with one more detail; e is not modified.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = withKey(e.Details, key, value)
	return &c
}

// withKey returns a copy of m with key set to value.
func withKey(m map[string]any, key string, value any) map[string]any {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	out[key] = value
	return out
}

// Payload returns the ErrorPayload form of e.
func (e *Error) Payload() ErrorPayload {
	return ErrorPayload{Error: ErrorPayloadError{Code: int(e.Code), Message: e.Message, Details: e.Details}}
}

// MarshalJSON encodes e in the nested shape of 0.2.0,
// {"error":{"code","message","details"}}; Error.In writes the shape of
// another generation.
func (e *Error) MarshalJSON() ([]byte, error) { return e.MarshalShape(ErrorShapeNested) }

// UnmarshalJSON decodes either shape, nested or flat (DecodeError).
func (e *Error) UnmarshalJSON(b []byte) error {
	d, ok := DecodeError(b)
	if !ok {
		return fmt.Errorf("protocol: not an error payload: %.64s", b)
	}
	*e = *d
	return nil
}

// AsError returns err as an *Error: itself when it is one (anywhere in its
// chain), nil for nil, and otherwise an internal error (500) carrying err's
// message.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// CodeOf returns the protocol code of err: 0 for nil, the code of an *Error
// in its chain, CodeInternal otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	return AsError(err).Code
}

// DecodeErrorPayload reports whether raw is a nested (0.2.0) error
// payload, that is a JSON object whose only key is "error" holding an
// object with an integer code, and returns it as an *Error. Answers that are
// not nested error payloads return (nil, false); DecodeError reads the flat
// shape too.
func DecodeErrorPayload(raw []byte) (*Error, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !bytes.Contains(raw, []byte(`"error"`)) {
		return nil, false
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil || len(probe) != 1 || probe["error"] == nil {
		return nil, false
	}
	var body struct {
		Code    *int           `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal(probe["error"], &body); err != nil || body.Code == nil {
		return nil, false
	}
	return &Error{Code: Code(*body.Code), Message: body.Message, Details: body.Details}, true
}
