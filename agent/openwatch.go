package agent

import (
	"errors"
	"sync"
	"time"

	engine "github.com/zishang520/socket.io/clients/engine/v3"
	sio "github.com/zishang520/socket.io/clients/socket/v3"
)

// Connection watchdog.
//
// The Socket.IO client (clients/socket v3.0.1, unchanged in v3.0.6) runs
// JavaScript's single-threaded connection sequence on several goroutines,
// and two of its steps race with the network:
//
//   - lost open: the manager creates its engine connection and only then
//     subscribes to the engine's "open" event, while the websocket
//     transport reads the server's handshake on its own goroutine. When the
//     engine opens first, the manager never hears of it and waits for its
//     attempt timeout.
//   - lost namespace ack: on open, the manager announces it (the socket
//     sends its CONNECT packet) before subscribing to the engine's data, so
//     a fast Server's answer can arrive unheard. The manager has then
//     cleared its attempt timer and the socket stays unconnected for good —
//     no error, no retry.
//
// Measured with -race on loopback: 10 connections in 200 stuck, a third of
// them for good. The watchdog unsticks both: an engine open for
// lostOpenGrace that the manager did not open for gets its "open" replayed
// (the manager's own open handler unsubscribes itself, so a replay after
// an open it did see reaches nobody); a manager open for lostAckGrace
// without the namespace connected has its engine closed, and the manager
// reconnects. (Sending the CONNECT again would not do: the Server has the
// namespace connected already and closes a connection that connects it
// twice.)
//
// The same ordering loses the error of a refused dial (the websocket dial is
// synchronous and reports its failure before the manager listens): every
// attempt while the Server is down would wait for its attempt timeout. An
// engine that closed without the manager having heard of it, for
// lostOpenGrace, gets its "error" replayed, and the manager schedules its
// next attempt at once (its error handler, too, unsubscribes itself).
//
// In long-polling mode (WithPolling) the engine sends its writes behind the
// pending long-poll and, to upgrade to a websocket, pauses the poll with the
// same check-then-subscribe pattern; closing waits for both, so an engine
// the watchdog closed can stay "closing" for ever and the manager, which
// reconnects on the engine's close, never does. An engine the manager
// opened that is still closing after lostAckGrace gets its "close"
// replayed (seen in a polling-first test: no reconnection for 19 s).
//
// A third race is avoided by Dial: Socket.Connect subscribes the socket to
// the manager's open and then, finding the manager open, sends its CONNECT
// itself, so an open announced in between sends it twice and the Server
// closes the connection (seen after the join and several requests had been
// answered, the dialing goroutine having been descheduled). Dial opens the
// manager first and connects the socket only after the manager has
// announced the open (connWatch.firstOpen).
const (
	lostOpenGrace = 300 * time.Millisecond
	lostAckGrace  = time.Second
	watchTick     = 100 * time.Millisecond
)

type connWatch struct {
	mu          sync.Mutex
	managerOpen chan struct{} // see firstOpen
	opened      engine.Socket // the engine the manager last opened for
	errored     engine.Socket // the engine the manager last heard fail
	replayed    engine.Socket // the engine whose error was replayed
	engine      engine.Socket // the engine being watched
	since       time.Time     // when it was first seen, or last acted on
}

// managerOpened records that the manager saw its engine open.
func (w *connWatch) managerOpened(e engine.Socket) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opened = e
	ch := w.firstOpenLocked()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// firstOpen returns a channel closed once the manager has announced an
// open engine for the first time (Dial then connects the socket).
func (w *connWatch) firstOpen() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstOpenLocked()
}

func (w *connWatch) firstOpenLocked() chan struct{} {
	if w.managerOpen == nil {
		w.managerOpen = make(chan struct{})
	}
	return w.managerOpen
}

// managerErrored records that the manager heard its engine fail.
func (w *connWatch) managerErrored(e engine.Socket) {
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
func (w *connWatch) check(e engine.Socket, now time.Time) watchAction {
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
func (w *connWatch) due(e engine.Socket, now time.Time, grace time.Duration, action watchAction) watchAction {
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
func (w *connWatch) checkClosed(e engine.Socket, now time.Time) watchAction {
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
func (w *connWatch) reset() {
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

// listenOpen subscribes to the manager's open; call before connecting.
func (c *Client) listenOpen(mgr *sio.Manager) {
	_ = mgr.On("open", func(...any) { c.watch.managerOpened(mgr.Engine()) })
	_ = mgr.On("error", func(...any) { c.watch.managerErrored(mgr.Engine()) })
}

// watchConnection runs the watchdog until the Client closes.
func (c *Client) watchConnection() {
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
				c.log.Debug("no answer to the namespace connect; reconnecting")
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
