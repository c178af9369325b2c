package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// TestBashCompletion drives the script of smcp-agent completion bash in a
// real bash as bash's programmable completion does (COMP_WORDS split at
// ':' as COMP_WORDBREAKS has it, COMP_CWORD, COMP_LINE, COMP_POINT), with
// the real smcp-agent on PATH against the Go Server, Computer and
// smcp-docserver: the dpe:// URI being typed completes to hosts, documents
// and pages (spec/finder.md, Completion).
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		peerMissing(t, "bash is required: "+err.Error())
	}
	d, dir, scriptFile := completionWorld(t, "bash", "smcp-agent.bash")
	ctx := testContext(t)

	// complete runs the completion function for the line typed so far and
	// returns COMPREPLY, one value a line.
	complete := func(line string) []string {
		t.Helper()
		words := bashWords(line)
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, strconv.Quote(w))
		}
		prog := "source " + strconv.Quote(scriptFile) + "\n" +
			"COMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
			"COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n" +
			"COMP_LINE=" + strconv.Quote(line) + "\n" +
			"COMP_POINT=" + strconv.Itoa(len(line)) + "\n" +
			"_smcp_agent\n" +
			`printf '%s\n' "${COMPREPLY[@]}"` + "\n"
		cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", prog)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
			"SMCP_SERVER="+d.URL, "SMCP_API_KEY="+d.APIKey, "SMCP_AGENT_NAME=shell")
		out, err := cmd.Output()
		require.NoError(t, err, "bash: %s", out)
		var reply []string
		for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			if l != "" {
				reply = append(reply, l)
			}
		}
		return reply
	}

	assert.Contains(t, complete("smcp-agent com"), "complete")
	assert.Contains(t, complete("smcp-agent com"), "completion")
	assert.Equal(t, []string{"room"}, complete("smcp-agent --office o1 --timeout 5s ro"), "after the global flags")
	assert.Empty(t, complete("smcp-agent room ro"), "one command a line")

	// Bash replaces the word after the last ':', so the replies start after it.
	assert.Equal(t, []string{"//" + docsHost + "/"}, complete("smcp-agent --office o1 open dpe://qu"))

	got := complete("smcp-agent --office o1 open dpe://" + docsHost + "/s")
	assert.Equal(t, []string{"//" + docsHost + "/sales-2026-q3.csv", "//" + docsHost + "/service-agreement.pdf"}, got)

	doc := "quarterly-report.md"
	pages := complete("smcp-agent open --office o1 dpe://" + docsHost + "/" + doc + "/pages/")
	require.NotEmpty(t, pages)
	for i, p := range pages {
		assert.Equal(t, strings.TrimPrefix(dpe.PageURI(docsHost, doc, i).String(), "dpe:"), p)
	}

	assert.Empty(t, complete("smcp-agent --office o1 open https://example.com/"), "not a dpe:// URI")
	assert.Empty(t, complete("smcp-agent --office nowhere open dpe://"+docsHost+"/s"), "no Computer there: nothing, and no noise")
}

// completionWorld starts a Server and, in office o1, a Computer serving
// smcp-docserver's documents as docsHost; it builds smcp-agent and writes
// its completion script for shell as file, beside the binary. dir is the
// binary's directory, for PATH.
func completionWorld(t *testing.T, shell, file string) (d *deployment, dir, scriptFile string) {
	t.Helper()
	d = startServer(t)
	startComputer(t, d, "o1", "desk", []mcpServer{docServer(t, "docs", copyDocs(t), docsHost)})
	bin := buildAgentCLI(t)
	dir = filepath.Dir(bin)
	script, err := exec.Command(bin, "completion", shell).Output()
	require.NoError(t, err)
	scriptFile = filepath.Join(dir, file)
	require.NoError(t, os.WriteFile(scriptFile, script, 0o644))
	return d, dir, scriptFile
}

// TestZshCompletion loads the script of smcp-agent completion zsh into a
// real interactive zsh with compinit (driven through zsh's own zpty module
// by testdata/zsh_complete.zsh), types each line and a TAB, and reads the
// matches zsh's completion system offered and the line it left: the real
// smcp-agent on PATH against the Go Server, Computer and smcp-docserver
// completes subcommands and the dpe:// URI being typed (spec/finder.md,
// Completion).
func TestZshCompletion(t *testing.T) {
	zsh := os.Getenv("SMCP_INTEROP_ZSH")
	if zsh == "" {
		zsh = "zsh"
	}
	zsh, err := exec.LookPath(zsh)
	if err != nil {
		peerMissing(t, "zsh is required for the zsh completion test: "+err.Error())
	}
	driver, err := filepath.Abs(filepath.Join("testdata", "zsh_complete.zsh"))
	require.NoError(t, err)
	d, dir, scriptFile := completionWorld(t, "zsh", "_smcp_agent.zsh")
	ctx := testContext(t)

	// complete types line and a TAB, and returns the matches offered and
	// the line as completion left it.
	complete := func(line string) (matches []string, after string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, zsh, "-f", driver, scriptFile, line)
		cmd.Env = append(os.Environ(), "HOME="+dir, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
			"SMCP_SERVER="+d.URL, "SMCP_API_KEY="+d.APIKey, "SMCP_AGENT_NAME=shell")
		out, err := cmd.Output()
		require.NoError(t, err, "zsh: %s", out)
		ended := false
		for _, l := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(l, "m:"):
				matches = append(matches, strings.TrimPrefix(l, "m:"))
			case strings.HasPrefix(l, "b:"):
				after = strings.TrimPrefix(l, "b:")
			case l == "end":
				ended = true
			}
		}
		require.True(t, ended, "the driver saw the completion end: %q", out)
		return matches, after
	}

	m, after := complete("smcp-agent com")
	assert.Equal(t, []string{"complete", "completion"}, m)
	assert.Equal(t, "smcp-agent complet", after, "the common prefix is inserted")
	m, after = complete("smcp-agent --office o1 --timeout 5s ro")
	assert.Equal(t, []string{"room"}, m, "after the global flags")
	assert.Equal(t, "smcp-agent --office o1 --timeout 5s room ", after)
	m, _ = complete("smcp-agent room ro")
	assert.Empty(t, m, "one command a line")

	m, after = complete("smcp-agent --office o1 open dpe://qu")
	assert.Equal(t, []string{"dpe://" + docsHost + "/"}, m)
	assert.Equal(t, "smcp-agent --office o1 open dpe://"+docsHost+"/", after, "one match is inserted, with no space after it")

	m, _ = complete("smcp-agent --office o1 open dpe://" + docsHost + "/s")
	assert.Equal(t, []string{"dpe://" + docsHost + "/sales-2026-q3.csv", "dpe://" + docsHost + "/service-agreement.pdf"}, m)

	doc := "quarterly-report.md"
	pages, _ := complete("smcp-agent open --office o1 dpe://" + docsHost + "/" + doc + "/pages/")
	require.NotEmpty(t, pages)
	for i, p := range pages {
		assert.Equal(t, dpe.PageURI(docsHost, doc, i).String(), p)
	}

	m, after = complete("smcp-agent --office o1 open https://example.com/")
	assert.Empty(t, m, "not a dpe:// URI")
	assert.Equal(t, "smcp-agent --office o1 open https://example.com/", after)
	m, _ = complete("smcp-agent --office nowhere open dpe://" + docsHost + "/s")
	assert.Empty(t, m, "no Computer there: nothing, and no noise")
}

// bashWords splits a command line as bash's completion does with the
// default COMP_WORDBREAKS: at blanks, and ':' is a word of its own; a
// line ending in a blank has an empty last word.
func bashWords(line string) []string {
	var words []string
	for _, f := range strings.Fields(line) {
		parts := strings.Split(f, ":")
		for i, p := range parts {
			if i > 0 {
				words = append(words, ":")
			}
			if p != "" || i == len(parts)-1 && i == 0 {
				words = append(words, p)
			}
		}
		if strings.HasSuffix(f, ":") {
			words = append(words, "")
		}
	}
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	return words
}
