package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

// breakdown is where a server's resident memory is at one moment: the
// kernel's split of the RSS into anonymous and file-backed pages, and the Go
// runtime's account of what it has mapped (runtime/metrics, published by
// smcp-server's debug listener as the expvar "memory").
type breakdown struct {
	mem       map[string]int64
	rss       int64 // VmRSS
	anon      int64 // Anonymous in smaps_rollup
	file      int64 // Rss - Anonymous: the binary's text and data pages
	goroutine int
	threads   int64     // OS threads
	maps      []mapping // /proc/<pid>/smaps (mappings.go)
	exe       string    // the binary's path, as smaps names it
	pages     []uint64  // resident pages of the binary's read-only data (pages.go)
}

func (s *server) breakdown() (breakdown, error) {
	var b breakdown
	body, err := s.get("/debug/vars")
	if err != nil {
		return b, err
	}
	var vars struct {
		Memory map[string]int64 `json:"memory"`
	}
	if err := json.Unmarshal([]byte(body), &vars); err != nil {
		return b, fmt.Errorf("/debug/vars: %w", err)
	}
	if vars.Memory == nil {
		return b, errors.New("/debug/vars has no memory classes: smcp-server too old")
	}
	b.mem = vars.Memory
	roll, err := procFields(s.cmd.Process.Pid, "smaps_rollup")
	if err != nil {
		return b, err
	}
	b.rss, b.anon = roll["Rss"], roll["Anonymous"]
	b.file = b.rss - b.anon
	if b.threads, err = s.status("Threads"); err != nil {
		return b, err
	}
	if b.maps, err = readMappings(s.cmd.Process.Pid); err != nil {
		return b, err
	}
	if b.exe, err = os.Readlink(fmt.Sprintf("/proc/%d/exe", s.cmd.Process.Pid)); err != nil {
		return b, err
	}
	if b.pages, err = residentPages(s.cmd.Process.Pid, b.maps, b.exe); err != nil {
		return b, err
	}
	b.goroutine = int(b.mem["/sched/goroutines:goroutines"])
	return b, nil
}

// rows are the lines of a breakdown table, in the order of rowNames.
func (b breakdown) rows() []int64 {
	m := func(n string) int64 { return b.mem["/memory/classes/"+n+":bytes"] }
	return []int64{
		b.rss,
		b.file,
		b.anon,
		b.mem["/gc/heap/live:bytes"],
		m("heap/objects") - b.mem["/gc/heap/live:bytes"],
		m("heap/unused"),
		m("heap/free"),
		m("heap/stacks"),
		m("metadata/mspan/inuse") + m("metadata/mspan/free"),
		m("metadata/mcache/inuse") + m("metadata/mcache/free"),
		m("metadata/other"),
		m("os-stacks"),
		m("other") + m("profiling/buckets"),
		m("total") - m("heap/released"),
		b.mem["/gc/heap/goal:bytes"],
	}
}

var rowNames = []string{
	"RSS (VmRSS)",
	"  file-backed (binary text, data)",
	"  anonymous",
	"heap: live at the last GC",
	"heap: allocated since, or dead",
	"heap: free slots in spans in use",
	"heap: free spans not returned",
	"goroutine stacks",
	"runtime metadata: span structures",
	"runtime metadata: per-P caches",
	"runtime metadata: GC bits, arenas' index",
	"OS thread stacks (cgo)",
	"runtime other (profiling buckets incl.)",
	"runtime total, not returned",
	"heap goal of the next GC",
}

// printTable prints named breakdowns side by side, in KB, and per
// connection between the first and the last when per > 0.
func printTable(w io.Writer, names []string, bs []breakdown, per int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
	}
	if per > 0 {
		fmt.Fprint(tw, "per connection\t")
	}
	fmt.Fprintln(tw)
	rows := make([][]int64, len(bs))
	for i, b := range bs {
		rows[i] = b.rows()
	}
	for r, name := range rowNames {
		fmt.Fprintf(tw, "%s\t", name)
		for i := range bs {
			fmt.Fprintf(tw, "%.1f MB\t", float64(rows[i][r])/(1<<20))
		}
		if per > 0 {
			d := rows[len(bs)-1][r] - rows[0][r]
			fmt.Fprintf(tw, "%.2f KB\t", float64(d)/float64(per)/1024)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "goroutines\t")
	for _, b := range bs {
		fmt.Fprintf(tw, "%d\t", b.goroutine)
	}
	if per > 0 {
		fmt.Fprintf(tw, "%.2f\t", float64(bs[len(bs)-1].goroutine-bs[0].goroutine)/float64(per))
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "OS threads\t")
	for _, b := range bs {
		fmt.Fprintf(tw, "%d\t", b.threads)
	}
	fmt.Fprintln(tw)
	_ = tw.Flush()
}
