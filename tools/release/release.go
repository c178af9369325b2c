// Package release is the machinery behind the release targets of the
// build (`go run mage.go release`, `tidy` and `rehearse`): it moves every
// intra-repository requirement to one version, and publishes modules of a
// tree into a file-based module proxy, zipped by golang.org/x/mod/zip as
// the go command and proxy.golang.org zip them.
//
// A module's go.mod never replaces a sibling: it requires the sibling at the
// release version, as a user's build sees it. Local development goes through
// go.work, whose replace directives map exactly that version to the
// sibling's directory.
package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// Repo is the module path prefix of every module of the repository.
const Repo = "github.com/a2c-smcp/smcp-go"

// ModulePath is the module path of the module in directory dir ("." is the
// repository's root module).
func ModulePath(dir string) string {
	if dir == "." {
		return Repo
	}
	return Repo + "/" + filepath.ToSlash(dir)
}

func ours(path string) bool { return strings.HasPrefix(path, Repo+"/") }

// CurrentVersion is the version at which the go.mod of dir requires its
// siblings (all requirements of the repository name the same version).
func CurrentVersion(root string, dirs []string) (string, error) {
	found := ""
	for _, d := range dirs {
		f, err := readMod(filepath.Join(root, d, "go.mod"))
		if err != nil {
			return "", err
		}
		for _, r := range f.Require {
			if !ours(r.Mod.Path) {
				continue
			}
			if found != "" && r.Mod.Version != found {
				return "", fmt.Errorf("%s/go.mod requires %s %s, another module requires %s: requirements are not in lockstep", d, r.Mod.Path, r.Mod.Version, found)
			}
			found = r.Mod.Version
		}
	}
	if found == "" {
		return "", errors.New("no module requires a sibling")
	}
	return found, nil
}

// Bump sets every requirement of a repository module, in the go.mod of
// every directory of dirs, to version, and moves the version-specific
// replace directives of go.work (when root has one) along.
func Bump(root string, dirs []string, version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("%q is not a canonical semantic version (vX.Y.Z)", version)
	}
	for _, d := range dirs {
		path := filepath.Join(root, d, "go.mod")
		f, err := readMod(path)
		if err != nil {
			return err
		}
		for _, r := range f.Require {
			if ours(r.Mod.Path) {
				if err := f.AddRequire(r.Mod.Path, version); err != nil {
					return err
				}
			}
		}
		for _, r := range f.Replace {
			if ours(r.Old.Path) {
				return fmt.Errorf("%s replaces %s: module go.mod files must not replace siblings (go.work does)", path, r.Old.Path)
			}
		}
		if err := writeFormatted(path, f.Format); err != nil {
			return err
		}
	}
	workPath := filepath.Join(root, "go.work")
	raw, err := os.ReadFile(workPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	w, err := modfile.ParseWork(workPath, raw, nil)
	if err != nil {
		return err
	}
	// Copies: DropReplace clears the entries it drops.
	var replaces []modfile.Replace
	for _, r := range w.Replace {
		if ours(r.Old.Path) {
			replaces = append(replaces, *r)
		}
	}
	for _, r := range replaces {
		if err := w.DropReplace(r.Old.Path, r.Old.Version); err != nil {
			return err
		}
	}
	for _, r := range replaces {
		if err := w.AddReplace(r.Old.Path, version, r.New.Path, r.New.Version); err != nil {
			return err
		}
	}
	w.Cleanup()
	return os.WriteFile(workPath, modfile.Format(w.Syntax), 0o644)
}

// ProxyEnv is the environment of a go command that sees the modules of the
// file proxy at dir first and everything else through the ordinary proxy,
// outside any workspace, with no checksum database for this repository's
// modules (they are not published yet). Third-party modules are checked
// against the checksum database as usual, which the go command reaches
// through the ordinary proxy.
func ProxyEnv(ctx context.Context, dir string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOPROXY: %w", err)
	}
	ordinary := strings.TrimSpace(string(out))
	proxy := "file://" + filepath.ToSlash(dir)
	if ordinary != "" && ordinary != "off" {
		proxy += "," + ordinary
	}
	return []string{
		"GOWORK=off",
		// -modcacherw lets the rehearsal remove what it downloaded.
		"GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY=" + proxy,
		"GONOSUMDB=" + Repo + "/*",
		"GOTOOLCHAIN=local",
		// The go command indexes a module-cache directory once per module
		// version, taking it as immutable; a tidy or a rehearsal republishes
		// the same version with the tree's new content, so a stale index
		// would hide a package added since.
		"GODEBUG=goindex=0",
	}, nil
}

// Publish writes the modules of dirs (in dependency order) of the tree at
// root into the file proxy at proxyDir at version. With tidy, each module
// is first tidied against the proxy (env from ProxyEnv), so that its go.sum
// holds the sums of the siblings just published: what a release commit
// needs for `go install …@version` to work.
func Publish(ctx context.Context, root string, dirs []string, version, proxyDir string, tidy bool, log io.Writer) error {
	env, err := ProxyEnv(ctx, proxyDir)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		dir := filepath.Join(root, d)
		if tidy {
			if err := Go(ctx, dir, env, log, "mod", "tidy"); err != nil {
				return err
			}
		}
		if err := publishOne(root, d, version, proxyDir); err != nil {
			return fmt.Errorf("publishing %s: %w", d, err)
		}
	}
	return nil
}

func publishOne(root, d, version, proxyDir string) error {
	mv := module.Version{Path: ModulePath(d), Version: version}
	esc, err := module.EscapePath(mv.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(proxyDir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	files, err := moduleFiles(root, d)
	if err != nil {
		return err
	}
	var zipped bytes.Buffer
	if err := modzip.Create(&zipped, mv, files); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(root, d, "go.mod"))
	if err != nil {
		return err
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, b := range map[string][]byte{version + ".zip": zipped.Bytes(), version + ".mod": gomod, version + ".info": info} {
		if err := os.WriteFile(filepath.Join(at, name), b, 0o644); err != nil {
			return err
		}
	}
	list := filepath.Join(at, "list")
	old, _ := os.ReadFile(list)
	if !bytes.Contains(append([]byte("\n"), old...), []byte("\n"+version+"\n")) {
		return os.WriteFile(list, append(old, []byte(version+"\n")...), 0o644)
	}
	return nil
}

// moduleFiles lists the files of the module in directory d: the files git
// tracks or would track (ignored files such as node_modules/ left out) when
// root is a git checkout, every file otherwise. modzip.Create leaves out
// nested modules and irregular files itself.
func moduleFiles(root, d string) ([]modzip.File, error) {
	base := filepath.Join(root, d)
	var rels []string
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", d)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git ls-files %s: %w", d, err)
		}
		prefix := filepath.ToSlash(d) + "/"
		seen := map[string]bool{}
		for _, p := range strings.Split(string(out), "\x00") {
			// A path with a merge conflict is listed once per stage.
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			rel := strings.TrimPrefix(p, prefix)
			if _, err := os.Lstat(filepath.Join(base, filepath.FromSlash(rel))); err != nil {
				continue // deleted in the working tree
			}
			rels = append(rels, rel)
		}
	} else {
		err := filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, err := filepath.Rel(base, p)
			rels = append(rels, filepath.ToSlash(rel))
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	files := make([]modzip.File, 0, len(rels))
	for _, rel := range rels {
		files = append(files, file{base: base, rel: rel})
	}
	return files, nil
}

type file struct{ base, rel string }

func (f file) Path() string { return f.rel }
func (f file) Lstat() (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(f.base, filepath.FromSlash(f.rel)))
}
func (f file) Open() (io.ReadCloser, error) {
	return os.Open(filepath.Join(f.base, filepath.FromSlash(f.rel)))
}

// Stage copies the modules of dirs of the tree at root (the files
// moduleFiles lists) into the directory dst, which then stands alone: no
// go.work, no git.
func Stage(root string, dirs []string, dst string) error {
	for _, d := range dirs {
		files, err := moduleFiles(root, d)
		if err != nil {
			return err
		}
		for _, f := range files {
			src := f.(file)
			to := filepath.Join(dst, d, filepath.FromSlash(src.rel))
			st, err := src.Lstat()
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src.base, filepath.FromSlash(src.rel)))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	return nil
}

// StripSums removes the go.sum lines of this repository's modules from the
// go.sum of every directory of dirs. Between releases those lines would
// name sums of working-tree snapshots that no proxy will ever serve; only a
// release commit carries them.
func StripSums(root string, dirs []string) error {
	for _, d := range dirs {
		path := filepath.Join(root, d, "go.sum")
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		var kept []string
		for _, line := range strings.SplitAfter(string(raw), "\n") {
			if f := strings.Fields(line); len(f) > 0 && ours(f[0]) {
				continue
			}
			kept = append(kept, line)
		}
		if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Go runs the go command in dir with env added to the process environment,
// its output going to log.
func Go(ctx context.Context, dir string, env []string, log io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, log)
	cmd.Stderr = io.MultiWriter(&out, log)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, out.String())
	}
	return nil
}

func readMod(path string) (*modfile.File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(path, raw, nil)
}

func writeFormatted(path string, format func() ([]byte, error)) error {
	b, err := format()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
