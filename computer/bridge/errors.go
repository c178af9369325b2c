package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/a2c-smcp/smcp-go/computer/internal/clip"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// JSON-RPC codes MCP uses for a missing resource: -32002 up to revision
// 2025-11-25, -32602 (invalid params, with a "not found" message) from
// 2026-07-28.
const (
	codeResourceNotFound = -32002
	codeInvalidParams    = -32602
)

// MapError turns the error of a forwarded resources/read into the
// *protocol.Error the Agent receives (spec/protocol.md, Errors;
// spec/finder.md, Reading through the Computer). Whatever code the Agent
// sees, an error that came from the MCP server as a JSON-RPC error keeps
// that error in details: mcp_code, mcp_message and, when it had data,
// mcp_data — so that an Agent can always tell a document server's 404 or
// 503 from the Server's or the Computer's own.
//
//   - a *protocol.Error is kept;
//   - a message carrying the document-server kit's encoding
//     (protocol.DecodeMCPErrorMessage, sent by mcp-go servers as -32603)
//     becomes the error it encodes;
//   - a JSON-RPC error (*mcpsource.RPCError) whose code is a protocol code
//     (4201, 4202, 4203, any 4xxx, or another known code) keeps its code and
//     message, with the JSON-RPC data as details (an object as it is,
//     another value under "data");
//   - MCP's resource-not-found (-32002, or -32602 with a "not found"
//     message) becomes 4201 with details {uri}; mcp.ErrResourceNotFound
//     (no JSON-RPC error) becomes 4201 with details {uri};
//   - a connection lost while answering (mcpsource.ErrConnectionLost, a
//     server that died in the middle of an answer) becomes 503, as a
//     server being restarted does;
//   - a context deadline becomes 408;
//   - any other JSON-RPC error becomes 500 with the MCP server's message;
//   - any other failure (transport) becomes 500 without the failure's text,
//     which may carry addresses.
func MapError(err error, uri string) *protocol.Error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return pe
	}
	var rpc *mcpsource.RPCError
	isRPC := errors.As(err, &rpc)
	if e, ok := protocol.DecodeMCPErrorMessage(err.Error()); ok {
		if isRPC {
			return withOriginal(e, rpc)
		}
		return e
	}
	if isRPC {
		code := rpc.Code
		switch {
		case code > 0 && (protocol.Code(code).Known() || code >= 4000 && code <= 4999):
			return withOriginal(&protocol.Error{Code: protocol.Code(code), Message: rpc.Message, Details: details(rpc.Data)}, rpc)
		case code == codeResourceNotFound,
			code == codeInvalidParams && strings.Contains(strings.ToLower(rpc.Message), "not found"):
			return withOriginal(notFound(uri), rpc)
		}
		msg := rpc.Message
		if msg == "" {
			msg = "MCP server error"
		}
		return withOriginal(protocol.NewInternal("%s", msg), rpc)
	}
	u := clipURI(uri)
	switch {
	case errors.Is(err, mcp.ErrResourceNotFound):
		return notFound(uri)
	case errors.Is(err, mcpsource.ErrConnectionLost):
		return protocol.NewUnavailable("the MCP server serving %s was lost while answering; it is restarted, try again", u).With("uri", u)
	case errors.Is(err, context.DeadlineExceeded):
		return protocol.NewTimeout("reading %s timed out", u).With("uri", u)
	case errors.Is(err, context.Canceled):
		return protocol.NewInternal("reading %s was cancelled", u).With("uri", u)
	}
	return protocol.NewInternal("reading %s from its MCP server failed", u).With("uri", u)
}

// withOriginal adds the MCP server's JSON-RPC error to e's details:
// mcp_code, mcp_message, and mcp_data when the error had data. They are
// the server's own, replacing whatever its data said under those names.
func withOriginal(e *protocol.Error, rpc *mcpsource.RPCError) *protocol.Error {
	e = e.With("mcp_code", rpc.Code).With("mcp_message", clip.String(rpc.Message, 1024))
	if v, ok := dataValue(rpc.Data); ok {
		e = e.With("mcp_data", v)
	}
	return e
}

func notFound(uri string) *protocol.Error {
	u := clipURI(uri)
	return protocol.NewDocumentNotFound("resource not found: %s", u).With("uri", u)
}

// clipURI bounds a URI an Agent or an MCP server chose before it reaches a
// message or a log line.
func clipURI(uri string) string { return clip.String(uri, 1024) }

// dataValue decodes JSON-RPC error data; ok is false when there is none.
func dataValue(data json.RawMessage) (any, bool) {
	if len(data) == 0 || string(data) == "null" {
		return nil, false
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, false
	}
	return v, true
}

func details(data json.RawMessage) map[string]any {
	v, ok := dataValue(data)
	if !ok {
		return nil
	}
	if obj, isObj := v.(map[string]any); isObj {
		return obj
	}
	return map[string]any{"data": v}
}
