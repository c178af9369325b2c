// Package layout holds the import rules of the smcp-go workspace, checked by
// `go run mage.go imports` against `go list -deps -test` of every module:
//
//   - the role modules server, computer and agent import protocol and never
//     each other (a user imports one role at a time);
//   - protocol and dpekit import no role module;
//   - protocol imports no network library: it is data and pure helpers that
//     every role and every MCP server author can import;
//   - inspector is an Agent-side tool: its code imports agent and never
//     server or computer; its tests wire a whole office (every role);
//   - what a client program links — the agent and computer packages and
//     their binaries (ClientRoots) — holds no Socket.IO server, QUIC,
//     HTTP/3 or WebTransport code (ServerSideLibraries), checked against
//     `go list -deps` of those packages alone (sio/third_party/PATCHES.md,
//     15).
package layout

import (
	"fmt"
	"slices"
	"strings"
)

// Repo is the module path prefix of the workspace.
const Repo = "github.com/a2c-smcp/smcp-go"

// RoleModules are the modules that must stay independent of each other.
var RoleModules = []string{"server", "computer", "agent"}

// NetworkLibraries may not be imported by protocol, tests included.
var NetworkLibraries = []string{
	"github.com/zishang520/socket.io",
	Repo + "/sio",
	"github.com/mark3labs/mcp-go",
}

// stdNetwork reports the standard-library packages protocol's own code may
// not import: sockets and HTTP (testify's HTTP assertions bring net/http into
// its tests, which is not protocol talking to a network). net/url and
// net/netip are pure data.
func stdNetwork(dep string) bool { return dep == "net" || within(dep, "net/http") }

// composers may import every role: they wire roles together.
var composers = []string{"examples", "e2e", "tools"}

// agentTools are built on the agent module: their code imports no other
// role, their tests may import every role to run a real office.
var agentTools = []string{"inspector"}

// ClientRoots are, per client role module, the packages a program using
// it links: the role's package and its binary. Test support packages of the
// module (a scripted peer playing the Server) are not among them.
var ClientRoots = map[string][]string{
	"agent":    {".", "./cmd/smcp-agent"},
	"computer": {".", "./cmd/smcp-computer"},
}

// ServerSideLibraries may not be linked by a client program: the Socket.IO
// server, QUIC and HTTP/3, WebTransport (upstream's Socket.IO client and
// its pkg/types pulled them all in).
var ServerSideLibraries = []string{
	"github.com/zishang520/socket.io/servers",
	"github.com/quic-go/quic-go",
	"github.com/quic-go/webtransport-go",
	"github.com/zishang520/socket.io/v3/pkg/webtransport",
}

// ClientViolations returns the server-side packages among deps, the
// dependencies of module's ClientRoots, sorted.
func ClientViolations(module string, deps []string) []string {
	var out []string
	for _, dep := range deps {
		for _, lib := range ServerSideLibraries {
			if within(dep, lib) {
				out = append(out, fmt.Sprintf("%s links %s (a client program links no Socket.IO server, QUIC, HTTP/3 or WebTransport code)", module, dep))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Violations returns the broken rules for one module (its folder name, such
// as "agent") given the import paths its packages depend on (deps) and those
// its tests add (testDeps), sorted.
func Violations(module string, deps, testDeps []string) []string {
	var out []string
	if slices.Contains(composers, module) {
		return nil
	}
	if slices.Contains(agentTools, module) {
		for _, dep := range deps {
			for _, role := range RoleModules {
				if role != "agent" && within(dep, Repo+"/"+role) {
					out = append(out, fmt.Sprintf("%s imports %s (an Agent-side tool imports the agent role only)", module, dep))
				}
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	if module == "protocol" {
		for _, dep := range deps {
			if stdNetwork(dep) {
				out = append(out, fmt.Sprintf("protocol imports network package %s", dep))
			}
		}
	}
	for _, dep := range append(deps, testDeps...) {
		for _, role := range RoleModules {
			if role == module {
				continue
			}
			if within(dep, Repo+"/"+role) {
				out = append(out, fmt.Sprintf("%s imports %s (role modules never import each other)", module, dep))
			}
		}
		if module == "protocol" {
			for _, lib := range NetworkLibraries {
				if within(dep, lib) {
					out = append(out, fmt.Sprintf("protocol imports network library %s", dep))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
