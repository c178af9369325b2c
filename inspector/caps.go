package inspector

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The 0.4 capabilities on the page
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md):
// a Computer's skills and resources, and its blobs downloaded.

// Limits of the capability views.
const (
	maxSkillBody     = 1 << 20   // a skill file shown inline on the page
	maxResourceScan  = 20000     // resources read to page a server's list
	maxBlobDownload  = 256 << 20 // a blob streamed to the browser
	maxResourceLimit = 100
)

// apiSkills lists a Computer's skills (client:get_skills).
func (in *Inspector) apiSkills(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	skills, err := in.client.Skills(r.Context(), computer)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"computer": computer, "skills": skills})
}

// apiSkill reads one file of a skill (client:get_skill): ?name=, ?path=
// (SKILL.md when empty). A text body reaches the page as text; a file the
// Computer answers as a blob handle (large or binary) gets a download link
// (/api/blob) instead.
func (in *Inspector) apiSkill(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	name := q.Get("name")
	if name == "" {
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "no skill name given"))
		return
	}
	ret, err := in.client.Skill(r.Context(), computer, name, q.Get("path"))
	if err != nil {
		writeError(w, err)
		return
	}
	out := map[string]any{"computer": computer, "name": ret.Name, "rel_path": ret.RelPath, "mime_type": ret.MimeType,
		"total_size": ret.TotalSize, "sha256": ret.Sha256}
	switch {
	case ret.Body != nil && len(*ret.Body) <= maxSkillBody:
		out["body"] = *ret.Body
	case ret.Body != nil:
		writeError(w, protocol.Errorf(protocol.CodePayloadTooLarge, "the skill file is larger than %d bytes", maxSkillBody))
		return
	case ret.BlobHandle != nil:
		out["blob_handle"] = *ret.BlobHandle
	}
	writeJSON(w, http.StatusOK, out)
}

// apiResources lists one page of the resources of a Computer's MCP server
// (?server=, its bundle_id; client:get_resources): ?offset= and ?limit=
// (default 20, at most 100) over the list agent.Client.Resources reads
// across the server's cursors, at most maxResourceScan resources.
func (in *Inspector) apiResources(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	server := r.URL.Query().Get("server")
	if server == "" {
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "no server (bundle id) given"))
		return
	}
	offset, err := intParam(r, "offset", 0, maxResourceScan)
	if err != nil {
		writeError(w, err)
		return
	}
	limit, err := intParam(r, "limit", 20, maxResourceLimit)
	if err != nil {
		writeError(w, err)
		return
	}
	if limit == 0 {
		limit = 20
	}
	page := []protocol.A2CResource{}
	seen, more := 0, false
	for res, err := range in.client.Resources(r.Context(), computer, server) {
		if err != nil {
			writeError(w, err)
			return
		}
		if seen >= offset+limit {
			more = true
			break
		}
		if seen >= offset {
			page = append(page, res)
		}
		seen++
	}
	writeJSON(w, http.StatusOK, map[string]any{"computer": computer, "server": server, "resources": page,
		"offset": offset, "limit": limit, "has_more": more})
}

// apiBlob streams a blob (?handle=, a tool result's a2c_blob_handle or a
// skill file's blob_handle; client:get_blob chunk by chunk, agent.OpenBlob)
// to the browser as a download with the blob's MIME type, at most
// maxBlobDownload bytes. A failure before the first byte is an error
// answer; after it the connection is aborted, so that the browser shows a
// failed download, not a truncated file (the last chunk is checked
// against the blob's size and sha256).
func (in *Inspector) apiBlob(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	handle := q.Get("handle")
	if handle == "" || len(handle) > 512 {
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "no blob handle given (or one longer than 512 bytes)"))
		return
	}
	br := in.client.OpenBlob(r.Context(), computer, handle)
	first := make([]byte, agent.MaxBlobChunk)
	n, err := br.Read(first)
	if err != nil && !errors.Is(err, io.EOF) {
		writeError(w, err)
		return
	}
	if br.Size() > maxBlobDownload {
		writeError(w, protocol.Errorf(protocol.CodePayloadTooLarge, "the blob of %d bytes is larger than %d, the inspector's bound", br.Size(), maxBlobDownload))
		return
	}
	ct := br.MimeType()
	if mt, _, perr := mime.ParseMediaType(ct); perr != nil || !strings.Contains(mt, "/") {
		ct = "application/octet-stream"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(br.Size()))
	h.Set("Cache-Control", "no-store")
	// Always a download: a blob is the Computer's bytes, never a page of
	// this origin.
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": downloadName(q.Get("name"))}))
	w.WriteHeader(http.StatusOK)
	if _, werr := w.Write(first[:n]); werr != nil {
		return
	}
	if errors.Is(err, io.EOF) {
		return
	}
	if _, err := io.Copy(w, br); err != nil {
		in.log.Warn("blob download failed midway", "computer", computer, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// downloadName is the file name a download is offered as: the page's
// ?name= reduced to a base name of safe characters, else "blob".
func downloadName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		return "blob"
	}
	return name
}
