package server_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
)

// FuzzEventPayload sends each event of the manifest with a fuzzed payload,
// at the wire, from an Agent joined to an office of its own: the Server
// answers the ack or closes the connection, never hangs, and stays up for
// the next input (spec/protocol.md, Errors). `go run mage.go fuzz` runs it
// briefly.
func FuzzEventPayload(f *testing.F) {
	events := protocol.Events()
	for i := range events {
		f.Add(uint8(i), `{"agent":"a","req_id":"r","computer":"c","office_id":"o","role":"agent","name":"n"}`)
		f.Add(uint8(i), `{"agent":"`+strings.Repeat("x", 300)+`"}`)
	}
	f.Add(uint8(0), `{}, 1`)
	f.Add(uint8(1), `"x"`)
	f.Add(uint8(2), `{"params":{"a":[1,2,{"b":null}]},"timeout":1e300}`)
	f.Add(uint8(3), `{"_placeholder":true,"num":0}`)
	// f.Log may not be called while inputs run: the Server logs nowhere.
	ts := startServer(f, server.WithLogger(slog.New(slog.DiscardHandler)))
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, which uint8, payload string) {
		info := events[int(which)%len(events)]
		r := dialEngine(t, ts.url, keyHeader, 0)
		if !strings.Contains(r.connectSmcp(nil), `"sid"`) {
			t.Fatal("namespace connect refused")
		}
		id := n.Add(1)
		join := r.call(1, protocol.EventJoinOffice, map[string]any{"role": "agent", "name": fmt.Sprint("a", id), "office_id": fmt.Sprint("o", id)})
		if join[0] != true {
			t.Fatalf("join refused: %v", join)
		}
		r.send(fmt.Sprintf(`42%s,2["%s",%s]`, protocol.Namespace, info.Name, payload))
		deadline := time.Now().Add(wait)
		for {
			_ = r.ws.SetReadDeadline(deadline)
			_, b, err := r.ws.ReadMessage()
			if err != nil {
				if isTimeout(err) {
					t.Fatalf("%s with payload %q: neither an answer nor a close within %v", info.Name, payload, wait)
				}
				return // closed: a packet the decoder refuses
			}
			m := string(b)
			if m == "2" {
				_ = r.ws.WriteMessage(websocket.TextMessage, []byte("3"))
				continue
			}
			if strings.HasPrefix(m, "43"+protocol.Namespace+",2") {
				return
			}
		}
	})
}
