package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio"
)

// Sentinels matched with errors.Is. The error a call returns for them is
// still a *protocol.Error (errors.As, protocol.CodeOf) with the code given
// here, and it also wraps its cause (protocol.Error.Wrap: errors.As finds a
// *net.OpError, and errors.Is the context's error, where there is one).
var (
	// ErrClosed: the call was made on, or interrupted by, a Client that
	// Close has shut down (500).
	ErrClosed = errors.New("agent: client closed")
	// ErrConnectionLost: the connection to the Server dropped before the
	// answer, or the Server ended the session for good ("io server
	// disconnect", after which the Socket.IO client does not reconnect)
	// (503: the same request may succeed once the Client has reconnected;
	// a tool call may have run).
	ErrConnectionLost = errors.New("agent: connection to the server lost")
	// ErrUnreachable: Dial could not reach the Server — the connection was
	// refused, the address did not answer, the name did not resolve, the
	// handshake failed (503). The same value as sio.ErrUnreachable.
	ErrUnreachable = sio.ErrUnreachable
	// ErrInvalidAnswer: the answer broke its schema (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md: every
	// ack has one), had the wrong number of values or another request's
	// req_id (500).
	ErrInvalidAnswer = errors.New("agent: invalid answer")
)

// wrap returns perr wrapping causes (nil ones dropped): errors.As finds
// perr, errors.Is and errors.As the causes.
func wrap(perr *protocol.Error, causes ...error) error { return perr.Wrap(causes...) }

// amend returns err with its *protocol.Error replaced by f's copy of it,
// keeping what err wraps (errors.As finds the new *protocol.Error first).
func amend(err error, f func(perr *protocol.Error) *protocol.Error) error {
	return f(protocol.AsError(err)).Wrap(err)
}

// isTransportFailure reports whether err is the Client's own failure to
// get an answer — closed, connection lost, Server unreachable, context or
// deadline ended — rather than a refusal the Server or a Computer answered.
// A refusal answered with a retryable code (429, 503) may be sent again; a
// transport failure of a tool call may not (the tool may have run).
func isTransportFailure(err error) bool {
	return errors.Is(err, ErrClosed) || errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrUnreachable) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func closedError(event string) error {
	return wrap(protocol.Errorf(protocol.CodeInternal, "%s: client closed", event).With("event", event), ErrClosed)
}

func connectionLostError(event, why string) error {
	return wrap(protocol.Errorf(protocol.CodeUnavailable, "%s: connection to the server lost: %s", event, why).With("event", event), ErrConnectionLost)
}

// contextError reports a request the Client stopped waiting for because
// its context ended: 408, wrapping ctx.Err() — context.Canceled when the
// caller cancelled, context.DeadlineExceeded when the caller's deadline or
// the Client's own bound (WithTimeout, the tool timeout and
// ToolCallGrace) passed. A Server's 408 answer wraps neither.
func contextError(event string, ctx context.Context, what string) error {
	cause := ctx.Err()
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	msg := event + ": deadline exceeded"
	if errors.Is(cause, context.Canceled) {
		msg = event + ": canceled by the caller"
	}
	if what != "" {
		msg += " " + what
	}
	return wrap(protocol.Errorf(protocol.CodeTimeout, "%s", msg).With("event", event), cause)
}

// invalidAnswer reports an answer that breaks its contract. It is a 500 and
// not the 400 protocol.Validate returns, because the request was fine: the
// answering side is at fault. The violations found by the validator are kept
// in the details.
func invalidAnswer(event string, cause error) error {
	perr := protocol.Errorf(protocol.CodeInternal, "invalid answer to %s: %v", event, cause).With("event", event)
	var verr *protocol.Error
	if errors.As(cause, &verr) {
		if v, ok := verr.Details["violations"]; ok {
			perr = perr.With("violations", v)
		}
		perr.Message = fmt.Sprintf("invalid answer to %s: %s", event, verr.Message)
	}
	return wrap(perr, ErrInvalidAnswer)
}

// dialError turns a failed first connection into the Client's error:
//   - the Server refused the connection (its authentication): the code its
//     refusal carried ({"code": 401}), else 500;
//   - the Server could not be reached, at once or in every attempt until
//     the deadline: 503 matching ErrUnreachable, wrapping the cause (a
//     *net.OpError for a refused or silent address) and, when the deadline
//     ended the attempts, context.DeadlineExceeded;
//   - the caller cancelled, or the deadline passed while an attempt was
//     still under way: 408 wrapping ctx.Err().
func dialError(ctx context.Context, nsURL string, err error) error {
	var ce *sio.ConnectError
	if !errors.As(err, &ce) {
		return wrap(protocol.Errorf(protocol.CodeInternal, "connect to %s: %v", nsURL, err).With("url", nsURL), err)
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
		return wrap(out.With("url", nsURL), ce)
	case errors.Is(ctx.Err(), context.Canceled) || ctx.Err() != nil && !errors.Is(ce, ErrUnreachable):
		return wrap(protocol.Errorf(protocol.CodeTimeout, "connect to %s: %s", nsURL, ce.Message).With("url", nsURL), ctx.Err(), ce)
	}
	return wrap(protocol.Errorf(protocol.CodeUnavailable, "connect to %s: %s", nsURL, ce.Message).With("url", nsURL), ce, ctx.Err())
}

// officeRefusal turns the (false, reason) answer of server:join_office or
// server:leave_office into an error, with the reason's code when it starts
// with one (protocol.ParseRefusal), else a 403.
func officeRefusal(event, reason string) *protocol.Error {
	code, msg := protocol.ParseRefusal(reason)
	if msg == "" {
		msg = "refused"
	}
	return protocol.Errorf(code, "%s refused: %s", event, msg).With("event", event).With("reason", reason)
}
