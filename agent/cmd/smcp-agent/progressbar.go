package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/a2c-smcp/smcp-go/agent"
)

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws a tool call's or a read's progress on one terminal
// line of w (agent.WithProgress: notify:tool_progress,
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress) and clears it when the request ends.
type progressBar struct {
	w     io.Writer
	mu    sync.Mutex
	drawn bool
}

// withProgressBar asks for the call's or read's progress when stderr is a
// terminal.
func withProgressBar(ctx context.Context, stderr io.Writer) (context.Context, func()) {
	if !isTerminal(stderr) {
		return ctx, func() {}
	}
	b := &progressBar{w: stderr}
	return agent.WithProgress(ctx, b.draw), b.clear
}

// withBytesBar draws a transfer's progress (blob get, blob put, skill)
// with the same bar when stderr is a terminal: report is called with the
// bytes moved so far and the total (≤ 0 when not known yet); done clears
// the line.
func withBytesBar(stderr io.Writer) (report func(n, total int64), done func()) {
	if !isTerminal(stderr) {
		return func(int64, int64) {}, func() {}
	}
	b := &progressBar{w: stderr}
	return func(n, total int64) { b.draw(bytesProgress(n, total)) }, b.clear
}

// bytesProgress is a transfer's progress as progressLine draws it.
func bytesProgress(n, total int64) agent.Progress {
	p := agent.Progress{Progress: float64(n), Message: "bytes"}
	if total > 0 {
		t := float64(total)
		p.Total = &t
	}
	return p
}

func (b *progressBar) draw(p agent.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprint(b.w, "\r\033[K"+progressLine(p, 30))
	b.drawn = true
}

func (b *progressBar) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}

// progressLine renders one report: a bar of width cells when the total is
// known ("[#####.....] 5/10 message"), the count otherwise.
func progressLine(p agent.Progress, width int) string {
	msg := ""
	if p.Message != "" {
		msg = " " + cell(p.Message, 60)
	}
	if p.Total == nil || *p.Total <= 0 {
		return fmt.Sprintf("%g%s", p.Progress, msg)
	}
	frac := min(max(p.Progress / *p.Total, 0), 1)
	n := int(frac * float64(width))
	return fmt.Sprintf("[%s%s] %g/%g%s", strings.Repeat("#", n), strings.Repeat(".", width-n), p.Progress, *p.Total, msg)
}
