package server

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShrunk fills a table to 1,000 entries and empties it: it keeps its
// map while it holds more than a quarter of its peak, is rebuilt with the
// same entries at 250, and its peak starts again from there.
func TestShrunk(t *testing.T) {
	same := func(a, b map[int]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	m := map[int]string{}
	var p peak
	for i := range 1000 {
		m[i] = "v"
		p.grew(len(m))
	}
	require.Equal(t, peak(1000), p)
	for i := 999; i >= 251; i-- {
		delete(m, i)
		got := shrunk(m, &p)
		require.True(t, same(got, m), "rebuilt at %d entries", len(m))
	}
	delete(m, 250)
	got := shrunk(m, &p)
	require.False(t, same(got, m), "not rebuilt at a quarter of the peak")
	require.Equal(t, m, got)
	require.Equal(t, peak(250), p)

	// A table that never held minShrinkPeak entries is left alone.
	small := map[int]string{}
	var sp peak
	for i := range minShrinkPeak - 1 {
		small[i] = "v"
		sp.grew(len(small))
	}
	for i := range minShrinkPeak - 2 {
		delete(small, i)
	}
	require.True(t, same(shrunk(small, &sp), small))
}
