package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/a2c-smcp/smcp-go/inspector"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// seatWait bounds the wait for the office's Agent seat after the demo's
// Agent left it.
const seatWait = 10 * time.Second

// serveInspector keeps the demo running after its walk and serves
// smcp-inspector's page on a loopback port until ctx ends (Ctrl-C). The
// office has one Agent seat (spec/protocol.md, Offices): the demo's Agent
// gives it up for the inspector.
func serveInspector(ctx context.Context, d *demo) error {
	section(8, "smcp-inspector: browse the office in a web browser")
	if err := d.agent.Close(); err != nil {
		return fmt.Errorf("close the demo's Agent: %w", err)
	}
	d.agent = nil
	in, err := dialInspector(ctx, d)
	if err != nil {
		return fmt.Errorf("start smcp-inspector: %w", err)
	}
	defer in.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: in.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	say("page: http://%s/", ln.Addr())
	say("the Server, the Computer and its document server keep running; Ctrl-C stops everything")
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	_ = in.Close() // ends the page's event streams, so that Shutdown need not wait for them
	sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// dialInspector joins the office as its Agent, waiting for the Server to
// free the seat the demo's Agent left (4101 until then).
func dialInspector(ctx context.Context, d *demo) (*inspector.Inspector, error) {
	ctx, cancel := context.WithTimeout(ctx, seatWait)
	defer cancel()
	for {
		in, err := inspector.Dial(ctx, d.url, office, inspector.WithAPIKey(d.apiKey), inspector.WithLogger(d.log))
		if protocol.CodeOf(err) != protocol.CodeRoomFull {
			return in, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
