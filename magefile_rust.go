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

// rustPeerProject is one Cargo project of Rust SDK interop peers: the SDK's
// crates of one protocol generation pinned exactly in its Cargo.toml and
// Cargo.lock, our programs in its src/bin, and the SDK's own binaries.
type rustPeerProject struct {
	dir string // the Cargo project
	// prefix names its bin/ directories in the cache (prefix + content
	// hash), so that the projects' directories sit side by side.
	prefix string
	// target is its Cargo target directory in the cache. The projects do
	// not share one: both build binaries named smcp-computer and
	// smcp-server-hyper into <target>/release, and a build that finds its
	// binary fresh does not copy it there again, so a shared directory could
	// hand one project the other's binary.
	target string
	env    string // the variable that tells the tests its bin/ directory
	bins   []rustPeerBin
}

// rustPeerBin is a program of a project: ours (pkg "") or one of the SDK's
// crates.
type rustPeerBin struct{ pkg, bin string }

// rustPeerProjects are the Rust peers, by protocol generation: the crates
// 0.1.15 (protocol 0.2) and 0.4.1 (protocol 0.4).
var rustPeerProjects = []rustPeerProject{
	{
		dir: "e2e/testdata/rustpeer", target: "target", env: "SMCP_INTEROP_RUST_BIN",
		bins: []rustPeerBin{
			{"", "rustpeer-agent"},
			{"", "rustpeer-computer"},
			{"", "rustpeer-server"},
			{"smcp-computer", "smcp-computer"},
			{"smcp-server-hyper", "smcp-server-hyper"},
		},
	},
	{
		dir: "e2e/testdata/rustpeer04", prefix: "0.4-", target: "target-0.4", env: "SMCP_INTEROP_RUST04_BIN",
		bins: []rustPeerBin{
			{"", "rustpeer04-agent"},
			{"", "rustpeer04-computer"},
			{"", "rustpeer04-server"},
			{"smcp-computer", "smcp-computer"},
			{"smcp-server-hyper", "smcp-server-hyper"},
		},
	},
}

// rustPeerProfile is the Cargo profile the peers are built with. Measured
// on the 2-core machine: a cold release build of the 0.1.15 peers took 5m10s
// of CPU, one at opt-level 1 5m28s, so the peers (and the Rust Server of
// benchRust) get the SDK's full optimization. What keeps the builds short is
// leaving out smcp-computer's vrl feature (each project's Cargo.toml).
const rustPeerProfile = "release"

// SetupRust builds the Rust SDK interop peers of every rustPeerProjects
// entry with cargo into the user's cache, outside the clone:
// ${XDG_CACHE_HOME:-~/.cache}/smcp-go/rust/ holds each project's Cargo
// target directory and, per content hash of the Cargo project and the
// toolchain, a bin/ directory of the built programs. A warm cache (that bin/
// complete) skips cargo entirely. A missing cargo is an error, so the suite
// fails rather than skips.
func SetupRust() error {
	if _, err := exec.LookPath("cargo"); err != nil {
		return fmt.Errorf("cargo is not on PATH: the Rust interop peers need a Rust toolchain (https://rustup.rs)")
	}
	for _, p := range rustPeerProjects {
		if err := p.setup(); err != nil {
			return fmt.Errorf("%s: %w", p.dir, err)
		}
	}
	return nil
}

func (p rustPeerProject) setup() error {
	bin, err := p.binDir()
	if err != nil {
		return err
	}
	if p.built(bin) {
		fmt.Printf("» Rust interop peers up to date in %s\n", bin)
		return p.prune(filepath.Dir(bin))
	}
	target := filepath.Join(filepath.Dir(filepath.Dir(bin)), p.target)
	env := []string{"CARGO_TARGET_DIR=" + target}
	build := []string{"build", "--locked", "--profile", rustPeerProfile, "--bins"}
	if err := runEnv(p.dir, env, "cargo", build...); err != nil {
		return err
	}
	for _, b := range p.bins {
		if b.pkg == "" {
			continue
		}
		if err := runEnv(p.dir, env, "cargo", "build", "--locked", "--profile", rustPeerProfile, "-p", b.pkg, "--bin", b.bin); err != nil {
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
	for _, b := range p.bins {
		if err := copyFile(filepath.Join(target, rustPeerProfile, b.bin), filepath.Join(tmp, b.bin), 0o755); err != nil {
			return err
		}
	}
	_ = os.RemoveAll(bin)
	if err := os.Rename(tmp, bin); err != nil {
		return err
	}
	fmt.Printf("» Rust interop peers built into %s\n", bin)
	return p.prune(filepath.Dir(bin))
}

// prune removes the project's bin/ directories of other content hashes
// (older versions of its Cargo project), keeping its target directory and
// every other project's directories.
func (p rustPeerProject) prune(keep string) error {
	root := filepath.Dir(keep)
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(root, e.Name())
		hash, ok := strings.CutPrefix(e.Name(), p.prefix)
		if e.IsDir() && path != keep && ok && isContentHash(hash) {
			if err := os.RemoveAll(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// isContentHash reports whether s is a key made by rustPeerProject.key.
func isContentHash(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
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
	var env []string
	for _, p := range rustPeerProjects {
		if bin, err := p.binDir(); err == nil { // else the tests report the peers missing
			env = append(env, p.env+"="+bin)
		}
	}
	return env
}

// binDir is the cache's bin/ directory for the project's current content
// and toolchain.
func (p rustPeerProject) binDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the Rust peers: %w", err)
	}
	key, err := p.key()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "smcp-go", "rust", p.prefix+key, "bin"), nil
}

// key hashes what the built peers depend on: every file of the Cargo
// project (manifest, lock file, sources), the profile and rustc's version.
func (p rustPeerProject) key() (string, error) {
	h := sha256.New()
	var files []string
	err := filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "target" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			files = append(files, path)
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

func (p rustPeerProject) built(bin string) bool {
	for _, b := range p.bins {
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
