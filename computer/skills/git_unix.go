//go:build unix

package skills

import (
	"os/exec"
	"syscall"
)

// ownGroup starts git in its own process group and has a cancellation
// kill the whole group: git's helpers (git-remote-http, ssh) too, which
// would otherwise hold its pipes open past the timeout.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
