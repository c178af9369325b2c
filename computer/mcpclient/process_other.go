//go:build !unix

package mcpclient

import (
	"os"
	"os/exec"
)

// ownGroup does nothing here: the child sees the end of its stdin when the
// Computer dies and is expected to exit.
func ownGroup(*exec.Cmd) {}

func killGroup(int) {}

// terminate kills the child: there is no SIGTERM.
func terminate(p *os.Process) { _ = p.Kill() }

var defaultEnvKeys = []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
	"PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"}
