package protocol_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// finderAnswer returns a GetFinderRet of n documents shaped like the
// seeds' examples.
func finderAnswer(n int) []byte {
	ret := protocol.GetFinderRet{ReqID: "req-1", TotalCount: 240}
	for i := range n {
		summary := fmt.Sprintf("Quarterly finance and operations report number %d", i)
		modified := fmt.Sprintf("2026-01-%02dT08:30:00Z", i%28+1)
		ret.Documents = append(ret.Documents, protocol.DPEDocumentSummary{
			DocRef:       fmt.Sprintf("rpt-%04d", i),
			URI:          fmt.Sprintf("dpe://com.example.docs/rpt-%04d", i),
			FileURI:      fmt.Sprintf("file:///data/reports/rpt-%04d.xlsx", i),
			FileType:     "xlsx",
			Title:        fmt.Sprintf("Report %d", i),
			PageCount:    12,
			Keywords:     []string{"finance", "annual", "operations"},
			Summary:      summary,
			LastModified: modified,
			Server:       "docs",
		})
	}
	b, err := json.Marshal(ret)
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkValidateFinderAnswer validates a 20-document client:get_finder
// answer from its JSON bytes (decode + schema check), as the Server does
// when checking Computer answers.
func BenchmarkValidateFinderAnswer(b *testing.B) {
	raw := finderAnswer(20)
	if err := protocol.Validate(protocol.EventGetFinder, protocol.Ack, raw); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := protocol.Validate(protocol.EventGetFinder, protocol.Ack, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateValueFinderAnswer checks the same answer already decoded
// into Go values, as a Socket.IO handler receives it.
func BenchmarkValidateValueFinderAnswer(b *testing.B) {
	var v any
	if err := json.Unmarshal(finderAnswer(20), &v); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := protocol.ValidateValue(protocol.EventGetFinder, protocol.Ack, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateFinderRequest validates a typical client:get_finder request.
func BenchmarkValidateFinderRequest(b *testing.B) {
	raw := []byte(`{"agent":"bot","req_id":"r-1","computer":"desk","keywords":["finance"],"file_type":"xlsx","offset":20,"limit":20}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := protocol.Validate(protocol.EventGetFinder, protocol.Request, raw); err != nil {
			b.Fatal(err)
		}
	}
}
