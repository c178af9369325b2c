package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// The demo's output helpers: section headings, aligned tables and indented
// blocks on standard output.

// section prints a numbered heading.
func section(n int, title string) {
	line := fmt.Sprintf("%d. %s", n, title)
	fmt.Printf("\n%s\n%s\n", line, strings.Repeat("─", utf8.RuneCountInString(line)))
}

// table prints rows as aligned columns, indented; the first row is the
// header.
func table(rows ...[]string) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(w, "  %s\n", strings.Join(r, "\t"))
	}
	_ = w.Flush()
}

// block prints text indented by four spaces.
func block(text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line == "" {
			fmt.Println()
			continue
		}
		fmt.Printf("    %s\n", line)
	}
}

// say prints one indented line.
func say(format string, args ...any) {
	fmt.Printf("  "+format+"\n", args...)
}

// deref returns *s, or "-" when s is nil.
func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		w := utf8.RuneCountInString(word)
		if n > 0 && n+1+w > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += w
	}
	return b.String()
}
