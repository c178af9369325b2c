package docserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCarelessFolder: a folder a careless author filled. Files meant as text
// that are not UTF-8 (a binary file named .md, a Latin-1 .md or .csv) are
// listed as unavailable with the reason instead of missing without a word
// (other files, .txt included, are sniffed as text and skipped silently);
// a named pipe, a symlink loop and a link to the folder's parent are left
// out without blocking anything; 100,000 headings are 100,000 pages; one
// 8 MB line is served.
func TestCarelessFolder(t *testing.T) {
	root := t.TempDir()
	bin := make([]byte, 1<<16)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "binary.md"), bin, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "latin1.md"), []byte("# Caf\xe9\n\nd\xe9j\xe0 vu\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "latin1.csv"), []byte("name\nna\xefve\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "latin1.txt"), []byte("na\xefve\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "blob"), bin, 0o644))
	var h strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&h, "# H%d\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "headings.md"), []byte(h.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "oneline.md"), []byte(strings.Repeat("word ", 1600000)), 0o644))
	require.NoError(t, os.Symlink("loop-b.md", filepath.Join(root, "loop-a.md")))
	require.NoError(t, os.Symlink("loop-a.md", filepath.Join(root, "loop-b.md")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	require.NoError(t, os.Symlink("..", filepath.Join(root, "dir", "up")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o644))
	writeFile(t, filepath.Join(root, "ok.md"), "# OK\n\nfine\n")

	c := serve(t, overHTTP, root)
	docs := catalogByRef(t, read(t, c, catalog))
	refs := make([]string, 0, len(docs))
	for ref := range docs {
		refs = append(refs, ref)
	}
	assert.ElementsMatch(t, []string{"binary.md", "latin1.md", "latin1.csv", "headings.md", "oneline.md", "ok.md"}, refs)

	for ref, reason := range map[string]string{
		"binary.md":  "a NUL byte at offset 0 (a binary file?)",
		"latin1.md":  "not UTF-8 (first invalid byte at offset 5); save it as UTF-8",
		"latin1.csv": "not UTF-8 (first invalid byte at offset 7)",
	} {
		d := docs[ref]
		require.NotNil(t, d, ref)
		assert.Contains(t, d["summary"], "Unavailable: not a text file: "+reason, ref)
		assert.Equal(t, []any{"unavailable"}, d["keywords"], ref)
		perr := readErr(t, c, catalog+"/"+ref+"/pages/0")
		assert.NotEqual(t, protocol.CodeInternal, perr.Code, "%s: a coded answer: %v", ref, perr)
	}
	assert.EqualValues(t, 100000, docs["headings.md"]["page_count"])
	assert.Equal(t, "H99999", read(t, c, catalog+"/headings.md/pages/99999")["title"])
	assert.EqualValues(t, 1, docs["oneline.md"]["page_count"])
	assert.Equal(t, "fine", docs["ok.md"]["summary"])
}
