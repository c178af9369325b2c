// Command testmcp runs the test MCP server of package testmcp over stdio
// (default), streamable HTTP (-http ADDR) or HTTP+SSE (-sse ADDR); in the
// HTTP modes it prints "LISTENING <url>" on stdout once it accepts
// connections. Its fault flags (faults.go) make it misbehave for the
// recovery tests.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	host := flag.String("host", "test", "host of dpe:// and window:// URIs")
	docs := flag.Int("docs", 2, "number of documents")
	windows := flag.String("windows", "main?priority=50,log?priority=10", "comma-separated window paths with query")
	noSub := flag.Bool("no-subscribe", false, "do not declare resources.subscribe")
	noRes := flag.Bool("no-resources", false, "serve tools only (no resources capability)")
	skills := flag.Bool("skills", false, "serve the skill review as skill:// resources")
	var archives []testmcp.ArchiveSkill
	flag.Func("archive-skill", "LEAF FORMAT URI [SHA256]: a skill root offered as an archive (repeatable)", func(v string) error {
		f := strings.Fields(v)
		if len(f) < 3 {
			return fmt.Errorf("want LEAF FORMAT URI [SHA256]")
		}
		a := testmcp.ArchiveSkill{Leaf: f[0], Format: f[1], URI: f[2]}
		if len(f) > 3 {
			a.SHA256 = f[3]
		}
		archives = append(archives, a)
		return nil
	})
	page := flag.Int("page", 0, "list at most this many entries per page (0: mcp-go's default)")
	tools := flag.String("tools", strings.Join(testmcp.AllTools, ","), "comma-separated tools")
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	sseAddr := flag.String("sse", "", "serve the legacy HTTP+SSE transport on this address instead of stdio")
	f := registerFaults()
	hf := registerHostile()
	flag.Parse()
	f.before()

	o := testmcp.Options{Host: *host, Docs: *docs, NoSubscribe: *noSub, NoResources: *noRes, ServerOptions: append(f.options(), hf.options()...)}
	o.Skills = *skills
	o.ArchiveSkills = archives
	if *page > 0 {
		o.ServerOptions = append(o.ServerOptions, server.WithPaginationLimit(*page))
	}
	if *windows != "" {
		o.Windows = strings.Split(*windows, ",")
	}
	o.Tools = []string{}
	if *tools != "" {
		o.Tools = strings.Split(*tools, ",")
	}
	s := testmcp.New(o)
	hf.addTools(s.MCPServer)
	if *sseAddr != "" {
		ln, err := net.Listen("tcp", *sseAddr)
		if err != nil {
			log.Fatal(err)
		}
		base := "http://" + ln.Addr().String()
		h := server.NewSSEServer(s.MCPServer, server.WithBaseURL(base))
		fmt.Printf("LISTENING %s/sse\n", base)
		if err := http.Serve(ln, h); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *httpAddr == "" && hf.active() {
		if err := hf.serve(s.MCPServer); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *httpAddr == "" {
		if err := server.ServeStdio(s.MCPServer); err != nil {
			log.Fatal(err)
		}
		f.after()
		return
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		log.Fatal(err)
	}
	h := server.NewStreamableHTTPServer(s.MCPServer, server.WithStateful(true))
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Printf("LISTENING http://%s/mcp\n", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
