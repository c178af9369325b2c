package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// churn opens and closes n connections against a fresh server, a third of
// each kind (refused for lack of a key; authenticated; authenticated with a
// join and a leave), on workers connections at a time (-concurrency), and
// prints the server's memory at each step:
//
//	fresh      the process before any connection (the debug listener's
//	           own requests have run);
//	first      after one cycle of each kind: the code that serves a
//	           connection is paged in, pools exist. This is the "start" the
//	           churn is compared with;
//	churned    right after the last cycle;
//	after GC   after a forced collection;
//	settled    after -settle more seconds with no connection, which is
//	           what a deployment sees between bursts.
//
// With -rounds above 1 the churn is repeated, and the settled RSS printed
// after each round.
func churn(bin string, n, warmup, rounds, workers int, settle time.Duration, profile string) error {
	s, err := start(bin, profile != "")
	if err != nil {
		return err
	}
	defer s.stop()
	time.Sleep(time.Second)
	fresh, err := s.settled(false)
	if err != nil {
		return err
	}
	for i, k := range churnKinds {
		if err := churnCycle(s.addr, k, fmt.Sprintf("first-%d", i)); err != nil {
			return fmt.Errorf("first %s cycle: %w", k, err)
		}
	}
	first, err := s.settled(true)
	if err != nil {
		return err
	}
	if err := churnRun(s.addr, warmup, workers, "warmup"); err != nil {
		return err
	}
	warm, err := s.settled(true)
	if err != nil {
		return err
	}
	if err := s.saveProfile(profile, ".first"); err != nil {
		return err
	}
	began, cpu0 := time.Now(), s.cpuTicks()
	if err := churnRun(s.addr, n, workers, "churn"); err != nil {
		return err
	}
	took, cpu := time.Since(began), s.cpuTicks()-cpu0
	churned, err := s.settled(false)
	if err != nil {
		return err
	}
	// The closed connections' goroutines end asynchronously.
	time.Sleep(time.Second)
	gced, err := s.settled(true)
	if err != nil {
		return err
	}
	if err := s.saveProfile(profile, ".churned"); err != nil {
		return err
	}
	time.Sleep(settle)
	later, err := s.settled(true)
	if err != nil {
		return err
	}
	// Read last: gathering the metrics makes garbage the figures above
	// would count.
	left, err := s.sessions()
	if err != nil {
		return err
	}
	fmt.Printf("churn of %s: %d open/close cycles in %s, server CPU %d ticks (a third each: refused without a key, authenticated, joined and left), %d at a time\n", filepath.Base(bin), n, took.Round(time.Millisecond), cpu, workers)
	names := []string{"fresh", "first", "warm", "churned", "after GC", fmt.Sprintf("+%s", settle)}
	all := []breakdown{fresh, first, warm, churned, gced, later}
	printTable(os.Stdout, names, all, 0)
	printMappings(os.Stdout, names, all, 1)
	if err := printPages(os.Stdout, names, all); err != nil {
		return err
	}
	if pagesPrefix != "" {
		for i, b := range all {
			if err := writePages(fmt.Sprintf("%s.%d-%s", pagesPrefix, i, strings.ReplaceAll(names[i], " ", "")), b.pages); err != nil {
				return err
			}
		}
	}
	pct := func(b, base breakdown) string {
		return fmt.Sprintf("%+.1f %%", 100*float64(b.rss-base.rss)/float64(base.rss))
	}
	fmt.Printf("  RSS: fresh %s; after the first connections %s; after %d warm-up cycles %s\n", mb(fresh.rss), mb(first.rss), warmup, mb(warm.rss))
	// The warm column is taken right after the warm-up burst, before the
	// Server returns that burst's free pages (its releaser waits for a
	// quiet moment): a percentage against it would flatter.
	fmt.Printf("  after churn %s, after GC %s, %s later %s: %s of the first connections' figure, %s of the fresh process\n",
		mb(churned.rss), mb(gced.rss), settle, mb(later.rss), pct(later, first), pct(later, fresh))
	fmt.Printf("  sessions left in the Server's tables (smcp_server_connections): %d\n", left)
	// Further rounds tell retention that grows with the cycles (a leak)
	// from high-water marks reached once.
	roundNames, roundBs := []string{"first", "round 1"}, []breakdown{first, later}
	for r := 2; r <= rounds; r++ {
		if err := churnRun(s.addr, n, workers, fmt.Sprintf("round%d", r)); err != nil {
			return err
		}
		time.Sleep(time.Second)
		if _, err := s.settled(true); err != nil {
			return err
		}
		time.Sleep(settle)
		b, err := s.settled(true)
		if err != nil {
			return err
		}
		if err := s.saveProfile(profile, fmt.Sprintf(".round%d", r)); err != nil {
			return err
		}
		fmt.Printf("  after round %d (%d cycles in all), GC and %s: RSS %s (%s of the first connections' figure), live heap %s, goroutines %d, OS threads %d\n",
			r, r*n, settle, mb(b.rss), pct(b, first), mb(b.mem["/gc/heap/live:bytes"]), b.goroutine, b.threads)
		roundNames, roundBs = append(roundNames, fmt.Sprintf("round %d", r)), append(roundBs, b)
	}
	if rounds > 1 {
		fmt.Printf("  each round after GC and %s:\n", settle)
		printTable(os.Stdout, roundNames, roundBs, 0)
		printMappings(os.Stdout, roundNames, roundBs, 1)
		if err := printPages(os.Stdout, roundNames, roundBs); err != nil {
			return err
		}
		last, one := roundBs[len(roundBs)-1], roundBs[1]
		fmt.Printf("  RSS after %d cycles %s, after %d cycles %s (%+.1f %%): growth with the cycles would be a leak, a figure that stays a high-water mark\n",
			n, mb(one.rss), rounds*n, mb(last.rss), 100*float64(last.rss-one.rss)/float64(one.rss))
	}
	return nil
}

// churnRun runs n cycles on workers connections at a time, the kinds in
// turn.
func churnRun(addr string, n, workers int, prefix string) error {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				k := churnKinds[i%len(churnKinds)]
				if err := churnCycle(addr, k, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
					errs <- fmt.Errorf("%s cycle %d: %w", k, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []error
	for e := range errs {
		all = append(all, e)
	}
	return errors.Join(all...)
}

// settled returns the breakdown, after a collection when gc is set.
func (s *server) settled(gc bool) (breakdown, error) {
	if gc {
		if _, err := s.heap(); err != nil {
			return breakdown{}, err
		}
	}
	return s.breakdown()
}

var churnKinds = []string{"refused", "authenticated", "joined"}

// churnCycle is one connection of kind k: Engine.IO open, namespace CONNECT
// (refused without a key), a join and a leave of an office of its own for
// "joined", then a namespace DISCONNECT and close.
func churnCycle(addr, k, name string) error {
	c, err := dial(addr, k != "refused", 0)
	if err != nil {
		return err
	}
	defer c.ws.Close()
	switch k {
	case "refused":
		if err := c.send("40/smcp,{}"); err != nil {
			return err
		}
		if m, err := c.read(); err != nil || !strings.HasPrefix(m, "44/smcp,") {
			return fmt.Errorf("want a refusal, got %q %v", m, err)
		}
		return nil
	case "joined":
		if err := c.join("agent", name, name); err != nil {
			return err
		}
		got, err := c.call("server:leave_office", map[string]any{"office_id": name})
		if err != nil {
			return err
		}
		if !strings.HasPrefix(got, "[true") {
			return fmt.Errorf("leave: %.200s", got)
		}
	}
	return c.send("41/smcp,")
}

// saveProfile writes the server's heap profile to profile+suffix, when
// profile is set.
func (s *server) saveProfile(profile, suffix string) error {
	if profile == "" {
		return nil
	}
	body, err := s.get("/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	if err := os.WriteFile(profile+suffix, []byte(body), 0o644); err != nil {
		return err
	}
	smaps, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", s.cmd.Process.Pid))
	if err != nil {
		return err
	}
	return os.WriteFile(profile+suffix+".smaps", smaps, 0o644)
}

// sessions returns the sessions the server still holds, from its
// smcp_server_connections gauge (by role) at /metrics.
func (s *server) sessions() (int, error) {
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	n, seen := 0, false
	for line := range strings.SplitSeq(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "smcp_server_connections{"); ok {
			_, v, _ := strings.Cut(rest, "} ")
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("/metrics: %q: %w", line, err)
			}
			n, seen = n+int(f), true
		}
	}
	if !seen {
		return 0, errors.New("/metrics has no smcp_server_connections")
	}
	return n, nil
}

// cpuTicks returns the CPU time the server has used, user and system, in
// clock ticks (/proc/<pid>/stat; 100 a second on Linux), or -1.
func (s *server) cpuTicks() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	// The fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	k, err2 := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	if err1 != nil || err2 != nil {
		return -1
	}
	return u + k
}
