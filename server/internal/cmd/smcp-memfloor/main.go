// Command smcp-memfloor is the reference floor of the churn measurement
// (magefile.go, target Memory): the least a Go server can do for the memory
// probe's connection cycles, so that what smcp-server keeps after a burst
// can be told apart from what the Go runtime keeps in any server.
//
// It is net/http and gorilla/websocket with no Socket.IO library, no
// validation, no offices and no memory release: it answers the Engine.IO
// open, admits a namespace CONNECT that came with the API key and refuses
// one without, acknowledges every event with [true,null] and ends the
// connection at a namespace DISCONNECT or a close. It understands only what
// smcp-memprobe sends, which is all it is for; it is not an SMCP server.
//
// It takes smcp-server's flags that the probe passes (--listen,
// --debug-listen, --log-level), reads the key from SMCP_API_KEYS, serves
// /healthz and a /metrics line with its open connections on the listen
// address, and /debug/vars ("memory") and /debug/pprof/ on the debug one.
package main

import (
	"errors"
	"expvar"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/server/internal/memclasses"
	"github.com/gorilla/websocket"
)

const namespace = "/smcp,"

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address of the websocket endpoint")
	debugListen := flag.String("debug-listen", "", "address of /debug/vars and /debug/pprof/")
	flag.String("log-level", "", "accepted for smcp-server's command line; unused")
	flag.Parse()
	f := &floor{key: os.Getenv("SMCP_API_KEYS")}
	if *debugListen != "" {
		expvar.Publish("memory", expvar.Func(func() any { return memclasses.Read() }))
		dm := http.NewServeMux()
		dm.HandleFunc("/debug/pprof/", pprof.Index)
		dm.Handle("/debug/vars", expvar.Handler())
		go func() { log.Fatal(serve(*debugListen, dm)) }()
	}
	m := http.NewServeMux()
	m.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
	m.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "smcp_server_connections{role=\"any\"} %d\n", f.open.Load())
	})
	m.HandleFunc("/socket.io/", f.serveWS)
	log.Fatal(serve(*listen, m))
}

func serve(addr string, h http.Handler) error {
	hs := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type floor struct {
	key  string
	open atomic.Int64
	ids  atomic.Int64
	up   websocket.Upgrader
}

// serveWS runs one connection on its handler's goroutine: the probe sends
// a message and waits for its answer, so nothing is written concurrently.
func (f *floor) serveWS(w http.ResponseWriter, r *http.Request) {
	admitted := f.key != "" && r.Header.Get("X-Api-Key") == f.key
	c, err := f.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	f.open.Add(1)
	defer f.open.Add(-1)
	c.SetReadLimit(1 << 20)
	id := f.ids.Add(1)
	send := func(s string) error {
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		return c.WriteMessage(websocket.TextMessage, []byte(s))
	}
	if send(fmt.Sprintf(`0{"sid":"e%d","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}`, id)) != nil {
		return
	}
	for {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		_, b, err := c.ReadMessage()
		if err != nil {
			return
		}
		msg := string(b)
		var reply string
		switch {
		case strings.HasPrefix(msg, "40"+namespace):
			reply = `44` + namespace + `{"message":"unauthorized"}`
			if admitted {
				reply = fmt.Sprintf(`40%s{"sid":"s%d"}`, namespace, id)
			}
		case strings.HasPrefix(msg, "41"+namespace):
			return
		case strings.HasPrefix(msg, "42"+namespace):
			ack, _, ok := strings.Cut(strings.TrimPrefix(msg, "42"+namespace), "[")
			if !ok || ack == "" {
				continue
			}
			reply = "43" + namespace + ack + "[true,null]"
		default: // pongs and anything else
			continue
		}
		if send(reply) != nil {
			return
		}
	}
}
