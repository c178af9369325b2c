package burst

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manualClock is a clock the test moves: timers fire, in order, on the
// test's goroutine inside Advance, so the tests below do not depend on how
// fast the machine runs them.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c      *manualClock
	at     time.Time
	f      func()
	active bool
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_000_000, 0)} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), f: f, active: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *manualTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.at, t.active = t.c.now.Add(d), true
	return was
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

// Advance moves the clock by d, firing every timer that comes due on the
// way, at its time.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *manualTimer
		for _, t := range c.timers {
			if t.active && !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		c.now, next.active = next.at, false
		c.mu.Unlock()
		next.f()
	}
}

func TestBurstIsOneCall(t *testing.T) {
	var n atomic.Int32
	clk := newManualClock()
	d := newWithClock(50*time.Millisecond, time.Second, func() { n.Add(1) }, clk)
	defer d.Close()
	for range 20 {
		d.Trigger()
		clk.Advance(time.Millisecond)
	}
	clk.Advance(48 * time.Millisecond)
	assert.Zero(t, n.Load(), "not quiet for 50 ms yet")
	clk.Advance(time.Millisecond)
	assert.Equal(t, int32(1), n.Load(), "one call for the burst")
	clk.Advance(time.Hour)
	assert.Equal(t, int32(1), n.Load())

	// A second burst is a second call.
	d.Trigger()
	d.Trigger()
	clk.Advance(time.Hour)
	assert.Equal(t, int32(2), n.Load())
}

func TestBurstTrailingEdge(t *testing.T) {
	var at atomic.Int64
	clk := newManualClock()
	d := newWithClock(80*time.Millisecond, time.Hour, func() { at.Store(clk.Now().UnixNano()) }, clk)
	defer d.Close()
	start := clk.Now()
	d.Trigger()
	clk.Advance(50 * time.Millisecond)
	last := clk.Now()
	d.Trigger()
	clk.Advance(time.Hour)
	require.NotZero(t, at.Load())
	fired := time.Unix(0, at.Load())
	assert.Equal(t, 80*time.Millisecond, fired.Sub(last), "quiet period measured from the last trigger")
	assert.Equal(t, 130*time.Millisecond, fired.Sub(start))
}

func TestBurstMaxDelay(t *testing.T) {
	var n atomic.Int32
	clk := newManualClock()
	d := newWithClock(40*time.Millisecond, 200*time.Millisecond, func() { n.Add(1) }, clk)
	defer d.Close()
	// A trigger every 10 ms for 2 s: never quiet for 40 ms.
	for range 200 {
		d.Trigger()
		clk.Advance(10 * time.Millisecond)
	}
	assert.Equal(t, int32(10), n.Load(), "a never-ending stream still signals every maxDelay")
}

// TestBurstRealClock: New runs on the real clock.
func TestBurstRealClock(t *testing.T) {
	called := make(chan struct{}, 2)
	d := New(time.Millisecond, time.Millisecond, func() { called <- struct{}{} })
	defer d.Close()
	d.Trigger()
	<-called
}

func TestBurstCloseDropsPendingAndWaits(t *testing.T) {
	var n atomic.Int32
	d := New(time.Hour, time.Hour, func() { n.Add(1) })
	d.Trigger()
	d.Close()
	d.Close()
	d.Trigger()
	assert.Zero(t, n.Load())

	release := make(chan struct{})
	entered := make(chan struct{})
	var done atomic.Bool
	d2 := New(time.Millisecond, time.Millisecond, func() {
		close(entered)
		<-release
		done.Store(true)
	})
	d2.Trigger()
	<-entered
	closed := make(chan struct{})
	go func() { d2.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while the callback was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-closed
	assert.True(t, done.Load())
}

func TestBurstNilFunction(t *testing.T) {
	d := New(time.Millisecond, 0, nil)
	d.Trigger()
	d.Close()
}
