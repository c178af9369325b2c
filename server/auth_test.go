package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
	"github.com/stretchr/testify/require"
)

// refusal returns the code and message of a connect_error.
func refusal(t testing.TB, err error) (protocol.Code, string) {
	t.Helper()
	require.Error(t, err)
	var ee *types.ExtendedError
	require.True(t, errors.As(err, &ee), "connect_error with data, got %T %v", err, err)
	data, ok := ee.Data.(map[string]any)
	require.True(t, ok, "data is an object: %v", ee.Data)
	code, _ := data["code"].(float64)
	return protocol.Code(code), ee.Message
}

func TestAPIKeyAuth(t *testing.T) {
	logs, logOpt := captureLogs(t)
	ts := startServerAuth(t, logOpt, server.WithAPIKeys("first-key", "second-key"))
	h := func(k, v string) http.Header { return http.Header{k: {v}} }
	cases := []struct {
		name string
		o    dialOpts
		code protocol.Code // 0: admitted
		msg  string
	}{
		{"header", dialOpts{headers: h("X-Api-Key", "first-key")}, 0, ""},
		{"header of any case, second key", dialOpts{headers: h("x-API-key", "second-key")}, 0, ""},
		{"auth payload", dialOpts{auth: map[string]any{"api_key": "second-key"}, noKey: true}, 0, ""},
		{"wrong key", dialOpts{headers: h("X-Api-Key", "first-keyX")}, protocol.CodeUnauthorized, "invalid API key"},
		{"prefix of a key", dialOpts{headers: h("X-Api-Key", "first")}, protocol.CodeUnauthorized, "invalid API key"},
		{"missing key", dialOpts{noKey: true}, protocol.CodeUnauthorized, "missing API key"},
		{"key of the wrong type in the payload", dialOpts{auth: map[string]any{"api_key": 12.0}, noKey: true}, protocol.CodeUnauthorized, "missing API key"},
		{"key under another header", dialOpts{headers: h("Authorization", "first-key"), noKey: true}, protocol.CodeUnauthorized, "missing API key"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := connect(t, ts.url, tc.o)
			if tc.code == 0 {
				require.NoError(t, err)
				p.mustJoin(agentRole, fmt.Sprint("agent", i), fmt.Sprint("office", i))
				return
			}
			code, msg := refusal(t, err)
			require.Equal(t, tc.code, code)
			require.Equal(t, tc.msg, msg)
		})
	}
	logs.waitLine(t, "connection refused", map[string]any{"code": 401.0})
	for _, secret := range []string{"first-key", "second-key", "first-keyX"} {
		require.NotContains(t, logs.text(), secret, "an API key reached the logs")
	}
}

func TestAPIKeyHeaderOption(t *testing.T) {
	ts := startServerAuth(t, server.WithAPIKeys("k1"), server.WithAPIKeyHeader("X-Smcp-Token"))
	_, err := connect(t, ts.url, dialOpts{headers: http.Header{"X-Smcp-Token": {"k1"}}})
	require.NoError(t, err)
	_, err = connect(t, ts.url, dialOpts{headers: http.Header{"X-Api-Key": {"k1"}}})
	code, _ := refusal(t, err)
	require.Equal(t, protocol.CodeUnauthorized, code)
	_, err = connect(t, ts.url, dialOpts{auth: map[string]any{"api_key": "k1"}, noKey: true})
	require.NoError(t, err, "the auth payload key is read whatever the header name")
}

func TestCustomAuthProvider(t *testing.T) {
	logs, logOpt := captureLogs(t)
	var mu sync.Mutex
	var seen []*server.AuthRequest
	provider := server.AuthFunc(func(ctx context.Context, req *server.AuthRequest) error {
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		if _, ok := ctx.Deadline(); !ok {
			return errors.New("no deadline")
		}
		switch req.Header.Get("X-Mode") {
		case "ok":
			return nil
		case "forbidden":
			return protocol.NewForbidden("tenant suspended")
		case "plain":
			return errors.New("database password=hunter2 unreachable")
		case "panic":
			panic("provider bug")
		}
		return protocol.NewUnauthorized("who are you")
	})
	ts := startServerAuth(t, logOpt, server.WithAuth(provider))

	p, err := connect(t, ts.url, dialOpts{headers: http.Header{"X-Mode": {"ok"}}, auth: map[string]any{"token": "t1"}})
	require.NoError(t, err)
	p.mustJoin(agentRole, "a", "o")
	mu.Lock()
	req := seen[0]
	mu.Unlock()
	require.Equal(t, "ok", req.Header.Get("X-Mode"))
	require.Equal(t, map[string]any{"token": "t1"}, req.Auth)
	require.True(t, strings.HasPrefix(req.RemoteAddr, "127.0.0.1"), req.RemoteAddr)

	for mode, want := range map[string]struct {
		code protocol.Code
		msg  string
	}{
		"forbidden": {protocol.CodeForbidden, "tenant suspended"},
		"plain":     {protocol.CodeUnauthorized, "unauthorized"},
		"panic":     {protocol.CodeInternal, "authentication failed"},
		"":          {protocol.CodeUnauthorized, "who are you"},
	} {
		_, err := connect(t, ts.url, dialOpts{headers: http.Header{"X-Mode": {mode}}})
		code, msg := refusal(t, err)
		require.Equal(t, want.code, code, mode)
		require.Equal(t, want.msg, msg, mode)
	}
	logs.waitLine(t, "auth provider panicked", nil)
	require.NotContains(t, logs.text(), "hunter2", "a provider's error text is neither sent nor logged")
}

func TestInsecureNoAuth(t *testing.T) {
	ts := startServerAuth(t, server.WithAuth(server.InsecureNoAuth()))
	p, err := connect(t, ts.url, dialOpts{noKey: true})
	require.NoError(t, err)
	p.mustJoin(computerRole, "c", "o")
}

func TestOnlySMCPNamespace(t *testing.T) {
	ts := startServer(t)
	_, err := connect(t, ts.url, dialOpts{nsp: "/"})
	code, _ := refusal(t, err)
	require.Equal(t, protocol.CodeNotFound, code, "the default namespace refuses every client")
	_, err = connect(t, ts.url, dialOpts{nsp: "/other"})
	require.Error(t, err, "unknown namespaces are refused by the library")
}

func TestNewOptions(t *testing.T) {
	cases := []struct {
		name string
		opts []server.Option
		err  string
	}{
		{"no authentication", nil, "no authentication configured"},
		{"empty key list", []server.Option{server.WithAPIKeys()}, "no authentication configured"},
		{"empty key", []server.Option{server.WithAPIKeys("")}, "empty key"},
		{"both auth options", []server.Option{server.WithAPIKeys("k"), server.WithAuth(server.InsecureNoAuth())}, "WithAuth excludes WithAPIKeys"},
		{"nil provider", []server.Option{server.WithAuth(nil)}, "nil provider"},
		{"zero request timeout", []server.Option{server.WithAPIKeys("k"), server.WithRequestTimeout(0)}, "not positive"},
		{"negative margin", []server.Option{server.WithAPIKeys("k"), server.WithToolCallMargin(-time.Second)}, "negative"},
		{"zero payload limit", []server.Option{server.WithAPIKeys("k"), server.WithMaxPayloadBytes(0)}, "not positive"},
		{"zero ping interval", []server.Option{server.WithAPIKeys("k"), server.WithHeartbeat(0, time.Second)}, "0 < interval < timeout"},
		{"pong timeout not above the interval", []server.Option{server.WithAPIKeys("k"), server.WithHeartbeat(time.Second, time.Second)}, "0 < interval < timeout"},
		{"empty header", []server.Option{server.WithAPIKeys("k"), server.WithAPIKeyHeader("")}, "empty header"},
		{"zero outgoing bound", []server.Option{server.WithAPIKeys("k"), server.WithMaxOutgoingBytes(0)}, "not positive"},
		{"zero stall timeout", []server.Option{server.WithAPIKeys("k"), server.WithStallTimeout(0)}, "not positive"},
		{"zero in-flight cap", []server.Option{server.WithAPIKeys("k"), server.WithMaxInFlight(0)}, "not positive"},
		{"zero tool-call timeout cap", []server.Option{server.WithAPIKeys("k"), server.WithMaxToolCallTimeout(0)}, "not positive"},
		{"zero office size", []server.Option{server.WithAPIKeys("k"), server.WithMaxOfficeSize(0)}, "not positive"},
		{"zero auth failures", []server.Option{server.WithAPIKeys("k"), server.WithMaxAuthFailures(0)}, "not positive"},
		{"zero connect timeout", []server.Option{server.WithAPIKeys("k"), server.WithConnectTimeout(0)}, "not positive"},
		{"bad scoped key", []server.Option{server.WithKeys(server.Key{ID: "x"})}, "empty secret"},
		{"auth and scoped keys", []server.Option{server.WithKeys(server.Key{Secret: "s"}), server.WithAuth(server.InsecureNoAuth())}, "WithAuth excludes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := server.New(tc.opts...)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestAPIKeyAuthDirect(t *testing.T) {
	p := server.APIKeyAuth("", "k")
	ctx := context.Background()
	require.NoError(t, p.Authenticate(ctx, &server.AuthRequest{Header: http.Header{"X-Api-Key": {"k"}}}))
	require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(p.Authenticate(ctx, &server.AuthRequest{Header: http.Header{}})))
	none := server.APIKeyAuth("X-Key")
	require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(none.Authenticate(ctx, &server.AuthRequest{Header: http.Header{"X-Key": {""}}})))
	require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(none.Authenticate(ctx, &server.AuthRequest{Header: http.Header{"X-Key": {"anything"}}})),
		"a provider without keys refuses everyone")
}

// TestKeyAuth: scoped keys are checked when built, an admitted connection
// carries its key's Grant, and logs name the key by id or fingerprint,
// never by secret.
func TestKeyAuth(t *testing.T) {
	for name, keys := range map[string][]server.Key{
		"empty secret": {{ID: "a"}},
		"same secret":  {{Secret: "s"}, {Secret: "s"}},
		"unknown role": {{Secret: "s", Roles: []protocol.Role{"admin"}}},
	} {
		_, err := server.KeyAuth("", keys...)
		require.Error(t, err, name)
	}

	p, err := server.KeyAuth("", server.Key{ID: "tenant-a", Secret: "secret-a", Offices: []string{"o1"}}, server.Key{Secret: "secret-b"})
	require.NoError(t, err)
	req := &server.AuthRequest{Header: http.Header{"X-Api-Key": {"secret-a"}}}
	require.NoError(t, p.Authenticate(context.Background(), req))
	require.Equal(t, &server.Grant{KeyID: "tenant-a", Offices: []string{"o1"}}, req.Grant)
	req = &server.AuthRequest{Header: http.Header{}, Auth: map[string]any{"api_key": "secret-b"}}
	require.NoError(t, p.Authenticate(context.Background(), req))
	require.Regexp(t, `^sha256:[0-9a-f]{12}$`, req.Grant.KeyID)
	require.Empty(t, req.Grant.Offices)

	logs, logOpt := captureLogs(t)
	ts := startServerAuth(t, logOpt, server.WithKeys(server.Key{ID: "tenant-a", Secret: "secret-a", Offices: []string{"o1"}}))
	c, err := connect(t, ts.url, dialOpts{headers: http.Header{"X-Api-Key": {"secret-a"}}})
	require.NoError(t, err)
	ok, reason := c.join(computerRole, "c", "o2")
	require.Equal(t, `403 Forbidden: this connection's key may not join office "o2" as computer`, requireReasonText(t, ok, reason))
	c.mustJoin(computerRole, "c", "o1")
	require.Eventually(t, func() bool { return len(logs.lines("session connected")) > 0 }, wait, 10*time.Millisecond)
	require.Equal(t, "tenant-a", logs.lines("session connected")[0]["key_id"])
	require.NotContains(t, logs.text(), "secret-a")
}

func requireReasonText(t *testing.T, ok bool, reason any) string {
	t.Helper()
	require.False(t, ok)
	s, _ := reason.(string)
	return s
}
