package blob

import (
	"encoding/base64"
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
// the spool cannot take stays inline (logged), as with the references. It
// returns how many items it moved.
func (s *Spool) Mint(office string, res *protocol.CallToolResult) int {
	if res == nil {
		return 0
	}
	moved := 0
	for i := range res.Content {
		it := &res.Content[i]
		var b64 *string
		mime := ""
		switch {
		case it.Data != nil:
			b64 = it.Data
			if it.MimeType != nil {
				mime = *it.MimeType
			}
		case it.Resource != nil && it.Resource.Blob != nil:
			b64 = it.Resource.Blob
			mime = it.Resource.MimeType
			if mime == "" && it.MimeType != nil {
				mime = *it.MimeType
			}
		default:
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
		if mime == "" {
			mime = "application/octet-stream"
		}
		handle, sha, err := s.Put(office, data, mime)
		if err != nil {
			slog.Warn("blob: binary item not spooled, stays inline", "size", size, "err", err)
			continue
		}
		empty := ""
		if it.Data != nil {
			it.Data = &empty
		} else {
			rc := *it.Resource
			rc.Blob = &empty
			it.Resource = &rc
		}
		m := maps.Clone(it.Meta)
		if m == nil {
			m = map[string]any{}
		}
		m[MetaBlobHandle] = handle
		m[MetaTotalSize] = size
		m[MetaSHA256] = sha
		it.Meta = m
		moved++
	}
	return moved
}
