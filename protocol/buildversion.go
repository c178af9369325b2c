package protocol

import (
	"fmt"
	"io"
	"runtime/debug"
)

// VersionLine is what every smcp-go command answers to --version: its name,
// the version of the module it was built from (as `go install …@vX.Y.Z`
// records it; "(devel)" for a build from a working tree) and the protocol
// version it speaks (spec/README.md, Versions).
func VersionLine(command string) string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return fmt.Sprintf("%s %s (A2C-SMCP %s)", command, v, ProtocolVersion)
}

// PrintVersion answers a command line that asks only for the version
// ("--version" or "-version") with VersionLine on w, and reports whether it
// did.
func PrintVersion(command string, args []string, w io.Writer) bool {
	if len(args) != 1 || (args[0] != "--version" && args[0] != "-version") {
		return false
	}
	fmt.Fprintln(w, VersionLine(command))
	return true
}
