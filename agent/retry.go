package agent

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Refusals for now (429: a bound on requests in flight or on events a
// second; 503: a peer not reading, a busy or shutting-down Server) are sent
// again after a pause, within the request's deadline (spec/decisions.md,
// Agent: retries). The pauses grow from retryFirst to retryMax, each
// randomised by ±50 %, so that Agents refused together do not come back
// together.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 2 * time.Second
)

// retryable reports whether err is a refusal for now: 429 or 503
// (protocol.Code.Retryable).
func retryable(err error) bool {
	var e *protocol.Error
	return errors.As(err, &e) && e.Code.Retryable()
}

// notForwarded reports whether err is a refusal for now that the Server
// made before forwarding the request to its Computer: its details say
// "forwarded": false. Only such a client:tool_call is sent again, since the
// Computer never saw it; any other failure of a tool call may come after
// the tool ran.
func notForwarded(err error) bool {
	var e *protocol.Error
	if !errors.As(err, &e) || !e.Code.Retryable() {
		return false
	}
	f, ok := e.Details["forwarded"].(bool)
	return ok && !f
}

// backoff is the pause before each new attempt of one request.
type backoff struct{ next time.Duration }

// wait pauses before the next attempt and reports whether to make it:
// false, at once, when the pause would end after ctx's deadline, and when
// ctx ends or the Client closes meanwhile.
func (b *backoff) wait(ctx context.Context, closed <-chan struct{}) bool {
	if b.next == 0 {
		b.next = retryFirst
	}
	d := b.next/2 + rand.N(b.next)
	b.next = min(2*b.next, retryMax)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-closed:
	}
	return false
}
