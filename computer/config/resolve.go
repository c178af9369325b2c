package config

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"golang.org/x/term"
)

// placeholder matches ${input:ID} (the Python SDK's pattern).
var placeholder = regexp.MustCompile(`\$\{input:([^}]+)\}`)

// Prompter asks the user for an input's value.
type Prompter interface {
	Prompt(ctx context.Context, in protocol.MCPServerInput) (string, error)
}

// ResolveOption configures Resolve.
type ResolveOption func(*resolver)

// WithValues gives explicit input values (highest priority).
func WithValues(values map[string]string) ResolveOption {
	return func(r *resolver) {
		for k, v := range values {
			r.values[k] = v
		}
	}
}

// WithLookupEnv replaces os.LookupEnv as the environment source.
func WithLookupEnv(lookup func(string) (string, bool)) ResolveOption {
	return func(r *resolver) { r.lookupEnv = lookup }
}

// WithPrompter replaces the terminal prompt; nil disables prompting.
func WithPrompter(p Prompter) ResolveOption {
	return func(r *resolver) { r.prompter = p; r.prompterSet = true }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) ResolveOption {
	return func(r *resolver) { r.log = l }
}

// WithCommandTimeout bounds each command input (default 30 s).
func WithCommandTimeout(d time.Duration) ResolveOption {
	return func(r *resolver) { r.cmdTimeout = d }
}

type resolver struct {
	values      map[string]string
	lookupEnv   func(string) (string, bool)
	prompter    Prompter
	prompterSet bool
	log         *slog.Logger
	cmdTimeout  time.Duration
	inputs      map[string]protocol.MCPServerInput
	cache       map[string]string
}

// Resolve returns the servers with every ${input:ID} replaced (see the
// package documentation for the order of sources). The receiver is not
// changed. Errors are *protocol.Error code 400 naming the input and the
// server.
func (c *Config) Resolve(ctx context.Context, opts ...ResolveOption) ([]protocol.MCPServerConfig, error) {
	r := &resolver{values: map[string]string{}, lookupEnv: os.LookupEnv, log: slog.Default(), cmdTimeout: 30 * time.Second,
		inputs: map[string]protocol.MCPServerInput{}, cache: map[string]string{}}
	for _, o := range opts {
		o(r)
	}
	if !r.prompterSet {
		r.prompter = TerminalPrompter()
	}
	for _, in := range c.Inputs {
		r.inputs[in.ID()] = in
	}
	var withVRL []string
	out := make([]protocol.MCPServerConfig, 0, len(c.Servers))
	for _, s := range c.Servers {
		if v := s.Base().Vrl; v != "" && strings.TrimSpace(v) != "" {
			withVRL = append(withVRL, s.Name())
		}
		if s.Base().Disabled {
			out = append(out, s) // never started: its inputs are not asked for
			continue
		}
		rs, err := r.render(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, rs)
	}
	if len(withVRL) > 0 {
		r.log.Warn("vrl is not supported by this Computer: tool results are returned untransformed", "servers", withVRL)
	}
	return out, nil
}

func (r *resolver) render(ctx context.Context, s protocol.MCPServerConfig) (protocol.MCPServerConfig, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return s, protocol.NewInternal("config: encode server %q: %v", s.Name(), err)
	}
	if !placeholder.Match(b) {
		return s, nil
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return s, protocol.NewInternal("config: decode server %q: %v", s.Name(), err)
	}
	tree, err = r.walk(ctx, s.Name(), tree)
	if err != nil {
		return s, err
	}
	if b, err = json.Marshal(tree); err != nil {
		return s, protocol.NewInternal("config: encode server %q: %v", s.Name(), err)
	}
	var out protocol.MCPServerConfig
	if err := json.Unmarshal(b, &out); err != nil {
		return s, protocol.NewBadRequest("config: server %q after resolving inputs: %v", s.Name(), err).With("server", s.Name())
	}
	return out, nil
}

func (r *resolver) walk(ctx context.Context, server string, v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			nx, err := r.walk(ctx, server, x)
			if err != nil {
				return nil, err
			}
			t[k] = nx
		}
	case []any:
		for i, x := range t {
			nx, err := r.walk(ctx, server, x)
			if err != nil {
				return nil, err
			}
			t[i] = nx
		}
	case string:
		var firstErr error
		res := placeholder.ReplaceAllStringFunc(t, func(m string) string {
			id := placeholder.FindStringSubmatch(m)[1]
			val, err := r.resolve(ctx, id)
			if err != nil && firstErr == nil {
				firstErr = protocol.AsError(err).With("server", server)
			}
			return val
		})
		return res, firstErr
	}
	return v, nil
}

// EnvName is the environment variable consulted first for input id.
func EnvName(id string) string {
	var b strings.Builder
	b.WriteString("SMCP_INPUT_")
	for _, c := range strings.ToUpper(id) {
		if (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func (r *resolver) resolve(ctx context.Context, id string) (string, error) {
	if v, ok := r.cache[id]; ok {
		return v, nil
	}
	v, source, err := r.lookup(ctx, id)
	if err != nil {
		return "", err
	}
	r.log.Debug("input resolved", "input", id, "source", source) // never the value
	r.cache[id] = v
	return v, nil
}

func (r *resolver) lookup(ctx context.Context, id string) (string, string, error) {
	if v, ok := r.values[id]; ok {
		return v, "explicit", nil
	}
	if r.lookupEnv != nil {
		if v, ok := r.lookupEnv(EnvName(id)); ok {
			return v, "env " + EnvName(id), nil
		}
		if v, ok := r.lookupEnv(id); ok {
			return v, "env " + id, nil
		}
	}
	in, declared := r.inputs[id]
	if !declared {
		return "", "", protocol.NewBadRequest("input %q is referenced but neither declared in inputs nor given a value (set %s)", id, EnvName(id)).With("input", id)
	}
	if in.Command != nil {
		v, err := r.runCommand(ctx, in.Command)
		if err != nil {
			return "", "", protocol.NewBadRequest("input %q: command failed: %v", id, err).With("input", id)
		}
		return v, "command", nil
	}
	if d := defaultOf(in); d != nil {
		return *d, "default", nil
	}
	if r.prompter != nil {
		v, err := r.prompter.Prompt(ctx, in)
		if err != nil {
			return "", "", protocol.NewBadRequest("input %q: prompt failed: %v", id, err).With("input", id)
		}
		return v, "prompt", nil
	}
	return "", "", protocol.NewBadRequest("input %q has no value: give it with --input %s=VALUE or %s, or run in a terminal to be asked", id, id, EnvName(id)).With("input", id)
}

func defaultOf(in protocol.MCPServerInput) *string {
	var d string
	switch {
	case in.PromptString != nil:
		d = in.PromptString.Default
	case in.PickString != nil:
		d = in.PickString.Default
	}
	if d == "" {
		return nil
	}
	return &d
}

func (r *resolver) runCommand(ctx context.Context, in *protocol.MCPCommandInput) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cmdTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", in.Command)
	} else {
		cmd = exec.CommandContext(ctx, "sh", "-c", in.Command)
	}
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("timed out after %s", r.cmdTimeout)
		}
		return "", err // exit status only: stderr may hold secrets
	}
	return strings.TrimSpace(string(out)), nil
}

// TerminalPrompter returns a Prompter reading from the terminal attached to
// standard input (writing questions to standard error), or nil when standard
// input is not a terminal.
func TerminalPrompter() Prompter {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return nil
	}
	return &streamPrompter{in: bufio.NewReader(os.Stdin), out: os.Stderr, fd: int(os.Stdin.Fd()), isTerm: true}
}

// NewStreamPrompter returns a Prompter that reads answers line by line from
// in and writes questions to out (passwords are read like any line).
func NewStreamPrompter(in io.Reader, out io.Writer) Prompter {
	return &streamPrompter{in: bufio.NewReader(in), out: out}
}

type streamPrompter struct {
	mu     sync.Mutex
	in     *bufio.Reader
	out    io.Writer
	fd     int
	isTerm bool
}

func (p *streamPrompter) Prompt(_ context.Context, in protocol.MCPServerInput) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case in.PromptString != nil:
		q := in.PromptString
		fmt.Fprintf(p.out, "%s (%s): ", orID(q.Description, q.ID), q.ID)
		if q.Password != nil && *q.Password && p.isTerm {
			b, err := term.ReadPassword(p.fd)
			fmt.Fprintln(p.out)
			return string(b), err
		}
		return p.line()
	case in.PickString != nil:
		q := in.PickString
		fmt.Fprintf(p.out, "%s (%s):\n", orID(q.Description, q.ID), q.ID)
		for i, o := range q.Options {
			fmt.Fprintf(p.out, "  %d) %s\n", i+1, o.Label)
		}
		fmt.Fprint(p.out, "choose a number: ")
		s, err := p.line()
		if err != nil {
			return "", err
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(q.Options) {
			return q.Options[n-1].Value, nil
		}
		if slices.ContainsFunc(q.Options, func(o protocol.PickStringOption) bool { return o.Value == s }) {
			return s, nil
		}
		return "", fmt.Errorf("%q is not one of the options", s)
	}
	return "", fmt.Errorf("input %q cannot be prompted for", in.ID())
}

func (p *streamPrompter) line() (string, error) {
	s, err := p.in.ReadString('\n')
	if err != nil && (err != io.EOF || s == "") {
		return "", err
	}
	return strings.TrimRight(s, "\r\n"), nil
}

func orID(desc, id string) string {
	if desc != "" {
		return desc
	}
	return "Value for " + id
}
