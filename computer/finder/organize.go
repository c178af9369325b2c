package finder

import (
	"slices"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// Paging bounds of client:get_finder (spec/finder.md, Organizer,
// 步骤 4).
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Query holds the filter and page of one organize_finder call.
type Query struct {
	// Keywords keep documents whose title, keywords or summary contains any
	// of them, case-insensitively. Empty: no keyword filter.
	Keywords []string
	// FileType keeps documents whose file_type equals it exactly
	// (case-sensitive). Empty: no file-type filter.
	FileType string
	// Offset is the index of the first document returned; < 0 counts as 0.
	Offset int
	// Limit is the page size: ≤ 0 means DefaultLimit, above MaxLimit is
	// MaxLimit.
	Limit int
}

// QueryFrom reads the filter and page of a client:get_finder request.
func QueryFrom(req protocol.GetFinderReq) Query {
	q := Query{Keywords: req.Keywords, Offset: req.Offset, Limit: req.Limit}
	if req.FileType != "" {
		q.FileType = req.FileType
	}
	return q
}

func (q Query) page() (offset, limit int) {
	offset, limit = q.Offset, q.Limit
	if offset < 0 {
		offset = 0
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		limit = MaxLimit
	}
	return offset, limit
}

// Organize is organize_finder (spec/finder.md, Organizer). It returns one page
// of docs and total_count, the number of documents left after filtering:
//
//  1. Documents whose uri is not a valid dpe:// URI (dpe.IsValid: the
//     eight validation rules) are dropped.
//  2. With keywords, a document is kept when any keyword is contained,
//     case-insensitively, in its title, in its keywords joined by spaces, or
//     in its summary.
//  3. With a file type, a document is kept when its file_type equals it
//     exactly (case-sensitive).
//  4. Servers are ordered by the tool-call history read backwards and
//     de-duplicated (most recently used first), then the servers absent from
//     the history alphabetically. history is oldest first.
//  5. Within a server, documents are ordered by last_modified descending,
//     compared as instants (RFC 3339 with any UTC offset). Documents without
//     last_modified — or with one that is not a valid timestamp — come last.
//     Ties keep the input order.
//  6. The page starts at q.Offset and holds at most q.Limit documents.
//
// Timestamps accepted as instants: RFC 3339 ("2026-01-15T08:30:00Z",
// "2026-03-01T00:00:00+08:00", fractional seconds allowed, "t"/"z" in any
// case, a space for "T" as RFC 3339 §5.6 allows); a date-time without offset ("2026-01-15T08:30:00") and a bare date
// ("2026-01-15") are read as UTC. Anything else is treated as missing.
//
// The returned summaries share their slices and pointers with docs.
func Organize(docs []protocol.DPEDocumentSummary, q Query, history []string) ([]protocol.DPEDocumentSummary, int) {
	kws := lowerAll(q.Keywords)
	// Cheap filters first; only the documents kept are validated and timed.
	entries := make([]entry, 0, len(docs))
	for i := range docs {
		d := &docs[i]
		if q.FileType != "" && d.FileType != q.FileType {
			continue
		}
		if len(kws) > 0 && !matchFold(d, kws) {
			continue
		}
		if !dpe.IsValid(d.URI) {
			continue
		}
		entries = append(entries, timed(d))
	}
	var servers []string
	byServer := map[string][]*entry{}
	for i := range entries {
		e := &entries[i]
		if _, ok := byServer[e.doc.Server]; !ok {
			servers = append(servers, e.doc.Server)
		}
		byServer[e.doc.Server] = append(byServer[e.doc.Server], e)
	}
	slices.Sort(servers)

	offset, limit := q.page()
	page := make([]protocol.DPEDocumentSummary, 0, min(limit, len(entries)))
	total := 0
	for _, s := range serverOrder(history, servers) {
		es := byServer[s]
		lo, hi := max(offset-total, 0), min(len(es), offset+limit-total)
		if lo < hi {
			// Only the part of this server's order that reaches the page is
			// sorted.
			arrangeTop(es, hi)
			for _, e := range es[lo:hi] {
				page = append(page, *e.doc)
			}
		}
		total += len(es)
	}
	return page, total
}

// entry is a summary prepared for organising: its instant parsed once and,
// in the cache, its searchable fields lower-cased once.
type entry struct {
	doc *protocol.DPEDocumentSummary

	hasTime bool
	sec     int64
	nsec    int32

	title, kw, summary string // lower-cased (cached entries only)
}

func timed(d *protocol.DPEDocumentSummary) entry {
	e := entry{doc: d}
	if d.LastModified != "" {
		if t, ok := ParseInstant(d.LastModified); ok {
			e.hasTime, e.sec, e.nsec = true, t.Unix(), int32(t.Nanosecond())
		}
	}
	return e
}

// cached prepares d for the cache: timed and lower-cased.
func cached(d protocol.DPEDocumentSummary) *entry {
	e := timed(&d)
	e.title = strings.ToLower(d.Title)
	e.kw = strings.ToLower(strings.Join(d.Keywords, " "))
	if d.Summary != "" {
		e.summary = strings.ToLower(d.Summary)
	}
	return &e
}

// newer orders a before b: later instants first, missing instants last.
func newer(a, b *entry) int {
	switch {
	case a.hasTime && !b.hasTime:
		return -1
	case !a.hasTime && b.hasTime:
		return 1
	case !a.hasTime:
		return 0
	case a.sec != b.sec:
		if a.sec > b.sec {
			return -1
		}
		return 1
	case a.nsec != b.nsec:
		if a.nsec > b.nsec {
			return -1
		}
		return 1
	}
	return 0
}

type ranked struct {
	e *entry
	i int // input order: equal instants keep it
}

func before(a, b ranked) int {
	if c := newer(a.e, b.e); c != 0 {
		return c
	}
	return a.i - b.i
}

// arrange sorts one server's entries for organising, keeping the input order
// of equal instants (an index-tie-broken pdqsort: several times faster than
// a stable merge sort on 10⁵ entries).
func arrange(es []*entry) {
	tmp := make([]ranked, len(es))
	for i, e := range es {
		tmp[i] = ranked{e, i}
	}
	slices.SortFunc(tmp, before)
	for i := range tmp {
		es[i] = tmp[i].e
	}
}

// arrangeTop makes es[:k] the first k entries of arrange's order, in order;
// the rest of es is left in no particular order. A small k is selected with
// a bounded heap instead of sorting everything.
func arrangeTop(es []*entry, k int) {
	if k <= 0 {
		return
	}
	if k >= len(es) || k*8 >= len(es) {
		arrange(es)
		return
	}
	// Max-heap (by arrange order) of the k best seen so far.
	h := make([]ranked, 0, k)
	down := func(i int) {
		for {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && before(h[l], h[m]) > 0 {
				m = l
			}
			if r < len(h) && before(h[r], h[m]) > 0 {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i, e := range es {
		x := ranked{e, i}
		if len(h) < k {
			h = append(h, x)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if before(h[j], h[p]) <= 0 {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
			continue
		}
		if before(x, h[0]) < 0 {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, before)
	for i := range h {
		es[i] = h[i].e
	}
}

// index is the cache: entries grouped by server, each group arranged.
type index struct {
	servers  []string // alphabetical
	byServer map[string][]*entry
}

// serverOrder is step 4: the history read backwards and de-duplicated, then
// the other servers of present (sorted) in order.
func serverOrder(history, present []string) []string {
	order := make([]string, 0, len(present)+len(history))
	seen := make(map[string]bool, len(history))
	for i := len(history) - 1; i >= 0; i-- {
		if s := history[i]; !seen[s] {
			seen[s] = true
			order = append(order, s)
		}
	}
	for _, s := range present {
		if !seen[s] {
			order = append(order, s)
		}
	}
	return order
}

// organize answers a query from the cache: it walks the arranged groups in
// server order, filtering, counting and cutting the page. Without a filter
// only the page is visited.
func organize(ix index, q Query, history []string) ([]protocol.DPEDocumentSummary, int) {
	offset, limit := q.page()
	page := make([]protocol.DPEDocumentSummary, 0, min(limit, 16))
	kws := lowerAll(q.Keywords)
	filtered := len(kws) > 0 || q.FileType != ""
	total := 0
	for _, s := range serverOrder(history, ix.servers) {
		es := ix.byServer[s]
		if !filtered {
			if lo, hi := max(offset-total, 0), min(len(es), offset+limit-total); lo < hi {
				for _, e := range es[lo:hi] {
					page = append(page, *e.doc)
				}
			}
			total += len(es)
			continue
		}
		for _, e := range es {
			if !e.match(kws, q.FileType) {
				continue
			}
			if total >= offset && len(page) < limit {
				page = append(page, *e.doc)
			}
			total++
		}
	}
	return page, total
}

// match applies the filters to a cached (lower-cased) entry.
func (e *entry) match(kws []string, fileType string) bool {
	if fileType != "" && e.doc.FileType != fileType {
		return false
	}
	if len(kws) == 0 {
		return true
	}
	for _, k := range kws {
		if strings.Contains(e.title, k) || strings.Contains(e.kw, k) || strings.Contains(e.summary, k) {
			return true
		}
	}
	return false
}

func lowerAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

// matchFold is the keyword filter on a plain summary, without lower-casing
// copies: kws are lower-cased already.
func matchFold(d *protocol.DPEDocumentSummary, kws []string) bool {
	for _, k := range kws {
		if containsFold(d.Title, k) || (d.Summary != "" && containsFold(d.Summary, k)) {
			return true
		}
		if strings.IndexByte(k, ' ') < 0 {
			// Without a space a match cannot span the separator of the
			// joined keywords: it lies inside one of them.
			for _, w := range d.Keywords {
				if containsFold(w, k) {
					return true
				}
			}
		} else if containsFold(strings.Join(d.Keywords, " "), k) {
			return true
		}
	}
	return false
}

// containsFold reports whether lower(s) contains sub (sub lower-cased). ASCII
// text is compared in place; anything else goes through strings.ToLower so
// that the result is exactly that of lower-casing.
func containsFold(s, sub string) bool {
	n := len(sub)
	if n == 0 {
		return true
	}
	if !isASCII(s) || !isASCII(sub) {
		return strings.Contains(strings.ToLower(s), sub)
	}
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n && lowerASCII(s[i+j]) == sub[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// instantLayouts are tried in order by ParseInstant; the last two carry no
// offset and are read as UTC.
var instantLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"}

// ParseInstant reads a last_modified value as an instant (see Organize for
// the accepted forms).
func ParseInstant(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 10 && (s[10] == 't' || s[10] == ' ') {
		s = s[:10] + "T" + s[11:]
	}
	if n := len(s); n > 0 && s[n-1] == 'z' {
		s = s[:n-1] + "Z"
	}
	for _, l := range instantLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
