package desktop

import (
	"context"
	"log/slog"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/answer"
	"github.com/a2c-smcp/smcp-go/computer/internal/clip"
	"github.com/a2c-smcp/smcp-go/computer/internal/rescache"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/window"
	"github.com/mark3labs/mcp-go/mcp"
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
	maxAnswer   int64
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

// WithMaxAnswerBytes bounds the JSON encoding of one Get answer (default
// protocol.DefaultMaxPayloadBytes, the Server's payload limit); see Get.
func WithMaxAnswerBytes(n int64) Option { return func(o *options) { o.maxAnswer = n } }

// WithOnChange sets the function called once per burst of desktop changes;
// the Computer emits server:update_desktop from it.
func WithOnChange(fn func()) Option { return func(o *options) { o.onChange = fn } }

// Desktop is the Computer's desktop: the window:// resources of every MCP
// server declaring resources.subscribe, with their bodies cached and kept
// current from MCP notifications (https://github.com/a2c-smcp/smcp-go/blob/main/spec/desktop.md#desktop). A window whose
// read fails is left out with a warning until its next resources/updated.
//
// All methods are safe for concurrent use. AddSource, ResourceListChanged
// and ResourceUpdated make MCP calls and return when the cache is current:
// never call them on an MCP client's read loop.
type Desktop struct {
	cache     *rescache.Cache[Window]
	log       *slog.Logger
	maxAnswer int64
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
	if o.maxAnswer <= 0 {
		o.maxAnswer = protocol.DefaultMaxPayloadBytes
	}
	d := &Desktop{log: o.logger, maxAnswer: o.maxAnswer}
	codec := rescache.Codec[Window]{
		Select: canonical,
		Match:  canonical,
		Decode: func(server string, res mcp.Resource, contents []protocol.ResourceContents) (Window, error) {
			w := Window{Server: server, URI: res.URI, Contents: d.clipContents(server, res.URI, contents)}
			if a := res.Annotations; a != nil && a.Priority != nil {
				p := protocol.WindowPriority(map[string]any{"priority": *a.Priority})
				w.Priority = &p
			}
			if m := res.Meta; m != nil {
				if _, ok := m.AdditionalFields[protocol.MetaFullscreen]; ok {
					f := protocol.WindowFullscreen(m.AdditionalFields)
					w.Fullscreen = &f
				}
			}
			return w, nil
		},
	}
	d.cache = rescache.New(codec, rescache.Options{
		Kind:        "desktop",
		Logger:      o.logger,
		Concurrency: o.concurrency,
		ReadTimeout: o.readTimeout,
		Debounce:    o.debounce,
		OnChange:    o.onChange,
	})
	return d
}

// clipContents keeps at most the answer limit of a window's text: more
// could never be sent (Get), and a window's body is held in memory for as
// long as the window is listed. A window over it is cut, with one warning.
func (d *Desktop) clipContents(server, uri string, contents []protocol.ResourceContents) []protocol.ResourceContents {
	budget := d.maxAnswer - answer.Envelope
	var total int64
	for _, c := range contents {
		if c.Text != nil {
			total += int64(len(*c.Text))
		}
	}
	if total <= budget {
		return contents
	}
	d.log.Warn("desktop: a window's text exceeds the answer limit; kept cut", "server", server,
		"uri", clip.String(uri, 80), "bytes", total, "limit", d.maxAnswer, "code", int(protocol.CodePayloadTooLarge))
	out := make([]protocol.ResourceContents, 0, len(contents))
	for _, c := range contents {
		if c.Text != nil {
			t := clip.String(*c.Text, int(max(budget, 0)))
			budget -= int64(len(t))
			c.Text = &t
		}
		out = append(out, c)
	}
	return out
}

// fit cuts the organised windows to the answer limit: the first window is
// cut to it when it is larger on its own, and the list ends before the
// first window that would not fit.
func (d *Desktop) fit(windows []string) []string {
	budget := d.maxAnswer - answer.Envelope
	var used int64
	for i, w := range windows {
		n := answer.Size(w)
		if i == 0 && n > budget {
			// clipContents keeps a window's text within the limit, but
			// its URI and JSON's escapes may make it larger.
			cut := int(budget * int64(len(w)) / n)
			for n > budget && cut > 0 {
				windows[0] = clip.String(w, cut)
				n = answer.Size(windows[0])
				cut = cut * 9 / 10
			}
		}
		if used+n > budget {
			d.log.Debug("desktop: answer cut to the payload limit", "windows", i, "of", len(windows), "limit", d.maxAnswer)
			return windows[:i]
		}
		used += n + 1 // its comma
	}
	return windows
}

func canonical(uri string) (string, bool) {
	u, err := window.Parse(uri)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// AddSource lists src's window:// resources, subscribes to (when src
// declares resources.subscribe) and reads each. It replaces the windows of a
// previous source of the same name. A source without subscribe is listed
// all the same, as the 0.4 references do: its windows are read again when
// it sends resources/list_changed. A listing failure is returned; the
// source stays known so that a later ResourceListChanged can fill it.
func (d *Desktop) AddSource(ctx context.Context, src mcpsource.Source) error {
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
//
// The answer fits the payload limit (WithMaxAnswerBytes; https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md,
// Limits): it ends before the first window that would exceed it, and a
// first window too large on its own is cut (a window's text is kept cut to
// the limit when it is read, with a warning). Without it, one window of a
// few megabytes of log, or many windows, made an answer the Server refuses
// by closing the Computer's connection.
//
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
	return d.fit(Organize(windows, size, history)), nil
}

// Close cancels in-flight refreshes and stops OnChange. Get keeps answering
// from the last cache.
func (d *Desktop) Close() { d.cache.Close() }
