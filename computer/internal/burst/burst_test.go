package burst

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	wait = 10 * time.Second
	tick = 2 * time.Millisecond
)

func TestBurstIsOneCall(t *testing.T) {
	var n atomic.Int32
	d := New(50*time.Millisecond, time.Second, func() { n.Add(1) })
	defer d.Close()
	for range 20 {
		d.Trigger()
	}
	require.Eventually(t, func() bool { return n.Load() == 1 }, wait, tick)
	require.Never(t, func() bool { return n.Load() > 1 }, 200*time.Millisecond, tick)

	// A second burst is a second call.
	d.Trigger()
	d.Trigger()
	require.Eventually(t, func() bool { return n.Load() == 2 }, wait, tick)
	require.Never(t, func() bool { return n.Load() > 2 }, 200*time.Millisecond, tick)
}

func TestBurstTrailingEdge(t *testing.T) {
	var at atomic.Int64
	d := New(80*time.Millisecond, time.Hour, func() { at.Store(time.Now().UnixNano()) })
	defer d.Close()
	start := time.Now()
	d.Trigger()
	time.Sleep(50 * time.Millisecond) // not synchronisation: shapes the burst
	last := time.Now()
	d.Trigger()
	require.Eventually(t, func() bool { return at.Load() != 0 }, wait, tick)
	fired := time.Unix(0, at.Load())
	assert.GreaterOrEqual(t, fired.Sub(last), 80*time.Millisecond, "quiet period measured from the last trigger")
	assert.GreaterOrEqual(t, fired.Sub(start), 130*time.Millisecond)
}

func TestBurstMaxDelay(t *testing.T) {
	var n atomic.Int32
	d := New(40*time.Millisecond, 200*time.Millisecond, func() { n.Add(1) })
	defer d.Close()
	stop := time.After(2 * time.Second)
	ticker := time.NewTicker(10 * time.Millisecond) // never quiet for 40 ms
	defer ticker.Stop()
loop:
	for {
		select {
		case <-ticker.C:
			d.Trigger()
		case <-stop:
			break loop
		}
	}
	assert.GreaterOrEqual(t, n.Load(), int32(3), "a never-ending stream still signals every maxDelay")
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
