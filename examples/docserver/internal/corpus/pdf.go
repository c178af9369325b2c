package corpus

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"
)

// PDFPage is one page of a generated PDF: paragraphs of lines in a simple
// font, then (when CID is set) lines in the CID font STSong-Light.
type PDFPage struct {
	Paragraphs [][]string
	CID        []string
}

// pdfWriter assembles a PDF 1.7 file object by object, with an exact
// cross-reference table. Content streams are left uncompressed.
type pdfWriter struct {
	buf     bytes.Buffer
	offsets []int // offsets[i] is object i+1's
}

func (w *pdfWriter) reserve() int {
	w.offsets = append(w.offsets, 0)
	return len(w.offsets)
}

func (w *pdfWriter) object(n int, body string) {
	w.offsets[n-1] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", n, body)
}

func (w *pdfWriter) stream(n int, data string) {
	w.object(n, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data))
}

func (w *pdfWriter) finish(root, info int, extraTrailer string) []byte {
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, off := range w.offsets {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&w.buf, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R %s >>\nstartxref\n%d\n%%%%EOF\n",
		len(w.offsets)+1, root, info, extraTrailer, xref)
	return w.buf.Bytes()
}

func pdfString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	return "(" + r.Replace(s) + ")"
}

// utf16Hex is s as a hex string of UTF-16BE code units, as a CID font with
// a UCS-2/UTF-16 CMap reads it.
func utf16Hex(s string) string {
	var b strings.Builder
	b.WriteByte('<')
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteByte('>')
	return b.String()
}

// PDFOptions shape a generated PDF.
type PDFOptions struct {
	Title string
	// CIDEncoding is the CMap of the CID font (default "UniGB-UTF16-H", a
	// predefined CMap with no ToUnicode map, as Chinese PDFs made with
	// STSong-Light often have).
	CIDEncoding string
	// AES256 adds an encryption dictionary of PDF 2.0's AES-256 (V 5, R 6)
	// with an empty user password. The content is not actually encrypted:
	// readers that cannot decrypt AES-256 refuse the file from the
	// dictionary alone, before reading any content.
	AES256 bool
}

// PDF builds a PDF of the given pages: 11-point Helvetica text, lines 14
// points apart, paragraphs 24 points apart, headings (a paragraph of one
// line starting with "#") in 14-point bold.
func PDF(pages []PDFPage, o PDFOptions) []byte {
	if o.CIDEncoding == "" {
		o.CIDEncoding = "UniGB-UTF16-H"
	}
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	catalog, pagesObj, info := w.reserve(), w.reserve(), w.reserve()
	helv, bold, cid, cidDesc, cidFD := w.reserve(), w.reserve(), w.reserve(), w.reserve(), w.reserve()
	var kids []string
	for _, pg := range pages {
		page, content := w.reserve(), w.reserve()
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		var cs strings.Builder
		y := 760.0
		for _, para := range pg.Paragraphs {
			font, size := "/F1 11", 11.0
			if len(para) == 1 && strings.HasPrefix(para[0], "#") {
				font, size = "/F2 14", 14.0
			}
			for _, line := range para {
				line = strings.TrimSpace(strings.TrimLeft(line, "#"))
				fmt.Fprintf(&cs, "BT %s Tf 1 0 0 1 72 %.1f Tm %s Tj ET\n", font, y, pdfString(line))
				y -= size + 3
			}
			y -= 10
		}
		for _, line := range pg.CID {
			fmt.Fprintf(&cs, "BT /F3 12 Tf 1 0 0 1 72 %.1f Tm %s Tj ET\n", y, utf16Hex(line))
			y -= 16
		}
		w.stream(content, cs.String())
		w.object(page, fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "+
			"/Resources << /Font << /F1 %d 0 R /F2 %d 0 R /F3 %d 0 R >> >> >>", pagesObj, content, helv, bold, cid))
	}
	w.object(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj))
	w.object(pagesObj, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	w.object(info, fmt.Sprintf("<< /Title %s /Producer (smcp-go corpus) >>", pdfString(o.Title)))
	w.object(helv, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	w.object(bold, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	w.object(cid, fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /%s /DescendantFonts [%d 0 R] >>", o.CIDEncoding, cidDesc))
	w.object(cidDesc, fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "+
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> /FontDescriptor %d 0 R /DW 1000 >>", cidFD))
	w.object(cidFD, "<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] "+
		"/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>")
	extra := ""
	if o.AES256 {
		enc := w.reserve()
		w.object(enc, "<< /Filter /Standard /V 5 /R 6 /Length 256 /P -1028 "+
			"/CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF "+
			"/O <"+strings.Repeat("00", 48)+"> /U <"+strings.Repeat("00", 48)+"> "+
			"/OE <"+strings.Repeat("00", 32)+"> /UE <"+strings.Repeat("00", 32)+"> /Perms <"+strings.Repeat("00", 16)+"> >>")
		extra = fmt.Sprintf("/Encrypt %d 0 R /ID [<%s> <%s>]", enc, strings.Repeat("AB", 16), strings.Repeat("AB", 16))
	}
	return w.finish(catalog, info, extra)
}

// WritePDF writes PDF(pages, o) to path.
func WritePDF(path string, pages []PDFPage, o PDFOptions) error {
	return os.WriteFile(path, PDF(pages, o), 0o644)
}

// LongPDF is a PDF of n pages, each a heading and three paragraphs of four
// lines.
func LongPDF(n int) []byte {
	pages := make([]PDFPage, n)
	for i := range pages {
		pg := &pages[i]
		pg.Paragraphs = append(pg.Paragraphs, []string{fmt.Sprintf("# Section %d", i+1)})
		for p := range 3 {
			var lines []string
			for l := range 4 {
				lines = append(lines, fmt.Sprintf("Page %d paragraph %d line %d: the quick brown fox jumps over the lazy dog.", i+1, p+1, l+1))
			}
			pg.Paragraphs = append(pg.Paragraphs, lines)
		}
	}
	return PDF(pages, PDFOptions{Title: fmt.Sprintf("Long report (%d pages)", n)})
}
