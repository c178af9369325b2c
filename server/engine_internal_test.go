package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

func TestSMCPPacketKind(t *testing.T) {
	tests := []struct {
		data string
		want packetKind
	}{
		{"0/smcp,", smcpConnect},
		{"0/smcp", smcpConnect},
		{`0/smcp,{"api_key":"k"}`, smcpConnect},
		{`2/smcp,1["server:join_office",{}]`, smcpTraffic},
		{`2/smcp,["notify:x",{}]`, smcpTraffic},
		{`3/smcp,4[{"ok":true}]`, smcpTraffic},
		{`51-/smcp,2["e",{"_placeholder":true,"num":0}]`, smcpOther}, // binary: the parser refuses it
		{`61-/smcp,3[{"_placeholder":true,"num":0}]`, smcpOther},
		{"1/smcp,", smcpOther},       // disconnect
		{`2["e",{}]`, smcpOther},     // default namespace
		{`0`, smcpOther},             // CONNECT to the default namespace
		{`2/smcpx,["e"]`, smcpOther}, // another namespace
		{`2/other,["e"]`, smcpOther}, // another namespace
		{`5/smcp,["e"]`, smcpOther},  // binary without its count
		{"", smcpOther},
		{"2", smcpOther},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, smcpPacketKind(types.NewStringBufferString(tt.data)), tt.data)
	}
	assert.Equal(t, smcpOther, smcpPacketKind("not a buffer"))

	// Reading the head does not consume the packet.
	b := types.NewStringBufferString(`2/smcp,1["e"]`)
	smcpPacketKind(b)
	assert.Equal(t, `2/smcp,1["e"]`, b.String())
}

func TestConnGate(t *testing.T) {
	g := newConnGate()
	requireHeldUntil(t, g, nil, g.registered, "the registration")
	g.registered() // idempotent

	// A new CONNECT on the same connection closes the gate again; the
	// Server closing releases what it holds too.
	g.connecting()
	stop := make(chan struct{})
	requireHeldUntil(t, g, stop, func() { close(stop) }, "the Server closing")
}

// requireHeldUntil checks that a packet waiting at g is held until release
// runs, and goes on then.
func requireHeldUntil(t *testing.T, g *connGate, stop <-chan struct{}, release func(), by string) {
	t.Helper()
	released := make(chan struct{})
	go func() {
		g.wait(stop)
		close(released)
	}()
	select {
	case <-released:
		t.Fatalf("a packet went on before %s", by)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not release the packet", by)
	}
}

// TestPollWriter: a poll's writes reach its ResponseWriter, with the
// headers staged before them, until the handler has returned; after that
// nothing does (servePolling).
func TestPollWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	var pw *pollWriter
	servePolling(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		pw = w.(*pollWriter)
		w.Header().Set("Content-Type", "text/plain")
		_, err := w.Write([]byte("ok"))
		assert.NoError(t, err)
	}), rec, httptest.NewRequest(http.MethodGet, "/socket.io/?EIO=4&transport=polling", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/plain", rec.Header().Get("Content-Type"))
	assert.Equal(t, "ok", rec.Body.String())

	// The library's write queue, late: refused, and the response is as it was.
	pw.Header().Set("X-Late", "1")
	pw.WriteHeader(http.StatusTeapot)
	n, err := pw.Write([]byte("late"))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, errPollFinished)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Empty(t, rec.Header().Get("X-Late"))
	assert.Equal(t, "ok", rec.Body.String())

	// A status written before the handler returned, with no body.
	rec = httptest.NewRecorder()
	servePolling(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-A", "b")
		w.WriteHeader(http.StatusBadRequest)
	}), rec, httptest.NewRequest(http.MethodPost, "/socket.io/?EIO=4&transport=polling", nil))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Equal(t, "b", rec.Header().Get("X-A"))
}
