package docserver

import (
	"fmt"
	"os"
	"strings"

	"github.com/ledongthuc/pdf"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// parsePDF makes one page per PDF page with the text ledongthuc/pdf extracts
// from it, one text element per paragraph (blocks of lines separated by a
// blank line, their lines joined with spaces). Page N is titled
// "Page N: {its first line of text}". The document's
// title, summary and keywords come from the PDF's Info dictionary when it
// has them. A page whose text cannot be extracted is kept, empty, so page
// indices still match the PDF's pages.
func parsePDF(abs string) (*parsed, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, err := pdf.NewReader(f, fi.Size())
	if err != nil {
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
	for i := 1; i <= r.NumPage(); i++ {
		page := dpekit.Page{Title: fmt.Sprintf("Page %d", i)}
		pg := r.Page(i)
		if pg.V.IsNull() {
			p.pages = append(p.pages, page)
			continue
		}
		txt, err := pg.GetPlainText(nil)
		if err != nil {
			p.pages = append(p.pages, page)
			continue
		}
		paras := paragraphs(txt)
		if len(paras) > 0 {
			page.Title += ": " + clip(oneLine(strings.SplitN(paras[0], "\n", 2)[0]), 80)
		}
		for _, para := range paras {
			page.Elements = append(page.Elements, n.element(protocol.DPEElementCategoryText, para, map[string]any{"text": para}))
		}
		if p.summary == "" && len(paras) > 0 {
			p.summary = clip(oneLine(strings.Join(paras, " ")), 200)
		}
		p.pages = append(p.pages, page)
	}
	return p, nil
}

// paragraphs splits extracted text on blank lines; the lines of a
// paragraph, broken by the PDF's layout, are joined with spaces.
func paragraphs(txt string) []string {
	txt = strings.ReplaceAll(txt, "\r\n", "\n")
	var out []string
	for _, block := range strings.Split(txt, "\n\n") {
		if b := oneLine(block); b != "" {
			out = append(out, b)
		}
	}
	return out
}
