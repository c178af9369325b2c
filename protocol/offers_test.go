package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestOffers(t *testing.T) {
	computer := func(version string, ext ...string) protocol.SessionInfo {
		return protocol.SessionInfo{Role: protocol.RoleComputer, Name: "c", A2CVersion: version, Extensions: ext}
	}
	tests := []struct {
		name   string
		s      protocol.SessionInfo
		event  string
		offers bool
	}{
		{"0.2.0 without a list answers its extensions", computer("0.2.0"), protocol.EventReadResource, true},
		{"no version is 0.2.0", computer(""), protocol.EventGetFinder, true},
		{"0.2.0 with a list answers what it lists", computer("0.2.0", protocol.EventGetFinder), protocol.EventComplete, false},
		{"0.2.0 core event", computer("0.2.0", protocol.EventGetFinder), protocol.EventGetTools, true},
		{"0.4 reference Computer has no Finder", computer("0.4.2"), protocol.EventGetFinder, false},
		{"0.4 core event", computer("0.4.2"), protocol.EventGetSkills, true},
		{"0.4 declared extension", computer("0.4.0", protocol.EventGetFinder, protocol.EventReadResource), protocol.EventGetFinder, true},
		{"0.3 is served as 0.4", computer("0.3.1"), protocol.EventGetFinder, false},
		{"an unknown version offers what it declared", computer("9.9.9", protocol.EventComplete), protocol.EventComplete, true},
		{"an Agent offers nothing", protocol.SessionInfo{Role: protocol.RoleAgent, Name: "a"}, protocol.EventGetTools, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.offers, protocol.Offers(tt.s, tt.event))
		})
	}
	assert.True(t, protocol.OffersFinder(computer("0.2.0")))
	assert.False(t, protocol.OffersFinder(computer("0.4.2")))
	assert.False(t, protocol.OffersFinder(computer("0.4.0", protocol.EventGetFinder)), "a catalog it cannot read is no Finder")
	assert.True(t, protocol.OffersFinder(computer("0.4.0", protocol.EventGetFinder, protocol.EventReadResource)))
}

// TestGenerationAnswers is the routing rule of spec/generations.md
// (Extensions a Computer offers) that the Server and Offers share.
func TestGenerationAnswers(t *testing.T) {
	require.True(t, protocol.Gen02.Answers(protocol.EventReadResource, nil), "0.2 Computers that declare nothing keep read_resource")
	require.False(t, protocol.Gen02.Answers(protocol.EventReadResource, []string{}))
	require.False(t, protocol.Gen04.Answers(protocol.EventGetFinder, nil))
	require.True(t, protocol.Gen04.Answers(protocol.EventGetFinder, []string{protocol.EventGetFinder}))
	require.False(t, protocol.Gen03.Answers(protocol.EventPutBlob, nil))
	require.True(t, protocol.Gen03.Answers(protocol.EventGetBlob, nil))
	require.True(t, protocol.Gen02.Answers(protocol.EventGetSkills, []string{protocol.EventGetSkills}))
}
