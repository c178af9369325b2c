package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// cmdComplete prints the completions of a partly typed dpe:// URI (one
// whole URI a line), or with --prompt NAME or --template URI-TEMPLATE of
// the argument ARG typed so far as VALUE (client:complete,
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion).
// The shell completion scripts (completion bash|zsh) call it.
func cmdComplete(ctx context.Context, e *env, args []string) error {
	if e.o.prompt != "" || e.o.template != "" {
		return completeArgument(ctx, e, args)
	}
	if len(args) != 1 {
		return usagef("usage: smcp-agent complete URI-PREFIX, or complete --prompt NAME|--template URI-TEMPLATE ARG [VALUE]")
	}
	partial := args[0]
	q, ok := agent.ParseDPEPartial(partial)
	if !ok {
		return e.printValues(nil, false)
	}
	var computers []string
	switch {
	case e.o.computer != "":
		computers = []string{e.o.computer}
	case q.Hosts:
		// The host is being typed: every Computer's catalog may hold it.
		sessions, err := e.client.ListRoom(ctx)
		if err != nil {
			return err
		}
		computers = finderComputers(sessions)
	default:
		c, err := resolveComputer(ctx, e, "dpe://"+q.Host)
		if err != nil {
			return err
		}
		computers = []string{c}
	}
	var all []string
	more := false
	for _, c := range computers {
		uris, hasMore, err := e.client.CompleteDPE(ctx, c, partial)
		if err != nil {
			return noFinder(err, c)
		}
		all = append(all, uris...)
		more = more || hasMore
	}
	slices.Sort(all)
	return e.printValues(slices.Compact(all), more)
}

func completeArgument(ctx context.Context, e *env, args []string) error {
	if len(args) < 1 || len(args) > 2 || e.o.prompt != "" && e.o.template != "" {
		return usagef("usage: smcp-agent complete --prompt NAME|--template URI-TEMPLATE ARG [VALUE]")
	}
	arg := protocol.CompleteReqArgument{Name: args[0]}
	if len(args) == 2 {
		arg.Value = args[1]
	}
	ref := agent.PromptRef(e.o.prompt)
	if e.o.template != "" {
		ref = agent.ResourceRef(e.o.template)
	}
	chosen := map[string]string{}
	for _, kv := range splitList(e.o.chosen) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--context: want NAME=VALUE[,NAME=VALUE...]: %q", kv)
		}
		chosen[k] = v
	}
	computer := e.o.computer
	if computer == "" {
		sessions, err := e.client.ListRoom(ctx)
		if err != nil {
			return err
		}
		names := agent.ComputerNames(sessions)
		if len(names) != 1 {
			return protocol.NewBadRequest("office %s has %d Computers: choose one with --computer", e.g.office, len(names))
		}
		computer = names[0]
	}
	res, err := e.client.Complete(ctx, computer, ref, arg, agent.WithChosen(chosen))
	if err != nil {
		return err
	}
	return e.printValues(res.Values, res.HasMore != nil && *res.HasMore)
}

// printValues prints completion values one a line, or as JSON.
func (e *env) printValues(values []string, hasMore bool) error {
	if values == nil {
		values = []string{}
	}
	if e.g.json {
		return e.printJSON(map[string]any{"values": values, "hasMore": hasMore})
	}
	for _, v := range values {
		fmt.Fprintln(e.out, v)
	}
	return nil
}
