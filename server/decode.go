package server

import (
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Decoding a payload for its checks turns its bytes into Go values that
// take many times their size: an 8 MiB array of zeros becomes about
// 160 MB of slices while it is decoded, a map of short members more. Each
// session handles one message at a time, but sessions handle theirs at
// once: 24 connections sending such requests held 3.8 GB of heap
// (spec/decisions.md, Limits against hostile clients). A payload of at least
// largeDecodeBytes is decoded, checked and handled holding one of
// maxLargeDecodes places; smaller ones, which decode in well under a
// millisecond, take none.
const (
	largeDecodeBytes = 64 << 10
	maxLargeDecodes  = 2
	// largeDecodeWait bounds the wait for a place; past it the event is
	// refused with 503.
	largeDecodeWait = 10 * time.Second
)

// acquireDecode takes a place for decoding a payload of n bytes, and
// returns the function that gives it back, or the 503 that refuses the
// event when no place came within largeDecodeWait or the Server closed.
func (s *Server) acquireDecode(n int) (release func(), _ *protocol.Error) {
	if n < largeDecodeBytes {
		return func() {}, nil
	}
	select {
	case s.largeDecodes <- struct{}{}:
		return func() { <-s.largeDecodes }, nil
	default:
	}
	t := time.NewTimer(largeDecodeWait)
	defer t.Stop()
	select {
	case s.largeDecodes <- struct{}{}:
		return func() { <-s.largeDecodes }, nil
	case <-t.C:
	case <-s.ctx.Done():
	}
	return nil, protocol.NewUnavailable("the server is busy with large payloads; try again").With("reason", "busy")
}
