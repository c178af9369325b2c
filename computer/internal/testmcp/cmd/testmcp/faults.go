package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// faults are the misbehaviours the recovery tests inject into a real MCP
// server process (stdio mode).
type faults struct {
	hangInit    bool
	holdInit    string
	ignoreEOF   bool
	readDelay   time.Duration
	slowDocs    string
	dieOnCancel bool
	garbage     int
	stderrLines int
	exitCode    int
	exitAfter   time.Duration
}

func registerFaults() *faults {
	f := &faults{}
	flag.BoolVar(&f.hangInit, "hang-initialize", false, "never read stdin: initialize is never answered")
	flag.StringVar(&f.holdInit, "hold-initialize", "", "read nothing from stdin (initialize waits) until this file exists")
	flag.BoolVar(&f.ignoreEOF, "ignore-stdin-eof", false, "keep running after stdin ends, ignoring SIGTERM, SIGINT and SIGPIPE")
	flag.DurationVar(&f.readDelay, "read-delay", 0, "delay of every resources/read of a -slow-docs document")
	flag.StringVar(&f.slowDocs, "slow-docs", "", "comma-separated document refs (e.g. doc-2) read with -read-delay")
	flag.BoolVar(&f.dieOnCancel, "die-on-cancel", false, "exit 1 when a delayed read is cancelled (notifications/cancelled)")
	flag.IntVar(&f.garbage, "stdout-garbage", 0, "write this many lines that are no JSON-RPC message on stdout before serving")
	flag.IntVar(&f.stderrLines, "stderr-lines", 0, "write this many lines on stderr before serving")
	flag.IntVar(&f.exitCode, "exit-code", 0, "with -exit-after: the exit status")
	flag.DurationVar(&f.exitAfter, "exit-after", -1, "exit with -exit-code after this long (0: before serving)")
	return f
}

// options are the MCP server options the faults need.
func (f *faults) options() []server.ServerOption {
	if f.readDelay <= 0 || f.slowDocs == "" {
		return nil
	}
	slow := strings.Split(f.slowDocs, ",")
	return []server.ServerOption{server.WithResourceHandlerMiddleware(func(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
		return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			for _, ref := range slow {
				if strings.HasSuffix(req.Params.URI, "/"+ref) {
					t := time.NewTimer(f.readDelay)
					select {
					case <-t.C:
					case <-ctx.Done():
						t.Stop()
						if f.dieOnCancel {
							fmt.Fprintln(os.Stderr, "read of", req.Params.URI, "cancelled: dying")
							os.Exit(1)
						}
						return nil, ctx.Err()
					}
				}
			}
			return next(ctx, req)
		}
	})}
}

// before runs before serving; it does not return when the server must not
// serve.
func (f *faults) before() {
	for i := 1; i <= f.stderrLines; i++ {
		fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
	}
	for i := 1; i <= f.garbage; i++ {
		if i%2 == 0 {
			fmt.Printf("[\"garbage line\", %d]\n", i) // JSON, but no JSON-RPC message
		} else {
			fmt.Printf("garbage line %d: not JSON\n", i)
		}
	}
	if f.exitAfter == 0 {
		os.Exit(f.exitCode)
	}
	if f.exitAfter > 0 {
		time.AfterFunc(f.exitAfter, func() { os.Exit(f.exitCode) })
	}
	if f.holdInit != "" {
		fmt.Fprintln(os.Stderr, "holding initialize until", f.holdInit, "exists")
		for {
			if _, err := os.Stat(f.holdInit); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if f.hangInit {
		fmt.Fprintln(os.Stderr, "hanging before initialize")
		for {
			time.Sleep(time.Hour)
		}
	}
}

// after runs once stdin has ended and serving stopped.
func (f *faults) after() {
	if !f.ignoreEOF {
		return
	}
	// Nothing written from here: a write to a pipe whose reader died would
	// end the program (SIGPIPE), which a stubborn server need not do.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGPIPE)
	for {
		time.Sleep(time.Hour)
	}
}
