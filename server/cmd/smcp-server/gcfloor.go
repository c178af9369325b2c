package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gcFloor keeps the collector's heap goal at or above floor bytes while the
// live heap is small (docs/performance.md, "Second round").
//
// At the default GOGC=100 the collector runs whenever the heap doubles. A
// routing Server's live heap is a few megabytes: under load it collected
// about forty times a second, and the collections took 15–20 % of its CPU.
// After each collection gcFloor sets GOGC so that the next one starts no
// earlier than at floor bytes of heap, and never lower than 100: with a
// live heap above floor/2 nothing changes. The price is at most floor bytes
// of garbage under load; once quiet, the memory releaser (memory.go)
// returns it to the operating system.
//
// The floor holds only while the Server routes requests (busy): routing
// makes short-lived garbage, which a larger heap collects for less. A burst
// of connections is different: its long-lived per-connection objects would
// be spread over more pages among the garbage, and RSS after 30,000
// connect/close cycles stayed 1–3 MB higher (spec/decisions.md, The
// Server's connection layer and collector pacing).
//
// An operator's GOGC environment variable wins: gcFloor then does nothing.
type gcFloor struct {
	ctx     context.Context
	floor   uint64
	busy    func() bool
	percent int
	samples []metrics.Sample
}

// defaultGCHeapFloor is --gc-heap-floor's default.
const defaultGCHeapFloor = 16 << 20

// startGCFloor starts the tuning until ctx ends. floor 0 turns it off.
func startGCFloor(ctx context.Context, floor uint64, getenv func(string) string, busy func() bool) {
	if floor == 0 || getenv("GOGC") != "" {
		return
	}
	f := &gcFloor{ctx: ctx, floor: floor, busy: busy, percent: 100, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	f.adjust()
	f.arm()
}

// sentinel is garbage from birth: its finalizer runs after the next
// collection, adjusts, and arms a new one.
type sentinel struct{ f *gcFloor }

func (f *gcFloor) arm() {
	runtime.SetFinalizer(&sentinel{f}, func(s *sentinel) {
		if s.f.ctx.Err() != nil {
			debug.SetGCPercent(100)
			return
		}
		s.f.adjust()
		s.f.arm()
	})
}

// percentFor returns the GOGC whose heap goal is floor, or 100 if that
// is more. The goal is live + (live + roots) × GOGC/100, where the roots
// are the goroutine stacks and globals the collector scans (the Go GC
// guide); leaving the roots out would multiply a Server's thousands of
// connection stacks by GOGC. The runtime also never aims below a minimum
// heap of 4 MB × GOGC/100, so GOGC stays at most floor / 4 MB × 100.
func percentFor(live, roots, floor uint64) int {
	if live >= floor {
		return 100
	}
	p := int((floor - live) * 100 / max(live+roots, 1))
	return min(max(p, 100), max(int(floor*100/runtimeHeapMinimum), 100))
}

// runtimeHeapMinimum is the Go runtime's minimum heap goal at GOGC=100.
const runtimeHeapMinimum = 4 << 20

func (f *gcFloor) adjust() {
	metrics.Read(f.samples)
	live := f.samples[0].Value.Uint64()
	p := 100
	if f.busy() {
		p = percentFor(live, f.samples[1].Value.Uint64()+f.samples[2].Value.Uint64(), f.floor)
	}
	// Small moves are not worth a change of pacing.
	if p == f.percent || (p > f.percent*9/10 && p < f.percent*11/10) {
		return
	}
	f.percent = p
	debug.SetGCPercent(p)
}

// teeRouted returns a Registerer for the Server's metrics that registers
// everything in reg and keeps the Server's routed-requests counter for the
// routing watch, which reads it ten times a second: gathering reg would
// also run the runtime and process collectors (300 µs and 140 KB a call)
// and the Server's gauges, which take its main lock, and the garbage of ten
// gatherings a second would keep an idle process from looking quiet to the
// memory release. Client_golang gives a descriptor no name accessor; the
// counter is recognised by the fully-qualified name in its descriptor's
// text.
func teeRouted(reg prometheus.Registerer) *routedTee {
	return &routedTee{Registerer: reg}
}

type routedTee struct {
	prometheus.Registerer
	routed atomic.Pointer[prometheus.Collector]
}

func (t *routedTee) Register(c prometheus.Collector) error {
	if err := t.Registerer.Register(c); err != nil {
		return err
	}
	descs := make(chan *prometheus.Desc, 8)
	go func() { c.Describe(descs); close(descs) }()
	isRouted := false
	for d := range descs {
		isRouted = isRouted || strings.Contains(d.String(), `fqName: "`+routedMetric+`"`)
	}
	if isRouted {
		t.routed.Store(&c)
	}
	return nil
}

func (t *routedTee) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := t.Register(c); err != nil {
			panic(err)
		}
	}
}

// routingLoad tells whether the Server routed at least minRoutingRate
// requests a second over the last tick (100 ms, so that the floor holds
// within a fraction of a second of load), from its routed-requests
// counter.
type routingLoad struct {
	tee  *routedTee
	ch   chan prometheus.Metric
	m    dto.Metric
	last float64
	busy atomic.Bool
}

const (
	routedMetric   = "smcp_server_routed_requests_total"
	minRoutingRate = 500 // requests a second
	routingTick    = 100 * time.Millisecond
)

func watchRouting(ctx context.Context, tee *routedTee) *routingLoad {
	l := &routingLoad{tee: tee, ch: make(chan prometheus.Metric, 16)}
	l.last = l.total()
	go tickUntil(ctx, routingTick, func() {
		n := l.total()
		l.busy.Store(n-l.last >= minRoutingRate*routingTick.Seconds())
		l.last = n
	})
	return l
}

func (l *routingLoad) routing() bool { return l.busy.Load() }

// total sums the routed-requests counter over its labels. It allocates
// nothing until the Server has routed a request (the counter then has a
// child per event and outcome).
func (l *routingLoad) total() float64 {
	c := l.tee.routed.Load()
	if c == nil {
		return 0
	}
	go func() {
		(*c).Collect(l.ch)
		l.ch <- nil // the end
	}()
	var n float64
	for m := range l.ch {
		if m == nil {
			break
		}
		l.m.Reset()
		if m.Write(&l.m) == nil {
			n += l.m.GetCounter().GetValue()
		}
	}
	return n
}
