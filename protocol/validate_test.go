package protocol_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// repoFile is a file of the repository outside this module (the
// conformance suite, the spec), one level above the module's directory.
func repoFile(parts ...string) string {
	return filepath.Join(append([]string{".."}, parts...)...)
}

type schemaExamples struct {
	Valid   []json.RawMessage `json:"valid"`
	Invalid []struct {
		Value json.RawMessage `json:"value"`
		Path  string          `json:"path"`
	} `json:"invalid"`
}

func loadExamples(t *testing.T, name string) map[string]schemaExamples {
	t.Helper()
	b, err := os.ReadFile(repoFile("conformance", name))
	require.NoError(t, err)
	var ex map[string]schemaExamples
	require.NoError(t, json.Unmarshal(b, &ex))
	return ex
}

// Every payload schema has positive and negative examples, and each negative
// example is refused with a 400 naming the expected instance path.
func TestSchemaExamples(t *testing.T) {
	examples := loadExamples(t, "schema_examples.json")
	checkExamples(t, protocol.DefaultGeneration, examples)
	// 0.4.0 (and 0.3.0, which has its shapes) takes the examples of
	// schema_examples-0.4.0.json where its shapes differ, the shared ones
	// elsewhere.
	own := loadExamples(t, "schema_examples-0.4.0.json")
	for file, ex := range examples {
		if _, ok := own[file]; !ok && slices.Contains(protocol.Gen04.SchemaFiles(), file) {
			own[file] = ex
		}
	}
	checkExamples(t, protocol.Gen04, own)
}

func checkExamples(t *testing.T, g protocol.Generation, examples map[string]schemaExamples) {
	files := g.SchemaFiles()
	slices.Sort(files)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(g.String()+"/"+file, func(t *testing.T) {
			ex, ok := examples[file]
			require.True(t, ok, "conformance/schema_examples.json has no examples for %s", file)
			require.NotEmpty(t, ex.Valid, "no valid example")
			require.NotEmpty(t, ex.Invalid, "no invalid example")
			for i, v := range ex.Valid {
				assert.NoError(t, g.ValidateSchema(file, v), "valid[%d] %s", i, v)
			}
			for i, inv := range ex.Invalid {
				err := g.ValidateSchema(file, inv.Value)
				var perr *protocol.Error
				if !assert.ErrorAs(t, err, &perr, "invalid[%d] %s was accepted", i, inv.Value) {
					continue
				}
				assert.Equal(t, protocol.CodeBadRequest, perr.Code)
				paths := violationPaths(perr)
				assert.Contains(t, paths, inv.Path, "invalid[%d]: %s", i, perr.Message)
				assert.Contains(t, perr.Message, inv.Path+": ")
			}
		})
	}
	for file := range examples {
		assert.Contains(t, files, file, "examples for a schema that does not exist")
	}
}

func violationPaths(e *protocol.Error) []string {
	var out []string
	if vs, ok := e.Details["violations"].([]protocol.Violation); ok {
		for _, v := range vs {
			out = append(out, v.Path)
		}
	}
	return out
}

// The Level 0–3 examples of the conformance suite validate against the
// schema each names, and decode into the Go types.
func TestFinderLevelExamples(t *testing.T) {
	raw, err := os.ReadFile(repoFile("conformance", "finder_levels.json"))
	require.NoError(t, err)
	var file struct {
		Examples []struct {
			Level  int             `json:"level"`
			URI    string          `json:"uri"`
			Schema string          `json:"schema"`
			Value  json.RawMessage `json:"value"`
		} `json:"examples"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	levels := map[int]bool{}
	for i, ex := range file.Examples {
		levels[ex.Level] = true
		assert.NoError(t, protocol.ValidateSchema(ex.Schema, ex.Value), "example %d (%s) as %s", i, ex.URI, ex.Schema)
	}
	assert.Len(t, levels, 4, "one example of every level at least")
	// Level 0 entries carry no server: they are not Finder summaries until
	// the Computer names the server.
	var cat protocol.DPECatalog
	require.NoError(t, json.Unmarshal(file.Examples[0].Value, &cat))
	require.Len(t, cat.Documents, 2)
	assert.Equal(t, "plan-2027", cat.Documents[0].DocRef)
	assert.Equal(t, 4, cat.Documents[0].PageCount)
}

var backticked = regexp.MustCompile("`((?:client|server|notify):[a-z_]+)[` ]")

// The prose of spec/ and the manifest name the same events: every event the
// spec mentions exists, and every event of the manifest is described in the
// spec. Each event has a schema for each part and the ack arity its
// direction implies.
func TestEventsManifest(t *testing.T) {
	named := map[string]bool{}
	for _, f := range []string{"protocol.md", "finder.md", "desktop.md"} {
		doc, err := os.ReadFile(repoFile("spec", f))
		require.NoError(t, err)
		for _, m := range backticked.FindAllStringSubmatch(string(doc), -1) {
			named[m[1]] = true
		}
	}
	for name := range named {
		_, ok := protocol.Lookup(name)
		assert.True(t, ok, "spec/ names %s but schema/events.json does not", name)
	}
	files := protocol.SchemaFiles()
	for _, e := range protocol.Events() {
		assert.True(t, named[e.Name], "%s is in schema/events.json but spec/ never describes it", e.Name)
		assert.Contains(t, files, e.RequestSchema, e.Name)
		prefix, _, _ := strings.Cut(e.Name, ":")
		assert.Equal(t, prefix, e.Direction.String(), e.Name)
		switch e.Direction {
		case protocol.DirectionClient:
			assert.Equal(t, 1, e.AckArity, e.Name)
			assert.True(t, e.AckMayBeError, e.Name)
			assert.True(t, e.Senders.Allows(protocol.RoleAgent) && !e.Senders.Allows(protocol.RoleComputer), e.Name)
		case protocol.DirectionNotify:
			assert.Zero(t, e.AckArity, e.Name)
			assert.False(t, e.Senders.Allows(protocol.RoleAgent) || e.Senders.Allows(protocol.RoleComputer), e.Name)
		}
		if e.AckArity > 0 {
			assert.Contains(t, files, e.AckSchema, e.Name)
		}
		if e.Broadcasts != "" {
			b, ok := protocol.Lookup(e.Broadcasts)
			require.True(t, ok)
			assert.Equal(t, protocol.DirectionNotify, b.Direction)
			assert.Equal(t, e.RequestSchema, b.RequestSchema, "%s is broadcast unchanged", e.Name)
		}
	}
	for _, ev := range []string{protocol.EventJoinOffice, protocol.EventLeaveOffice} {
		e, _ := protocol.Lookup(ev)
		assert.Equal(t, 2, e.AckArity, "%s answers (ok, reason)", ev)
	}
	for _, ev := range []string{protocol.EventUpdateConfig, protocol.EventUpdateToolList, protocol.EventUpdateDesktop, protocol.EventUpdateFinder} {
		e, _ := protocol.Lookup(ev)
		assert.True(t, e.Senders.Allows(protocol.RoleComputer) && !e.Senders.Allows(protocol.RoleAgent), "only Computers send %s", ev)
	}
	e, _ := protocol.Lookup(protocol.EventReadResource)
	assert.True(t, e.Extension)
}

var codeInProse = regexp.MustCompile("`(4\\d\\d|5\\d\\d|4[0-2]\\d\\d)`")

// The error table of spec/ is generated from schema/errors.json (and
// drift-checked by `go run mage.go check`); here every code the prose of
// spec/ mentions must be one of them, and every code has a name and meaning.
func TestErrorCodesInSpec(t *testing.T) {
	codes := protocol.Codes()
	require.True(t, slices.IsSorted(codes))
	for _, c := range codes {
		assert.True(t, c.Known())
		assert.NotEmpty(t, c.Meaning())
	}
	mentioned := 0
	for _, f := range []string{"protocol.md", "finder.md", "desktop.md", "decisions.md"} {
		doc, err := os.ReadFile(repoFile("spec", f))
		require.NoError(t, err)
		for _, m := range codeInProse.FindAllStringSubmatch(string(doc), -1) {
			n, _ := strconv.Atoi(m[1])
			assert.True(t, protocol.Code(n).Known(), "spec/%s mentions code %d, which schema/errors.json does not define", f, n)
			mentioned++
		}
	}
	assert.NotZero(t, mentioned)
}

func TestValidateEvents(t *testing.T) {
	tests := []struct {
		name  string
		event string
		part  protocol.Part
		raw   string
		paths []string // nil = valid
	}{
		{"finder request", protocol.EventGetFinder, protocol.Request, `{"agent":"a","req_id":"r","computer":"c","keywords":["x"],"limit":5}`, nil},
		{"finder request every failure listed", protocol.EventGetFinder, protocol.Request, `{"agent":"a","req_id":"r","limit":-1,"offset":-1}`, []string{"/", "/limit", "/offset"}},
		{"error payload as ack", protocol.EventGetFinder, protocol.Ack, `{"error":{"code":404,"message":"computer not found"}}`, nil},
		{"malformed error payload", protocol.EventGetFinder, protocol.Ack, `{"error":{"message":"x"}}`, []string{"/error"}},
		{"join ack two values", protocol.EventJoinOffice, protocol.Ack, `[false,"4101 room full"]`, nil},
		{"join ack one value", protocol.EventJoinOffice, protocol.Ack, `[true]`, []string{"/"}},
		{"tool call answer", protocol.EventToolCall, protocol.Ack, `{"content":[{"type":"text","text":"hi"}],"isError":false}`, nil},
		{"notify payload", protocol.NotifyUpdateFinder, protocol.Request, `{"computer":"c"}`, nil},
		{"notify has no ack", protocol.NotifyUpdateFinder, protocol.Ack, `{}`, []string{}},
		{"unknown event", "client:format_disk", protocol.Request, `{}`, []string{}},
		{"not json", protocol.EventGetTools, protocol.Request, `{"agent":`, []string{}},
		{"wrong top-level type", protocol.EventGetTools, protocol.Request, `[]`, []string{"/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := protocol.Validate(tt.event, tt.part, []byte(tt.raw))
			if tt.paths == nil {
				assert.NoError(t, err)
				return
			}
			var perr *protocol.Error
			require.ErrorAs(t, err, &perr)
			assert.Equal(t, protocol.CodeBadRequest, perr.Code)
			got := violationPaths(perr)
			for _, p := range tt.paths {
				assert.Contains(t, got, p, perr.Message)
			}
		})
	}
}

// Socket.IO libraries deliver payloads decoded, numbers as float64.
func TestValidateValueDecoded(t *testing.T) {
	req := map[string]any{"agent": "a", "req_id": "r", "computer": "c", "tool_name": "echo", "params": map[string]any{}, "timeout": float64(30)}
	assert.NoError(t, protocol.ValidateValue(protocol.EventToolCall, protocol.Request, req))
	req["timeout"] = 2.5
	err := protocol.ValidateValue(protocol.EventToolCall, protocol.Request, req)
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "/timeout")
}

func TestErrorShape(t *testing.T) {
	e := protocol.NewPageOutOfRange("page %d out of range", 12).With("page_index", 12).With("page_count", 5)
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{"error":{"code":4202,"message":"page 12 out of range","details":{"page_index":12,"page_count":5}}}`, string(b))
	require.NoError(t, protocol.ValidateSchema("error_payload.json", b))

	var back protocol.Error
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, protocol.CodePageOutOfRange, back.Code)
	assert.Equal(t, "page 12 out of range", back.Message)

	wrapped := errors.Join(errors.New("reading page"), e)
	var perr *protocol.Error
	require.ErrorAs(t, wrapped, &perr)
	assert.Equal(t, protocol.CodePageOutOfRange, perr.Code)
	assert.ErrorIs(t, wrapped, &protocol.Error{Code: protocol.CodePageOutOfRange})
	assert.NotErrorIs(t, wrapped, &protocol.Error{Code: protocol.CodeDocumentNotFound})
	assert.Equal(t, "4202 PageOutOfRange: page 12 out of range", e.Error())

	// With copies: the original is unchanged.
	base := protocol.NewNotFound("computer %q not found", "c1")
	_ = base.With("computer", "c1")
	assert.Nil(t, base.Details)

	assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(errors.New("boom")))
	assert.Equal(t, protocol.Code(0), protocol.CodeOf(nil))
	assert.Equal(t, "boom", protocol.AsError(errors.New("boom")).Message)
	assert.Equal(t, "7", protocol.Code(7).String())
}

func TestDecodeErrorPayload(t *testing.T) {
	tests := []struct {
		raw  string
		code protocol.Code
		ok   bool
	}{
		{`{"error":{"code":4104,"message":"cross-office"}}`, protocol.CodeCrossRoomAccess, true},
		{` {"error":{"code":404,"message":"x","details":{"computer":"c"}}} `, protocol.CodeNotFound, true},
		{`{"error":{"message":"no code"}}`, 0, false},
		{`{"error":{"code":1,"message":"x"},"req_id":"r"}`, 0, false},
		{`{"documents":[],"total_count":0,"req_id":"r"}`, 0, false},
		{`[true,null]`, 0, false},
		{`{"error":`, 0, false},
		{``, 0, false},
	}
	for _, tt := range tests {
		e, ok := protocol.DecodeErrorPayload([]byte(tt.raw))
		assert.Equal(t, tt.ok, ok, tt.raw)
		if ok {
			assert.Equal(t, tt.code, e.Code, tt.raw)
		}
	}
}

func TestMCPErrorMessage(t *testing.T) {
	e := protocol.NewDocumentNotFound("document %q not found", "rpt").With("doc_ref", "rpt")
	msg := protocol.EncodeMCPErrorMessage(e)
	assert.True(t, strings.HasPrefix(msg, protocol.MCPErrorPrefix))

	for _, wrapped := range []string{msg, "resources/read failed: " + msg, msg + "\n"} {
		got, ok := protocol.DecodeMCPErrorMessage(wrapped)
		require.True(t, ok, wrapped)
		assert.Equal(t, e.Code, got.Code)
		assert.Equal(t, e.Message, got.Message)
		assert.Equal(t, "rpt", got.Details["doc_ref"])
	}
	for _, plain := range []string{"internal error", "smcp-error not json", "smcp-error {\"message\":\"no code\"}"} {
		_, ok := protocol.DecodeMCPErrorMessage(plain)
		assert.False(t, ok, plain)
	}
}

func TestUnions(t *testing.T) {
	raw := `{"servers":{
	  "fs":{"type":"stdio","name":"fs","disabled":false,"forbidden_tools":["rm"],"tool_meta":{"ls":{"auto_apply":true}},"server_parameters":{"command":"fs-mcp","args":["--root","/"],"env":{"K":"V"},"cwd":null,"encoding":"utf-8","encoding_error_handler":"strict"}},
	  "web":{"type":"streamable","name":"web","disabled":true,"forbidden_tools":[],"tool_meta":{},"server_parameters":{"url":"http://127.0.0.1:9/mcp","headers":null,"timeout":"PT30S"}},
	  "old":{"type":"sse","name":"old","disabled":false,"forbidden_tools":[],"tool_meta":{},"default_tool_meta":{"auto_apply":false},"server_parameters":{"url":"http://127.0.0.1:9/sse","headers":{"X-Team":"docs"},"timeout":5}}},
	 "inputs":[{"type":"promptString","id":"tok","description":"Token","password":true},
	           {"type":"pickString","id":"env","description":"Env","options":["a","b"]},
	           {"type":"command","id":"me","description":"Me","command":"whoami"}]}`
	require.NoError(t, protocol.Validate(protocol.EventGetConfig, protocol.Ack, []byte(raw)))
	var ret protocol.GetComputerConfigRet
	require.NoError(t, json.Unmarshal([]byte(raw), &ret))
	assert.Equal(t, "stdio", ret.Servers["fs"].Type())
	assert.Equal(t, []string{"--root", "/"}, ret.Servers["fs"].Stdio.ServerParameters.Args)
	assert.Equal(t, "streamable", ret.Servers["web"].Type())
	assert.True(t, ret.Servers["web"].Base().Disabled)
	assert.Equal(t, "sse", ret.Servers["old"].Type())
	require.NotNil(t, ret.Servers["old"].Base().DefaultToolMeta)
	assert.Equal(t, "old", ret.Servers["old"].Name())
	require.Len(t, ret.Inputs, 3)
	assert.Equal(t, []string{"promptString", "pickString", "command"}, []string{ret.Inputs[0].Type(), ret.Inputs[1].Type(), ret.Inputs[2].Type()})
	assert.Equal(t, "me", ret.Inputs[2].ID())

	// Round trip: what we encode validates and decodes to the same value.
	b, err := json.Marshal(ret)
	require.NoError(t, err)
	require.NoError(t, protocol.Validate(protocol.EventGetConfig, protocol.Ack, b))
	var again protocol.GetComputerConfigRet
	require.NoError(t, json.Unmarshal(b, &again))
	assert.Equal(t, ret, again)

	var bad protocol.MCPServerConfig
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"type":"ftp"}`), &bad), "unknown type")
	_, err = json.Marshal(protocol.MCPServerConfig{})
	assert.Error(t, err)
}
