package dpekit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// memProvider is an in-memory Provider for the tests: documents can be added,
// removed and edited while a Server serves them.
type memProvider struct {
	mu    sync.RWMutex
	order []string
	docs  map[string]*memDoc
	calls struct {
		sync.Mutex
		page int
	}
}

type memDoc struct {
	meta  dpekit.Document
	pages []dpekit.Page
}

func newMemProvider() *memProvider { return &memProvider{docs: map[string]*memDoc{}} }

func (p *memProvider) put(meta dpekit.Document, pages ...dpekit.Page) {
	p.mu.Lock()
	defer p.mu.Unlock()
	meta.PageCount = len(pages)
	if _, ok := p.docs[meta.DocRef]; !ok {
		p.order = append(p.order, meta.DocRef)
	}
	p.docs[meta.DocRef] = &memDoc{meta: meta, pages: pages}
}

func (p *memProvider) remove(ref string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.docs, ref)
	p.order = slices.DeleteFunc(p.order, func(r string) bool { return r == ref })
}

func (p *memProvider) Documents(context.Context) ([]dpekit.Document, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]dpekit.Document, 0, len(p.order))
	for _, r := range p.order {
		out = append(out, p.docs[r].meta)
	}
	return out, nil
}

func (p *memProvider) Document(_ context.Context, ref string) (dpekit.Document, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	d, ok := p.docs[ref]
	if !ok {
		return dpekit.Document{}, dpekit.ErrNotFound
	}
	return d.meta, nil
}

func (p *memProvider) Page(_ context.Context, ref string, i int) (dpekit.Page, error) {
	p.calls.Lock()
	p.calls.page++
	p.calls.Unlock()
	p.mu.RLock()
	defer p.mu.RUnlock()
	d, ok := p.docs[ref]
	if !ok || i < 0 || i >= len(d.pages) {
		return dpekit.Page{}, dpekit.ErrNotFound
	}
	return d.pages[i], nil
}

func (p *memProvider) Element(_ context.Context, ref, id string) (dpekit.Element, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	d, ok := p.docs[ref]
	if !ok {
		return dpekit.Element{}, dpekit.ErrNotFound
	}
	for i, pg := range d.pages {
		for _, e := range pg.Elements {
			if e.ElementID == id {
				return dpekit.Element{DPEElement: e, PageIndex: i}, nil
			}
		}
	}
	return dpekit.Element{}, dpekit.ErrNotFound
}

func (p *memProvider) pageCalls() int {
	p.calls.Lock()
	defer p.calls.Unlock()
	return p.calls.page
}

func el(id string, cat protocol.DPEElementCategory, summary string, content map[string]any) protocol.DPEElement {
	e := protocol.DPEElement{ElementID: id, Category: cat, Content: content}
	if summary != "" {
		e.Summary = summary
	}
	return e
}

var testModified = time.Date(2026, 1, 15, 8, 30, 0, 0, time.UTC)

// Document refs of the test set.
const (
	refReport   = "rpt-2026"
	refContract = "contract a1/b" // needs percent-encoding: a space and a slash
	refBig      = "big"
	refEmpty    = "empty"
)

// testProvider is the fixed document set every transport serves.
func testProvider() *memProvider {
	p := newMemProvider()
	p.put(dpekit.Document{
		DocRef: refReport, Title: "2026 年度报告", FileType: "xlsx", FileURI: "file:///data/reports/2026-annual.xlsx",
		Keywords: []string{"财务", "年报"}, Summary: "2026 年度财务与运营报告", LastModified: testModified,
	},
		dpekit.Page{Title: "概览", Elements: []protocol.DPEElement{
			el("h-001", protocol.DPEElementCategoryHeading, "2026 年度总结", map[string]any{"level": 1, "text": "2026 年度总结"}),
			el("txt-001", protocol.DPEElementCategoryText, "报告引言段落", map[string]any{"text": "本报告总结了 2026 年度的运营情况。"}),
			el("tbl-001", protocol.DPEElementCategoryTable, "季度收入对比表（4行3列）", map[string]any{
				"headers": []string{"季度", "收入（万元）", "同比增长"},
				"rows":    [][]string{{"Q1", "1,250", "+12%"}, {"Q2", "1,380", "+15%"}, {"Q3", "1,420", "+8%"}, {"Q4", "1,560", "+18%"}},
			}),
			el("chart-001", protocol.DPEElementCategoryChart, "季度收入趋势图", map[string]any{
				"chart_type": "line", "title": "季度收入趋势", "data_summary": "Q1-Q4 收入呈上升趋势",
			}),
		}},
		dpekit.Page{Title: "Details", Elements: []protocol.DPEElement{
			el("lst-001", protocol.DPEElementCategoryList, "steps", map[string]any{"ordered": true, "items": []string{"collect", "reconcile"}}),
			el("code-001", protocol.DPEElementCategoryCode, "query", map[string]any{"language": "sql", "code": "SELECT 1;"}),
			el("lnk-001", protocol.DPEElementCategoryLink, "wiki", map[string]any{"text": "wiki", "url": "https://example.com/wiki"}),
			el("img-001", protocol.DPEElementCategoryImage, "logo", map[string]any{"alt": "logo", "url": "images/logo.png"}),
			el("fml-001", protocol.DPEElementCategoryFormula, "growth", map[string]any{"expression": "(b-a)/a", "value": "0.12"}),
			el("tbl-002", protocol.DPEElementCategoryTable, "second table", map[string]any{"rows": [][]string{{"x", "1"}}}),
		}},
		dpekit.Page{Title: "Appendix", Elements: []protocol.DPEElement{
			el("txt-002", protocol.DPEElementCategoryText, "", map[string]any{"text": "Appendix text."}),
			el("ann-001", protocol.DPEElementCategoryAnnotation, "reviewer note", map[string]any{"author": "kim"}),
		}},
	)
	p.put(dpekit.Document{DocRef: refContract, Title: "A1 合同", FileType: "pdf", FileURI: "file:///data/contracts/a1.pdf", Summary: "A1 项目服务合同"},
		dpekit.Page{Title: "", Elements: []protocol.DPEElement{
			el("p/1 #x", protocol.DPEElementCategoryText, "odd id", map[string]any{"text": "An element whose id needs encoding."}),
		}},
	)
	// big: 250 pages; page 0 holds 120 elements (completion past 100).
	big := make([]dpekit.Page, 250)
	for i := range big {
		big[i] = dpekit.Page{Title: fmt.Sprintf("Page %d", i), Elements: []protocol.DPEElement{
			el(fmt.Sprintf("e%d-0", i), protocol.DPEElementCategoryText, "", map[string]any{"text": fmt.Sprintf("page %d", i)}),
		}}
	}
	for j := 1; j < 120; j++ {
		big[0].Elements = append(big[0].Elements,
			el(fmt.Sprintf("e0-%d", j), protocol.DPEElementCategoryText, "", map[string]any{"text": fmt.Sprint(j)}))
	}
	p.put(dpekit.Document{DocRef: refBig, Title: "Big", FileType: "txt", FileURI: "file:///big.txt"}, big...)
	p.put(dpekit.Document{DocRef: refEmpty, Title: "", FileType: "txt", FileURI: "file:///empty.txt"})
	return p
}
