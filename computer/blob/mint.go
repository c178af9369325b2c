package blob

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Mint moves the binary content items of res above the inline budget to
// the spool for office, as the 0.4 reference Computers do before they
// answer a tool call (spec/capabilities.md, Blobs): the item's inline bytes
// (data of an image or audio block, resource.blob of an embedded resource)
// become "", and its "_meta" gets MetaBlobHandle, MetaTotalSize and
// MetaSHA256 (both references write them there, and their Agents read
// them there only; the item's "meta", if any, is left as it is). An item that is not valid base64, is above the mint cap, or that
// the spool cannot take stays inline (logged), as with the references. An
// item whose bytes were staged already (Spool.Stage) is claimed for office,
// its MIME type set from the item. It returns how many items it moved.
func (s *Spool) Mint(office string, res *protocol.CallToolResult) int {
	if res == nil {
		return 0
	}
	moved := 0
	for i := range res.Content {
		it := &res.Content[i]
		b64, mime := binaryOf(it)
		if b64 == nil {
			continue
		}
		if mime == "" {
			mime = "application/octet-stream"
		}
		if handle, size, sha, ok := parseStaged(*b64); ok {
			// Written to the spool as it arrived (Stage): claimed for office.
			if !s.claim(office, handle, mime) {
				slog.Warn("blob: staged binary item left the spool before its tool result was answered; its handle answers gone", "size", size)
			}
			s.sideband(it, handle, size, sha)
			moved++
			continue
		}
		// A base64 text of n characters decodes to at most 3n/4 bytes:
		// items certainly within the budget are not decoded.
		if int64(len(*b64))/4*3 <= s.cfg.inline {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			continue
		}
		size := int64(len(data))
		if size <= s.cfg.inline {
			continue
		}
		if size > s.cfg.mintCap {
			slog.Warn("blob: binary item above the mint cap stays inline", "size", size, "cap", s.cfg.mintCap)
			continue
		}
		handle, sha, err := s.Put(office, data, mime)
		if err != nil {
			slog.Warn("blob: binary item not spooled, stays inline", "size", size, "err", err)
			continue
		}
		s.sideband(it, handle, size, sha)
		moved++
	}
	return moved
}

// binaryOf returns the inline bytes (base64) of a binary content item and
// its MIME type, or nil when it is not one.
func binaryOf(it *protocol.ContentBlock) (*string, string) {
	switch {
	case it.Data != nil:
		mime := ""
		if it.MimeType != nil {
			mime = *it.MimeType
		}
		return it.Data, mime
	case it.Resource != nil && it.Resource.Blob != nil:
		mime := it.Resource.MimeType
		if mime == "" && it.MimeType != nil {
			mime = *it.MimeType
		}
		return it.Resource.Blob, mime
	}
	return nil, ""
}

// setInline replaces the inline bytes of the binary item it.
func setInline(it *protocol.ContentBlock, b64 string) {
	if it.Data != nil {
		it.Data = &b64
	} else {
		rc := *it.Resource
		rc.Blob = &b64
		it.Resource = &rc
	}
}

// sideband empties the item's inline bytes and writes the blob's handle,
// size and hash in its _meta.
func (s *Spool) sideband(it *protocol.ContentBlock, handle string, size int64, sha string) {
	setInline(it, "")
	m := maps.Clone(it.Meta)
	if m == nil {
		m = map[string]any{}
	}
	m[MetaBlobHandle] = handle
	m[MetaTotalSize] = size
	m[MetaSHA256] = sha
	it.Meta = m
}

// Inline puts the staged binary items of res back inline, for a session
// without client:get_blob (0.2.0), and removes them from the spool. An
// item the spool no longer has becomes a text item saying so.
func (s *Spool) Inline(res *protocol.CallToolResult) {
	if res == nil {
		return
	}
	for i := range res.Content {
		it := &res.Content[i]
		b64, _ := binaryOf(it)
		if b64 == nil {
			continue
		}
		handle, size, _, ok := parseStaged(*b64)
		if !ok {
			continue
		}
		data, err := s.takeStaged(handle)
		if err != nil {
			slog.Warn("blob: staged binary item lost before its tool result was answered", "size", size, "err", err)
			msg := fmt.Sprintf("[a binary item of %d bytes was lost: %v]", size, err)
			res.Content[i] = protocol.ContentBlock{Type: protocol.ContentBlockTypeText, Text: &msg}
			continue
		}
		setInline(it, base64.StdEncoding.EncodeToString(data))
	}
}

// takeStaged reads a staged blob and removes it.
func (s *Spool) takeStaged(handle string) ([]byte, error) {
	s.mu.Lock()
	e, ok := s.entries[handle]
	if !ok || !e.staged || s.closed {
		s.mu.Unlock()
		return nil, errors.New("no longer in the spool")
	}
	data, err := s.root.ReadFile(e.file)
	s.dropLocked(handle, e)
	s.mu.Unlock()
	return data, err
}
