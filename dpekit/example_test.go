package dpekit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// notes is a Provider holding a few one-page notes in memory.
type notes map[string]string // doc_ref → text

func (n notes) Documents(ctx context.Context) ([]dpekit.Document, error) {
	var docs []dpekit.Document
	for _, ref := range []string{"groceries", "todo"} {
		d, _ := n.Document(ctx, ref)
		docs = append(docs, d)
	}
	return docs, nil
}

func (n notes) Document(_ context.Context, ref string) (dpekit.Document, error) {
	if _, ok := n[ref]; !ok {
		return dpekit.Document{}, dpekit.ErrNotFound
	}
	return dpekit.Document{DocRef: ref, Title: "Note: " + ref, FileType: "txt", FileURI: "mem:///" + ref, PageCount: 1}, nil
}

func (n notes) Page(_ context.Context, ref string, _ int) (dpekit.Page, error) {
	// Elements are built from the typed content of their category.
	body, err := dpe.NewElement("body", protocol.DPEElementCategoryText, "", protocol.TextContent{Text: n[ref]})
	if err != nil {
		return dpekit.Page{}, err
	}
	return dpekit.Page{Title: ref, Elements: []protocol.DPEElement{body}}, nil
}

func (n notes) Element(ctx context.Context, ref, id string) (dpekit.Element, error) {
	p, _ := n.Page(ctx, ref, 0)
	if id != "body" {
		return dpekit.Element{}, dpekit.ErrNotFound
	}
	return dpekit.Element{DPEElement: p.Elements[0], PageIndex: 0}, nil
}

// Serve an in-memory Provider over streamable HTTP and read it back with an
// mcp-go client.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	srv, err := dpekit.New(ctx, "com.example.notes", notes{"groceries": "Milk, eggs, bread.", "todo": "Call the plumber."})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	h := dpekit.NewStreamableHTTPHandler(srv)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Shutdown(ctx)

	tr, _ := transport.NewStreamableHTTP(ts.URL+"/mcp", transport.WithContinuousListening())
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		panic(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "example", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		panic(err)
	}

	read := func(uri string) (map[string]any, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			return nil, err
		}
		var v map[string]any
		err = json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &v)
		return v, err
	}

	catalog, _ := read("dpe://com.example.notes?format=markdown")
	fmt.Println(catalog["content_markdown"])
	page, _ := read("dpe://com.example.notes/todo/pages/0?format=markdown")
	fmt.Printf("\n%s\n", page["content_markdown"])

	_, err = read("dpe://com.example.notes/todo/pages/1")
	perr, _ := protocol.DecodeMCPErrorMessage(err.Error())
	fmt.Printf("\n%d %s\n", perr.Code, perr.Message)
	// Output:
	// # Documents (2)
	//
	// - [Note: groceries](dpe://com.example.notes/groceries) — txt, 1 page
	// - [Note: todo](dpe://com.example.notes/todo) — txt, 1 page
	//
	// # todo
	//
	// Call the plumber.
	//
	// 4202 page 1 out of range: document "todo" has 1 pages
}
