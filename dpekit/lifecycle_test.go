package dpekit_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// TestPaginatedList lists 250 documents that share one title, 10 per page:
// resource names are unique, so mcp-go's name cursor skips none.
func TestPaginatedList(t *testing.T) {
	p := newMemProvider()
	for i := range 250 {
		p.put(dpekit.Document{DocRef: fmt.Sprintf("d%03d", i), Title: "Same title", FileType: "txt", FileURI: "file:///x"})
	}
	srv, err := dpekit.New(testCtx(t), testHost, p, dpekit.WithMCPOptions(server.WithPaginationLimit(10)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c := connect(t, overHTTP, srv)
	first, err := c.ListResourcesByPage(testCtx(t), mcp.ListResourcesRequest{})
	require.NoError(t, err)
	require.Len(t, first.Resources, 10)
	require.NotEmpty(t, first.NextCursor, "the list is paginated")
	res, err := c.ListResources(testCtx(t), mcp.ListResourcesRequest{})
	require.NoError(t, err)
	uris := map[string]bool{}
	for _, r := range res.Resources {
		uris[r.URI] = true
	}
	assert.Len(t, uris, 251, "250 documents and the catalog")
}

func TestNewRejects(t *testing.T) {
	ctx := testCtx(t)
	for _, host := range []string{"", "Upper.Case", "a/b", "h:80", "u@h"} {
		_, err := dpekit.New(ctx, host, testProvider())
		assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err), "host %q", host)
	}
	_, err := dpekit.New(ctx, testHost, nil)
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	_, err = dpekit.New(ctx, testHost, failingProvider{})
	assert.ErrorContains(t, err, "listing documents")
}

// failingProvider fails every call, as a broken document store would.
type failingProvider struct{}

func (failingProvider) Documents(context.Context) ([]dpekit.Document, error) {
	return nil, fmt.Errorf("store offline")
}
func (failingProvider) Document(context.Context, string) (dpekit.Document, error) {
	return dpekit.Document{}, fmt.Errorf("store offline")
}
func (failingProvider) Page(context.Context, string, int) (dpekit.Page, error) {
	return dpekit.Page{}, fmt.Errorf("store offline")
}
func (failingProvider) Element(context.Context, string, string) (dpekit.Element, error) {
	return dpekit.Element{}, fmt.Errorf("store offline")
}

// flakyProvider serves testProvider's listing but fails reads, or panics.
type flakyProvider struct {
	*memProvider
	panic bool
}

func (f flakyProvider) Page(ctx context.Context, ref string, i int) (dpekit.Page, error) {
	if f.panic {
		panic("provider bug")
	}
	return dpekit.Page{}, fmt.Errorf("disk error at /secret/path")
}

func (f flakyProvider) Element(context.Context, string, string) (dpekit.Element, error) {
	return dpekit.Element{}, protocol.NewForbidden("not for you").With("reason", "policy")
}

// TestProviderFailures: provider errors become 500 without leaking the
// error text, a *protocol.Error passes through, a panic is recovered and the
// server keeps serving.
func TestProviderFailures(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprintf("panic=%v", panics), func(t *testing.T) {
			srv := newServer(t, flakyProvider{memProvider: testProvider(), panic: panics})
			c := connect(t, overHTTP, srv)
			uri := "dpe://" + testHost + "/rpt-2026/pages/0"
			req := mcp.ReadResourceRequest{}
			req.Params.URI = uri
			_, err := c.ReadResource(testCtx(t), req)
			require.Error(t, err)
			perr, ok := protocol.DecodeMCPErrorMessage(err.Error())
			require.True(t, ok, "%v", err)
			assert.Equal(t, protocol.CodeInternal, perr.Code)
			assert.Equal(t, "the document provider failed to read "+uri, perr.Message)
			assert.NotContains(t, err.Error(), "/secret/path")
			assert.NotContains(t, err.Error(), "provider bug")
			perr = readErr(t, c, "dpe://"+testHost+"/rpt-2026/elements/x")
			assert.Equal(t, protocol.CodeForbidden, perr.Code)
			assert.Equal(t, map[string]any{"reason": "policy"}, perr.Details)
			if panics {
				creq := mcp.CompleteRequest{}
				creq.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "dpe://" + testHost + "/{doc_ref}/elements/{element_id}"}
				creq.Params.Argument = mcp.CompleteArgument{Name: "element_id"}
				creq.Params.Context.Arguments = map[string]string{"doc_ref": refReport}
				_, err := c.Complete(testCtx(t), creq)
				require.Error(t, err)
				perr, ok := protocol.DecodeMCPErrorMessage(err.Error())
				require.True(t, ok, "%v", err)
				assert.Equal(t, protocol.CodeInternal, perr.Code)
			}
			v := read(t, c, "dpe://"+testHost+"/rpt-2026")
			assert.Equal(t, refReport, v["doc_ref"], "still serving")
		})
	}
}

// TestNoGoroutineLeak serves, subscribes, notifies and closes everything;
// the goroutine count returns to where it was. A first round warms up what
// the runtime and the libraries start once per process.
func TestNoGoroutineLeak(t *testing.T) {
	round := func(t *testing.T) {
		p := testProvider()
		srv := newServer(t, p)
		c := connect(t, overPipe, srv)
		in := listen(c)
		subscribe(t, c, "dpe://"+testHost+"/"+refReport)
		srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: refReport})
		eventually(t, func() bool { return len(in.updated()) == 1 }, "delivered")
	}
	t.Run("warm-up", round)
	before := runtime.NumGoroutine()
	t.Run("session", round)
	// Polled here, not with require.Eventually, whose condition runs on a
	// goroutine of its own.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
