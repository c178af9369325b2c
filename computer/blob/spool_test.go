package blob_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// requireRefusal checks that err is a *protocol.Error of code with
// details.reason.
func requireRefusal(t *testing.T, err error, code protocol.Code, reason string) *protocol.Error {
	t.Helper()
	var perr *protocol.Error
	require.True(t, errors.As(err, &perr), "want a *protocol.Error, got %v", err)
	require.Equal(t, code, perr.Code, "%v", perr)
	require.Equal(t, reason, perr.Details["reason"], "%v", perr)
	return perr
}

func openSpool(t *testing.T, opts ...blob.SpoolOption) *blob.Spool {
	t.Helper()
	s, err := blob.OpenSpool(filepath.Join(t.TempDir(), "spool"), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// drain reads a handle chunk by chunk as an Agent does.
func drain(t *testing.T, s *blob.Spool, office, handle string, max int) ([]byte, protocol.GetBlobRet) {
	t.Helper()
	var out []byte
	var last protocol.GetBlobRet
	for i := 0; ; i++ {
		require.Less(t, i, 10000, "no eof")
		ret, err := s.Read(office, protocol.GetBlobReq{BlobHandle: handle, ChunkOffset: len(out), MaxChunkBytes: max, ReqID: "r"})
		require.NoError(t, err)
		chunk, err := base64.StdEncoding.DecodeString(ret.Blob)
		require.NoError(t, err)
		require.LessOrEqual(t, len(chunk), blob.MaxChunkBytes)
		if max > 0 {
			require.LessOrEqual(t, len(chunk), max)
		}
		require.Equal(t, len(out), ret.ChunkOffset)
		out = append(out, chunk...)
		last = ret
		if ret.Eof {
			require.Equal(t, ret.TotalSize, len(out))
			return out, last
		}
		require.NotEmpty(t, chunk, "a chunk before eof is never empty")
	}
}

func filesIn(t *testing.T, dir string) (n int, bytes int64) {
	t.Helper()
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && fi.Name() != ".smcp-spool" {
			n++
			bytes += fi.Size()
		}
		return nil
	})
	require.NoError(t, err)
	return n, bytes
}

func ptr[T any](v T) *T { return &v }

// A tool result's binary items above the budget leave for the spool with
// the sideband of the references; those within it, text and invalid
// base64 stay as they were; each handle drains to the very bytes.
func TestMintMovesBinaryItemsAboveTheBudget(t *testing.T) {
	s := openSpool(t)
	img := randomBytes(t, 600<<10) // three chunks of 256 KiB at most
	res := randomBytes(t, 40<<10)
	small := randomBytes(t, 32<<10) // exactly the budget: inline
	r := protocol.CallToolResult{Content: []protocol.ContentBlock{
		{Type: protocol.ContentBlockTypeImage, Data: ptr(base64.StdEncoding.EncodeToString(img)), MimeType: ptr("image/png"), Meta: map[string]any{"keep": "me"}},
		{Type: protocol.ContentBlockTypeResource, Resource: &protocol.ResourceContents{URI: "file:///r.bin", Blob: ptr(base64.StdEncoding.EncodeToString(res))}},
		{Type: protocol.ContentBlockTypeImage, Data: ptr(base64.StdEncoding.EncodeToString(small)), MimeType: ptr("image/png")},
		{Type: protocol.ContentBlockTypeText, Text: ptr(strings.Repeat("t", 100<<10))},
		{Type: protocol.ContentBlockTypeAudio, Data: ptr(strings.Repeat("!", 100<<10)), MimeType: ptr("audio/wav")},
	}}
	require.Equal(t, 2, s.Mint("office-1", &r))

	big := r.Content[0]
	assert.Equal(t, "", *big.Data)
	assert.Equal(t, "me", big.Meta["keep"])
	assert.Equal(t, int64(len(img)), big.Meta[blob.MetaTotalSize])
	assert.Equal(t, hexSHA(img), big.Meta[blob.MetaSHA256])
	assert.Nil(t, big.MetaUnaliased, "the references write the sideband in _meta only")
	got, last := drain(t, s, "office-1", big.Meta[blob.MetaBlobHandle].(string), 0)
	assert.True(t, bytes.Equal(img, got))
	assert.Equal(t, "image/png", last.MimeType)
	assert.Equal(t, hexSHA(img), last.Sha256)

	// The wire shape: "data":"" and the sideband in _meta.
	wire, err := json.Marshal(r.Content[0])
	require.NoError(t, err)
	assert.Contains(t, string(wire), `"data":""`)
	assert.Contains(t, string(wire), `"_meta":{"a2c_blob_handle":`)
	assert.NotContains(t, string(wire), `"meta":`)

	er := r.Content[1]
	assert.Equal(t, "", *er.Resource.Blob)
	assert.Equal(t, "file:///r.bin", er.Resource.URI)
	got, last = drain(t, s, "office-1", er.Meta[blob.MetaBlobHandle].(string), 1000)
	assert.True(t, bytes.Equal(res, got))
	assert.Equal(t, "application/octet-stream", last.MimeType, "no mime type given")

	assert.Equal(t, base64.StdEncoding.EncodeToString(small), *r.Content[2].Data)
	assert.Nil(t, r.Content[2].Meta)
	assert.Nil(t, r.Content[3].Meta)
	assert.Equal(t, strings.Repeat("!", 100<<10), *r.Content[4].Data, "not base64: stays inline")
	assert.Equal(t, int64(len(img)+len(res)), s.Bytes())
}

// The budget and the cap are the options'; an item above the cap stays.
func TestMintBudgetAndCap(t *testing.T) {
	s := openSpool(t, blob.WithInlineBudget(10), blob.WithMintCap(100))
	r := protocol.CallToolResult{Content: []protocol.ContentBlock{
		{Type: protocol.ContentBlockTypeImage, Data: ptr(base64.StdEncoding.EncodeToString(make([]byte, 11))), MimeType: ptr("image/png")},
		{Type: protocol.ContentBlockTypeImage, Data: ptr(base64.StdEncoding.EncodeToString(make([]byte, 101))), MimeType: ptr("image/png")},
		{Type: protocol.ContentBlockTypeImage, Data: ptr(base64.StdEncoding.EncodeToString(make([]byte, 10))), MimeType: ptr("image/png")},
	}}
	require.Equal(t, 1, s.Mint("o", &r))
	assert.Equal(t, "", *r.Content[0].Data)
	assert.NotEmpty(t, *r.Content[1].Data)
	assert.NotEmpty(t, *r.Content[2].Data)
	assert.Equal(t, 0, s.Mint("o", nil))
}

// Chunks: offset-addressed and stateless, clamped to 256 KiB, an offset
// equal to the size is an empty eof, beyond it a range refusal.
func TestReadChunks(t *testing.T) {
	s := openSpool(t)
	data := randomBytes(t, 300<<10)
	h, sha, err := s.Put("o", data, "application/x-test")
	require.NoError(t, err)
	assert.Equal(t, hexSHA(data), sha)

	ret, err := s.Read("o", protocol.GetBlobReq{BlobHandle: h, MaxChunkBytes: 10 << 20, ReqID: "r1"})
	require.NoError(t, err)
	chunk, _ := base64.StdEncoding.DecodeString(ret.Blob)
	assert.Len(t, chunk, blob.MaxChunkBytes, "clamped")
	assert.False(t, ret.Eof)
	assert.Equal(t, "r1", ret.ReqID)
	assert.Equal(t, len(data), ret.TotalSize)

	// The same chunk again, in any order: stateless.
	ret2, err := s.Read("o", protocol.GetBlobReq{BlobHandle: h, ChunkOffset: 100, MaxChunkBytes: 7})
	require.NoError(t, err)
	chunk, _ = base64.StdEncoding.DecodeString(ret2.Blob)
	assert.Equal(t, data[100:107], chunk)

	ret, err = s.Read("o", protocol.GetBlobReq{BlobHandle: h, ChunkOffset: len(data)})
	require.NoError(t, err)
	assert.True(t, ret.Eof)
	assert.Equal(t, "", ret.Blob)

	_, err = s.Read("o", protocol.GetBlobReq{BlobHandle: h, ChunkOffset: len(data) + 1})
	requireRefusal(t, err, protocol.CodeBlobNotAccessible, "range")
	_, err = s.Read("o", protocol.GetBlobReq{BlobHandle: h, ChunkOffset: -1})
	requireRefusal(t, err, protocol.CodeBlobNotAccessible, "range")
}

// A handle is served to the office it was minted for only; a guessed one
// is gone, one not of the spool's form invalid; the refusal is the
// reference's payload.
func TestHostileHandles(t *testing.T) {
	s := openSpool(t)
	h, _, err := s.Put("office-a", randomBytes(t, 1000), "image/png")
	require.NoError(t, err)

	_, err = s.Read("office-b", protocol.GetBlobReq{BlobHandle: h})
	requireRefusal(t, err, protocol.CodeBlobNotAccessible, "forbidden")

	// Guessed: the same form, other random bytes.
	guess := "sp1." + base64.RawURLEncoding.EncodeToString(randomBytes(t, 32))
	_, err = s.Read("office-a", protocol.GetBlobReq{BlobHandle: guess})
	perr := requireRefusal(t, err, protocol.CodeBlobNotAccessible, "gone")
	b, _ := json.Marshal(perr.In(protocol.Gen04))
	assert.Equal(t, `{"code":4018,"message":"Blob not accessible","details":{"reason":"gone"}}`, string(b))

	// A handle differing in its last character only.
	last := h[len(h)-1]
	alt := byte('A')
	if last == 'A' {
		alt = 'B'
	}
	_, err = s.Read("office-a", protocol.GetBlobReq{BlobHandle: h[:len(h)-1] + string(alt)})
	require.Error(t, err)

	for _, bad := range []string{"", "x", "sp1.", "sp1." + strings.Repeat("!", 43), h + "A", "../../etc/passwd", strings.Repeat("a", 8192)} {
		_, err = s.Read("office-a", protocol.GetBlobReq{BlobHandle: bad})
		requireRefusal(t, err, protocol.CodeBlobNotAccessible, "invalid_handle")
	}

	// Handles are distinct even for the same bytes.
	h2, _, err := s.Put("office-a", make([]byte, 10), "x/y")
	require.NoError(t, err)
	h3, _, err := s.Put("office-a", make([]byte, 10), "x/y")
	require.NoError(t, err)
	assert.NotEqual(t, h2, h3)
}

// A handle lives for its lifetime: then it is gone and its file removed.
func TestLifetime(t *testing.T) {
	clk := newClock()
	s := openSpool(t, blob.WithClock(clk.now), blob.WithLifetime(time.Minute))
	h, _, err := s.Put("o", randomBytes(t, 5000), "image/png")
	require.NoError(t, err)
	clk.advance(59 * time.Second)
	_, err = s.Read("o", protocol.GetBlobReq{BlobHandle: h})
	require.NoError(t, err)
	clk.advance(time.Second)
	_, err = s.Read("o", protocol.GetBlobReq{BlobHandle: h})
	requireRefusal(t, err, protocol.CodeBlobNotAccessible, "gone")
	n, _ := filesIn(t, s.Dir())
	assert.Equal(t, 0, n)
	assert.Equal(t, int64(0), s.Bytes())
}

// The spool's own goroutine gives the disk back without any call.
func TestJanitorRemovesExpiredBlobs(t *testing.T) {
	clk := newClock()
	s := openSpool(t, blob.WithClock(clk.now), blob.WithLifetime(time.Second))
	_, _, err := s.Put("o", randomBytes(t, 5000), "image/png")
	require.NoError(t, err)
	clk.advance(time.Hour)
	require.Eventually(t, func() bool { return s.Bytes() == 0 }, time.Minute, 20*time.Millisecond, "the janitor never ran")
	n, _ := filesIn(t, s.Dir())
	assert.Equal(t, 0, n)
}

// A spool filled to its bound evicts its oldest blobs, which answer gone;
// the bytes on disk never pass the bound, even with concurrent minting; a
// blob larger than the whole spool is refused and stays inline.
func TestSpoolBound(t *testing.T) {
	const bound = 100 << 10
	s := openSpool(t, blob.WithMaxBytes(bound))
	var hs []string
	for range 3 {
		h, _, err := s.Put("o", randomBytes(t, 40<<10), "x/y")
		require.NoError(t, err)
		hs = append(hs, h)
	}
	_, err := s.Read("o", protocol.GetBlobReq{BlobHandle: hs[0]})
	requireRefusal(t, err, protocol.CodeBlobNotAccessible, "gone")
	for _, h := range hs[1:] {
		_, err = s.Read("o", protocol.GetBlobReq{BlobHandle: h})
		require.NoError(t, err)
	}
	_, onDisk := filesIn(t, s.Dir())
	assert.LessOrEqual(t, onDisk, int64(bound))

	_, _, err = s.Put("o", make([]byte, bound+1), "x/y")
	require.ErrorIs(t, err, blob.ErrSpoolFull)

	// A reader that yields fewer or more bytes than declared stores nothing.
	before := s.Bytes()
	_, _, err = s.PutFrom("o", bytes.NewReader(make([]byte, 10)), 20, "x/y")
	require.Error(t, err)
	_, _, err = s.PutFrom("o", bytes.NewReader(make([]byte, 30)), 20, "x/y")
	require.Error(t, err)
	assert.Equal(t, before, s.Bytes())
	_, onDisk = filesIn(t, s.Dir())
	assert.Equal(t, before, onDisk)
	r := protocol.CallToolResult{Content: []protocol.ContentBlock{{Type: protocol.ContentBlockTypeImage, Data: ptr(base64.StdEncoding.EncodeToString(make([]byte, bound+1))), MimeType: ptr("image/png")}}}
	assert.Equal(t, 0, s.Mint("o", &r))
	assert.NotEmpty(t, *r.Content[0].Data)

	// Concurrent writers: a blob is stored, or refused while the others'
	// writes hold the room; never more than the bound.
	var wg sync.WaitGroup
	var stored atomic.Int32
	for range 8 {
		wg.Go(func() {
			for range 10 {
				h, _, err := s.Put("o", make([]byte, 30<<10), "x/y")
				if err != nil {
					assert.ErrorIs(t, err, blob.ErrSpoolFull)
				} else {
					stored.Add(1)
					_, _ = s.Read("o", protocol.GetBlobReq{BlobHandle: h})
				}
				assert.LessOrEqual(t, s.Bytes(), int64(bound))
			}
		})
	}
	wg.Wait()
	assert.Positive(t, stored.Load())
	_, onDisk = filesIn(t, s.Dir())
	assert.LessOrEqual(t, onDisk, int64(bound))
}

// The spool's directory is its own: a live spool's is refused to another
// one, what a previous run left is removed at open, a directory that is not
// a spool's is refused untouched, and Close removes it.
func TestSpoolOwnsItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s, err := blob.OpenSpool(dir)
	require.NoError(t, err)
	h, _, err := s.Put("o", randomBytes(t, 1000), "x/y")
	require.NoError(t, err)
	_, err = blob.OpenSpool(dir)
	require.ErrorContains(t, err, "the spool of another running Computer")
	_, err = s.Read("o", protocol.GetBlobReq{BlobHandle: h})
	require.NoError(t, err, "the live spool is untouched")
	require.NoError(t, s.Close())

	// What a process that ended without Close leaves: the marker (unlocked
	// once the process is gone) and blobs. The next one starts empty.
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".smcp-spool"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1.blob"), randomBytes(t, 1000), 0o600))
	s2, err := blob.OpenSpool(dir)
	require.NoError(t, err)
	n, _ := filesIn(t, dir)
	assert.Equal(t, 0, n)
	_, err = s2.Read("o", protocol.GetBlobReq{BlobHandle: h})
	requireRefusal(t, err, protocol.CodeBlobNotAccessible, "gone")
	require.NoError(t, s2.Close())
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "Close removes the directory")
	_, err = s2.Read("o", protocol.GetBlobReq{BlobHandle: h})
	requireRefusal(t, err, protocol.CodeBlobNotAccessible, "gone")
	require.NoError(t, s2.Close(), "idempotent")

	user := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(user, "thesis.txt"), []byte("precious"), 0o600))
	_, err = blob.OpenSpool(user)
	require.Error(t, err)
	b, err := os.ReadFile(filepath.Join(user, "thesis.txt"))
	require.NoError(t, err)
	assert.Equal(t, "precious", string(b))

	s3, err := blob.OpenSpool("")
	require.NoError(t, err)
	d := s3.Dir()
	require.NoError(t, s3.Close())
	_, err = os.Stat(d)
	assert.True(t, os.IsNotExist(err))
}

// A spool opened without a directory gets its own under the per-user base,
// and removes there what spools of ended processes left (marker unlocked,
// or no marker for over a minute), never a live spool's nor one being
// opened. (With a process killed for real: cmd/smcp-computer's
// TestSpoolOfAKilledComputerRemovedAtNextStart.)
func TestDefaultSpoolsSweepWhatEndedProcessesLeft(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	base := blob.DefaultBase()
	live, err := blob.OpenSpool("")
	require.NoError(t, err)
	defer live.Close()
	assert.Equal(t, base, filepath.Dir(live.Dir()))
	h, _, err := live.Put("o", randomBytes(t, 1000), "x/y")
	require.NoError(t, err)

	dead := filepath.Join(base, "p1-dead")
	require.NoError(t, os.MkdirAll(dead, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dead, ".smcp-spool"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dead, "3.blob"), randomBytes(t, 1000), 0o600))
	old := filepath.Join(base, "p2-old")
	require.NoError(t, os.MkdirAll(old, 0o700))
	long := time.Now().Add(-2 * time.Minute)
	require.NoError(t, os.Chtimes(old, long, long))
	young := filepath.Join(base, "p3-young")
	require.NoError(t, os.MkdirAll(young, 0o700))

	next, err := blob.OpenSpool("")
	require.NoError(t, err)
	defer next.Close()
	assert.NotEqual(t, live.Dir(), next.Dir())
	for _, d := range []string{dead, old} {
		_, err = os.Stat(d)
		assert.True(t, os.IsNotExist(err), "%s removed", d)
	}
	_, err = os.Stat(young)
	assert.NoError(t, err, "a directory being opened is left alone")
	_, err = live.Read("o", protocol.GetBlobReq{BlobHandle: h})
	assert.NoError(t, err, "the live spool is untouched")
	n, _ := filesIn(t, live.Dir())
	assert.Equal(t, 1, n)

	fi, err := os.Stat(base)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}
