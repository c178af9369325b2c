package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/module"
)

// Rehearsal says what to rehearse: the published modules of the tree at
// Root (in dependency order), the binaries a user installs, and for each
// role module a user may depend on, the repository modules and the
// third-party modules its users must (not) get.
type Rehearsal struct {
	Root      string
	Published []string // module directories, dependency order
	Version   string   // a version no proxy serves, e.g. v0.1.0-rehearsal.<time>
	Binaries  []string // package directories of main packages, e.g. server/cmd/smcp-server
	// Consumers maps a role module to the repository modules a program
	// depending on it may have in its module graph besides the role module
	// itself: exactly these, no more, no fewer.
	Consumers map[string][]string
	// Forbidden maps a role module to third-party modules that must not be
	// in the module graph of a program depending on it.
	Forbidden map[string][]string
	// Programs maps a role module to the main.go of a program using it,
	// built against the published module.
	Programs map[string]string
	Log      io.Writer
}

// Result is the module graph (`go list -m all` minus the consumer itself)
// of a program depending on each role module.
type Result struct {
	Deps map[string][]string
}

// Rehearse does what a release and its first user do, outside the
// workspace: it stages the published modules, bumps their requirements to
// r.Version, tidies and publishes them into a file proxy, then in fresh
// modules `go get`s each role module and builds its program, and
// `go install`s every binary at r.Version and runs it with --version.
// The modules it downloaded at r.Version are removed from the module cache
// afterwards.
func Rehearse(ctx context.Context, r Rehearsal) (*Result, error) {
	tmp, err := os.MkdirTemp("", "smcp-rehearsal-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	defer Forget(ctx, r.Published, r.Version)
	tree, proxy := filepath.Join(tmp, "tree"), filepath.Join(tmp, "proxy")
	if err := Stage(r.Root, r.Published, tree); err != nil {
		return nil, fmt.Errorf("staging: %w", err)
	}
	if err := Bump(tree, r.Published, r.Version); err != nil {
		return nil, err
	}
	if err := Publish(ctx, tree, r.Published, r.Version, proxy, true, r.Log); err != nil {
		return nil, err
	}
	env, err := ProxyEnv(ctx, proxy)
	if err != nil {
		return nil, err
	}
	res := &Result{Deps: map[string][]string{}}
	for _, role := range sortedKeys(r.Consumers) {
		deps, err := consume(ctx, tmp, env, r, role)
		if err != nil {
			return res, err
		}
		res.Deps[role] = deps
	}
	bin := filepath.Join(tmp, "bin")
	for _, b := range r.Binaries {
		pkg := Repo + "/" + b + "@" + r.Version
		if err := Go(ctx, tmp, append(slices.Clone(env), "GOBIN="+bin), r.Log, "install", pkg); err != nil {
			return res, err
		}
		exe := filepath.Join(bin, filepath.Base(b))
		out, err := exec.CommandContext(ctx, exe, "--version").CombinedOutput()
		if err != nil {
			return res, fmt.Errorf("%s --version: %w\n%s", filepath.Base(b), err, out)
		}
		if !strings.Contains(string(out), " "+r.Version+" ") {
			return res, fmt.Errorf("%s --version says %q, want the version %s", filepath.Base(b), strings.TrimSpace(string(out)), r.Version)
		}
		fmt.Fprintf(r.Log, "rehearsal: go install %s: %s", pkg, out)
	}
	return res, nil
}

// consume makes a new module depending on role only, builds its program
// and checks its module graph.
func consume(ctx context.Context, tmp string, env []string, r Rehearsal, role string) ([]string, error) {
	dir := filepath.Join(tmp, "consumer-"+role)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/consumer\n\ngo 1.26.0\n"), 0o644); err != nil {
		return nil, err
	}
	if err := Go(ctx, dir, env, r.Log, "get", ModulePath(role)+"@"+r.Version); err != nil {
		return nil, err
	}
	if prog, ok := r.Programs[role]; ok {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o644); err != nil {
			return nil, err
		}
		if err := Go(ctx, dir, env, r.Log, "build", "-o", os.DevNull, "."); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{if not .Main}}{{.Path}}{{end}}", "all")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list -m all for a user of %s: %w\n%s", role, err, ee.Stderr)
		}
		return nil, err
	}
	deps := strings.Fields(string(out))
	var gotOurs []string
	for _, d := range deps {
		if ours(d) && d != ModulePath(role) {
			gotOurs = append(gotOurs, strings.TrimPrefix(d, Repo+"/"))
		}
	}
	want := slices.Sorted(slices.Values(r.Consumers[role]))
	slices.Sort(gotOurs)
	if !slices.Equal(gotOurs, want) {
		return deps, fmt.Errorf("a user of %s gets the repository modules %v, want exactly %v", role, gotOurs, want)
	}
	for _, f := range r.Forbidden[role] {
		if slices.Contains(deps, f) {
			return deps, fmt.Errorf("a user of %s gets %s", role, f)
		}
	}
	return deps, nil
}

// Forget removes the modules of version from the module cache, so that
// rehearsals do not pile up (they are writable thanks to -modcacherw).
func Forget(ctx context.Context, dirs []string, version string) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		return
	}
	cache := strings.TrimSpace(string(out))
	for _, d := range dirs {
		esc, err := module.EscapePath(ModulePath(d))
		if err != nil {
			continue
		}
		escV, err := module.EscapeVersion(version)
		if err != nil {
			continue
		}
		_ = os.RemoveAll(filepath.Join(cache, filepath.FromSlash(esc)+"@"+escV))
		dl := filepath.Join(cache, "cache", "download", filepath.FromSlash(esc), "@v")
		matches, _ := filepath.Glob(filepath.Join(dl, escV+".*"))
		for _, m := range matches {
			_ = os.Remove(m)
		}
		list := filepath.Join(dl, "list")
		if raw, err := os.ReadFile(list); err == nil {
			kept := strings.ReplaceAll("\n"+string(raw), "\n"+version+"\n", "\n")[1:]
			_ = os.WriteFile(list, []byte(kept), 0o644)
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
