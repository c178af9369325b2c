package main

import (
	"fmt"
	"io"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// printVersion answers --version (protocol.VersionLine); it reports false
// when args do not ask for it.
func printVersion(args []string, w io.Writer) bool {
	if len(args) != 1 || (args[0] != "--version" && args[0] != "-version") {
		return false
	}
	fmt.Fprintln(w, protocol.VersionLine("smcp-agent"))
	return true
}
