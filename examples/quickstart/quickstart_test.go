package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The quickstart runs here as a user runs it: a real process (built into a
// temporary folder, with the race detector when the test has it) that starts
// the document server as its own child process. The tests check its exit
// code, the key lines of its output and that nothing it started survives.

// binDir holds the quickstart binary the tests share; TestMain removes it.
var (
	binDir    string
	buildOnce sync.Once
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// build compiles the quickstart once for all the tests.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			goTool = "go"
		}
		if binDir, buildErr = os.MkdirTemp("", "quickstart-test-"); buildErr != nil {
			return
		}
		args := []string{"build", "-o", filepath.Join(binDir, "quickstart")}
		if raceEnabled {
			args = append(args, "-race")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, goTool, append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(binDir, "quickstart")
}

// command prepares the quickstart to run under ctx; a run that outlives ctx
// is killed.
func command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "GORACE=halt_on_error=1")
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

var (
	pidLine  = regexp.MustCompile(`child process pid (\d+)`)
	docsLine = regexp.MustCompile(`documents: (\S+) \(a copy`)
)

func TestQuickstart(t *testing.T) {
	bin := build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var stdout, stderr bytes.Buffer
	cmd := command(ctx, bin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	out := stdout.String()
	require.NoError(t, err, "the quickstart failed\nstdout:\n%s\nstderr:\n%s", out, stderr.String())
	t.Logf("ran in %s", time.Since(began).Round(time.Millisecond))

	for _, want := range []string{
		// the catalog
		"Budget 2026",
		"Quarterly Operations Report — Q3 2026",
		"Service Agreement: Northwind Analytics and Harbor Logistics",
		"dpe://local.docs/sales-2026-q3.csv",
		"4 documents",
		// Level 1 with its page index
		"Quarterly Operations Report — Q3 2026 (md, 5 pages)",
		"Revenue by region",
		// Level 2, tables only, as Markdown
		"read dpe://local.docs/quarterly-report.md/pages/2?categories=table&format=markdown",
		"| East | 551 | 634 | +15.1 % |",
		// Level 3, with the workbook's formulas
		`metadata.formulas: {"B4":"=Expenses!F8","B5":"=B3-B4"}`,
		"| Headroom | 97200 | Approved budget minus planned spend |",
		// the error on purpose
		`error 4202 (PageOutOfRange): page 5 out of range: document "quarterly-report.md" has 5 pages`,
		// the change notification
		"notify:update_finder arrived",
		"dpe://local.docs/quarterly-report.md  pages 5 → 6, last modified ",
		"Done in ",
	} {
		assert.Contains(t, out, want)
	}
	// The sections come in order.
	last := -1
	for _, h := range []string{"1. Started", "2. The catalog", "3. A document", "4. One page", "5. One element", "6. An error", "7. A document changes", "Done in "} {
		i := strings.Index(out, h)
		assert.Greater(t, i, last, "section %q out of order", h)
		last = i
	}
	assert.NotContains(t, out, "level=", "logs stay off standard output")
	assert.NotContains(t, stderr.String(), "level=ERROR")

	assertNothingLeft(t, bin, out)
	committed, err := os.ReadFile(filepath.Join("docs", "quarterly-report.md"))
	require.NoError(t, err)
	assert.NotContains(t, string(committed), "Appendix", "the demo edits a copy, never the committed file")
}

// TestQuickstartInterrupted sends SIGINT (Ctrl-C) as soon as the three roles
// are up: the quickstart stops cleanly, whether the signal caught it in the
// middle of its walk (exit 130) or just after it (exit 0), and leaves
// nothing behind.
func TestQuickstartInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to a process on Windows")
	}
	bin := build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var stderr bytes.Buffer
	cmd := command(ctx, bin)
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var out strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if strings.HasPrefix(line, "1. Started") {
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Log("the walk ended before the signal arrived")
	case errors.As(err, &exit) && exit.ExitCode() == 130:
		t.Log("interrupted during the walk")
		assert.Contains(t, stderr.String(), "quickstart: interrupted")
	default:
		t.Fatalf("want exit 0 or 130, got %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	assertNothingLeft(t, bin, out.String())
}

// TestQuickstartInspector runs `quickstart --inspector`: after its walk the
// demo keeps running and serves smcp-inspector's page, which shows the
// office's Computer; Ctrl-C then stops everything (exit 0).
func TestQuickstartInspector(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to a process on Windows")
	}
	bin := build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var stderr bytes.Buffer
	cmd := command(ctx, bin, "--inspector")
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var out strings.Builder
	sc := bufio.NewScanner(pipe)
	pageLine := regexp.MustCompile(`page: (http://127\.0\.0\.1:\d+/)`)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if m := pageLine.FindStringSubmatch(line); m != nil {
			office := getJSON(t, m[1]+"api/office")
			assert.Contains(t, office["computers"], "quickstart-computer")
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		}
	}
	require.NoError(t, cmd.Wait(), "stdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
	assert.Contains(t, out.String(), "8. smcp-inspector")
	assertNothingLeft(t, bin, out.String())
}

func getJSON(t *testing.T, u string) map[string]any {
	t.Helper()
	res, err := http.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var v map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&v))
	return v
}

// assertNothingLeft checks, after the quickstart exited, that its document
// server process is gone, that no process runs its binary any more and that
// the temporary copy of the documents was removed.
func assertNothingLeft(t *testing.T, bin, out string) {
	t.Helper()
	m := pidLine.FindStringSubmatch(out)
	require.NotNil(t, m, "no document server pid in the output:\n%s", out)
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	if runtime.GOOS == "linux" {
		assert.Empty(t, processesRunning(t, bin), "processes of the quickstart's binary (the document server was pid %d) survived it", pid)
	} else if p, err := os.FindProcess(pid); err == nil {
		assert.Error(t, p.Signal(syscall.Signal(0)), "the document server (pid %d) survived", pid)
	}
	m = docsLine.FindStringSubmatch(out)
	require.NotNil(t, m, "no documents folder in the output:\n%s", out)
	assert.NoDirExists(t, m[1], "the temporary copy of the documents is removed")
}

// processesRunning lists the live processes whose executable is bin
// (a zombie has no executable, so it does not count).
func processesRunning(t *testing.T, bin string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil {
			continue // gone meanwhile, a zombie, or not ours to read
		}
		if strings.TrimSuffix(exe, " (deleted)") == bin {
			pids = append(pids, pid)
		}
	}
	return pids
}
