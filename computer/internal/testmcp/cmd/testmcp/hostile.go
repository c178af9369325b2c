package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// hostile are the misbehaviours of a DPE server that does not merely fail
// but works against the Computer (stdio mode): they sit between stdin/stdout
// and the mcp-go server, answering or adding messages themselves.
type hostile struct {
	listForever  bool
	flood        int
	floodDelay   time.Duration
	floodOnSub   bool
	hugeRead     int
	hangAfter    bool
	hanging      atomic.Bool
	toolsForever bool
	bigPage      int
	manyTools    int
	hugeTool     int
}

// floodStartURI is the subscription that starts the flood of
// -flood-on-subscribe.
const floodStartURI = "dpe://flood/start"

func registerHostile() *hostile {
	h := &hostile{}
	flag.BoolVar(&h.listForever, "list-forever", false, "resources/list never ends: every page has a new nextCursor, ever longer")
	flag.IntVar(&h.flood, "flood-updates", 0, "after initialized, send this many resources/updated notifications, each for a distinct dpe:// URI")
	flag.DurationVar(&h.floodDelay, "flood-delay", 0, "with -flood-updates: wait this long after initialized before flooding")
	flag.BoolVar(&h.floodOnSub, "flood-on-subscribe", false, "with -flood-updates: flood when the client subscribes to "+floodStartURI+", not after initialized "+
		"(a client drops the notifications that come before it has its handler)")
	flag.BoolVar(&h.hangAfter, "hang-after-initialize", false, "answer initialize, then never answer anything again (ping included)")
	flag.BoolVar(&h.toolsForever, "tools-forever", false, "tools/list never ends: every page has a new nextCursor, ever longer")
	flag.IntVar(&h.bigPage, "big-list-page", 0, "resources/list answers this many resources in one page")
	flag.IntVar(&h.manyTools, "many-tools", 0, "also serve this many tools t-000001 … (listed in pages of 1,000)")
	flag.IntVar(&h.hugeTool, "huge-tool", 0, "also serve a tool \"huge\" whose input schema holds a description of this many bytes")
	flag.IntVar(&h.hugeRead, "huge-read", 0, "resources/read of a URI ending in /huge answers a text of this many bytes; "+
		"with it, reading a URI ending in /die writes half an answer and exits 3")
	return h
}

func (h *hostile) active() bool {
	return h.listForever || h.flood > 0 || h.hangAfter || h.toolsForever || h.bigPage > 0
}

// addTools adds the tools of -many-tools and -huge-tool to s; each answers
// its own name.
func (h *hostile) addTools(s *server.MCPServer) {
	answer := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.Params.Name), nil
	}
	var tools []server.ServerTool
	for i := 1; i <= h.manyTools; i++ {
		tools = append(tools, server.ServerTool{Tool: mcp.NewTool(fmt.Sprintf("t-%06d", i), mcp.WithDescription("generated tool")), Handler: answer})
	}
	if h.hugeTool > 0 {
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
			"x": map[string]any{"type": "string", "description": strings.Repeat("d", h.hugeTool)}}})
		tools = append(tools, server.ServerTool{Tool: mcp.NewToolWithRawSchema("huge", "a tool with a huge input schema", schema), Handler: answer})
	}
	if len(tools) > 0 {
		s.AddTools(tools...)
	}
}

// options are the MCP server options the hostile modes need.
func (h *hostile) options() []server.ServerOption {
	var opts []server.ServerOption
	if h.manyTools > 0 {
		opts = append(opts, server.WithPaginationLimit(1000))
	}
	if h.hugeRead <= 0 {
		return opts
	}
	return append(opts, server.WithResourceHandlerMiddleware(func(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
		return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			if strings.HasSuffix(req.Params.URI, "/die") {
				fmt.Fprintln(os.Stderr, "dying in the middle of reading", req.Params.URI)
				_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","id":`) // half an answer
				os.Exit(3)
			}
			if strings.HasSuffix(req.Params.URI, "/huge") {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain",
					Text: strings.Repeat("x", h.hugeRead)}}, nil
			}
			return next(ctx, req)
		}
	}))
}

// serve runs s over stdio with the hostile modes in front of it.
func (h *hostile) serve(s *server.MCPServer) error {
	var outMu sync.Mutex
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	write := func(b []byte) {
		outMu.Lock()
		defer outMu.Unlock()
		_, _ = out.Write(b)
		_, _ = out.Write([]byte{'\n'})
		_ = out.Flush()
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- server.NewStdioServer(s).Listen(context.Background(), pr, writerFunc(func(p []byte) (int, error) {
			outMu.Lock()
			defer outMu.Unlock()
			n, err := out.Write(p)
			_ = out.Flush()
			return n, err
		}))
	}()
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 && !h.intercept(line, write) {
			if _, werr := pw.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			_ = pw.Close()
			return <-done
		}
	}
}

// intercept answers or reacts to one incoming message; false passes it on.
func (h *hostile) intercept(line []byte, write func([]byte)) bool {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
			URI    string `json:"uri"`
		} `json:"params"`
	}
	if h.hanging.Load() {
		return true // swallowed: never answered
	}
	if json.Unmarshal(line, &msg) != nil {
		return false
	}
	switch {
	case msg.Method == "notifications/initialized" && h.hangAfter:
		fmt.Fprintln(os.Stderr, "initialized: hanging from now on")
		h.hanging.Store(true)
		return true
	case h.flood > 0 && (!h.floodOnSub && msg.Method == "notifications/initialized" ||
		h.floodOnSub && msg.Method == "resources/subscribe" && msg.Params.URI == floodStartURI):
		go func() {
			time.Sleep(h.floodDelay)
			for i := range h.flood {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated",
					"params": map[string]any{"uri": fmt.Sprintf("dpe://flood/doc-%d", i)}})
				write(b)
			}
		}()
		return false
	case msg.Method == "resources/list" && h.bigPage > 0:
		var b strings.Builder
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"resources":[`, msg.ID)
		for i := range h.bigPage {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"uri":"dpe://big/d%d","name":"d"}`, i)
		}
		b.WriteString(`]}}`)
		write([]byte(b.String()))
		return true
	case msg.Method == "tools/list" && h.toolsForever:
		// Each page: one tool and a cursor one character longer.
		next := msg.Params.Cursor + "x"
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{
			"tools":      []map[string]any{{"name": "forever-" + fmt.Sprint(len(next)), "inputSchema": map[string]any{"type": "object"}}},
			"nextCursor": next,
		}})
		write(b)
		return true
	case msg.Method == "resources/list" && h.listForever:
		// Each page: one resource and a cursor one character longer.
		next := msg.Params.Cursor + "x"
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{
			"resources":  []map[string]any{{"uri": "dpe://forever/doc-" + fmt.Sprint(len(next)), "name": "doc"}},
			"nextCursor": next,
		}})
		write(b)
		return true
	}
	return false
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
