//go:build unix

package blob

import (
	"errors"
	"os"
	"syscall"
)

// lockable: a spool's marker is locked (flock) while it is open, and the
// kernel unlocks it when its process ends, however it ends.
const lockable = true

// tryLock takes an exclusive lock of f without waiting; false when another
// open file holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
