package tools

import (
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Upstream authorization errors
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md#upstream-authorization).
// An HTTP MCP server that refuses a tools/call for want of authorization
// (HTTP 401, an OAuth flow not done) or refuses the credentials it got (HTTP
// 403, an expired or revoked token) makes the call's result an error result
// whose metadata says so, as the 0.4 reference Computers write it:
// error_code 4006 or 4007, mcp_server (the server's bundle_id) and
// auth_hint {action, message}, so that an Agent can tell "the tool is
// broken" from "the user must authorize".

// Auth hint actions, as the references name them.
const (
	AuthActionAuthorize = "user_authorization_required"
	AuthActionRefresh   = "token_refresh_required"
)

// Substrings of a transport error's text (lowercase) that classify it, in
// the references' order: a refusal of credentials first, then a want of
// them, then a generic authorization word (4006, the safer advice).
var (
	authFailedMarkers = []string{"status 403", "forbidden", "insufficient scope", "insufficient_scope", "access denied",
		"permission denied", "invalid_grant", "token expired", "expired token", "refresh failed", "revoked"}
	authRequiredMarkers = []string{"status 401", "unauthorized", "unauthenticated", "not authenticated",
		"authentication required", "login required", "missing credentials", "no credentials"}
	authAmbiguousMarkers = []string{"authoriz", "oauth", "www-authenticate", "bearer"}
)

// ClassifyAuthError returns 4006 or 4007 when err, a tools/call's transport
// failure, is an upstream authorization refusal, and 0 otherwise. mcp-go's
// own 401 errors (transport.ErrAuthorizationRequired, its OAuth variant) are
// 4006; other failures are read by their text as the references read
// theirs. A JSON-RPC error the server answered is not classified: it is the
// tool's failure, whatever words it holds.
func ClassifyAuthError(err error) protocol.Code {
	if err == nil {
		return 0
	}
	if errors.Is(err, transport.ErrAuthorizationRequired) || errors.Is(err, transport.ErrOAuthAuthorizationRequired) {
		return protocol.CodeToolAuthorizationRequired
	}
	var rpc *mcpsource.RPCError
	if errors.As(err, &rpc) {
		return 0
	}
	msg := strings.ToLower(err.Error())
	has := func(markers []string) bool {
		for _, m := range markers {
			if strings.Contains(msg, m) {
				return true
			}
		}
		return false
	}
	switch {
	case has(authFailedMarkers):
		return protocol.CodeToolAuthorizationFailed
	case has(authRequiredMarkers), has(authAmbiguousMarkers):
		return protocol.CodeToolAuthorizationRequired
	}
	return 0
}

// AuthErrorResult returns the error result of a tool call that the MCP
// server bundleID refused for want of authorization, when
// ClassifyAuthError says err is such a refusal. The result's metadata,
// written where generation g's readers look for it
// (protocol.CallToolResult.SetResultMeta), holds error_code, mcp_server
// and auth_hint; the hint is the
// Computer's own text, never the server's, so no token, code or URL of the
// server's reaches the Agent.
func AuthErrorResult(g protocol.Generation, bundleID string, err error) (protocol.CallToolResult, bool) {
	code := ClassifyAuthError(err)
	if code == 0 {
		return protocol.CallToolResult{}, false
	}
	var e *protocol.Error
	hint := map[string]any{}
	if code == protocol.CodeToolAuthorizationFailed {
		e = protocol.NewToolAuthorizationFailed("calling a tool of %q failed upstream authorization (credentials expired or insufficient)", bundleID)
		hint["action"] = AuthActionRefresh
		hint["message"] = "Upstream authorization failed or is insufficient; please re-authorize or check permissions."
	} else {
		e = protocol.NewToolAuthorizationRequired("calling a tool of %q needs upstream authorization first", bundleID)
		hint["action"] = AuthActionAuthorize
		hint["message"] = "This tool requires completing upstream authorization (e.g. OAuth login) on the Computer host first."
	}
	res := errorResult(e)
	res.SetResultMeta(g, map[string]any{
		protocol.MetaErrorCode: int(code),
		protocol.MetaMCPServer: bundleID,
		protocol.MetaAuthHint:  hint,
	})
	return res, true
}
