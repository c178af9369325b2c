//go:build mage

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// go.work.sum holds the checksums the workspace needs that no module's
// go.sum holds: the go.mod files of the versions the workspace's combined
// module graph selects above what each module alone requires. The go
// command keeps it current itself — any command that loads the graph (go
// doc, go test, go list -m all) adds what is missing and drops what a
// go.sum now holds — so a committed go.work.sum that lags behind the
// modules' go.mod and go.sum files is rewritten by the first `go doc` in a
// fresh clone. `go run mage.go tidy` (which tidies each module outside the
// workspace) therefore ends by refreshing it, and Check fails when it lags.

// refreshWorkSum brings go.work.sum in root to what the go command
// computes for the workspace.
func refreshWorkSum(root string) error {
	cmd := exec.Command("go", "list", "-m", "all")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go list -m all (in %s): %v\n%s", root, err, stderr.String())
	}
	return nil
}

// checkWorkSum fails when go.work.sum differs from what the go command
// computes for the workspace, working on a copy of go.work, go.work.sum
// and every module's go.mod and go.sum (all `go list -m all` reads).
func checkWorkSum() error {
	tmp, err := os.MkdirTemp("", "smcp-worksum-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	files := []string{"go.work", "go.work.sum"}
	for _, d := range allModuleDirs() {
		files = append(files, filepath.Join(d, "go.mod"), filepath.Join(d, "go.sum"))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) && filepath.Base(f) == "go.sum" {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(f)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), raw, 0o644); err != nil {
			return err
		}
	}
	if err := refreshWorkSum(tmp); err != nil {
		return err
	}
	want, err := os.ReadFile(filepath.Join(tmp, "go.work.sum"))
	if err != nil {
		return err
	}
	have, err := os.ReadFile("go.work.sum")
	if err != nil {
		return err
	}
	if !bytes.Equal(want, have) {
		return fmt.Errorf("go.work.sum lags behind the modules' go.mod and go.sum files (the first go command in a fresh clone would rewrite it): run `go run mage.go tidy` and commit\n%s",
			lineDiff(string(have), string(want)))
	}
	return nil
}

// lineDiff lists the lines only in a ("-") and only in b ("+").
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			if l != "" {
				m[l] = true
			}
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if l != "" && !mb[l] {
			out = append(out, "  - "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if l != "" && !ma[l] {
			out = append(out, "  + "+l)
		}
	}
	return strings.Join(out, "\n")
}
