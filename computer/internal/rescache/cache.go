// Package rescache keeps a per-server cache of MCP resources selected by URI
// (dpe:// documents for the Finder, window:// windows for the Desktop) and
// keeps it current from MCP change notifications and, optionally, by
// revalidating it on a period.
//
// It implements the change detection both features share (spec/finder.md,
// Update mechanism; spec/desktop.md, Desktop). No MCP call holds another:
// every resource is read on its own, and a listing never waits for reads.
//
//   - Start (Add waits for it): list the server's resources, subscribe to
//     and read every selected one with bounded concurrency; resources that
//     cannot be read or decoded are skipped with a warning. After max(2 ×
//     Concurrency, 8) reads in a row time out, the rest are left unread (one
//     warning): a server whose reads all hang costs a few ReadTimeouts, not
//     one per resource. The whole build is bounded by a time budget
//     (DefaultBudget, 2 minutes): what is not read by then is left unread
//     (one warning). What is read is published every 250 ms, and, with
//     PublishEarly, the first resource at once. Resources left
//     unread are read at the source's next re-list, or when it reports them
//     updated.
//   - Refresh (ListChanged waits for it): re-list, diff the selected URI
//     sets, read the new resources (and those left unread) and drop the
//     removed ones; an unchanged set changes nothing and signals nothing. A
//     full refresh also re-reads every listed resource and publishes only
//     those whose contents changed. Listings of one source are serialised
//     and coalesced (one running, at most one pending covering every request
//     made meanwhile); the reads of a refresh run after its listing, beside
//     any other work.
//   - Update (Updated waits for it): re-read the one resource the
//     notification names, on its own: a resource that hangs delays only
//     itself. Requests for one resource are coalesced (one read running, at
//     most one more after it). A matched URI the source has not listed (a
//     resource added without list_changed) refreshes the source; a URI the
//     codec maps to the whole source (a catalog) refreshes it fully; URIs
//     the codec does not match are ignored. At most MaxUpdateReads re-reads
//     run at once per source.
//   - Revalidate (Options.Revalidate): every period, a full refresh of
//     every source, so that a change no notification announced is seen
//     within the period plus one round (spec/finder.md, Update mechanism).
//     A round's reads are spread over the period (never slower than 100 a
//     second per source), so that it lasts about the period at most and a
//     large catalog costs a steady trickle of reads rather than a burst.
//   - Remove: withdraw every resource of the server and stop its work.
//
// When two reads of one resource overlap, the one that started last wins.
// A read that times out keeps what the cache held (the resource is read
// again at the next refresh); any other failure drops the resource.
//
// Every visible change calls OnChange through a debouncer, once per burst.
// Readers take an immutable Snapshot and never wait for a refresh.
package rescache

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/burst"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// Defaults of Options.
const (
	DefaultConcurrency = 8
	DefaultReadTimeout = 10 * time.Second
	DefaultDebounce    = 75 * time.Millisecond
	// DefaultBudget bounds one build of a source's cache (the reads of Add,
	// or of a re-list): what is not read by then is left unread, and
	// published as it is read until then.
	DefaultBudget = 2 * time.Minute
	// DefaultMaxUpdateReads bounds the single-resource re-reads in flight
	// per source.
	DefaultMaxUpdateReads = 64
	// maxDelayFactor bounds a burst: a stream of changes still signals at
	// least every maxDelayFactor × Debounce.
	maxDelayFactor = 10
)

// ErrClosed is returned by Add after Close.
var ErrClosed = errors.New("rescache: closed")

// Codec tells the cache which resources it holds and how to decode them.
type Codec[T any] struct {
	// Select reports whether a listed resource URI belongs in the cache and
	// returns its identity key (typically the canonical form of the URI).
	Select func(uri string) (key string, ok bool)
	// Match maps the URI of a resources/updated notification to the key of
	// the cached resource it concerns; ok false ignores the notification. A
	// key the source has not listed makes the cache re-list the source; the
	// empty key names every resource of the source (a catalog URI) and
	// makes a full refresh.
	Match func(uri string) (key string, ok bool)
	// Decode turns the contents read from a listed resource into an item
	// (res is the resource as listed, its annotations and _meta included;
	// res.URI is the URI read). An error skips the resource with a warning.
	Decode func(server string, res mcp.Resource, contents []protocol.ResourceContents) (T, error)
	// Arrange orders one server's items (given in listing order) for the
	// snapshot; it may sort in place. Nil keeps the listing order.
	Arrange func(items []T)
}

// Options configure a Cache.
type Options struct {
	Kind        string        // "finder", "desktop": names log records
	Logger      *slog.Logger  // nil: slog.Default()
	Concurrency int           // reads in flight per build or refresh; ≤ 0: DefaultConcurrency
	ReadTimeout time.Duration // per subscribe/read; ≤ 0: DefaultReadTimeout
	Debounce    time.Duration // < 0: 0; 0 is taken as DefaultDebounce only by callers
	Budget      time.Duration // whole build or refresh; ≤ 0: DefaultBudget
	// Revalidate is the period of the full refreshes of every source; ≤ 0:
	// none (the cache then follows notifications only).
	Revalidate time.Duration
	// MaxUpdateReads bounds the single-resource re-reads in flight per
	// source; ≤ 0: DefaultMaxUpdateReads.
	MaxUpdateReads int
	// PublishEarly publishes a build's or refresh's first change at once;
	// the others are published every 250 ms and at the end.
	PublishEarly bool
	OnChange     func() // called once per burst of changes; may be nil
}

// Snapshot is an immutable view of the cache. Do not modify it.
type Snapshot[T any] struct {
	// Servers lists, alphabetically, the servers holding at least one item.
	Servers []string
	// Items holds each server's items, arranged by Codec.Arrange.
	Items map[string][]T
	// Len is the number of items over all servers.
	Len int
}

// Cache is a per-server resource cache. It is safe for concurrent use.
type Cache[T any] struct {
	codec      Codec[T]
	kind       string
	log        *slog.Logger
	conc       int
	rto        time.Duration
	budget     time.Duration
	maxUpdates int
	early      bool          // Options.PublishEarly
	period     time.Duration // Options.Revalidate
	deb        *burst.Debouncer

	ctx    context.Context // cancelled by Close; bounds every MCP call
	cancel context.CancelFunc

	mu      sync.Mutex // guards sources, closed and the snapshot's replacement
	sources map[string]*source[T]
	closed  bool
	snap    atomic.Pointer[Snapshot[T]]

	version atomic.Uint64 // visible changes published (Version)
	rounds  atomic.Uint64 // revalidation rounds completed (Rounds)

	work  work           // background work in flight (Wait); Close waits for it
	loops sync.WaitGroup // the revalidation loop; Close waits for it
}

// source is one MCP server's part of the cache.
type source[T any] struct {
	src  mcpsource.Source
	name string

	ctx    context.Context // ends when the source is removed or replaced, or the cache closed
	cancel context.CancelFunc

	list sync.Mutex // serialises this source's listings (never held across reads)

	mu      sync.Mutex              // guards the fields below; never held across an MCP call
	order   []string                // selected keys in listing order
	uris    map[string]string       // key → URI as listed
	listed  map[string]mcp.Resource // key → the resource as listed
	items   map[string]T            // key → decoded item (readable resources only)
	digests map[string]uint64       // key → digest of the contents items[key] was decoded from
	unread  map[string]bool         // keys not read yet, or whose last read timed out
	seq     uint64                  // read tickets handed out
	stored  map[string]uint64       // key → ticket of the read last applied
	reads   map[string]*keyRead
	refresh struct {
		running bool
		pending *request // the refresh asked for while one runs
	}

	pub sync.Mutex // serialises publications of this source

	updates chan struct{} // semaphore of the single-resource re-reads
}

// request is a refresh asked for; done is closed when it has ended, reads
// included.
type request struct {
	full  bool
	pace  bool            // a revalidation: its reads are paced (see paceFor)
	build bool            // the cold aggregation (Start)
	ctx   context.Context // values only (see detach)
	done  chan struct{}
	err   error // the listing's, set before done is closed
}

// keyRead is the single-resource read of one key in flight.
type keyRead struct {
	done chan struct{} // closed when the running read has been applied
	next chan struct{} // non-nil: one more read after it, closed when applied
	ctx  context.Context
}

// New returns an empty cache.
func New[T any](codec Codec[T], o Options) *Cache[T] {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.Debounce < 0 {
		o.Debounce = 0
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.MaxUpdateReads <= 0 {
		o.MaxUpdateReads = DefaultMaxUpdateReads
	}
	c := &Cache[T]{
		codec:      codec,
		kind:       o.Kind,
		log:        o.Logger,
		conc:       o.Concurrency,
		rto:        o.ReadTimeout,
		budget:     o.Budget,
		maxUpdates: o.MaxUpdateReads,
		early:      o.PublishEarly,
		period:     max(o.Revalidate, 0),
		sources:    map[string]*source[T]{},
	}
	if o.OnChange != nil {
		c.deb = burst.New(o.Debounce, maxDelayFactor*o.Debounce, o.OnChange)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.snap.Store(&Snapshot[T]{Items: map[string][]T{}})
	if o.Revalidate > 0 {
		c.loops.Add(1)
		go c.revalidate(o.Revalidate)
	}
	return c
}

// Snapshot returns the current view; it never blocks on a refresh.
func (c *Cache[T]) Snapshot() *Snapshot[T] { return c.snap.Load() }

// Version counts the visible changes published so far: it grows at every
// change a Snapshot shows, and only then.
func (c *Cache[T]) Version() uint64 { return c.version.Load() }

// Rounds counts the revalidation rounds completed (Options.Revalidate): a
// round is a full refresh of every source, its reads included.
func (c *Cache[T]) Rounds() uint64 { return c.rounds.Load() }

// Wait returns when no work of the cache is in flight (builds, refreshes,
// re-reads; a revalidation loop counts only while a round runs), or when
// ctx ends.
func (c *Cache[T]) Wait(ctx context.Context) error { return c.work.wait(ctx) }

// Close cancels in-flight MCP calls, waits for the work in flight to end,
// drops a pending change signal and waits for a running OnChange. The cache
// keeps answering Snapshot. Idempotent.
func (c *Cache[T]) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.loops.Wait()
	_ = c.work.wait(context.Background())
	if c.deb != nil {
		c.deb.Close()
	}
}

func (c *Cache[T]) changed() {
	c.version.Add(1)
	if c.deb != nil {
		c.deb.Trigger()
	}
}

func (c *Cache[T]) current(name string) *source[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sources[name]
}

// detach keeps ctx's values (such as mcpclient's marker of the Computer's
// own reads) without its cancellation, bounded by the source's life:
// background work outlives the notification that asked for it.
func detach(ctx, life context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(life, cancel)
	return ctx, func() { stop(); cancel() }
}

// Build is a cold aggregation started by Start.
type Build struct{ r *request }

// Done is closed when the build has ended, reads included.
func (b Build) Done() <-chan struct{} { return b.r.done }

// Err is the listing's error once Done is closed (ErrClosed after Close).
func (b Build) Err() error {
	select {
	case <-b.r.done:
		return b.r.err
	default:
		return nil
	}
}

// Start begins the cold aggregation of src, replacing whatever the cache
// held for a source of the same name (a restarted server), and returns at
// once: the listing and the reads run in the background, and notifications
// for the source are taken meanwhile. A listing failure leaves the source
// registered (empty) so that a later refresh can fill it.
func (c *Cache[T]) Start(ctx context.Context, src mcpsource.Source) Build {
	r := &request{build: true, ctx: ctx, done: make(chan struct{})}
	s := &source[T]{src: src, name: src.Name(), uris: map[string]string{}, listed: map[string]mcp.Resource{}, items: map[string]T{},
		digests: map[string]uint64{}, unread: map[string]bool{}, stored: map[string]uint64{},
		reads: map[string]*keyRead{}, updates: make(chan struct{}, c.maxUpdates)}
	// The build is the source's first refresh: a refresh asked for before
	// it has listed lists after it.
	s.refresh.running = true
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		r.err = ErrClosed
		close(r.done)
		return Build{r}
	}
	s.ctx, s.cancel = context.WithCancel(c.ctx)
	if old := c.sources[s.name]; old != nil {
		old.cancel()
	}
	c.sources[s.name] = s
	c.work.add()
	c.mu.Unlock()
	go c.runRefresh(s, r)
	return Build{r}
}

// Add performs the cold aggregation of src (Start) and returns when it has
// ended or ctx ends. A listing failure is returned.
func (c *Cache[T]) Add(ctx context.Context, src mcpsource.Source) error {
	b := c.Start(ctx, src)
	select {
	case <-b.Done():
		return b.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Remove withdraws every item of the named source (it stopped or crashed)
// and cancels its work.
func (c *Cache[T]) Remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sources[name]
	if !ok {
		return
	}
	s.cancel()
	delete(c.sources, name)
	if c.storeLocked(name, nil) {
		c.changed()
	}
}

// Refresh re-lists the named source in the background (see the package
// documentation); full also re-reads every listed resource. The channel is
// closed when a refresh covering this request has ended, reads included
// (at once for an unknown source).
func (c *Cache[T]) Refresh(ctx context.Context, name string, full bool) <-chan struct{} {
	s := c.current(name)
	if s == nil {
		return closed
	}
	return c.requestRefresh(ctx, s, full)
}

// ListChanged handles notifications/resources/list_changed of the named
// source and returns when the cache is current (Refresh, waited for).
func (c *Cache[T]) ListChanged(ctx context.Context, name string) {
	waitCtx(ctx, c.Refresh(ctx, name, false))
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func waitCtx(ctx context.Context, done <-chan struct{}) {
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// requestRefresh asks for a refresh of s: it runs at once when none runs,
// otherwise after the running one, folded with every request made
// meanwhile (a full one if any was).
func (c *Cache[T]) requestRefresh(ctx context.Context, s *source[T], full bool) <-chan struct{} {
	return c.request(ctx, s, full, false)
}

// request is requestRefresh; paced marks a revalidation, whose reads are
// spread out (a request that is not paced, folded with it, is not).
func (c *Cache[T]) request(ctx context.Context, s *source[T], full, paced bool) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refresh.running {
		if p := s.refresh.pending; p != nil {
			p.pace = p.pace && paced
			p.full = p.full || full
			p.ctx = ctx
			return p.done
		}
		s.refresh.pending = &request{full: full, pace: paced, ctx: ctx, done: make(chan struct{})}
		return s.refresh.pending.done
	}
	r := &request{full: full, pace: paced, ctx: ctx, done: make(chan struct{})}
	if !c.begin() {
		close(r.done)
		return r.done
	}
	s.refresh.running = true
	go c.runRefresh(s, r)
	return r.done
}

// begin counts one more piece of background work; false after Close.
func (c *Cache[T]) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.work.add()
	return true
}

// runRefresh runs r, then the refreshes pending after it, one at a time;
// the reads of each run beside the next listing.
func (c *Cache[T]) runRefresh(s *source[T], r *request) {
	defer c.work.done()
	for r != nil {
		rctx, cancel := detach(r.ctx, s.ctx)
		loaded, err := c.sync(rctx, s, r.full, r.build, r.pace)
		next := c.endRefresh(s)
		if err != nil {
			if r.build {
				if _, visible := c.publish(s); visible {
					c.changed()
				}
				r.err = fmt.Errorf("%s: listing resources of %q: %w", c.kind, s.name, err)
			} else if s.ctx.Err() == nil {
				c.log.Warn(c.kind+": re-listing resources failed", "server", s.name, "err", err)
			}
			cancel()
			close(r.done)
		} else {
			c.work.add()
			go func(r *request) {
				defer c.work.done()
				defer cancel()
				<-loaded
				if r.build {
					// Publish once more: a source that replaced another
					// with fewer items must not show the old ones.
					if _, visible := c.publish(s); visible {
						c.changed()
					}
					s.mu.Lock()
					listed, cached, unread := len(s.order), len(s.items), len(s.unread)
					s.mu.Unlock()
					c.log.Debug(c.kind+": source aggregated", "server", s.name, "listed", listed, "cached", cached, "unread", unread)
				}
				close(r.done)
			}(r)
		}
		r = next
		if r != nil && c.ctx.Err() != nil {
			for ; r != nil; r = c.endRefresh(s) {
				close(r.done)
			}
			return
		}
	}
}

// endRefresh releases the listing slot of s and returns the request pending
// after it (which then holds the slot), or nil.
func (c *Cache[T]) endRefresh(s *source[T]) *request {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.refresh.pending
	s.refresh.pending = nil
	s.refresh.running = next != nil
	return next
}

// sync lists s and applies the difference: removed keys are dropped at
// once, new keys (and those left unread, and every key when full) are read
// in the background. The channel is closed when those reads have ended.
func (c *Cache[T]) sync(ctx context.Context, s *source[T], full, build, paced bool) (<-chan struct{}, error) {
	s.list.Lock()
	res, err := s.src.ListResources(ctx)
	if err != nil {
		s.list.Unlock()
		return nil, err
	}
	order, uris, listed := c.selectAll(res)
	s.mu.Lock()
	var read, fresh []string
	retry := 0
	for _, key := range order {
		_, known := s.uris[key]
		switch {
		case !known:
			read = append(read, key)
			fresh = append(fresh, key)
		case s.unread[key]:
			read = append(read, key) // left unread earlier: read it now
			retry++
		case full:
			read = append(read, key)
		}
	}
	removed := 0
	for key := range s.uris {
		if _, ok := uris[key]; !ok {
			removed++
			delete(s.items, key)
			delete(s.digests, key)
			delete(s.unread, key)
			delete(s.stored, key)
		}
	}
	// The listing order may change without the set changing; keep it.
	s.order, s.uris, s.listed = order, uris, listed
	s.mu.Unlock()
	s.list.Unlock()

	switch {
	case build:
	case len(fresh) > 0 || removed > 0:
		c.log.Info(c.kind+": URI set changed", "server", s.name, "added", len(fresh), "removed", removed, "unread_retried", retry)
	case !full:
		c.log.Debug(c.kind+": resource list changed but the URI set did not; nothing to refresh", "server", s.name)
	}
	if removed > 0 {
		if published, visible := c.publish(s); published && visible {
			c.changed()
		}
	}
	done := make(chan struct{})
	if len(read) == 0 {
		close(done)
		return done, nil
	}
	if !c.begin() {
		close(done)
		return done, nil
	}
	subscribe := setOf(fresh)
	var pace time.Duration
	if paced {
		pace = c.paceFor(len(read))
	}
	go func() {
		defer c.work.done()
		defer close(done)
		c.load(ctx, s, read, subscribe, pace)
	}()
	return done, nil
}

// Update re-reads, in the background, the listed resource uri concerns
// (see the package documentation). The channel is closed when a read
// covering this request has been applied (at once when there is nothing to
// read; a refresh it asks for is not waited for).
func (c *Cache[T]) Update(ctx context.Context, name, uri string) <-chan struct{} {
	key, ok := c.codec.Match(uri)
	if !ok {
		c.log.Debug(c.kind+": ignoring update of a resource it does not track", "server", name, "uri", uri)
		return closed
	}
	s := c.current(name)
	if s == nil {
		return closed
	}
	if key == "" {
		c.log.Debug(c.kind+": update of the whole source; refreshing every resource", "server", name, "uri", uri)
		c.requestRefresh(ctx, s, true)
		return closed
	}
	s.mu.Lock()
	listed, ok := s.uris[key]
	if !ok {
		s.mu.Unlock()
		c.log.Debug(c.kind+": update of a resource not listed; re-listing", "server", name, "uri", uri)
		c.requestRefresh(ctx, s, false)
		return closed
	}
	if r := s.reads[key]; r != nil {
		r.ctx = ctx
		if r.next == nil {
			r.next = make(chan struct{})
		}
		next := r.next
		s.mu.Unlock()
		return next
	}
	if !c.begin() {
		s.mu.Unlock()
		return closed
	}
	r := &keyRead{done: make(chan struct{}), ctx: ctx}
	done := r.done
	s.reads[key] = r
	s.mu.Unlock()
	go c.runUpdate(s, key, listed, r)
	return done
}

// Updated handles notifications/resources/updated for uri and returns when
// the resource it names has been re-read (Update, waited for).
func (c *Cache[T]) Updated(ctx context.Context, name, uri string) {
	waitCtx(ctx, c.Update(ctx, name, uri))
}

// runUpdate reads key, then again while reads were asked for meanwhile.
func (c *Cache[T]) runUpdate(s *source[T], key, uri string, r *keyRead) {
	defer c.work.done()
	for {
		s.mu.Lock()
		rctx := r.ctx
		s.mu.Unlock()
		ctx, cancel := detach(rctx, s.ctx)
		select {
		case s.updates <- struct{}{}:
			if c.readOne(ctx, s, key, uri) {
				if published, _ := c.publish(s); published {
					c.changed()
				}
			}
			<-s.updates
		case <-ctx.Done():
		}
		cancel()
		s.mu.Lock()
		close(r.done)
		if r.next == nil || s.ctx.Err() != nil {
			if r.next != nil {
				close(r.next)
			}
			delete(s.reads, key)
			s.mu.Unlock()
			return
		}
		r.done, r.next = r.next, nil
		if u, ok := s.uris[key]; ok {
			uri = u
		}
		s.mu.Unlock()
	}
}

// readOne reads key on its own and applies the result; it reports whether
// the cache changed.
func (c *Cache[T]) readOne(ctx context.Context, s *source[T], key, uri string) bool {
	ticket := s.ticket()
	contents, err := c.fetch(ctx, s, uri)
	changed, derr := c.apply(s, key, uri, ticket, contents, err)
	if derr != nil && ctx.Err() == nil {
		c.log.Warn(c.kind+": dropping resource after a failed re-read", "server", s.name, "uri", uri, "err", derr)
	}
	return changed
}

func (s *source[T]) ticket() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// apply stores the result of the read of key that got ticket, unless a
// read started later was applied already or the key is no longer listed.
// A read that timed out (or was cancelled) keeps the item and marks the
// key unread; another failure, or contents that do not decode, drops it
// (the error is returned). Contents equal to those of the item held change
// nothing. It reports whether the items changed.
func (c *Cache[T]) apply(s *source[T], key, uri string, ticket uint64, contents []mcp.ResourceContents, err error) (bool, error) {
	var it T
	var d uint64
	if err == nil {
		pc := mcpsource.Contents(contents)
		d = digest(pc)
		s.mu.Lock()
		old, had := s.digests[key]
		_, present := s.items[key]
		r, ok := s.listed[key]
		s.mu.Unlock()
		if !ok {
			r = mcp.Resource{}
		}
		r.URI = uri
		if !(had && present && old == d) {
			it, err = c.codec.Decode(s.name, r, pc)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, listed := s.uris[key]; !listed || ticket < s.stored[key] {
		return false, nil
	}
	s.stored[key] = ticket
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			s.unread[key] = true
			return false, nil
		}
		delete(s.unread, key)
		delete(s.digests, key)
		if _, had := s.items[key]; had {
			delete(s.items, key)
			return true, err
		}
		return false, err
	}
	delete(s.unread, key)
	if old, had := s.digests[key]; had && old == d {
		if _, present := s.items[key]; present {
			return false, nil
		}
	}
	s.items[key] = it
	s.digests[key] = d
	return true, nil
}

// digest is a hash of the contents read: equal contents are not decoded
// again and change nothing.
func digest(contents []protocol.ResourceContents) uint64 {
	h := fnv.New64a()
	field := func(p *string) {
		if p != nil {
			h.Write([]byte{1})
			h.Write([]byte(*p))
		}
		h.Write([]byte{0})
	}
	for _, rc := range contents {
		field(&rc.MimeType) // a plain string: absent and "" hash alike
		field(rc.Text)
		field(rc.Blob)
	}
	return h.Sum64()
}

func setOf(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// selectAll keeps the selected resources, de-duplicated by key, in listing
// order.
func (c *Cache[T]) selectAll(res []mcp.Resource) (order []string, uris map[string]string, listed map[string]mcp.Resource) {
	uris = make(map[string]string)
	listed = make(map[string]mcp.Resource)
	for _, r := range res {
		key, ok := c.codec.Select(r.URI)
		if !ok {
			continue
		}
		if _, dup := uris[key]; dup {
			continue
		}
		uris[key] = r.URI
		listed[key] = r
		order = append(order, key)
	}
	return order, uris, listed
}

// giveUpAfter is how many reads in a row must time out before load gives
// up on the rest of a source's resources: a server whose every read hangs
// would otherwise hold its aggregation for len(keys) × ReadTimeout /
// Concurrency (hours for a large listing).
func giveUpAfter(workers int) int64 { return int64(max(2*workers, 8)) }

// maxSkipWarnings is how many resources a load skips with a warning each;
// the others are logged at debug level and counted in one warning, so that
// a server whose every read fails does not write one warning per resource.
const maxSkipWarnings = 10

// progressEvery is the longest a load in progress keeps what it has read
// unpublished.
const progressEvery = 250 * time.Millisecond

var errBudget = errors.New("the build's time budget is spent")

// load subscribes to (those in subscribe) and reads the given keys of s
// with bounded concurrency, applying each result as it comes. What is read
// is published every progressEvery and at the end, and with PublishEarly
// the first change at once (a publication sorts the source's whole list:
// publishing in growing batches made a 10,000-document build a third
// slower). The whole load is bounded by the Budget: the
// reads still in flight then are abandoned and the keys not read are left
// unread (one warning), as they are when giveUpAfter reads in a row time
// out. Unread keys are read at the source's next refresh, or when it
// reports them updated.
func (c *Cache[T]) load(ctx context.Context, s *source[T], keys []string, subscribe map[string]bool, pace time.Duration) {
	ctx, stop := context.WithTimeoutCause(ctx, c.budget, errBudget)
	defer stop()
	ctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	var next, timeouts, failed atomic.Int64
	var gaveUp atomic.Bool
	results := make(chan bool, c.conc)
	var slots pacer
	slots.every = pace
	var wg sync.WaitGroup
	workers := min(c.conc, len(keys))
	limit := giveUpAfter(workers)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				key := keys[i]
				s.mu.Lock()
				uri, listed := s.uris[key]
				s.mu.Unlock()
				if !listed {
					continue // removed meanwhile
				}
				if !slots.wait(ctx) {
					return
				}
				if subscribe[key] && s.src.SupportsSubscribe() {
					c.subscribe(ctx, s, uri)
				}
				ticket := s.ticket()
				contents, err := c.fetch(ctx, s, uri)
				if err != nil && ctx.Err() != nil {
					// A shutdown, the budget, or given up: unread.
					s.mu.Lock()
					if _, ok := s.uris[key]; ok && ticket >= s.stored[key] {
						s.unread[key] = true
					}
					s.mu.Unlock()
					continue
				}
				changed, derr := c.apply(s, key, uri, ticket, contents, err)
				if err == nil {
					err = derr
				}
				if err != nil {
					if failed.Add(1) <= maxSkipWarnings {
						c.log.Warn(c.kind+": skipping resource", "server", s.name, "uri", uri, "err", err)
					} else {
						c.log.Debug(c.kind+": skipping resource", "server", s.name, "uri", uri, "err", err)
					}
					if errors.Is(err, context.DeadlineExceeded) && timeouts.Add(1) >= limit && gaveUp.CompareAndSwap(false, true) {
						c.log.Warn(c.kind+": reads of this MCP server keep timing out; leaving its other resources unread until it reports them updated or re-lists",
							"server", s.name, "timeouts_in_a_row", limit, "unread", max(0, len(keys)-int(next.Load())))
						giveUp()
					}
				} else {
					timeouts.Store(0)
				}
				results <- changed
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	published, pending := 0, 0
	flush := func() {
		if pending == 0 {
			return
		}
		if ok, visible := c.publish(s); ok && visible {
			c.changed()
		}
		published += pending
		pending = 0
	}
	for open := true; open; {
		select {
		case changed, ok := <-results:
			if !ok {
				open = false
				break
			}
			if changed {
				pending++
				if c.early && published == 0 {
					flush()
				}
			}
		case <-tick.C:
			flush()
		}
	}
	flush()
	// The keys never reached (given up, budget) are unread.
	s.mu.Lock()
	for _, key := range keys[min(int(next.Load()), len(keys)):] {
		if _, ok := s.uris[key]; ok {
			s.unread[key] = true
		}
	}
	unread := 0
	for _, key := range keys {
		if s.unread[key] {
			unread++
		}
	}
	s.mu.Unlock()
	if n := failed.Load(); n > maxSkipWarnings {
		c.log.Warn(c.kind+": more resources skipped than logged one by one (the others at debug level)",
			"server", s.name, "skipped", n, "logged", maxSkipWarnings)
	}
	if unread > 0 && context.Cause(ctx) == errBudget && !gaveUp.Load() && s.ctx.Err() == nil {
		c.log.Warn(c.kind+": the build's time budget is spent; leaving the resources not read yet unread until the MCP server re-lists or reports them updated",
			"server", s.name, "budget", c.budget, "unread", unread)
	}
}

func (c *Cache[T]) subscribe(ctx context.Context, s *source[T], uri string) {
	sctx, cancel := context.WithTimeout(ctx, c.rto)
	defer cancel()
	if err := s.src.Subscribe(sctx, uri); err != nil && ctx.Err() == nil {
		c.log.Warn(c.kind+": resources/subscribe failed", "server", s.name, "uri", uri, "err", err)
	}
}

// fetch reads uri within the read timeout.
func (c *Cache[T]) fetch(ctx context.Context, s *source[T], uri string) ([]mcp.ResourceContents, error) {
	rctx, cancel := context.WithTimeout(ctx, c.rto)
	defer cancel()
	return s.src.ReadResource(rctx, uri)
}

// publish stores s's items in a new snapshot unless s has been replaced or
// removed meanwhile. It reports whether it published, and whether the server
// had or now has items (a change visible to readers).
func (c *Cache[T]) publish(s *source[T]) (published, visible bool) {
	s.pub.Lock()
	defer s.pub.Unlock()
	s.mu.Lock()
	items := make([]T, 0, len(s.items))
	for _, key := range s.order {
		if it, ok := s.items[key]; ok {
			items = append(items, it)
		}
	}
	s.mu.Unlock()
	if c.codec.Arrange != nil {
		c.codec.Arrange(items)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sources[s.name] != s {
		return false, false
	}
	return true, c.storeLocked(s.name, items)
}

// storeLocked replaces one server's items (nil/empty removes it). It reports
// whether the server had or now has items. c.mu must be held.
func (c *Cache[T]) storeLocked(name string, items []T) bool {
	old := c.snap.Load()
	had := len(old.Items[name]) > 0
	if !had && len(items) == 0 {
		return false
	}
	next := &Snapshot[T]{Items: make(map[string][]T, len(old.Items)+1)}
	for k, v := range old.Items {
		if k != name {
			next.Items[k] = v
			next.Len += len(v)
		}
	}
	if len(items) > 0 {
		next.Items[name] = items
		next.Len += len(items)
	}
	next.Servers = make([]string, 0, len(next.Items))
	for k := range next.Items {
		next.Servers = append(next.Servers, k)
	}
	sort.Strings(next.Servers)
	c.snap.Store(next)
	return true
}

// minRevalidationRate is the read rate (per source) below which a
// revalidation round is not slowed down: a small catalog is read at once.
const minRevalidationRate = 100

// paceFor is the least time between two reads of a revalidation round of
// n resources: the round is spread over the period (or the build budget,
// if shorter), unless that is faster than minRevalidationRate reads a
// second. So a round lasts at most about the period, and a large catalog
// costs a steady trickle of reads instead of a burst that would slow every
// query.
func (c *Cache[T]) paceFor(n int) time.Duration {
	if c.period <= 0 || n <= 0 {
		return 0
	}
	spread := min(c.period, c.budget) / time.Duration(n)
	if spread < time.Second/minRevalidationRate {
		return spread
	}
	return time.Second / minRevalidationRate
}

// pacer hands out read slots at most one per every.
type pacer struct {
	every time.Duration
	mu    sync.Mutex
	next  time.Time
}

// wait blocks until the next slot (at once when not pacing); false when
// ctx ended first.
func (p *pacer) wait(ctx context.Context) bool {
	if p.every <= 0 {
		return ctx.Err() == nil
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.every)
	p.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// revalidate refreshes every source fully every period, one round at a
// time: a round starts when the period has passed since the last one
// started (or at once when the last one took longer) and ends when every
// source's refresh, reads included, has ended. The loop counts as work
// (Wait) only while a round runs.
func (c *Cache[T]) revalidate(period time.Duration) {
	defer c.loops.Done()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		if !c.begin() {
			return
		}
		c.mu.Lock()
		srcs := make([]*source[T], 0, len(c.sources))
		for _, s := range c.sources {
			srcs = append(srcs, s)
		}
		c.mu.Unlock()
		dones := make([]<-chan struct{}, len(srcs))
		for i, s := range srcs {
			dones[i] = c.request(c.ctx, s, true, true)
		}
		for _, d := range dones {
			waitCtx(c.ctx, d)
		}
		if c.ctx.Err() == nil {
			c.rounds.Add(1)
		}
		c.work.done()
	}
}

// work counts the background work in flight and lets Wait block until
// there is none.
type work struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0
}

func (w *work) add() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 || w.idle == nil {
		w.idle = make(chan struct{})
	}
	w.n++
}

func (w *work) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n--
	if w.n == 0 {
		close(w.idle)
	}
}

func (w *work) wait(ctx context.Context) error {
	w.mu.Lock()
	if w.n == 0 {
		w.mu.Unlock()
		return nil
	}
	ch := w.idle
	w.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
