package docserver

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// parsePDF makes one page per PDF page with the text ledongthuc/pdf extracts
// from it, one text element per paragraph: lines are grouped by their
// vertical position, and a gap clearly wider than the page's usual line
// spacing (or a blank line in the extracted text) starts a new paragraph.
// Page N is titled "Page N: {its first line of text}". The document's title,
// summary and keywords come from the PDF's Info dictionary when it has them.
// A page whose text cannot be extracted is kept, empty, so page indices
// still match the PDF's pages.
//
// ledongthuc/pdf decodes simple fonts and composite (CID) fonts that carry
// a ToUnicode map or use UniGB-UCS2-H; it cannot decode other predefined
// CMaps (a CID font such as STSong-Light with UniGB-UTF16-H or GBK-EUC-H
// and no ToUnicode map), nor decrypt PDFs encrypted with AES-256 (PDF 2.0,
// V=5). A PDF whose pages have text operators but yield no readable text is
// served with empty pages and a warning, in the log and in its summary; an
// AES-256 PDF is listed as unavailable with the reason.
func parsePDF(f io.ReaderAt, size int64, b *budget) (*parsed, error) {
	r, err := pdf.NewReader(f, size)
	if err != nil {
		// The reader's refusals of AES-256 (a 256-bit key, V=5, R=6) are
		// plain errors; they are told apart by their text.
		if msg := err.Error(); strings.Contains(msg, "256-bit encryption key") ||
			strings.Contains(msg, "encryption version V=5") || strings.Contains(msg, "encryption revision R=6") {
			return nil, unavailable("encrypted with AES-256 (PDF 2.0), which the PDF reader cannot decrypt")
		}
		if errors.Is(err, pdf.ErrInvalidPassword) {
			return nil, unavailable("encrypted with a user password")
		}
		return nil, err
	}
	p := &parsed{docInfo: docInfo{fileType: "pdf"}}
	info := r.Trailer().Key("Info")
	p.title = strings.TrimSpace(info.Key("Title").Text())
	p.summary = strings.TrimSpace(info.Key("Subject").Text())
	if kw := info.Key("Keywords").Text(); kw != "" {
		p.keywords = splitKeywords(kw)
	}
	n := ids{}
	unreadable := 0
	unreadableText := false // text in fonts the reader cannot decode
	for i := 1; i <= r.NumPage(); i++ {
		if err := b.spend(1000); err != nil {
			return nil, err
		}
		page := dpekit.Page{Title: fmt.Sprintf("Page %d", i)}
		pg := r.Page(i)
		if pg.V.IsNull() {
			p.pages = append(p.pages, page)
			continue
		}
		texts, ok := pageTexts(pg)
		if !ok {
			p.pages = append(p.pages, page)
			continue
		}
		if bad := undecodableFonts(pg); len(bad) > 0 {
			kept := texts[:0:0]
			for _, t := range texts {
				if bad[t.Font] {
					unreadableText = true
				} else {
					kept = append(kept, t)
				}
			}
			texts = kept
		}
		paras, shown := pdfParagraphs(texts)
		if len(paras) == 0 && shown {
			unreadable++
		}
		if len(paras) > 0 {
			page.Title += ": " + clip(oneLine(paras[0].first), 80)
		}
		for _, para := range paras {
			page.Elements = append(page.Elements, n.element(protocol.DPEElementCategoryText, para.text, map[string]any{"text": para.text}))
		}
		if p.summary == "" && len(paras) > 0 {
			var all []string
			for _, para := range paras {
				all = append(all, para.text)
			}
			p.summary = clip(oneLine(strings.Join(all, " ")), 200)
		}
		p.pages = append(p.pages, page)
	}
	if len(n) == 0 && r.NumPage() > 0 && unreadable == 0 && !unreadableText { // n counts the elements made, by category
		w := fmt.Sprintf("no text could be extracted from any of the %d PDF pages (scanned images, or text the reader cannot decode); they are served empty", r.NumPage())
		p.warnings = append(p.warnings, w)
		if p.summary == "" {
			p.summary = "Text not extractable: " + w
		}
	}
	if unreadable > 0 || unreadableText {
		w := fmt.Sprintf("text of %d of %d PDF pages could not be extracted (wholly or partly): it is set in fonts without a Unicode mapping the PDF reader knows (CID fonts with a predefined CMap other than UniGB-UCS2-H and no ToUnicode map); it is left out", max(unreadable, 1), r.NumPage())
		p.warnings = append(p.warnings, w)
		if p.summary == "" {
			p.summary = "Text not extractable: " + w
		}
	}
	return p, nil
}

type pdfParagraph struct {
	text  string // lines joined with spaces
	first string // first line
}

// undecodableFonts names the page's composite (Type0) fonts whose codes the
// reader cannot map to Unicode: no ToUnicode map, and an encoding other than
// the UCS-2 CMap it knows (it would hand out the raw codes as text).
func undecodableFonts(pg pdf.Page) (bad map[string]bool) {
	defer func() {
		if recover() != nil {
			bad = nil
		}
	}()
	for _, name := range pg.Fonts() {
		f := pg.Font(name)
		if f.V.Key("Subtype").Name() != "Type0" || f.V.Key("ToUnicode").Kind() == pdf.Stream {
			continue
		}
		if enc := f.V.Key("Encoding"); enc.Kind() == pdf.Name && enc.Name() == "UniGB-UCS2-H" {
			continue
		}
		if bad == nil {
			bad = map[string]bool{}
		}
		bad[f.BaseFont()] = true
		bad[name] = true
	}
	return bad
}

// pageTexts is the positioned text of a page; ok is false when the reader
// failed on it.
func pageTexts(pg pdf.Page) (texts []pdf.Text, ok bool) {
	defer func() {
		if recover() != nil {
			texts, ok = nil, false
		}
	}()
	return pg.Content().Text, true
}

// pdfParagraphs groups a page's text runs, in content order, into lines (a
// change of baseline starts one; a horizontal gap within a line is a space)
// and lines into paragraphs: a gap wider than 1.25 times the page's usual
// line spacing, or a change of font size, starts a paragraph. shown reports whether the page showed any text
// at all, readable or not.
func pdfParagraphs(texts []pdf.Text) (paras []pdfParagraph, shown bool) {
	type line struct {
		y, size float64
		text    string
	}
	var lines []line
	var sb strings.Builder
	var y, end, size float64
	started := false
	closeLine := func() {
		if text := strings.TrimSpace(sb.String()); readable(text) {
			lines = append(lines, line{y, size, text})
		}
		sb.Reset()
		size = 0
	}
	for _, t := range texts {
		if t.S == "" {
			continue
		}
		shown = true
		tol := max(t.FontSize, 1) / 2
		switch {
		case !started:
			started = true
		case math.Abs(t.Y-y) > tol:
			closeLine()
		case t.X > end+max(t.FontSize, 1)*0.15 && !strings.HasSuffix(sb.String(), " ") && t.S != " ":
			sb.WriteByte(' ')
		}
		y, end, size = t.Y, t.X+t.W, max(size, t.FontSize)
		sb.WriteString(t.S)
	}
	closeLine()
	if len(lines) == 0 {
		return nil, shown
	}
	var gaps []float64
	for i := 1; i < len(lines); i++ {
		if g := lines[i-1].y - lines[i].y; g > 0 {
			gaps = append(gaps, g)
		}
	}
	spacing := 0.0
	if len(gaps) > 0 {
		slices.Sort(gaps)
		spacing = gaps[len(gaps)/2] // the median: most gaps are line spacing
	}
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, pdfParagraph{text: oneLine(strings.Join(cur, " ")), first: cur[0]})
			cur = nil
		}
	}
	for i, l := range lines {
		if i > 0 && spacing > 0 {
			if g := lines[i-1].y - l.y; g > spacing*1.25 || g < 0 {
				flush()
			}
		}
		if i > 0 && math.Abs(lines[i-1].size-l.size) > 0.5 {
			flush() // a heading, or the text after it
		}
		cur = append(cur, l.text)
	}
	flush()
	return paras, shown
}

// readable reports whether extracted text holds a letter or digit and is not
// mostly replacement or control characters (undecodable glyph codes).
func readable(s string) bool {
	good, bad := 0, 0
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar || unicode.IsControl(r) && !unicode.IsSpace(r):
			bad++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			good++
		}
	}
	return good > 0 && bad <= good
}
