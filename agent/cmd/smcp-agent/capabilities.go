package main

import (
	"errors"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// finderCell says in the room table whether a Computer offers the Finder
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#confirmation-and-extensions):
// "yes", "no" (a reference 0.4 Computer), "-" for an Agent.
func finderCell(s protocol.SessionInfo) string {
	switch {
	case s.Role != protocol.RoleComputer:
		return "-"
	case protocol.OffersFinder(s):
		return "yes"
	}
	return "no"
}

// noFinder explains a 4106 answer to a Finder request (catalog, reads,
// completion): the Computer does not offer the Finder, an smcp-go
// extension. The code stays 4106; other errors pass unchanged.
func noFinder(err error, computer string) error {
	var perr *protocol.Error
	if !errors.As(err, &perr) || perr.Code != protocol.CodeNotSupported {
		return err
	}
	out := protocol.Errorf(protocol.CodeNotSupported,
		"computer %q does not offer the Finder (dpe:// documents are an smcp-go extension, which reference 0.4 Computers lack; "+
			"smcp-agent room shows which Computers offer it): %s", computer, perr.Message)
	out.Details = perr.Details
	return out
}
