package sio

import (
	"testing"
	"time"

	engine "github.com/a2c-smcp/smcp-go/sio/third_party/engineioclient"
)

// fakeEngine is an engine connection whose state the test sets; the
// watchdog uses nothing else of it.
type fakeEngine struct {
	engine.Socket
	state engine.SocketState
}

func (f *fakeEngine) ReadyState() engine.SocketState { return f.state }

func TestConnWatch(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	open := &fakeEngine{state: engine.SocketStateOpen}
	opening := &fakeEngine{state: engine.SocketStateOpening}
	type step struct {
		name  string
		setup func(w *watch)
		e     engine.Socket
		now   time.Duration
		want  watchAction
	}
	steps := []step{
		{"no engine", nil, nil, 0, watchNothing},
		{"engine still opening", nil, opening, 0, watchNothing},
		{"engine open: start watching", nil, open, 0, watchNothing},
		{"within the open grace", nil, open, lostOpenGrace - time.Millisecond, watchNothing},
		{"open lost: replay", nil, open, lostOpenGrace, watchReplayOpen},
		{"just replayed", nil, open, lostOpenGrace + watchTick, watchNothing},
		{"still lost: replay again", nil, open, 2 * lostOpenGrace, watchReplayOpen},
		{"manager opened: watch the ack", func(w *watch) { w.managerOpened(open) }, open, 2*lostOpenGrace + watchTick, watchNothing},
		{"ack lost: reconnect", nil, open, 2*lostOpenGrace + lostAckGrace, watchReconnect},
		{"just reconnected", nil, open, 2*lostOpenGrace + lostAckGrace + watchTick, watchNothing},
		{"connected: reset", func(w *watch) { w.reset() }, open, 10 * time.Second, watchNothing},
		{"a new engine starts over", nil, &fakeEngine{state: engine.SocketStateOpen}, 10 * time.Second, watchNothing},
	}
	closedA := &fakeEngine{state: engine.SocketStateClosed}
	closedB := &fakeEngine{state: engine.SocketStateClosed}
	steps = append(steps, []step{
		{"closed engine: start watching", nil, closedA, 20 * time.Second, watchNothing},
		{"within the grace", nil, closedA, 20*time.Second + lostOpenGrace - time.Millisecond, watchNothing},
		{"error lost: replay", nil, closedA, 20*time.Second + lostOpenGrace, watchReplayError},
		{"replayed once only", nil, closedA, 30 * time.Second, watchNothing},
		{"the manager heard it fail", func(w *watch) { w.managerErrored(closedB) }, closedB, 40 * time.Second, watchNothing},
		{"...and later", nil, closedB, 50 * time.Second, watchNothing},
		{"closed after the manager opened it", func(*watch) { open.state = engine.SocketStateClosed }, open, 60 * time.Second, watchNothing},
		{"...and later", nil, open, 70 * time.Second, watchNothing},
	}...)
	closing := &fakeEngine{state: engine.SocketStateOpen}
	notOpened := &fakeEngine{state: engine.SocketStateClosing}
	steps = append(steps, []step{
		{"closing, never opened by the manager: not ours", nil, notOpened, 80 * time.Second, watchNothing},
		{"...and later", nil, notOpened, 90 * time.Second, watchNothing},
		{"opened, then closing: start watching", func(w *watch) {
			w.managerOpened(closing)
			closing.state = engine.SocketStateClosing
		}, closing, 100 * time.Second, watchNothing},
		{"within the grace", nil, closing, 100*time.Second + lostAckGrace - time.Millisecond, watchNothing},
		{"stuck closing: replay its close", nil, closing, 100*time.Second + lostAckGrace, watchReplayClose},
		{"just replayed", nil, closing, 100*time.Second + lostAckGrace + watchTick, watchNothing},
		{"closed at last", func(*watch) { closing.state = engine.SocketStateClosed }, closing, 110 * time.Second, watchNothing},
	}...)
	var w watch
	for _, s := range steps {
		if s.setup != nil {
			s.setup(&w)
		}
		if got := w.check(s.e, at(s.now)); got != s.want {
			t.Fatalf("%s: got action %d, want %d", s.name, got, s.want)
		}
	}
}
