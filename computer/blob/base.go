package blob

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// orphanAge is how old a process directory without its marker must be to
// be taken for a leftover: younger, it may be a spool being opened.
const orphanAge = time.Minute

// DefaultBase is the base directory of the spools opened without a
// directory: "smcp-spool-<uid>" under os.TempDir, the same for every
// process of a user, so that the next Computer finds what an earlier one
// left when it was killed.
func DefaultBase() string {
	return filepath.Join(os.TempDir(), "smcp-spool-"+strconv.Itoa(os.Getuid()))
}

// privateDir makes base (this user's, mode 0700) when missing, removes the
// process directories in it whose spool is gone (its marker unlocked:
// the process that held it ended, however it ended), and returns a new
// process directory.
func privateDir(base string) (string, error) {
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() || !ownedByMe(fi) {
		return "", fmt.Errorf("%s is not a directory of this user's (a symlink, or another user's): set a spool directory", base)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(base, 0o700); err != nil {
			return "", err
		}
	}
	sweep(base)
	return os.MkdirTemp(base, "p"+strconv.Itoa(os.Getpid())+"-")
}

// sweep removes the process directories of base whose spool is closed or
// whose process is gone: those whose marker it can lock, and those without
// a marker older than orphanAge. Best effort: what it cannot remove stays
// for the next one.
func sweep(base string) {
	names, err := readNames(base)
	if err != nil {
		return
	}
	for _, n := range names {
		dir := filepath.Join(base, n)
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		m, err := os.OpenFile(filepath.Join(dir, markerName), os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			if time.Since(fi.ModTime()) > orphanAge {
				_ = os.RemoveAll(dir)
			}
			continue
		}
		if err != nil {
			continue
		}
		if ok, err := tryLock(m); err == nil && ok && lockable {
			_ = os.RemoveAll(dir)
		}
		m.Close()
	}
}
