package docserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

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
	host     string
	logger   *slog.Logger
	debounce time.Duration
	watch    bool
	kitOpts  []dpekit.Option
}

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

// WithKitOptions passes options to dpekit.New (NewServer only).
func WithKitOptions(opts ...dpekit.Option) Option {
	return func(c *config) { c.kitOpts = append(c.kitOpts, opts...) }
}

// Library serves the files of one folder, recursively, as DPE documents. It
// implements dpekit.Provider, dpekit.PageIndexer and dpekit.Watcher.
//
// Files are parsed when first needed and kept until their modification time
// or size changes (every access checks with one stat). A file that cannot be
// parsed is left out of the catalog with a warning, and retried when it
// changes.
type Library struct {
	root string
	cfg  config
	log  *slog.Logger

	mu      sync.RWMutex
	entries map[string]*entry // by doc_ref
	byPath  map[string]*entry // by slash-separated relative path

	watcher   *fsnotify.Watcher
	closeOnce sync.Once
}

type entry struct {
	rel, abs, ref string
	kind          kind

	mu     sync.Mutex
	loaded bool
	stamp  stamp
	doc    *parsed
	err    error
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
	cfg := config{host: DefaultHost, logger: slog.Default(), debounce: DefaultDebounce, watch: true}
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
	l := &Library{root: abs, cfg: cfg, log: cfg.logger, entries: map[string]*entry{}, byPath: map[string]*entry{}}
	if cfg.watch {
		if l.watcher, err = fsnotify.NewWatcher(); err != nil {
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

// Close stops the file watcher. It is called when Watch returns, so it is
// only needed for a Library whose Watch never runs.
func (l *Library) Close() error {
	var err error
	l.closeOnce.Do(func() {
		if l.watcher != nil {
			err = l.watcher.Close()
		}
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

// track adds the file at abs when it is a regular file not yet tracked, and
// returns its doc_ref.
func (l *Library) track(abs string) (string, bool) {
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	rel, err := filepath.Rel(l.root, abs)
	if err != nil {
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

// load returns the entry's parsed document, parsing the file when it is new
// or changed. errGone means the file no longer exists.
func (l *Library) load(e *entry) (*parsed, error) {
	fi, err := os.Stat(e.abs)
	if err != nil {
		return nil, errGone
	}
	st := stampOf(fi)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.loaded && e.stamp == st {
		return e.doc, e.err
	}
	doc, err := parseFile(e.abs, e.rel, e.kind)
	e.loaded, e.stamp, e.doc, e.err = true, st, doc, err
	switch {
	case err == nil:
	case errors.Is(err, errNotText) && e.kind == kindText:
		l.log.Debug("docserver: skipping a file that is not text", "path", e.rel)
	default:
		l.log.Warn("docserver: skipping a file that cannot be parsed", "path", e.rel, "err", err)
	}
	return doc, err
}

var errGone = errors.New("file is gone")

// fileURI is the file:// URI of an absolute path ("file:///C:/x" on Windows).
func fileURI(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

func (l *Library) document(e *entry, doc *parsed) dpekit.Document {
	e.mu.Lock()
	mod := e.stamp.mod
	e.mu.Unlock()
	return dpekit.Document{
		DocRef:       e.ref,
		Title:        doc.title,
		FileType:     doc.fileType,
		FileURI:      fileURI(e.abs),
		PageCount:    len(doc.pages),
		Keywords:     doc.keywords,
		Summary:      doc.summary,
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

	docs := make([]*parsed, len(all))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(all)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				docs[i], _ = l.load(all[i])
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
		if docs[i] != nil {
			out = append(out, l.document(e, docs[i]))
		}
	}
	return out, nil
}

func (l *Library) lookup(ref string) (*entry, *parsed, error) {
	e := l.entry(ref)
	if e == nil {
		return nil, nil, dpekit.ErrNotFound
	}
	doc, err := l.load(e)
	if err != nil {
		// A file that is gone or does not parse is no document.
		return nil, nil, dpekit.ErrNotFound
	}
	return e, doc, nil
}

// Document returns the metadata of one file.
func (l *Library) Document(_ context.Context, ref string) (dpekit.Document, error) {
	e, doc, err := l.lookup(ref)
	if err != nil {
		return dpekit.Document{}, err
	}
	return l.document(e, doc), nil
}

// Page returns one page of a file.
func (l *Library) Page(_ context.Context, ref string, index int) (dpekit.Page, error) {
	_, doc, err := l.lookup(ref)
	if err != nil {
		return dpekit.Page{}, err
	}
	if index < 0 || index >= len(doc.pages) {
		return dpekit.Page{}, dpekit.ErrNotFound
	}
	return doc.pages[index], nil
}

// Pages returns the page index window of a file.
func (l *Library) Pages(_ context.Context, ref string, offset, limit int) ([]dpekit.PageInfo, error) {
	_, doc, err := l.lookup(ref)
	if err != nil {
		return nil, err
	}
	var out []dpekit.PageInfo
	for i := offset; i < len(doc.pages) && i < offset+limit; i++ {
		out = append(out, dpekit.PageInfo{Title: doc.pages[i].Title, ElementCount: len(doc.pages[i].Elements)})
	}
	return out, nil
}

// Element returns one element of a file.
func (l *Library) Element(_ context.Context, ref, id string) (dpekit.Element, error) {
	_, doc, err := l.lookup(ref)
	if err != nil {
		return dpekit.Element{}, err
	}
	el, ok := doc.element(id)
	if !ok {
		return dpekit.Element{}, dpekit.ErrNotFound
	}
	return el, nil
}
