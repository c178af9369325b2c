package finder

import (
	"errors"
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// cachedIndex builds the index the Aggregator keeps, from summaries whose
// URIs the aggregator would have selected.
func cachedIndex(docs []protocol.DPEDocumentSummary) index {
	ix := index{byServer: map[string][]*entry{}}
	for _, d := range docs {
		if _, ok := selectDocument(d.URI); !ok {
			continue
		}
		if _, ok := ix.byServer[d.Server]; !ok {
			ix.servers = append(ix.servers, d.Server)
		}
		ix.byServer[d.Server] = append(ix.byServer[d.Server], cached(d))
	}
	slices.Sort(ix.servers)
	for _, es := range ix.byServer {
		arrange(es)
	}
	return ix
}

func parseDPE(s string) (any, error) {
	if !dpe.IsValid(s) {
		return nil, errInvalid
	}
	return nil, nil
}

var errInvalid = errors.New("invalid")

func lower(s string) string       { return strings.ToLower(s) }
func contains(s, sub string) bool { return strings.Contains(s, sub) }
func join(ss []string) string     { return strings.Join(ss, " ") }
func sortStrings(ss []string)     { slices.Sort(ss) }
