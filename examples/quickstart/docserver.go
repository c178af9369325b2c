package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2c-smcp/smcp-go/examples/docserver"
)

// docserverEnv, set to "1" in its environment, turns this program into the
// smcp-docserver command. The Computer's config starts the document server
// that way: a real child process speaking MCP over stdio, with no separate
// binary to build or install.
const docserverEnv = "SMCP_QUICKSTART_DOCSERVER"

// runDocserver is smcp-docserver (cmd/smcp-docserver): it serves the folder
// given by --root until its standard input closes, which is how the
// Computer stops it.
func runDocserver() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return docserver.Run(ctx, os.Args[1:], os.Stderr)
}
