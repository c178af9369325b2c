package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The hostile side of the 0.4 capabilities (spec/capabilities.md, Blobs
// and Skills) across real peers: the a2c-smcp 0.4.2 and Rust 0.4.1 Agents
// (and the Go Agent where neither can say it) driving a Go Computer through
// smcp-server, and the Go Agent driving the reference Computers. Every case
// is answered with its code and reason, and where it is about resources the
// Computer's spool and landing root are measured on disk afterwards.

// hostileSpoolBytes bounds the hostile Computer's spool: the 300 KiB skill
// file fits, that file and a 200 KiB image together do not.
const hostileSpoolBytes = 400 << 10

// hostilePC is a Go Computer set up for the hostile cases, with its
// directories, which the test measures.
type hostilePC struct {
	*computer.Computer
	Name                       string
	Landing, SpoolDir, Outside string
	Logo                       []byte
}

// hostileComputer starts the Go Computer name in office of d over the caps
// server: its spool bounded by hostileSpoolBytes in a directory of the
// test's; its skill "review" holding assets/logo.png (300 KiB, through the
// spool), assets/big.bin (500 KiB, more than the whole spool), a
// .skillenv, a symlink "escape" to a file outside the skill and a symlink
// "notes.md" to the .skillenv. landing nil: no landing root; otherwise its
// options (the landing root is a directory of the test's).
func hostileComputer(t *testing.T, d *deployment, office, name string, landing []blob.LandingOption, opts ...computer.Option) *hostilePC {
	t.Helper()
	dir := t.TempDir()
	pc := &hostilePC{Name: name, SpoolDir: filepath.Join(dir, "spool"), Outside: filepath.Join(dir, "outside")}
	home := filepath.Join(dir, "home")
	skill := filepath.Join(home, "user", "review")
	require.NoError(t, os.MkdirAll(filepath.Join(skill, "assets"), 0o755))
	require.NoError(t, os.MkdirAll(pc.Outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\ndescription: Reviews code\n---\n# Review\n"), 0o644))
	pc.Logo = capsImageBytes(300 << 10)
	require.NoError(t, os.WriteFile(filepath.Join(skill, "assets", "logo.png"), pc.Logo, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(skill, "assets", "big.bin"), capsImageBytes(500<<10), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(skill, ".skillenv"), []byte("TOKEN=secret\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(pc.Outside, "secret.txt"), []byte("outside the skill\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(pc.Outside, "secret.txt"), filepath.Join(skill, "escape")))
	require.NoError(t, os.Symlink(".skillenv", filepath.Join(skill, "notes.md")))
	o := []computer.Option{computer.WithSkillHome(home), computer.WithSpoolDir(pc.SpoolDir),
		computer.WithSpoolOptions(blob.WithMaxBytes(hostileSpoolBytes))}
	if landing != nil {
		pc.Landing = filepath.Join(dir, "landing")
		require.NoError(t, os.MkdirAll(pc.Landing, 0o755))
		o = append(o, computer.WithLandingRoot(pc.Landing, landing...))
	}
	caps := reexec(t, "caps", "capsserver")
	caps["default_tool_meta"] = map[string]any{"auto_apply": true}
	pc.Computer = startComputerDialing(t, d, office, name, []mcpServer{caps}, append(o, opts...))
	require.Equal(t, protocol.Gen04, pc.Client().Generation())
	return pc
}

// diskUse is what dir holds: the bytes and names of its regular files
// (symlinks are not followed), relative to dir.
func diskUse(t *testing.T, dir string) (int64, []string) {
	t.Helper()
	var n int64
	var names []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			fi, err := e.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return n, names
}

// requireSpoolBounded checks the spool's directory on disk against its
// bound and the spool's own count.
func (pc *hostilePC) requireSpoolBounded(t *testing.T) {
	t.Helper()
	n, names := diskUse(t, pc.SpoolDir)
	assert.LessOrEqual(t, n, int64(hostileSpoolBytes+1<<10), "spool on disk: %v", names) // + its marker file
	assert.LessOrEqual(t, pc.Spool().Bytes(), int64(hostileSpoolBytes))
}

// parts are the part files of the uploads in flight in a landing root.
func parts(t *testing.T, landing string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(landing, blob.PartDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// refusal is a refused step's code, reason and message as the reference
// Agent's driver reports them: the ErrorPayload (Python's protocol errors,
// and raw_call's answer), the reason of a Python BlobUploadError (4019), or
// the Rust SDK's text ("[code] message (reason: r)", "blob write failed
// (reason: r): message").
type refusal struct {
	Code            int
	Reason, Message string
}

var (
	rustProtocolErr = regexp.MustCompile(`\[(\d+)\] (.*?)(?: \(reason: (\w+)\))?$`)
	rustUploadErr   = regexp.MustCompile(`blob write failed \(reason: (\w+)\): (.*)$`)
)

func refusalOf(t *testing.T, step string, m map[string]any) refusal {
	t.Helper()
	require.NotEqual(t, true, m["hung"], "%s: %v", step, m)
	payload, _ := m["payload"].(map[string]any)
	if res, ok := m["result"].(map[string]any); ok && m["ok"] == true && res["code"] != nil {
		payload = res // raw_call: the ack as it came
	}
	if payload != nil {
		details, _ := payload["details"].(map[string]any)
		code, _ := payload["code"].(float64)
		reason, _ := details["reason"].(string)
		msg, _ := payload["message"].(string)
		return refusal{int(code), reason, msg}
	}
	require.Equal(t, false, m["ok"], "%s: not refused: %v", step, m)
	text := fmt.Sprint(m["error"])
	if r, ok := m["reason"].(string); ok && m["error_type"] == "BlobUploadError" {
		return refusal{int(protocol.CodeBlobWriteFailed), r, text}
	}
	if g := rustUploadErr.FindStringSubmatch(text); g != nil {
		return refusal{int(protocol.CodeBlobWriteFailed), g[1], g[2]}
	}
	g := rustProtocolErr.FindStringSubmatch(text)
	require.NotNil(t, g, "%s: no code in %v", step, m)
	code, _ := strconv.Atoi(g[1])
	return refusal{code, g[3], g[2]}
}

// rawPut sends one client:put_blob chunk through the Python driver's
// raw_call (the SDK's own put_blob cannot lie) and returns the ack.
func rawPut(t *testing.T, a *refAgent, pc string, chunk map[string]any) map[string]any {
	t.Helper()
	data := map[string]any{"agent": a.Name, "req_id": fmt.Sprintf("hostile-%d", reqSeq.Add(1)), "computer": pc, "chunk_offset": 0, "eof": false}
	for k, v := range chunk {
		data[k] = v
	}
	return a.do(t, map[string]any{"op": "raw_call", "event": protocol.EventPutBlob, "data": data})
}

var reqSeq atomic.Int64

func sumHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestHostileRefAgentsGoComputer: the reference Agents as hostile clients
// of a Go Computer through smcp-server. Both SDKs: symlinks out of a skill
// and to its .skillenv, a handle of another office's Computer, a spool
// filled to its bound, an upload to a Computer without a landing root. The
// Python Agent also sends client:put_blob chunks of its own (raw_call): a
// declared size shorter and longer than what comes, a sha256 that lies,
// out-of-order and overlapping chunks, a name that tries to leave the
// landing root, a symlink planted as the part directory, and too many
// uploads at once (uploads that never finish: TestHostileUploadNeverFinishes).
func TestHostileRefAgentsGoComputer(t *testing.T) {
	for _, sdk := range []refSDK{refRust04, refPy04} {
		t.Run(sdk.Lang, func(t *testing.T) { hostileRefAgent(t, sdk) })
	}
}

func hostileRefAgent(t *testing.T, sdk refSDK) {
	d := startServer(t)
	pc := hostileComputer(t, d, "hostile", "go-pc", []blob.LandingOption{blob.WithMaxUploads(2)})
	bare := hostileComputer(t, d, "hostile", "go-bare", nil)
	elsewhere := hostileComputer(t, d, "elsewhere", "go-elsewhere", nil)
	a := startRefAgent(t, sdk, d.URL, d.APIKey, "hostile", "ref-agent", "SMCP_TIMEOUT=60")
	a.ok(t, map[string]any{"op": "join"})
	expect := func(step string, m map[string]any, code protocol.Code, reason, message string) {
		t.Helper()
		r := refusalOf(t, step, m)
		assert.Equal(t, refusal{int(code), reason, message}, r, "%s: %v", step, m)
		t.Logf("answer | %s | %s | %d %s %q", step, sdk, r.Code, r.Reason, r.Message)
	}

	// Symlinks in skill paths.
	expect("symlink out of the skill", a.do(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "review", "rel_path": "escape"}),
		protocol.CodeSkillResourceNotAccessible, "traversal", "Skill resource not accessible")
	expect("symlink to .skillenv", a.do(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "review", "rel_path": "notes.md"}),
		protocol.CodeSkillResourceNotAccessible, "forbidden", "Skill resource not accessible")

	// A spool filled to its bound: the skill file's handle is evicted by
	// the next blob (gone), a file larger than the whole spool is refused
	// (4017 too_large), a tool result whose item is larger than it fails
	// with an error result naming --spool-max-bytes (the item streams into
	// the spool as it arrives: spec/capabilities.md, Large items).
	logo := a.ok(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "review", "rel_path": "assets/logo.png"}).(map[string]any)
	handle, _ := logo["blob_handle"].(string)
	require.NotEmpty(t, handle, "%v", logo)
	require.Equal(t, sumHex(pc.Logo), logo["sha256"], "%v", logo)
	pc.requireSpoolBounded(t)
	img := capsImageBytes(200 << 10)
	res := a.ok(t, map[string]any{"op": "tool_call", "computer": "go-pc", "tool": "caps__image", "params": map[string]any{"size": len(img)}}).(map[string]any)
	require.Equal(t, b64(img), res["content"].([]any)[1].(map[string]any)["data"], "the image drained")
	pc.requireSpoolBounded(t)
	expect("evicted handle", a.do(t, map[string]any{"op": "get_blob", "computer": "go-pc", "blob_handle": handle}),
		protocol.CodeBlobNotAccessible, "gone", "Blob not accessible")
	expect("file above the spool", a.do(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "review", "rel_path": "assets/big.bin"}),
		protocol.CodeSkillResourceNotAccessible, "too_large", "Skill resource not accessible")
	huge := capsImageBytes(hostileSpoolBytes + 100<<10)
	res = a.ok(t, map[string]any{"op": "tool_call", "computer": "go-pc", "tool": "caps__image", "params": map[string]any{"size": len(huge)}}).(map[string]any)
	require.Equal(t, true, res["isError"], "an item the spool cannot take, streamed in, fails the call: %v", res)
	text, _ := res["content"].([]any)[0].(map[string]any)["text"].(string)
	require.Contains(t, text, "--spool-max-bytes", "the error names the flag that raises the bound")
	t.Logf("answer | tool result's item above the spool | %s | %s", sdk, text)
	pc.requireSpoolBounded(t)

	// A handle from another office: that office's Computer never minted
	// it (gone), and the Computer that did is not reachable from there.
	other := a.ok(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "review", "rel_path": "assets/logo.png"}).(map[string]any)
	otherHandle := other["blob_handle"].(string)
	m := a.do(t, map[string]any{"op": "get_blob", "computer": elsewhere.Name, "blob_handle": otherHandle})
	r := refusalOf(t, "another office's Computer", m)
	assert.Equal(t, int(protocol.CodeNotFound), r.Code, "%v", m)
	t.Logf("answer | another office's Computer | %s | %v", sdk, m["error"])
	if sdk.Lang == "python" {
		a.ok(t, map[string]any{"op": "leave"})
		a.ok(t, map[string]any{"op": "join", "office": "elsewhere"})
		expect("a handle of another office", a.do(t, map[string]any{"op": "get_blob", "computer": elsewhere.Name, "blob_handle": otherHandle}),
			protocol.CodeBlobNotAccessible, "gone", "Blob not accessible")
		expect("the minting Computer from another office", a.do(t, map[string]any{"op": "get_blob", "computer": "go-pc", "blob_handle": otherHandle}),
			protocol.CodeNotFound, "", "Computer with name 'go-pc' not found")
		a.ok(t, map[string]any{"op": "leave", "office": "elsewhere"})
		a.ok(t, map[string]any{"op": "join"})
	}

	// An upload to a Computer without a landing root.
	expect("no landing root", a.do(t, map[string]any{"op": "put_blob", "computer": bare.Name, "text": "nowhere"}),
		protocol.CodeBlobWriteFailed, "forbidden", "landing root not configured")

	if sdk.Lang != "python" {
		return
	}
	hostileChunks(t, a, pc, expect)
}

// hostileChunks are the Python Agent's chunks of its own to pc (its
// landing root takes two uploads at once).
func hostileChunks(t *testing.T, a *refAgent, pc *hostilePC, expect func(string, map[string]any, protocol.Code, string, string)) {
	body := capsImageBytes(30)
	okID := func(step string, m map[string]any) string {
		t.Helper()
		require.Equal(t, true, m["ok"], "%s: %v", step, m)
		res := m["result"].(map[string]any)
		require.Nil(t, res["code"], "%s: %v", step, m)
		id, _ := res["upload_id"].(string)
		require.NotEmpty(t, id, "%s: %v", step, m)
		return id
	}
	noneLanded := func(step string) {
		t.Helper()
		_, names := diskUse(t, pc.Landing)
		assert.Empty(t, names, "%s: the landing root holds %v", step, names)
	}

	// A declared size shorter than what comes: refused, the upload dropped.
	expect("declared size too short", rawPut(t, a, pc.Name, map[string]any{"total_size": 10, "sha256": sumHex(body), "blob": b64(body), "eof": true}),
		protocol.CodeBlobWriteFailed, "range", "received bytes exceed the declared total_size")
	noneLanded("declared size too short")
	// Longer than what comes: the short last chunk is refused, the upload
	// kept as it was; a second lie overruns it and drops it.
	id := okID("a long declaration", rawPut(t, a, pc.Name, map[string]any{"total_size": 60, "sha256": sumHex(body), "blob": b64(body[:10])}))
	expect("declared size too long", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 10, "blob": b64(body[10:]), "eof": true}),
		protocol.CodeBlobWriteFailed, "range", "final chunk does not complete the declared total_size")
	expect("overrun of the declaration", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 10, "blob": b64(capsImageBytes(80))}),
		protocol.CodeBlobWriteFailed, "range", "received bytes exceed the declared total_size")
	expect("the dropped upload", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 10, "blob": b64(body[10:20])}),
		protocol.CodeBlobWriteFailed, "invalid_upload", "unknown or expired upload session")
	// A declaration above the upload cap is refused before a byte is kept.
	expect("above the upload cap", rawPut(t, a, pc.Name, map[string]any{"total_size": blob.DefaultUploadMaxBytes + 1, "sha256": sumHex(body), "blob": b64(body)}),
		protocol.CodeBlobWriteFailed, "too_large", "declared total_size exceeds the upload cap")
	assert.Empty(t, parts(t, pc.Landing), "part files left")
	// A sha256 that lies.
	expect("a lying sha256", rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex([]byte("other bytes")), "blob": b64(body), "eof": true}),
		protocol.CodeBlobWriteFailed, "integrity", "sha256 mismatch; upload discarded")
	noneLanded("a lying sha256")
	assert.Empty(t, parts(t, pc.Landing), "part files left")

	// Out-of-order and overlapping chunks are refused and leave the upload
	// as it was: the right chunk then completes it. The name cannot leave
	// the landing root.
	id = okID("first of three", rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex(body), "blob": b64(body[:10]), "name_hint": "../../outside/x.bin"}))
	expect("out of order", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 20, "blob": b64(body[20:])}),
		protocol.CodeBlobWriteFailed, "range", "chunk_offset does not match received bytes")
	expect("overlapping", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 5, "blob": b64(body[5:20])}),
		protocol.CodeBlobWriteFailed, "range", "chunk_offset does not match received bytes")
	expect("a declaration again", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 10, "blob": b64(body[10:20]), "total_size": 99}),
		protocol.CodeBlobWriteFailed, "invalid_declaration", "declaration fields must only appear on the first chunk")
	okID("second of three", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 10, "blob": b64(body[10:20])}))
	m := rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 20, "blob": b64(body[20:]), "eof": true})
	okID("last of three", m)
	landed := m["result"].(map[string]any)["landing_path"].(string)
	assert.Equal(t, filepath.Join(pc.Landing, id+"_outside_x.bin"), landed)
	b, err := os.ReadFile(landed)
	require.NoError(t, err)
	require.Equal(t, body, b)
	require.NoError(t, os.Remove(landed))
	_, names := diskUse(t, pc.Outside)
	assert.Equal(t, []string{"secret.txt"}, names, "nothing written outside")

	// A symlink planted as the part directory, leading outside: refused,
	// nothing written there.
	require.NoError(t, os.RemoveAll(filepath.Join(pc.Landing, blob.PartDir)))
	require.NoError(t, os.Symlink(pc.Outside, filepath.Join(pc.Landing, blob.PartDir)))
	expect("a symlinked part directory", rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex(body), "blob": b64(body), "eof": true}),
		protocol.CodeBlobWriteFailed, "forbidden", "landing root not writable")
	_, names = diskUse(t, pc.Outside)
	assert.Equal(t, []string{"secret.txt"}, names, "nothing written through the symlink")
	require.NoError(t, os.Remove(filepath.Join(pc.Landing, blob.PartDir)))

	// Too many uploads at once.
	first := okID("upload 1 of 2", rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex(body), "blob": b64(body[:10])}))
	okID("upload 2 of 2", rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex(body), "blob": b64(body[:10])}))
	expect("a third upload", rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex(body), "blob": b64(body[:10])}),
		protocol.CodeBlobWriteFailed, "busy", "too many concurrent uploads")
	assert.Len(t, parts(t, pc.Landing), 2)
	// One finishing gives its slot back.
	okID("upload 1 done", rawPut(t, a, pc.Name, map[string]any{"upload_id": first, "chunk_offset": 10, "blob": b64(body[10:]), "eof": true}))
	okID("a third upload, later", rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex(body), "blob": b64(body[:10])}))
	n, _ := diskUse(t, filepath.Join(pc.Landing, blob.PartDir))
	assert.Equal(t, int64(20), n, "two uploads of 10 bytes in flight")
}

// TestHostileUploadNeverFinishes: uploads the Python Agent starts and
// never finishes are dropped after the Go Computer's idle bound (a few
// seconds here), their part files removed and their slots given back: a
// later chunk of one is unknown (invalid_upload), a new upload is taken.
func TestHostileUploadNeverFinishes(t *testing.T) {
	d := startServer(t)
	pc := hostileComputer(t, d, "idle", "go-idle", []blob.LandingOption{blob.WithMaxUploads(2), blob.WithUploadIdle(3 * time.Second)})
	a := startRefAgent(t, refPy04, d.URL, d.APIKey, "idle", "ref-agent", "SMCP_TIMEOUT=60")
	a.ok(t, map[string]any{"op": "join"})
	body := capsImageBytes(24 << 10) // the driver reads lines of at most 64 KiB
	var ids []string
	for i := range 2 {
		m := rawPut(t, a, pc.Name, map[string]any{"total_size": len(body), "sha256": sumHex(body), "blob": b64(body[:12<<10])})
		require.Equal(t, true, m["ok"], "%v", m)
		id, _ := m["result"].(map[string]any)["upload_id"].(string)
		require.NotEmpty(t, id, "upload %d: %v", i, m)
		ids = append(ids, id)
	}
	// The wait is for the Computer's own goroutine to drop them: bounded
	// generously, polled.
	require.Eventually(t, func() bool { return len(parts(t, pc.Landing)) == 0 }, 2*time.Minute, 100*time.Millisecond,
		"the never-finished uploads' part files stay: %v", parts(t, pc.Landing))
	for _, id := range ids {
		r := refusalOf(t, "a chunk after the idle bound", rawPut(t, a, pc.Name, map[string]any{"upload_id": id, "chunk_offset": 12 << 10, "blob": b64(body[12<<10:]), "eof": true}))
		assert.Equal(t, refusal{int(protocol.CodeBlobWriteFailed), "invalid_upload", "unknown or expired upload session"}, r)
	}
	up := a.ok(t, map[string]any{"op": "put_blob", "computer": pc.Name, "data_b64": b64(body), "name_hint": "after.bin"}).(map[string]any)
	got, err := os.ReadFile(up["landing_path"].(string))
	require.NoError(t, err)
	require.Equal(t, body, got)
	n, names := diskUse(t, pc.Landing)
	assert.Equal(t, int64(len(body)), n, "the landing root holds only the finished upload: %v", names)
}

// gatedUpload is an upload whose second pass (PutBlob reads its reader
// once for the sha256, then again to send it) yields the first chunk and
// then waits for release, so that it stays in flight at the Computer; with
// lie set, the second pass yields other bytes than the first.
type gatedUpload struct {
	data    []byte
	pass    int
	off     int
	gate    bool
	lie     bool
	sent    chan struct{} // closed when the second pass waits after its first chunk
	release chan struct{}
	once    sync.Once
}

func (g *gatedUpload) Read(p []byte) (int, error) {
	if g.pass == 1 && g.gate && g.off >= agent.MaxBlobChunk {
		g.once.Do(func() { close(g.sent) })
		<-g.release
		return 0, errors.New("the upload was stopped")
	}
	if g.off >= len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.off:])
	if g.pass == 1 && g.lie {
		for i := range p[:n] {
			p[i] ^= 0xff
		}
	}
	g.off += n
	return n, nil
}

func (g *gatedUpload) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekStart {
		return 0, errors.New("only a rewind")
	}
	g.pass++
	g.off = 0
	return 0, nil
}

// startGated starts n uploads of 300 KiB from a to pc that stay in flight
// after their first chunk, and waits until they do; closing the returned
// channel ends them on the Agent's side.
func startGated(t *testing.T, ctx context.Context, a *agent.Client, pc string, n int) chan struct{} {
	t.Helper()
	release := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		wg.Wait()
	})
	for i := range n {
		g := &gatedUpload{data: capsImageBytes(300 << 10), gate: true, sent: make(chan struct{}), release: release}
		wg.Add(1)
		errs := make(chan error, 1)
		go func() {
			defer wg.Done()
			_, err := a.PutBlob(ctx, pc, g, fmt.Sprintf("gated-%d.bin", i), nil)
			errs <- err
		}()
		select {
		case <-g.sent:
		case err := <-errs:
			t.Fatalf("upload %d ended before its second chunk: %v", i, err)
		case <-ctx.Done():
			t.Fatalf("upload %d: %v", i, ctx.Err())
		}
	}
	return release
}

// requireCoded checks that err is a *protocol.Error of code with the
// reason (when not empty) and message.
func requireCoded(t *testing.T, step string, err error, code protocol.Code, reason, message string) {
	t.Helper()
	var perr *protocol.Error
	require.ErrorAs(t, err, &perr, step)
	assert.Equal(t, code, perr.Code, "%s: %v", step, perr)
	if reason != "" {
		assert.Equal(t, reason, perr.Details["reason"], "%s: %v", step, perr)
	}
	if message != "" {
		assert.Equal(t, message, perr.Message, "%s: %v", step, perr)
	}
}

// TestHostileGoAgentGoComputer: what neither reference Agent can say,
// from the Go Agent: uploads held in flight until the Computer is busy,
// and a lying reader (its bytes change between the pass that hashes them
// and the pass that sends them).
func TestHostileGoAgentGoComputer(t *testing.T) {
	d := startServer(t)
	pc := hostileComputer(t, d, "hostile", "go-pc", []blob.LandingOption{blob.WithMaxUploads(2)})
	a := dialAgent(t, d, "hostile", "go-agent", agent.WithTimeout(60*time.Second))
	ctx := testContext(t)

	_, err := a.PutBlob(ctx, pc.Name, &gatedUpload{data: capsImageBytes(300 << 10), lie: true}, "lie.bin", nil)
	requireCoded(t, "a lying reader", err, protocol.CodeBlobWriteFailed, "integrity", "sha256 mismatch; upload discarded")
	_, names := diskUse(t, pc.Landing)
	assert.Empty(t, names)

	release := startGated(t, ctx, a, pc.Name, 2)
	_, err = a.PutBlob(ctx, pc.Name, bytes.NewReader([]byte("one too many")), "third.bin", nil)
	requireCoded(t, "a third upload", err, protocol.CodeBlobWriteFailed, "busy", "too many concurrent uploads")
	n, _ := diskUse(t, filepath.Join(pc.Landing, blob.PartDir))
	assert.Equal(t, int64(2*agent.MaxBlobChunk), n, "two first chunks in flight")
	close(release)
}

// TestHostileGoAgentRefComputers: the Go Agent's hostile requests to the
// a2c-smcp 0.4.2 and Rust 0.4.1 Computers through smcp-server, and the
// references' refusals as the Go Agent reads them (*protocol.Error with
// their code and reason): symlinks in skill paths, a traversal, a handle
// of another office's Computer, a lying reader, a symlink planted as the
// part directory, and more uploads at once than the Computer takes.
func TestHostileGoAgentRefComputers(t *testing.T) {
	for _, sdk := range []refSDK{refRust04, refPy04} {
		t.Run(sdk.Lang, func(t *testing.T) {
			d := startServer(t)
			caps := reexec(t, "caps", "capsserver")
			rc := startRefComputer(t, sdk, d.URL, d.APIKey, "hostile", "ref-pc", withRefServers(caps))
			other := startRefComputer(t, sdk, d.URL, d.APIKey, "elsewhere", "ref-elsewhere", withRefServers(reexec(t, "caps", "capsserver")))
			a := dialAgent(t, d, "hostile", "go-agent", agent.WithTimeout(60*time.Second), agent.WithBlobDrain(0))
			ctx := testContext(t)
			outside := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside\n"), 0o644))
			skill := filepath.Join(rc.SkillHome, "user", refSkill)
			require.NoError(t, os.WriteFile(filepath.Join(skill, ".skillenv"), []byte("TOKEN=secret\n"), 0o600))
			require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(skill, "escape")))
			require.NoError(t, os.Symlink(".skillenv", filepath.Join(skill, "notes.md")))

			for _, c := range []struct{ step, rel, reason string }{
				{"a symlink out of the skill", "escape", "traversal"},
				{"a symlink to .skillenv", "notes.md", "forbidden"},
				{"a traversal", "../../etc/passwd", "traversal"},
			} {
				_, err := a.Skill(ctx, rc.Name, refSkill, c.rel)
				requireCoded(t, c.step, err, protocol.CodeSkillResourceNotAccessible, c.reason, "")
				t.Logf("%s %s: %v %v", sdk, c.step, err, protocol.AsError(err).Details)
			}

			// A handle of another office's Computer: the Go Agent of that
			// office asks its own Computer for it.
			res, err := a.CallTool(ctx, rc.Name, "caps__image", map[string]any{"size": 200 << 10}, 0)
			require.NoError(t, err)
			handle, _ := res.Content[1].Meta[agent.MetaBlobHandle].(string)
			require.NotEmpty(t, handle, "%+v", res.Content[1].Meta)
			b := dialAgent(t, d, "elsewhere", "go-agent-b", agent.WithTimeout(60*time.Second))
			_, err = b.GetBlob(ctx, other.Name, handle, 0, 0)
			requireCoded(t, "a handle of another office", err, protocol.CodeBlobNotAccessible, "gone", "Blob not accessible")
			t.Logf("%s a handle of another office: %v %v", sdk, err, protocol.AsError(err).Details)
			_, err = b.GetBlob(ctx, rc.Name, handle, 0, 0)
			requireCoded(t, "the minting Computer from another office", err, protocol.CodeNotFound, "", "")

			_, err = a.PutBlob(ctx, rc.Name, &gatedUpload{data: capsImageBytes(300 << 10), lie: true}, "lie.bin", nil)
			requireCoded(t, "a lying reader", err, protocol.CodeBlobWriteFailed, "integrity", "sha256 mismatch; upload discarded")
			_, names := diskUse(t, rc.LandingRoot)
			assert.Empty(t, names, "%s: after a lying upload", sdk)

			// A symlink planted as the part directory: the references
			// follow it, so an upload in flight is written outside the
			// landing root (the Go Computer refuses, 4019 forbidden: above).
			part := filepath.Join(rc.LandingRoot, blob.PartDir)
			require.NoError(t, os.RemoveAll(part))
			require.NoError(t, os.Symlink(outside, part))
			held := startGated(t, ctx, a, rc.Name, 1)
			_, names = diskUse(t, outside)
			require.Len(t, names, 2, "%s: the part file of the upload in flight", sdk)
			assert.Regexp(t, `^[0-9a-f]{32}\.part$`, names[0], "%s", sdk)
			t.Logf("%s a symlinked part directory: the part file written outside the landing root: %v", sdk, names)
			require.NoError(t, os.Remove(part))

			// The references take 4 uploads at once (one is in flight).
			release := startGated(t, ctx, a, rc.Name, blob.DefaultMaxUploads-1)
			_, err = a.PutBlob(ctx, rc.Name, bytes.NewReader([]byte("one too many")), "fifth.bin", nil)
			requireCoded(t, "a fifth upload", err, protocol.CodeBlobWriteFailed, "busy", "too many concurrent uploads")
			close(release)
			close(held)
		})
	}
}
