package finder

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cold path (filter first, partial sort) and the cache path (sorted once,
// filter while walking) must agree on every query, and both must agree with a
// plain reference implementation of the seeds' algorithm.
func TestOrganizePathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([]protocol.DPEDocumentSummary, 1200)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range docs {
		srv := "s" + strconv.Itoa(r.IntN(6))
		ref := "d" + strconv.Itoa(i)
		sum := []string{"Alpha beta", "GAMMA", "delta Kelvin", "Ärger über Öl", ""}[r.IntN(5)]
		d := protocol.DPEDocumentSummary{DocRef: ref, URI: "dpe://" + srv + ".h/" + ref, Server: srv,
			FileType: []string{"pdf", "PDF", "xlsx"}[r.IntN(3)], Title: []string{"Report", "notes", "Über"}[r.IntN(3)],
			Keywords: [][]string{nil, {"Quarterly", "Report"}, {"alpha"}}[r.IntN(3)], Summary: sum}
		switch r.IntN(5) {
		case 0: // missing
		case 1:
			d.LastModified = "not a time"
		default: // few distinct instants: many ties
			lm := base.Add(time.Duration(r.IntN(20)) * time.Hour).In(time.FixedZone("", (r.IntN(5)-2)*3600)).Format(time.RFC3339)
			d.LastModified = lm
		}
		if r.IntN(50) == 0 {
			d.URI = "dpe://" + srv + ".h/" + ref + "/pages/x" // invalid
		}
		docs[i] = d
	}
	ix := cachedIndex(docs)
	kwsets := [][]string{nil, {"alpha"}, {"REPORT", "gamma"}, {"quarterly report"}, {"über"}, {"ärger"}, {""}, {"zzz"}}
	for n := range 200 {
		q := Query{Keywords: kwsets[r.IntN(len(kwsets))], Offset: r.IntN(1300), Limit: r.IntN(120) - 5}
		if r.IntN(3) == 0 {
			q.Offset = r.IntN(40)
		}
		if r.IntN(3) == 0 {
			q.FileType = []string{"pdf", "PDF", "xlsx", "md"}[r.IntN(4)]
		}
		var history []string
		for range r.IntN(4) {
			history = append(history, "s"+strconv.Itoa(r.IntN(8)))
		}
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			cold, coldTotal := Organize(docs, q, history)
			warm, warmTotal := organize(ix, q, history)
			ref, refTotal := reference(docs, q, history)
			require.Equal(t, refTotal, coldTotal, "%+v", q)
			require.Equal(t, refTotal, warmTotal, "%+v", q)
			assert.Equal(t, refs(ref), refs(cold), "%+v %v", q, history)
			assert.Equal(t, refs(ref), refs(warm), "%+v %v", q, history)
		})
	}
}

// reference is the seeds' algorithm written as plainly as possible.
func reference(docs []protocol.DPEDocumentSummary, q Query, history []string) ([]protocol.DPEDocumentSummary, int) {
	type row struct {
		d   protocol.DPEDocumentSummary
		i   int
		t   time.Time
		has bool
	}
	var rows []row
	for i, d := range docs {
		if _, err := parseDPE(d.URI); err != nil {
			continue
		}
		if len(q.Keywords) > 0 {
			hit := false
			for _, k := range q.Keywords {
				k = lower(k)
				s := ""
				if d.Summary != "" {
					s = d.Summary
				}
				if contains(lower(d.Title), k) || contains(lower(join(d.Keywords)), k) || contains(lower(s), k) {
					hit = true
				}
			}
			if !hit {
				continue
			}
		}
		if q.FileType != "" && d.FileType != q.FileType {
			continue
		}
		rw := row{d: d, i: i}
		if d.LastModified != "" {
			rw.t, rw.has = ParseInstant(d.LastModified)
		}
		rows = append(rows, rw)
	}
	var present []string
	seenSrv := map[string]bool{}
	for _, rw := range rows {
		if !seenSrv[rw.d.Server] {
			seenSrv[rw.d.Server] = true
			present = append(present, rw.d.Server)
		}
	}
	sortStrings(present)
	rank := map[string]int{}
	for i, s := range serverOrder(history, present) {
		if _, ok := rank[s]; !ok {
			rank[s] = i
		}
	}
	// Insertion sort: obviously stable.
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0; j-- {
			a, b := rows[j-1], rows[j]
			less := rank[b.d.Server] < rank[a.d.Server] ||
				rank[b.d.Server] == rank[a.d.Server] && (b.has && !a.has || b.has && a.has && b.t.After(a.t))
			if !less {
				break
			}
			rows[j-1], rows[j] = b, a
		}
	}
	offset, limit := q.page()
	out := []protocol.DPEDocumentSummary{}
	for i := offset; i < len(rows) && i < offset+limit; i++ {
		out = append(out, rows[i].d)
	}
	return out, len(rows)
}

func TestArrangeTop(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := r.IntN(300)
		base := make([]*entry, n)
		for i := range base {
			e := &entry{doc: &protocol.DPEDocumentSummary{DocRef: strconv.Itoa(i)}}
			if r.IntN(4) > 0 {
				e.hasTime, e.sec, e.nsec = true, int64(r.IntN(10)), int32(r.IntN(2))
			}
			base[i] = e
		}
		full := append([]*entry(nil), base...)
		arrange(full)
		k := r.IntN(n + 2)
		top := append([]*entry(nil), base...)
		arrangeTop(top, k)
		k = min(k, n)
		assert.Equal(t, full[:k], top[:k], "n=%d k=%d", n, k)
	}
}

func TestContainsFold(t *testing.T) {
	for _, tc := range []struct {
		s, sub string
		want   bool
	}{
		{"Annual REPORT", "report", true},
		{"Annual REPORT", "annual r", true},
		{"abc", "", true},
		{"", "a", false},
		{"ab", "abc", false},
		{"Über", "über", true},
		{"ÄRGER", "ärger", true},
		{"\u212A", "k", true}, // KELVIN SIGN lower-cases to k, as in Python
		{"straße", "strasse", false},
	} {
		assert.Equal(t, tc.want, containsFold(tc.s, tc.sub), "%q in %q", tc.sub, tc.s)
	}
}
