package main

import (
	"context"
	"strings"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// resolveComputer picks the Computer to read uri through: --computer when
// given; else the office's only Computer that offers the Finder (the only
// Computer when none does); else the one of them whose
// catalog (client:get_finder, every page) holds a document of the URI's
// host. Several candidates are an error naming them.
func resolveComputer(ctx context.Context, e *env, uri string) (string, error) {
	if e.o.computer != "" {
		return e.o.computer, nil
	}
	u, err := dpe.Parse(uri)
	if err != nil {
		return "", err
	}
	sessions, err := e.client.ListRoom(ctx)
	if err != nil {
		return "", err
	}
	// Only Computers that offer the Finder can read a dpe:// URI; with
	// none, the office's only Computer is tried and explains itself.
	computers := finderComputers(sessions)
	if len(computers) == 0 {
		computers = agent.ComputerNames(sessions)
	}
	switch len(computers) {
	case 0:
		return "", protocol.NewNotFound("office %s has no Computer", e.g.office)
	case 1:
		return computers[0], nil
	}
	var holders []string
	var firstErr error
	for _, name := range computers {
		has, err := catalogHasHost(ctx, e.client, name, u.Host)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if has {
			holders = append(holders, name)
		}
	}
	switch {
	case len(holders) == 1:
		return holders[0], nil
	case len(holders) > 1:
		return "", protocol.NewBadRequest("dpe://%s is in the catalogs of several Computers (%s): choose one with --computer",
			u.Host, strings.Join(holders, ", ")).With("computers", holders)
	case firstErr != nil:
		return "", firstErr
	}
	return "", protocol.NewNotFound("no Computer of office %s has dpe://%s in its catalog (Computers: %s): choose one with --computer",
		e.g.office, u.Host, strings.Join(computers, ", ")).With("computers", computers)
}

// catalogHasHost walks a Computer's catalog looking for a document of host.
func catalogHasHost(ctx context.Context, c *agent.Client, computer, host string) (bool, error) {
	for doc, err := range c.Documents(ctx, computer, agent.FinderQuery{}) {
		if err != nil {
			return false, err
		}
		if du, err := dpe.Parse(doc.URI); err == nil && du.Host == host {
			return true, nil
		}
	}
	return false, nil
}

// finderComputers are the names of the Computers that offer the Finder
// (protocol.OffersFinder), sorted as server:list_room lists them.
func finderComputers(sessions []protocol.SessionInfo) []string {
	var out []string
	for _, s := range sessions {
		if protocol.OffersFinder(s) {
			out = append(out, s.Name)
		}
	}
	return out
}
