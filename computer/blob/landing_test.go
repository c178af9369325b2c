package blob_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func openLanding(t *testing.T, opts ...blob.LandingOption) (*blob.Landing, string) {
	t.Helper()
	dir := t.TempDir()
	l, err := blob.OpenLanding(dir, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l, dir
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// firstChunk declares data and sends its first n bytes.
func firstChunk(data []byte, n int, hint string) protocol.PutBlobReq {
	return protocol.PutBlobReq{ReqID: "r0", TotalSize: len(data), Sha256: hexSHA(data), NameHint: hint, Blob: b64(data[:n]), Eof: n == len(data)}
}

func chunk(id string, data []byte, from, to int) protocol.PutBlobReq {
	return protocol.PutBlobReq{ReqID: "r", UploadID: id, ChunkOffset: from, Blob: b64(data[from:to]), Eof: to == len(data)}
}

// upload sends data in chunks of n bytes and returns the last answer.
func upload(t *testing.T, l *blob.Landing, office string, data []byte, n int, hint string) protocol.PutBlobRet {
	t.Helper()
	first := min(n, len(data))
	ret, err := l.Put(office, firstChunk(data, first, hint))
	require.NoError(t, err)
	for off := first; off < len(data); off += n {
		ret, err = l.Put(office, chunk(ret.UploadID, data, off, min(off+n, len(data))))
		require.NoError(t, err)
	}
	return ret
}

// regularFiles lists the regular files under dir, relative.
func regularFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

// Without a landing root every upload is refused as the reference does.
func TestNoLandingRootIsForbidden(t *testing.T) {
	var l *blob.Landing
	_, err := l.Put("o", firstChunk([]byte("hi"), 2, ""))
	perr := requireRefusal(t, err, protocol.CodeBlobWriteFailed, "forbidden")
	b, _ := json.Marshal(perr.In(protocol.Gen04))
	assert.Equal(t, `{"code":4019,"message":"landing root not configured","details":{"reason":"forbidden"}}`, string(b))
	assert.NoError(t, l.Close())
}

// An upload in chunks lands under the root with its name hint, the last
// answer naming the file, its size and its sha256; nothing else is left.
func TestUploadLands(t *testing.T) {
	l, dir := openLanding(t)
	data := randomBytes(t, 700<<10)
	ret := upload(t, l, "o", data, 256<<10, "report.pdf")
	require.NotNil(t, ret.TotalSize)
	assert.Equal(t, len(data), *ret.TotalSize)
	assert.Equal(t, hexSHA(data), ret.Sha256)
	assert.Equal(t, "r", ret.ReqID)
	assert.Equal(t, 512<<10, ret.ChunkOffset)
	assert.Equal(t, dir, filepath.Dir(ret.LandingPath))
	assert.Equal(t, ret.UploadID+"_report.pdf", filepath.Base(ret.LandingPath))
	got, err := os.ReadFile(ret.LandingPath)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Equal(t, []string{filepath.Base(ret.LandingPath)}, regularFiles(t, dir))
	assert.Equal(t, 0, l.InFlight())

	// A one-chunk upload, no hint: the file is named by the upload id.
	ret = upload(t, l, "o", []byte("x"), 10, "")
	assert.Equal(t, ret.UploadID, filepath.Base(ret.LandingPath))
	assert.Len(t, ret.UploadID, 32)
}

// Name hints never lead outside the root, whatever they hold, and a
// symlink in the root or as the part directory leads nowhere either.
func TestUploadNamesAreConfined(t *testing.T) {
	for hint, want := range map[string]string{
		"../../etc/passwd":       "etc_passwd",
		"/etc/passwd":            "etc_passwd",
		"..":                     "",
		"../..":                  "",
		`a\..\..\b`:              "a_.._.._b",
		"x\x00y":                 "x_y",
		"  .hidden  ":            "hidden",
		"日本語.txt":                "txt",
		strings.Repeat("a", 100): strings.Repeat("a", 64),
	} {
		assert.Equal(t, want, blob.SanitizeName(hint), "%q", hint)
	}

	outside := t.TempDir()
	l, dir := openLanding(t)
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "evil")))
	for _, hint := range []string{"../../etc/passwd", "evil", "evil/x", "..", "/tmp/x"} {
		ret := upload(t, l, "o", []byte("payload"), 100, hint)
		rel, err := filepath.Rel(dir, ret.LandingPath)
		require.NoError(t, err)
		assert.False(t, strings.Contains(rel, string(filepath.Separator)), "%q landed at %s", hint, rel)
		fi, err := os.Lstat(ret.LandingPath)
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular())
	}
	assert.Empty(t, regularFiles(t, outside))

	// The part directory replaced by a symlink to elsewhere: refused, and
	// nothing written there.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, blob.PartDir)))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, blob.PartDir)))
	_, err := l.Put("o", firstChunk([]byte("payload"), 7, "x"))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "forbidden")
	assert.Empty(t, regularFiles(t, outside))
}

// A declaration that lies about the size: more bytes than declared drop
// the upload; an eof short of it is refused and the upload goes on.
func TestDeclaredSizeThatLies(t *testing.T) {
	l, dir := openLanding(t)
	data := randomBytes(t, 20)

	// Declares 10 bytes, sends 20.
	req := protocol.PutBlobReq{TotalSize: 10, Sha256: hexSHA(data), Blob: b64(data), Eof: true}
	_, err := l.Put("o", req)
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "range")
	assert.Equal(t, 0, l.InFlight())

	// Declares 20, sends 5, then 20 more.
	ret, err := l.Put("o", firstChunk(data, 5, ""))
	require.NoError(t, err)
	_, err = l.Put("o", protocol.PutBlobReq{UploadID: ret.UploadID, ChunkOffset: 5, Blob: b64(append(data[5:], data...)), Eof: true})
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "range")
	_, err = l.Put("o", chunk(ret.UploadID, data, 5, 20))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_upload")

	// Declares 20, says eof after 10: refused, then completed.
	ret, err = l.Put("o", firstChunk(data, 5, ""))
	require.NoError(t, err)
	_, err = l.Put("o", protocol.PutBlobReq{UploadID: ret.UploadID, ChunkOffset: 5, Blob: b64(data[5:10]), Eof: true})
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "range")
	ret, err = l.Put("o", chunk(ret.UploadID, data, 5, 20))
	require.NoError(t, err)
	got, err := os.ReadFile(ret.LandingPath)
	require.NoError(t, err)
	assert.Equal(t, data, got)

	// The bytes are not the declared ones: integrity, nothing lands.
	before := regularFiles(t, dir)
	other := randomBytes(t, 20)
	req = firstChunk(data, 20, "")
	req.Blob = b64(other)
	_, err = l.Put("o", req)
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "integrity")
	assert.Equal(t, before, regularFiles(t, dir))
}

// Chunks must come in order: an out-of-order, overlapping or repeated chunk
// is refused and leaves the upload where it was.
func TestOutOfOrderAndOverlappingChunks(t *testing.T) {
	l, _ := openLanding(t)
	data := randomBytes(t, 30)
	ret, err := l.Put("o", firstChunk(data, 10, ""))
	require.NoError(t, err)
	id := ret.UploadID

	for _, from := range []int{20, 5, 0, 11} {
		_, err = l.Put("o", chunk(id, data, from, min(from+10, 30)))
		perr := requireRefusal(t, err, protocol.CodeBlobWriteFailed, "range")
		assert.Equal(t, id, perr.Details["upload_id"])
	}
	_, err = l.Put("o", chunk(id, data, 10, 20))
	require.NoError(t, err)
	_, err = l.Put("o", chunk(id, data, 10, 20))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "range")
	ret, err = l.Put("o", chunk(id, data, 20, 30))
	require.NoError(t, err)
	got, err := os.ReadFile(ret.LandingPath)
	require.NoError(t, err)
	assert.Equal(t, data, got)
}

// Declarations: checked on the first chunk, refused on the others; an
// upload is continued only by the office that started it.
func TestDeclarationsAndOffices(t *testing.T) {
	l, _ := openLanding(t, blob.WithUploadMaxBytes(100))
	data := randomBytes(t, 50)
	for _, req := range []protocol.PutBlobReq{
		{TotalSize: 0, Sha256: hexSHA(data), Blob: b64(data)},
		{TotalSize: 50, Sha256: "zz", Blob: b64(data)},
		{TotalSize: 50, Sha256: "", Blob: b64(data)},
		{TotalSize: 50, Sha256: hexSHA(data) + "0", Blob: b64(data)},
	} {
		_, err := l.Put("o", req)
		requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_declaration")
	}
	_, err := l.Put("o", protocol.PutBlobReq{TotalSize: 101, Sha256: hexSHA(data), Blob: b64(data)})
	perr := requireRefusal(t, err, protocol.CodeBlobWriteFailed, "too_large")
	assert.Equal(t, 101, perr.Details["total_size"])

	ret, err := l.Put("o", firstChunk(data, 10, ""))
	require.NoError(t, err)
	again := chunk(ret.UploadID, data, 10, 50)
	again.TotalSize = 50
	_, err = l.Put("o", again)
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_declaration")
	_, err = l.Put("other-office", chunk(ret.UploadID, data, 10, 50))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_upload")
	_, err = l.Put("o", chunk("0123456789abcdef0123456789abcdef", data, 10, 50))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_upload")
	bad := chunk(ret.UploadID, data, 10, 50)
	bad.Blob = "not base64!"
	_, err = l.Put("o", bad)
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_declaration")
	_, err = l.Put("o", chunk(ret.UploadID, data, 10, 50))
	require.NoError(t, err)
}

// Uploads in flight are bounded in number and in declared bytes.
func TestConcurrentUploadsAreBounded(t *testing.T) {
	l, _ := openLanding(t, blob.WithMaxUploads(2), blob.WithUploadsBytes(1000))
	data := randomBytes(t, 400)
	a, err := l.Put("o", firstChunk(data, 1, ""))
	require.NoError(t, err)
	_, err = l.Put("o", firstChunk(data, 1, ""))
	require.NoError(t, err)
	_, err = l.Put("o", firstChunk(data, 1, ""))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "busy")

	// One finishes: room for one more, but not for more bytes than the
	// bound.
	_, err = l.Put("o", chunk(a.UploadID, data, 1, 400))
	require.NoError(t, err)
	_, err = l.Put("o", firstChunk(randomBytes(t, 601), 1, ""))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "busy")
	_, err = l.Put("o", firstChunk(randomBytes(t, 600), 1, ""))
	require.NoError(t, err)
}

// An upload that never finishes is dropped after its idle lifetime, by the
// next call or by the Landing's own goroutine, and its part file goes.
func TestAbandonedUploads(t *testing.T) {
	clk := newClock()
	l, dir := openLanding(t, blob.WithLandingClock(clk.now), blob.WithUploadIdle(time.Minute))
	data := randomBytes(t, 100)
	ret, err := l.Put("o", firstChunk(data, 10, ""))
	require.NoError(t, err)
	require.Len(t, regularFiles(t, dir), 1, "its part file")
	clk.advance(time.Minute)
	_, err = l.Put("o", chunk(ret.UploadID, data, 10, 20))
	require.NoError(t, err, "idle for exactly its lifetime: still there")
	clk.advance(time.Minute + time.Nanosecond)
	_, err = l.Put("o", chunk(ret.UploadID, data, 20, 30))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_upload")
	assert.Empty(t, regularFiles(t, dir))

	// The goroutine looks every second when the lifetime is a second.
	l, dir = openLanding(t, blob.WithLandingClock(clk.now), blob.WithUploadIdle(time.Second))
	_, err = l.Put("o", firstChunk(data, 10, ""))
	require.NoError(t, err)
	clk.advance(time.Hour)
	require.Eventually(t, func() bool { return l.InFlight() == 0 }, time.Minute, 20*time.Millisecond, "the janitor never ran")
	assert.Empty(t, regularFiles(t, dir))
}

// Close drops the uploads in flight; the next start removes what a crash
// left.
func TestLandingLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	l, err := blob.OpenLanding(dir)
	require.NoError(t, err)
	data := randomBytes(t, 100)
	ret, err := l.Put("o", firstChunk(data, 10, ""))
	require.NoError(t, err)
	done := upload(t, l, "o", data, 100, "kept")

	// A crash: a second process opens the same root.
	l2, err := blob.OpenLanding(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Base(done.LandingPath)}, regularFiles(t, dir), "landed files stay, parts go")
	_, err = l2.Put("o", chunk(ret.UploadID, data, 10, 100))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "invalid_upload")
	require.NoError(t, l2.Close())
	l.Close()

	l3, err := blob.OpenLanding(dir)
	require.NoError(t, err)
	_, err = l3.Put("o", firstChunk(data, 10, ""))
	require.NoError(t, err)
	require.NoError(t, l3.Close())
	assert.Equal(t, []string{filepath.Base(done.LandingPath)}, regularFiles(t, dir))
	_, err = l3.Put("o", firstChunk(data, 10, ""))
	requireRefusal(t, err, protocol.CodeBlobWriteFailed, "forbidden")

	_, err = blob.OpenLanding(filepath.Join(dir, "missing"))
	require.Error(t, err)
}
