package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// printVersion answers --version: the version of the module this binary was
// built from (as `go install …@vX.Y.Z` records it), then the protocol
// version it speaks. It reports false when args do not ask for it.
func printVersion(args []string, w io.Writer) bool {
	if len(args) != 1 || (args[0] != "--version" && args[0] != "-version") {
		return false
	}
	fmt.Fprintf(w, "smcp-docserver %s (A2C-SMCP %s)\n", moduleVersion(), protocol.ProtocolVersion)
	return true
}

// moduleVersion is the main module's version from the build information;
// a build from a working tree has none and reports "(devel)".
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
