package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParse(t *testing.T) {
	s, err := parse(nil, env(map[string]string{
		"SMCP_LISTEN":            ":9999",
		"SMCP_API_KEYS":          "a,b",
		"SMCP_REQUEST_TIMEOUT":   "3s",
		"SMCP_VALIDATE_ANSWERS":  "yes",
		"SMCP_MAX_PAYLOAD_BYTES": "1024",
		"SMCP_LOG_FORMAT":        "text",
	}), io.Discard)
	require.NoError(t, err)
	require.Equal(t, ":9999", s.listen)
	require.Equal(t, "a,b", s.apiKeys)
	require.Equal(t, 3*time.Second, s.requestTimeout)
	require.True(t, s.validateAnswers)
	require.Equal(t, int64(1024), s.maxPayload)
	require.Equal(t, "text", s.logFormat)

	s, err = parse([]string{"--max-in-flight", "7", "--max-office-size", "9", "--connect-timeout", "4s", "--max-connections", "100"}, env(map[string]string{
		"SMCP_MAX_CONNECTIONS_PER_IP":  "5",
		"SMCP_MAX_PENDING_CONNECTIONS": "33",
		"SMCP_MAX_OUTGOING_BYTES":      "2048",
		"SMCP_STALL_TIMEOUT":           "2s",
		"SMCP_MAX_TOOL_CALL_TIMEOUT":   "1m",
		"SMCP_MAX_AUTH_FAILURES":       "2",
		"SMCP_MAX_IN_FLIGHT":           "99",
		"SMCP_KEYS_FILE":               "/k.json",
	}), io.Discard)
	require.NoError(t, err)
	require.Equal(t, int64(2048), s.maxOutgoing)
	require.Equal(t, 2*time.Second, s.stallTimeout)
	require.Equal(t, time.Minute, s.maxToolTimeout)
	require.Equal(t, int64(2), s.maxAuthFailures)
	require.Equal(t, int64(7), s.maxInFlight, "a flag wins over its variable")
	require.Equal(t, int64(9), s.maxOfficeSize)
	require.Equal(t, 4*time.Second, s.connectTimeout)
	require.Equal(t, "/k.json", s.keysFile)
	require.Equal(t, int64(100), s.maxConns)
	require.Equal(t, int64(5), s.maxConnsPerIP)
	require.Equal(t, int64(33), s.maxPending)

	s, err = parse([]string{"--listen", ":1", "--request-timeout", "1m", "--validate-answers=false"},
		env(map[string]string{"SMCP_LISTEN": ":2", "SMCP_VALIDATE_ANSWERS": "1"}), io.Discard)
	require.NoError(t, err)
	require.Equal(t, ":1", s.listen, "a flag wins over its variable")
	require.Equal(t, time.Minute, s.requestTimeout)
	require.False(t, s.validateAnswers)

	for name, vars := range map[string]map[string]string{
		"bad duration": {"SMCP_REQUEST_TIMEOUT": "soon"},
		"bad boolean":  {"SMCP_INSECURE_NO_AUTH": "maybe"},
		"bad number":   {"SMCP_MAX_PAYLOAD_BYTES": "big"},
	} {
		_, err := parse(nil, env(vars), io.Discard)
		require.Error(t, err, name)
	}
	_, err = parse([]string{"extra"}, env(nil), io.Discard)
	require.Error(t, err)

	var help strings.Builder
	_, err = parse([]string{"-h"}, env(map[string]string{"SMCP_API_KEYS": "top-secret"}), &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, help.String(), "SMCP_API_KEYS")
	require.NotContains(t, help.String(), "top-secret", "-h never prints the keys")
}

func TestReadKeysFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	keys, err := readKeysFile(write("ok.json", `[{"id":"tenant-a","secret":"s1","offices":["o1"],"roles":["agent"]},{"secret":"s2"}]`))
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.Equal(t, []string{"o1"}, keys[0].Offices)

	for name, body := range map[string]string{
		"empty secret":  `[{"id":"x","secret":""}]`,
		"unknown role":  `[{"secret":"s","roles":["admin"]}]`,
		"unknown field": `[{"secret":"s","office":"o1"}]`,
		"not json":      `secret`,
		"same secret":   `[{"secret":"s"},{"secret":"s"}]`,
	} {
		_, err := readKeysFile(write("bad.json", body))
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), `"s"`, "%s: the error does not echo the secret", name)
	}
}

func TestRunRefusesWithoutKeys(t *testing.T) {
	ctx := context.Background()
	err := run(ctx, []string{"--listen", "127.0.0.1:0"}, env(nil), io.Discard, nil)
	require.ErrorContains(t, err, "no API keys")
	err = run(ctx, []string{"--listen", "127.0.0.1:0", "--insecure-no-auth", "--api-keys", "k"}, env(nil), io.Discard, nil)
	require.ErrorContains(t, err, "exclude each other")
	err = run(ctx, []string{"--listen", "127.0.0.1:0", "--api-keys", "k", "--log-level", "loud"}, env(nil), io.Discard, nil)
	require.ErrorContains(t, err, "log level")
}

// syncBuffer is a concurrency-safe log sink.
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

// TestRunServesAndShutsDown runs the command in-process: /healthz answers,
// a client with the key joins an office, and cancelling the context (what
// SIGINT/SIGTERM do) closes the client's connection and returns.
func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0"}, env(map[string]string{"SMCP_API_KEYS": "k1"}), logs, ready)
	}()
	addr := <-ready

	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.JSONEq(t, `{"status":"ok"}`, string(body))
	resp, err = http.Get("http://" + addr + "/readyz")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.JSONEq(t, `{"status":"ready"}`, string(body))

	ws := joinRaw(t, addr, "k1")
	resp, err = http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `smcp_server_connections{role="computer"} 1`)
	require.Contains(t, string(body), "go_goroutines", "the binary's registry has the runtime collectors")
	cancel()
	require.NoError(t, <-done)
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			break // closed by the shutdown
		}
	}
	require.Contains(t, logs.String(), `"msg":"stopped"`)
	require.NotContains(t, logs.String(), "k1\"", "the API key is not logged")
}

// joinRaw connects a raw websocket client to /smcp with the key and joins an
// office as a Computer. An attempt whose namespace CONNECT the server
// dropped (a race of the engine library, see server/helpers_test.go) is
// retried.
func joinRaw(t *testing.T, addr, key string) *websocket.Conn {
	return joinRawAs(t, addr, key, "computer", "c")
}

// joinRawAs is joinRaw with the role and name given.
func joinRawAs(t *testing.T, addr, key, role, name string) *websocket.Conn {
	t.Helper()
	for range 5 {
		ws, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+"/socket.io/?EIO=4&transport=websocket", http.Header{"X-Api-Key": {key}})
		require.NoError(t, err)
		_ = resp.Body.Close()
		read := func(d time.Duration) (string, error) {
			_ = ws.SetReadDeadline(time.Now().Add(d))
			_, b, err := ws.ReadMessage()
			return string(b), err
		}
		open, err := read(10 * time.Second)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(open, "0{"))
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte("40/smcp,")))
		connected, err := read(3 * time.Second)
		if err != nil {
			_ = ws.Close()
			continue
		}
		require.True(t, strings.HasPrefix(connected, `40/smcp,{"sid"`))
		t.Cleanup(func() { _ = ws.Close() })
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`42/smcp,1["server:join_office",{"role":"`+role+`","name":"`+name+`","office_id":"o"}]`)))
		ack, err := read(10 * time.Second)
		require.NoError(t, err)
		require.Equal(t, `43/smcp,1[true,null]`, ack)
		return ws
	}
	t.Fatal("could not connect")
	return nil
}

// startBinary starts the smcp-server binary bin with a key and JSON logs,
// and waits for its listening line: it returns the process, its address,
// its log from there on, and the lines read so far.
func startBinary(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *bufio.Scanner, []string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "SMCP_API_KEYS=secret-key")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	var all []string
	for lines.Scan() {
		all = append(all, lines.Text())
		var rec map[string]any
		if json.Unmarshal(lines.Bytes(), &rec) == nil && rec["msg"] == "smcp-server listening" {
			addr, _ := rec["addr"].(string)
			require.NotEmpty(t, addr)
			return cmd, addr, lines, all
		}
	}
	t.Fatalf("smcp-server did not listen:\n%s", strings.Join(all, "\n"))
	return nil, "", nil, nil
}

// TestBinarySignals builds the real binary, checks that it does not link
// the Socket.IO client (whose package installs a signal handler), and stops
// it with SIGTERM: it must exit 0 after a graceful shutdown.
func TestBinarySignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	deps, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	require.NotContains(t, string(deps), "socket.io/clients", "the binary must not install the client's signal handler")

	bin := filepath.Join(t.TempDir(), "smcp-server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, addr, lines, all := startBinary(t, bin)
			ws := joinRaw(t, addr, "secret-key")
			require.NoError(t, cmd.Process.Signal(sig))
			for lines.Scan() {
				all = append(all, lines.Text())
			}
			require.NoError(t, cmd.Wait(), strings.Join(all, "\n"))
			joined := strings.Join(all, "\n")
			require.Contains(t, joined, `"msg":"stopped"`)
			require.NotContains(t, joined, "secret-key")
			_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, _, err = ws.ReadMessage()
			require.Error(t, err, "the client's connection is closed")
		})
	}

	// A graceful shutdown waits for the requests in flight; a second
	// interrupt does not wait.
	t.Run("second interrupt", func(t *testing.T) {
		cmd, addr, lines, _ := startBinary(t, bin, "--shutdown-timeout", "2m")
		go func() {
			for lines.Scan() { // drain the log
			}
		}()
		joinRawAs(t, addr, "secret-key", "computer", "c") // never answers
		agent := joinRawAs(t, addr, "secret-key", "agent", "a")
		require.NoError(t, agent.WriteMessage(websocket.TextMessage, []byte(
			`42/smcp,2["client:tool_call",{"agent":"a","req_id":"r1","computer":"c","tool_name":"t","params":{},"timeout":60}]`)))
		time.Sleep(200 * time.Millisecond) // the call is routed

		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		select {
		case err := <-exited:
			t.Fatalf("exited during the graceful shutdown, with a call in flight: %v", err)
		case <-time.After(time.Second):
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		select {
		case err := <-exited:
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "ended by the second interrupt")
		case <-time.After(10 * time.Second):
			t.Fatal("the second interrupt did not end the process")
		}
	})
}

// TestProtocolVersionFlags: --protocol-versions and --strict-handshake (and
// their variables) choose the generations the handshake gate accepts; run
// with 0.4 alone and strict, the binary answers as a 0.4 reference Server.
func TestProtocolVersionFlags(t *testing.T) {
	s, err := parse(nil, env(nil), io.Discard)
	require.NoError(t, err)
	require.Equal(t, "0.2,0.3,0.4", s.versions)
	require.False(t, s.strictHandshake)
	s, err = parse([]string{"--protocol-versions", "0.4"}, env(map[string]string{"SMCP_PROTOCOL_VERSIONS": "0.2", "SMCP_STRICT_HANDSHAKE": "true"}), io.Discard)
	require.NoError(t, err)
	require.Equal(t, "0.4", s.versions)
	require.True(t, s.strictHandshake)
	for _, bad := range []string{"0.9", "x", " , ", "0.4.0.1"} {
		_, err := parseGenerations(bad)
		require.Error(t, err, bad)
	}
	gens, err := parseGenerations("0.4.2, 0.3,0.4")
	require.NoError(t, err)
	require.Len(t, gens, 2)
	err = run(context.Background(), []string{"--listen", "127.0.0.1:0", "--api-keys", "k", "--protocol-versions", "0.5"}, env(nil), io.Discard, nil)
	require.ErrorContains(t, err, "--protocol-versions")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--protocol-versions", "0.4", "--strict-handshake"}, env(map[string]string{"SMCP_API_KEYS": "k1"}), io.Discard, ready)
	}()
	addr := <-ready
	for q, want := range map[string]string{
		"":                   `{"code":400,"message":"Missing a2c_version query parameter"}`,
		"&a2c_version=0.2.0": `{"code":4008,"message":"Protocol version mismatch","server_version":"0.4.0","client_version":"0.2.0","min_supported":"0.4.0","max_supported":"0.4.999"}`,
	} {
		resp, err := http.Get("http://" + addr + "/socket.io/?EIO=4&transport=polling" + q)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Equal(t, want, string(body))
	}
	resp, err := http.Get("http://" + addr + "/socket.io/?EIO=4&transport=polling&a2c_version=0.4.0")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "0.4.0", resp.Header.Get("X-A2C-Version"))
	cancel()
	require.NoError(t, <-done)
}
