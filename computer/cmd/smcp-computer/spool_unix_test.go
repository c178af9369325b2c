//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// callImage calls the image tool through srv (0.4: the Computer spools
// it) until the MCP server is up, and returns the image item.
func callImage(t *testing.T, srv *siotest.Server, size int) protocol.ContentBlock {
	t.Helper()
	var img protocol.ContentBlock
	require.Eventually(t, func() bool {
		vals := srv.Request(protocol.EventToolCall, map[string]any{"agent": "a", "req_id": "img", "computer": "pc", "tool_name": "image",
			"params": map[string]any{"size": size, "seed": 5}, "timeout": 120})
		require.Len(t, vals, 1)
		b, _ := json.Marshal(vals[0])
		var res protocol.CallToolResult
		require.NoError(t, json.Unmarshal(b, &res))
		if res.IsError != nil && *res.IsError || len(res.Content) < 2 {
			t.Logf("not yet: %.300s", b)
			return false
		}
		img = res.Content[1]
		return true
	}, 2*time.Minute, 100*time.Millisecond)
	return img
}

// spoolDirs lists the process directories under the spool base.
func spoolDirs(t *testing.T, base string) []string {
	t.Helper()
	names, err := os.ReadDir(base)
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join(base, n.Name()))
	}
	return out
}

func blobFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, e := range ents {
		fi, err := e.Info()
		require.NoError(t, err)
		if e.Name() != ".smcp-spool" {
			out[e.Name()] = fi.Size()
		}
	}
	return out
}

// A default smcp-computer takes a tool result's image larger than one MCP
// message may be (34 MiB, 45 MiB of base64: over the 32 MiB bound) into its
// spool; its spool is a directory of its own under $TMPDIR/smcp-spool-<uid>.
// A Computer killed with SIGKILL leaves its spool behind; the next one to
// start removes it, and leaves a live Computer's spool as it is; each
// removes its own at exit.
func TestSpoolOfAKilledComputerRemovedAtNextStart(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the children's spool base
	base := filepath.Join(tmp, "smcp-spool-"+strconv.Itoa(os.Getuid()))
	cfg := filepath.Join(t.TempDir(), "computer.json")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`{"name":"pics","type":"stdio","default_tool_meta":{"auto_apply":true},
	  "server_parameters":{"command":%q,"args":["-no-resources","-tools","image"]}}`, testmcp.Binary(t))), 0o600))
	start := func() (*siotest.Server, <-chan error, *syncBuffer, int) {
		srv := siotest.Start(t, "127.0.0.1:0", "")
		srv.Confirm.Store(true) // a 0.4 session: results are spooled
		cmd, exited, logs := runBinary(t, srv, cfg)
		return srv, exited, logs, cmd.Process.Pid
	}
	stop := func(pid int, sig syscall.Signal, exited <-chan error, logs *syncBuffer) {
		require.NoError(t, syscall.Kill(pid, sig))
		select {
		case <-exited:
		case <-time.After(time.Minute):
			t.Fatalf("signal %v did not end the Computer\n%s", sig, logs.String())
		}
	}

	// The live one, with a large image.
	srvA, exitedA, logsA, pidA := start()
	const large = 34 << 20
	img := callImage(t, srvA, large)
	sum := sha256.Sum256(testmcp.Bytes(large, 5))
	require.Equal(t, "", *img.Data, "%s", logsA.String())
	assert.EqualValues(t, large, img.Meta[blob.MetaTotalSize])
	assert.Equal(t, hex.EncodeToString(sum[:]), img.Meta[blob.MetaSHA256])
	dirs := spoolDirs(t, base)
	require.Len(t, dirs, 1)
	dirA := dirs[0]
	filesA := blobFiles(t, dirA)
	assert.Equal(t, map[string]int64{"1.blob": large}, filesA)

	// The one killed.
	srvB, exitedB, logsB, pidB := start()
	callImage(t, srvB, 1<<20)
	dirs = spoolDirs(t, base)
	require.Len(t, dirs, 2)
	dirB := dirs[0]
	if dirB == dirA {
		dirB = dirs[1]
	}
	assert.Len(t, blobFiles(t, dirB), 1)
	stop(pidB, syscall.SIGKILL, exitedB, logsB)
	_, err := os.Stat(dirB)
	require.NoError(t, err, "SIGKILL leaves the spool")

	// The next start removes it, not the live one's.
	_, exitedC, logsC, pidC := start()
	_, err = os.Stat(dirB)
	assert.True(t, os.IsNotExist(err), "the killed Computer's spool is removed at the next start")
	assert.Equal(t, filesA, blobFiles(t, dirA), "the live Computer's spool is untouched")
	assert.Len(t, spoolDirs(t, base), 2)

	stop(pidA, syscall.SIGTERM, exitedA, logsA)
	stop(pidC, syscall.SIGTERM, exitedC, logsC)
	assert.Empty(t, spoolDirs(t, base), "each removes its own at exit")
}
