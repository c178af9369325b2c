package agent

import (
	"errors"
	"fmt"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Sentinels matched with errors.Is. The error a call returns for them is
// still a *protocol.Error (code 500), so errors.As and protocol.CodeOf work
// as for every other failure.
var (
	// ErrClosed: the call was made on, or interrupted by, a Client that
	// Close has shut down.
	ErrClosed = errors.New("agent: client closed")
	// ErrConnectionLost: the connection to the Server dropped before the
	// answer arrived, or the Server ended the session for good ("io server
	// disconnect", after which the Socket.IO client does not reconnect).
	ErrConnectionLost = errors.New("agent: connection to the server lost")
	// ErrInvalidAnswer: the answer broke its schema (spec/protocol.md: every
	// ack has one), had the wrong number of values or another request's req_id.
	ErrInvalidAnswer = errors.New("agent: invalid answer")
)

// callError is a *protocol.Error that also matches one of the sentinels.
type callError struct {
	perr     *protocol.Error
	sentinel error
}

func (e *callError) Error() string   { return e.perr.Error() }
func (e *callError) Unwrap() []error { return []error{e.perr, e.sentinel} }

func withSentinel(perr *protocol.Error, sentinel error) error {
	return &callError{perr: perr, sentinel: sentinel}
}

func closedError(event string) error {
	return withSentinel(protocol.Errorf(protocol.CodeInternal, "%s: client closed", event).With("event", event), ErrClosed)
}

func connectionLostError(event, why string) error {
	return withSentinel(protocol.Errorf(protocol.CodeInternal, "%s: connection to the server lost: %s", event, why).With("event", event), ErrConnectionLost)
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
	return withSentinel(perr, ErrInvalidAnswer)
}

func timeoutError(event string, after string) *protocol.Error {
	return protocol.Errorf(protocol.CodeTimeout, "%s: no answer %s", event, after).With("event", event)
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
