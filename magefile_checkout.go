//go:build mage

package main

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/a2c-smcp/smcp-go/tools/release"
)

// Workfile writes DIR/go.work, with which the Go module at DIR (a program
// of yours: go.mod, and .go files importing github.com/a2c-smcp/smcp-go/...)
// builds against this checkout before its modules are released: it uses
// the module at DIR and every module of the checkout the program reaches —
// those it imports or requires, and the ones they require — and replaces
// their required version by the checkout (a `use` alone still makes the go
// command fetch that version's go.mod from the proxy). It prints the file;
// run it again when the program imports another module. Remove the file
// once the modules are published, and `go get` them instead.
func Workfile(dir string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	modPath := filepath.Join(dir, "go.mod")
	raw, err := os.ReadFile(modPath)
	if err != nil {
		return fmt.Errorf("%s is not a Go module (no go.mod): run `go mod init example.com/yourprogram` there first: %w", dir, err)
	}
	mf, err := modfile.ParseLax(modPath, raw, nil)
	if err != nil {
		return err
	}
	if mf.Module != nil && strings.HasPrefix(mf.Module.Mod.Path, repo) {
		return fmt.Errorf("%s is a module of smcp-go itself; its go.work is the checkout's", dir)
	}
	version, err := release.CurrentVersion(".", allModuleDirs())
	if err != nil {
		return err
	}

	// The repository modules the program names: its requirements and the
	// packages its files import.
	var want []string
	for _, r := range mf.Require {
		if m := moduleOf(r.Mod.Path); m != "" {
			want = append(want, m)
		}
	}
	imports, err := repoImports(dir)
	if err != nil {
		return err
	}
	for _, path := range imports {
		m := moduleOf(path)
		if m == "" {
			return fmt.Errorf("%s imports %s, which is in no module of this checkout", dir, path)
		}
		want = append(want, m)
	}
	if len(want) == 0 {
		return fmt.Errorf("%s neither imports nor requires a package of %s: write the program first (import %s/agent, for example)", dir, repo, repo)
	}
	// And, transitively, the repository modules those require.
	reached := map[string]bool{}
	for len(want) > 0 {
		m := want[0]
		want = want[1:]
		if reached[m] {
			continue
		}
		reached[m] = true
		deps, err := repoRequires(filepath.Join(root, m, "go.mod"))
		if err != nil {
			return err
		}
		want = append(want, deps...)
	}
	var mods []string
	for _, m := range modules {
		if reached[m] {
			mods = append(mods, m)
		}
	}

	goVersion := "1.26.0"
	if wf, err := os.ReadFile(filepath.Join(root, "go.work")); err == nil {
		if w, err := modfile.ParseWork("go.work", wf, nil); err == nil && w.Go != nil {
			goVersion = w.Go.Version
		}
	}
	if mf.Go != nil && versionLess(goVersion, mf.Go.Version) {
		goVersion = mf.Go.Version
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Written by `go run mage.go workfile %s` in %s:\n", dir, root)
	fmt.Fprintf(&b, "// this module builds against that checkout's %s until they\n", strings.Join(mods, ", "))
	fmt.Fprintf(&b, "// are released. Run it again when the program imports another smcp-go module;\n")
	fmt.Fprintf(&b, "// delete this file once they are published, and go get them instead.\n")
	fmt.Fprintf(&b, "go %s\n\nuse (\n\t.\n", goVersion)
	for _, m := range mods {
		fmt.Fprintf(&b, "\t%s\n", filepath.Join(root, m))
	}
	fmt.Fprintf(&b, ")\n\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "replace %s/%s %s => %s\n", repo, m, version, filepath.Join(root, m))
	}
	out := filepath.Join(dir, "go.work")
	if old, err := os.ReadFile(out); err == nil && !bytes.HasPrefix(old, []byte("// Written by `go run mage.go workfile")) {
		return fmt.Errorf("%s exists and was not written by this target: move it away first", out)
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("workfile: wrote %s\n\n%s", out, b.String())
	return nil
}

// moduleOf returns the checkout module (its directory, such as "agent")
// that holds the package or module path, "" when none does.
func moduleOf(path string) string {
	best := ""
	for _, m := range modules {
		p := repo + "/" + m
		if (path == p || strings.HasPrefix(path, p+"/")) && len(m) > len(best) {
			best = m
		}
	}
	return best
}

// repoImports lists the import paths of this repository's packages that
// the .go files under dir import (tests included; vendor, testdata and
// hidden directories skipped).
func repoImports(dir string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			path, err := strconv.Unquote(im.Path.Value)
			if err == nil && strings.HasPrefix(path, repo+"/") && !slices.Contains(out, path) {
				out = append(out, path)
			}
		}
		return nil
	})
	return out, err
}

// repoRequires lists the checkout modules a module's go.mod requires.
func repoRequires(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mf, err := modfile.ParseLax(path, raw, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range mf.Require {
		if m := moduleOf(r.Mod.Path); m != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// versionLess compares go versions such as 1.25.5 and 1.26.0.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
