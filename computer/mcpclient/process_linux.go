package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the child in its own process group, so that the whole
// group (grandchildren included) can be killed at stop, and has the kernel
// SIGKILL it when the Computer dies, however it dies (kill -9 included):
// Pdeathsig. The signal is tied to the OS thread that forks the child,
// which spawn keeps alive until the child is reaped. Grandchildren do not
// inherit it: one that outlives its parent and ignores the end of its
// stdin is beyond reach after a kill -9 of the Computer.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
