//go:build mage

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// benchDir holds the pinned Node peers and the scripts of BenchCompare.
const benchDir = "bench/compare"

// benchScenario is one row of BenchCompare's table.
type benchScenario struct {
	name     string
	event    string // tool_call | get_tools
	offices  int
	inflight int
	warmup   int  // requests before the measured phase
	batch    bool // the load generator batches its writes (BATCH_WRITES)
}

// The rows marked "client batches writes" repeat the loaded rows with a
// load generator that writes what one turn of its event loop sends on a
// socket with one system call. Without that, it writes every packet with a
// write(2) of its own and uses its whole core at 32 requests in flight with
// the servers measured: those rows then show how often the load generator
// waits, not how fast a server routes (docs/performance.md, Fifth round).
var benchScenarios = []benchScenario{
	{"tool_call, 1 KB answer, 1 in flight", "tool_call", 1, 1, 600, false},
	{"tool_call, 1 KB answer, 32 in flight", "tool_call", 1, 32, 2000, false},
	{"get_tools, 9 KB answer, 32 in flight", "get_tools", 1, 32, 1000, false},
	{"tool_call, 8 offices x 8 in flight", "tool_call", 8, 8, 2000, false},
	{"tool_call, 32 in flight, client batches writes", "tool_call", 1, 32, 2000, true},
	{"get_tools, 32 in flight, client batches writes", "get_tools", 1, 32, 1000, true},
	{"tool_call, 8 offices x 8, client batches writes", "tool_call", 8, 8, 2000, true},
}

// benchPhase is how long each measured phase lasts (BENCH_SECONDS,
// default 3): the same time for every server, so that the slow ones do not
// take minutes and the fast ones are not measured over a fraction of a
// second.
func benchPhase() time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv("BENCH_SECONDS"), 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Second))
	}
	return 3 * time.Second
}

// benchServer is one server under test: how to start it on a port.
type benchServer struct {
	name string
	cmd  func(port int, key string) []string
}

// benchResult is what the load generator prints for one measured phase,
// plus the server CPU the harness sampled around it.
type benchResult struct {
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	RPS        float64 `json:"rps"`
	Errors     int     `json:"errors"`
	Requests   int     `json:"requests"`
	Secs       float64 `json:"secs"`
	LoadgenCPU float64 `json:"cpu_s"` // the load generator's CPU seconds
	CPU10k     float64 `json:"-"`     // server CPU seconds per 10,000 requests
	ServerBusy float64 `json:"-"`     // server CPU seconds per second of the phase
}

// loadgenBusy is the load generator's CPU seconds per second of the phase.
// Near 1 (its whole pinned core), the load generator set the pace, and
// the throughputs it measured say how fast it is, not how fast the server.
func (r benchResult) loadgenBusy() float64 { return r.LoadgenCPU / r.Secs }

// BenchCompare measures smcp-server against the bare socket.io 4.8 relay
// (Node, no protocol logic) and the Python reference SDK's server, driven by
// the same Node load generator with the same payloads, in interleaved rounds
// (BENCH_ROUNDS, default 6), each server pinned to CPU 0 and the load
// generator to CPU 1 where taskset exists, each measured phase lasting
// BENCH_SECONDS (default 3). It prints, per scenario, the medians over
// rounds of p50/p99 latency, requests/s, server CPU per 10k requests, the
// share of its core each of the server and the load generator used, the
// spread of requests/s, the ratios to the references, and the idle memory
// per joined connection (1,000 idle Computers). The loaded scenarios run
// twice: with the load generator writing every packet as the client library
// does, and with its writes batched per event-loop turn, so that it is not
// what sets the pace (benchScenarios). BENCH_SMCP_BIN
// names another smcp-server binary to measure. Not part of the
// test command: its figures belong in the README's performance section.
func BenchCompare() error {
	if err := run("npm", "ci", "--no-audit", "--no-fund", "--prefix", benchDir); err != nil {
		return fmt.Errorf("installing the bench peers: %w", err)
	}
	python := filepath.Join(".cache", "venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		if err := Setup(); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "smcp-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// BENCH_SMCP_BIN measures another build of smcp-server (an older
	// commit, say) in place of the working tree's.
	bin := os.Getenv("BENCH_SMCP_BIN")
	if bin == "" {
		bin = filepath.Join(tmp, "smcp-server")
		if err := runIn("server", "go", "build", "-o", bin, "./cmd/smcp-server"); err != nil {
			return err
		}
	}
	servers := []benchServer{
		{"smcp-go", func(port int, key string) []string {
			return []string{bin, "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--api-keys", key}
		}},
		{"node relay", func(port int, _ string) []string {
			return []string{"node", filepath.Join(benchDir, "relay.js"), strconv.Itoa(port)}
		}},
		{"python sdk", func(port int, key string) []string {
			return []string{python, filepath.Join(benchDir, "py_server.py"), strconv.Itoa(port), key}
		}},
	}
	rounds := 6
	if v, err := strconv.Atoi(os.Getenv("BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	results := map[string]map[string][]benchResult{} // scenario → server → rounds
	idleKB := map[string][]float64{}
	for r := 0; r < rounds; r++ {
		order := slices.Clone(servers)
		for i := 0; i < r%len(order); i++ { // rotate, so no server always goes first
			order = append(order[1:], order[0])
		}
		for _, s := range order {
			fmt.Printf("round %d/%d: %s\n", r+1, rounds, s.name)
			kb, res, err := benchOneServer(s, tmp)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			idleKB[s.name] = append(idleKB[s.name], kb)
			for sc, v := range res {
				if results[sc] == nil {
					results[sc] = map[string][]benchResult{}
				}
				results[sc][s.name] = append(results[sc][s.name], v)
			}
		}
	}
	printBenchTable(servers, results, idleKB, rounds)
	return nil
}

// benchOneServer starts one server, measures its idle memory per joined
// connection and then every scenario, and stops it.
func benchOneServer(s benchServer, tmp string) (float64, map[string]benchResult, error) {
	port, err := freePort()
	if err != nil {
		return 0, nil, err
	}
	const key = "bench-key"
	argv := pinned(0, s.cmd(port, key))
	srv := exec.Command(argv[0], argv[1:]...)
	var srvLog bytes.Buffer
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	if err := srv.Start(); err != nil {
		return 0, nil, err
	}
	defer func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	}()
	if err := waitListening(port, 15*time.Second); err != nil {
		return 0, nil, fmt.Errorf("%w\n%s", err, srvLog.String())
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	pid := srv.Process.Pid

	// Idle memory: RSS growth with 1,000 joined idle Computers.
	const idle = 1000
	before, err := rssKB(pid)
	if err != nil {
		return 0, nil, err
	}
	lg, out, err := startLoadgen(url, key, []string{"IDLE=" + strconv.Itoa(idle)})
	if err != nil {
		return 0, nil, err
	}
	if err := expectLine(out, "ready", 120*time.Second); err != nil {
		lg.stop()
		return 0, nil, fmt.Errorf("idle clients: %w\n%s", err, srvLog.String())
	}
	time.Sleep(2 * time.Second)
	after, err := rssKB(pid)
	lg.stop()
	if err != nil {
		return 0, nil, err
	}
	kbPerConn := float64(after-before) / idle
	time.Sleep(time.Second) // let the server see the idle clients go

	res := map[string]benchResult{}
	for _, sc := range benchScenarios {
		r, err := benchScenarioRun(url, key, pid, sc)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %w\n%s", sc.name, err, lastLines(srvLog.String(), 20))
		}
		res[sc.name] = r
	}
	return kbPerConn, res, nil
}

func benchScenarioRun(url, key string, pid int, sc benchScenario) (benchResult, error) {
	batch := "0"
	if sc.batch {
		batch = "1"
	}
	lg, out, err := startLoadgen(url, key, []string{
		"SCENARIO=" + sc.event,
		"OFFICES=" + strconv.Itoa(sc.offices),
		"INFLIGHT=" + strconv.Itoa(sc.inflight),
		"DURATION_MS=" + strconv.FormatInt(benchPhase().Milliseconds(), 10),
		"WARMUP=" + strconv.Itoa(sc.warmup),
		"BATCH_WRITES=" + batch,
	})
	if err != nil {
		return benchResult{}, err
	}
	defer lg.stop()
	if err := expectLine(out, "ready", 120*time.Second); err != nil {
		return benchResult{}, err
	}
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return benchResult{}, err
	}
	if _, err := io.WriteString(lg.stdin, "go\n"); err != nil {
		return benchResult{}, err
	}
	line, err := nextLine(out, 300*time.Second)
	if err != nil {
		return benchResult{}, err
	}
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return benchResult{}, err
	}
	var r benchResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return benchResult{}, fmt.Errorf("load generator said %q: %w", line, err)
	}
	if r.Errors > 0 {
		return benchResult{}, fmt.Errorf("%d requests failed", r.Errors)
	}
	if r.Requests == 0 || r.Secs <= 0 {
		return benchResult{}, fmt.Errorf("load generator said %q: no request was measured", line)
	}
	r.CPU10k = (cpu1 - cpu0) / float64(r.Requests) * 10000
	r.ServerBusy = (cpu1 - cpu0) / r.Secs
	return r, nil
}

// loadgen is a running load generator.
type loadgen struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func (l *loadgen) stop() {
	_ = l.stdin.Close()
	done := make(chan struct{})
	go func() { _ = l.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = l.cmd.Process.Kill()
		<-done
	}
}

func startLoadgen(url, key string, env []string) (*loadgen, <-chan string, error) {
	argv := pinned(1, []string{"node", filepath.Join(benchDir, "loadgen.js")})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), append(env, "URL="+url, "API_KEY="+key)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return &loadgen{cmd: cmd, stdin: stdin}, lines, nil
}

func expectLine(lines <-chan string, want string, d time.Duration) error {
	got, err := nextLine(lines, d)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("load generator said %q, want %q", got, want)
	}
	return nil
}

func nextLine(lines <-chan string, d time.Duration) (string, error) {
	select {
	case l, ok := <-lines:
		if !ok {
			return "", fmt.Errorf("load generator exited")
		}
		return l, nil
	case <-time.After(d):
		return "", fmt.Errorf("no answer from the load generator in %s", d)
	}
}

// pinned prefixes argv with taskset to run it on one CPU, when taskset
// exists and the machine has more than one CPU.
func pinned(cpu int, argv []string) []string {
	if _, err := exec.LookPath("taskset"); err != nil {
		return argv
	}
	return append([]string{"taskset", "-c", strconv.Itoa(cpu)}, argv...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(port int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("nothing listening on port %d after %s", port, d)
}

// cpuSeconds is a process's user+system CPU time from /proc (Linux).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}

func rssKB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strconv.Atoi(strings.Fields(l)[1])
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printBenchTable(servers []benchServer, results map[string]map[string][]benchResult, idleKB map[string][]float64, rounds int) {
	host, _ := os.Hostname()
	fmt.Printf("\nbenchcompare: %s, %d rounds, %s, %d CPUs\n\n", time.Now().UTC().Format("2006-01-02"), rounds, host, runtimeCPUs())
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tserver\tp50 ms\tp99 ms\treq/s\treq/s min-max\tCPU s/10k\tserver busy\tloadgen busy")
	med := func(sc, srv string, f func(benchResult) float64) float64 {
		var v []float64
		for _, r := range results[sc][srv] {
			v = append(v, f(r))
		}
		return median(v)
	}
	for _, sc := range benchScenarios {
		for _, s := range servers {
			rs := results[sc.name][s.name]
			var rps []float64
			for _, r := range rs {
				rps = append(rps, r.RPS)
			}
			fmt.Fprintf(w, "%s\t%s\t%.2f\t%.2f\t%.0f\t%.0f-%.0f\t%.2f\t%.0f %%\t%.0f %%\n", sc.name, s.name,
				med(sc.name, s.name, func(r benchResult) float64 { return r.P50 }),
				med(sc.name, s.name, func(r benchResult) float64 { return r.P99 }),
				median(rps), slices.Min(rps), slices.Max(rps),
				med(sc.name, s.name, func(r benchResult) float64 { return r.CPU10k }),
				100*med(sc.name, s.name, func(r benchResult) float64 { return r.ServerBusy }),
				100*med(sc.name, s.name, benchResult.loadgenBusy))
		}
	}
	w.Flush()
	fmt.Println("\nratios of smcp-go (medians): throughput, p50, CPU per request")
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tvs\treq/s x\tp50 x\tCPU x")
	for _, sc := range benchScenarios {
		for _, ref := range servers[1:] {
			g := func(srv string, f func(benchResult) float64) float64 { return med(sc.name, srv, f) }
			rps := func(r benchResult) float64 { return r.RPS }
			p50 := func(r benchResult) float64 { return r.P50 }
			cpu := func(r benchResult) float64 { return r.CPU10k }
			fmt.Fprintf(w, "%s\t%s\t%.2f\t%.2f\t%.2f\n", sc.name, ref.name,
				g("smcp-go", rps)/g(ref.name, rps), g("smcp-go", p50)/g(ref.name, p50), g("smcp-go", cpu)/g(ref.name, cpu))
		}
	}
	w.Flush()
	fmt.Println("\nidle memory per joined connection (1,000 Computers, RSS growth, median)")
	for _, s := range servers {
		fmt.Printf("  %-12s %.1f KB\n", s.name, median(idleKB[s.name]))
	}
}

func runtimeCPUs() int { return runtime.NumCPU() }
