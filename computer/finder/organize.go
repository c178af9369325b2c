package finder

import (
	"slices"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// Paging bounds of client:get_finder (finder-spec.md, Finder Organizer 策略,
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
	if req.FileType != nil {
		q.FileType = *req.FileType
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

// Organize is organize_finder (finder-spec.md, "Finder Organizer 策略";
// finder-sdk-guide.txt, "Finder Organizer 算法"). It returns one page of
// docs and total_count, the number of documents left after filtering:
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
// case); a date-time without offset ("2026-01-15T08:30:00") and a bare date
// ("2026-01-15") are read as UTC. Anything else is treated as missing.
//
// The returned summaries share their slices and pointers with docs.
func Organize(docs []protocol.DPEDocumentSummary, q Query, history []string) ([]protocol.DPEDocumentSummary, int) {
	entries := make([]entry, 0, len(docs))
	for i := range docs {
		if !dpe.IsValid(docs[i].URI) {
			continue
		}
		entries = append(entries, newEntry(docs[i], false))
	}
	return organize(groupEntries(entries), q, history)
}

// entry is a summary prepared for organising: its instant parsed once and,
// when asked, its searchable fields lower-cased once.
type entry struct {
	doc protocol.DPEDocumentSummary

	hasTime bool
	sec     int64
	nsec    int32

	lowered            bool
	title, kw, summary string // lower-cased; valid when lowered
}

func newEntry(d protocol.DPEDocumentSummary, lower bool) entry {
	e := entry{doc: d}
	if d.LastModified != nil {
		if t, ok := ParseInstant(*d.LastModified); ok {
			e.hasTime, e.sec, e.nsec = true, t.Unix(), int32(t.Nanosecond())
		}
	}
	if lower {
		e.lower()
	}
	return e
}

func (e *entry) lower() {
	e.title = strings.ToLower(e.doc.Title)
	e.kw = strings.ToLower(strings.Join(e.doc.Keywords, " "))
	if e.doc.Summary != nil {
		e.summary = strings.ToLower(*e.doc.Summary)
	}
	e.lowered = true
}

// newer reports whether a sorts before b: later instants first, missing
// instants last.
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

// arrange sorts one server's entries for organising (stable).
func arrange(es []*entry) { slices.SortStableFunc(es, newer) }

// index is a set of entries grouped by server, each group arranged.
type index struct {
	servers  []string // alphabetical
	byServer map[string][]*entry
}

func groupEntries(entries []entry) index {
	ix := index{byServer: map[string][]*entry{}}
	for i := range entries {
		e := &entries[i]
		s := e.doc.Server
		if _, ok := ix.byServer[s]; !ok {
			ix.servers = append(ix.servers, s)
		}
		ix.byServer[s] = append(ix.byServer[s], e)
	}
	slices.Sort(ix.servers)
	for _, es := range ix.byServer {
		arrange(es)
	}
	return ix
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

// organize walks the arranged index in server order, filtering, counting
// and cutting the page. Without a filter only the page is visited.
func organize(ix index, q Query, history []string) ([]protocol.DPEDocumentSummary, int) {
	offset, limit := q.page()
	page := make([]protocol.DPEDocumentSummary, 0, min(limit, 16))
	var kws []string
	for _, k := range q.Keywords {
		kws = append(kws, strings.ToLower(k))
	}
	filtered := len(kws) > 0 || q.FileType != ""
	total := 0
	for _, s := range serverOrder(history, ix.servers) {
		es := ix.byServer[s]
		if !filtered {
			// Every entry counts: take the part of the page in this server.
			if lo := offset - total; lo < len(es) && len(page) < limit {
				lo = max(lo, 0)
				hi := min(len(es), lo+limit-len(page))
				for _, e := range es[lo:hi] {
					page = append(page, e.doc)
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
				page = append(page, e.doc)
			}
			total++
		}
	}
	return page, total
}

func (e *entry) match(kws []string, fileType string) bool {
	if fileType != "" && e.doc.FileType != fileType {
		return false
	}
	if len(kws) == 0 {
		return true
	}
	if !e.lowered {
		e.lower()
	}
	for _, k := range kws {
		if strings.Contains(e.title, k) || strings.Contains(e.kw, k) || strings.Contains(e.summary, k) {
			return true
		}
	}
	return false
}

// instantLayouts are tried in order by ParseInstant; the last two carry no
// offset and are read as UTC.
var instantLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"}

// ParseInstant reads a last_modified value as an instant (see Organize for
// the accepted forms).
func ParseInstant(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 10 && (s[10] == 't') {
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
