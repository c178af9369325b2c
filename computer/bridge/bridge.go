// Package bridge is the Computer's read bridge for the extension event
// client:read_resource (spec/finder.md, Reading through the Computer).
//
// Read parses the URI (dpe:// with the eight rules of spec/finder.md (dpe URIs)
// → 4204 when invalid; window:// per spec/desktop.md, window URIs → 400),
// refuses schemes that are not allowed (dpe and window by default,
// WithAllowedSchemes), finds the MCP server serving the URI's host — learned
// from every source's listed resources and resource templates — and forwards
// resources/read, relaying the contents. Errors keep their meaning end to end
// (see MapError).
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/answer"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
	"github.com/a2c-smcp/smcp-go/protocol/window"
	"github.com/mark3labs/mcp-go/mcp"
)

// DefaultReadTimeout bounds a forwarded read when the caller's context has
// no deadline.
const DefaultReadTimeout = 30 * time.Second

// DefaultSchemes are the URI schemes Read accepts unless WithAllowedSchemes
// says otherwise.
var DefaultSchemes = []string{"dpe", "window"}

// Option configures a Bridge.
type Option func(*Bridge)

// WithAllowedSchemes replaces the schemes Read accepts (compared
// case-insensitively). dpe and window URIs are validated by their parsers;
// a URI of another allowed scheme needs a non-empty host.
func WithAllowedSchemes(schemes ...string) Option {
	return func(b *Bridge) {
		b.allowed = map[string]bool{}
		for _, s := range schemes {
			b.allowed[strings.ToLower(s)] = true
		}
	}
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(b *Bridge) { b.log = l } }

// WithMaxPayloadBytes bounds the JSON-encoded size of a read's answer
// (default protocol.DefaultMaxPayloadBytes, the Server's default limit of
// one message). A larger answer is refused with 413 and advice on how to
// narrow the read, instead of being sent to a Server that would close the
// connection for it (spec/protocol.md, Limits). n ≤ 0 keeps the default.
func WithMaxPayloadBytes(n int64) Option {
	return func(b *Bridge) {
		if n > 0 {
			b.maxPayload = n
		}
	}
}

// WithReadTimeout bounds a forwarded read when the caller's context has no
// deadline (default DefaultReadTimeout).
func WithReadTimeout(d time.Duration) Option { return func(b *Bridge) { b.timeout = d } }

type route struct{ scheme, host string }

type source struct {
	src    mcpsource.Source // nil while the server is down (SourceDown)
	routes []route
	down   error // why the server is down
}

// Bridge routes resources/read to the MCP server serving a URI's host. It is
// safe for concurrent use.
type Bridge struct {
	log        *slog.Logger
	allowed    map[string]bool
	timeout    time.Duration
	maxPayload int64

	mu      sync.RWMutex
	sources map[string]*source // by server name
	routes  map[route][]string // → server names, sorted
}

// New returns a bridge with no source.
func New(opts ...Option) *Bridge {
	b := &Bridge{log: slog.Default(), timeout: DefaultReadTimeout, maxPayload: protocol.DefaultMaxPayloadBytes,
		sources: map[string]*source{}, routes: map[route][]string{}}
	WithAllowedSchemes(DefaultSchemes...)(b)
	for _, o := range opts {
		o(b)
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	return b
}

// AddSource learns which hosts src serves from its listed resources and
// resource templates, replacing what was known for a source of the same name.
// While it lists, and when both listings fail (its only error), the hosts a
// previous source of that name served stay routed to src; a new source then
// has no host until ResourceListChanged.
func (b *Bridge) AddSource(ctx context.Context, src mcpsource.Source) error {
	s := &source{src: src}
	b.mu.Lock()
	if old := b.sources[src.Name()]; old != nil {
		// Until the listing below answers, the hosts it served stay routed,
		// to the new connection: a resync or a restart must not answer
		// 4201 for documents that are still there.
		s.routes = old.routes
	}
	b.setLocked(src.Name(), s)
	b.mu.Unlock()
	return b.learn(ctx, src.Name(), s)
}

// RemoveSource forgets the named server (it was stopped or removed from the
// configuration): reads of its hosts answer 4201.
func (b *Bridge) RemoveSource(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.setLocked(name, nil)
}

// SourceDown records that the named server's connection was lost and is
// being re-established (a crash, a restart): its hosts stay routed to it,
// and reads of them answer 503 (temporarily unavailable) rather than 4201
// (no such document) until AddSource brings it back or RemoveSource
// forgets it. err is the reason, logged only.
func (b *Bridge) SourceDown(name string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sources[name]
	if s == nil {
		return
	}
	b.setLocked(name, &source{routes: s.routes, down: err})
}

// ResourceListChanged re-learns the named server's hosts.
func (b *Bridge) ResourceListChanged(ctx context.Context, name string) {
	b.mu.RLock()
	s := b.sources[name]
	b.mu.RUnlock()
	if s == nil || s.src == nil {
		return
	}
	if err := b.learn(ctx, name, s); err != nil {
		b.log.Warn("bridge: re-listing failed", "server", name, "err", err)
	}
}

func (b *Bridge) learn(ctx context.Context, name string, s *source) error {
	res, errR := s.src.ListResources(ctx)
	tpl, errT := s.src.ListResourceTemplates(ctx)
	seen := map[route]bool{}
	var routes []route
	add := func(r route, ok bool) {
		if ok && b.allowed[r.scheme] && !seen[r] {
			seen[r] = true
			routes = append(routes, r)
		}
	}
	for _, r := range res {
		add(routeOf(r.URI))
	}
	for _, t := range tpl {
		if t.URITemplate != nil && t.URITemplate.Template != nil {
			add(routeOfTemplate(t.URITemplate.Raw()))
		}
	}
	if errR != nil && errT != nil {
		return fmt.Errorf("bridge: listing resources and templates of %q: %w", name, errors.Join(errR, errT))
	}
	if errR != nil {
		b.log.Warn("bridge: listing resources failed; routing by templates only", "server", name, "err", errR)
	}
	if errT != nil && !errors.Is(errT, mcp.ErrMethodNotFound) {
		b.log.Debug("bridge: listing resource templates failed", "server", name, "err", errT)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sources[name] != s { // replaced or removed meanwhile
		return nil
	}
	b.setLocked(name, nil)
	s.routes = routes
	b.setLocked(name, s)
	for _, r := range routes {
		if names := b.routes[r]; len(names) > 1 {
			b.log.Warn("bridge: several MCP servers serve one host; reads go to the first by name",
				"scheme", r.scheme, "host", r.host, "servers", names)
		}
	}
	return nil
}

// setLocked replaces the named source (nil removes it) and its routes.
func (b *Bridge) setLocked(name string, s *source) {
	if old := b.sources[name]; old != nil {
		for _, r := range old.routes {
			names := slices.DeleteFunc(slices.Clone(b.routes[r]), func(n string) bool { return n == name })
			if len(names) == 0 {
				delete(b.routes, r)
			} else {
				b.routes[r] = names
			}
		}
		delete(b.sources, name)
	}
	if s == nil {
		return
	}
	b.sources[name] = s
	for _, r := range s.routes {
		names := append(slices.Clone(b.routes[r]), name)
		slices.Sort(names)
		b.routes[r] = names
	}
}

// Server returns the name of the MCP server that serves scheme://host, the
// first by name when several do.
func (b *Bridge) Server(scheme, host string) (string, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	names := b.routes[route{strings.ToLower(scheme), strings.ToLower(host)}]
	if len(names) == 0 {
		return "", false
	}
	return names[0], true
}

// pick returns the server that reads scheme://host: the first by name that
// is up, else the first that is down (down true, src nil).
func (b *Bridge) pick(scheme, host string) (name string, src mcpsource.Source, down bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, n := range b.routes[route{strings.ToLower(scheme), strings.ToLower(host)}] {
		s := b.sources[n]
		switch {
		case s == nil:
		case s.src != nil:
			return n, s.src, false
		case !down:
			name, down = n, true
		}
	}
	return name, nil, down
}

// Read forwards resources/read for uri to the MCP server serving its host and
// returns the contents. Every error is a *protocol.Error: 4204 for an
// invalid dpe:// URI or a scheme that is not allowed, 400 for an invalid
// window:// URI, 4201 when no server serves the host, 503 when the server
// that serves it is down and reconnecting (SourceDown), 413 when the answer
// would exceed the payload limit (WithMaxPayloadBytes), and the read's own
// error mapped by MapError.
func (b *Bridge) Read(ctx context.Context, uri string) ([]protocol.ResourceContents, error) {
	scheme, host, perr := b.parse(uri)
	if perr != nil {
		return nil, perr
	}
	name, src, down := b.pick(scheme, host)
	if src == nil {
		if down {
			return nil, protocol.NewUnavailable("the MCP server %q serving %s://%s is unavailable (reconnecting); retry later", name, scheme, host).
				With("uri", clipURI(uri)).With("host", host).With("server", name)
		}
		return nil, protocol.NewDocumentNotFound("no MCP server serves %s://%s", scheme, host).
			With("uri", uri).With("host", host)
	}
	if _, has := ctx.Deadline(); !has && b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	contents, err := src.ReadResource(ctx, uri)
	if err != nil {
		pe := MapError(err, uri)
		b.log.Debug("bridge: read failed", "server", name, "uri", uri, "code", pe.Code, "err", err)
		return nil, pe
	}
	out := mcpsource.Contents(contents)
	if err := b.checkSize(uri, out); err != nil {
		b.log.Warn("bridge: answer over the payload limit refused", "server", name, "uri", clipURI(uri),
			"bytes", err.Details["bytes"], "limit", b.maxPayload)
		return nil, err
	}
	return out, nil
}

// checkSize refuses contents whose JSON encoding, with room for its
// envelope, would exceed the payload limit.
func (b *Bridge) checkSize(uri string, contents []protocol.ResourceContents) *protocol.Error {
	var n int64
	for _, c := range contents {
		if c.Text != nil {
			n += int64(len(*c.Text))
		}
		if c.Blob != nil {
			n += int64(len(*c.Blob))
		}
	}
	if n+answer.Envelope <= b.maxPayload {
		// Escaping can at most grow text six-fold; measure exactly only
		// when the raw size comes close.
		if 6*n+answer.Envelope <= b.maxPayload {
			return nil
		}
		raw, err := json.Marshal(contents)
		if err != nil {
			return protocol.NewInternal("encoding the answer to %s: %v", clipURI(uri), err)
		}
		if n = int64(len(raw)); n+answer.Envelope <= b.maxPayload {
			return nil
		}
	}
	return protocol.NewPayloadTooLarge("the answer to %s exceeds the payload limit of %d bytes; narrow the read: "+
		"a page with fewer categories (?categories=table), single elements (…/elements/{element_id}), "+
		"a smaller page window (?depth=pages&limit=…), or format=text", clipURI(uri), b.maxPayload).
		With("uri", clipURI(uri)).With("bytes", n).With("limit", b.maxPayload)
}

// parse checks uri against the allowed schemes and its scheme's rules and
// returns the lower-case scheme and host to route by.
func (b *Bridge) parse(uri string) (scheme, host string, err *protocol.Error) {
	r, ok := routeOf(uri)
	if !ok {
		return "", "", protocol.NewInvalidDPEURI("not a URI: missing scheme://host").
			With("uri", clipURI(uri)).With("reason", "missing scheme")
	}
	if !b.allowed[r.scheme] {
		return "", "", protocol.NewInvalidDPEURI("URI scheme %q may not be read through the Computer", r.scheme).
			With("uri", clipURI(uri)).With("reason", "scheme not allowed")
	}
	switch r.scheme {
	case "dpe":
		u, err := dpe.Parse(uri)
		if err != nil {
			return "", "", protocol.AsError(err)
		}
		return r.scheme, strings.ToLower(u.Host), nil
	case "window":
		u, err := window.Parse(uri)
		if err != nil {
			return "", "", protocol.AsError(err)
		}
		return r.scheme, strings.ToLower(u.Host), nil
	}
	if r.host == "" {
		return "", "", protocol.NewBadRequest("URI has no host").With("uri", clipURI(uri))
	}
	return r.scheme, r.host, nil
}

// routeOf extracts the lower-cased scheme and host of a URI.
func routeOf(uri string) (route, bool) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/?#") {
		return route{}, false
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	return route{strings.ToLower(scheme), strings.ToLower(host)}, host != ""
}

// routeOfTemplate extracts scheme and host from an RFC 6570 URI template. A
// host built from a variable ("dpe://{host}/…") cannot be routed; an
// expression that starts a path or query right after a literal host
// ("dpe://docs{/doc}", "dpe://docs{+rest}") ends it.
func routeOfTemplate(tpl string) (route, bool) {
	scheme, rest, ok := strings.Cut(tpl, "://")
	if !ok || strings.ContainsAny(scheme, "{}/?#") {
		return route{}, false
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#{"); i >= 0 {
		host = rest[:i]
		if rest[i] == '{' && (i+1 >= len(rest) || !strings.ContainsRune("+/?&#", rune(rest[i+1]))) {
			return route{}, false
		}
	}
	if strings.ContainsAny(host, "{}") {
		return route{}, false
	}
	return route{strings.ToLower(scheme), strings.ToLower(host)}, host != ""
}
