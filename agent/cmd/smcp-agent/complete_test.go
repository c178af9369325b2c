package main

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smcp-agent complete turns a partly typed dpe:// URI into whole URIs
// through client:complete (spec/finder.md, Completion).
func TestComplete(t *testing.T) {
	p := startPeer(t)
	p.World.Mu.Lock()
	srv := p.World.Computer("alpha").Servers[0]
	host, doc := srv.Host, srv.Docs[0]
	var refs []string
	for _, d := range srv.Docs {
		refs = append(refs, "dpe://"+host+"/"+url.PathEscape(d.Meta.DocRef))
	}
	pages := len(doc.Pages)
	p.World.Mu.Unlock()
	slices.Sort(refs)

	r := cli(t, p, nil, "complete", "dpe://"+host+"/", "--computer", "alpha")
	requireOK(t, r)
	assert.Equal(t, refs, lines(r.out))

	r = cli(t, p, nil, "complete", "--computer", "alpha", "dpe://"+host+"/"+doc.Meta.DocRef+"/pages/")
	requireOK(t, r)
	var want []string
	for i := 0; i < pages; i++ {
		want = append(want, "dpe://"+host+"/"+doc.Meta.DocRef+"/pages/"+strconv.Itoa(i))
	}
	assert.Equal(t, want, lines(r.out))

	r = cli(t, p, nil, "complete", "--computer", "alpha", "dpe://"+host+"/"+doc.Meta.DocRef+"/p")
	requireOK(t, r)
	assert.Equal(t, []string{"dpe://" + host + "/" + doc.Meta.DocRef + "/pages/"}, lines(r.out))

	r = cli(t, p, nil, "--json", "complete", "--computer", "alpha", "--template", "dpe://"+host+"/{doc_ref}/pages/{page_index}",
		"page_index", "--context", "doc_ref="+doc.Meta.DocRef)
	requireOK(t, r)
	var got struct {
		Values  []string `json:"values"`
		HasMore bool     `json:"hasMore"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &got))
	assert.Len(t, got.Values, pages)

	r = cli(t, p, nil, "complete", "--computer", "alpha", "https://example.com/")
	requireOK(t, r)
	assert.Empty(t, r.out, "not a dpe:// URI: nothing to offer")

	requireFail(t, cli(t, p, nil, "complete", "--computer", "alpha", "--template", "x", "a", "--context", "nokv"), 2, "--context")
}
