package docserver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/a2c-smcp/smcp-go/dpekit"
)

// helpOutput receives -h's usage: standard output, as for every smcp
// command (no MCP session runs then).
var helpOutput io.Writer = os.Stdout

// Run is the smcp-docserver command: it parses args (flags --root, --host,
// --transport stdio|http, --addr, --debounce, --cache-docs, --parse-timeout,
// --parse-cells, -v), serves until ctx ends (or,
// with stdio, until standard input closes) and returns the exit code: 0 on a
// clean stop or after -h (the flags on standard output), 1 on a failure, 2
// on bad usage. Logs go to stderr; with
// --transport http the line "smcp-docserver: listening on http://ADDR/mcp"
// is written to stderr once the server accepts connections.
func Run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("smcp-docserver", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // -h: the flags on helpOutput; errors: one line on stderr
	fs.Usage = func() {}
	root := fs.String("root", ".", "folder to serve, recursively")
	host := fs.String("host", DefaultHost, "dpe:// host name of this server")
	tr := fs.String("transport", "stdio", "stdio or http (streamable HTTP)")
	addr := fs.String("addr", "127.0.0.1:8765", "listen address with --transport http (the endpoint is /mcp)")
	debounce := fs.Duration("debounce", DefaultDebounce, "quiet time before a changed file is re-read")
	cacheDocs := fs.Int("cache-docs", DefaultCacheDocuments, "parsed documents kept in memory (metadata is always kept)")
	parseTime := fs.Duration("parse-timeout", DefaultBudget.Time, "most time one file's parse may take (0: no bound); a file over it is listed as unavailable")
	parseCells := fs.Int("parse-cells", DefaultBudget.Cells, "most table cells one file's parse may visit (0: no bound); a file over it is listed as unavailable")
	verbose := fs.Bool("v", false, "log debug messages")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(helpOutput, "usage of smcp-docserver:")
			fs.SetOutput(helpOutput)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "smcp-docserver: %v (run smcp-docserver -h)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "smcp-docserver: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *cacheDocs < 1 {
		fmt.Fprintf(stderr, "smcp-docserver: --cache-docs must be at least 1, not %d\n", *cacheDocs)
		return 2
	}
	if *parseTime < 0 || *parseCells < 0 {
		fmt.Fprintf(stderr, "smcp-docserver: --parse-timeout and --parse-cells must not be negative\n")
		return 2
	}
	if *tr != "stdio" && *tr != "http" {
		fmt.Fprintf(stderr, "smcp-docserver: --transport must be stdio or http, not %q\n", *tr)
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	srv, err := NewServer(ctx, *root, WithHost(*host), WithLogger(log), WithDebounce(*debounce), WithCacheDocuments(*cacheDocs),
		WithParseBudget(Budget{Time: *parseTime, Cells: *parseCells}))
	if err != nil {
		fmt.Fprintf(stderr, "smcp-docserver: %v\n", err)
		return 1
	}
	defer srv.Close()

	if *tr == "stdio" {
		log.Info("serving over stdio", "root", *root, "host", *host)
		if err := dpekit.ServeStdio(ctx, srv); err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
			fmt.Fprintf(stderr, "smcp-docserver: %v\n", err)
			return 1
		}
		return 0
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "smcp-docserver: %v\n", err)
		return 1
	}
	h := dpekit.NewStreamableHTTPHandler(srv)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	// The address line is machine-readable: tests and launchers read it.
	fmt.Fprintf(stderr, "smcp-docserver: listening on http://%s/mcp\n", ln.Addr())
	log.Info("serving over streamable HTTP", "root", *root, "host", *host, "url", "http://"+ln.Addr().String()+"/mcp")
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "smcp-docserver: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.Shutdown(sctx)
	_ = hs.Shutdown(sctx)
	return 0
}
