package config

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pyServer = `{
  "name": "e2e-inputs-test",
  "type": "stdio",
  "disabled": false,
  "forbidden_tools": [],
  "tool_meta": {},
  "server_parameters": {
    "command": "python",
    "args": ["${input:SCRIPT}"],
    "env": null,
    "cwd": null,
    "encoding": "utf-8",
    "encoding_error_handler": "strict"
  }
}`

func TestParseShapes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		servers []string
		inputs  []string
		code    protocol.Code
	}{
		{name: "python single server (server_using_input.json)", in: pyServer, servers: []string{"e2e-inputs-test"}},
		{name: "array", in: `[{"name":"a","type":"stdio","server_parameters":{"command":"x"}},{"name":"b","type":"sse","server_parameters":{"url":"http://h/sse","timeout":5}}]`, servers: []string{"a", "b"}},
		{name: "get_config shape, map", in: `{"servers":{"b":{"type":"streamable","server_parameters":{"url":"http://h/mcp","timeout":"PT30S"}},"a":{"name":"a","type":"stdio","server_parameters":{"command":"x"}}},"inputs":[{"id":"K","type":"promptString","description":"key","password":true}]}`, servers: []string{"a", "b"}, inputs: []string{"K"}},
		{name: "get_config shape, list", in: `{"servers":[{"name":"a","type":"stdio","server_parameters":{"command":"x"}}],"inputs":null}`, servers: []string{"a"}},
		{name: "empty array", in: `[]`},
		{name: "empty", in: ``, code: 400},
		{name: "not json", in: `{`, code: 400},
		{name: "scalar", in: `42`, code: 400},
		{name: "object without type or servers", in: `{"name":"a"}`, code: 400},
		{name: "unknown type", in: `{"name":"a","type":"ws","server_parameters":{}}`, code: 400},
		{name: "stdio without command", in: `{"name":"a","type":"stdio","server_parameters":{}}`, code: 400},
		{name: "empty name", in: `{"name":"","type":"stdio","server_parameters":{"command":"x"}}`, code: 400},
		{name: "duplicate names", in: `[{"name":"a","type":"stdio","server_parameters":{"command":"x"}},{"name":"a","type":"stdio","server_parameters":{"command":"y"}}]`, code: 400},
		{name: "map key differs from name", in: `{"servers":{"a":{"name":"b","type":"stdio","server_parameters":{"command":"x"}}}}`, code: 400},
		{name: "bad streamable timeout", in: `{"name":"a","type":"streamable","server_parameters":{"url":"http://h","timeout":"PTxS"}}`, code: 400},
		{name: "sse timeout as string", in: `{"name":"a","type":"sse","server_parameters":{"url":"http://h","timeout":"PT5S"}}`, code: 400},
		{name: "duplicate input ids", in: `{"servers":[],"inputs":[{"id":"A","type":"promptString","description":""},{"id":"A","type":"command","description":"","command":"echo"}]}`, code: 400},
		{name: "invalid input", in: `{"servers":[],"inputs":[{"id":"A","type":"pickString","description":""}]}`, code: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.in))
			if tt.code != 0 {
				require.Error(t, err)
				assert.Equal(t, tt.code, protocol.CodeOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, s := range c.Servers {
				names = append(names, s.Name())
			}
			assert.Equal(t, tt.servers, names)
			var ids []string
			for _, in := range c.Inputs {
				ids = append(ids, in.ID())
			}
			assert.Equal(t, tt.inputs, ids)
		})
	}
}

func TestParseAppliesPythonDefaults(t *testing.T) {
	c, err := Parse([]byte(`{"name":"a","type":"stdio","server_parameters":{"command":"x"},"vrl":null,"default_tool_meta":null}`))
	require.NoError(t, err)
	s := c.Servers[0].Stdio
	require.NotNil(t, s)
	assert.False(t, s.Disabled)
	assert.Equal(t, []string{}, s.ForbiddenTools)
	assert.Equal(t, map[string]protocol.ToolMeta{}, s.ToolMeta)
	b, err := json.Marshal(c.Ret(protocol.Gen02))
	require.NoError(t, err)
	assert.NoError(t, protocol.Validate(protocol.EventGetConfig, protocol.Ack, b))
	assert.Contains(t, string(b), `"forbidden_tools":[]`)
	assert.Contains(t, string(b), `"tool_meta":{}`)
	// The Python SDK requires every stdio key, env and cwd as null.
	assert.Contains(t, string(b), `"server_parameters":{"args":[],"command":"x","cwd":null,"encoding":"utf-8","encoding_error_handler":"strict","env":null}`)
}

func TestRetKeepsPlaceholders(t *testing.T) {
	c, err := Parse([]byte(pyServer))
	require.NoError(t, err)
	b, err := json.Marshal(c.Ret(protocol.Gen02))
	require.NoError(t, err)
	assert.Contains(t, string(b), `${input:SCRIPT}`)
}

func strp(s string) *string { return &s }

type fakePrompter struct {
	answers map[string]string
	asked   []string
}

func (p *fakePrompter) Prompt(_ context.Context, in protocol.MCPServerInput) (string, error) {
	p.asked = append(p.asked, in.ID())
	return p.answers[in.ID()], nil
}

func TestResolveOrder(t *testing.T) {
	inputs := []protocol.MCPServerInput{
		{PromptString: &protocol.MCPPromptStringInput{ID: "P", Default: "p-default"}},
		{PickString: &protocol.MCPPickStringInput{ID: "K", Options: []protocol.PickStringOption{protocol.BareOption("x"), protocol.BareOption("y")}, Default: "y"}},
		{Command: &protocol.MCPCommandInput{ID: "C", Command: "echo from-command"}},
		{PromptString: &protocol.MCPPromptStringInput{ID: "ASK"}},
	}
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	tests := []struct {
		name     string
		id       string
		opts     []ResolveOption
		prompter *fakePrompter
		want     string
		asked    bool
		errInput string
	}{
		{name: "explicit beats env", id: "P", opts: []ResolveOption{WithValues(map[string]string{"P": "explicit"}), WithLookupEnv(env(map[string]string{"SMCP_INPUT_P": "env"}))}, want: "explicit"},
		{name: "prefixed env beats plain env", id: "P", opts: []ResolveOption{WithLookupEnv(env(map[string]string{"SMCP_INPUT_P": "env1", "P": "env2"}))}, want: "env1"},
		{name: "plain env", id: "P", opts: []ResolveOption{WithLookupEnv(env(map[string]string{"P": "env2"}))}, want: "env2"},
		{name: "env beats command", id: "C", opts: []ResolveOption{WithLookupEnv(env(map[string]string{"SMCP_INPUT_C": "env"}))}, want: "env"},
		{name: "command", id: "C", want: "from-command"},
		{name: "default of promptString", id: "P", want: "p-default"},
		{name: "default of pickString", id: "K", want: "y"},
		{name: "prompt last", id: "ASK", prompter: &fakePrompter{answers: map[string]string{"ASK": "typed"}}, want: "typed", asked: true},
		{name: "default beats prompt", id: "P", prompter: &fakePrompter{}, want: "p-default"},
		{name: "no terminal: error naming the input", id: "ASK", opts: []ResolveOption{WithPrompter(nil)}, errInput: "ASK"},
		{name: "undeclared input", id: "NOPE", errInput: "NOPE"},
		{name: "undeclared input given explicitly", id: "NOPE", opts: []ResolveOption{WithValues(map[string]string{"NOPE": "v"})}, want: "v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Inputs: inputs}
			srv, err := Parse([]byte(`{"name":"s","type":"stdio","server_parameters":{"command":"run","args":["--v=${input:` + tt.id + `}","${input:` + tt.id + `}"],"env":{"X":"${input:` + tt.id + `}"}}}`))
			require.NoError(t, err)
			c.Servers = srv.Servers
			opts := append([]ResolveOption{WithLookupEnv(env(nil)), WithPrompter(nil)}, tt.opts...)
			if tt.prompter != nil {
				opts = append(opts, WithPrompter(tt.prompter))
			}
			got, err := c.Resolve(context.Background(), opts...)
			if tt.errInput != "" {
				require.Error(t, err)
				e := protocol.AsError(err)
				assert.Equal(t, protocol.CodeBadRequest, e.Code)
				assert.Equal(t, tt.errInput, e.Details["input"])
				assert.Equal(t, "s", e.Details["server"])
				assert.Contains(t, e.Message, tt.errInput)
				return
			}
			require.NoError(t, err)
			p := got[0].Stdio.ServerParameters
			assert.Equal(t, []string{"--v=" + tt.want, tt.want}, p.Args)
			assert.Equal(t, tt.want, p.Env["X"])
			if tt.asked {
				assert.Equal(t, []string{tt.id}, tt.prompter.asked, "asked once, cached")
			} else if tt.prompter != nil {
				assert.Empty(t, tt.prompter.asked)
			}
			// The written config keeps its placeholder.
			assert.Contains(t, c.Servers[0].Stdio.ServerParameters.Args[1], "${input:")
		})
	}
}

func TestResolveCommandFailureNamesInput(t *testing.T) {
	c := &Config{Inputs: []protocol.MCPServerInput{{Command: &protocol.MCPCommandInput{ID: "C", Command: "exit 3"}}}}
	p, err := Parse([]byte(`{"name":"s","type":"stdio","server_parameters":{"command":"${input:C}"}}`))
	require.NoError(t, err)
	c.Servers = p.Servers
	_, err = c.Resolve(context.Background(), WithLookupEnv(func(string) (string, bool) { return "", false }))
	require.Error(t, err)
	assert.Equal(t, "C", protocol.AsError(err).Details["input"])
}

func TestResolveSkipsDisabledServers(t *testing.T) {
	c, err := Parse([]byte(`{"name":"s","type":"stdio","disabled":true,"server_parameters":{"command":"${input:MISSING}"}}`))
	require.NoError(t, err)
	got, err := c.Resolve(context.Background(), WithPrompter(nil))
	require.NoError(t, err)
	assert.Equal(t, "${input:MISSING}", got[0].Stdio.ServerParameters.Command)
}

func TestResolveNeverLogsSecretsAndWarnsVRLOnce(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := Parse([]byte(`[{"name":"a","type":"stdio","vrl":".x = 1","server_parameters":{"command":"x","env":{"K":"${input:KEY}"}}},
		{"name":"b","type":"stdio","vrl":".y = 2","server_parameters":{"command":"x"}}]`))
	require.NoError(t, err)
	got, err := c.Resolve(context.Background(), WithLogger(log), WithValues(map[string]string{"KEY": "s3cr3t-value"}), WithPrompter(nil))
	require.NoError(t, err)
	assert.Equal(t, "s3cr3t-value", got[0].Stdio.ServerParameters.Env["K"])
	assert.NotContains(t, logs.String(), "s3cr3t-value")
	assert.Equal(t, 1, strings.Count(logs.String(), "vrl is not supported"), logs.String())
	assert.Contains(t, logs.String(), "input=KEY")
}

func TestStreamPrompter(t *testing.T) {
	var out bytes.Buffer
	p := NewStreamPrompter(strings.NewReader("hello\n2\n"), &out)
	v, err := p.Prompt(context.Background(), protocol.MCPServerInput{PromptString: &protocol.MCPPromptStringInput{ID: "A", Description: "say"}})
	require.NoError(t, err)
	assert.Equal(t, "hello", v)
	v, err = p.Prompt(context.Background(), protocol.MCPServerInput{PickString: &protocol.MCPPickStringInput{ID: "B", Options: []protocol.PickStringOption{protocol.BareOption("x"), protocol.BareOption("y")}}})
	require.NoError(t, err)
	assert.Equal(t, "y", v)
	assert.Contains(t, out.String(), "say (A)")
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		in            string
		request, read time.Duration
	}{
		{`{"name":"a","type":"streamable","server_parameters":{"url":"http://h","timeout":"PT30S","sse_read_timeout":"PT5M"}}`, 30 * time.Second, 5 * time.Minute},
		{`{"name":"a","type":"streamable","server_parameters":{"url":"http://h","timeout":"PT0.5S"}}`, 500 * time.Millisecond, 5 * time.Minute},
		{`{"name":"a","type":"streamable","server_parameters":{"url":"http://h","timeout":"P1DT1S"}}`, 24*time.Hour + time.Second, 5 * time.Minute},
		// Python's defaults fill what the config leaves out.
		{`{"name":"a","type":"streamable","server_parameters":{"url":"http://h"}}`, 30 * time.Second, 5 * time.Minute},
		{`{"name":"a","type":"sse","server_parameters":{"url":"http://h"}}`, 5 * time.Second, 5 * time.Minute},
		{`{"name":"a","type":"sse","server_parameters":{"url":"http://h","timeout":5,"sse_read_timeout":300.5}}`, 5 * time.Second, 300500 * time.Millisecond},
		{`{"name":"a","type":"stdio","server_parameters":{"command":"x"}}`, 0, 0},
	}
	for _, tt := range tests {
		c, err := Parse([]byte(tt.in))
		require.NoError(t, err, tt.in)
		to, err := TimeoutsOf(c.Servers[0])
		require.NoError(t, err)
		assert.Equal(t, tt.request, to.Request, tt.in)
		assert.Equal(t, tt.read, to.SSERead, tt.in)
	}
}

func TestLoadAndLoadInputs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.json")
	require.NoError(t, os.WriteFile(cfg, []byte(pyServer), 0o600))
	inputs := filepath.Join(dir, "inputs.json")
	require.NoError(t, os.WriteFile(inputs, []byte(`[{"id":"SCRIPT","type":"promptString","description":"script","default":"x.py","password":false}]`), 0o600))
	c, err := Load("@" + cfg)
	require.NoError(t, err)
	in, err := LoadInputs(inputs)
	require.NoError(t, err)
	require.NoError(t, c.AddInputs(in...))
	assert.Error(t, c.AddInputs(in...), "duplicate id")
	got, err := c.Resolve(context.Background(), WithLookupEnv(func(string) (string, bool) { return "", false }), WithPrompter(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"x.py"}, got[0].Stdio.ServerParameters.Args)
	_, err = Load(filepath.Join(dir, "missing.json"))
	assert.Error(t, err)
}
