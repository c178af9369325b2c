package desktop

import (
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
)

func text(s string) protocol.ResourceContents { return protocol.ResourceContents{Text: &s} }
func blob(s string) protocol.ResourceContents { return protocol.ResourceContents{Blob: &s} }

func win(server, uri string, texts ...string) Window {
	w := Window{Server: server, URI: uri}
	for _, t := range texts {
		w.Contents = append(w.Contents, text(t))
	}
	return w
}

func size(n int) *int { return &n }

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    Window
		want string
	}{
		{"text", win("s", "window://s/a", "hello"), "window://s/a\n\nhello"},
		{"texts joined by a blank line", win("s", "window://s/a", "one", "two"), "window://s/a\n\none\n\ntwo"},
		{"empty texts skipped", win("s", "window://s/a", "", "two", ""), "window://s/a\n\ntwo"},
		{"body trimmed", win("s", "window://s/a", "\n  body \n"), "window://s/a\n\nbody"},
		{"blank body: URI only", win("s", "window://s/a", "  \n"), "window://s/a"},
		{"blobs skipped", Window{Server: "s", URI: "window://s/a", Contents: []protocol.ResourceContents{blob("AAAA"), text("t")}}, "window://s/a\n\nt"},
		{"blob only: URI only", Window{Server: "s", URI: "window://s/a", Contents: []protocol.ResourceContents{blob("AAAA")}}, "window://s/a"},
		{"listed URI kept as written", win("s", "window://S/a?fullscreen=YES", "x"), "window://S/a?fullscreen=YES\n\nx"},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, Render(tc.w)) })
	}
}

func TestOrganize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		windows []Window
		size    *int
		history []string
		want    []string
	}{
		{name: "nothing", want: []string{}},
		{name: "size 0 is empty", windows: []Window{win("s", "window://s/a", "a")}, size: size(0), want: []string{}},
		{name: "negative size is empty", windows: []Window{win("s", "window://s/a", "a")}, size: size(-1), want: []string{}},
		{
			name: "priority descending within a server, size cap",
			windows: []Window{
				win("srv", "window://srv/w1?priority=10", "w1-text"),
				win("srv", "window://srv/w2?priority=90", "w2-text"),
				win("srv", "window://srv/w3", "w3-text"),
			},
			size: size(2),
			want: []string{"window://srv/w2?priority=90\n\nw2-text", "window://srv/w1?priority=10\n\nw1-text"},
		},
		{
			name: "equal priorities keep the listing order",
			windows: []Window{
				win("s", "window://s/b?priority=5", "b"), win("s", "window://s/a?priority=5", "a"), win("s", "window://s/c", "c"),
			},
			want: []string{"window://s/b?priority=5\n\nb", "window://s/a?priority=5\n\na", "window://s/c\n\nc"},
		},
		{
			name: "fullscreen: one window for that server, then the next server",
			windows: []Window{
				win("A", "window://A/a1?priority=50", "a1"),
				win("A", "window://A/a2?fullscreen=true&priority=10", "a2-full"),
				win("A", "window://A/a3?priority=90", "a3"),
				win("B", "window://B/b1?priority=5", "b1"),
			},
			history: []string{"A"},
			want:    []string{"window://A/a2?fullscreen=true&priority=10\n\na2-full", "window://B/b1?priority=5\n\nb1"},
		},
		{
			name: "several fullscreen windows: the highest priority one",
			windows: []Window{
				win("A", "window://A/low?fullscreen=1&priority=10", "low"),
				win("A", "window://A/high?fullscreen=on&priority=80", "high"),
				win("A", "window://A/plain?priority=100", "plain"),
			},
			want: []string{"window://A/high?fullscreen=on&priority=80\n\nhigh"},
		},
		{
			name: "several fullscreen windows of equal priority: the first listed",
			windows: []Window{
				win("A", "window://A/first?fullscreen=yes", "1"),
				win("A", "window://A/second?fullscreen=true", "2"),
			},
			want: []string{"window://A/first?fullscreen=yes\n\n1"},
		},
		{
			name: "fullscreen=false is not fullscreen",
			windows: []Window{
				win("A", "window://A/x?fullscreen=false", "x"), win("A", "window://A/y?fullscreen=off", "y"),
			},
			want: []string{"window://A/x?fullscreen=false\n\nx", "window://A/y?fullscreen=off\n\ny"},
		},
		{
			name: "servers by recent history, the others alphabetically",
			windows: []Window{
				win("A", "window://A/a1?priority=1", "a"), win("B", "window://B/b1?priority=1", "b"), win("C", "window://C/c1?priority=1", "c"),
				win("D", "window://D/d1", "d"),
			},
			history: []string{"A", "C", "zeta", "A"},
			want:    []string{"window://A/a1?priority=1\n\na", "window://C/c1?priority=1\n\nc", "window://B/b1?priority=1\n\nb", "window://D/d1\n\nd"},
		},
		{
			name: "the cap stops before the next server",
			windows: []Window{
				win("A", "window://A/a1", "a1"), win("A", "window://A/a2", "a2"), win("B", "window://B/b1", "b1"),
			},
			size: size(2),
			want: []string{"window://A/a1\n\na1", "window://A/a2\n\na2"},
		},
		{
			name: "the cap cuts inside a server; a fullscreen server counts one",
			windows: []Window{
				win("A", "window://A/f?fullscreen=true", "f"), win("A", "window://A/x", "x"),
				win("B", "window://B/b1", "b1"), win("B", "window://B/b2", "b2"), win("C", "window://C/c", "c"),
			},
			size: size(2),
			want: []string{"window://A/f?fullscreen=true\n\nf", "window://B/b1\n\nb1"},
		},
		{
			name:    "size larger than the desktop",
			windows: []Window{win("A", "window://A/a", "a")},
			size:    size(100),
			want:    []string{"window://A/a\n\na"},
		},
		{
			name: "windows without contents and invalid URIs are dropped",
			windows: []Window{
				{Server: "S", URI: "window://S/empty"},
				{Server: "S", URI: "window://S/empty-list", Contents: []protocol.ResourceContents{}},
				win("S", ":::this_is_not_a_uri", "bad"),
				win("S", "dpe://S/doc", "bad"),
				win("S", "window://S/x?priority=101", "bad"),
				win("S", "window://S/x?fullscreen=maybe", "bad"),
				win("S", "window:///nohost", "bad"),
				win("S", "window://S/ok", "ok"),
				{Server: "S", URI: "window://S/blob", Contents: []protocol.ResourceContents{blob("AAAA")}},
			},
			want: []string{"window://S/ok\n\nok", "window://S/blob"},
		},
		{
			name:    "a server with only dropped windows takes no place",
			windows: []Window{{Server: "A", URI: "window://A/empty"}, win("B", "window://B/b", "b")},
			size:    size(1),
			history: []string{"A"},
			want:    []string{"window://B/b\n\nb"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Organize(tc.windows, tc.size, tc.history)
			assert.NotNil(t, got)
			assert.Equal(t, tc.want, got)
		})
	}
}
