//go:build unix

package mcpclient

import (
	"os"
	"syscall"
)

// killGroup kills every process left in the group led by pid.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// terminate asks the child to stop (SIGTERM).
func terminate(p *os.Process) { _ = p.Signal(syscall.SIGTERM) }

var defaultEnvKeys = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
