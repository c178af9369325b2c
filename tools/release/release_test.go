package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A tree shaped like the repository: Bump moves every sibling requirement
// and go.work's version-specific replaces in lockstep, and nothing else.
func TestBumpInLockstep(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "protocol", "go.mod"), "module "+Repo+"/protocol\n\ngo 1.26.0\n\nrequire golang.org/x/text v0.14.0\n")
	write(t, filepath.Join(root, "agent", "go.mod"), "module "+Repo+"/agent\n\ngo 1.26.0\n\nrequire (\n\t"+Repo+"/protocol v0.1.0\n\tgolang.org/x/text v0.14.0\n)\n")
	write(t, filepath.Join(root, "go.work"), "go 1.26.0\n\nuse (\n\t./agent\n\t./protocol\n)\n\nreplace "+Repo+"/protocol v0.1.0 => ./protocol\n")
	dirs := []string{"protocol", "agent"}

	v, err := CurrentVersion(root, dirs)
	if err != nil || v != "v0.1.0" {
		t.Fatalf("CurrentVersion = %q, %v; want v0.1.0", v, err)
	}
	if err := Bump(root, dirs, "v0.2.0"); err != nil {
		t.Fatal(err)
	}
	agent := read(t, filepath.Join(root, "agent", "go.mod"))
	if !strings.Contains(agent, Repo+"/protocol v0.2.0") || !strings.Contains(agent, "golang.org/x/text v0.14.0") {
		t.Errorf("agent/go.mod after the bump:\n%s", agent)
	}
	work := read(t, filepath.Join(root, "go.work"))
	if !strings.Contains(work, "replace "+Repo+"/protocol v0.2.0 => ./protocol") || strings.Contains(work, "v0.1.0") {
		t.Errorf("go.work after the bump:\n%s", work)
	}
	if v, err := CurrentVersion(root, dirs); err != nil || v != "v0.2.0" {
		t.Errorf("CurrentVersion after the bump = %q, %v", v, err)
	}
	if err := Bump(root, dirs, "0.3"); err == nil {
		t.Error("Bump accepted a version that is not vX.Y.Z")
	}
}

// A module go.mod that replaces a sibling is refused: users' builds ignore it.
func TestBumpRefusesReplace(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "agent", "go.mod"), "module "+Repo+"/agent\n\ngo 1.26.0\n\nrequire "+Repo+"/protocol v0.1.0\n\nreplace "+Repo+"/protocol => ../protocol\n")
	if err := Bump(root, []string{"agent"}, "v0.2.0"); err == nil || !strings.Contains(err.Error(), "must not replace") {
		t.Fatalf("Bump = %v, want a refusal of the replace", err)
	}
}

func TestCurrentVersionNotInLockstep(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "go.mod"), "module "+Repo+"/a\n\ngo 1.26.0\n\nrequire "+Repo+"/protocol v0.1.0\n")
	write(t, filepath.Join(root, "b", "go.mod"), "module "+Repo+"/b\n\ngo 1.26.0\n\nrequire "+Repo+"/protocol v0.2.0\n")
	if _, err := CurrentVersion(root, []string{"a", "b"}); err == nil {
		t.Fatal("CurrentVersion accepted requirements at two versions")
	}
}

func TestStripSums(t *testing.T) {
	root := t.TempDir()
	sums := Repo + "/protocol v0.1.0 h1:abc=\n" + Repo + "/protocol v0.1.0/go.mod h1:def=\ngolang.org/x/text v0.14.0 h1:ghi=\n"
	write(t, filepath.Join(root, "agent", "go.sum"), sums)
	if err := StripSums(root, []string{"agent", "missing"}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root, "agent", "go.sum")); got != "golang.org/x/text v0.14.0 h1:ghi=\n" {
		t.Errorf("go.sum after StripSums:\n%s", got)
	}
}
