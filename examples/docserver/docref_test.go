package docserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

func TestDocRef(t *testing.T) {
	cases := []struct{ rel, want string }{
		{"report.md", "report.md"},
		{"reports/q3.md", "reports~q3.md"},
		{"a/b/c_d-e.f.csv", "a~b~c_d-e.f.csv"},
		{"Q3 report (final).md", "Q3_report_final_.md~~"},
		{"年报/2026.xlsx", "_~2026.xlsx~~"},
		{"a~b.md", "a_b.md~~"},
		{"a/b.md", "a~b.md"},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		got := docserver.DocRef(tc.rel)
		if strings.HasSuffix(tc.want, "~~") {
			assert.True(t, strings.HasPrefix(got, tc.want), "%s → %s", tc.rel, got)
			assert.Len(t, got, len(tc.want)+12, "%s → %s", tc.rel, got)
		} else {
			assert.Equal(t, tc.want, got, tc.rel)
		}
		assert.Equal(t, got, docserver.DocRef(tc.rel), "stable")
		for _, c := range got {
			assert.True(t, c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c),
				"%q holds %q, not URL-unreserved", got, c)
		}
		// One dpe:// path segment, needing no escaping.
		u, err := dpe.Parse("dpe://local.docs/" + got + "/pages/0")
		require.NoError(t, err, got)
		assert.Equal(t, got, u.DocRef)
		assert.Equal(t, "dpe://local.docs/"+got+"/pages/0", u.String())
		if prev, dup := seen[got]; dup {
			t.Errorf("%q and %q both map to %q", prev, tc.rel, got)
		}
		seen[got] = tc.rel
	}
	// "a~b.md" (lossy) and "a/b.md" (plain) must differ.
	assert.NotEqual(t, docserver.DocRef("a~b.md"), docserver.DocRef("a/b.md"))
	// Many similar lossy names stay distinct.
	refs := map[string]bool{}
	for i := range 1000 {
		refs[docserver.DocRef(fmt.Sprintf("dir %d/file %d.md", i%10, i))] = true
	}
	assert.Len(t, refs, 1000)
}
