package dpekit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// MIMEType is the MIME type of every dpe:// resource the kit serves, whatever
// the format query parameter (spec/decisions.md, Finder reads).
const MIMEType = "application/json"

// Option configures a Server.
type Option func(*config)

type config struct {
	name       string
	version    string
	logger     *slog.Logger
	mcpOptions []server.ServerOption
	validate   bool
	stallWarn  time.Duration
	startup    time.Duration
}

// DefaultStartupWait is how long New waits for the Provider's first listing
// before it returns and lets the listing finish in the background.
const DefaultStartupWait = 2 * time.Second

// WithStartupWait bounds how long New waits for the Provider's first
// Documents call (default DefaultStartupWait). When the listing takes longer
// New returns anyway: the Server answers initialize and reads at once (reads
// go to the Provider, not to the listing), resources/list shows the catalog
// only, and when the listing ends its documents are registered and every
// session gets resources/list_changed. A listing that fails after the wait is
// logged. A negative or zero d waits without bound.
func WithStartupWait(d time.Duration) Option { return func(c *config) { c.startup = d } }

// WithName sets the MCP server name announced in the initialize result
// (default "dpekit").
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithVersion sets the MCP server version announced in the initialize result
// (default "0.1.0").
func WithVersion(version string) Option { return func(c *config) { c.version = version } }

// WithLogger sets the logger for warnings (provider failures, stalled
// sessions). Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithMCPOptions passes extra options to mcp-go's server.NewMCPServer. The
// kit's own options (resource capabilities, completions, recovery, hooks) are
// applied after them, so server.WithHooks must not be used: add hooks to
// MCPServer().GetHooks() instead.
func WithMCPOptions(opts ...server.ServerOption) Option {
	return func(c *config) { c.mcpOptions = append(c.mcpOptions, opts...) }
}

// WithValidation makes the Server check every payload it serves against its
// JSON Schema (schema/dpe_*.json) and answer 500 with the violations instead
// of a malformed payload. The catalog (Level 0) is checked document by
// document: a document whose entry violates dpe_document_meta.json is left
// out of it with a warning (code 500 and the violations), and the others
// are listed; reading that document answers 500. It costs a few tens of microseconds per read and is
// meant for provider development and tests.
func WithValidation() Option { return func(c *config) { c.validate = true } }

// Server serves one Provider as a Finder-ready MCP server (spec/finder.md,
// Writing a DPE server). Create it with New, serve it with ServeStdio, ServeIO
// or NewStreamableHTTPHandler, and Close it when done.
type Server struct {
	host     string
	provider Provider
	mcp      *server.MCPServer
	log      *slog.Logger
	validate bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	syncMu    sync.Mutex              // serialises resource synchronisation
	resources map[string]mcp.Resource // Level-1 resources registered, by URI

	changes *changeQueue
	subs    *subscriptions

	closeOnce sync.Once
}

// New creates a Server for provider under the dpe:// host (a reverse-domain
// name such as "com.example.docs"). It lists the provider's documents once to
// register their resources — waiting at most WithStartupWait for that
// listing, which then finishes in the background — and starts the
// provider's Watcher, if any.
func New(ctx context.Context, host string, provider Provider, opts ...Option) (*Server, error) {
	u, err := dpe.Parse("dpe://" + host)
	if err != nil || u.Host != host || u.Level() != dpe.LevelCatalog {
		return nil, protocol.NewBadRequest("dpekit: invalid host %q", host)
	}
	if provider == nil {
		return nil, protocol.NewBadRequest("dpekit: nil provider")
	}
	cfg := config{name: "dpekit", version: "0.1.0", logger: slog.Default(), stallWarn: 10 * time.Second, startup: DefaultStartupWait}
	for _, o := range opts {
		o(&cfg)
	}
	sctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		host:      host,
		provider:  provider,
		log:       cfg.logger,
		validate:  cfg.validate,
		ctx:       sctx,
		cancel:    cancel,
		resources: map[string]mcp.Resource{},
	}
	s.subs = newSubscriptions(s, cfg.stallWarn)
	s.changes = newChangeQueue()

	hooks := &server.Hooks{}
	s.subs.install(hooks)
	// mcp-go sends resources/list_changed itself on every AddResources when
	// the capability is on — also when only a document's metadata changed —
	// and drops it when a session's queue is full. The kit sends its own,
	// once per change of the set of URIs and never dropped (subscriptions),
	// so mcp-go's is turned off and the capability declared in the
	// initialize result instead.
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if res.Capabilities.Resources != nil {
			res.Capabilities.Resources.ListChanged = true
		}
	})
	mcpOpts := append([]server.ServerOption{}, cfg.mcpOptions...)
	mcpOpts = append(mcpOpts,
		server.WithResourceCapabilities(true, false),
		server.WithCompletions(),
		server.WithResourceCompletionProvider(completer{s}),
		server.WithResourceRecovery(),
		server.WithRecovery(),
		server.WithHooks(hooks),
	)
	s.mcp = server.NewMCPServer(cfg.name, cfg.version, mcpOpts...)

	catalog := dpe.CatalogURI(host).String()
	s.mcp.AddResource(mcp.NewResource(catalog, catalogName(host),
		mcp.WithResourceTitle("Document catalog"),
		mcp.WithResourceDescription("Level 0: every document this server holds (dpe:// catalog)"),
		mcp.WithMIMEType(MIMEType),
	), s.handleRead)
	s.mcp.AddResourceTemplates(
		server.ServerResourceTemplate{
			Template: mcp.NewResourceTemplate("dpe://"+host+"/{doc_ref}/pages/{page_index}", "Document page",
				mcp.WithTemplateDescription("Level 2: one page of a document with its elements; query: categories, format"),
				mcp.WithTemplateMIMEType(MIMEType)),
			Handler: s.handleRead,
		},
		server.ServerResourceTemplate{
			Template: mcp.NewResourceTemplate("dpe://"+host+"/{doc_ref}/elements/{element_id}", "Document element",
				mcp.WithTemplateDescription("Level 3: one element of a document in full; query: format"),
				mcp.WithTemplateMIMEType(MIMEType)),
			Handler: s.handleRead,
		},
		// mcp-go matches templates without their query string, so every
		// other dpe:// URI of this host (Levels 0–3 with query parameters)
		// reaches the same router through RFC 6570 reserved expansion.
		server.ServerResourceTemplate{
			Template: mcp.NewResourceTemplate("dpe://"+host+"{+path}", "Any dpe:// URI of "+host,
				mcp.WithTemplateDescription("Every level with query parameters (format, depth, offset, limit, categories)"),
				mcp.WithTemplateMIMEType(MIMEType)),
			Handler: s.handleRead,
		},
		// Any other URI (another host, another scheme, "dpe:///x") would
		// get mcp-go's -32002 "handler not found"; the router answers it
		// with the protocol's code instead: 4201 for another host, 4204 for
		// an invalid dpe:// URI.
		server.ServerResourceTemplate{
			Template: mcp.NewResourceTemplate("{+uri}", "URIs not served here",
				mcp.WithTemplateDescription("Any URI that is not a dpe:// URI of "+host+": answered with 4201 (another host) or 4204 (not a valid dpe:// URI)"),
				mcp.WithTemplateMIMEType(MIMEType)),
			Handler: s.handleRead,
		},
	)

	if err := s.firstSync(ctx, cfg.startup); err != nil {
		cancel()
		return nil, err
	}
	if w, ok := provider.(Watcher); ok {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := w.Watch(s.ctx, s.Notify); err != nil && s.ctx.Err() == nil {
				s.log.Warn("dpekit: provider watch ended", "host", host, "err", err)
			}
		}()
	}
	return s, nil
}

// firstSync registers the Provider's documents, waiting at most wait (see
// WithStartupWait). A listing that fails within the wait is returned.
func (s *Server) firstSync(ctx context.Context, wait time.Duration) error {
	done := make(chan error, 1)
	lctx, stop := context.WithCancel(s.ctx)
	go func() {
		defer stop()
		_, err := s.syncResources(lctx)
		done <- err
	}()
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case err := <-done:
		if err == nil {
			s.wg.Add(1)
			go s.processChanges()
		}
		return err
	case <-ctx.Done():
		stop()
		<-done
		return ctx.Err()
	case <-timeout:
	}
	s.log.Warn("dpekit: listing the documents takes long; serving while it finishes",
		"host", s.host, "waited", wait)
	// Changes wait for the first listing, so that its older result never
	// overwrites a newer one.
	s.wg.Add(1)
	go func() {
		select {
		case err := <-done:
			if err != nil && s.ctx.Err() == nil {
				s.log.Warn("dpekit: listing documents failed", "host", s.host, "err", err)
			} else if err == nil {
				s.log.Info("dpekit: documents listed", "host", s.host)
				s.subs.listChanged()
			}
			s.processChanges() // calls s.wg.Done
		case <-s.ctx.Done():
			<-done
			s.wg.Done()
		}
	}()
	return nil
}

// Host returns the dpe:// host the Server serves.
func (s *Server) Host() string { return s.host }

// MCPServer returns the underlying mcp-go server, for serving it with a
// transport of one's own or adding tools and prompts beside the documents.
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

// Close stops the Watcher and the notification senders. It does not close
// transports: end ServeStdio's context or shut the HTTP handler down first.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.wg.Wait()
	})
	return nil
}

// Notify reports a change of one document: the kit re-lists the documents,
// updates the registered resources, sends resources/list_changed to every
// session when the set of documents changed, and resources/updated to every
// session subscribed to one of the document's URIs or to the catalog.
// Changes are processed in order on the Server's own goroutine, bursts being
// coalesced per document; Notify never blocks.
func (s *Server) Notify(c Change) {
	if s.ctx.Err() != nil {
		return
	}
	s.changes.add(c)
}

func catalogName(host string) string { return "Catalog of " + host }

// documentName is unique per document (mcp-go's list cursor is the last
// resource name, so equal names across a page boundary would be skipped).
func documentName(d Document) string {
	title := d.Title
	if title == "" {
		title = d.DocRef
	}
	return fmt.Sprintf("%s [%s]", title, d.DocRef)
}

func (s *Server) documentResource(d Document) mcp.Resource {
	opts := []mcp.ResourceOption{mcp.WithMIMEType(MIMEType)}
	if d.Title != "" {
		opts = append(opts, mcp.WithResourceTitle(d.Title))
	}
	if d.Summary != "" {
		opts = append(opts, mcp.WithResourceDescription(d.Summary))
	}
	if !d.LastModified.IsZero() {
		opts = append(opts, mcp.WithLastModified(formatTime(d.LastModified)))
	}
	return mcp.NewResource(dpe.DocumentURI(s.host, d.DocRef).String(), documentName(d), opts...)
}

// syncResources registers one Level-1 resource per document and removes
// those of documents that are gone. It reports whether the set of URIs
// changed.
func (s *Server) syncResources(ctx context.Context) (bool, error) {
	docs, err := s.provider.Documents(ctx)
	if err != nil {
		return false, fmt.Errorf("dpekit: listing documents: %w", err)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	want := make(map[string]mcp.Resource, len(docs))
	for _, d := range docs {
		if d.DocRef == "" {
			s.log.Warn("dpekit: document without doc_ref skipped", "title", d.Title)
			continue
		}
		r := s.documentResource(d)
		want[r.URI] = r
	}
	var add []server.ServerResource
	var del []string
	for uri, r := range want {
		if old, ok := s.resources[uri]; !ok || !sameResource(old, r) {
			add = append(add, server.ServerResource{Resource: r, Handler: s.handleRead})
		}
	}
	changed := false
	for uri := range s.resources {
		if _, ok := want[uri]; !ok {
			del = append(del, uri)
			changed = true
		}
	}
	for uri := range want {
		if _, ok := s.resources[uri]; !ok {
			changed = true
		}
	}
	if len(del) > 0 {
		s.mcp.DeleteResources(del...)
	}
	if len(add) > 0 {
		s.mcp.AddResources(add...)
	}
	s.resources = want
	return changed, nil
}

func sameResource(a, b mcp.Resource) bool {
	la, lb := "", ""
	if a.Annotations != nil {
		la = a.Annotations.LastModified
	}
	if b.Annotations != nil {
		lb = b.Annotations.LastModified
	}
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description && la == lb
}

// changeQueue coalesces changes per document until the worker takes them.
// Whatever the kind, a change is handled the same way (re-list, then notify
// the document's subscribers), so only the document matters.
type changeQueue struct {
	mu      sync.Mutex
	pending map[string]bool
	order   []string
	wake    chan struct{}
}

func newChangeQueue() *changeQueue {
	return &changeQueue{pending: map[string]bool{}, wake: make(chan struct{}, 1)}
}

func (q *changeQueue) add(c Change) {
	q.mu.Lock()
	if !q.pending[c.DocRef] {
		q.pending[c.DocRef] = true
		q.order = append(q.order, c.DocRef)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *changeQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	order := q.order
	q.order, q.pending = nil, map[string]bool{}
	return order
}

func (s *Server) processChanges() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.changes.wake:
		}
		order := s.changes.take()
		if len(order) == 0 {
			continue
		}
		changed, err := s.syncResources(s.ctx)
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.log.Warn("dpekit: refreshing documents failed", "host", s.host, "err", err)
		}
		if changed {
			s.subs.listChanged()
		}
		s.subs.updated(order)
	}
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// providerError maps an error returned by the Provider to the protocol error
// of the level being read.
func (s *Server) providerError(err error, notFound *protocol.Error, uri string) *protocol.Error {
	if errors.Is(err, ErrNotFound) && notFound != nil {
		return notFound
	}
	var perr *protocol.Error
	if errors.As(err, &perr) {
		return perr
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return protocol.NewTimeout("reading %s: %v", uri, err)
	}
	s.log.Warn("dpekit: provider failed", "uri", uri, "err", err)
	return protocol.NewInternal("the document provider failed to read %s", uri)
}
