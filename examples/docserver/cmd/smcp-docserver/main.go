// Command smcp-docserver serves a folder of documents — Markdown, CSV, XLSX,
// PDF and any other UTF-8 text — as dpe:// resources of a Finder-ready MCP
// server (spec/finder.md, Writing a DPE server), over stdio or streamable HTTP.
//
//	smcp-docserver --root ./docs                          # stdio, host local.docs
//	smcp-docserver --root ./docs --transport http --addr 127.0.0.1:8765
//
// Files are watched: adding or removing one sends resources/list_changed,
// editing one sends resources/updated to the sessions subscribed to it.
// Diagnostics go to standard error; with stdio, standard output carries only
// MCP messages.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func main() {
	// SIGQUIT keeps Go's default (goroutine dump on stderr, exit status 2):
	// the Socket.IO libraries may trap it in an init function.
	signal.Reset(syscall.SIGQUIT)
	if protocol.PrintVersion("smcp-docserver", os.Args[1:], os.Stdout) {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := docserver.Run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}
