// Package burst coalesces bursts of change signals into one callback
// (trailing-edge debounce with a bound on the total delay).
//
// The Finder and the Desktop emit one server:update_finder /
// server:update_desktop per burst of MCP notifications (spec/finder.md, Update
// mechanism; spec/desktop.md, Desktop).
package burst

import (
	"sync"
	"time"
)

// Debouncer calls its function once after a burst of Trigger calls has been
// quiet for the debounce delay, or at the latest maxDelay after the first
// Trigger of the burst. Callbacks never overlap. The zero value is not usable;
// create one with New.
type Debouncer struct {
	delay, maxDelay time.Duration
	fn              func()
	clk             clock

	mu      sync.Mutex
	timer   timer
	pending bool
	first   time.Time
	due     time.Time
	closed  bool
	running sync.WaitGroup

	callMu sync.Mutex // serialises fn
}

// New returns a Debouncer calling fn. delay ≤ 0 calls fn on the next timer
// tick (no coalescing beyond concurrent triggers); maxDelay < delay is raised
// to delay.
func New(delay, maxDelay time.Duration, fn func()) *Debouncer {
	return newWithClock(delay, maxDelay, fn, realClock{})
}

func newWithClock(delay, maxDelay time.Duration, fn func(), clk clock) *Debouncer {
	if delay < 0 {
		delay = 0
	}
	if maxDelay < delay {
		maxDelay = delay
	}
	return &Debouncer{delay: delay, maxDelay: maxDelay, fn: fn, clk: clk}
}

// clock is the time a Debouncer reads and the timers it sets: the real
// ones, or the tests' manual clock, which makes its timing deterministic
// on a machine however loaded.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) timer
}

type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

// Trigger records one change. It never blocks on the callback.
func (d *Debouncer) Trigger() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.fn == nil {
		return
	}
	now := d.clk.Now()
	if !d.pending {
		d.pending = true
		d.first = now
		d.due = now.Add(d.delay)
		if d.timer == nil {
			d.timer = d.clk.AfterFunc(d.delay, d.fire)
		} else {
			d.timer.Reset(d.delay)
		}
		return
	}
	due := now.Add(d.delay)
	if limit := d.first.Add(d.maxDelay); due.After(limit) {
		due = limit
	}
	d.due = due
}

func (d *Debouncer) fire() {
	d.mu.Lock()
	if d.closed || !d.pending {
		d.mu.Unlock()
		return
	}
	if wait := d.due.Sub(d.clk.Now()); wait > 0 {
		d.timer.Reset(wait)
		d.mu.Unlock()
		return
	}
	d.pending = false
	d.running.Add(1)
	d.mu.Unlock()
	defer d.running.Done()

	d.callMu.Lock()
	defer d.callMu.Unlock()
	d.fn()
}

// Close drops a pending burst and waits for a running callback to return.
// Trigger after Close does nothing. Close is idempotent.
func (d *Debouncer) Close() {
	d.mu.Lock()
	d.closed = true
	d.pending = false
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
	d.running.Wait()
}
