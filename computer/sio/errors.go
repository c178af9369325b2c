package sio

import (
	"context"
	"errors"

	"github.com/a2c-smcp/smcp-go/protocol"
	conn "github.com/a2c-smcp/smcp-go/sio"
)

// ErrUnreachable is matched (errors.Is) by a Dial whose Server could not be
// reached; the same value as the shared connection's sio.ErrUnreachable
// (and agent.ErrUnreachable).
var ErrUnreachable = conn.ErrUnreachable

func wrap(perr *protocol.Error, causes ...error) error { return perr.Wrap(causes...) }

// dialError turns a failed connection into Dial's error, by the same rule
// as the Agent's (spec/decisions.md, Errors of the clients):
//   - the Server refused the connection (its authentication): the code its
//     refusal carried ({"code": 401}), else 500;
//   - the Server could not be reached, at once or in every attempt until
//     the deadline: 503 matching ErrUnreachable, wrapping the cause (a
//     *net.OpError for a refused or silent address) and, when the deadline
//     ended the attempts, context.DeadlineExceeded;
//   - the caller cancelled, or the deadline passed while an attempt was
//     still under way: 408 wrapping ctx.Err().
func dialError(ctx context.Context, nsURL, office string, err error) error {
	var ce *conn.ConnectError
	if !errors.As(err, &ce) {
		return wrap(protocol.NewInternal("connect to %s: %v", nsURL, err), err)
	}
	switch {
	case ce.Refused:
		code := protocol.CodeInternal
		if ce.Code != 0 {
			code = protocol.Code(ce.Code)
		}
		out := protocol.Errorf(code, "connection refused by the server: %s", ce.Message)
		var pe *protocol.Error
		if errors.As(ce.Err, &pe) {
			// The Server's own error (a 4008 names its supported range).
			out.Details, out.Fields = pe.Details, pe.Fields
		}
		return wrap(out, ce)
	case errors.Is(ctx.Err(), context.Canceled) || ctx.Err() != nil && !errors.Is(ce, ErrUnreachable):
		return wrap(protocol.Errorf(protocol.CodeTimeout, "connect to %s and join office %q: %s", nsURL, office, ce.Message), ctx.Err(), ce)
	}
	return wrap(protocol.Errorf(protocol.CodeUnavailable, "connect to %s: %s", nsURL, ce.Message), ce, ctx.Err())
}
