package main

import (
	"io"
	"log/slog"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

var sink []byte

// TestMemoryReleaser checks the release conditions against the real
// runtime: a burst leaves garbage, the next quiet tick returns it, and a
// quiet process with nothing new to return is left alone.
func TestMemoryReleaser(t *testing.T) {
	r := newMemoryReleaser(slog.New(slog.NewTextHandler(io.Discard, nil)))
	// A burst: 16 MB of short-lived buffers.
	for range 1024 {
		sink = make([]byte, 16<<10)
	}
	require.False(t, r.tick(), "a tick right after the burst sees it: not quiet")
	require.True(t, r.tick(), "the next tick is quiet and finds the burst's garbage")
	_, _, reclaimable := r.read()
	// The runtime may keep a few free pages (up to 2 MB seen after other
	// tests of this binary ran); the burst's 16 MB must be gone.
	require.Less(t, reclaimable, uint64(4<<20), "the release returned the burst")
	require.False(t, r.tick(), "nothing left to return beyond what the release could not")
	require.False(t, r.tick(), "and the next quiet tick does not release again")
	runtime.KeepAlive(sink)
}
