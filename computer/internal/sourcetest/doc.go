package sourcetest

import (
	"fmt"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Meta returns a valid Level-1 body for dpe://host/ref, last modified at
// base + i hours (no last_modified when i < 0).
func Meta(host, ref string, i int) protocol.DPEDocumentMeta {
	m := protocol.DPEDocumentMeta{
		DocRef:    ref,
		URI:       "dpe://" + host + "/" + ref,
		FileURI:   "file:///data/" + ref + ".pdf",
		FileType:  "pdf",
		Title:     "Document " + ref,
		PageCount: 3,
		Keywords:  []string{"test", ref},
	}
	s := fmt.Sprintf("summary of %s", ref)
	m.Summary = s
	if i >= 0 {
		lm := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
		m.LastModified = lm
	}
	return m
}
