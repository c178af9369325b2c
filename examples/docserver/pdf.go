package docserver

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

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
// a ToUnicode map or use UniGB-UCS2-H. Text in a CID font with another
// UTF-16 or UCS-2 predefined CMap (STSong-Light with UniGB-UTF16-H, and the
// CNS, JIS and KS equivalents) is read from the content stream here and
// decoded as UTF-16. Other predefined CMaps without a ToUnicode map
// (GBK-EUC-H, …) cannot be decoded: that text is left out with a warning,
// in the log and in the summary, as is a PDF that yields no text at all.
// The reader cannot decrypt AES-256 (PDF 2.0, V=5): such a PDF is listed as
// unavailable with the reason.
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
		if bad, utf16 := undecodableFonts(pg); len(bad) > 0 || len(utf16) > 0 {
			kept := texts[:0:0]
			for _, t := range texts {
				switch {
				case utf16[t.Font]: // read again below, decoded
				case bad[t.Font]:
					unreadableText = true
				default:
					kept = append(kept, t)
				}
			}
			texts = kept
			if len(utf16) > 0 {
				texts = append(texts, utf16Texts(pg, utf16)...)
				slices.SortStableFunc(texts, func(a, b pdf.Text) int { return cmp.Compare(b.Y, a.Y) })
			}
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

// utf16CMap matches the predefined CMaps of Adobe's CJK collections whose
// character codes are UTF-16BE (or UCS-2) code units: text shown in such a
// font decodes without a ToUnicode map.
var utf16CMap = regexp.MustCompile(`^Uni(GB|CNS|JIS|KS)-(UTF16|UCS2)-[HV]$`)

// undecodableFonts sorts out the page's composite (Type0) fonts without a
// ToUnicode map, whose codes the reader hands out raw: utf16 holds those
// with a UTF-16 or UCS-2 CMap other than UniGB-UCS2-H (the one the reader
// decodes), which utf16Texts decodes; bad holds the others. Both are keyed
// by resource name and base font name (pdf.Text names the latter).
func undecodableFonts(pg pdf.Page) (bad, utf16 map[string]bool) {
	defer func() {
		if recover() != nil {
			bad, utf16 = nil, nil
		}
	}()
	for _, name := range pg.Fonts() {
		f := pg.Font(name)
		if f.V.Key("Subtype").Name() != "Type0" || f.V.Key("ToUnicode").Kind() == pdf.Stream {
			continue
		}
		enc := f.V.Key("Encoding")
		switch {
		case enc.Kind() == pdf.Name && enc.Name() == "UniGB-UCS2-H":
			continue
		case enc.Kind() == pdf.Name && utf16CMap.MatchString(enc.Name()):
			if utf16 == nil {
				utf16 = map[string]bool{}
			}
			utf16[name], utf16[f.BaseFont()] = true, true
		default:
			if bad == nil {
				bad = map[string]bool{}
			}
			bad[name], bad[f.BaseFont()] = true, true
		}
	}
	return bad, utf16
}

// utf16Texts reads the page's content stream for the text shown in the
// given fonts and decodes it as UTF-16BE: one pdf.Text per text object, at
// its baseline (from Tm, Td and TD; enough to order lines and find
// paragraphs).
func utf16Texts(pg pdf.Page, fonts map[string]bool) (out []pdf.Text) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	var (
		sb      strings.Builder
		on      bool
		font    string
		size, y float64
	)
	flush := func() {
		if sb.Len() > 0 {
			out = append(out, pdf.Text{Font: font, FontSize: size, Y: y, S: sb.String()})
			sb.Reset()
		}
	}
	show := func(v pdf.Value) {
		if on && v.Kind() == pdf.String {
			sb.WriteString(decodeUTF16(v.RawString()))
		}
	}
	pdf.Interpret(pg.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "ET":
			flush()
		case "Tf":
			if len(args) == 2 {
				flush()
				font, size = args[0].Name(), args[1].Float64()
				on = fonts[font]
			}
		case "Tm":
			if len(args) == 6 {
				flush()
				y = args[5].Float64()
			}
		case "Td", "TD":
			if len(args) == 2 && args[1].Float64() != 0 {
				flush()
				y += args[1].Float64()
			}
		case "Tj", "'", `"`:
			if len(args) > 0 {
				show(args[len(args)-1])
			}
		case "TJ":
			if len(args) == 1 {
				for i := 0; i < args[0].Len(); i++ {
					show(args[0].Index(i))
				}
			}
		}
	})
	flush()
	return out
}

// decodeUTF16 decodes UTF-16BE code units; an odd last byte is dropped.
func decodeUTF16(raw string) string {
	u := make([]uint16, 0, len(raw)/2)
	for i := 0; i+1 < len(raw); i += 2 {
		u = append(u, uint16(raw[i])<<8|uint16(raw[i+1]))
	}
	return string(utf16.Decode(u))
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
