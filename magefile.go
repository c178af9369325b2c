//go:build mage

// The smcp-go build: `go run mage.go -l` lists the targets, `go run mage.go
// test` is the project's test command.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/a2c-smcp/smcp-go/tools/layout"
	"github.com/a2c-smcp/smcp-go/tools/release"
)

const repo = "github.com/a2c-smcp/smcp-go"

// moduleTable lists every module of the workspace, in dependency order:
// the one place that names them. Published modules are released (tagged
// <dir>/vX.Y.Z) and installable; Pulls lists the repository modules a
// user of a role module gets besides it (checked exactly by Rehearse, and
// shown in the README's module table); Binaries are its commands.
var moduleTable = []struct {
	Dir       string
	Published bool
	Pulls     []string
	Binaries  []string
}{
	{Dir: "protocol", Published: true},
	{Dir: "sio", Published: true, Pulls: []string{"protocol"}},
	{Dir: "dpekit", Published: true, Pulls: []string{"protocol"}},
	{Dir: "server", Published: true, Pulls: []string{"protocol", "sio"}, Binaries: []string{"server/cmd/smcp-server"}},
	{Dir: "computer", Published: true, Pulls: []string{"protocol", "sio"}, Binaries: []string{"computer/cmd/smcp-computer"}},
	{Dir: "agent", Published: true, Pulls: []string{"protocol", "sio"}, Binaries: []string{"agent/cmd/smcp-agent"}},
	{Dir: "inspector", Published: true, Pulls: []string{"agent", "protocol", "server", "sio"}, Binaries: []string{"inspector/cmd/smcp-inspector"}},
	{Dir: "examples", Published: true, Pulls: []string{"agent", "computer", "dpekit", "inspector", "protocol", "server", "sio"}, Binaries: []string{"examples/docserver/cmd/smcp-docserver"}},
	{Dir: "e2e"},
	{Dir: "tools"},
}

// modules of the workspace, in dependency order.
var modules = func() []string {
	var out []string
	for _, m := range moduleTable {
		out = append(out, m.Dir)
	}
	return out
}()

// published modules, in dependency order.
func published() []string {
	var out []string
	for _, m := range moduleTable {
		if m.Published {
			out = append(out, m.Dir)
		}
	}
	return out
}

// allModuleDirs are the directories whose go.mod requires repository
// modules: every module and the build's own root module.
func allModuleDirs() []string { return append([]string{"."}, modules...) }

// generatedFiles are written by smcpgen into protocol/; specTables into spec/.
var (
	generatedFiles = []string{"types_gen.go", "events_gen.go", "errors_gen.go"}
	specTables     = []string{"events_gen.md", "errors_gen.md"}
)

// Generate regenerates protocol/*_gen.go, protocol/schema/<generation>/
// (each schema projected onto each generation) and the tables of spec/
// (events_gen.md, errors_gen.md) from schema/.
func Generate() error {
	return runGen("protocol", "spec")
}

func runGen(out, spec string) error {
	return run("go", "run", repo+"/tools/cmd/smcpgen", "-schema", "schema", "-out", out, "-spec", spec)
}

// Check regenerates into a temporary directory and fails on any difference
// with the committed files, and on a go.work.sum that lags behind the
// modules' go.mod and go.sum files.
func Check() error {
	tmp, err := os.MkdirTemp("", "smcp-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := runGen(tmp, filepath.Join(tmp, "spec")); err != nil {
		return err
	}
	want := append([]string{}, generatedFiles...)
	// protocol/schema/<generation>/<file>: each schema projected onto each
	// generation it belongs to (spec/generations.md).
	schemas, _ := filepath.Glob(filepath.Join(tmp, "schema", "*", "*.json"))
	for _, s := range schemas {
		rel, _ := filepath.Rel(tmp, s)
		want = append(want, rel)
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
	for _, f := range specTables {
		fresh, err := os.ReadFile(filepath.Join(tmp, "spec", f))
		if err != nil {
			return err
		}
		committed, err := os.ReadFile(filepath.Join("spec", f))
		if err != nil || !bytes.Equal(fresh, committed) {
			drift = append(drift, "spec/"+f)
		}
	}
	committedSchemas, _ := filepath.Glob(filepath.Join("protocol", "schema", "*"))
	more, _ := filepath.Glob(filepath.Join("protocol", "schema", "*", "*"))
	for _, s := range append(committedSchemas, more...) {
		rel, _ := filepath.Rel("protocol", s)
		if _, err := os.Stat(filepath.Join(tmp, rel)); err != nil {
			drift = append(drift, s+" (no longer generated from schema/)")
		}
	}
	if len(drift) > 0 {
		return fmt.Errorf("generated files drift from schema/ — run `go run mage.go generate` and commit:\n  %s", strings.Join(drift, "\n  "))
	}
	if err := checkWorkSum(); err != nil {
		return err
	}
	fmt.Println("check: generated files and spec tables match schema/; go.work.sum is current")
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
// (tests included) over every module, and checks that what a client
// program links (the agent and computer packages and binaries) holds no
// Socket.IO server, QUIC, HTTP/3 or WebTransport code.
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
		if roots, ok := layout.ClientRoots[m]; ok {
			linked, err := listDepsOf(m, roots)
			if err != nil {
				return err
			}
			problems = append(problems, layout.ClientViolations(m, linked)...)
		}
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
	return goList(module, append(args, "./...")...)
}

// listDepsOf lists the dependencies of some packages of module, tests
// excluded.
func listDepsOf(module string, pkgs []string) ([]string, error) {
	return goList(module, append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...)
}

func goList(module string, args ...string) ([]string, error) {
	cmd := exec.Command("go", args...)
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

// pyPeerDir holds the drivers of the Python peers of protocols 0.3 and 0.4
// and their pinned requirements files.
const pyPeerDir = "e2e/testdata/pypeer"

// pythonPeers are the virtualenvs of the Python reference SDK a2c-smcp, one
// per release the interop tests run, each installed from its committed
// requirements file (every transitive dependency pinned): 0.1.2 speaks
// protocol 0.2.0, 0.3.3 protocol 0.3.1, 0.4.2 protocol 0.4.0.
var pythonPeers = []struct{ venv, requirements, env string }{
	{".cache/venv", interopDir + "/requirements.txt", "SMCP_INTEROP_PYTHON"},
	{".cache/venv-0.3.3", pyPeerDir + "/requirements-0.3.3.txt", "SMCP_INTEROP_PYTHON_03"},
	{".cache/venv-0.4.2", pyPeerDir + "/requirements-0.4.2.txt", "SMCP_INTEROP_PYTHON_04"},
}

// Setup installs the pinned interop peers used by the tests: the official
// JavaScript socket.io-client (npm ci from the committed lock file), the
// Python reference SDK a2c-smcp in each of its pythonPeers virtualenvs, the
// Debian programs the tests drive (debianPeers: headless Chromium,
// redis-server, haproxy, nginx) and the Rust SDK's peers (SetupRust, whose
// builds need debianBuildDeps).
func Setup() error {
	if err := setupDebianPeers(); err != nil {
		return err
	}
	if err := SetupRust(); err != nil {
		return fmt.Errorf("building the Rust interop peers: %w", err)
	}
	if err := run("npm", "ci", "--no-audit", "--no-fund", "--prefix", interopDir); err != nil {
		return fmt.Errorf("installing socket.io-client: %w", err)
	}
	for _, p := range pythonPeers {
		if err := setupVenv(filepath.FromSlash(p.venv), filepath.FromSlash(p.requirements)); err != nil {
			return err
		}
	}
	return nil
}

// setupVenv makes the virtualenv venv when it is missing and installs
// requirements into it exactly: with --no-deps, so that a dependency the
// file forgot fails `pip check` instead of arriving at whatever version is
// newest that day.
func setupVenv(venv, requirements string) error {
	if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil {
		if err := run("python3", "-m", "venv", venv); err != nil {
			return fmt.Errorf("creating the virtualenv %s: %w", venv, err)
		}
	}
	pip := filepath.Join(venv, "bin", "pip")
	if err := run(pip, "install", "--disable-pip-version-check", "-q", "--no-deps", "-r", requirements); err != nil {
		return fmt.Errorf("installing %s: %w", requirements, err)
	}
	if err := run(pip, "check", "--disable-pip-version-check"); err != nil {
		return fmt.Errorf("%s is not complete: %w", requirements, err)
	}
	return nil
}

// debianPeers are the programs from Debian's packages that the tests drive:
// headless Chromium for the inspector's browser tests, redis-server (Redis
// ≥ 7, for sharded Pub/Sub), haproxy and nginx (the load balancer
// configurations of server/README.md) for the cluster tests, and zsh for
// the test of smcp-agent's zsh completion.
var debianPeers = []struct{ bin, pkg string }{
	{"chromium", "chromium"},
	{"redis-server", "redis-server"},
	{"haproxy", "haproxy"},
	{"nginx", "nginx"},
	{"zsh", "zsh"},
	{"pkg-config", "pkg-config"}, // finds debianBuildDeps for the Rust builds
}

// debianBuildDeps are the Debian libraries the Rust peers link, by their
// pkg-config name: the 0.4.1 smcp-computer crate depends on keyring's
// secret-service backend on Linux, which links libdbus.
var debianBuildDeps = []struct{ pc, pkg string }{
	{"dbus-1", "libdbus-1-dev"},
}

// setupDebianPeers installs the missing debianPeers and debianBuildDeps with
// apt-get when this process may (root, with apt-get); otherwise it fails
// and says how to.
func setupDebianPeers() error {
	var missing []string
	for _, p := range debianPeers {
		if _, err := exec.LookPath(p.bin); err != nil {
			missing = append(missing, p.pkg)
		}
	}
	for _, d := range debianBuildDeps {
		if exec.Command("pkg-config", "--exists", d.pc).Run() != nil {
			missing = append(missing, d.pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		return fmt.Errorf("missing for the tests: %s; install them (Debian: apt-get install %s; Redis must be 7 or later)",
			strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	if err := runEnv(".", env, "apt-get", "update", "-q"); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	if err := runEnv(".", env, "apt-get", append([]string{"install", "-y", "-q"}, missing...)...); err != nil {
		return fmt.Errorf("installing %s: %w", strings.Join(missing, ", "), err)
	}
	return nil
}

// peerPath is what the SMCP_INTEROP_* variables of the Debian peers hold:
// the binary on PATH, or the bare name so that a missing one fails the
// tests.
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
	return append([]string{
		"SMCP_INTEROP=1",
		"SMCP_INTEROP_NODE_MODULES=" + filepath.Join(wd, interopDir, "node_modules"),
		"SMCP_INTEROP_CHROMIUM=" + peerPath("chromium"),
		"SMCP_INTEROP_REDIS=" + peerPath("redis-server"),
		"SMCP_INTEROP_HAPROXY=" + peerPath("haproxy"),
		"SMCP_INTEROP_NGINX=" + peerPath("nginx"),
		"SMCP_INTEROP_ZSH=" + peerPath("zsh"),
	}, append(pythonInteropEnv(wd), rustInteropEnv()...)...)
}

// PeersEnv prints the variables that tell the tests where the installed
// interop peers are, as the test target sets them, in shell syntax: after
// `eval "$(go run mage.go peersEnv)"`, `go test` in a module runs its interop
// tests as `go run mage.go test` does (run setup first).
func PeersEnv() {
	for _, kv := range interopEnv() {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Printf("export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
}

// pythonInteropEnv tells the tests where each pythonPeers interpreter is.
func pythonInteropEnv(wd string) []string {
	var env []string
	for _, p := range pythonPeers {
		env = append(env, p.env+"="+filepath.Join(wd, filepath.FromSlash(p.venv), "bin", "python"))
	}
	return env
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
	if err := Rehearse(context.Background()); err != nil {
		return err
	}
	return Fuzz()
}

// Tidy runs `go mod tidy` in every module as a user's build sees it:
// outside the workspace, with the repository's modules served at the
// version the go.mod files require by a file proxy built from the working
// tree. The go.sum lines of the repository's own modules are then removed:
// only a release commit carries them (see Release). Last, go.work.sum is
// brought to what the workspace needs (magefile_worksum.go).
func Tidy(ctx context.Context) error {
	version, err := release.CurrentVersion(".", allModuleDirs())
	if err != nil {
		return err
	}
	proxy, err := os.MkdirTemp("", "smcp-tidy-proxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(proxy)
	defer release.Forget(ctx, modules, version)
	if err := release.Publish(ctx, ".", modules, version, proxy, true, os.Stdout); err != nil {
		return err
	}
	env, err := release.ProxyEnv(ctx, proxy)
	if err != nil {
		return err
	}
	if err := release.Go(ctx, ".", env, os.Stdout, "mod", "tidy"); err != nil {
		return err
	}
	if err := release.StripSums(".", allModuleDirs()); err != nil {
		return err
	}
	return refreshWorkSum(".")
}

// Release vX.Y.Z releases every published module at that version: it
// checks that the tree is clean and that Test passes, moves every
// intra-repository requirement (and go.work's replace directives) to
// vX.Y.Z, tidies each module against a file proxy of the tree so that its
// go.sum names its siblings at vX.Y.Z, commits, and creates the local tags
// <module>/vX.Y.Z. Pushing the commit and the tags is the maintainer's act.
func Release(ctx context.Context, version string) error {
	if out, err := exec.Command("git", "status", "--porcelain").Output(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		return fmt.Errorf("release needs a clean tree (git status --porcelain: %v)\n%s", err, out)
	}
	for _, m := range published() {
		tag := m + "/" + version
		if exec.Command("git", "rev-parse", "-q", "--verify", "refs/tags/"+tag).Run() == nil {
			return fmt.Errorf("tag %s exists already", tag)
		}
	}
	mg.Deps(Test)
	if err := release.Bump(".", allModuleDirs(), version); err != nil {
		return err
	}
	proxy, err := os.MkdirTemp("", "smcp-release-proxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(proxy)
	if err := release.Publish(ctx, ".", modules, version, proxy, true, os.Stdout); err != nil {
		return err
	}
	env, err := release.ProxyEnv(ctx, proxy)
	if err != nil {
		return err
	}
	if err := release.Go(ctx, ".", env, os.Stdout, "mod", "tidy"); err != nil {
		return err
	}
	if err := refreshWorkSum("."); err != nil {
		return err
	}
	if err := run("git", "commit", "-qam", "release "+version+": every module at "+version); err != nil {
		return err
	}
	for _, m := range published() {
		if err := run("git", "tag", m+"/"+version); err != nil {
			return err
		}
	}
	fmt.Printf("release: tagged %s at %s; push the commit and the tags to publish\n", strings.Join(published(), ", "), version)
	return nil
}

// agentProgram is the user program of the rehearsal: it depends on the
// agent module only and calls agent.Dial.
const agentProgram = `package main

import (
	"context"
	"fmt"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := agent.Dial(ctx, "http://127.0.0.1:1", agent.WithName("rehearsal"))
	fmt.Println(err)
}
`

// Rehearse does what a release and its first users do, from the working
// tree and outside the workspace: it publishes every published module at a
// throw-away version into a file proxy, then a new module `go get`s only
// the agent module and builds a program calling agent.Dial, new modules
// depending on the server or the computer module are resolved, and every
// binary is `go install`ed at that version and answers --version with it.
// The module graph of each user must hold exactly the repository modules
// of moduleTable's Pulls, and no heavy third-party module it does not need.
func Rehearse(ctx context.Context) error {
	current, err := release.CurrentVersion(".", allModuleDirs())
	if err != nil {
		return err
	}
	r := release.Rehearsal{
		Root:      ".",
		Published: published(),
		Version:   fmt.Sprintf("%s-rehearsal.%d", current, time.Now().Unix()),
		Consumers: map[string][]string{},
		Forbidden: map[string][]string{
			"agent":    {"github.com/mark3labs/mcp-go", "github.com/xuri/excelize/v2"},
			"server":   {"github.com/mark3labs/mcp-go", "github.com/xuri/excelize/v2"},
			"computer": {"github.com/xuri/excelize/v2"},
		},
		Programs: map[string]string{"agent": agentProgram},
		Log:      io.Discard,
	}
	for _, m := range moduleTable {
		r.Binaries = append(r.Binaries, m.Binaries...)
		if _, ok := r.Forbidden[m.Dir]; ok {
			r.Consumers[m.Dir] = m.Pulls
		}
	}
	if os.Getenv("SMCP_REHEARSAL_VERBOSE") != "" {
		r.Log = os.Stdout
	}
	start := time.Now()
	res, err := release.Rehearse(ctx, r)
	if res != nil {
		for _, role := range []string{"agent", "computer", "server"} {
			if deps, ok := res.Deps[role]; ok {
				fmt.Printf("rehearsal: a user of %s gets %d modules: %s\n", role, len(deps), strings.Join(deps, " "))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("release rehearsal at %s: %w", r.Version, err)
	}
	fmt.Printf("rehearsal: %s published, users resolved, %d binaries installed and versioned in %s\n", r.Version, len(r.Binaries), time.Since(start).Round(time.Second))
	return nil
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
		{"server", ".", "FuzzWireDecoder", "50000x"},
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
// smcp-memprobe), as deployed (no heap profiling): RSS, live heap and
// goroutines per joined idle connection at 1,000 raw websocket clients, in
// offices of ten and each in its own office (as BenchCompare's idle phase),
// with where the RSS goes; the heap profile's largest holders (a second run,
// profiled); RSS before and after 30,000 connection churn cycles, for
// smcp-server and then for a reference floor (server/internal/cmd/
// smcp-memfloor: net/http and gorilla/websocket answering the same cycles,
// no Socket.IO library), which tells what the Go runtime keeps after such a
// burst in any server; then the peak RSS under the binary-packet,
// slow-reader and big-name attacks. It is
// a measurement, not a test: it asserts nothing (spec/decisions.md, Idle
// memory per connection).
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
	floor, _ := filepath.Abs(filepath.Join(dir, "smcp-memfloor"))
	if err := runIn("server", "go", "build", "-o", floor, "./internal/cmd/smcp-memfloor"); err != nil {
		return err
	}
	for _, size := range []string{"10", "1"} {
		if err := run(probe, "-server", bin, "-scenario", "idle", "-clients", "1000", "-office-size", size); err != nil {
			return err
		}
	}
	profile, _ := filepath.Abs(filepath.Join(dir, "idle-heap.pb.gz"))
	if err := run(probe, "-server", bin, "-scenario", "idle", "-clients", "1000", "-profile", profile); err != nil {
		return err
	}
	if err := run("go", "tool", "pprof", "-top", "-nodecount=15", "-sample_index=inuse_space", bin, profile); err != nil {
		return err
	}
	for _, b := range []string{bin, floor} {
		if err := run(probe, "-server", b, "-scenario", "churn", "-cycles", "30000", "-settle", "10s"); err != nil {
			return err
		}
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
