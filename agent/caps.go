package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"io"
	"iter"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// The 0.4 capabilities a Computer offers an Agent
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md):
// blobs, skills and resources. Each is a request of a 0.3/0.4 session
// (client:put_blob of 0.4 only); in a 0.2.0 session it fails at once with
// 4106. Refusals are *protocol.Error with the references' codes: 4014,
// 4015, 4016, 4017, 4018, 4019.

// Blob sideband keys of a content item's metadata.
const (
	MetaBlobHandle = "a2c_blob_handle"
	MetaTotalSize  = "a2c_total_size"
	MetaSHA256     = "a2c_sha256"
)

// MaxBlobChunk is the largest chunk a Computer sends or takes.
const MaxBlobChunk = 256 << 10

// DefaultDrainBytes is the largest blob CallTool drains into a result.
const DefaultDrainBytes = 64 << 20

// GetBlob reads one chunk of a blob (client:get_blob): at most max bytes
// (the Computer's cap, 256 KiB, when max ≤ 0) from offset.
func (c *Client) GetBlob(ctx context.Context, computer, handle string, offset, max int) (*protocol.GetBlobRet, error) {
	if err := c.checkExtension(protocol.EventGetBlob); err != nil {
		return nil, err
	}
	id := c.nextReqID()
	return call[protocol.GetBlobRet](ctx, c, protocol.EventGetBlob, id,
		protocol.GetBlobReq{Agent: c.cfg.name, ReqID: id, Computer: computer, BlobHandle: handle, ChunkOffset: offset, MaxChunkBytes: max})
}

// BlobReader reads a blob chunk by chunk as it is read (OpenBlob), so that
// a large blob is never held in memory. At the end it checks the bytes
// against the total_size and sha256 the Computer announced: a mismatch is
// a 4018 error instead of io.EOF.
type BlobReader struct {
	c                *Client
	ctx              context.Context
	computer, handle string
	off              int
	buf              []byte
	eof              bool
	h                hash.Hash
	total            int
	sha, mime        string
	started          bool
	err              error
}

// OpenBlob returns a reader of the blob behind handle; every Read may ask
// the Computer for the next chunk, bounded by ctx.
func (c *Client) OpenBlob(ctx context.Context, computer, handle string) *BlobReader {
	return &BlobReader{c: c, ctx: ctx, computer: computer, handle: handle, h: sha256.New()}
}

// Size returns the blob's size once the first chunk was read (-1 before).
func (r *BlobReader) Size() int {
	if !r.started {
		return -1
	}
	return r.total
}

// MimeType returns the blob's MIME type once the first chunk was read.
func (r *BlobReader) MimeType() string { return r.mime }

// Read implements io.Reader.
func (r *BlobReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.eof {
			r.err = r.finish()
			return 0, r.err
		}
		ret, err := r.c.GetBlob(r.ctx, r.computer, r.handle, r.off, 0)
		if err != nil {
			r.err = err
			return 0, err
		}
		chunk, err := base64.StdEncoding.DecodeString(ret.Blob)
		if err != nil || ret.ChunkOffset != r.off || (r.started && (ret.TotalSize != r.total || ret.Sha256 != r.sha)) ||
			(!ret.Eof && len(chunk) == 0) || r.off+len(chunk) > ret.TotalSize {
			r.err = protocol.NewBlobNotAccessible("blob %s: an inconsistent chunk at offset %d", r.handle, r.off).With("reason", "range")
			return 0, r.err
		}
		if !r.started {
			r.started, r.total, r.sha, r.mime = true, ret.TotalSize, ret.Sha256, ret.MimeType
		}
		r.h.Write(chunk)
		r.off += len(chunk)
		r.buf, r.eof = chunk, ret.Eof
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// finish checks the whole blob against its announced size and hash.
func (r *BlobReader) finish() error {
	if r.off != r.total {
		return protocol.NewBlobNotAccessible("blob %s: %d bytes read, %d announced", r.handle, r.off, r.total).With("reason", "range")
	}
	if got := hex.EncodeToString(r.h.Sum(nil)); r.sha != "" && got != r.sha {
		return protocol.NewBlobNotAccessible("blob %s: sha256 %s, %s announced", r.handle, got, r.sha).With("reason", "integrity")
	}
	return io.EOF
}

// ReadBlob reads a whole blob of at most max bytes into memory (a larger
// one fails with 413 before it is read); OpenBlob streams instead.
func (c *Client) ReadBlob(ctx context.Context, computer, handle string, max int64) ([]byte, error) {
	r := c.OpenBlob(ctx, computer, handle)
	var out bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if r.started && int64(r.total) > max {
			return nil, protocol.NewPayloadTooLarge("blob %s of %d bytes is larger than %d", handle, r.total, max)
		}
		out.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// drainBlobs replaces the emptied inline bytes of res's content items that
// carry a blob handle with the blob's bytes, as the reference Agents do
// before returning a tool result; the sideband stays in the item's
// metadata. A blob larger than max, or that cannot be read, stays a handle
// (logged), so the caller may stream it with OpenBlob.
func (c *Client) drainBlobs(ctx context.Context, computer string, res *protocol.CallToolResult, max int64) {
	for i := range res.Content {
		it := &res.Content[i]
		handle := sideband(it.Meta)
		if handle == "" {
			handle = sideband(it.MetaUnaliased)
		}
		if handle == "" {
			continue
		}
		var dst *string
		switch {
		case it.Data != nil && *it.Data == "":
			dst = it.Data
		case it.Resource != nil && it.Resource.Blob != nil && *it.Resource.Blob == "":
			rc := *it.Resource
			it.Resource = &rc
			dst = rc.Blob
		default:
			continue
		}
		data, err := c.ReadBlob(ctx, computer, handle, max)
		if err != nil {
			c.log.Warn("a tool result's blob was not drained; its handle stays", "computer", computer, "err", err)
			continue
		}
		s := base64.StdEncoding.EncodeToString(data)
		if it.Data == dst {
			it.Data = &s
		} else {
			it.Resource.Blob = &s
		}
	}
}

func sideband(m map[string]any) string {
	h, _ := m[MetaBlobHandle].(string)
	return h
}

// Skills lists a Computer's skills (client:get_skills).
func (c *Client) Skills(ctx context.Context, computer string) ([]protocol.A2CSkillRef, error) {
	if err := c.checkExtension(protocol.EventGetSkills); err != nil {
		return nil, err
	}
	id := c.nextReqID()
	ret, err := call[protocol.GetSkillsRet](ctx, c, protocol.EventGetSkills, id, protocol.GetSkillsReq{Agent: c.cfg.name, ReqID: id, Computer: computer})
	if err != nil {
		return nil, err
	}
	if ret.Skills == nil {
		ret.Skills = []protocol.A2CSkillRef{}
	}
	return ret.Skills, nil
}

// Skill reads one file of a skill (client:get_skill), SKILL.md when relPath
// is "". The answer has Body, or a BlobHandle to read with OpenBlob or
// ReadBlob.
func (c *Client) Skill(ctx context.Context, computer, name, relPath string) (*protocol.GetSkillRet, error) {
	if err := c.checkExtension(protocol.EventGetSkill); err != nil {
		return nil, err
	}
	id := c.nextReqID()
	return call[protocol.GetSkillRet](ctx, c, protocol.EventGetSkill, id,
		protocol.GetSkillReq{Agent: c.cfg.name, ReqID: id, Computer: computer, Name: name, RelPath: relPath})
}

// Resources lists the resources of one MCP server of a Computer, by its
// bundle_id (client:get_resources), page after page as the iteration goes;
// it stops at the first error, and when a cursor comes back (a server that
// would page forever).
func (c *Client) Resources(ctx context.Context, computer, bundleID string) iter.Seq2[protocol.A2CResource, error] {
	return func(yield func(protocol.A2CResource, error) bool) {
		if err := c.checkExtension(protocol.EventGetResources); err != nil {
			yield(protocol.A2CResource{}, err)
			return
		}
		seen := map[string]bool{}
		cursor := ""
		for {
			id := c.nextReqID()
			ret, err := call[protocol.GetResourcesRet](ctx, c, protocol.EventGetResources, id,
				protocol.GetResourcesReq{Agent: c.cfg.name, ReqID: id, Computer: computer, MCPServer: bundleID, Cursor: cursor})
			if err != nil {
				yield(protocol.A2CResource{}, err)
				return
			}
			for _, r := range ret.Resources {
				if !yield(r, nil) {
					return
				}
			}
			if ret.NextCursor == "" {
				return
			}
			if seen[ret.NextCursor] {
				yield(protocol.A2CResource{}, protocol.NewInternal("computer %s: the resources of %s page in a circle (cursor %q again)", computer, bundleID, ret.NextCursor))
				return
			}
			seen[ret.NextCursor] = true
			cursor = ret.NextCursor
		}
	}
}

// PutBlob uploads r to a Computer's landing root (client:put_blob, 0.4.0)
// in chunks of 256 KiB, and returns the last answer, whose LandingPath
// names the file on the Computer. r is read twice: once for the sha256 the
// first chunk declares, then from its start to send it. progress, when not
// nil, is called after each chunk with the bytes sent and the total.
//
// One chunk is sent at a time, the next after the Computer's answer: a
// reference Computer may handle requests concurrently, and a chunk that
// overtakes another is refused as out of order. The next chunk is read,
// encoded and checked while the answer is awaited (docs/performance.md,
// Blobs).
func (c *Client) PutBlob(ctx context.Context, computer string, r io.ReadSeeker, nameHint string, progress func(sent, total int64)) (*protocol.PutBlobRet, error) {
	if err := c.checkExtension(protocol.EventPutBlob); err != nil {
		return nil, err
	}
	h := sha256.New()
	total, err := io.Copy(h, r)
	if err != nil {
		return nil, protocol.NewBadRequest("put_blob: reading the upload: %v", err).Wrap(err)
	}
	if total == 0 {
		return nil, protocol.NewBadRequest("put_blob: an empty upload (the protocol's total_size is at least 1)")
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, protocol.NewBadRequest("put_blob: rewinding the upload: %v", err).Wrap(err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	buf := make([]byte, MaxBlobChunk)
	// prepare reads the chunk at offset and encodes its request; only one
	// runs at a time, so buf is reused.
	prepare := func(uploadID string, offset int64) putChunk {
		n, rerr := io.ReadFull(r, buf)
		if rerr != nil && !errors.Is(rerr, io.ErrUnexpectedEOF) && !errors.Is(rerr, io.EOF) {
			return putChunk{err: protocol.NewBadRequest("put_blob: reading the upload: %v", rerr).Wrap(rerr)}
		}
		if offset+int64(n) > total {
			return putChunk{err: protocol.NewBadRequest("put_blob: the upload grew while it was sent")}
		}
		id := c.nextReqID()
		req := protocol.PutBlobReq{Agent: c.cfg.name, ReqID: id, Computer: computer, UploadID: uploadID, ChunkOffset: int(offset),
			Eof: offset+int64(n) == total, Blob: base64.StdEncoding.EncodeToString(buf[:n])}
		if uploadID == "" {
			req.TotalSize, req.Sha256, req.NameHint = int(total), sum, nameHint
		}
		data, err := encodeRequest(c.Generation(), protocol.EventPutBlob, req)
		if err != nil {
			return putChunk{err: err}
		}
		return putChunk{id: id, n: n, eof: req.Eof, data: validated(data.(json.RawMessage))}
	}
	var sent int64
	uploadID := ""
	cur := prepare("", 0)
	for {
		if cur.err != nil {
			return nil, cur.err
		}
		var next chan putChunk
		if !cur.eof && cur.n > 0 && uploadID != "" {
			next = make(chan putChunk, 1)
			go func(id string, offset int64) { next <- prepare(id, offset) }(uploadID, sent+int64(cur.n))
		}
		// A chunk is not repeated: a second copy would be refused as out
		// of order; the caller starts the upload again.
		vals, err := c.send(ctx, protocol.EventPutBlob, cur.data, false)
		var following putChunk
		if next != nil {
			following = <-next // joined on every path: prepare reads r
		}
		if err != nil {
			return nil, err
		}
		ret, err := decodeAnswer[protocol.PutBlobRet](protocol.EventPutBlob, cur.id, vals)
		if err != nil {
			return nil, err
		}
		if uploadID == "" {
			uploadID = ret.UploadID
		} else if ret.UploadID != uploadID {
			return nil, protocol.NewBlobWriteFailed("put_blob: the Computer answered the chunk at offset %d for upload %q, not %q", sent, ret.UploadID, uploadID).
				With("reason", "range")
		}
		sent += int64(cur.n)
		if progress != nil {
			progress(sent, total)
		}
		if cur.eof {
			if ret.Sha256 != "" && ret.Sha256 != sum {
				return ret, protocol.NewBlobWriteFailed("put_blob: the Computer computed sha256 %s, %s sent", ret.Sha256, sum).With("reason", "integrity")
			}
			return ret, nil
		}
		if cur.n == 0 {
			return nil, protocol.NewBadRequest("put_blob: the upload shrank while it was sent (%d of %d bytes)", sent, total)
		}
		if next == nil {
			following = prepare(uploadID, sent)
		}
		cur = following
	}
}

// putChunk is one chunk of PutBlob, read and encoded, or the error that
// ended the reading.
type putChunk struct {
	id   string
	n    int
	eof  bool
	data validated
	err  error
}
