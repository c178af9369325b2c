//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TestLoaded runs the tests while a CPU burner keeps every core busy (one
// spinning goroutine per core, at the tests' own priority), as on a machine
// shared with other work — CI's included. A test that passes only on an
// idle machine depends on timing, which the guide calls a defect: run this
// before you stop (it is not part of Test, nor of CI).
//
// By default it runs the test command (Test). SMCP_LOADED_MODULES (a
// comma-separated list such as "agent,sio,computer") runs only
// `go test -race -count=1 ./...` of those modules, with the interop
// peers' environment; SMCP_LOADED_RUNS repeats the run that many times
// (default 1), stopping at the first failure, and SMCP_LOADED_BURNERS
// sets the number of burners (default: one per core).
func TestLoaded(ctx context.Context) error {
	burners := runtime.NumCPU()
	if v := os.Getenv("SMCP_LOADED_BURNERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("SMCP_LOADED_BURNERS: not a count: %q", v)
		}
		burners = n
	}
	runs := 1
	if v := os.Getenv("SMCP_LOADED_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("SMCP_LOADED_RUNS: not a positive count: %q", v)
		}
		runs = n
	}
	var mods []string
	if v := os.Getenv("SMCP_LOADED_MODULES"); v != "" {
		for _, m := range strings.Split(v, ",") {
			m = strings.TrimSpace(m)
			if _, err := os.Stat(m + "/go.mod"); err != nil {
				return fmt.Errorf("SMCP_LOADED_MODULES: %q is not a module of the workspace", m)
			}
			mods = append(mods, m)
		}
	}

	stop := burn(burners)
	defer stop()
	fmt.Printf("testLoaded: %d CPU burners on %d cores\n", burners, runtime.NumCPU())
	env := interopEnv()
	for run := 1; run <= runs; run++ {
		start := time.Now()
		var err error
		if mods == nil {
			err = Test()
		} else {
			for _, m := range mods {
				if err = runEnv(m, env, "go", "test", "-race", "-count=1", "-timeout", "30m", "./..."); err != nil {
					break
				}
			}
		}
		if err != nil {
			return fmt.Errorf("loaded run %d of %d failed after %s: %w", run, runs, time.Since(start).Round(time.Second), err)
		}
		fmt.Printf("testLoaded: run %d of %d passed in %s\n", run, runs, time.Since(start).Round(time.Second))
	}
	return nil
}

// burn starts n goroutines that spin until the returned function is
// called, and runs them on threads of their own.
func burn(n int) (stop func()) {
	if runtime.GOMAXPROCS(0) < n+1 {
		runtime.GOMAXPROCS(n + 1) // the burners and this process's own work
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			x := 0
			for {
				for j := 0; j < 1<<20; j++ {
					x += j
				}
				select {
				case <-done:
					_ = x
					return
				default:
				}
			}
		}()
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
