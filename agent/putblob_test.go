package agent_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// PutBlob sends the chunks in order, one at a time (the next is prepared
// while the last one's answer is awaited, never sent before it: a
// reference Computer may handle requests concurrently), the first with
// the declaration, the others with the upload_id.
func TestPutBlobOneChunkInFlight(t *testing.T) {
	p := startPeer(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), (4*agent.MaxBlobChunk+1000)/16)
	var (
		mu       sync.Mutex
		got      bytes.Buffer
		inFlight int
		overlap  bool
		decls    int
	)
	p.Handle(protocol.EventPutBlob, func(_ context.Context, req map[string]any) agenttest.Reply {
		mu.Lock()
		inFlight++
		overlap = overlap || inFlight > 1
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		mu.Lock()
		defer mu.Unlock()
		if off := int(req["chunk_offset"].(float64)); off != got.Len() {
			return agenttest.Answer(protocol.NewBlobWriteFailed("chunk at %d, expected %d", off, got.Len()).In(protocol.Gen04))
		}
		if _, ok := req["total_size"]; ok {
			decls++
		} else if req["upload_id"] != "up-1" {
			return agenttest.Answer(protocol.NewBlobWriteFailed("upload_id %v", req["upload_id"]).In(protocol.Gen04))
		}
		b, err := base64.StdEncoding.DecodeString(req["blob"].(string))
		require.NoError(t, err)
		got.Write(b)
		ret := protocol.PutBlobRet{ReqID: req["req_id"].(string), UploadID: "up-1", ChunkOffset: got.Len()}
		if req["eof"] == true {
			sum := sha256.Sum256(got.Bytes())
			ret.LandingPath, ret.Sha256 = "/landing/x.bin", hex.EncodeToString(sum[:])
		}
		return agenttest.Answer(ret)
	})
	c, _ := joined(t, p)
	var sent []int64
	ret, err := c.PutBlob(ctxT(t), "pc", bytes.NewReader(want), "x.bin", func(n, total int64) {
		require.Equal(t, int64(len(want)), total)
		sent = append(sent, n)
	})
	require.NoError(t, err)
	require.Equal(t, "/landing/x.bin", ret.LandingPath)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, want, got.Bytes())
	require.False(t, overlap, "a chunk was sent before the last one's answer")
	require.Equal(t, 1, decls)
	require.Equal(t, []int64{1 << 18, 2 << 18, 3 << 18, 4 << 18, int64(len(want))}, sent)
}

// A Computer answering a later chunk for another upload fails the upload
// with 4019: the chunk prepared meanwhile named the first.
func TestPutBlobUploadIDChanged(t *testing.T) {
	p := startPeer(t)
	var mu sync.Mutex
	n := 0
	p.Handle(protocol.EventPutBlob, func(_ context.Context, req map[string]any) agenttest.Reply {
		mu.Lock()
		defer mu.Unlock()
		n++
		id := "up-1"
		if n > 1 {
			id = "up-2"
		}
		b, _ := base64.StdEncoding.DecodeString(req["blob"].(string))
		return agenttest.Answer(protocol.PutBlobRet{ReqID: req["req_id"].(string), UploadID: id,
			ChunkOffset: int(req["chunk_offset"].(float64)) + len(b)})
	})
	c, _ := joined(t, p)
	_, err := c.PutBlob(ctxT(t), "pc", bytes.NewReader(make([]byte, 3*agent.MaxBlobChunk)), "", nil)
	requireCode(t, err, protocol.CodeBlobWriteFailed)
	require.Contains(t, err.Error(), `"up-2", not "up-1"`)
}
