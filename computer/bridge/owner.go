package bridge

// Owner returns the MCP server that serves a URI or URI template's scheme
// and host (the first by name that is up, else the first that is down, with
// up false), as reads are routed; ok is false when no server serves it or
// uri names no scheme and host (client:complete,
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion).
func (b *Bridge) Owner(uri string) (name string, up, ok bool) {
	r, found := routeOfTemplate(uri)
	if !found {
		if r, found = routeOf(uri); !found {
			return "", false, false
		}
	}
	name, src, down := b.pick(r.scheme, r.host)
	switch {
	case src != nil:
		return name, true, true
	case down:
		return name, false, true
	}
	return "", false, false
}
