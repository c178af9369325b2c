//go:build !unix

package skills

import "os/exec"

// ownGroup leaves the process as it is: a cancellation kills git itself,
// and WaitDelay bounds the wait for its helpers.
func ownGroup(*exec.Cmd) {}
