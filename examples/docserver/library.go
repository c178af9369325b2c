package docserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/a2c-smcp/smcp-go/dpekit"
)

// DefaultHost is the dpe:// host of a document server started without one.
const DefaultHost = "local.docs"

// DefaultDebounce is how long a file must be quiet after a change before it
// is re-read: editors write a file in bursts (truncate, write, rename).
const DefaultDebounce = 150 * time.Millisecond

// Option configures a Library or a server made by NewServer.
type Option func(*config)

type config struct {
	host      string
	logger    *slog.Logger
	debounce  time.Duration
	watch     bool
	cacheDocs int
	budget    Budget
	kitOpts   []dpekit.Option
}

// DefaultCacheDocuments is how many parsed documents a Library keeps in
// memory by default.
const DefaultCacheDocuments = 64

// WithHost sets the dpe:// host NewServer serves (default DefaultHost).
func WithHost(host string) Option { return func(c *config) { c.host = host } }

// WithLogger sets the logger for warnings about files that cannot be served.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithDebounce sets how long a changed file must stay quiet before it is
// re-read (default DefaultDebounce).
func WithDebounce(d time.Duration) Option { return func(c *config) { c.debounce = d } }

// WithoutWatch turns off the file watcher: the folder is scanned once, and
// files are still re-read when their modification time or size changes.
func WithoutWatch() Option { return func(c *config) { c.watch = false } }

// WithCacheDocuments bounds how many parsed documents (their pages and
// elements) stay in memory, least recently used first out (default
// DefaultCacheDocuments). Every document's catalog metadata and page index
// are always kept; an evicted document is parsed again when a page or an
// element of it is read.
func WithCacheDocuments(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.cacheDocs = n
		}
	}
}

// WithParseBudget bounds the parsing of one file (default DefaultBudget).
// A file over it is reported with a warning and listed in the catalog as
// unavailable (see Budget).
func WithParseBudget(b Budget) Option { return func(c *config) { c.budget = b } }

// WithKitOptions passes options to dpekit.New (NewServer only).
func WithKitOptions(opts ...dpekit.Option) Option {
	return func(c *config) { c.kitOpts = append(c.kitOpts, opts...) }
}

// Library serves the files of one folder, recursively, as DPE documents. It
// implements dpekit.Provider, dpekit.PageIndexer and dpekit.Watcher.
//
// Files are parsed when first needed. Their metadata and page index are
// kept until the file's modification time or size changes (every access
// checks with one stat); their pages and elements are kept for the most
// recently used documents only (WithCacheDocuments), so that serving a large
// folder takes bounded memory. A file that cannot be parsed is left out of
// the catalog with a warning, and retried when it changes; a file over the
// parse budget (WithParseBudget) is listed as unavailable.
//
// Every file is opened through an os.Root of the folder: a path that leaves
// it — through "..", a symbolic link pointing outside (created before or
// while serving) or a link swapped in between a check and an open — is
// never opened.
type Library struct {
	root string
	fs   *os.Root // every open and stat goes through it
	cfg  config
	log  *slog.Logger

	mu      sync.RWMutex
	entries map[string]*entry // by doc_ref
	byPath  map[string]*entry // by slash-separated relative path

	parsed *lru.Cache[*entry, *parsed] // pages and elements of recent documents

	watcher   *fsnotify.Watcher
	closeOnce sync.Once
}

type entry struct {
	rel, abs, ref string
	kind          kind

	mu     sync.Mutex
	loaded bool
	stamp  stamp
	meta   *docMeta // nil when err is set
	err    error
}

// docMeta is what a Library keeps of every document: its catalog metadata
// and its page index.
type docMeta struct {
	docInfo
	pages []dpekit.PageInfo
}

func metaOf(p *parsed) *docMeta {
	m := &docMeta{docInfo: p.docInfo, pages: make([]dpekit.PageInfo, len(p.pages))}
	for i, pg := range p.pages {
		m.pages[i] = dpekit.PageInfo{Title: pg.Title, ElementCount: len(pg.Elements)}
	}
	return m
}

type stamp struct {
	mod  time.Time
	size int64
}

func stampOf(fi fs.FileInfo) stamp { return stamp{fi.ModTime(), fi.Size()} }

var _ interface {
	dpekit.Provider
	dpekit.PageIndexer
	dpekit.Watcher
} = (*Library)(nil)

// New scans root recursively and returns a Library serving it. Unless
// WithoutWatch is given it also starts watching root (new folders included),
// so that no change made after New returns is missed; the changes are
// reported by Watch. Close releases the watcher when Watch never runs.
func New(root string, opts ...Option) (*Library, error) {
	cfg := config{host: DefaultHost, logger: slog.Default(), debounce: DefaultDebounce, watch: true, cacheDocs: DefaultCacheDocuments, budget: DefaultBudget}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("docserver: %s is not a directory", root)
	}
	cache, err := lru.New[*entry, *parsed](cfg.cacheDocs)
	if err != nil {
		return nil, err
	}
	rfs, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("docserver: %w", err)
	}
	l := &Library{root: abs, fs: rfs, cfg: cfg, log: cfg.logger, entries: map[string]*entry{}, byPath: map[string]*entry{}, parsed: cache}
	if cfg.watch {
		if l.watcher, err = fsnotify.NewWatcher(); err != nil {
			rfs.Close()
			return nil, fmt.Errorf("docserver: watching %s: %w", root, err)
		}
	}
	if _, err := l.scan(abs); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// NewServer returns a dpekit.Server serving the folder root under the host
// given by WithHost (default DefaultHost). Closing the Server stops the
// watcher.
func NewServer(ctx context.Context, root string, opts ...Option) (*dpekit.Server, error) {
	l, err := New(root, opts...)
	if err != nil {
		return nil, err
	}
	kitOpts := append([]dpekit.Option{dpekit.WithName("smcp-docserver"), dpekit.WithLogger(l.log)}, l.cfg.kitOpts...)
	srv, err := dpekit.New(ctx, l.cfg.host, l, kitOpts...)
	if err != nil {
		l.Close()
		return nil, err
	}
	return srv, nil
}

// Root returns the absolute path of the served folder.
func (l *Library) Root() string { return l.root }

// Close stops the file watcher and closes the folder. It is called when
// Watch returns, so it is only needed for a Library whose Watch never runs.
func (l *Library) Close() error {
	var err error
	l.closeOnce.Do(func() {
		if l.watcher != nil {
			err = l.watcher.Close()
		}
		err = errors.Join(err, l.fs.Close())
	})
	return err
}

// scan adds every servable file under dir (and watches every folder). It
// returns the doc_refs of the files added.
func (l *Library) scan(dir string) ([]string, error) {
	var added []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			l.log.Warn("docserver: cannot read", "path", p, "err", err)
			return nil
		}
		if p != l.root && ignored(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if l.watcher != nil {
				if err := l.watcher.Add(p); err != nil {
					l.log.Warn("docserver: cannot watch", "path", p, "err", err)
				}
			}
			return nil
		}
		if ref, ok := l.track(p); ok {
			added = append(added, ref)
		}
		return nil
	})
	return added, err
}

// track adds the file at abs when it is a regular file inside the folder
// (a symbolic link is followed only while it stays inside) not yet tracked,
// and returns its doc_ref.
func (l *Library) track(abs string) (string, bool) {
	rel, err := filepath.Rel(l.root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	fi, err := l.fs.Stat(rel)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.log.Warn("docserver: not serving a path that leads outside the folder or cannot be read", "path", filepath.ToSlash(rel), "err", err)
		}
		return "", false
	}
	if !fi.Mode().IsRegular() {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.byPath[rel]; ok {
		return "", false
	}
	e := &entry{rel: rel, abs: abs, ref: DocRef(rel), kind: kindOf(rel)}
	l.entries[e.ref] = e
	l.byPath[rel] = e
	return e.ref, true
}

// untrack removes the entry of rel, or of every file under rel when it was
// a folder, and returns their doc_refs.
func (l *Library) untrack(rel string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var refs []string
	prefix := rel + "/"
	for p, e := range l.byPath {
		if p == rel || len(p) > len(prefix) && p[:len(prefix)] == prefix {
			delete(l.byPath, p)
			delete(l.entries, e.ref)
			l.parsed.Remove(e)
			refs = append(refs, e.ref)
		}
	}
	return refs
}

func (l *Library) entry(ref string) *entry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.entries[ref]
}

// load returns the entry's metadata, parsing the file when it is new or
// changed. errGone means the file no longer exists.
func (l *Library) load(ctx context.Context, e *entry) (*docMeta, error) {
	_, meta, err := l.parse(ctx, e, false)
	return meta, err
}

// full returns the entry's parsed document, from the cache or by parsing
// the file again.
func (l *Library) full(ctx context.Context, e *entry) (*parsed, error) {
	doc, _, err := l.parse(ctx, e, true)
	return doc, err
}

// parse brings the entry up to date with its file. With needDoc it also
// returns the parsed document, parsing the file again if the cache evicted
// it.
//
// A parse stops early when ctx ends; its result is then not kept, so the
// next access parses the file again.
func (l *Library) parse(ctx context.Context, e *entry, needDoc bool) (*parsed, *docMeta, error) {
	fi, err := l.fs.Stat(filepath.FromSlash(e.rel))
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, errGone
	}
	st := stampOf(fi)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.loaded && e.stamp == st {
		if e.err != nil {
			return nil, nil, e.err
		}
		if !needDoc {
			return nil, e.meta, nil
		}
		if doc, ok := l.parsed.Get(e); ok {
			return doc, e.meta, nil
		}
	}
	doc, opened, err := l.parseFile(ctx, e)
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		return nil, nil, ctxErr
	}
	if err == nil {
		st = opened // what was parsed, should the file have changed since the stat
	}
	e.loaded, e.stamp, e.err, e.meta = true, st, err, nil
	var unavailable *unavailableError
	switch {
	case err == nil:
		e.meta = metaOf(doc)
		for _, w := range doc.warnings {
			l.log.Warn("docserver: "+w, "path", e.rel)
		}
		l.parsed.Add(e, doc)
		return doc, e.meta, nil
	case errors.Is(err, errNotText) && e.kind == kindText:
		l.log.Debug("docserver: skipping a file that is not text", "path", e.rel)
	case errors.As(err, &unavailable):
		l.log.Warn("docserver: file listed as unavailable", "path", e.rel, "reason", unavailable.reason)
	default:
		l.log.Warn("docserver: skipping a file that cannot be parsed", "path", e.rel, "err", err)
	}
	l.parsed.Remove(e)
	return nil, nil, err
}

var errGone = errors.New("file is gone")

// parseFile opens the entry's file through the folder's os.Root and parses
// it within the budget. It returns the stamp of the file it opened.
func (l *Library) parseFile(ctx context.Context, e *entry) (*parsed, stamp, error) {
	f, err := l.fs.Open(filepath.FromSlash(e.rel))
	if err != nil {
		return nil, stamp{}, errGone
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, stamp{}, errGone
	}
	b := l.cfg.budget.start(ctx)
	doc, err := parseFile(f, fi.Size(), e.rel, e.kind, b)
	return doc, stampOf(fi), err
}

// fileURI is the file:// URI of an absolute path ("file:///C:/x" on Windows).
func fileURI(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

func (l *Library) document(e *entry, m *docMeta) dpekit.Document {
	e.mu.Lock()
	mod := e.stamp.mod
	e.mu.Unlock()
	return dpekit.Document{
		DocRef:       e.ref,
		Title:        m.title,
		FileType:     m.fileType,
		FileURI:      fileURI(e.abs),
		PageCount:    len(m.pages),
		Keywords:     m.keywords,
		Summary:      m.summary,
		LastModified: mod,
	}
}

// Documents lists every file that parses, ordered by path. Files not parsed
// yet are parsed in parallel.
func (l *Library) Documents(ctx context.Context) ([]dpekit.Document, error) {
	l.mu.RLock()
	all := make([]*entry, 0, len(l.entries))
	for _, e := range l.entries {
		all = append(all, e)
	}
	l.mu.RUnlock()
	sort.Slice(all, func(i, j int) bool { return all[i].rel < all[j].rel })

	docs := make([]*docMeta, len(all))
	errs := make([]error, len(all))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(all)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				docs[i], errs[i] = l.load(ctx, all[i])
			}
		}()
	}
	for i := range all {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]dpekit.Document, 0, len(all))
	for i, e := range all {
		var unavailable *unavailableError
		switch {
		case docs[i] != nil:
			out = append(out, l.document(e, docs[i]))
		case errors.As(errs[i], &unavailable):
			out = append(out, l.document(e, unavailableMeta(e, unavailable)))
		}
	}
	return out, nil
}

// unavailableMeta is the catalog entry of a file over its parse budget: no
// pages, the keyword "unavailable" and the reason as its summary.
func unavailableMeta(e *entry, u *unavailableError) *docMeta {
	name := path.Base(e.rel)
	return &docMeta{docInfo: docInfo{
		title:    strings.TrimSuffix(name, path.Ext(name)),
		fileType: fileType(name),
		keywords: []string{"unavailable"},
		summary:  "Unavailable: " + u.reason,
	}}
}

// lookup finds the entry of ref and its metadata.
func (l *Library) lookup(ctx context.Context, ref string) (*entry, *docMeta, error) {
	e := l.entry(ref)
	if e == nil {
		return nil, nil, dpekit.ErrNotFound
	}
	m, err := l.load(ctx, e)
	var unavailable *unavailableError
	switch {
	case ctx.Err() != nil && err != nil:
		return nil, nil, ctx.Err()
	case errors.As(err, &unavailable):
		return e, unavailableMeta(e, unavailable), nil
	case err != nil:
		// A file that is gone or does not parse is no document.
		return nil, nil, dpekit.ErrNotFound
	}
	return e, m, nil
}

// lookupFull finds the entry of ref and its parsed document.
func (l *Library) lookupFull(ctx context.Context, ref string) (*parsed, error) {
	e := l.entry(ref)
	if e == nil {
		return nil, dpekit.ErrNotFound
	}
	doc, err := l.full(ctx, e)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, dpekit.ErrNotFound
	}
	return doc, nil
}

// Document returns the metadata of one file.
func (l *Library) Document(ctx context.Context, ref string) (dpekit.Document, error) {
	e, m, err := l.lookup(ctx, ref)
	if err != nil {
		return dpekit.Document{}, err
	}
	return l.document(e, m), nil
}

// Page returns one page of a file.
func (l *Library) Page(ctx context.Context, ref string, index int) (dpekit.Page, error) {
	doc, err := l.lookupFull(ctx, ref)
	if err != nil {
		return dpekit.Page{}, err
	}
	if index < 0 || index >= len(doc.pages) {
		return dpekit.Page{}, dpekit.ErrNotFound
	}
	return doc.pages[index], nil
}

// Pages returns the page index window of a file, from the metadata kept for
// every document.
func (l *Library) Pages(ctx context.Context, ref string, offset, limit int) ([]dpekit.PageInfo, error) {
	_, m, err := l.lookup(ctx, ref)
	if err != nil {
		return nil, err
	}
	var out []dpekit.PageInfo
	for i := offset; i < len(m.pages) && i < offset+limit; i++ {
		out = append(out, m.pages[i])
	}
	return out, nil
}

// Element returns one element of a file.
func (l *Library) Element(ctx context.Context, ref, id string) (dpekit.Element, error) {
	doc, err := l.lookupFull(ctx, ref)
	if err != nil {
		return dpekit.Element{}, err
	}
	el, ok := doc.element(id)
	if !ok {
		return dpekit.Element{}, dpekit.ErrNotFound
	}
	return el, nil
}
