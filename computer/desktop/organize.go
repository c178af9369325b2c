package desktop

import (
	"cmp"
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/window"
)

// Window is one window:// resource of one MCP server with the contents its
// last read returned.
type Window struct {
	Server   string // the MCP server's configured name
	URI      string // as the server listed it
	Contents []protocol.ResourceContents
	// Priority is the listing's annotations.priority (0 to 1; out of that
	// range 0, as the 0.4 references read it), nil when the listing has
	// none: the URI's priority query parameter (0 to 100) then stands for
	// it, divided by 100.
	Priority *float64
	// Fullscreen is the listing's _meta.fullscreen (true only for true),
	// nil when the listing has none: the URI's fullscreen query parameter
	// then stands for it.
	Fullscreen *bool
}

// Layout is a window's priority (0 to 1) and fullscreen flag: the 0.4
// places first (annotations.priority, _meta.fullscreen), the 0.2 URI query
// as the fallback (https://github.com/a2c-smcp/smcp-go/blob/main/spec/desktop.md#window-metadata).
func (w Window) Layout(u *window.URI) (priority float64, fullscreen bool) {
	priority = float64(u.Priority) / window.MaxPriority
	if w.Priority != nil {
		priority = *w.Priority
	}
	fullscreen = u.Fullscreen
	if w.Fullscreen != nil {
		fullscreen = *w.Fullscreen
	}
	return priority, fullscreen
}

// Render renders w as one Desktop entry (https://github.com/a2c-smcp/smcp-go/blob/main/spec/desktop.md#desktop): the URI
// alone, or the URI, a blank line and the body, where the body is the
// non-empty text contents joined by a blank line and trimmed of surrounding
// white space. Blob contents are skipped.
func Render(w Window) string {
	var parts []string
	for _, c := range w.Contents {
		if c.Text != nil && *c.Text != "" {
			parts = append(parts, *c.Text)
		}
	}
	body := strings.TrimSpace(strings.Join(parts, "\n\n"))
	if body == "" {
		return w.URI
	}
	return w.URI + "\n\n" + body
}

// Organize is the Desktop organizer (https://github.com/a2c-smcp/smcp-go/blob/main/spec/desktop.md#desktop; Python SDK
// a2c_smcp/computer/desktop/organize.py, v0.1.2, and the same order in
// v0.4.2), for every generation. It returns the rendered windows:
//
//  1. Windows without contents, and windows whose URI is not a valid
//     window:// URI, are dropped.
//  2. Servers are ordered by the tool-call history read backwards and
//     de-duplicated (most recently used first), then the other servers
//     alphabetically. history is oldest first.
//  3. Within a server, windows are ordered by priority (Window.Layout),
//     highest first; ties keep the input order.
//  4. A server that has a fullscreen window contributes only one window: the
//     first fullscreen window in that order (the highest-priority one,
//     the earliest listed among equals — the Python SDK lists each server's
//     windows sorted by priority before organising and keeps the first
//     fullscreen of that list; 0.4.2 does so too, measured against it).
//  5. The result is cut to size windows: nil keeps all, size ≤ 0 gives none.
//     Once the result is full no further server is visited.
//
// The result is never nil.
func Organize(windows []Window, size *int, history []string) []string {
	out := []string{}
	if size != nil && *size <= 0 {
		return out
	}
	limit := -1
	if size != nil {
		limit = *size
	}
	type item struct {
		w          Window
		priority   float64
		fullscreen bool
	}
	grouped := map[string][]item{}
	var servers []string
	for _, w := range windows {
		if len(w.Contents) == 0 {
			continue
		}
		u, err := window.Parse(w.URI)
		if err != nil {
			continue
		}
		if _, ok := grouped[w.Server]; !ok {
			servers = append(servers, w.Server)
		}
		p, f := w.Layout(u)
		grouped[w.Server] = append(grouped[w.Server], item{w: w, priority: p, fullscreen: f})
	}
	slices.Sort(servers)
	for _, s := range serverOrder(history, servers) {
		items := grouped[s]
		if len(items) == 0 {
			continue
		}
		if limit >= 0 && len(out) >= limit {
			break
		}
		slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(b.priority, a.priority) })
		if i := slices.IndexFunc(items, func(it item) bool { return it.fullscreen }); i >= 0 {
			out = append(out, Render(items[i].w))
			continue
		}
		for _, it := range items {
			if limit >= 0 && len(out) >= limit {
				break
			}
			out = append(out, Render(it.w))
		}
	}
	return out
}

// serverOrder: the history read backwards and de-duplicated, then the other
// servers of present (sorted) in order.
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
