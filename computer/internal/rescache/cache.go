// Package rescache keeps a per-server cache of MCP resources selected by URI
// (dpe:// documents for the Finder, window:// windows for the Desktop) and
// keeps it current from MCP change notifications.
//
// It implements the change detection both features share (spec/finder.md,
// Update mechanism; spec/desktop.md, Desktop):
//
//   - Add: list the server's resources, subscribe to and read every selected
//     one with bounded concurrency; resources that cannot be read or decoded
//     are skipped with a warning. After max(2 × Concurrency, 8) reads in a
//     row time out, the rest are left unread (one warning): a server whose
//     reads all hang costs a few ReadTimeouts, not one per resource. The
//     whole build is bounded by a time budget (DefaultBudget, 2 minutes):
//     what is not read by then is left unread (one warning), and what is
//     read is published as it comes (every 250 ms), so a large or slow
//     source shows its first documents at once and never holds its event
//     goroutine longer than the budget. Resources left unread are read at
//     the source's next re-list (or when it reports them updated).
//   - ListChanged: re-list, diff the selected URI sets, read only the new
//     resources and drop the removed ones; an unchanged set changes nothing
//     and signals nothing.
//   - Updated: re-read the one resource the notification names (one read);
//     a matched URI the source has not listed (a resource it added without
//     list_changed, or a catalog) re-lists as ListChanged does, in the
//     background and coalesced: one re-list in flight and at most one
//     pending per source, however many such updates arrive (a flood of
//     updates for URIs never listed costs two re-lists, not one each); URIs
//     the codec does not match are ignored.
//   - Remove: withdraw every resource of the server.
//
// Every change calls OnChange through a debouncer, once per burst. Readers
// take an immutable Snapshot and never wait for a refresh.
package rescache

import (
	"context"
	"errors"
	"fmt"
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
	// key the source has not listed (such as "" for a catalog URI) makes
	// the cache re-list the source.
	Match func(uri string) (key string, ok bool)
	// Decode turns the contents read from uri into an item. An error skips
	// the resource with a warning.
	Decode func(server, uri string, contents []protocol.ResourceContents) (T, error)
	// Arrange orders one server's items (given in listing order) for the
	// snapshot; it may sort in place. Nil keeps the listing order.
	Arrange func(items []T)
}

// Options configure a Cache.
type Options struct {
	Kind        string        // "finder", "desktop": names log records
	Logger      *slog.Logger  // nil: slog.Default()
	Concurrency int           // reads in flight per Add/ListChanged; ≤ 0: DefaultConcurrency
	ReadTimeout time.Duration // per subscribe/read; ≤ 0: DefaultReadTimeout
	Debounce    time.Duration // < 0: 0; 0 is taken as DefaultDebounce only by callers
	Budget      time.Duration // whole build (Add) or re-list; ≤ 0: DefaultBudget
	OnChange    func()        // called once per burst of changes; may be nil
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
	codec  Codec[T]
	kind   string
	log    *slog.Logger
	conc   int
	rto    time.Duration
	budget time.Duration
	deb    *burst.Debouncer

	ctx    context.Context // cancelled by Close; bounds every MCP call
	cancel context.CancelFunc

	mu      sync.Mutex // guards sources and publication
	sources map[string]*source[T]
	closed  bool
	snap    atomic.Pointer[Snapshot[T]]

	bg sync.WaitGroup // background re-lists (see requestList)
}

type gate struct {
	req  uint64 // last ticket handed out (guarded by source.gmu)
	done uint64 // last ticket satisfied (guarded by source.op)
}

type source[T any] struct {
	src  mcpsource.Source
	name string

	op     sync.Mutex        // serialises MCP work on this source; guards below
	order  []string          // selected keys in listing order
	uris   map[string]string // key → URI as listed
	items  map[string]T      // key → decoded item (readable resources only)
	unread map[string]bool   // keys left unread by the last build (see load)

	// listed is uris as last stored, read without op: an update of a
	// resource not listed never waits for a listing in progress.
	listed atomic.Pointer[map[string]string]

	gmu     sync.Mutex
	listG   gate
	updateG map[string]*gate

	rmu       sync.Mutex      // guards the background re-list below
	relisting bool            // a background re-list runs
	repeat    bool            // another one is asked for after it
	rctx      context.Context // the context of the latest request
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
	c := &Cache[T]{
		codec:   codec,
		kind:    o.Kind,
		log:     o.Logger,
		conc:    o.Concurrency,
		rto:     o.ReadTimeout,
		budget:  o.Budget,
		sources: map[string]*source[T]{},
	}
	if o.OnChange != nil {
		c.deb = burst.New(o.Debounce, maxDelayFactor*o.Debounce, o.OnChange)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.snap.Store(&Snapshot[T]{Items: map[string][]T{}})
	return c
}

// Snapshot returns the current view; it never blocks on a refresh.
func (c *Cache[T]) Snapshot() *Snapshot[T] { return c.snap.Load() }

// Close cancels in-flight MCP calls, drops a pending change signal and waits
// for a running OnChange. The cache keeps answering Snapshot. Idempotent.
func (c *Cache[T]) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.bg.Wait()
	if c.deb != nil {
		c.deb.Close()
	}
}

// opCtx bounds ctx by the cache's lifetime.
func (c *Cache[T]) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

func (c *Cache[T]) changed() {
	if c.deb != nil {
		c.deb.Trigger()
	}
}

func (c *Cache[T]) current(name string) *source[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sources[name]
}

// Add performs the cold aggregation of src, replacing whatever the cache
// held for a source of the same name (a restarted server). A listing failure
// is returned; the source stays registered (empty) so that a later
// ListChanged can fill it.
func (c *Cache[T]) Add(ctx context.Context, src mcpsource.Source) error {
	s := &source[T]{src: src, name: src.Name(), uris: map[string]string{}, items: map[string]T{}, updateG: map[string]*gate{}}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.sources[s.name] = s
	c.mu.Unlock()

	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	s.op.Lock()
	defer s.op.Unlock()

	res, err := src.ListResources(ctx)
	if err != nil {
		if _, visible := c.publish(s); visible {
			c.changed()
		}
		return fmt.Errorf("%s: listing resources of %q: %w", c.kind, s.name, err)
	}
	s.order, s.uris = c.selectAll(res)
	listed := s.uris // a copy of the map header: s.uris is replaced under s.op, listed read without it
	s.listed.Store(&listed)
	items, unread := c.load(ctx, s, s.order, c.progress(s))
	for key, it := range items {
		s.items[key] = it
	}
	s.unread = setOf(unread)
	c.log.Debug(c.kind+": source aggregated", "server", s.name, "listed", len(s.order), "cached", len(s.items), "unread", len(unread))
	if _, visible := c.publish(s); visible {
		c.changed()
	}
	return nil
}

// Remove withdraws every item of the named source (it stopped or crashed).
func (c *Cache[T]) Remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sources[name]; !ok {
		return
	}
	delete(c.sources, name)
	if c.storeLocked(name, nil) {
		c.changed()
	}
}

// ListChanged handles notifications/resources/list_changed of the named
// source. It returns when the cache is current. Concurrent calls for one
// source are coalesced: a call made while a re-list is running is satisfied
// by the next single re-list.
func (c *Cache[T]) ListChanged(ctx context.Context, name string) {
	if s := c.current(name); s != nil {
		c.listChanged(ctx, s)
	}
}

func (c *Cache[T]) listChanged(ctx context.Context, s *source[T]) {
	name := s.name
	ctx, cancel := c.opCtx(ctx)
	defer cancel()

	s.gmu.Lock()
	s.listG.req++
	ticket := s.listG.req
	s.gmu.Unlock()

	s.op.Lock()
	defer s.op.Unlock()
	if s.listG.done >= ticket {
		return
	}
	s.gmu.Lock()
	start := s.listG.req
	s.gmu.Unlock()

	res, err := s.src.ListResources(ctx)
	if err != nil {
		c.log.Warn(c.kind+": re-listing resources failed", "server", name, "err", err)
		return
	}
	s.listG.done = start
	order, uris := c.selectAll(res)
	var added []string
	retry := 0
	for _, key := range order {
		if _, ok := s.uris[key]; !ok {
			added = append(added, key)
		} else if s.unread[key] {
			added = append(added, key) // left unread by an earlier build: read it now
			retry++
		}
	}
	removed := 0
	for key := range s.uris {
		if _, ok := uris[key]; !ok {
			removed++
			delete(s.items, key)
			s.gmu.Lock()
			delete(s.updateG, key)
			s.gmu.Unlock()
		}
	}
	// The listing order may change without the set changing; keep it.
	s.order = order
	if len(added) == 0 && removed == 0 {
		c.log.Debug(c.kind+": resource list changed but the URI set did not; nothing to refresh", "server", name)
		return
	}
	c.log.Info(c.kind+": URI set changed", "server", name, "added", len(added)-retry, "removed", removed, "unread_retried", retry)
	s.uris = uris
	s.listed.Store(&uris)
	items, unread := c.load(ctx, s, added, c.progress(s))
	for key, it := range items {
		s.items[key] = it
	}
	s.unread = setOf(unread)
	if published, _ := c.publish(s); published {
		c.changed()
	}
}

// Updated handles notifications/resources/updated for uri from the named
// source: the one resource it concerns is re-read (one read) and a change is
// signalled before it returns. A resource the source has not listed
// re-lists the source as ListChanged does (any update of a matched URI may
// reveal a new resource), but in the background: Updated returns at once,
// and the re-lists asked for while one runs are folded into one more after
// it (requestList). URIs the codec does not match are ignored. Concurrent
// calls for one resource are coalesced.
func (c *Cache[T]) Updated(ctx context.Context, name, uri string) {
	if !c.updated(ctx, name, uri) {
		c.log.Debug(c.kind+": update of a resource not listed; re-listing", "server", name, "uri", uri)
		if s := c.current(name); s != nil {
			c.requestList(ctx, s)
		}
	}
}

// requestList re-lists s in the background: one re-list in flight, and at
// most one pending, which starts when the running one ends and covers every
// request made meanwhile (it lists after all of them arrived). The re-list
// ends with ctx (the latest request's) or with the cache; Close waits for
// it.
func (c *Cache[T]) requestList(ctx context.Context, s *source[T]) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.rctx = ctx
	if s.relisting {
		s.repeat = true
		return
	}
	c.mu.Lock()
	closed := c.closed
	if !closed {
		c.bg.Add(1)
	}
	c.mu.Unlock()
	if closed {
		return
	}
	s.relisting = true
	go func() {
		defer c.bg.Done()
		for {
			s.rmu.Lock()
			ctx := s.rctx
			s.repeat = false
			s.rmu.Unlock()
			c.listChanged(ctx, s)
			s.rmu.Lock()
			if !s.repeat || c.ctx.Err() != nil {
				s.relisting, s.repeat, s.rctx = false, false, nil
				s.rmu.Unlock()
				return
			}
			s.rmu.Unlock()
		}
	}()
}

// updated re-reads the listed resource uri concerns; it returns false when
// the source has not listed it.
func (c *Cache[T]) updated(ctx context.Context, name, uri string) bool {
	key, ok := c.codec.Match(uri)
	if !ok {
		c.log.Debug(c.kind+": ignoring update of a resource it does not track", "server", name, "uri", uri)
		return true
	}
	s := c.current(name)
	if s == nil {
		return true
	}
	if l := s.listed.Load(); l == nil || (*l)[key] == "" {
		return false // not listed (or not yet): re-list, without waiting for s.op
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()

	s.gmu.Lock()
	g := s.updateG[key]
	if g == nil {
		g = &gate{}
		s.updateG[key] = g
	}
	g.req++
	ticket := g.req
	s.gmu.Unlock()

	s.op.Lock()
	defer s.op.Unlock()
	if g.done >= ticket {
		return true
	}
	listed, ok := s.uris[key]
	if !ok {
		s.gmu.Lock()
		delete(s.updateG, key)
		s.gmu.Unlock()
		return false
	}
	s.gmu.Lock()
	start := g.req
	s.gmu.Unlock()
	g.done = start

	delete(s.unread, key)
	if it, err := c.read(ctx, s, listed); err != nil {
		c.log.Warn(c.kind+": dropping resource after a failed re-read", "server", name, "uri", listed, "err", err)
		delete(s.items, key)
	} else {
		s.items[key] = it
	}
	if published, _ := c.publish(s); published {
		c.changed()
	}
	return true
}

// progress publishes the items of s read so far by a load in progress.
func (c *Cache[T]) progress(s *source[T]) func(map[string]T) {
	return func(got map[string]T) {
		for key, it := range got {
			s.items[key] = it
		}
		if published, visible := c.publish(s); published && visible {
			c.changed()
		}
	}
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
func (c *Cache[T]) selectAll(res []mcp.Resource) (order []string, uris map[string]string) {
	uris = make(map[string]string)
	for _, r := range res {
		key, ok := c.codec.Select(r.URI)
		if !ok {
			continue
		}
		if _, dup := uris[key]; dup {
			continue
		}
		uris[key] = r.URI
		order = append(order, key)
	}
	return order, uris
}

// giveUpAfter is how many reads in a row must time out before load gives
// up on the rest of a source's resources: a server whose every read hangs
// would otherwise hold its aggregation for len(keys) × ReadTimeout /
// Concurrency (hours for a large listing), and its event goroutine with it.
func giveUpAfter(workers int) int64 { return int64(max(2*workers, 8)) }

// maxSkipWarnings is how many resources a load skips with a warning each;
// the others are logged at debug level and counted in one warning, so that
// a server whose every read fails does not write one warning per resource.
const maxSkipWarnings = 10

// progressEvery is how often a load in progress publishes what it has read
// so far.
const progressEvery = 250 * time.Millisecond

var errBudget = errors.New("the build's time budget is spent")

// load subscribes to and reads the given keys of s with bounded concurrency
// and returns the items read and the keys left unread. Failures are logged
// and left out. Every progressEvery the items read so far are handed to
// progress (on the caller's goroutine), so that a long build is published as
// it goes. The whole load is bounded by the Budget: the reads still in
// flight then are abandoned and the keys not read are returned unread (one
// warning). So is it when giveUpAfter reads in a row time out. Unread keys
// are read at the source's next re-list, or when it reports them updated.
func (c *Cache[T]) load(ctx context.Context, s *source[T], keys []string, progress func(map[string]T)) (map[string]T, []string) {
	type result struct {
		i  int
		it T
		ok bool
	}
	out := make(map[string]T, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	ctx, stop := context.WithTimeoutCause(ctx, c.budget, errBudget)
	defer stop()
	ctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	done := make([]bool, len(keys)) // read, or failed for a reason of its own
	var mu sync.Mutex
	var ready []result
	var next, timeouts, failed atomic.Int64
	var gaveUp atomic.Bool
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
				uri := s.uris[key]
				if s.src.SupportsSubscribe() {
					c.subscribe(ctx, s, uri)
				}
				it, err := c.read(ctx, s, uri)
				if err != nil {
					if ctx.Err() != nil { // a shutdown, the budget, or given up: unread
						continue
					}
					if failed.Add(1) <= maxSkipWarnings {
						c.log.Warn(c.kind+": skipping resource", "server", s.name, "uri", uri, "err", err)
					} else {
						c.log.Debug(c.kind+": skipping resource", "server", s.name, "uri", uri, "err", err)
					}
					mu.Lock()
					ready = append(ready, result{i: i})
					mu.Unlock()
					if errors.Is(err, context.DeadlineExceeded) && timeouts.Add(1) >= limit && gaveUp.CompareAndSwap(false, true) {
						c.log.Warn(c.kind+": reads of this MCP server keep timing out; leaving its other resources unread until it reports them updated or re-lists",
							"server", s.name, "timeouts_in_a_row", limit, "unread", max(0, len(keys)-int(next.Load())))
						giveUp()
					}
					continue
				}
				timeouts.Store(0)
				mu.Lock()
				ready = append(ready, result{i: i, it: it, ok: true})
				mu.Unlock()
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	take := func() int {
		mu.Lock()
		batch := ready
		ready = nil
		mu.Unlock()
		fresh := 0
		for _, r := range batch {
			done[r.i] = true
			if r.ok {
				out[keys[r.i]] = r.it
				fresh++
			}
		}
		return fresh
	}
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for wait := true; wait; {
		select {
		case <-finished:
			wait = false
		case <-tick.C:
			if take() > 0 && progress != nil {
				progress(out)
			}
		}
	}
	take()
	var unread []string
	for i, ok := range done {
		if !ok {
			unread = append(unread, keys[i])
		}
	}
	if n := failed.Load(); n > maxSkipWarnings {
		c.log.Warn(c.kind+": more resources skipped than logged one by one (the others at debug level)",
			"server", s.name, "skipped", n, "logged", maxSkipWarnings)
	}
	if len(unread) > 0 && context.Cause(ctx) == errBudget && !gaveUp.Load() {
		c.log.Warn(c.kind+": the build's time budget is spent; leaving the resources not read yet unread until the MCP server re-lists or reports them updated",
			"server", s.name, "budget", c.budget, "read", len(out), "unread", len(unread))
	}
	return out, unread
}

func (c *Cache[T]) subscribe(ctx context.Context, s *source[T], uri string) {
	sctx, cancel := context.WithTimeout(ctx, c.rto)
	defer cancel()
	if err := s.src.Subscribe(sctx, uri); err != nil && ctx.Err() == nil {
		c.log.Warn(c.kind+": resources/subscribe failed", "server", s.name, "uri", uri, "err", err)
	}
}

func (c *Cache[T]) read(ctx context.Context, s *source[T], uri string) (T, error) {
	var zero T
	rctx, cancel := context.WithTimeout(ctx, c.rto)
	defer cancel()
	contents, err := s.src.ReadResource(rctx, uri)
	if err != nil {
		return zero, err
	}
	return c.codec.Decode(s.name, uri, mcpsource.Contents(contents))
}

// publish stores s's items in a new snapshot unless s has been replaced or
// removed meanwhile. It reports whether it published, and whether the server
// had or now has items (a change visible to readers).
func (c *Cache[T]) publish(s *source[T]) (published, visible bool) {
	items := make([]T, 0, len(s.items))
	for _, key := range s.order {
		if it, ok := s.items[key]; ok {
			items = append(items, it)
		}
	}
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
