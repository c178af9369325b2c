package sio

import (
	"context"
	"errors"
	"fmt"
)

// ErrUnreachable is matched (errors.Is) by a *ConnectError for a Server
// that could not be reached: its address refused the TCP connection, had
// no route, did not resolve, or did not answer within the attempt's bound;
// or what answered did not complete the Engine.IO handshake (a proxy's
// error page, a server that is not Socket.IO).
var ErrUnreachable = errors.New("server unreachable")

// ConnectError is a failed connection. Refused is set when the Server
// refused the namespace connection (its authentication); Code is then the
// code its error data carried ({"code": 401}), 0 when none. Err is the
// cause: the dial's error for an unreachable Server, the context's error
// when the context ended first, the refusal otherwise; Last is the last
// failed attempt's error when the context ended while attempts were
// failing.
type ConnectError struct {
	URL     string
	Refused bool
	Code    int
	Message string
	Err     error
	Last    error
}

func (e *ConnectError) Error() string {
	if e.Refused {
		return fmt.Sprintf("connection to %s refused by the server: %s", e.URL, e.Message)
	}
	return fmt.Sprintf("connect to %s: %s", e.URL, e.Message)
}

// Unwrap returns Err and Last.
func (e *ConnectError) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Err, e.Last} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// Is matches ErrUnreachable for a connection that failed neither by a
// refusal nor because the context ended.
func (e *ConnectError) Is(target error) bool {
	return target == ErrUnreachable && !e.Refused && e.Err != nil &&
		!errors.Is(e.Err, context.Canceled) && !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, ErrClosed)
}
