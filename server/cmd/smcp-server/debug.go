package main

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// serveDebug serves the runtime's profiles (/debug/pprof/) and variables
// (/debug/vars) on addr, which must be a loopback address: they reveal the
// process's internals and are meant for an operator on the machine, e.g.
// to measure memory per connection (magefile.go, target Memory). The
// returned function stops the listener.
func serveDebug(addr string, log *slog.Logger) (func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-listen: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--debug-listen %s: only a loopback address is allowed", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	// No /debug/pprof/cmdline: the command line may hold --api-keys.
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	publishMemory.Do(func() { expvar.Publish("memory", expvar.Func(memoryClasses)) })
	mux.Handle("/debug/vars", expvar.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("debug listener stopped", "error", err.Error())
		}
	}()
	log.Info("debug listener", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

var publishMemory sync.Once

// memoryClasses is the runtime's account of the memory it has mapped
// (runtime/metrics /memory/classes/…, the live heap the last collection
// marked, the heap goal and the goroutine count), published as the expvar
// "memory": with the kernel's RSS it tells what a connection costs and what
// a process keeps after a burst (spec/decisions.md, Idle memory per
// connection). Reading it allocates little, unlike a goroutine profile.
func memoryClasses() any {
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
