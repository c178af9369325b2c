//go:build unix && !linux

package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the child in its own process group, so that the whole
// group (grandchildren included) can be killed at stop. These systems have
// no parent-death signal: after a kill -9 of the Computer the child sees
// the end of its stdin and is expected to exit.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
