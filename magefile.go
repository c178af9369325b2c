//go:build mage

// The smcp-go build: `go run mage.go -l` lists the targets, `go run mage.go
// test` is the project's test command.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/a2c-smcp/smcp-go/tools/layout"
)

const repo = "github.com/a2c-smcp/smcp-go"

// modules of the workspace, in dependency order.
var modules = []string{"protocol", "dpekit", "server", "computer", "agent", "examples", "e2e", "tools"}

// generatedFiles are written by smcpgen into protocol/.
var generatedFiles = []string{"types_gen.go", "events_gen.go", "errors_gen.go"}

// Generate regenerates protocol/*_gen.go and protocol/schema/ from schema/.
func Generate() error {
	return runGen("protocol")
}

func runGen(out string) error {
	return run("go", "run", repo+"/tools/cmd/smcpgen", "-schema", "schema", "-out", out)
}

// Check regenerates into a temporary directory and fails on any difference
// with the committed files.
func Check() error {
	tmp, err := os.MkdirTemp("", "smcp-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := runGen(tmp); err != nil {
		return err
	}
	want := append([]string{}, generatedFiles...)
	schemas, _ := filepath.Glob(filepath.Join(tmp, "schema", "*.json"))
	for _, s := range schemas {
		want = append(want, filepath.Join("schema", filepath.Base(s)))
	}
	var drift []string
	for _, f := range want {
		fresh, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			return err
		}
		committed, err := os.ReadFile(filepath.Join("protocol", f))
		if err != nil || !bytes.Equal(fresh, committed) {
			drift = append(drift, "protocol/"+f)
		}
	}
	committedSchemas, _ := filepath.Glob(filepath.Join("protocol", "schema", "*.json"))
	for _, s := range committedSchemas {
		if _, err := os.Stat(filepath.Join(tmp, "schema", filepath.Base(s))); err != nil {
			drift = append(drift, s+" (no longer in schema/)")
		}
	}
	if len(drift) > 0 {
		return fmt.Errorf("generated files drift from schema/ — run `go run mage.go generate` and commit:\n  %s", strings.Join(drift, "\n  "))
	}
	fmt.Println("check: generated files match schema/")
	return nil
}

// Fmt fails when a Go file is not gofmt-formatted.
func Fmt() error {
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	out, err := exec.Command("gofmt", append([]string{"-l"}, files...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("gofmt: %v\n%s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		return fmt.Errorf("gofmt would change:\n%s", s)
	}
	fmt.Printf("fmt: %d files formatted\n", len(files))
	return nil
}

// Vet runs go vet over every module.
func Vet() error {
	for _, m := range modules {
		if err := runIn(m, "go", "vet", "./..."); err != nil {
			return err
		}
	}
	return nil
}

// Imports enforces the layout rules of tools/layout with `go list -deps`
// (tests included) over every module.
func Imports() error {
	var problems []string
	for _, m := range modules {
		deps, err := listDeps(m, false)
		if err != nil {
			return err
		}
		testDeps, err := listDeps(m, true)
		if err != nil {
			return err
		}
		problems = append(problems, layout.Violations(m, deps, testDeps)...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("import rules broken:\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Println("imports: layout rules hold")
	return nil
}

func listDeps(module string, tests bool) ([]string, error) {
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	if tests {
		args = append(args, "-test")
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = module
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps in %s: %v\n%s", module, err, stderr.String())
	}
	return strings.Fields(string(out)), nil
}

// interopDir holds the pinned manifests of the interop peers.
const interopDir = "server/testdata/interop"

// Setup installs the pinned interop peers used by the server's tests: the
// official JavaScript socket.io-client (npm ci from the committed lock file),
// the Python reference SDK a2c-smcp (pip into .cache/venv from the
// committed requirements file), and redis-server and haproxy for the cluster tests.
func Setup() error {
	if err := ensureClusterPeers(); err != nil {
		return err
	}
	if err := run("npm", "ci", "--no-audit", "--no-fund", "--prefix", interopDir); err != nil {
		return fmt.Errorf("installing socket.io-client: %w", err)
	}
	venv := filepath.Join(".cache", "venv")
	if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil {
		if err := run("python3", "-m", "venv", venv); err != nil {
			return fmt.Errorf("creating the virtualenv: %w", err)
		}
	}
	pip := filepath.Join(venv, "bin", "pip")
	return run(pip, "install", "--disable-pip-version-check", "-q", "-r", filepath.Join(interopDir, "requirements.txt"))
}

// ensureClusterPeers installs the cluster tests' peers from Debian when they are
// missing and this runs as root with apt-get: redis-server (Redis ≥ 7, for
// sharded Pub/Sub) and haproxy (the load balancer configuration of
// server/README.md). Otherwise it says how, and the tests fail until they
// are there.
func ensureClusterPeers() error {
	var missing []string
	for _, p := range []struct{ bin, pkg string }{{"redis-server", "redis-server"}, {"haproxy", "haproxy"}} {
		if _, err := exec.LookPath(p.bin); err != nil {
			missing = append(missing, p.pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		fmt.Fprintf(os.Stderr, "missing for the server's cluster tests: %s (Debian: apt-get install %s; Redis must be 7 or later)\n",
			strings.Join(missing, ", "), strings.Join(missing, " "))
		return nil
	}
	if err := run("apt-get", "update"); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	args := append([]string{"install", "-y"}, missing...)
	if err := runEnv(".", []string{"DEBIAN_FRONTEND=noninteractive"}, "apt-get", args...); err != nil {
		return fmt.Errorf("installing %s: %w", strings.Join(missing, ", "), err)
	}
	return nil
}

// peerPath is what SMCP_INTEROP_REDIS and SMCP_INTEROP_HAPROXY hold: the
// binary on PATH, or the bare name so that a missing one fails the tests.
func peerPath(bin string) string {
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	return bin
}

// interopEnv tells the tests where the peers are, and that they must be
// there (a missing peer fails the test instead of skipping it).
func interopEnv() []string {
	wd, _ := os.Getwd()
	return []string{
		"SMCP_INTEROP=1",
		"SMCP_INTEROP_NODE_MODULES=" + filepath.Join(wd, interopDir, "node_modules"),
		"SMCP_INTEROP_PYTHON=" + filepath.Join(wd, ".cache", "venv", "bin", "python"),
		"SMCP_INTEROP_REDIS=" + peerPath("redis-server"),
		"SMCP_INTEROP_HAPROXY=" + peerPath("haproxy"),
	}
}

// Test is the project's test command: drift check, gofmt, vet, import rules,
// interop setup, `go test -race` over every module, then a short fuzz run.
func Test() error {
	mg.SerialDeps(Check, Fmt, Vet, Imports, Setup)
	env := interopEnv()
	for _, m := range modules {
		if err := runEnv(m, env, "go", "test", "-race", "-count=1", "-timeout", "20m", "./..."); err != nil {
			return err
		}
	}
	return Fuzz()
}

// Fuzz runs each fuzz target briefly. The budgets are execution counts,
// not durations: with a duration, Go 1.26's fuzz coordinator can fail with
// "context deadline exceeded" when the time runs out while it minimizes a
// new input (golang/go#75804, fixed in Go 1.27), which a loaded CI machine
// hits now and then. Each budget is a few seconds of fuzzing on a 2-core
// machine; minimization is capped as well.
func Fuzz() error {
	targets := []struct{ module, pkg, name, execs string }{
		{"protocol", "./dpe", "FuzzParse", "50000x"},
		{"protocol", "./dpe", "FuzzRender", "200000x"},
		{"protocol", "./window", "FuzzParse", "50000x"},
		{"server", ".", "FuzzEventPayload", "2000x"},
	}
	for _, t := range targets {
		if err := runIn(t.module, "go", "test", "-run=^$", "-fuzz=^"+t.name+"$",
			"-fuzztime="+t.execs, "-fuzzminimizetime=500x", t.pkg); err != nil {
			return err
		}
	}
	return nil
}

// Bench runs every benchmark of every module once, with memory statistics.
func Bench() error {
	env := interopEnv()
	for _, m := range modules {
		if err := runEnv(m, env, "go", "test", "-run=^$", "-bench=.", "-benchmem", "-count=1", "./..."); err != nil {
			return err
		}
	}
	return nil
}

// Memory measures a real smcp-server process (server/internal/cmd/
// smcp-memprobe): RSS, live heap and goroutines per joined idle connection
// at 1,000 raw websocket clients, with the heap profile's largest holders,
// then the peak RSS under the binary-packet, slow-reader and big-name
// attacks. It is a measurement, not a test: it asserts nothing.
func Memory() error {
	dir := filepath.Join(".cache", "memory")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin, _ := filepath.Abs(filepath.Join(dir, "smcp-server"))
	probe, _ := filepath.Abs(filepath.Join(dir, "smcp-memprobe"))
	if err := runIn("server", "go", "build", "-o", bin, "./cmd/smcp-server"); err != nil {
		return err
	}
	if err := runIn("server", "go", "build", "-o", probe, "./internal/cmd/smcp-memprobe"); err != nil {
		return err
	}
	profile, _ := filepath.Abs(filepath.Join(dir, "idle-heap.pb.gz"))
	if err := run(probe, "-server", bin, "-scenario", "idle", "-clients", "1000", "-profile", profile); err != nil {
		return err
	}
	if err := run("go", "tool", "pprof", "-top", "-nodecount=15", "-sample_index=inuse_space", bin, profile); err != nil {
		return err
	}
	for _, sc := range []string{"binary", "slow", "bignames"} {
		if err := run(probe, "-server", bin, "-scenario", sc); err != nil {
			return err
		}
	}
	return nil
}

func run(name string, args ...string) error { return runEnv(".", nil, name, args...) }

func runIn(dir, name string, args ...string) error { return runEnv(dir, nil, name, args...) }

func runEnv(dir string, env []string, name string, args ...string) error {
	start := time.Now()
	fmt.Printf("» (%s) %s %s\n", dir, name, strings.Join(args, " "))
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s %s (in %s) failed: exit %d", name, strings.Join(args, " "), dir, ee.ExitCode())
		}
		return err
	}
	if d := time.Since(start); d > 5*time.Second {
		fmt.Printf("  took %s on %d CPUs\n", d.Round(time.Second), runtime.NumCPU())
	}
	return nil
}
