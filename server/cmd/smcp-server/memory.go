package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryReleaser returns the heap a burst of connections left behind to the
// operating system once the process is quiet (spec/decisions.md, Idle
// memory per connection). The Go runtime collects only when the heap
// reaches its goal (twice the live heap at the default GOGC) and keeps
// freed spans for reuse up to that goal: after 1,000 clients joined, the
// handshakes' garbage and the spans it occupied stay resident, ~6 KB per
// connection, with nothing to use them; after a churn burst the same holds
// for connections that are gone. The collector's pacing (GOGC) is left
// alone, so nothing changes under load.
//
// Each tick reads four runtime metrics and releases (debug.FreeOSMemory: a
// collection, then every free page back to the kernel) when
//   - the process is quiet: it allocated less than 1 % of the live heap (at
//     least 64 KB) since the previous tick, so the memory is not about to be
//     reused;
//   - what a release would return — the heap not live at the last
//     collection (garbage, or new objects) plus the free spans kept — is at
//     least 256 KB and an eighth of the live heap, so the release is worth
//     its collection, whose cost grows with the live heap.
//
// A busy process never releases. A quiet one needs at least 13 ticks to
// gather an eighth of its live heap again, so it releases at most that
// often, and at most eight times as often as the collector would run
// anyway (once the garbage equals the live heap, at GOGC=100).
type memoryReleaser struct {
	log       *slog.Logger
	samples   []metrics.Sample
	lastAlloc uint64
	// residue is what the last release could not return (free pages the
	// runtime keeps, seen up to 2 MB): only what a quiet process gathers
	// beyond it counts, or it would release at every tick for nothing.
	residue uint64
}

const (
	metricAllocs      = "/gc/heap/allocs:bytes"
	metricHeapLive    = "/gc/heap/live:bytes"
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricHeapFree    = "/memory/classes/heap/free:bytes"

	minQuietBytes   = 64 << 10
	minReleaseBytes = 256 << 10
)

func newMemoryReleaser(log *slog.Logger) *memoryReleaser {
	r := &memoryReleaser{log: log, samples: []metrics.Sample{
		{Name: metricAllocs}, {Name: metricHeapLive}, {Name: metricHeapObjects}, {Name: metricHeapFree},
	}}
	r.lastAlloc, _, _ = r.read()
	return r
}

// read returns the bytes allocated so far, the live heap and what a
// release would return.
func (r *memoryReleaser) read() (allocs, live, reclaimable uint64) {
	metrics.Read(r.samples)
	allocs, live = r.samples[0].Value.Uint64(), r.samples[1].Value.Uint64()
	objects, free := r.samples[2].Value.Uint64(), r.samples[3].Value.Uint64()
	return allocs, live, objects - min(objects, live) + free
}

// tick releases if the conditions above hold, and reports whether it did.
func (r *memoryReleaser) tick() bool {
	allocs, live, reclaimable := r.read()
	recent := allocs - r.lastAlloc
	r.lastAlloc = allocs
	if recent >= max(live/100, minQuietBytes) || reclaimable < r.residue+max(live/8, minReleaseBytes) {
		return false
	}
	debug.FreeOSMemory()
	r.lastAlloc, _, r.residue = r.read()
	r.log.Debug("returned free heap to the OS", "reclaimable_bytes", reclaimable, "live_bytes", live)
	return true
}

// run ticks every interval until ctx ends.
func (r *memoryReleaser) run(ctx context.Context, every time.Duration) {
	tickUntil(ctx, every, func() { r.tick() })
}

// tickUntil calls fn every d until ctx ends.
func tickUntil(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
