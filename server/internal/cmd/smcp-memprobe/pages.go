package main

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// residentPages returns the addresses of the pages of the binary's
// read-only mappings (its rodata and pclntab: "binary read-only data" in
// mappings.go) that are present in the process's page table, read from
// /proc/<pid>/pagemap (bit 63 of each page's entry). Which pages a run
// faults in tells what it reads: type data for reflection, the pclntab
// for stack walks (GC stack scans, stack growth, tracebacks).
func residentPages(pid int, maps []mapping, exe string) ([]uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const page = 4096
	var out []uint64
	for _, m := range maps {
		if m.path != exe || !strings.HasPrefix(m.perms, "r-") || strings.Contains(m.perms, "x") {
			continue
		}
		n := (m.end - m.start) / page
		buf := make([]byte, n*8)
		if _, err := f.ReadAt(buf, int64(m.start/page*8)); err != nil && err != io.EOF {
			return nil, fmt.Errorf("pagemap: %w", err)
		}
		for i := range n {
			if binary.LittleEndian.Uint64(buf[i*8:])&(1<<63) != 0 {
				out = append(out, m.start+i*page)
			}
		}
	}
	return out, nil
}

// region is a named address range of the binary: an ELF section, or a
// table inside the pclntab.
type region struct {
	name       string
	start, end uint64
}

// binaryRegions returns the allocated read-only sections of the ELF binary
// at path, with .gopclntab split into the tables its header lists
// (runtime/symtab.go, pcHeader): function names, compilation units, file
// names, pc-value tables (stack frame sizes, line and file tables, the
// stack maps' indexes) and the function table (_func records).
func binaryRegions(path string) ([]region, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []region
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&(elf.SHF_WRITE|elf.SHF_EXECINSTR) != 0 || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		if s.Name != ".gopclntab" {
			out = append(out, region{s.Name, s.Addr, s.Addr + s.Size})
			continue
		}
		hdr := make([]byte, 72)
		if _, err := s.ReadAt(hdr, 0); err != nil {
			return nil, err
		}
		if binary.LittleEndian.Uint32(hdr) != 0xfffffff1 || hdr[7] != 8 {
			out = append(out, region{s.Name, s.Addr, s.Addr + s.Size})
			continue
		}
		off := func(i int) uint64 { return s.Addr + binary.LittleEndian.Uint64(hdr[32+8*i:]) }
		tables := []region{
			{".gopclntab header", s.Addr, off(0)},
			{".gopclntab funcnames", off(0), off(1)},
			{".gopclntab cus", off(1), off(2)},
			{".gopclntab files", off(2), off(3)},
			{".gopclntab pc-value tables", off(3), off(4)},
			{".gopclntab functab", off(4), s.Addr + s.Size},
		}
		out = append(out, tables...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out, nil
}

// pagesByRegion counts the pages of pages (addresses of 4 KB pages) per
// region; a page two regions share counts for the one it starts in.
func pagesByRegion(pages []uint64, regions []region) map[string]int {
	out := map[string]int{}
	for _, p := range pages {
		name := "other"
		for _, r := range regions {
			if p+4096 > r.start && p < r.end {
				name = r.name
				break
			}
		}
		out[name]++
	}
	return out
}

// printPages prints, per region of the binary's read-only data, the
// resident KB at each named breakdown.
func printPages(w io.Writer, names []string, bs []breakdown) error {
	regions, err := binaryRegions(bs[0].exe)
	if err != nil {
		return err
	}
	counts := make([]map[string]int, len(bs))
	for i, b := range bs {
		counts[i] = pagesByRegion(b.pages, regions)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "read-only data resident (pagemap)\tsize\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
	}
	fmt.Fprintln(tw)
	kb := func(n int) string { return strconv.Itoa(n*4) + " KB" }
	for _, r := range append(regions, region{name: "other"}) {
		size := "-"
		if r.end > r.start {
			size = strconv.FormatUint((r.end-r.start)>>10, 10) + " KB"
		}
		fmt.Fprintf(tw, "%s\t%s\t", r.name, size)
		for i := range bs {
			fmt.Fprintf(tw, "%s\t", kb(counts[i][r.name]))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// writePages writes the resident pages' addresses, one a line in hex, for
// an analysis outside (which symbols or functions' tables they hold).
func writePages(path string, pages []uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range pages {
		fmt.Fprintf(w, "%x\n", p)
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
