package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// A Computer without the Finder (a reference 0.4 Computer declares no
// extension) shows as such in room, and finder, open, page and element
// through it fail with 4106 saying why (spec/generations.md, Extensions a
// Computer offers).
func TestComputerWithoutFinder(t *testing.T) {
	p := startPeer(t)
	p.World.Mu.Lock()
	beta := p.World.Computer("beta")
	beta.A2CVersion = "0.4.2"
	uri := "dpe://" + beta.Servers[0].Host + "/" + beta.Servers[0].Docs[0].Meta.DocRef
	p.World.Mu.Unlock()

	r := cli(t, p, nil, "room")
	requireOK(t, r)
	require.Contains(t, lines(r.out), "beta computer 0.4.2 no sid-1")
	require.Contains(t, lines(r.out), "alpha computer - yes sid-0")

	r = cli(t, p, nil, "finder", "beta")
	requireFail(t, r, 1, `error 4106: computer "beta" does not offer the Finder`)
	assert.Contains(t, r.err, "smcp-agent room shows which Computers offer it")
	for _, args := range [][]string{{"open", uri}, {"page", uri, "0"}, {"element", uri, "e1"}, {"complete", uri + "/pages/"}} {
		r = cli(t, p, nil, append(args, "--computer", "beta")...)
		requireFail(t, r, 1, `error 4106: computer "beta" does not offer the Finder`)
	}

	// alpha still serves its own documents.
	requireOK(t, cli(t, p, nil, "finder", "alpha"))
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		r := cli(t, nil, map[string]string{"SMCP_OFFICE": ""}, "completion", shell)
		requireOK(t, r)
		assert.Contains(t, r.out, "smcp-agent")
		assert.Contains(t, r.out, "complete --", "the script asks smcp-agent complete")
		for _, c := range commands() {
			assert.Contains(t, r.out, c.name)
		}
	}
	requireFail(t, cli(t, nil, nil, "completion", "fish"), 2, "want bash or zsh")
}

func TestProgressLine(t *testing.T) {
	total := 10.0
	assert.Equal(t, "[###.......] 3/10 page 3", progressLine(agent.Progress{Progress: 3, Total: &total, Message: "page 3"}, 10))
	assert.Equal(t, "[##########] 12/10", progressLine(agent.Progress{Progress: 12, Total: &total}, 10), "clamped")
	assert.Equal(t, "7 rows", progressLine(agent.Progress{Progress: 7, Message: "rows"}, 10))
	assert.False(t, isTerminal(&strings.Builder{}))
}

var _ = protocol.CodeNotSupported
