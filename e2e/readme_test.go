package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestREADME runs the shell examples of the README that carry a
// <!-- readme-test: KIND [NAME] --> marker, in order, in one bash session,
// as a new user would paste them: the binaries installed from the checkout
// (go install), a program of one's own built with `go run mage.go
// workfile`, then a real office — smcp-server, smcp-computer with
// smcp-docserver over the quickstart's documents, smcp-agent, and
// smcp-inspector. KIND "run" blocks run in the session and must succeed;
// in a "background NAME" block the last command (a service) runs in the
// background and the session waits for it to be ready (an event: its port
// accepts, its catalog lists the documents) before going on.
//
// The only liberties taken with the README: the clone is this checkout
// (its `git clone` line becomes a cd), HOME is a temporary directory, the
// binaries go to a temporary GOBIN, and the Server and the inspector listen
// on free ports instead of 8080 and 7780. The checkout is as clean after
// them as before (git status).
func TestREADME(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed to run the README's examples: %v", err)
	}
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(repo, "README.md"))
	require.NoError(t, err)
	blocks := readmeBlocks(t, string(raw))

	serverPort, inspectorPort := freePort(t), freePort(t)
	subst := []struct{ old, new string }{
		{"git clone https://github.com/a2c-smcp/smcp-go && cd smcp-go", `cd "$README_REPO"`},
		{"127.0.0.1:8080", "127.0.0.1:" + serverPort},
	}
	var script strings.Builder
	fmt.Fprintf(&script, `set -euo pipefail
ready_server() { until (exec 3<>/dev/tcp/127.0.0.1/%[1]s) 2>/dev/null; do sleep 0.1; done; }
ready_computer() {
  until SMCP_SERVER=http://127.0.0.1:%[1]s SMCP_OFFICE=demo SMCP_API_KEY="$KEY" smcp-agent finder desk 2>/dev/null | grep -q quarterly-report.md; do sleep 0.2; done
}
ready_inspector() { until curl -sf -o /dev/null http://127.0.0.1:%[2]s/; do sleep 0.1; done; }
`, serverPort, inspectorPort)
	for i, b := range blocks {
		body := b.body
		for _, s := range subst {
			body = strings.ReplaceAll(body, s.old, s.new)
		}
		fmt.Fprintf(&script, "echo '=== README block %d (%s %s)'\n", i+1, b.kind, b.name)
		switch b.kind {
		case "run":
			script.WriteString(body + "\n")
		case "background":
			lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
			last := len(lines) - 1
			for last >= 0 && (strings.TrimSpace(lines[last]) == "" || strings.HasPrefix(strings.TrimSpace(lines[last]), "#")) {
				last--
			}
			require.GreaterOrEqual(t, last, 0, "block %d has no command", i+1)
			script.WriteString(strings.Join(lines[:last], "\n") + "\n")
			service := trailingComment.ReplaceAllString(lines[last], "")
			fmt.Fprintf(&script, "(%s) > %q 2>&1 &\n", service, b.name+".log")
			fmt.Fprintf(&script, "ready_%s\n", b.name)
		default:
			t.Fatalf("README block %d: unknown kind %q", i+1, b.kind)
		}
	}
	full := script.String()
	for _, s := range subst {
		require.Contains(t, string(raw), s.old, "the README no longer has %q: update TestREADME", s.old)
	}

	tmp := t.TempDir()
	home, gobin, logs := filepath.Join(tmp, "home"), filepath.Join(tmp, "bin"), filepath.Join(tmp, "logs")
	for _, d := range []string{home, gobin, logs} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}
	realHome, _ := os.UserHomeDir()
	env := append(os.Environ(),
		"HOME="+home, "GOBIN="+gobin, "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOCACHE="+goEnv("GOCACHE"), "GOMODCACHE="+goEnv("GOMODCACHE"), "GOPATH="+goEnv("GOPATH"),
		"MAGEFILE_CACHE="+filepath.Join(realHome, ".magefile"),
		"SMCP_INSPECTOR_LISTEN=127.0.0.1:"+inspectorPort,
		"README_REPO="+repo)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", full)
	cmd.Dir = logs
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the services too: one group to stop
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	status := func() string { // "" outside a git checkout
		out, _ := exec.Command("git", "-C", repo, "status", "--porcelain").Output()
		return string(out)
	}
	before := status()
	require.NoError(t, cmd.Start())
	pgid := cmd.Process.Pid
	t.Cleanup(func() { stopGroup(pgid) })
	err = cmd.Wait()
	if err != nil {
		t.Logf("script:\n%s", full)
		for _, name := range []string{"server", "computer", "inspector"} {
			if b, err := os.ReadFile(filepath.Join(logs, name+".log")); err == nil {
				t.Logf("%s log:\n%s", name, b)
			}
		}
		t.Fatalf("the README's examples failed: %v\n%s", err, out.String())
	}
	require.Equal(t, before, status(), "the README's commands changed the checkout (git status)")
	got := out.String()
	for _, want := range []string{
		"tools on alpha",                             // the program built from the checkout ran
		"desk        computer",                       // smcp-agent room
		"dpe://com.example.docs/quarterly-report.md", // finder
		"| North | 412 | 455 | +10.4 % |",            // the page's table
		`"doc_ref": "budget-2026.xlsx"`,              // page --format json
	} {
		require.Contains(t, got, want, "output:\n%s", got)
	}
	t.Logf("README examples ran:\n%s", got)
}

// trailingComment is a shell comment at the end of a command line.
var trailingComment = regexp.MustCompile(`\s+#.*$`)

type readmeBlock struct{ kind, name, body string }

// readmeBlocks returns the marked sh blocks of the README, in order.
func readmeBlocks(t *testing.T, readme string) []readmeBlock {
	t.Helper()
	var out []readmeBlock
	sc := bufio.NewScanner(strings.NewReader(readme))
	var cur *readmeBlock
	var inBlock bool
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "<!-- readme-test:"):
			f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(line, "<!-- readme-test:"), "-->"))
			require.NotEmpty(t, f, "empty marker: %s", line)
			cur = &readmeBlock{kind: f[0]}
			if len(f) > 1 {
				cur.name = f[1]
			}
		case cur != nil && !inBlock && line == "```sh":
			inBlock = true
		case inBlock && line == "```":
			out = append(out, *cur)
			cur, inBlock = nil, false
		case inBlock:
			cur.body += line + "\n"
		case cur != nil && strings.TrimSpace(line) != "":
			t.Fatalf("a readme-test marker is not followed by a sh block: %q", line)
		}
	}
	require.NotEmpty(t, out, "no readme-test blocks in the README")
	return out
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// stopGroup ends a process group: SIGTERM (the services shut down and stop
// their children), then SIGKILL for whatever is left.
func stopGroup(pgid int) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	for i := 0; i < 100; i++ {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and a test's
// reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
