package sio

import (
	"errors"
	"sync"
	"time"

	engine "github.com/a2c-smcp/smcp-go/sio/third_party/engineioclient"
)

// Connection watchdog.
//
// The patched client (third_party/PATCHES.md) no longer loses an engine's
// open, a dial's error or the namespace CONNECT answer, and sends CONNECT
// once per engine; the watchdog remains as the bound on the parts of an
// attempt the library does not bound, and as a defence against servers that
// misbehave:
//
//   - an engine open for lostOpenGrace that the manager did not hear open
//     gets its "open" replayed (the manager's own open handler unsubscribes
//     itself, so a replay after an open it did see reaches nobody);
//   - a manager open for lostAckGrace without the namespace connected (a
//     server that never answers the namespace CONNECT) has its engine
//     closed, and the manager reconnects;
//   - an engine that closed without the manager having heard of it gets its
//     "error" replayed once, and the manager schedules its next attempt;
//   - in long-polling mode (WithPolling) the engine sends its writes behind
//     the pending long-poll and pauses the poll for the websocket upgrade
//     with a check-then-subscribe race; closing waits for both, so an engine
//     can stay "closing" for ever and the manager, which reconnects on the
//     engine's close, never does: an engine the manager opened that is
//     still closing after lostAckGrace gets its "close" replayed.
const (
	lostOpenGrace = 300 * time.Millisecond
	lostAckGrace  = DefaultAttemptTimeout
	watchTick     = 100 * time.Millisecond
)

type watch struct {
	mu       sync.Mutex
	opened   engine.Socket // the engine the manager last opened for
	errored  engine.Socket // the engine the manager last heard fail
	replayed engine.Socket // the engine whose error was replayed
	engine   engine.Socket // the engine being watched
	since    time.Time     // when it was first seen, or last acted on
}

// managerOpened records that the manager saw its engine open.
func (w *watch) managerOpened(e engine.Socket) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opened = e
}

// managerErrored records that the manager heard its engine fail.
func (w *watch) managerErrored(e engine.Socket) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errored = e
}

type watchAction int

const (
	watchNothing watchAction = iota
	watchReplayOpen
	watchReconnect
	watchReplayError
	watchReplayClose
)

// check decides what to do about e, the manager's engine, while the
// namespace is not connected.
func (w *watch) check(e engine.Socket, now time.Time) watchAction {
	w.mu.Lock()
	defer w.mu.Unlock()
	var state engine.SocketState
	if e != nil {
		state = e.ReadyState()
	}
	switch {
	case state == engine.SocketStateClosed:
		return w.checkClosed(e, now)
	case state == engine.SocketStateClosing && w.opened == e:
		// The engine waits for its write buffer to drain and for a
		// websocket upgrade to end before it closes, and in long-polling
		// mode either can wait for ever: its close is replayed, and the
		// manager reconnects with a new engine.
		return w.due(e, now, lostAckGrace, watchReplayClose)
	case state != engine.SocketStateOpen:
		w.engine = nil
		return watchNothing
	case w.opened != e:
		return w.due(e, now, lostOpenGrace, watchReplayOpen)
	default:
		return w.due(e, now, lostAckGrace, watchReconnect)
	}
}

// due watches e and returns action once grace has passed since e was first
// seen or last acted on (acting starts the wait again); until then, and
// for an engine not watched yet, nothing.
func (w *watch) due(e engine.Socket, now time.Time, grace time.Duration, action watchAction) watchAction {
	if w.engine != e {
		w.engine, w.since = e, now
		return watchNothing
	}
	if now.Sub(w.since) < grace {
		return watchNothing
	}
	w.since = now
	return action
}

// checkClosed handles a closed engine: nothing to do when the manager saw
// it open (its close handler took over) or fail, else its error was lost
// and is replayed once.
func (w *watch) checkClosed(e engine.Socket, now time.Time) watchAction {
	if e == w.opened || e == w.errored || e == w.replayed {
		w.engine = nil
		return watchNothing
	}
	if w.due(e, now, lostOpenGrace, watchReplayError) == watchNothing {
		return watchNothing
	}
	w.replayed = e
	w.engine = nil
	return watchReplayError
}

// reset forgets the watched engine (the namespace connected).
func (w *watch) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.engine = nil
}

// errLostDialError stands for the error of a connection attempt that the
// Socket.IO client raised before anyone listened.
var errLostDialError = errors.New("connection attempt failed (server unreachable)")

// errStuckClose stands for the close of an engine that never finished
// closing.
var errStuckClose = errors.New("the connection did not finish closing")

// watchConnection runs the watchdog until the Conn closes.
func (c *Conn) watchConnection() {
	mgr := c.sock.Io()
	t := time.NewTicker(watchTick)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case now := <-t.C:
			if c.sock.Connected() {
				c.watch.reset()
				continue
			}
			e := mgr.Engine()
			switch c.watch.check(e, now) {
			case watchReplayOpen:
				c.log.Debug("the Socket.IO manager missed its engine's open; replaying it")
				e.Emit("open")
			case watchReconnect:
				if c.sock.Connected() { // connected since the check
					continue
				}
				c.log.Warn("no answer to the namespace connect; reconnecting", "url", c.url, "after", lostAckGrace)
				e.Close()
			case watchReplayError:
				c.log.Debug("the Socket.IO manager missed its connection attempt's failure; replaying it")
				e.Emit("error", errLostDialError)
			case watchReplayClose:
				c.log.Debug("the engine does not finish closing; replaying its close")
				e.Emit("close", "forced close", errStuckClose)
			}
		}
	}
}
