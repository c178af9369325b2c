package protocol

import (
	"fmt"
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
