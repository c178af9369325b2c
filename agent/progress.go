package agent

import (
	"context"
	"sync"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio"
)

// Progress is one report of a running tool call's or resource read's
// progress, relayed from the MCP server's notifications/progress
// (notify:tool_progress, an smcp-go extension:
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress).
type Progress struct {
	// Computer and ReqID name the call or read.
	Computer string
	ReqID    string
	// Progress so far; Total when known (nil otherwise).
	Progress float64
	Total    *float64
	// Message is the server's human-readable note, if any.
	Message string
}

type progressKey struct{}

// WithProgress returns a context that makes CallTool ask for the call's
// progress, and ReadResource (with the Finder's reads built on it) for the
// read's, and pass each report to f, in order, on a goroutine of the
// request; every report that arrived before the answer has been passed to f
// when the request returns (a callback that blocks holds it). A Computer
// that does not know the extension (a reference SDK's) ignores the request
// and f is never called; on a Server that is not smcp-go's
// (Client.Confirmed false) the request does not ask. Reports come at most
// every 100 ms per request (the Computer folds the others into the latest).
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

func progressFunc(ctx context.Context) func(Progress) {
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	return f
}

// maxQueuedProgress bounds the reports waiting for one call's callback;
// beyond it the oldest waiting report is replaced (progress only grows).
const maxQueuedProgress = 64

// progressWatchers holds the calls and reads waiting for progress, by req_id.
type progressWatchers struct {
	c  *Client
	mu sync.Mutex
	by map[string]*progressWatch
}

type progressWatch struct {
	computer string
	mu       sync.Mutex
	q        []Progress
	wake     chan struct{}
	done     chan struct{} // closed when the goroutine has drained q after stop
	stopped  bool
}

func (w *progressWatchers) register(sock *sio.Socket) {
	_ = sock.On(sio.EventName(protocol.NotifyToolProgress), func(args ...any) { w.receive(args) })
}

// watch starts passing the progress of req_id to f; the returned stop
// waits until every report received so far has been passed.
func (w *progressWatchers) watch(reqID, computer string, f func(Progress)) (stop func()) {
	pw := &progressWatch{computer: computer, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.mu.Lock()
	if w.by == nil {
		w.by = map[string]*progressWatch{}
	}
	w.by[reqID] = pw
	w.mu.Unlock()
	go func() {
		defer close(pw.done)
		for {
			pw.mu.Lock()
			q, stopped := pw.q, pw.stopped
			pw.q = nil
			pw.mu.Unlock()
			for _, p := range q {
				w.call(f, p)
			}
			if stopped && len(q) == 0 {
				return
			}
			if !stopped {
				<-pw.wake
			}
		}
	}()
	return func() {
		w.mu.Lock()
		delete(w.by, reqID)
		w.mu.Unlock()
		pw.mu.Lock()
		pw.stopped = true
		pw.mu.Unlock()
		select {
		case pw.wake <- struct{}{}:
		default:
		}
		<-pw.done
	}
}

func (w *progressWatchers) call(f func(Progress), p Progress) {
	defer func() {
		if r := recover(); r != nil {
			w.c.log.Error("progress callback panicked", "req_id", p.ReqID, "panic", r)
		}
	}()
	f(p)
}

// receive runs on the Socket.IO event queue: validate, match, enqueue.
// A report for a call this Client is not waiting for, or from another
// Computer than the call's, is dropped with a debug log.
func (w *progressWatchers) receive(args []any) {
	if len(args) == 0 {
		return
	}
	if err := protocol.ValidateValue(protocol.NotifyToolProgress, protocol.Request, args[0]); err != nil {
		w.c.log.Warn("invalid notification dropped", "event", protocol.NotifyToolProgress, "error", err)
		return
	}
	var tp protocol.ToolProgress
	if err := protocol.DecodeValue(args[0], &tp); err != nil {
		return
	}
	w.mu.Lock()
	pw := w.by[tp.ReqID]
	w.mu.Unlock()
	if pw == nil || tp.Agent != w.c.cfg.name || tp.Computer != pw.computer {
		w.c.log.Debug("progress for no call of this agent dropped", "req_id", tp.ReqID, "computer", tp.Computer)
		return
	}
	p := Progress{Computer: tp.Computer, ReqID: tp.ReqID, Progress: tp.Progress, Total: tp.Total, Message: tp.Message}
	pw.mu.Lock()
	if pw.stopped {
		pw.mu.Unlock()
		return
	}
	if len(pw.q) >= maxQueuedProgress {
		pw.q[len(pw.q)-1] = p
	} else {
		pw.q = append(pw.q, p)
	}
	pw.mu.Unlock()
	select {
	case pw.wake <- struct{}{}:
	default:
	}
}
