package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// defaultServer matches smcp-server's default listen address.
const defaultServer = "http://127.0.0.1:8080"

// globals are the flags every command accepts.
type globals struct {
	server, office, name, apiKey, logLevel string
	versions                               string
	timeout                                time.Duration
	json, verbose                          bool
}

// register adds the global flags to fs with the current values as
// defaults (so registering them again after a first parse keeps what was
// parsed). The API key is a secretFlag: -h never prints it.
func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.server, "server", g.server, "Server URL (env SMCP_SERVER)")
	fs.StringVar(&g.office, "office", g.office, "office to join (env SMCP_OFFICE)")
	fs.StringVar(&g.name, "name", g.name, "agent name (env SMCP_AGENT_NAME)")
	fs.Var(secretFlag{&g.apiKey}, "api-key", "API key (env SMCP_API_KEY)")
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "timeout of each request")
	fs.StringVar(&g.versions, "protocol-versions", g.versions, "protocol generations spoken (MAJOR.MINOR, comma-separated): the first is named in the handshake, the others tried once when the Server refuses it; one pins it (env SMCP_PROTOCOL_VERSIONS)")
	fs.BoolVar(&g.json, "json", g.json, "print JSON")
	fs.StringVar(&g.logLevel, "log-level", g.logLevel, "log to stderr from this level: debug, info, warn, error (env SMCP_LOG_LEVEL; default: no log)")
	fs.BoolVar(&g.verbose, "verbose", g.verbose, "log to stderr from debug level (--log-level debug)")
}

// secretFlag is a string flag whose value -h never shows (its String is
// empty), for values such as an API key that the environment may supply.
type secretFlag struct{ p *string }

func (s secretFlag) String() string { return "" }
func (s secretFlag) Set(v string) error {
	*s.p = v
	return nil
}

// command is one subcommand.
type command struct {
	name, args, help string
	// flags registers the command's own flags.
	flags func(fs *flag.FlagSet, o *opts)
	// nargs is the number of positional arguments: min and max (-1: any).
	min, max int
	run      func(ctx context.Context, e *env, args []string) error
	// local commands need no Server (completion).
	local bool
}

// opts holds every command's own flags.
type opts struct {
	params        string
	toolTimeout   time.Duration
	size          int
	window        string
	keywords      string
	fileType      string
	offset, limit int
	pages         bool
	computer      string
	format        string
	categories    string
	prompt        string
	template      string
	chosen        string
	output        string
	name          string
}

// env is what a running command works with.
type env struct {
	g      globals
	o      opts
	fs     *flag.FlagSet
	client *agent.Client
	out    io.Writer
	errOut io.Writer
	// set tells which flags were given on the command line.
	set map[string]bool
	// watch serialises the output of the watch command.
	watch *watcher
}

func commands() []*command {
	return []*command{
		{name: "room", help: "list the sessions of the office", run: cmdRoom},
		{name: "tools", args: "[COMPUTER]", help: "list the tools of a Computer, or of every Computer", max: 1, run: cmdTools},
		{name: "call", args: "COMPUTER TOOL [NAME=TEXT | NAME:=JSON ...]", help: "call a tool with arguments NAME=TEXT (a string), NAME:=JSON (a number, true, an object...) or --params JSON",
			min: 2, max: -1, run: cmdCall, flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.params, "params", "{}", "tool arguments as a JSON object (NAME=... arguments are added to it)")
				fs.DurationVar(&o.toolTimeout, "tool-timeout", agent.DefaultToolTimeout, "tool timeout")
			}},
		{name: "desktop", args: "COMPUTER", help: "show a Computer's desktop", min: 1, max: 1, run: cmdDesktop, flags: func(fs *flag.FlagSet, o *opts) {
			fs.IntVar(&o.size, "size", -1, "number of windows (default all)")
			fs.StringVar(&o.window, "window", "", "one window:// URI")
		}},
		{name: "finder", args: "COMPUTER", help: "list a Computer's documents", min: 1, max: 1, run: cmdFinder, flags: func(fs *flag.FlagSet, o *opts) {
			fs.StringVar(&o.keywords, "keywords", "", "comma-separated keywords (any matches)")
			fs.StringVar(&o.fileType, "file-type", "", "file type, e.g. pdf")
			fs.IntVar(&o.offset, "offset", 0, "first document")
			fs.IntVar(&o.limit, "limit", 0, "number of documents, 1-100 (default 20)")
		}},
		{name: "open", args: "URI", help: "show a document's metadata, or its page index with --pages", min: 1, max: 1, run: cmdOpen, flags: func(fs *flag.FlagSet, o *opts) {
			fs.BoolVar(&o.pages, "pages", false, "include the page index")
			fs.IntVar(&o.offset, "offset", 0, "first page of the index")
			fs.IntVar(&o.limit, "limit", 0, "pages in the index, 1-100 (default 20)")
			fs.StringVar(&o.computer, "computer", "", "Computer to read through")
		}},
		{name: "page", args: "URI N", help: "show page N of a document", min: 2, max: 2, run: cmdPage, flags: func(fs *flag.FlagSet, o *opts) {
			fs.StringVar(&o.format, "format", "markdown", "markdown, text or json (the page object, as --json prints it)")
			fs.StringVar(&o.categories, "categories", "", "comma-separated element categories to keep")
			fs.StringVar(&o.computer, "computer", "", "Computer to read through")
		}},
		{name: "element", args: "URI ID", help: "show one element of a document", min: 2, max: 2, run: cmdElement, flags: func(fs *flag.FlagSet, o *opts) {
			fs.StringVar(&o.computer, "computer", "", "Computer to read through")
		}},
		{name: "resources", args: "COMPUTER BUNDLE", help: "list the resources of a Computer's MCP server (by bundle id), every page", min: 2, max: 2, run: cmdResources},
		{name: "skills", args: "COMPUTER", help: "list a Computer's skills", min: 1, max: 1, run: cmdSkills},
		{name: "skill", args: "COMPUTER NAME [PATH]", help: "print a file of a skill: SKILL.md, or PATH relative to the skill's folder", min: 2, max: 3, run: cmdSkill,
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.output, "output", "", "write the file here instead of stdout")
				fs.StringVar(&o.output, "o", "", "short for --output")
			}},
		{name: "blob", args: "get COMPUTER HANDLE -o FILE | put COMPUTER FILE [--as NAME]", help: "download a blob to a file (size and sha256 checked), or upload a file to the Computer's landing root",
			min: 3, max: 3, run: cmdBlob, flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.output, "output", "", "blob get: the file to write")
				fs.StringVar(&o.output, "o", "", "short for --output")
				fs.StringVar(&o.name, "as", "", "blob put: the name to land as, the Computer sanitises it (default the file's base name; --name is the Agent's)")
			}},
		{name: "watch", help: "print the office's notifications until interrupted", run: cmdWatch},
		{name: "complete", args: "URI-PREFIX | ARG [VALUE]", help: "complete a dpe:// URI, or with --prompt or --template an argument of a Computer's MCP server",
			min: 1, max: 2, run: cmdComplete, flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.computer, "computer", "", "Computer to ask")
				fs.StringVar(&o.prompt, "prompt", "", "complete ARG of this prompt")
				fs.StringVar(&o.template, "template", "", "complete ARG of this resource URI template")
				fs.StringVar(&o.chosen, "context", "", "arguments already chosen: NAME=VALUE[,NAME=VALUE...]")
			}},
		{name: "completion", args: "bash|zsh", help: "print the shell completion script (source <(smcp-agent completion bash))",
			min: 1, max: 1, run: cmdCompletion, local: true},
	}
}

// usageError is a command-line mistake (exit 2).
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// run executes the command line args and returns the exit code. getenv
// supplies the environment (os.Getenv in main).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	g := globals{
		server:   getenv("SMCP_SERVER"),
		office:   getenv("SMCP_OFFICE"),
		name:     getenv("SMCP_AGENT_NAME"),
		apiKey:   getenv("SMCP_API_KEY"),
		logLevel: getenv("SMCP_LOG_LEVEL"),
		versions: getenv("SMCP_PROTOCOL_VERSIONS"),
		timeout:  agent.DefaultTimeout,
	}
	if g.versions == "" {
		gens := protocol.Generations()
		slices.Reverse(gens)
		g.versions = protocol.GenerationList(gens)
	}
	if g.server == "" {
		g.server = defaultServer
	}
	if g.name == "" {
		g.name = agent.DefaultName
	}
	top := flag.NewFlagSet("smcp-agent", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	top.Usage = func() {} // -h: printed once, on stdout, below
	g.register(top)
	cmds := commands()
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout, top, cmds)
			return exitOK
		}
		return fail(stderr, usagef("%v", err))
	}
	if top.NArg() == 0 {
		printUsage(stderr, top, cmds)
		return exitUsage
	}
	name := top.Arg(0)
	var cmd *command
	for _, c := range cmds {
		if c.name == name {
			cmd = c
		}
	}
	if cmd == nil {
		return fail(stderr, usagef("unknown command %q (run smcp-agent -h)", name))
	}

	e := &env{out: stdout, errOut: stderr, set: map[string]bool{}}
	fs := flag.NewFlagSet("smcp-agent "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	g.register(fs)
	if cmd.flags != nil {
		cmd.flags(fs, &e.o)
	}
	e.fs = fs
	pos, err := parseInterleaved(fs, top.Args()[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandUsage(stdout, cmd, fs)
			return exitOK
		}
		return fail(stderr, usagef("%s: %v", cmd.name, err))
	}
	top.Visit(func(f *flag.Flag) { e.set[f.Name] = true })
	fs.Visit(func(f *flag.Flag) { e.set[f.Name] = true })
	if len(pos) < cmd.min || cmd.max >= 0 && len(pos) > cmd.max {
		return fail(stderr, usagef("usage: smcp-agent %s %s", cmd.name, cmd.args))
	}
	e.g = g
	if cmd.local {
		if err := cmd.run(ctx, e, pos); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	if g.office == "" {
		return fail(stderr, usagef("no office: give --office or set SMCP_OFFICE"))
	}
	if g.timeout <= 0 {
		return fail(stderr, usagef("--timeout must be positive"))
	}

	level := slog.LevelError + 100 // silent
	switch {
	case g.verbose:
		level = slog.LevelDebug
	case g.logLevel != "":
		if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
			return fail(stderr, usagef("--log-level: want debug, info, warn or error: %q", g.logLevel))
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	gens, err := protocol.ParseGenerationList(g.versions)
	if err != nil {
		return fail(stderr, usagef("--protocol-versions: %s", protocol.AsError(err).Message))
	}
	dialOpts := []agent.Option{agent.WithName(g.name), agent.WithLogger(logger), agent.WithTimeout(g.timeout), agent.WithGenerations(gens...)}
	if g.apiKey != "" {
		dialOpts = append(dialOpts, agent.WithAPIKey(g.apiKey))
	}
	if cmd.name == "watch" {
		dialOpts = append(dialOpts, watchOptions(e)...)
	}
	dialCtx, cancel := context.WithTimeout(ctx, g.timeout)
	c, err := agent.Dial(dialCtx, g.server, dialOpts...)
	cancel()
	if err != nil {
		return failCtx(ctx, stderr, err)
	}
	defer c.Close()
	e.client = c
	if err := c.JoinOffice(ctx, g.office); err != nil {
		return failCtx(ctx, stderr, err)
	}
	if err := cmd.run(ctx, e, pos); err != nil {
		return failCtx(ctx, stderr, err)
	}
	return exitOK
}

// parseInterleaved parses flags placed before, between or after the
// positional arguments (the standard flag package stops at the first
// positional one) and returns the positional arguments. "--" ends flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag.Parse consumed a "--" if it stopped there: everything left
		// is positional.
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// fail prints err as "error <code>: <message>" and returns the exit code.
func fail(w io.Writer, err error) int {
	var u *usageError
	if errors.As(err, &u) {
		fmt.Fprintf(w, "error %d: %s\n", protocol.CodeBadRequest, u.msg)
		return exitUsage
	}
	perr := protocol.AsError(err)
	fmt.Fprintf(w, "error %d: %s\n", int(perr.Code), perr.Message)
	return exitError
}

// failCtx is fail, or "interrupted" when the command was interrupted.
func failCtx(ctx context.Context, w io.Writer, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintln(w, "interrupted")
		return exitInterrupted
	}
	return fail(w, err)
}

func printUsage(w io.Writer, fs *flag.FlagSet, cmds []*command) {
	fmt.Fprintln(w, "usage: smcp-agent [flags] COMMAND [args] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-22s %s\n", strings.TrimSpace(c.name+" "+c.args), c.help)
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

func printCommandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: smcp-agent %s %s [flags]\n\n%s\n\nflags:\n", c.name, c.args, c.help)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// printJSON writes v as indented JSON.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
