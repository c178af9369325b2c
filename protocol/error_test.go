package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestParseRefusal(t *testing.T) {
	for _, tc := range []struct {
		reason string
		code   protocol.Code
		msg    string
	}{
		{protocol.NewRoomFull("office %q already has an agent", "o1").Error(), protocol.CodeRoomFull, `office "o1" already has an agent`},
		{"429 TooManyRequests: office o1 is over its event budget", protocol.CodeTooManyRequests, "office o1 is over its event budget"},
		{"429 something else", protocol.CodeTooManyRequests, "something else"},
		{"not allowed", protocol.CodeForbidden, "not allowed"},
		{"12345 Nope: x", protocol.CodeForbidden, "12345 Nope: x"},
		{"", protocol.CodeForbidden, ""},
	} {
		code, msg := protocol.ParseRefusal(tc.reason)
		require.Equal(t, tc.code, code, tc.reason)
		require.Equal(t, tc.msg, msg, tc.reason)
	}
}

func TestRetryable(t *testing.T) {
	for code, want := range map[protocol.Code]bool{
		protocol.CodeTooManyRequests: true,
		protocol.CodeUnavailable:     true,
		protocol.CodeForbidden:       false,
		protocol.CodeRoomFull:        false,
		protocol.CodeTimeout:         false,
		protocol.CodeInternal:        false,
	} {
		require.Equal(t, want, code.Retryable(), "%d", code)
	}
}
