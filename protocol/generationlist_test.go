package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestParseGenerationList(t *testing.T) {
	gens, err := protocol.ParseGenerationList(" 0.4, 0.2.0,0.4.2 ,")
	require.NoError(t, err)
	require.Equal(t, []protocol.Generation{protocol.Gen04, protocol.Gen02}, gens)
	require.Equal(t, "0.4,0.2", protocol.GenerationList(gens))
	for _, bad := range []string{"", " , ", "0.5", "x", "0.4,1.0"} {
		_, err := protocol.ParseGenerationList(bad)
		require.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err), "%q", bad)
	}
}
