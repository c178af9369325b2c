package protocol

// Wrap returns an error that is e for errors.As, CodeOf and AsError, whose
// text is e's, and that also wraps causes (nil ones are dropped) for
// errors.Is and errors.As: the context's error of a request the caller
// stopped waiting for, the network's error of a Server that cannot be
// reached, a sentinel of the SDK. So one value carries both the protocol
// code a caller branches on and what caused it:
//
//	err := protocol.Errorf(protocol.CodeTimeout, "no answer").Wrap(ctx.Err())
//	protocol.CodeOf(err)                  // 408
//	errors.Is(err, context.Canceled)      // true when the caller cancelled
//
// The causes never travel on the wire: an answer carries e alone.
func (e *Error) Wrap(causes ...error) error {
	w := &wrapped{e: e}
	for _, c := range causes {
		if c != nil {
			w.causes = append(w.causes, c)
		}
	}
	return w
}

// wrapped is an *Error with its causes.
type wrapped struct {
	e      *Error
	causes []error
}

func (w *wrapped) Error() string { return w.e.Error() }

// Unwrap returns the *Error first, then the causes, so that errors.As finds
// this *Error before any the causes hold.
func (w *wrapped) Unwrap() []error { return append([]error{w.e}, w.causes...) }
