// Command smcp-agent is an A2C-SMCP Agent on the command line: it joins an
// office of an SMCP Server and lists its sessions, lists and calls the
// tools of its Computers, reads their desktops, and browses their documents
// (catalog → document → page → element), or watches the office's
// notifications.
//
//	smcp-agent [global flags] COMMAND [args] [flags]
//
//	room                          sessions of the office
//	tools [COMPUTER]              tools of one Computer, or of all
//	call COMPUTER TOOL [ARG...]   call a tool: NAME=TEXT, NAME:=JSON, --params JSON, --tool-timeout
//	desktop COMPUTER              the Computer's desktop (--size, --window)
//	finder COMPUTER               its document catalog (--keywords a,b --file-type pdf --offset N --limit N)
//	open URI                      a document (--pages --offset N --limit N)
//	page URI N                    page N (--format markdown|text|json --categories table,chart)
//	element URI ID                one element
//	resources COMPUTER BUNDLE     resources of one of its MCP servers, every page
//	skills COMPUTER               its skills
//	skill COMPUTER NAME [PATH]    a file of a skill, SKILL.md by default (-o FILE)
//	blob get COMPUTER HANDLE -o FILE   download a blob, size and sha256 checked
//	blob put COMPUTER FILE        upload to its landing root (--as NAME), print where it landed
//	watch                         print notifications until interrupted
//	complete URI-PREFIX           complete a dpe:// URI (--computer; --prompt NAME or --template T: ARG [VALUE], --context k=v)
//	completion bash|zsh           the shell completion script: source <(smcp-agent completion bash)
//
// Global flags, anywhere on the line, with their environment variables:
// --server (SMCP_SERVER, default http://127.0.0.1:8080), --office
// (SMCP_OFFICE, required), --name (SMCP_AGENT_NAME, default smcp-agent),
// --api-key (SMCP_API_KEY; never printed), --timeout (per request, default
// 35s), --json (machine-readable output), --log-level (SMCP_LOG_LEVEL: log
// to stderr from debug, info, warn or error; no log by default),
// --verbose (--log-level debug). The same names mean the same in
// smcp-computer and smcp-inspector.
//
// Tool arguments follow HTTPie: NAME=TEXT passes the string TEXT,
// NAME:=JSON a JSON value, so that
//
//	smcp-agent call desk search query=report limit:=5 exact:=true
//
// sends {"query": "report", "limit": 5, "exact": true}; they are added to
// --params.
//
// open, page and element take --computer; without it they use the office's
// only Computer that offers the Finder, or the one whose catalog holds the
// URI's host, and fail saying so when several do. room shows which
// Computers offer the Finder (an smcp-go extension that reference 0.4
// Computers lack); a Finder command through one that does not fails with
// 4106 saying so. call draws the tool's progress on stderr when stderr is a
// terminal, open, page and element the read's (when the MCP server reports
// any), and blob and skill their transfer's.
//
// call drains a tool result's spooled blobs (0.4: an image above the
// Computer's inline budget) and prints their handle, "[image image/png blob
// HANDLE]"; blob get HANDLE saves one to a file.
//
// Output is readable tables by default and JSON with --json (page
// --format json prints the page object too). -h prints the usage on stdout.
// A failure prints "error <code>: <message>" on stderr and exits 1 (2 for a
// usage error, 130 when interrupted).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2c-smcp/smcp-go/protocol"
)

func main() {
	// SIGQUIT keeps Go's default (goroutine dump on stderr, exit status 2).
	signal.Reset(syscall.SIGQUIT)
	if protocol.PrintVersion("smcp-agent", os.Args[1:], os.Stdout) {
		return
	}
	// SIGINT/SIGTERM start an orderly shutdown. After the first signal the
	// default behaviour comes back, so a second Ctrl-C ends a stuck
	// shutdown. (The carried Socket.IO client installs no signal handler of
	// its own, sio/third_party/PATCHES.md.)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
