//go:build mage

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// blobStack is one column of BenchBlobs' comparison: which Agent, Server
// and Computer move the blob.
type blobStack struct {
	name   string
	python bool // the a2c-smcp 0.4.2 Agent and Computer, else the Go ones
	pyServ bool // the a2c-smcp 0.4.2 Server, else smcp-server
}

var blobStacks = []blobStack{
	{"go agent, smcp-server, go computer", false, false},
	{"py agent, smcp-server, py computer", true, false},
	{"py agent, py server, py computer", true, true},
}

// blobRun is one measured transfer.
type blobRun struct {
	Bytes    int64   `json:"bytes"`
	Secs     float64 `json:"secs"`
	CallSecs float64 `json:"call_secs"` // download: the tool call, before the drain
	SHA256   string  `json:"sha256"`
	Error    string  `json:"error"`
	// Peak RSS (VmHWM) in KiB of each process, read after the transfer.
	agentKB, serverKB, computerKB int
	// CPU seconds (user and system) of each process until then, whatever
	// the load: the work each did, start-up included.
	agentCPU, serverCPU, computerCPU float64
	size                             int64
}

// drainMiBs is the download's throughput after the tool call: the
// client:get_blob chunks alone.
func (r blobRun) drainMiBs() float64 { return float64(r.Bytes) / (1 << 20) / (r.Secs - r.CallSecs) }

func (r blobRun) miBs() float64 { return float64(r.Bytes) / (1 << 20) / r.Secs }

func envMiB(name string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchBlobs measures a blob of BENCH_BLOB_MIB MiB (default 100) downloaded
// (Computer → Agent: a tool result's image spooled by the Computer, drained
// by the Agent with client:get_blob chunks) and uploaded (Agent → Computer:
// client:put_blob into the landing root) through a Server, each of Agent,
// Server and Computer its own process, with fresh processes per transfer:
// the Go Agent and Computer (e2e/benchblobs: package computer as
// smcp-computer runs it, with its defaults, see its runComputer) through
// smcp-server, and the a2c-smcp 0.4.2
// Agent and Computer through smcp-server and through their own Server, in
// the same run. The Python stacks download BENCH_BLOB_PY_DOWNLOAD_MIB
// (default 16): the a2c-smcp Computer reads a stdio MCP server's line with
// mcp 1.30's `(buffer + chunk).split("\n")`, quadratic in the line's length,
// and had not received a 100 MiB image's 133 MiB line after 4 minutes
// (docs/performance.md, Blobs). It prints, per stack and direction, the time from the
// Agent's request to its last byte checked, the throughput, and the peak
// RSS (VmHWM) of each process, and the load average around the run.
// BENCH_BLOB_GO_ONLY=1 runs the Go stack alone.
// Programs are built into a temporary directory, removed at the end; every
// process it starts is ended by PID; all traffic is on loopback. Not part
// of the test command (docs/performance.md, Blobs). With BENCH_BLOB_PROFILE
// set to a directory, the Go Agent and Computer write CPU profiles there
// (DIR/download, DIR/upload: agent.pprof, computer.pprof).
func BenchBlobs() error {
	python, err := filepath.Abs(filepath.Join(".cache", "venv-0.4.2", "bin", "python"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(python); err != nil {
		return fmt.Errorf("%s: %w (run `go run mage.go setup`)", python, err)
	}
	mib := envMiB("BENCH_BLOB_MIB", 100)
	pyDownMiB := envMiB("BENCH_BLOB_PY_DOWNLOAD_MIB", 16)
	tmp, err := os.MkdirTemp("", "smcp-bench-blobs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bins := map[string]string{}
	for _, b := range []struct{ dir, name, pkg string }{
		{"server", "smcp-server", "./cmd/smcp-server"},
		{"e2e", "benchblobs", "./benchblobs"},
	} {
		bins[b.name] = filepath.Join(tmp, b.name)
		if err := runIn(b.dir, "go", "build", "-o", bins[b.name], b.pkg); err != nil {
			return err
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	load0 := loadAvg()
	start := time.Now()
	results := map[string]map[string]blobRun{}
	for _, st := range blobStacks {
		if st.python && os.Getenv("BENCH_BLOB_GO_ONLY") != "" {
			continue
		}
		results[st.name] = map[string]blobRun{}
		for _, dir := range []string{"download", "upload"} {
			m := mib
			if st.python && dir == "download" {
				m = pyDownMiB
			}
			size := m << 20
			fmt.Printf("» %s: %s of %d MiB\n", st.name, dir, m)
			out, err := exec.Command(bins["benchblobs"], "sha256", strconv.FormatInt(size, 10)).Output()
			if err != nil {
				return fmt.Errorf("benchblobs sha256: %w", err)
			}
			want := strings.TrimSpace(string(out))
			r, err := benchBlobOnce(st, dir, size, bins, python, wd, tmp)
			r.size = size
			if err == nil && (r.Bytes != size || r.SHA256 != want) {
				err = fmt.Errorf("%d bytes, sha256 %s; want %d, %s", r.Bytes, r.SHA256, size, want)
			}
			if err != nil {
				// The table says which transfer failed and why: the
				// references' limits are part of the result.
				fmt.Printf("  failed: %v\n", err)
				r.Error = err.Error()
			}
			results[st.name][dir] = r
		}
	}
	host, _ := os.Hostname()
	fmt.Printf("\nbenchblobs: %s, %s, %d CPUs, %s; load average %s before, %s after\n",
		start.UTC().Format("2006-01-02 15:04 MST"), host, runtimeCPUs(), time.Since(start).Round(time.Second), load0, loadAvg())
	fmt.Println("download: secs from the tool call to the last byte checked, of which the tool call (MCP server → Computer → spool);")
	fmt.Println("MiB/s of the whole and of the drain alone (client:get_blob chunks); x go: the drain's MiB/s (upload: the whole's) over the Go stack's")
	fmt.Println()
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "direction\tstack\tMiB\tsecs\tcall secs\tMiB/s\tdrain MiB/s\tx go\tagent RSS MiB\tserver RSS MiB\tcomputer RSS MiB\tagent CPU s\tserver CPU s\tcomputer CPU s")
	for _, dir := range []string{"download", "upload"} {
		base := results[blobStacks[0].name][dir]
		for _, st := range blobStacks {
			r, ok := results[st.name][dir]
			if !ok {
				continue // BENCH_BLOB_GO_ONLY
			}
			if r.Error != "" {
				fmt.Fprintf(w, "%s\t%s\t%d\tfailed: %s\t\t\t\t\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\n", dir, st.name, r.size>>20, firstLine(r.Error),
					mibOf(r.agentKB), mibOf(r.serverKB), mibOf(r.computerKB), r.agentCPU, r.serverCPU, r.computerCPU)
				continue
			}
			call, drain, ratio := "-", "-", "-"
			if dir == "download" {
				call, drain = fmt.Sprintf("%.1f", r.CallSecs), fmt.Sprintf("%.1f", r.drainMiBs())
				if base.Error == "" {
					ratio = fmt.Sprintf("%.2f", r.drainMiBs()/base.drainMiBs())
				}
			} else if base.Error == "" {
				ratio = fmt.Sprintf("%.2f", r.miBs()/base.miBs())
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%.1f\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\n", dir, st.name, r.Bytes>>20, r.Secs, call, r.miBs(), drain, ratio,
				mibOf(r.agentKB), mibOf(r.serverKB), mibOf(r.computerKB), r.agentCPU, r.serverCPU, r.computerCPU)
		}
	}
	return w.Flush()
}

// benchBlobOnce starts a Server, a Computer and an Agent for one transfer,
// reads their peak RSS once the Agent has reported, and ends them.
func benchBlobOnce(st blobStack, dir string, size int64, bins map[string]string, python, wd, tmp string) (blobRun, error) {
	var r blobRun
	run, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(run)
	landing, home, spool := filepath.Join(run, "landing"), filepath.Join(run, "home"), filepath.Join(run, "spool")
	for _, d := range []string{landing, home, spool} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return r, err
		}
	}
	// The SDKs keep state under ~ (the Python SDK's ~/.a2c and its spool).
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"A2C_SMCP_LOG_LEVEL=warning", "PYTHONDONTWRITEBYTECODE=1"} // nothing written into the checkout
	const key, office, pc = "bench-key", "bench", "bench-pc"
	port, err := freePort()
	if err != nil {
		return r, err
	}
	pyPeers := filepath.Join(wd, pyPeerDir)
	var srv *benchProc
	if st.pyServ {
		srv, err = startBenchProc("server", append(env, "SMCP_API_KEY="+key), python, filepath.Join(pyPeers, "server.py"), fmt.Sprintf("127.0.0.1:%d", port))
	} else {
		srv, err = startBenchProc("server", env, bins["smcp-server"], "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--api-keys", key)
	}
	if err != nil {
		return r, err
	}
	defer srv.stop()
	if err := waitListening(port, 60*time.Second); err != nil {
		return r, fmt.Errorf("%w\n%s", err, srv.tail())
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)

	mcp := map[string]any{"name": "bench", "type": "stdio", "default_tool_meta": map[string]any{"auto_apply": true},
		"server_parameters": map[string]any{"command": bins["benchblobs"], "args": []string{"mcp", strconv.FormatInt(size, 10)}, "env": map[string]string{}}}
	peerEnv := append(env, "SMCP_URL="+url, "SMCP_API_KEY="+key, "SMCP_OFFICE="+office, "SMCP_COMPUTER="+pc,
		"BENCH_SIZE="+strconv.FormatInt(size, 10), "SMCP_TIMEOUT=600")
	var comp, ag *benchProc
	if st.python {
		mcp["server_parameters"].(map[string]any)["cwd"] = nil
		mcp["server_parameters"].(map[string]any)["encoding"] = "utf-8"
		mcp["server_parameters"].(map[string]any)["encoding_error_handler"] = "strict"
		settings := filepath.Join(run, "settings.json")
		if err := writeJSON(settings, map[string]any{"landingRoot": landing}); err != nil {
			return r, err
		}
		peer := filepath.Join(run, "peer.json")
		if err := writeJSON(peer, map[string]any{"servers": []any{mcp}, "settings": settings}); err != nil {
			return r, err
		}
		comp, err = startBenchProc("computer", peerEnv, python, filepath.Join(pyPeers, "computer.py"), peer)
		if err != nil {
			return r, err
		}
		defer comp.stop()
		line, err := comp.next(3 * time.Minute)
		if err != nil || !strings.HasPrefix(line, `{"ready": true`) {
			return r, fmt.Errorf("python computer: %q %v\n%s", line, err, comp.tail())
		}
		ag, err = startBenchProc("agent", peerEnv, python, filepath.Join(wd, "e2e", "benchblobs", "agent.py"), dir)
	} else {
		cfg := filepath.Join(run, "computer.json")
		if err := writeJSON(cfg, []any{mcp}); err != nil {
			return r, err
		}
		if prof := os.Getenv("BENCH_BLOB_PROFILE"); prof != "" {
			// CPU profiles of the Go Agent and Computer (benchblobs'
			// startCPUProfile), for `go tool pprof`.
			d, err := filepath.Abs(filepath.Join(prof, dir))
			if err == nil {
				err = os.MkdirAll(d, 0o755)
			}
			if err != nil {
				return r, err
			}
			peerEnv = append(peerEnv, "BENCH_CPUPROFILE_DIR="+d)
		}
		comp, err = startBenchProc("computer", peerEnv, bins["benchblobs"], "computer", cfg, landing, spool)
		if err != nil {
			return r, err
		}
		defer comp.stop()
		ag, err = startBenchProc("agent", peerEnv, bins["benchblobs"], "agent", dir)
	}
	if err != nil {
		return r, err
	}
	defer ag.stop()
	line, err := ag.next(20 * time.Minute)
	r.agentKB, r.serverKB, r.computerKB = hwmKB(ag.pid()), hwmKB(srv.pid()), hwmKB(comp.pid())
	r.agentCPU, r.serverCPU, r.computerCPU = cpuSecs(ag.pid()), cpuSecs(srv.pid()), cpuSecs(comp.pid())
	if err != nil {
		return r, fmt.Errorf("agent: %v\nagent: %s\ncomputer: %s\nserver: %s", err, ag.tail(), comp.tail(), srv.tail())
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return r, fmt.Errorf("agent said %q: %w", line, err)
	}
	if r.Error == "" && r.Secs <= 0 {
		r.Error = "no time measured"
	}
	if r.Error != "" {
		return r, fmt.Errorf("agent: %s\nagent: %s\ncomputer: %s\nserver: %s", r.Error, ag.tail(), comp.tail(), srv.tail())
	}
	return r, nil
}

// benchProc is a process BenchBlobs started and ends: its standard output
// read line by line, its standard error kept (the last lines) for errors.
type benchProc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	log   *syncBuffer
	done  chan struct{}
}

func startBenchProc(name string, env []string, path string, args ...string) (*benchProc, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &benchProc{name: name, cmd: cmd, lines: make(chan string, 16), log: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.log
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *benchProc) pid() int { return p.cmd.Process.Pid }

func (p *benchProc) next(d time.Duration) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			<-p.done
			return "", fmt.Errorf("%s exited: %v", p.name, p.cmd.ProcessState)
		}
		return l, nil
	case <-time.After(d):
		return "", fmt.Errorf("no answer from the %s in %s", p.name, d)
	}
}

// stop closes the process's standard input and interrupts it, and kills
// it if it has not exited 15 s later.
func (p *benchProc) stop() {
	_ = p.stdin.Close()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *benchProc) tail() string { return lastLines(p.log.String(), 15) }

// syncBuffer is a bytes.Buffer written by exec's copying goroutine and
// read by the harness, keeping the last 64 KiB.
type syncBuffer struct {
	mu  chanMutex
	buf bytes.Buffer
}

type chanMutex chan struct{}

func (b *syncBuffer) lock() {
	if b.mu == nil {
		b.mu = make(chanMutex, 1)
	}
	b.mu <- struct{}{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.lock()
	defer func() { <-b.mu }()
	b.buf.Write(p)
	if b.buf.Len() > 64<<10 {
		b.buf.Next(b.buf.Len() - 64<<10)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.lock()
	defer func() { <-b.mu }()
	return b.buf.String()
}

// hwmKB is a process's peak resident set size (VmHWM) from /proc, 0 when
// it has exited.
func hwmKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}

// cpuSecs is a process's user and system CPU time from /proc/PID/stat
// (in clock ticks of 1/100 s, Linux's USER_HZ), 0 when it has exited.
func cpuSecs(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name in parentheses, which may hold
	// spaces: state is the first, utime and stime the 12th and 13th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

func mibOf(kb int) string {
	if kb == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(kb)/1024)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 100 {
		l = l[:100] + "…"
	}
	return l
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
