// Command smcp-inspector serves a web page to browse an A2C-SMCP office:
// it joins the office as its Agent and shows its Computers, their tools
// (call them through a form generated from their input schema), their
// desktops and their Finder, with a live log of the office's notifications.
//
//	smcp-inspector --server URL --office ID [--api-key KEY] [--listen 127.0.0.1:7780]
//
// Flags and their environment variables: --server (SMCP_SERVER, default
// http://127.0.0.1:8080), --office (SMCP_OFFICE, required), --api-key
// (SMCP_API_KEY), --name (SMCP_AGENT_NAME, default smcp-inspector), --listen
// (SMCP_INSPECTOR_LISTEN, default 127.0.0.1:7780), --allow-remote
// (SMCP_INSPECTOR_ALLOW_REMOTE=1), --timeout (per request, default 35s),
// --log-level (SMCP_LOG_LEVEL, default warn), --verbose (--log-level
// debug), --version: the names smcp-agent and smcp-computer use. -h prints
// them on stdout, and never the API key.
//
// The page is served on loopback. Listening on any other address needs
// --allow-remote: the inspector then prints a login token at start, which a
// browser must give once (/login) before it sees anything. The API key
// stays in this process and never reaches the browser.
//
// The office holds one Agent (spec/protocol.md, Offices): when its seat is
// taken, smcp-inspector says so and exits with "error 4101".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The Socket.IO client swallows the first SIGINT/SIGTERM of the process:
	// handle them here and shut down explicitly. After the first signal the
	// default behaviour comes back, so a second Ctrl-C ends a stuck shutdown.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
