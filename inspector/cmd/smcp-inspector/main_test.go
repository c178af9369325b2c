package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/server"
)

const wait = 30 * time.Second

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer runs a real smcp Server on loopback and returns its URL and
// API key.
func startServer(t *testing.T) (string, string) {
	t.Helper()
	key := rand.Text()
	srv, err := server.New(server.WithAPIKeys(key))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
		_ = hs.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String(), key
}

type result struct {
	out, err string
	code     int
}

func cli(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out, errOut syncBuffer
	code := run(ctx, args, &out, &errOut, func(k string) string { return env[k] })
	return result{out.String(), errOut.String(), code}
}

func TestUsage(t *testing.T) {
	r := cli(t, nil, "--version")
	assert.Equal(t, exitOK, r.code)
	assert.True(t, strings.HasPrefix(r.out, "smcp-inspector "), r.out)

	r = cli(t, map[string]string{"SMCP_API_KEY": "s3cret-from-env"}, "-h")
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.out, "--listen")
	assert.Contains(t, r.out, "-log-level")
	assert.Empty(t, r.err, "-h prints on stdout only")
	assert.NotContains(t, r.out, "s3cret", "the API key is never printed")

	r = cli(t, map[string]string{"SMCP_OFFICE": "o"}, "--log-level", "loud")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.err, "--log-level")

	r = cli(t, nil)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.err, "error 400: no office")

	for _, listen := range []string{"0.0.0.0:0", ":0", "192.0.2.1:80"} {
		r = cli(t, map[string]string{"SMCP_OFFICE": "o"}, "--listen", listen)
		assert.Equal(t, exitUsage, r.code, listen)
		assert.Contains(t, r.err, "--allow-remote", listen)
	}
	r = cli(t, map[string]string{"SMCP_OFFICE": "o", "SMCP_INSPECTOR_LISTEN": "no-port"})
	assert.Equal(t, exitUsage, r.code)
	r = cli(t, map[string]string{"SMCP_OFFICE": "o"}, "extra")
	assert.Equal(t, exitUsage, r.code)
}

var pageLine = regexp.MustCompile(`page: (http://\S+)/`)

// serve runs the command until cancel is called and returns the page's URL.
func serve(t *testing.T, env map[string]string, args ...string) (base string, out *syncBuffer, stop func() result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &syncBuffer{}
	var errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, out, &errOut, func(k string) string { return env[k] }) }()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if m := pageLine.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("exited %d: %s", code, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NotEmpty(t, base, "no page address printed: %s", out.String())
	var once sync.Once
	var res result
	stop = func() result {
		once.Do(func() {
			cancel()
			select {
			case code := <-done:
				res = result{out.String(), errOut.String(), code}
			case <-time.After(wait):
				t.Fatal("smcp-inspector did not stop")
			}
		})
		return res
	}
	t.Cleanup(func() { stop() })
	return base, out, stop
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// The command joins the office from flags and environment, serves the page
// on loopback and keeps the API key to itself; it stops on its context.
func TestServe(t *testing.T) {
	url, key := startServer(t)
	env := map[string]string{"SMCP_SERVER": url, "SMCP_API_KEY": key}
	base, _, stop := serve(t, env, "--office", "o1", "--listen", "127.0.0.1:0")
	status, body := get(t, base+"/api/session")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"office":"o1"`)
	assert.NotContains(t, body, key)
	status, _ = get(t, base+"/finder")
	assert.Equal(t, http.StatusOK, status)
	r := stop()
	assert.Equal(t, exitOK, r.code, r.err)
	assert.NotContains(t, r.out+r.err, key, "the API key is never printed")
}

// Off loopback, the page is behind a login token printed at start.
func TestServeRemote(t *testing.T) {
	url, key := startServer(t)
	env := map[string]string{"SMCP_SERVER": url, "SMCP_API_KEY": key, "SMCP_OFFICE": "o2", "SMCP_INSPECTOR_ALLOW_REMOTE": "1"}
	base, out, stop := serve(t, env, "--listen", "0.0.0.0:0")
	m := regexp.MustCompile(`login token: (\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	status, body := get(t, base+"/api/session")
	assert.Equal(t, http.StatusUnauthorized, status, body)
	status, body = get(t, base+"/login?token="+m[1]) // redirected to the page, with the cookie
	assert.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, exitOK, stop().code)
}

// When the office already has its Agent, the command says so with 4101.
func TestSeatTaken(t *testing.T) {
	url, key := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	a, err := agent.Dial(ctx, url, agent.WithAPIKey(key), agent.WithName("holder"))
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.JoinOffice(ctx, "busy"))

	r := cli(t, map[string]string{"SMCP_SERVER": url, "SMCP_API_KEY": key}, "--office", "busy", "--listen", "127.0.0.1:0")
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.err, "error 4101: ")
	assert.Contains(t, r.err, "seat is taken")
}

// A Server that cannot be reached fails with a coded error, not a hang.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	r := cli(t, map[string]string{"SMCP_OFFICE": "o"}, "--server", "http://"+addr, "--timeout", "3s", "--listen", "127.0.0.1:0")
	assert.Equal(t, exitError, r.code)
	assert.Regexp(t, `^error 503: `, r.err, "unreachable: retryable")
}
