// Package memclasses reads the Go runtime's account of the memory a process
// has mapped, for the debug listeners of smcp-server and of the memory
// probe's reference floor (magefile.go, target Memory).
package memclasses

import (
	"runtime/metrics"
	"strings"
)

// Read returns the runtime metrics /memory/classes/…, the live heap the
// last collection marked, the heap goal and the goroutine count, by name:
// with the kernel's RSS they tell what a connection costs and what a
// process keeps after a burst (spec/decisions.md, Idle memory per
// connection). Reading them allocates little, unlike a goroutine profile.
func Read() map[string]uint64 {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/gc/heap/live:bytes" || d.Name == "/gc/heap/goal:bytes" || d.Name == "/sched/goroutines:goroutines" {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	out := make(map[string]uint64, len(samples))
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			out[s.Name] = s.Value.Uint64()
		}
	}
	return out
}
