//go:build mage

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// rustPeerDir is the Cargo project of the Rust SDK interop peers (the SDK's
// crates pinned exactly in its Cargo.toml and Cargo.lock).
const rustPeerDir = "e2e/testdata/rustpeer"

// rustPeerProfile is the Cargo profile the peers are built with. Measured
// on the 2-core machine: a cold release build took 5m10s of CPU, one at
// opt-level 1 5m28s, so the peers (and the Rust Server of benchRust) get
// the SDK's full optimization. What keeps the build short is leaving out
// smcp-computer's vrl feature (rustPeerDir/Cargo.toml).
const rustPeerProfile = "release"

// rustPeerBins are the programs the Rust interop tests run: ours, built from
// rustPeerDir/src/bin, and the SDK's own binaries from its crates.
var rustPeerBins = []struct{ pkg, bin string }{
	{"", "rustpeer-agent"},
	{"", "rustpeer-computer"},
	{"", "rustpeer-server"},
	{"smcp-computer", "smcp-computer"},
	{"smcp-server-hyper", "smcp-server-hyper"},
}

// SetupRust builds the Rust SDK interop peers with cargo into the user's
// cache, outside the clone: ${XDG_CACHE_HOME:-~/.cache}/smcp-go/rust/ holds
// one Cargo target directory shared by every build and, per content hash
// of the Cargo project and the toolchain, a bin/ directory of the built
// programs. A warm cache (that bin/ complete) skips cargo entirely. A
// missing cargo is an error, so the suite fails rather than skips.
func SetupRust() error {
	if _, err := exec.LookPath("cargo"); err != nil {
		return fmt.Errorf("cargo is not on PATH: the Rust interop peers need a Rust toolchain (https://rustup.rs)")
	}
	bin, err := rustPeerBinDir()
	if err != nil {
		return err
	}
	if rustPeersBuilt(bin) {
		fmt.Printf("» Rust interop peers up to date in %s\n", bin)
		return pruneRustPeerBins(filepath.Dir(bin))
	}
	root := filepath.Dir(filepath.Dir(bin))
	target := filepath.Join(root, "target")
	env := []string{"CARGO_TARGET_DIR=" + target}
	build := []string{"build", "--locked", "--profile", rustPeerProfile, "--bins"}
	if err := runEnv(rustPeerDir, env, "cargo", build...); err != nil {
		return err
	}
	for _, b := range rustPeerBins {
		if b.pkg == "" {
			continue
		}
		if err := runEnv(rustPeerDir, env, "cargo", "build", "--locked", "--profile", rustPeerProfile, "-p", b.pkg, "--bin", b.bin); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(bin), "bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, b := range rustPeerBins {
		if err := copyFile(filepath.Join(target, rustPeerProfile, b.bin), filepath.Join(tmp, b.bin), 0o755); err != nil {
			return err
		}
	}
	_ = os.RemoveAll(bin)
	if err := os.Rename(tmp, bin); err != nil {
		return err
	}
	fmt.Printf("» Rust interop peers built into %s\n", bin)
	return pruneRustPeerBins(filepath.Dir(bin))
}

// pruneRustPeerBins removes the bin/ directories of other content hashes
// (older versions of the Cargo project), keeping the shared target dir.
func pruneRustPeerBins(keep string) error {
	root := filepath.Dir(keep)
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if e.IsDir() && p != keep && e.Name() != "target" && len(e.Name()) == 16 {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchRust measures the same routed client:tool_call through our Server
// and through the Rust SDK's Server, with our Agent and Computer, at 1 and 32
// calls in flight (e2e BenchmarkRoutedToolCall): p50 latency and calls/s.
func BenchRust() error {
	if err := SetupRust(); err != nil {
		return err
	}
	return runEnv("e2e", interopEnv(), "go", "test", "-run=^$", "-bench=^BenchmarkRoutedToolCall$",
		"-benchtime=2000x", "-count=1", ".")
}

// rustInteropEnv tells the tests where the Rust peers are.
func rustInteropEnv() []string {
	bin, err := rustPeerBinDir()
	if err != nil {
		return nil // the tests then report the peers missing
	}
	return []string{"SMCP_INTEROP_RUST_BIN=" + bin}
}

// rustPeerBinDir is the cache's bin/ directory for the current Cargo
// project and toolchain.
func rustPeerBinDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the Rust peers: %w", err)
	}
	key, err := rustPeerKey()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "smcp-go", "rust", key, "bin"), nil
}

// rustPeerKey hashes what the built peers depend on: every file of the
// Cargo project (manifest, lock file, sources), the profile and rustc's
// version.
func rustPeerKey() (string, error) {
	h := sha256.New()
	var files []string
	err := filepath.WalkDir(rustPeerDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "target" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(f), len(b))
		h.Write(b)
	}
	out, err := exec.Command("rustc", "-V").Output()
	if err != nil {
		return "", fmt.Errorf("rustc -V: %w", err)
	}
	fmt.Fprintf(h, "%s\x00%s", rustPeerProfile, strings.TrimSpace(string(out)))
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func rustPeersBuilt(bin string) bool {
	for _, b := range rustPeerBins {
		if fi, err := os.Stat(filepath.Join(bin, b.bin)); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
