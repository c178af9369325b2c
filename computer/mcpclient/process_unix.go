//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the child in its own process group so that the whole
// group (grandchildren included) can be killed at stop.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup kills every process left in the group led by pid.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

var defaultEnvKeys = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
