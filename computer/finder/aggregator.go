package finder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/answer"
	"github.com/a2c-smcp/smcp-go/computer/internal/clip"
	"github.com/a2c-smcp/smcp-go/computer/internal/rescache"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
	"github.com/mark3labs/mcp-go/mcp"
)

// Defaults of the Aggregator's options.
const (
	DefaultConcurrency = rescache.DefaultConcurrency // Level-1 reads in flight per server
	DefaultDebounce    = rescache.DefaultDebounce    // OnChange coalescing delay
	DefaultReadTimeout = rescache.DefaultReadTimeout // per Level-1 read or subscribe
	DefaultBuildBudget = rescache.DefaultBudget      // one catalog build of a server
	// DefaultRevalidation is the period of the revalidation of every
	// server's listing and Level-1 documents (WithRevalidation).
	DefaultRevalidation = time.Minute
)

// Option configures an Aggregator.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	concurrency int
	debounce    time.Duration
	readTimeout time.Duration
	budget      time.Duration
	maxAnswer   int64
	revalidate  time.Duration
	onChange    func()
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithConcurrency bounds the Level-1 reads in flight for one server during
// an aggregation (default DefaultConcurrency).
func WithConcurrency(n int) Option { return func(o *options) { o.concurrency = n } }

// WithDebounce sets how long a burst of changes must be quiet before OnChange
// runs (default DefaultDebounce; a burst never delays it by more than ten
// times this).
func WithDebounce(d time.Duration) Option { return func(o *options) { o.debounce = d } }

// WithReadTimeout bounds each Level-1 read and each subscribe (default
// DefaultReadTimeout).
func WithReadTimeout(d time.Duration) Option { return func(o *options) { o.readTimeout = d } }

// WithBuildBudget bounds one catalog build of a server — the Level-1 reads
// of AddSource, or of a re-list — as a whole (default DefaultBuildBudget, 2
// minutes). Documents are published as they are read; those not read when
// the budget is spent are left out (one warning) until the server re-lists
// or reports them updated (spec/decisions.md, Finder build budget).
func WithBuildBudget(d time.Duration) Option { return func(o *options) { o.budget = d } }

// WithMaxAnswerBytes bounds the JSON encoding of one Query answer (default
// protocol.DefaultMaxPayloadBytes, the Server's payload limit; see Query).
func WithMaxAnswerBytes(n int64) Option { return func(o *options) { o.maxAnswer = n } }

// WithRevalidation sets the period at which every server's listing and
// every Level-1 document are read again, so that a change no notification
// announced — a server without resources.subscribe, an edit it never
// reported — reaches the catalog within the period plus one round of
// reads (spec/finder.md, Update mechanism). Default DefaultRevalidation; a
// negative period turns revalidation off (the catalog then follows
// notifications only). A round re-reads every document — spread over the
// period, never slower than 100 reads a second per server — but publishes,
// and signals, only those whose Level 1 changed. The bound is thus twice
// the period (two minutes by default) for a server that answers.
func WithRevalidation(d time.Duration) Option { return func(o *options) { o.revalidate = d } }

// WithOnChange sets the function called once per burst of catalog changes;
// the Computer emits server:update_finder from it.
func WithOnChange(fn func()) Option { return func(o *options) { o.onChange = fn } }

// Aggregator is the Computer's Finder: the cache of DPEDocumentSummary of
// every MCP server's dpe:// documents, kept current from MCP
// notifications (spec/finder.md, Update mechanism). Query
// answers client:get_finder from the cache with no MCP round trip.
//
// A source's documents are its listed resources whose URI is a valid Level-1
// dpe:// URI. Each Level 1 is read and must validate against
// dpe_document_meta.json and name the document of its URI (its doc_ref);
// otherwise the document is skipped with a warning. The
// summary's uri is the URI as listed and server is Source.Name(); documents
// with equal instants keep the server's listing order.
//
// All methods are safe for concurrent use. StartSource,
// ResourceListChanged and ResourceUpdated return at once: their MCP calls
// run in the background, each document read on its own, so that a document
// that hangs delays only itself (its read is bounded by WithReadTimeout)
// and an MCP server's event goroutine is never held. AddSource waits for
// the cold aggregation; Wait waits for whatever is in flight.
type Aggregator struct {
	cache     *rescache.Cache[*entry]
	log       *slog.Logger
	maxAnswer int64
	clipped   atomic.Int64 // documents whose keywords were cut (see decodeDocument)
}

// maxKeywords is how many keywords the Finder keeps of one document: the
// schema bounds each keyword (256 characters), not their number, and a
// DPE server may send 32 MiB of them per document.
const maxKeywords = 256

// New returns an empty Aggregator.
func New(opts ...Option) *Aggregator {
	o := options{logger: slog.Default(), debounce: DefaultDebounce, revalidate: DefaultRevalidation}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.maxAnswer <= 0 {
		o.maxAnswer = protocol.DefaultMaxPayloadBytes
	}
	codec := rescache.Codec[*entry]{
		Select:  selectDocument,
		Match:   matchDocument,
		Decode:  nil, // set below: it needs the Aggregator
		Arrange: arrange,
	}
	a := &Aggregator{log: o.logger, maxAnswer: o.maxAnswer}
	codec.Decode = a.decodeDocument
	a.cache = rescache.New(codec, rescache.Options{
		Kind:        "finder",
		Logger:      o.logger,
		Concurrency: o.concurrency,
		ReadTimeout: o.readTimeout,
		Budget:      o.budget,
		Debounce:    o.debounce,
		Revalidate:  max(o.revalidate, 0),
		// A restarted server's first documents are announced as soon as
		// they are read (issue 27).
		PublishEarly: true,
		OnChange:     o.onChange,
	})
	return a
}

// Build is a cold aggregation started by StartSource.
type Build struct{ b rescache.Build }

// Done is closed when the build has ended, its reads included.
func (b Build) Done() <-chan struct{} { return b.b.Done() }

// Err is the listing's error once Done is closed.
func (b Build) Err() error { return b.b.Err() }

// StartSource begins the cold aggregation of src and returns at once: list
// its resources, subscribe to and read every Level-1 document, publishing
// them as they are read, within the build budget (WithBuildBudget). It
// replaces the documents of a previous source of the same name (a
// restarted server); notifications of the new source are handled while
// the build runs, so the first document that changes after a restart is
// announced as soon as it is read. A listing failure (Build.Err) leaves the
// source known, so that a later ResourceListChanged can fill it.
//
// A source that does not declare resources.subscribe (spec/finder.md,
// Writing a DPE server, requires it) is aggregated all the same, without
// subscribing, and a warning says so: its documents are refreshed by its
// list_changed and updated notifications (if it sends any) and by the
// revalidation (WithRevalidation). Leaving it out would hide documents that
// remain readable; the official Python SDK's low-level server declares
// subscribe=false unless its capabilities are patched
// (docs/dpe-server-python.md).
func (a *Aggregator) StartSource(ctx context.Context, src mcpsource.Source) Build {
	if !src.SupportsSubscribe() {
		a.log.Warn("finder: MCP server does not declare resources.subscribe; its documents are listed, "+
			"but edits reach the Finder only when it sends resources/list_changed or resources/updated, or at the next revalidation. "+
			"A server made with the Python SDK's low-level Server declares subscribe=false unless its "+
			"capabilities are patched (see docs/dpe-server-python.md)", "server", src.Name())
	}
	return Build{a.cache.Start(ctx, src)}
}

// AddSource is StartSource, waiting for the build to end (or ctx); it
// returns the listing's error.
func (a *Aggregator) AddSource(ctx context.Context, src mcpsource.Source) error {
	b := a.StartSource(ctx, src)
	select {
	case <-b.Done():
		return b.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RemoveSource withdraws every document of the named server (it stopped or
// crashed) and stops its reads; OnChange runs when it had documents.
func (a *Aggregator) RemoveSource(name string) { a.cache.Remove(name) }

// ResourceListChanged handles notifications/resources/list_changed, in the
// background: re-list, diff the dpe:// URI sets, read only the new
// documents, drop the removed ones. An unchanged set reads nothing and
// signals nothing. Re-lists of one server are coalesced.
func (a *Aggregator) ResourceListChanged(ctx context.Context, name string) {
	a.cache.Refresh(ctx, name, false)
}

// ResourceUpdated handles notifications/resources/updated, in the
// background: for a dpe:// URI of a listed document (any level of it) that
// one Level 1 is re-read — one read, on its own — and a change is signalled
// when it changed. The catalog URI dpe://host re-lists the server and
// re-reads every document; a document not listed yet re-lists it
// (spec/finder.md, Update mechanism). Other URIs are ignored.
func (a *Aggregator) ResourceUpdated(ctx context.Context, name, uri string) {
	a.cache.Update(ctx, name, uri)
}

// Wait returns when the work in flight (builds, re-lists, re-reads, a
// revalidation round) has ended, or ctx ends.
func (a *Aggregator) Wait(ctx context.Context) error { return a.cache.Wait(ctx) }

// Version grows at every change of the catalog, and only then.
func (a *Aggregator) Version() uint64 { return a.cache.Version() }

// Query answers client:get_finder from the cache (no MCP round trip): the
// request's filter and page applied by the organizer (see Organize). history
// lists the MCP server names of the tool-call history, oldest first. ReqID is
// copied from the request.
//
// The answer fits the payload limit (WithMaxAnswerBytes; spec/protocol.md,
// Limits): a page whose documents would exceed it ends with the last
// document that fits — fewer than limit, total_count unchanged, so the
// Agent goes on with a larger offset — and a first document too large on
// its own is sent with its keywords left out and its title and summary
// clipped to 256 characters (one warning). Without it, 100 documents with
// long titles, summaries or keyword lists (a DPE server may send 32 MiB per
// document) made an answer the Server refuses by closing the connection.
func (a *Aggregator) Query(req protocol.GetFinderReq, history []string) protocol.GetFinderRet {
	snap := a.cache.Snapshot()
	docs, total := organize(index{servers: snap.Servers, byServer: snap.Items}, QueryFrom(req), history)
	return protocol.GetFinderRet{Documents: a.fit(docs), TotalCount: total, ReqID: req.ReqID}
}

// fit cuts a page to the answer budget (see Query).
func (a *Aggregator) fit(docs []protocol.DPEDocumentSummary) []protocol.DPEDocumentSummary {
	budget := a.maxAnswer - answer.Envelope
	var used int64
	for i := range docs {
		n := answer.Size(docs[i])
		if i == 0 && n > budget {
			a.log.Warn("finder: a document's summary alone exceeds the answer limit; sent clipped",
				"uri", clip.String(docs[i].URI, 80), "bytes", n, "limit", a.maxAnswer, "code", int(protocol.CodePayloadTooLarge))
			d := docs[i]
			d.Keywords = nil
			d.Title = clip.Runes(d.Title, 256)
			if d.Summary != "" {
				s := clip.Runes(d.Summary, 256)
				d.Summary = s
			}
			docs[i] = d
			n = answer.Size(d)
		}
		if used+n > budget && i > 0 {
			a.log.Debug("finder: answer cut to the payload limit", "documents", i, "of", len(docs), "limit", a.maxAnswer)
			return docs[:i]
		}
		used += n
	}
	return docs
}

// Documents returns every cached summary, servers alphabetically, each
// server's documents by last_modified descending.
func (a *Aggregator) Documents() []protocol.DPEDocumentSummary {
	snap := a.cache.Snapshot()
	out := make([]protocol.DPEDocumentSummary, 0, snap.Len)
	for _, s := range snap.Servers {
		for _, e := range snap.Items[s] {
			out = append(out, *e.doc)
		}
	}
	return out
}

// Len is the number of cached documents.
func (a *Aggregator) Len() int { return a.cache.Snapshot().Len }

// Close cancels in-flight refreshes and stops OnChange. Query keeps answering
// from the last cache.
func (a *Aggregator) Close() { a.cache.Close() }

// selectDocument keeps listed Level-1 dpe:// URIs, keyed by their canonical
// form.
func selectDocument(uri string) (string, bool) {
	u, err := dpe.Parse(uri)
	if err != nil || u.Level() != dpe.LevelDocument {
		return "", false
	}
	return u.Document().String(), true
}

// matchDocument maps an updated URI at any document level to its document;
// the catalog maps to no document, so that its update re-lists the server
// (as does the update of a document not listed yet).
func matchDocument(uri string) (string, bool) {
	u, err := dpe.Parse(uri)
	if err != nil {
		return "", false
	}
	if u.Level() == dpe.LevelCatalog {
		return "", true
	}
	return u.Document().String(), true
}

var errNoText = errors.New("no text content")

// decodeDocument turns a Level-1 read into a prepared summary. Keywords past
// maxKeywords are left out (a warning for the first ten documents so cut,
// debug level after).
func (a *Aggregator) decodeDocument(server string, res mcp.Resource, contents []protocol.ResourceContents) (*entry, error) {
	uri := res.URI
	var raw []byte
	for _, c := range contents {
		if c.Text != nil {
			raw = []byte(*c.Text)
			break
		}
	}
	if raw == nil {
		return nil, errNoText
	}
	// Only the metadata is checked: the catalog needs nothing else, and a
	// server that sends a page index (or a rendering) it was not asked for
	// must not lose the document over it (spec/finder.md, Reading the
	// levels).
	if err := protocol.ValidateSchema("dpe_document_meta.json", raw); err != nil {
		return nil, fmt.Errorf("invalid Level 1: %w", err)
	}
	var d protocol.DPEDocument
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("invalid Level 1: %w", err)
	}
	// A Level 1 that names another document (a server answering a
	// different URI than asked) would publish a doc_ref that reads
	// something else: it is skipped.
	if u, err := dpe.Parse(uri); err == nil && u.DocRef != d.DocRef {
		return nil, fmt.Errorf("invalid Level 1: %s answers doc_ref %q, not %q", uri, clip.String(d.DocRef, 80), clip.String(u.DocRef, 80))
	}
	if n := len(d.Keywords); n > maxKeywords {
		level := slog.LevelWarn
		if a.clipped.Add(1) > 10 {
			level = slog.LevelDebug
		}
		a.log.Log(context.Background(), level, "finder: a document lists more keywords than the Finder keeps; keeping the first ones",
			"server", server, "uri", clip.String(uri, 80), "keywords", n, "kept", maxKeywords, "code", int(protocol.CodePayloadTooLarge))
		d.Keywords = slices.Clone(d.Keywords[:maxKeywords]) // not the whole array behind them
	}
	return cached(protocol.DPEDocumentSummary{
		DocRef:       d.DocRef,
		FileType:     d.FileType,
		FileURI:      d.FileURI,
		Keywords:     d.Keywords,
		LastModified: d.LastModified,
		PageCount:    d.PageCount,
		Server:       server,
		Summary:      d.Summary,
		Title:        d.Title,
		URI:          uri,
	}), nil
}
