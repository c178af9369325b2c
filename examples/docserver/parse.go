package docserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// kind is how a file is turned into pages.
type kind int

const (
	kindSkip kind = iota
	kindMarkdown
	kindCSV
	kindXLSX
	kindPDF
	kindText
)

// MaxTextSize is the largest Markdown or other text file served whole (it
// is one element or a few pages); larger ones are listed as unavailable.
const MaxTextSize = 8 << 20

// MaxFileSize is the largest CSV, XLSX or PDF file parsed: these are paged,
// and their parse is bounded by the Budget as well. Larger ones are listed as
// unavailable.
const MaxFileSize = 128 << 20

// Budget bounds the parsing of one file. A file that needs more is listed
// in the catalog as unavailable — page_count 0, keyword "unavailable", the
// reason as summary — with a warning in the log, and is tried again when it
// changes.
type Budget struct {
	// Time is the most one parse may take; 0 means no bound.
	Time time.Duration
	// Cells is the most table cells (XLSX, CSV) or PDF pages × 1,000 one
	// parse may visit, which bounds its memory; 0 means no bound.
	Cells int
}

// DefaultBudget is the parse budget of a Library made without
// WithParseBudget: 30 s and 4,000,000 cells (a 100,000-row × 40-column
// table).
var DefaultBudget = Budget{Time: 30 * time.Second, Cells: 4_000_000}

// unavailableError is a file the Library lists but cannot serve: too large
// or over the parse budget.
type unavailableError struct{ reason string }

func (e *unavailableError) Error() string { return e.reason }

func unavailable(format string, args ...any) error {
	return &unavailableError{reason: fmt.Sprintf(format, args...)}
}

// budget is a running parse's account of its Budget; it also stops the
// parse when the context it was started with ends.
type budget struct {
	limit    Budget
	deadline time.Time
	cells    int
	ctx      context.Context
}

func (b Budget) start(ctx context.Context) *budget {
	r := &budget{limit: b, ctx: ctx}
	if b.Time > 0 {
		r.deadline = time.Now().Add(b.Time)
	}
	return r
}

// spend counts n more cells and checks the clock; it fails once the budget
// is exceeded.
func (b *budget) spend(n int) error {
	b.cells += n
	if b.limit.Cells > 0 && b.cells > b.limit.Cells {
		return unavailable("over the parse budget: more than %d cells", b.limit.Cells)
	}
	if !b.deadline.IsZero() && time.Now().After(b.deadline) {
		return unavailable("over the parse budget: parsing took longer than %s", b.limit.Time)
	}
	return b.ctx.Err()
}

// kindOf picks the parser from the file name; other files are sniffed as
// text when they are read.
func kindOf(name string) kind {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown":
		return kindMarkdown
	case ".csv":
		return kindCSV
	case ".xlsx", ".xlsm":
		return kindXLSX
	case ".pdf":
		return kindPDF
	}
	return kindText
}

// ignored reports names never served: hidden files and folders, editor
// backups, swap and temporary files.
func ignored(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#") {
		return true
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".swp", ".swx", ".swo", ".tmp", ".part", ".crdownload":
		return true
	}
	return false
}

// docInfo is a document's catalog metadata as its parser finds it.
type docInfo struct {
	title    string
	fileType string
	keywords []string
	summary  string
}

// parsed is one file turned into DPE content.
type parsed struct {
	docInfo
	pages    []dpekit.Page
	elements map[string]location // element id → where it is
	warnings []string            // logged once per parse
}

type location struct{ page, index int }

// errNotText marks a file that is not UTF-8 text. One with no known
// text format is sniffed and skipped without a warning; a .md or .csv one
// is listed as unavailable with the reason.
var errNotText = errors.New("not a text file")

// parseFile parses one opened file of the given size within the budget. A
// panic of a parsing library (PDF and XLSX readers do panic on some
// malformed files) becomes an error.
func parseFile(f *os.File, size int64, rel string, k kind, b *budget) (p *parsed, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("parser panicked: %v", r)
		}
	}()
	name := path.Base(rel)
	stem := strings.TrimSuffix(name, path.Ext(name))
	limit := int64(MaxTextSize)
	if k == kindXLSX || k == kindPDF || k == kindCSV {
		limit = MaxFileSize
	}
	if size > limit {
		return nil, unavailable("the file is larger than %d MiB", limit>>20)
	}
	switch k {
	case kindXLSX:
		p, err = parseXLSX(f, b)
	case kindPDF:
		p, err = parsePDF(f, size, b)
	default:
		var src []byte
		src, err = readText(f, limit)
		if errors.Is(err, errNotText) && k != kindText {
			// A .md or .csv file its author meant as text: listed as
			// unavailable with the reason, not silently left out.
			return nil, unavailable("%v", err)
		}
		if err != nil {
			return nil, err
		}
		switch k {
		case kindMarkdown:
			p = parseMarkdown(src, stem)
		case kindCSV:
			p, err = parseCSV(src, b)
		default:
			p = parseText(src, name)
		}
	}
	if err != nil {
		return nil, err
	}
	if p.title == "" {
		p.title = stem
	}
	if p.fileType == "" {
		p.fileType = fileType(name)
	}
	p.index()
	return p, nil
}

// fileType is the lower-case extension without its dot, "txt" when none.
func fileType(name string) string {
	if ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), ".")); ext != "" {
		return ext
	}
	return "txt"
}

// readText reads a text file: UTF-8 (a leading BOM is dropped), no NUL byte,
// at most limit bytes (a file growing while read is cut there).
func readText(f *os.File, limit int64) ([]byte, error) {
	src, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(src)) > limit {
		return nil, unavailable("the file is larger than %d MiB", limit>>20)
	}
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	if i := bytes.IndexByte(src, 0); i >= 0 {
		return nil, fmt.Errorf("%w: a NUL byte at offset %d (a binary file?)", errNotText, i)
	}
	if !utf8.Valid(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return nil, fmt.Errorf("%w: not UTF-8 (first invalid byte at offset %d); save it as UTF-8", errNotText, i)
	}
	return src, nil
}

func (p *parsed) index() {
	p.elements = map[string]location{}
	for i, pg := range p.pages {
		for j, e := range pg.Elements {
			p.elements[e.ElementID] = location{i, j}
		}
	}
}

func (p *parsed) element(id string) (dpekit.Element, bool) {
	loc, ok := p.elements[id]
	if !ok {
		return dpekit.Element{}, false
	}
	return dpekit.Element{DPEElement: p.pages[loc.page].Elements[loc.index], PageIndex: loc.page}, true
}

// ids hands out element ids unique within a document: a prefix per category
// and a counter, as in the spec's examples ("tbl-001", "h-002").
type ids map[protocol.DPEElementCategory]int

var idPrefix = map[protocol.DPEElementCategory]string{
	protocol.DPEElementCategoryHeading:   "h",
	protocol.DPEElementCategoryText:      "txt",
	protocol.DPEElementCategoryTable:     "tbl",
	protocol.DPEElementCategoryList:      "lst",
	protocol.DPEElementCategoryCode:      "code",
	protocol.DPEElementCategoryLink:      "lnk",
	protocol.DPEElementCategoryImage:     "img",
	protocol.DPEElementCategorySeparator: "sep",
	protocol.DPEElementCategoryChart:     "chart",
}

func (n ids) next(cat protocol.DPEElementCategory) string {
	n[cat]++
	prefix := idPrefix[cat]
	if prefix == "" {
		prefix = string(cat)
	}
	return fmt.Sprintf("%s-%03d", prefix, n[cat])
}

// element builds an element with a fresh id and a summary.
func (n ids) element(cat protocol.DPEElementCategory, summary string, content map[string]any) protocol.DPEElement {
	e := protocol.DPEElement{ElementID: n.next(cat), Category: cat, Content: content}
	if summary = clip(oneLine(summary), 120); summary != "" {
		e.Summary = summary
	}
	return e
}

// oneLine folds whitespace runs (line breaks included) into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip shortens s to at most n runes, ending with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// parseText makes one page, titled with the file name, holding the whole
// file as one text element.
func parseText(src []byte, name string) *parsed {
	text := strings.TrimRight(string(src), "\r\n\t ")
	n := ids{}
	p := &parsed{docInfo: docInfo{summary: clip(oneLine(firstParagraph(text)), 200)}}
	page := dpekit.Page{Title: name}
	if strings.TrimSpace(text) != "" {
		page.Elements = []protocol.DPEElement{n.element(protocol.DPEElementCategoryText, firstParagraph(text), map[string]any{"text": text})}
	}
	p.pages = []dpekit.Page{page}
	return p
}

func firstParagraph(s string) string {
	s = strings.TrimLeft(s, "\r\n\t ")
	if i := strings.Index(s, "\n\n"); i >= 0 {
		return s[:i]
	}
	if i := strings.Index(s, "\r\n\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
