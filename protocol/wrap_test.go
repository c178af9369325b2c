package protocol_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

type dialError struct{ addr string }

func (e *dialError) Error() string { return "dial " + e.addr + ": connection refused" }

func TestErrorWrap(t *testing.T) {
	cause := &dialError{"127.0.0.1:1"}
	sentinel := errors.New("unreachable")
	err := protocol.Errorf(protocol.CodeUnavailable, "connect: refused").Wrap(nil, sentinel, cause, context.DeadlineExceeded)
	require.Equal(t, "503 Unavailable: connect: refused", err.Error())
	require.Equal(t, protocol.CodeUnavailable, protocol.CodeOf(err))
	require.ErrorIs(t, err, sentinel)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, &protocol.Error{Code: protocol.CodeUnavailable})
	var de *dialError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "connect: refused", protocol.AsError(err).Message)

	// Wrapping again with another *Error: errors.As finds the outer one,
	// errors.Is still finds the inner causes.
	outer := protocol.Errorf(protocol.CodeTimeout, "gave up").Wrap(err)
	require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(outer))
	require.ErrorIs(t, outer, sentinel)
	require.Equal(t, "408 Timeout: gave up", outer.Error())
}
