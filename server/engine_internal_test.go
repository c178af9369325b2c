package server

import (
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
		{`51-/smcp,2["e",{"_placeholder":true,"num":0}]`, smcpTraffic},
		{`61-/smcp,3[{"_placeholder":true,"num":0}]`, smcpTraffic},
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
	released := make(chan struct{})
	go func() {
		g.wait(nil)
		close(released)
	}()
	select {
	case <-released:
		t.Fatal("a packet went on before its namespace was registered")
	case <-time.After(50 * time.Millisecond):
	}
	g.registered()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the registration did not release the packet")
	}
	g.registered() // idempotent

	// A new CONNECT on the same connection closes the gate again.
	g.connecting()
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		g.wait(stop)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("not held after a new CONNECT")
	case <-time.After(50 * time.Millisecond):
	}
	close(stop) // the Server closing releases it too
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("not released by the Server closing")
	}
}
