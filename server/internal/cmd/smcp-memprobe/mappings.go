package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// mapping is one line of /proc/<pid>/smaps: a range of the process's
// address space and how much of it is resident.
type mapping struct {
	start, end uint64
	perms      string
	path       string
	rss, anon  int64 // bytes
}

func (m mapping) key() string { return fmt.Sprintf("%x %s %s", m.start, m.perms, m.path) }

// readMappings parses /proc/<pid>/smaps.
func readMappings(pid int) ([]mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, _ := strings.Cut(fields[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				m := mapping{start: start, end: end, perms: fields[1]}
				if len(fields) >= 6 {
					m.path = strings.Join(fields[5:], " ")
				}
				out = append(out, m)
				continue
			}
		}
		if len(out) == 0 {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "Rss":
			out[len(out)-1].rss = kb << 10
		case "Anonymous":
			out[len(out)-1].anon = kb << 10
		}
	}
	return out, sc.Err()
}

// mappingClasses names where a mapping's resident pages belong. Anonymous
// mappings carry no name, so they are told apart by shape: a thread stack
// (glibc's pthread stacks when the binary uses cgo) is 8 MB right above a
// 4 KB guard page; the Go heap grows in 4 MB steps of its arenas; the rest is
// the runtime's off-heap metadata and C malloc's arenas.
var mappingClasses = []string{
	"binary text",
	"binary read-only data",
	"binary data and bss",
	"shared libraries",
	"Go heap arenas",
	"thread stacks",
	"other anonymous",
}

func classify(ms []mapping, i int, exe string) string {
	m := ms[i]
	size := m.end - m.start
	switch {
	case m.path == exe && strings.Contains(m.perms, "x"):
		return "binary text"
	case m.path == exe && strings.HasPrefix(m.perms, "r-"):
		return "binary read-only data"
	case m.path == exe:
		return "binary data and bss"
	case m.path != "" && !strings.HasPrefix(m.path, "["):
		return "shared libraries"
	case m.path != "":
		return "other anonymous"
	case size == 8<<20 && i > 0 && ms[i-1].end == m.start && ms[i-1].end-ms[i-1].start == 4<<10 && ms[i-1].perms[:3] == "---":
		return "thread stacks"
	case size >= 4<<20 && size%(4<<20) == 0 && strings.HasPrefix(m.perms, "rw"):
		return "Go heap arenas"
	}
	return "other anonymous"
}

// byClass sums the resident bytes of ms per class.
func byClass(ms []mapping, exe string) map[string]int64 {
	out := map[string]int64{}
	for i := range ms {
		out[classify(ms, i, exe)] += ms[i].rss
	}
	return out
}

// printMappings prints the resident bytes per class of mapping for named
// breakdowns side by side, then the mappings whose resident size changed
// most between the first breakdown given as from and the last.
func printMappings(w io.Writer, names []string, bs []breakdown, from int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "mappings (smaps)\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
	}
	fmt.Fprintln(tw)
	sums := make([]map[string]int64, len(bs))
	for i, b := range bs {
		sums[i] = byClass(b.maps, b.exe)
	}
	for _, c := range mappingClasses {
		fmt.Fprintf(tw, "%s\t", c)
		for i := range bs {
			fmt.Fprintf(tw, "%.1f MB\t", float64(sums[i][c])/(1<<20))
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()

	a, b := bs[from], bs[len(bs)-1]
	before := map[string]int64{}
	for _, m := range a.maps {
		before[m.key()] = m.rss
	}
	type change struct {
		m     mapping
		class string
		d     int64
	}
	var changes []change
	seen := map[string]bool{}
	for i, m := range b.maps {
		seen[m.key()] = true
		if d := m.rss - before[m.key()]; d != 0 {
			changes = append(changes, change{m, classify(b.maps, i, b.exe), d})
		}
	}
	for i, m := range a.maps {
		if !seen[m.key()] && m.rss != 0 {
			changes = append(changes, change{m, classify(a.maps, i, a.exe), -m.rss})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return abs(changes[i].d) > abs(changes[j].d) })
	fmt.Fprintf(w, "  mappings whose RSS changed most from %q to %q (a mapping the runtime split or remapped shows as one gone and one new):\n", names[from], names[len(names)-1])
	for _, c := range changes[:min(len(changes), 8)] {
		name := c.m.path
		if name == "" {
			name = "[anon]"
		}
		fmt.Fprintf(w, "    %+8.0f KB  %012x %s %7d KB  %-22s %s\n", float64(c.d)/1024, c.m.start, c.m.perms, (c.m.end-c.m.start)>>10, c.class, filepath.Base(name))
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
