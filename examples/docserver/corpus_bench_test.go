package docserver_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/examples/docserver/internal/corpus"
)

// BenchmarkCorpus parses the large documents of issue 12 and reports, per
// operation, the time (ns/op), the bytes allocated, the heap kept by the
// parsed document (retained-MB) and the process's peak resident set during
// the parse (peak-RSS-MB, from VmHWM, reset before each run through
// /proc/self/clear_refs on Linux; 0 elsewhere):
//
//	catalog-1000  docserver.New + Documents over 1,000 small mixed files
//	sheet-50k     one XLSX sheet of 50,000 rows × 15 columns (500 pages)
//	pdf-200       a 200-page PDF (a heading and three paragraphs a page)
//	csv-100k      a 100,000-row × 12-column CSV (about 12 MB, 1,000 pages)
//	far-cell-xlsx a 1 KB workbook with a value in XFD1048576
//
// The files are generated once per run by package corpus; generation is not
// timed. Run with: go test -run '^$' -bench BenchmarkCorpus -benchtime 3x.
func BenchmarkCorpus(b *testing.B) {
	dir := b.TempDir()
	folder := filepath.Join(dir, "catalog")
	require.NoError(b, corpus.Folder(folder, 1000))
	one := func(name string, write func(path string) error) string {
		root := filepath.Join(dir, strings.TrimSuffix(name, filepath.Ext(name)))
		require.NoError(b, os.MkdirAll(root, 0o755))
		require.NoError(b, write(filepath.Join(root, name)))
		return root
	}
	cases := []struct {
		name  string
		root  string
		docs  int
		pages int
	}{
		{"catalog-1000", folder, 1000, 0},
		{"sheet-50k", one("sheet.xlsx", func(p string) error { return corpus.LongXLSX(p, 50_000, 15) }), 1, 500},
		{"pdf-200", one("long.pdf", func(p string) error { return os.WriteFile(p, corpus.LongPDF(200), 0o644) }), 1, 200},
		{"csv-100k", one("big.csv", func(p string) error { return corpus.CSV(p, 100_000, 12, 8, ',') }), 1, 1000},
		{"far-cell-xlsx", one("far.xlsx", corpus.FarCellXLSX), 1, 1},
	}
	ctx := context.Background()
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var retained, peak float64
			for b.Loop() {
				runtime.GC()
				resetPeakRSS()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				lib, err := docserver.New(tc.root, docserver.WithoutWatch())
				if err != nil {
					b.Fatal(err)
				}
				docs, err := lib.Documents(ctx)
				if err != nil || len(docs) != tc.docs {
					b.Fatalf("%d documents, %v", len(docs), err)
				}
				if tc.pages > 0 && docs[0].PageCount != tc.pages {
					b.Fatalf("%d pages, want %d (%s)", docs[0].PageCount, tc.pages, docs[0].Summary)
				}
				peak = peakRSSMB()
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
				runtime.KeepAlive(lib)
				require.NoError(b, lib.Close())
			}
			b.ReportMetric(retained, "retained-MB")
			b.ReportMetric(peak, "peak-RSS-MB")
		})
	}
}

// resetPeakRSS resets the kernel's peak resident set of this process
// (Linux: writing 5 to /proc/self/clear_refs resets VmHWM).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSMB reads VmHWM from /proc/self/status, in MiB (0 when unavailable).
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
