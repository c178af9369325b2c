package desktop

import (
	"context"
	"log/slog"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/rescache"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/window"
)

// Defaults of the Desktop's options.
const (
	DefaultConcurrency = rescache.DefaultConcurrency
	DefaultDebounce    = rescache.DefaultDebounce
	DefaultReadTimeout = rescache.DefaultReadTimeout
)

// Option configures a Desktop.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	concurrency int
	debounce    time.Duration
	readTimeout time.Duration
	onChange    func()
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithConcurrency bounds the window reads in flight for one server during an
// aggregation (default DefaultConcurrency).
func WithConcurrency(n int) Option { return func(o *options) { o.concurrency = n } }

// WithDebounce sets how long a burst of changes must be quiet before OnChange
// runs (default DefaultDebounce).
func WithDebounce(d time.Duration) Option { return func(o *options) { o.debounce = d } }

// WithReadTimeout bounds each window read and subscribe (default
// DefaultReadTimeout).
func WithReadTimeout(d time.Duration) Option { return func(o *options) { o.readTimeout = d } }

// WithOnChange sets the function called once per burst of desktop changes;
// the Computer emits server:update_desktop from it.
func WithOnChange(fn func()) Option { return func(o *options) { o.onChange = fn } }

// Desktop is the Computer's desktop: the window:// resources of every MCP
// server declaring resources.subscribe, with their bodies cached and kept
// current from MCP notifications (spec/desktop.md, Desktop). A window whose
// read fails is left out with a warning until its next resources/updated.
//
// All methods are safe for concurrent use. AddSource, ResourceListChanged
// and ResourceUpdated make MCP calls and return when the cache is current:
// never call them on an MCP client's read loop.
type Desktop struct {
	cache *rescache.Cache[Window]
}

// New returns an empty Desktop.
func New(opts ...Option) *Desktop {
	o := options{logger: slog.Default(), debounce: DefaultDebounce}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	codec := rescache.Codec[Window]{
		Select: canonical,
		Match:  canonical,
		Decode: func(server, uri string, contents []protocol.ResourceContents) (Window, error) {
			return Window{Server: server, URI: uri, Contents: contents}, nil
		},
	}
	return &Desktop{cache: rescache.New(codec, rescache.Options{
		Kind:        "desktop",
		Logger:      o.logger,
		Concurrency: o.concurrency,
		ReadTimeout: o.readTimeout,
		Debounce:    o.debounce,
		OnChange:    o.onChange,
	})}
}

func canonical(uri string) (string, bool) {
	u, err := window.Parse(uri)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// AddSource lists src's window:// resources, subscribes to and reads each.
// It replaces the windows of a previous source of the same name. A source
// that does not declare resources.subscribe is ignored. A listing failure is
// returned; the source stays known so that a later ResourceListChanged can
// fill it.
func (d *Desktop) AddSource(ctx context.Context, src mcpsource.Source) error {
	if !src.SupportsSubscribe() {
		return nil
	}
	return d.cache.Add(ctx, src)
}

// RemoveSource withdraws the named server's windows.
func (d *Desktop) RemoveSource(name string) { d.cache.Remove(name) }

// ResourceListChanged re-lists the server's windows and diffs the URI sets:
// only new windows are read; an unchanged set reads nothing and signals
// nothing.
func (d *Desktop) ResourceListChanged(ctx context.Context, name string) {
	d.cache.ListChanged(ctx, name)
}

// ResourceUpdated re-reads the one listed window named by uri (compared in
// canonical form) and signals a change. Other URIs are ignored.
func (d *Desktop) ResourceUpdated(ctx context.Context, name, uri string) {
	d.cache.Updated(ctx, name, uri)
}

// Windows returns the cached windows, servers alphabetically, each server's
// windows in listing order.
func (d *Desktop) Windows() []Window {
	snap := d.cache.Snapshot()
	out := make([]Window, 0, snap.Len)
	for _, s := range snap.Servers {
		out = append(out, snap.Items[s]...)
	}
	return out
}

// Get answers client:get_desktop from the cache: the windows organised by
// Organize with size (desktop_size) and the tool-call history (server names,
// oldest first). A non-empty win (the request's window) restricts the
// desktop to that one window, compared with the listed URIs as written or in
// canonical form; an unknown window gives an empty desktop, an invalid one a
// *protocol.Error (400).
// ctx is accepted for symmetry with the other client:* handlers; Get makes
// no MCP call.
func (d *Desktop) Get(_ context.Context, size *int, win string, history []string) ([]string, error) {
	windows := d.Windows()
	if win != "" {
		u, err := window.Parse(win)
		if err != nil {
			return nil, err
		}
		want := u.String()
		var one []Window
		for _, w := range windows {
			if w.URI == win {
				one = append(one, w)
			}
		}
		if len(one) == 0 {
			for _, w := range windows {
				if c, ok := canonical(w.URI); ok && c == want {
					one = append(one, w)
				}
			}
		}
		windows = one
	}
	return Organize(windows, size, history), nil
}

// Close cancels in-flight refreshes and stops OnChange. Get keeps answering
// from the last cache.
func (d *Desktop) Close() { d.cache.Close() }
