package mcpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/blob"
)

// Limits of what a stdio child's output may cost in memory and log volume.
const (
	stderrTailLines   = 20               // stderr lines kept for the WARN reporting a loss
	logLineMax        = 512              // bytes of one stderr or garbage line kept or logged
	stderrLogBudget   = 20               // stderr lines logged at Info per window
	logWindow         = 10 * time.Second // window of stderrLogBudget and of the garbage count
	exitNoticeTimeout = 250 * time.Millisecond
	gracefulStop      = 2 * time.Second // after stdin closed, before SIGTERM (as mcp-go)
	termStop          = 2 * time.Second // after SIGTERM, before SIGKILL of the group
	killStop          = 3 * time.Second // after SIGKILL
	// DefaultMaxMessageBytes bounds one JSON-RPC message (one line) a stdio
	// server writes on stdout: four times the Server's default payload
	// limit (protocol.DefaultMaxPayloadBytes), so that every answer the
	// Server could carry fits with room for JSON escaping.
	DefaultMaxMessageBytes = 32 << 20
	// idPrefixBytes is how much of an oversized message is searched for
	// its JSON-RPC id.
	idPrefixBytes = 64 << 10
)

// ProcessError is why a stdio server's connection failed or was lost, with
// what its process left: how it ended (Status is empty while it still runs)
// and the last lines it wrote on stderr, oldest first.
type ProcessError struct {
	Err    error
	Status string   // e.g. "exit status 3", "signal: killed"
	Stderr []string // at most the last 20 lines, each at most 512 bytes
}

func (e *ProcessError) Error() string {
	if e.Status == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + " (process " + e.Status + ")"
}

func (e *ProcessError) Unwrap() error { return e.Err }

// child is a stdio MCP server process owned by one Conn. We spawn it
// ourselves rather than letting mcp-go do it, for three reasons: the spawn
// must happen on a locked OS thread for the parent-death signal (see
// spawn), mcp-go drops every stdout line that is not JSON without a word
// (we filter stdout first and report such lines), and its exit status and
// stderr must be at hand when the connection is lost. mcp-go gets the
// filtered stdout and the stdin pipe through transport.NewIO.
type child struct {
	name string
	log  *slog.Logger
	cmd  *exec.Cmd

	stdin  *os.File       // our end of the child's stdin
	stdout *os.File       // our end of the child's stdout
	out    *io.PipeReader // stdout as mcp-go reads it: JSON lines only
	outW   *io.PipeWriter
	stderr *os.File // our end of the child's stderr

	exited  chan struct{} // closed once the child has been reaped
	waitErr error         // set before exited is closed

	maxMessage int          // bytes of one stdout line; a longer one is refused
	lift       *lifter      // with a spool: tool results' binary items go there
	read       atomic.Int64 // bytes read from stdout

	mu       sync.Mutex
	tail     []string // last stderr lines, oldest first
	garbage  int      // non-JSON stdout lines seen
	oversize int      // stdout lines over maxMessage refused

	wg sync.WaitGroup // filter and stderr readers
}

// startChild spawns cmd (whose Stdin, Stdout and Stderr must be unset) and
// starts reading its output. maxMessage bounds one stdout line (≤ 0:
// DefaultMaxMessageBytes), apart from the binary items of tool results
// lifted into spool when there is one (lifter).
func startChild(cmd *exec.Cmd, name string, log *slog.Logger, maxMessage int, spool *blob.Spool) (*child, error) {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessageBytes
	}
	ch := &child{name: name, log: log, cmd: cmd, exited: make(chan struct{}), maxMessage: maxMessage}
	if spool != nil {
		ch.lift = newLifter(spool, maxMessage)
	}
	var toClose []*os.File // the child's ends, closed once it has them
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	toClose = append(toClose, inR, outW, errW)
	ownGroup(cmd)
	if err := spawn(cmd, ch.reaped); err != nil {
		closeAll(append(toClose, inW, outR, errR)...)
		return nil, err
	}
	closeAll(toClose...)
	ch.stdin, ch.stdout, ch.stderr = inW, outR, errR
	ch.out, ch.outW = io.Pipe()
	ch.wg.Add(2)
	go ch.filterStdout()
	go ch.readStderr()
	return ch, nil
}

// spawn starts cmd from a goroutine locked to its OS thread and reaps it
// from there, then calls reaped with cmd.Wait's result. On Linux the
// child's parent-death signal (SysProcAttr.Pdeathsig, see ownGroup) fires
// when the thread that forked it exits, not the process: the Go runtime
// ends a thread only when a goroutine exits while locked to it, so keeping
// the forking goroutine locked and alive until the child is reaped keeps
// the signal tied to the Computer's own death. The goroutine exits locked
// after reaping, which retires the thread.
func spawn(cmd *exec.Cmd, reaped func(error)) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			runtime.UnlockOSThread()
			started <- err
			return
		}
		started <- nil
		reaped(cmd.Wait())
	}()
	return <-started
}

func (ch *child) reaped(err error) {
	ch.waitErr = err
	close(ch.exited)
}

// pid is the child's process id.
func (ch *child) pid() int { return ch.cmd.Process.Pid }

// status describes how the child ended, "" while it runs.
func (ch *child) status() string {
	select {
	case <-ch.exited:
	default:
		return ""
	}
	if ch.waitErr == nil {
		return "exit status 0"
	}
	var xe *exec.ExitError
	if errors.As(ch.waitErr, &xe) {
		return xe.ProcessState.String()
	}
	return ch.waitErr.Error()
}

// stderrTail returns the last stderr lines, oldest first.
func (ch *child) stderrTail() []string {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return append([]string(nil), ch.tail...)
}

// explain wraps err with the child's exit status (waiting briefly for the
// exit when the child is about to end: its stdout closes a moment before it
// is reaped) and its last stderr lines.
func (ch *child) explain(err error) *ProcessError {
	t := time.NewTimer(exitNoticeTimeout)
	defer t.Stop()
	select {
	case <-ch.exited:
		ch.waitReaders(exitNoticeTimeout) // the last lines it wrote
	case <-t.C:
	}
	return &ProcessError{Err: err, Status: ch.status(), Stderr: ch.stderrTail()}
}

// waitReaders waits at most d for the stdout and stderr readers to reach
// the end of their pipes (a grandchild may hold them open).
func (ch *child) waitReaders(d time.Duration) {
	done := make(chan struct{})
	go func() { ch.wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

func truncate(s string) string {
	if len(s) <= logLineMax {
		return s
	}
	return strings.ToValidUTF8(s[:logLineMax], "") + "…"
}

// filterStdout copies the child's stdout to mcp-go one line at a time and
// drops the lines that are not a JSON object (a JSON-RPC message): mcp-go
// would drop them too, silently.
// The first one is logged verbatim (truncated to 512 bytes) at Warn, later
// ones as a count at most once per 10 s, and the total when stdout ends.
// Blank lines are dropped without a word.
//
// A line longer than maxMessage is never held in memory: it is read and
// dropped, logged at Warn, and when its JSON-RPC id is found in its first
// 64 KiB (an answer) the request it answers gets instead a JSON-RPC error
// 413 (see oversizeAnswer), so that the caller learns at once why, rather
// than waiting for its timeout.
func (ch *child) filterStdout() {
	defer ch.wg.Done()
	r := bufio.NewReaderSize(ch.stdout, idPrefixBytes)
	var lastCount time.Time
	counted := 0 // garbage lines covered by a log line
	report := func(final bool) {
		ch.mu.Lock()
		n := ch.garbage
		ch.mu.Unlock()
		if n > counted && (final || time.Since(lastCount) >= logWindow) {
			ch.log.Warn("mcp server wrote non-JSON lines on stdout (dropped)", "count", n)
			counted, lastCount = n, time.Now()
		}
	}
	var err error
	var line []byte
	for {
		line, err = ch.readLine(r, line[:0])
		forwarded := false
		if len(line) > 0 {
			body := bytes.TrimSpace(line)
			switch {
			case len(body) == 0:
			case body[0] == '{' && json.Valid(body): // a JSON-RPC message is an object
				if _, werr := ch.outW.Write(line); werr != nil {
					err = werr
				} else {
					forwarded = true
				}
			default:
				ch.mu.Lock()
				ch.garbage++
				n := ch.garbage
				ch.mu.Unlock()
				if n == 1 {
					ch.log.Warn("mcp server wrote a non-JSON line on stdout (dropped)", "line", truncate(string(body)))
					counted, lastCount = 1, time.Now()
				} else {
					report(false)
				}
			}
		}
		if ch.lift != nil && !forwarded {
			ch.lift.discard() // what it staged is for nobody
		}
		if cap(line) > idPrefixBytes*4 {
			line = nil // do not keep a large answer's buffer for the next line
		}
		if err != nil {
			break
		}
	}
	report(true)
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
		err = nil // mcp-go sees io.EOF: the server is gone
	}
	_ = ch.outW.CloseWithError(err)
}

// readLine appends the next stdout line to buf. A line over maxMessage is
// consumed and refused (refuseOversize); readLine then returns the 413
// answer to write in its place, or an empty line.
func (ch *child) readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	if ch.lift != nil {
		return ch.readLifted(r, buf)
	}
	var prefix []byte // the oversized line's beginning
	total := 0
	for {
		frag, err := r.ReadSlice('\n')
		ch.read.Add(int64(len(frag)))
		total += len(frag)
		switch {
		case prefix != nil: // dropping the rest of an oversized line
		case total > ch.maxMessage:
			// Its first idPrefixBytes only, without copying the rest.
			prefix = make([]byte, 0, idPrefixBytes)
			prefix = append(prefix, buf[:min(len(buf), idPrefixBytes)]...)
			prefix = append(prefix, frag[:min(len(frag), idPrefixBytes-len(prefix))]...)
			buf = buf[:0]
		default:
			buf = append(buf, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if prefix != nil {
			return ch.refuseOversize(prefix, total), err
		}
		return buf, err
	}
}

// readLifted is readLine through the lifter: the binary items of a tool
// result go to the spool as they are read, and only the rest of the line
// is held (and bounded by maxMessage).
func (ch *child) readLifted(r *bufio.Reader, buf []byte) ([]byte, error) {
	l := ch.lift
	l.reset(buf)
	for {
		frag, err := r.ReadSlice('\n')
		ch.read.Add(int64(len(frag)))
		l.write(frag)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if line := l.end(); line != nil || l.fail == nil {
			return line, err
		}
		if l.fail.code == 413 && l.fail.msg == "" {
			return ch.refuseOversize(l.out, l.seen), err
		}
		return ch.refuseLifted(l.out, l.seen, l.fail), err
	}
}

// refuseLifted logs a tool result refused while its binary items were
// lifted and returns the answer that replaces it (nil when no id was
// found).
func (ch *child) refuseLifted(prefix []byte, size int, r *liftRefusal) []byte {
	id, _ := jsonrpcID(prefix)
	ch.log.Warn("mcp server's tool result refused (dropped)", "bytes", size, "code", r.code, "reason", r.msg, "answer_to", string(id))
	return ch.lift.refusalAnswer()
}

// refuseOversize logs a stdout line of size bytes over maxMessage and
// returns the answer that replaces it (nil when no id was found).
func (ch *child) refuseOversize(prefix []byte, size int) []byte {
	ch.mu.Lock()
	ch.oversize++
	ch.mu.Unlock()
	id, ok := jsonrpcID(prefix)
	ch.log.Warn("mcp server wrote a message over the size limit on stdout (dropped)",
		"bytes", size, "limit", ch.maxMessage, "answer_to", string(id))
	if !ok {
		return nil
	}
	return oversizeAnswer(id, size, ch.maxMessage, ch.lift != nil)
}

// oversizeAnswer is the JSON-RPC error answering request id in place of an
// answer of size bytes over limit: code 413 (spec/protocol.md, Errors), which
// the read bridge relays as it is.
func oversizeAnswer(id json.RawMessage, size, limit int, lifted bool) []byte {
	note := ""
	if lifted {
		note = liftNote
	}
	return errorAnswer(id, 413, fmt.Sprintf("the MCP server's answer (%d bytes) exceeds the Computer's limit of %d bytes per MCP message%s; "+
		"read less at once (a page, a category, an element), or raise the limit (%s)", size, limit, note, raiseMessageLimit),
		map[string]any{"limit_bytes": limit, "size_bytes": size})
}

// liftNote and raiseMessageLimit complete the messages of a refused
// answer.
const (
	liftNote          = " (binary items of tool results apart, which go to the blob spool)"
	raiseMessageLimit = "smcp-computer --max-mcp-message-bytes, computer.WithMaxMCPMessageBytes"
)

// errorAnswer is a JSON-RPC error answering request id.
func errorAnswer(id json.RawMessage, code int, msg string, data map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{ // cannot fail: plain values and a valid RawMessage
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg, "data": data},
	})
	return append(b, '\n')
}

// jsonrpcID finds the id of a JSON-RPC answer in the beginning of its
// message: the top-level "id" member when it comes before the first
// member that cannot be read whole in prefix. Only answers (with "result"
// or "error", not "method") are refused by id.
func jsonrpcID(prefix []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		switch key {
		case "method":
			return nil, false // a request or notification, not an answer
		case "result", "error":
			return id, id != nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if key == "id" {
			if len(v) == 0 || (v[0] != '"' && (v[0] < '0' || v[0] > '9') && v[0] != '-') {
				return nil, false
			}
			id = v
		}
	}
	return nil, false
}

// oversizeLines is the number of stdout lines refused for their size.
func (ch *child) oversizeLines() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.oversize
}

// garbageLines is the number of non-JSON stdout lines seen.
func (ch *child) garbageLines() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.garbage
}

// readStderr keeps the last stderr lines and logs them at Info, at most 20
// per 10 s; the lines over that budget are counted and the count is logged
// with the next line logged (or when stderr ends). A line is cut at 512
// bytes, the rest of it read and dropped, so that memory stays bounded and
// the child never blocks on a full pipe.
func (ch *child) readStderr() {
	defer ch.wg.Done()
	r := bufio.NewReaderSize(ch.stderr, 4096)
	var windowStart time.Time
	logged, suppressed := 0, 0
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line) < logLineMax+1 {
			line = append(line, frag[:min(len(frag), logLineMax+1-len(line))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the same line goes on
		}
		if len(line) > 0 {
			text := truncate(strings.TrimRight(string(line), "\r\n"))
			line = line[:0]
			ch.mu.Lock()
			if len(ch.tail) == stderrTailLines {
				copy(ch.tail, ch.tail[1:])
				ch.tail = ch.tail[:stderrTailLines-1]
			}
			ch.tail = append(ch.tail, text)
			ch.mu.Unlock()
			if time.Since(windowStart) >= logWindow {
				windowStart, logged = time.Now(), 0
			}
			switch {
			case logged >= stderrLogBudget:
				suppressed++
			case suppressed > 0:
				logged++
				ch.log.Info("mcp server stderr", "line", text, "suppressed_before", suppressed)
				suppressed = 0
			default:
				logged++
				ch.log.Info("mcp server stderr", "line", text)
			}
		}
		if err != nil {
			break
		}
	}
	if suppressed > 0 {
		ch.log.Info("mcp server stderr lines not logged (rate limit)", "count", suppressed)
	}
}

// stop ends the child the way the MCP stdio transport prescribes: close its
// stdin, wait, SIGTERM, wait, then SIGKILL its whole process group; it
// returns once the child is reaped (bounded) and its output readers ended.
func (ch *child) stop() error {
	_ = ch.stdin.Close()
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ch.exited:
			return true
		case <-t.C:
			return false
		}
	}
	var err error
	if !wait(gracefulStop) {
		terminate(ch.cmd.Process)
		if !wait(termStop) {
			killGroup(ch.pid())
			if !wait(killStop) {
				err = fmt.Errorf("mcp server %q: process %d not reaped after SIGKILL", ch.name, ch.pid())
			}
		}
	}
	// Grandchildren left in the group go too; they may hold the pipes.
	killGroup(ch.pid())
	ch.waitReaders(time.Second)
	// Unblock readers still held by a process outside the group. The pipe
	// mcp-go reads is ended from its write side: that unblocks a filter
	// still writing into it, and mcp-go's reader sees io.EOF, the end of a
	// server. Closing the read side instead made that reader fail with
	// io.ErrClosedPipe, which mcp-go logs at ERROR on every ordinary stop.
	_ = ch.stdout.Close()
	_ = ch.stderr.Close()
	_ = ch.outW.Close()
	ch.wg.Wait()
	return err
}
