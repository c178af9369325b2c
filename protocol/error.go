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

// Meaning returns the protocol's one-line meaning of the code, or "" when it
// is not a protocol code.
func (c Code) Meaning() string { return codeInfo[c].meaning }

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

// Error is the one error type of smcp-go. It travels inside an ack as the
// flat ErrorPayload shape {"error": {"code", "message", "details"}}
// (schema/error_payload.json) and is what every SDK call returns for a
// refusal, so callers can branch on the code:
//
//	var perr *protocol.Error
//	if errors.As(err, &perr) && perr.Code == protocol.CodePageOutOfRange { ... }
//
// Details must never carry secrets, internal addresses or stack traces.
type Error struct {
	Code    Code
	Message string
	Details map[string]any
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

// With returns a copy of e with one more detail; e is not modified.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = maps.Clone(e.Details)
	if c.Details == nil {
		c.Details = map[string]any{}
	}
	c.Details[key] = value
	return &c
}

// Payload returns the ErrorPayload form of e.
func (e *Error) Payload() ErrorPayload {
	return ErrorPayload{Error: ErrorPayloadError{Code: int(e.Code), Message: e.Message, Details: e.Details}}
}

// wireError orders the keys as spec/protocol.md (Errors) prints them.
type wireError struct {
	Error struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details,omitempty"`
	} `json:"error"`
}

// MarshalJSON encodes e as the flat ErrorPayload shape.
func (e *Error) MarshalJSON() ([]byte, error) {
	var w wireError
	w.Error.Code, w.Error.Message, w.Error.Details = int(e.Code), e.Message, e.Details
	return json.Marshal(w)
}

// UnmarshalJSON decodes the flat ErrorPayload shape.
func (e *Error) UnmarshalJSON(b []byte) error {
	var p ErrorPayload
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Error{Code: Code(p.Error.Code), Message: p.Error.Message, Details: p.Error.Details}
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

// DecodeErrorPayload reports whether raw is an ErrorPayload, that is a JSON
// object whose only key is "error" holding an object with an integer code,
// and returns it as an *Error. Answers that are not error payloads return
// (nil, false).
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
