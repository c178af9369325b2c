//go:build !unix

package mcpclient

import "os/exec"

func ownGroup(*exec.Cmd) {}

func killGroup(int) {}

var defaultEnvKeys = []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
	"PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"}
