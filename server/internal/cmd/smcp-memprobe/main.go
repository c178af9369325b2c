// Command smcp-memprobe measures the memory of a real smcp-server process
// (magefile.go, target Memory): it starts the binary given by -server with
// a loopback debug listener, then runs one scenario with raw websocket
// clients and prints the server's RSS (from /proc), its live heap after a
// collection and its goroutine count (from the debug listener), with where
// the RSS is: the runtime's memory classes (stats.go) and the resident size
// of the process's mappings by kind (mappings.go):
//
//	idle     -clients joined, idle clients (1 Agent and 9 Computers per
//	         office); the figures are per connection, and a heap profile is
//	         written to -profile (profiling then adds to the figures).
//	churn    -cycles connections opened and closed (churn.go): RSS at the
//	         start, after the churn, after a collection and after -settle,
//	         the sessions the server still holds at the end, and which
//	         parts of the binary's read-only data are resident at each step
//	         (pages.go; -pages writes the page lists); with -rounds above 1,
//	         whether the settled figure grows with the cycles.
//	binary   connections without a key send a binary packet header and
//	         nine 8 MB binary frames each.
//	slow     a Computer that stops reading; its Agent sends 300 tool calls
//	         of 1 MB to it.
//	bignames 20 Computers join with 3 MB names and office ids.
//
// For the attacks the figure is the peak RSS (VmHWM) of the server process.
// Linux only (/proc).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const key = "memprobe-key"

// pagesPrefix is the -pages flag.
var pagesPrefix string

// stall is the servers' --stall-timeout in the attacks: the slow reader is
// closed by the server this long after it went over its outgoing limit.
const stall = 5 * time.Second

func main() {
	bin := flag.String("server", "", "path of the smcp-server binary")
	scenario := flag.String("scenario", "idle", "idle, churn, binary, slow or bignames")
	clients := flag.Int("clients", 1000, "idle clients")
	officeSize := flag.Int("office-size", 10, "idle: clients per office, the first an Agent (1: each a Computer in its own office, as benchcompare's idle phase)")
	cycles := flag.Int("cycles", 30000, "churn: open/close cycles")
	warmup := flag.Int("warmup", 300, "churn: warm-up cycles before the measured ones")
	rounds := flag.Int("rounds", 1, "churn: how many times to run the -cycles")
	concurrency := flag.Int("concurrency", 8, "churn: connections open at a time")
	settle := flag.Duration("settle", 30*time.Second, "churn: how long to wait with no connection before the last figure")
	profile := flag.String("profile", "", "write the server's heap profile here (idle; churn: with suffixes .first and .churned)")
	flag.StringVar(&pagesPrefix, "pages", "", "churn: write the addresses of the binary's resident read-only pages at each step to files with this prefix")
	flag.Parse()
	if err := run(*bin, *scenario, *clients, *officeSize, *cycles, *warmup, *rounds, *concurrency, *settle, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "smcp-memprobe:", err)
		os.Exit(1)
	}
}

type server struct {
	cmd   *exec.Cmd
	addr  string
	debug string
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs bin with a debug listener. The listener turns the runtime's
// heap profiling on, which a deployment without it does not pay for (its
// records grow with the allocation sites a run meets): unless profile is
// set, the server runs with GODEBUG=memprofilerate=0 so that the figures
// are a deployment's; with profile, with a fine sampling rate (one sample
// per 4 KB) so that the profile names the holders precisely.
func start(bin string, profile bool, args ...string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	debug, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"--listen", addr, "--debug-listen", debug, "--log-level", "error"}, args...)...)
	rate := "memprofilerate=0"
	if profile {
		rate = "memprofilerate=4096"
	}
	if g := os.Getenv("GODEBUG"); g != "" {
		rate = g + "," + rate
	}
	cmd.Env = append(os.Environ(), "SMCP_API_KEYS="+key, "GODEBUG="+rate)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, addr: addr, debug: debug}
	for range 100 {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if _, err := s.heap(); err == nil {
				return s, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return nil, errors.New("smcp-server did not come up")
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// procFields reads the "Name: N" and "Name: N kB" lines of a /proc/<pid>
// file (status, smaps_rollup): sizes in bytes, counts as they are.
func procFields(pid int, file string) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		kb, isKB := strings.CutSuffix(rest, " kB")
		n, err := strconv.ParseInt(kb, 10, 64)
		if err != nil {
			continue
		}
		if isKB {
			n <<= 10
		}
		out[name] = n
	}
	return out, sc.Err()
}

// status reads one field of /proc/<pid>/status ("VmRSS" in bytes,
// "Threads" a count).
func (s *server) status(field string) (int64, error) {
	fields, err := procFields(s.cmd.Process.Pid, "status")
	if err != nil {
		return 0, err
	}
	n, ok := fields[field]
	if !ok {
		return 0, fmt.Errorf("no %s in /proc status", field)
	}
	return n, nil
}

// heap returns the live heap after a collection (the heap profile with gc=1
// runs one and lists runtime.MemStats).
func (s *server) heap() (int64, error) {
	body, err := s.get("/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			return strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	return 0, errors.New("no HeapAlloc in the heap profile")
}

func (s *server) get(path string) (string, error) {
	resp, err := http.Get("http://" + s.debug + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

type sample struct {
	rss, heap  int64
	goroutines int
}

func (s *server) sample() (sample, error) {
	var out sample
	var err error
	if out.heap, err = s.heap(); err != nil {
		return out, err
	}
	if out.rss, err = s.status("VmRSS"); err != nil {
		return out, err
	}
	b, err := s.breakdown() // the goroutine count, without a goroutine profile's allocations
	out.goroutines = b.goroutine
	return out, err
}

// client is a raw Engine.IO/Socket.IO websocket client.
type client struct {
	ws  *websocket.Conn
	ack int
}

func dial(addr string, withKey bool, readBuf int) (*client, error) {
	d := *websocket.DefaultDialer
	d.HandshakeTimeout = 30 * time.Second
	if readBuf > 0 {
		d.NetDialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, a)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(readBuf)
			}
			return c, err
		}
	}
	h := http.Header{}
	if withKey {
		h.Set("X-Api-Key", key)
	}
	ws, resp, err := d.Dial("ws://"+addr+"/socket.io/?EIO=4&transport=websocket", h)
	if err != nil {
		return nil, err
	}
	_ = resp.Body.Close()
	c := &client{ws: ws}
	if m, err := c.read(); err != nil || !strings.HasPrefix(m, "0{") {
		_ = ws.Close()
		return nil, fmt.Errorf("engine open: %q %v", m, err)
	}
	if !withKey {
		return c, nil
	}
	if err := c.send("40/smcp,"); err != nil {
		return nil, err
	}
	if m, err := c.read(); err != nil || !strings.HasPrefix(m, "40/smcp,{\"sid\"") {
		_ = ws.Close()
		return nil, fmt.Errorf("namespace connect: %q %v", m, err)
	}
	return c, nil
}

func (c *client) send(s string) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, []byte(s))
}

// read returns the next message, answering pings.
func (c *client) read() (string, error) {
	for {
		_ = c.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			return "", err
		}
		if string(b) == "2" {
			if err := c.send("3"); err != nil {
				return "", err
			}
			continue
		}
		return string(b), nil
	}
}

// emit sends an event with an ack id and returns the id.
func (c *client) emit(ev string, payload any) (int, error) {
	b, err := json.Marshal([]any{ev, payload})
	if err != nil {
		return 0, err
	}
	c.ack++
	return c.ack, c.send(fmt.Sprintf("42/smcp,%d%s", c.ack, b))
}

// call emits and waits for the ack, skipping other messages.
func (c *client) call(ev string, payload any) (string, error) {
	id, err := c.emit(ev, payload)
	if err != nil {
		return "", err
	}
	want := fmt.Sprintf("43/smcp,%d", id)
	for {
		m, err := c.read()
		if err != nil {
			return "", err
		}
		if rest, ok := strings.CutPrefix(m, want); ok {
			return rest, nil
		}
	}
}

func (c *client) join(role, name, office string) error {
	got, err := c.call("server:join_office", map[string]any{"role": role, "name": name, "office_id": office})
	if err != nil {
		return err
	}
	if got != "[true,null]" {
		return fmt.Errorf("join %s: %.200s", name, got)
	}
	return nil
}

// idle keeps reading (answering pings) until the connection closes.
func (c *client) idle() {
	for {
		_ = c.ws.SetReadDeadline(time.Time{})
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		if string(b) == "2" {
			_ = c.send("3")
		}
	}
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

func run(bin, scenario string, n, officeSize, cycles, warmup, rounds, concurrency int, settle time.Duration, profile string) error {
	if bin == "" {
		return errors.New("-server is required")
	}
	switch scenario {
	case "idle":
		return idle(bin, n, officeSize, profile)
	case "churn":
		return churn(bin, cycles, warmup, rounds, concurrency, settle, profile)
	case "binary", "slow", "bignames":
		return attack(bin, scenario)
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

func idle(bin string, n, officeSize int, profile string) error {
	s, err := start(bin, profile != "", "--max-office-size", "16")
	if err != nil {
		return err
	}
	defer s.stop()
	base, err := s.sample()
	if err != nil {
		return err
	}
	baseB, err := s.breakdown()
	if err != nil {
		return err
	}
	var conns []*client
	defer func() {
		for _, c := range conns {
			_ = c.ws.Close()
		}
	}()
	for i := range n {
		c, err := dial(s.addr, true, 0)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		role, name := "computer", fmt.Sprintf("c%d", i)
		if officeSize > 1 && i%officeSize == 0 {
			role, name = "agent", fmt.Sprintf("a%d", i)
		}
		if err := c.join(role, name, fmt.Sprintf("office-%d", i/officeSize)); err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		conns = append(conns, c)
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.idle)
	}
	time.Sleep(5 * time.Second) // let the joins' notifications drain
	got, err := s.sample()
	if err != nil {
		return err
	}
	gotB, err := s.breakdown()
	if err != nil {
		return err
	}
	per := func(a, b int64) float64 { return float64(a-b) / float64(n) / 1024 }
	if officeSize > 1 {
		fmt.Printf("idle: %d joined idle websocket clients (offices of 1 Agent + %d Computers)\n", n, officeSize-1)
	} else {
		fmt.Printf("idle: %d joined idle websocket clients (Computers, each in its own office)\n", n)
	}
	fmt.Printf("  RSS        %s -> %s: %.1f KB per connection\n", mb(base.rss), mb(got.rss), per(got.rss, base.rss))
	fmt.Printf("  live heap  %s -> %s: %.1f KB per connection\n", mb(base.heap), mb(got.heap), per(got.heap, base.heap))
	fmt.Printf("  goroutines %d -> %d: %.1f per connection\n", base.goroutines, got.goroutines, float64(got.goroutines-base.goroutines)/float64(n))
	printTable(os.Stdout, []string{"before", "idle"}, []breakdown{baseB, gotB}, n)
	printMappings(os.Stdout, []string{"before", "idle"}, []breakdown{baseB, gotB}, 0)
	if profile != "" {
		body, err := s.get("/debug/pprof/heap?gc=1")
		if err != nil {
			return err
		}
		if err := os.WriteFile(profile, []byte(body), 0o644); err != nil {
			return err
		}
		fmt.Printf("  heap profile: %s (go tool pprof -top -sample_index=inuse_space %s)\n", profile, profile)
		g, err := s.get("/debug/pprof/goroutine?debug=1")
		if err != nil {
			return err
		}
		if err := os.WriteFile(profile+".goroutines.txt", []byte(g), 0o644); err != nil {
			return err
		}
		fmt.Printf("  goroutines by stack: %s.goroutines.txt\n", profile)
	}
	for _, c := range conns {
		_ = c.ws.Close()
	}
	conns = nil
	wg.Wait()
	// What the peak leaves once every client is gone: tables sized for
	// the peak (a Go map never shrinks), and the runtime's high-water marks.
	var gone sample
	for range 50 { // the server ends the closed connections' goroutines asynchronously
		time.Sleep(200 * time.Millisecond)
		if gone, err = s.sample(); err != nil || gone.goroutines <= base.goroutines {
			break
		}
	}
	if err != nil {
		return err
	}
	left, err := s.sessions()
	if err != nil {
		return err
	}
	fmt.Printf("  all closed, after GC: RSS %s, live heap %s (%+.0f KB of the figure before), goroutines %d, sessions left %d\n",
		mb(gone.rss), mb(gone.heap), float64(gone.heap-base.heap)/1024, gone.goroutines, left)
	return nil
}

func attack(bin, scenario string) error {
	s, err := start(bin, false, "--stall-timeout", stall.String())
	if err != nil {
		return err
	}
	defer s.stop()
	base, err := s.sample()
	if err != nil {
		return err
	}
	began := time.Now()
	var what string
	switch scenario {
	case "binary":
		what = "5 connections without a key, each a binary header then nine 8 MB binary frames"
		err = binaryAttack(s)
	case "slow":
		what = "a Computer that stops reading, 300 tool calls of 1 MB to it"
		err = slowAttack(s)
	case "bignames":
		what = "20 Computers joining with 3 MB names and office ids"
		err = bigNames(s)
	}
	if err != nil {
		return err
	}
	peak, err := s.status("VmHWM")
	if err != nil {
		return err
	}
	after, err := s.sample()
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s (%s)\n", scenario, what, time.Since(began).Round(time.Millisecond))
	fmt.Printf("  RSS %s before, peak %s, %s after (live heap %s -> %s, goroutines %d -> %d)\n",
		mb(base.rss), mb(peak), mb(after.rss), mb(base.heap), mb(after.heap), base.goroutines, after.goroutines)
	return nil
}

func binaryAttack(s *server) error {
	frame := make([]byte, 8<<20)
	var wg sync.WaitGroup
	var refusedEarly int
	var mu sync.Mutex
	for range 5 {
		c, err := dial(s.addr, false, 0)
		if err != nil {
			return err
		}
		wg.Go(func() {
			defer c.ws.Close()
			_ = c.send(`451-/smcp,["x",{"_placeholder":true,"num":0}]`)
			for i := range 9 {
				if c.ws.WriteMessage(websocket.BinaryMessage, frame) != nil {
					mu.Lock()
					refusedEarly += 9 - i
					mu.Unlock()
					return
				}
			}
			time.Sleep(2 * time.Second)
		})
	}
	wg.Wait()
	fmt.Printf("  %d of 45 binary frames could not be written: the server had closed\n", refusedEarly)
	return nil
}

func slowAttack(s *server) error {
	computer, err := dial(s.addr, true, 4096)
	if err != nil {
		return err
	}
	defer computer.ws.Close()
	if err := computer.join("computer", "slow", "o1"); err != nil {
		return err
	}
	agent, err := dial(s.addr, true, 0)
	if err != nil {
		return err
	}
	defer agent.ws.Close()
	if err := agent.join("agent", "a1", "o1"); err != nil {
		return err
	}
	// The Computer reads nothing from here on. The Agent sends 300 calls
	// and counts the answers it gets (refusals) while it reads on.
	pad := strings.Repeat("p", 1<<20)
	codes := map[string]int{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := agent.read()
			if err != nil {
				return
			}
			if strings.HasPrefix(m, "43/smcp,") {
				code := "answer"
				if i := strings.Index(m, `"code":`); i >= 0 {
					code = m[i+7 : min(len(m), i+10)]
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}
	}()
	for i := range 300 {
		if _, err := agent.emit("client:tool_call", map[string]any{"agent": "a1", "req_id": fmt.Sprint("r", i), "computer": "slow", "tool_name": "t", "params": map[string]any{"pad": pad}, "timeout": 60}); err != nil {
			return err
		}
	}
	// The Computer stays connected, still not reading: the server closes it
	// after the stall timeout, which fails the calls it accepted (404).
	time.Sleep(stall + 3*time.Second)
	_ = agent.ws.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("  answers by code: %v (503: the Computer is not reading; 404: it was closed after --stall-timeout %s with these calls in flight)\n", codes, stall)
	if codes["404"] == 0 {
		return errors.New("the server did not close the Computer that stopped reading")
	}
	time.Sleep(time.Second)
	return nil
}

func bigNames(s *server) error {
	big := strings.Repeat("x", 3<<20)
	refused := 0
	var conns []*client
	for i := range 20 {
		c, err := dial(s.addr, true, 0)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if err := c.join("computer", big+strconv.Itoa(i), big); err != nil && strings.Contains(err.Error(), "400 BadRequest") {
			refused++
		}
	}
	for _, c := range conns {
		_ = c.ws.Close()
	}
	fmt.Printf("  %d of 20 joins refused with 400\n", refused)
	return nil
}
