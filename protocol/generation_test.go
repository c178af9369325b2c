package protocol_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// vectors04 is conformance/generations-0.4.json.
type vectors04 struct {
	Versions []struct {
		Client, Server string
		Expect         struct {
			Client     map[string]string `json:"client"`
			Server     map[string]string `json:"server"`
			Compatible *bool             `json:"compatible"`
		} `json:"expect"`
		SmcpGo string `json:"smcp_go"`
	} `json:"versions"`
	Handshake []struct {
		Query  string `json:"query"`
		Expect *struct {
			Status  int               `json:"status"`
			Body    map[string]any    `json:"body"`
			Headers map[string]string `json:"headers"`
		} `json:"expect"`
	} `json:"handshake"`
	Errors map[string]string `json:"errors"`
}

func loadVectors04(t *testing.T) vectors04 {
	t.Helper()
	raw, err := os.ReadFile(repoFile("conformance", "generations-0.4.json"))
	require.NoError(t, err)
	var v vectors04
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

// Versions parse and compare as the references parse and compare them;
// where the two references differ, smcp-go follows the Rust one, and the
// vector says so.
func TestVersionConformance(t *testing.T) {
	for _, c := range loadVectors04(t).Versions {
		client, cerr := protocol.ParseVersion(c.Client)
		server, serr := protocol.ParseVersion(c.Server)
		want, refused := c.Expect.Client["version"], c.Expect.Client["error"] != ""
		if c.SmcpGo != "" {
			assert.Error(t, cerr, "%q: %s", c.Client, c.SmcpGo)
			continue
		}
		require.NoError(t, serr)
		if refused {
			var perr *protocol.Error
			require.ErrorAs(t, cerr, &perr, "%q", c.Client)
			assert.Equal(t, c.Expect.Client["error"], perr.Message)
			continue
		}
		require.NoError(t, cerr, c.Client)
		assert.Equal(t, want, client.String())
		require.NotNil(t, c.Expect.Compatible)
		assert.Equal(t, *c.Expect.Compatible, client.CompatibleWith(server), "%s with %s", c.Client, c.Server)
	}
}

// A Server that serves 0.4.0 alone, strictly, answers every handshake as
// the Python reference's middleware does: same status, same body members,
// same headers (the body is compact JSON, so its length differs).
func TestNegotiateAsTheReference(t *testing.T) {
	strict04 := protocol.VersionPolicy{Accept: []protocol.Generation{protocol.Gen04}, Strict: true}
	for _, c := range loadVectors04(t).Handshake {
		q, err := url.ParseQuery(c.Query)
		require.NoError(t, err)
		g, perr := strict04.Negotiate(q)
		if c.Expect == nil {
			assert.Nil(t, perr, c.Query)
			assert.Equal(t, protocol.Gen04, g, c.Query)
			continue
		}
		require.NotNil(t, perr, c.Query)
		status, headers, body := protocol.HandshakeResponse(perr)
		assert.Equal(t, c.Expect.Status, status, c.Query)
		var got map[string]any
		require.NoError(t, json.Unmarshal(body, &got))
		assert.Equal(t, c.Expect.Body, got, c.Query)
		header := http.Header{}
		for k, v := range headers {
			header.Set(k, v)
		}
		assert.Equal(t, c.Expect.Headers["content-type"], header.Get("Content-Type"))
		assert.Equal(t, c.Expect.Headers["x-a2c-error-code"], header.Get(protocol.ErrorCodeHeader), c.Query)
		assert.Equal(t, strconv.Itoa(len(body)), header.Get("Content-Length"))

		// A client reads the refusal back, and finds the range in a 4008.
		back, ok := protocol.ParseHandshakeRefusal(status, header.Get(protocol.ErrorCodeHeader), body)
		require.True(t, ok, c.Query)
		assert.Equal(t, perr.Code, back.Code)
		if perr.Code == protocol.CodeProtocolVersionMismatch {
			g, ok := protocol.RetryGeneration(back, protocol.Generations())
			assert.True(t, ok)
			assert.Equal(t, protocol.Gen04, g)
		}
	}
}

// smcp-go's own Server accepts every generation it speaks, takes a missing
// version as 0.2.0 unless strict, and names its whole range in a 4008.
func TestNegotiateDualStack(t *testing.T) {
	var open protocol.VersionPolicy
	for query, want := range map[string]protocol.Generation{
		"": protocol.Gen02, "EIO=4": protocol.Gen02, "a2c_version=0.2.0": protocol.Gen02,
		"a2c_version=0.3.1": protocol.Gen03, "a2c_version=0.3.0": protocol.Gen03,
		"a2c_version=0.4.0": protocol.Gen04, "a2c_version=0.4.9": protocol.Gen04,
	} {
		q, _ := url.ParseQuery(query)
		g, perr := open.Negotiate(q)
		require.Nil(t, perr, query)
		assert.Equal(t, want, g, query)
	}
	q, _ := url.ParseQuery("a2c_version=0.5.0")
	_, perr := open.Negotiate(q)
	require.NotNil(t, perr)
	assert.Equal(t, protocol.CodeProtocolVersionMismatch, perr.Code)
	lo, hi, ok := perr.SupportedRange()
	require.True(t, ok)
	assert.Equal(t, "0.2.0", lo.String())
	assert.Equal(t, "0.4.999", hi.String())
	assert.Equal(t, "0.4.0", perr.Fields["server_version"])
	g, ok := protocol.RetryGeneration(perr, []protocol.Generation{protocol.Gen02, protocol.Gen04})
	assert.True(t, ok)
	assert.Equal(t, protocol.Gen04, g)
	_, ok = protocol.RetryGeneration(protocol.NewBadRequest("x"), protocol.Generations())
	assert.False(t, ok)

	strict := protocol.VersionPolicy{Strict: true}
	_, perr = strict.Negotiate(url.Values{})
	require.NotNil(t, perr)
	assert.Equal(t, "Missing a2c_version query parameter", perr.Message)
	only04 := protocol.VersionPolicy{Accept: []protocol.Generation{protocol.Gen04}}
	_, perr = only04.Negotiate(url.Values{})
	assert.NotNil(t, perr, "a Server that does not serve 0.2.0 cannot take a handshake without a version as 0.2.0")

	// A header alone still says 4008; another 400 or status is not a refusal.
	e, ok := protocol.ParseHandshakeRefusal(400, "4008", []byte("<html>"))
	require.True(t, ok)
	assert.Equal(t, protocol.CodeProtocolVersionMismatch, e.Code)
	_, ok = protocol.ParseHandshakeRefusal(400, "", []byte(`{"code":401,"message":"x"}`))
	assert.False(t, ok)
	_, ok = protocol.ParseHandshakeRefusal(502, "4008", nil)
	assert.False(t, ok)
}

func TestHandshakeURL(t *testing.T) {
	u, err := protocol.HandshakeURL("http://h:1/socket.io/?EIO=4&a2c_version=9.9.9&x=1", protocol.Gen04)
	require.NoError(t, err)
	pu, _ := url.Parse(u)
	assert.Equal(t, "0.4.0", pu.Query().Get(protocol.VersionParam))
	assert.Equal(t, []string{"0.4.0"}, pu.Query()[protocol.VersionParam])
	assert.Equal(t, "1", pu.Query().Get("x"))
	u, err = protocol.HandshakeURL("http://h:1/?a2c_version=0.4.0", protocol.Gen02)
	require.NoError(t, err)
	assert.NotContains(t, u, protocol.VersionParam, "0.2.0 clients name no version")
}

// The flat errors of the references decode into *Error and encode back to
// the very bytes they sent; the nested shape of 0.2.0 is unchanged.
func TestFlatErrorsRoundTrip(t *testing.T) {
	for name, text := range loadVectors04(t).Errors {
		e, ok := protocol.DecodeError([]byte(text))
		require.True(t, ok, name)
		b, err := e.MarshalShape(protocol.ErrorShapeFlat)
		require.NoError(t, err)
		assert.Equal(t, text, string(b), name)
		b, err = json.Marshal(e.In(protocol.Gen04))
		require.NoError(t, err)
		assert.Equal(t, text, string(b), name)
		assert.NoError(t, protocol.Gen04.ValidateSchema("error_payload_flat.json", []byte(text)), name)
		for _, k := range e.Code.TopLevel() {
			if _, has := e.Fields[k]; !has && name != "skill_not_found" {
				t.Errorf("%s: code %d's member %s is not in the reference's payload", name, e.Code, k)
			}
		}
		// Written for a 0.2.0 session, the code-specific members move into
		// details.
		nested, err := json.Marshal(e.In(protocol.Gen02))
		require.NoError(t, err)
		back, ok := protocol.DecodeErrorPayload(nested)
		require.True(t, ok)
		assert.Equal(t, e.Code, back.Code)
		for k, v := range e.Fields {
			assert.Equal(t, v, back.Details[k], "%s: %s", name, k)
		}
	}
	cnf := protocol.ComputerNotFound(protocol.Gen04, "calc-1")
	b, _ := json.Marshal(cnf.In(protocol.Gen04))
	assert.Equal(t, loadVectors04(t).Errors["computer_not_found"], string(b))
	b, _ = json.Marshal(protocol.ComputerNotFound(protocol.Gen02, "calc-1"))
	assert.Equal(t, `{"error":{"code":404,"message":"no computer named \"calc-1\" in this office"}}`, string(b))

	for raw, want := range map[string]bool{
		`{"code":404,"message":"x"}`:               true,
		`{"code":4018}`:                            true, // a code the references treat as an error
		`{"code":400}`:                             false,
		`{"code":"404","message":"x"}`:             false,
		`{"code":1.5,"message":"x"}`:               false,
		`{"content":[],"isError":true}`:            false,
		`{"error":{"code":404,"message":"x"}}`:     true,
		`{"tools":[],"req_id":"r","code":"x"}`:     false,
		`[{"code":404,"message":"x"}]`:             false,
		`{"code":404,"message":"x","extra":[1,2]}`: true,
	} {
		_, ok := protocol.DecodeError([]byte(raw))
		assert.Equal(t, want, ok, raw)
	}
	var e protocol.Error
	require.NoError(t, json.Unmarshal([]byte(`{"code":4015,"message":"m","mcp_server":"fs","capability":"resources"}`), &e))
	assert.Equal(t, protocol.CodeMCPCapabilityNotSupported, e.Code)
	assert.Equal(t, "fs", e.Fields["mcp_server"])
}

// Each generation's table says what the manifests say: 0.3.0 is 0.4.0 less
// client:put_blob and 4019; the Finder is core in 0.2.0 and an extension
// later; acks are nested errors in 0.2.0 and flat ones later.
func TestGenerationTables(t *testing.T) {
	require.Equal(t, []protocol.Generation{protocol.Gen02, protocol.Gen03, protocol.Gen04}, protocol.Generations())
	assert.Equal(t, protocol.Gen04, protocol.NewestGeneration())
	assert.Equal(t, protocol.ProtocolVersion, protocol.DefaultGeneration.String())
	for _, g := range protocol.Generations() {
		v, err := protocol.ParseGeneration(g.String())
		require.NoError(t, err)
		assert.Equal(t, g, v)
		assert.NotEmpty(t, g.References())
		for _, e := range g.Events() {
			assert.Equal(t, g, e.Generation)
			assert.Equal(t, e.AckMayBeError, e.AckError != protocol.ErrorShapeNone, e.Name)
			if e.AckMayBeError {
				assert.Equal(t, g.ErrorShape(), e.AckError, "%s %s", g, e.Name)
			}
			assert.Contains(t, g.SchemaFiles(), e.RequestSchema, "%s %s", g, e.Name)
		}
	}
	_, err := protocol.ParseGeneration("0.5.0")
	assert.Error(t, err)
	assert.False(t, protocol.Generation(0).Valid())
	assert.Equal(t, "Generation(0)", protocol.Generation(0).String())

	has := func(g protocol.Generation, ev string) bool { _, ok := g.Lookup(ev); return ok }
	assert.False(t, has(protocol.Gen02, protocol.EventGetResources))
	assert.True(t, has(protocol.Gen03, protocol.EventGetResources))
	assert.False(t, has(protocol.Gen03, protocol.EventPutBlob))
	assert.True(t, has(protocol.Gen04, protocol.EventPutBlob))
	assert.Len(t, protocol.Gen03.Events(), len(protocol.Gen04.Events())-1)
	f2, _ := protocol.Gen02.Lookup(protocol.EventGetFinder)
	f4, _ := protocol.Gen04.Lookup(protocol.EventGetFinder)
	assert.False(t, f2.Extension)
	assert.True(t, f4.Extension)
	us, _ := protocol.Gen04.Lookup(protocol.EventUpdateSkills)
	assert.Equal(t, protocol.NotifyUpdateSkills, us.Broadcasts)

	assert.Equal(t, protocol.CodeCore, protocol.Gen04.CodeStatus(protocol.CodeBlobWriteFailed))
	assert.Equal(t, protocol.CodeAbsent, protocol.Gen03.CodeStatus(protocol.CodeBlobWriteFailed))
	assert.Equal(t, protocol.CodeCore, protocol.Gen03.CodeStatus(protocol.CodeBlobNotAccessible))
	assert.Equal(t, protocol.CodeAbsent, protocol.Gen02.CodeStatus(protocol.CodeProtocolVersionMismatch))
	assert.Equal(t, protocol.CodeExtension, protocol.Gen04.CodeStatus(protocol.CodeDocumentNotFound))
	assert.Equal(t, protocol.CodeExtension, protocol.Gen02.CodeStatus(protocol.CodeTooManyRequests))
	assert.Equal(t, []string{"invalid_handle", "forbidden", "gone", "range"}, protocol.CodeBlobNotAccessible.Reasons())
	assert.Equal(t, 4900, protocol.CloseVersionRejected)
}

// Each generation validates with its own shapes: a 0.4 tool needs a
// bundle_id, a 0.2 one does not; an error ack is nested in 0.2.0 and flat
// in 0.4.0; an event a generation lacks is refused with 400.
func TestValidatePerGeneration(t *testing.T) {
	tool := `{"tools":[{"name":"add","description":"d","params_schema":{},"return_schema":null}],"req_id":"r"}`
	assert.NoError(t, protocol.Gen02.Validate(protocol.EventGetTools, protocol.Ack, []byte(tool)))
	assert.Error(t, protocol.Gen04.Validate(protocol.EventGetTools, protocol.Ack, []byte(tool)))
	tool04 := `{"tools":[{"name":"fs__add","bundle_id":"fs","description":"d","params_schema":{},"return_schema":null}],"req_id":"r"}`
	assert.NoError(t, protocol.Gen04.Validate(protocol.EventGetTools, protocol.Ack, []byte(tool04)))
	assert.NoError(t, protocol.Gen03.Validate(protocol.EventGetTools, protocol.Ack, []byte(tool04)))

	flat := `{"code":404,"message":"Computer with name 'x' not found","details":{"computer_name":"x"}}`
	nested := `{"error":{"code":404,"message":"no computer"}}`
	assert.NoError(t, protocol.Gen04.Validate(protocol.EventGetTools, protocol.Ack, []byte(flat)))
	assert.NoError(t, protocol.Gen02.Validate(protocol.EventGetTools, protocol.Ack, []byte(nested)))
	assert.Error(t, protocol.Gen04.Validate(protocol.EventGetTools, protocol.Ack, []byte(`{"code":404}`)), "a flat error needs its message")

	err := protocol.Gen02.Validate(protocol.EventGetBlob, protocol.Request, []byte(`{}`))
	var perr *protocol.Error
	require.ErrorAs(t, err, &perr)
	assert.Contains(t, perr.Message, "not part of protocol 0.2.0")
	err = protocol.Gen04.Validate("client:nope", protocol.Request, []byte(`{}`))
	require.ErrorAs(t, err, &perr)
	assert.Contains(t, perr.Message, "unknown event")

	opts02 := `{"id":"k","description":"d","type":"pickString","options":["a","b"]}`
	opts04 := `{"id":"k","description":"d","type":"pickString","options":[{"label":"A","value":"a"}]}`
	assert.NoError(t, protocol.Gen02.ValidateSchema("mcp_pick_string_input.json", []byte(opts02)))
	assert.Error(t, protocol.Gen02.ValidateSchema("mcp_pick_string_input.json", []byte(opts04)))
	assert.NoError(t, protocol.Gen04.ValidateSchema("mcp_pick_string_input.json", []byte(opts04)))
	assert.Error(t, protocol.Gen04.ValidateSchema("mcp_pick_string_input.json", []byte(opts02)), "the 0.4 reference refuses bare options")

	var in protocol.MCPPickStringInput
	require.NoError(t, json.Unmarshal([]byte(opts02), &in))
	b, _ := json.Marshal(in)
	assert.JSONEq(t, opts02, string(b), "0.2 options are written back as they came")
	b, _ = json.Marshal(in.In(protocol.Gen04))
	assert.NoError(t, protocol.Gen04.ValidateSchema("mcp_pick_string_input.json", b))
	require.NoError(t, json.Unmarshal([]byte(opts04), &in))
	b, _ = json.Marshal(in.In(protocol.Gen02))
	assert.NoError(t, protocol.Gen02.ValidateSchema("mcp_pick_string_input.json", b))
	assert.Contains(t, string(b), `"options":["a"]`)
}

func TestResultMeta(t *testing.T) {
	var r protocol.CallToolResult
	require.NoError(t, json.Unmarshal([]byte(`{"content":[],"isError":true,"meta":{"a2c_cancelled":true,"a2c_cancel_reason":"agent_requested"},"_meta":{"x":1}}`), &r))
	c, reason := r.Cancelled()
	assert.True(t, c)
	assert.Equal(t, protocol.CancelReasonAgent, reason)
	assert.False(t, r.TimedOut())

	var old protocol.CallToolResult
	require.NoError(t, json.Unmarshal([]byte(`{"content":[],"_meta":{"a2c_timeout":true}}`), &old))
	assert.True(t, old.TimedOut(), "_meta is read when meta is absent")

	base := protocol.CallToolResult{Content: []protocol.ContentBlock{}}
	m := base.MarkCancelled(protocol.Gen04, protocol.CancelReasonAgent)
	b, _ := json.Marshal(m)
	assert.JSONEq(t, `{"content":[],"isError":true,"meta":{"a2c_cancelled":true,"a2c_cancel_reason":"agent_requested"},"_meta":{"a2c_cancelled":true,"a2c_cancel_reason":"agent_requested"}}`, string(b))
	assert.NoError(t, protocol.Gen04.Validate(protocol.EventToolCall, protocol.Ack, b))
	m = base.MarkTimedOut(protocol.Gen02)
	b, _ = json.Marshal(m)
	assert.JSONEq(t, `{"content":[],"isError":true,"_meta":{"a2c_timeout":true}}`, string(b))
	assert.NoError(t, protocol.Gen02.Validate(protocol.EventToolCall, protocol.Ack, b))
}

func TestWindowMeta(t *testing.T) {
	for v, want := range map[any]float64{0.8: 0.8, 1.0: 1, 0.0: 0, 1.5: 0, -0.1: 0, "0.5": 0, nil: 0, json.Number("0.25"): 0.25} {
		assert.Equal(t, want, protocol.WindowPriority(map[string]any{"priority": v}), "%v", v)
	}
	assert.Zero(t, protocol.WindowPriority(nil))
	assert.True(t, protocol.WindowFullscreen(map[string]any{"fullscreen": true}))
	assert.False(t, protocol.WindowFullscreen(map[string]any{"fullscreen": "true"}))
	assert.False(t, protocol.WindowFullscreen(nil))
	ann, meta := protocol.WindowMeta(7, true)
	assert.Equal(t, 1.0, protocol.WindowPriority(ann))
	assert.True(t, protocol.WindowFullscreen(meta))
	ann, meta = protocol.WindowMeta(0.3, false)
	assert.Equal(t, 0.3, protocol.WindowPriority(ann))
	assert.Nil(t, meta)
}

// TestValidateAnyGeneration: a payload valid in some generation that has
// the event passes; one valid in none fails with the newest generation's
// error; an event no generation has is a 400.
func TestValidateAnyGeneration(t *testing.T) {
	tool04 := map[string]any{"req_id": "r", "tools": []any{map[string]any{"name": "b__echo", "bundle_id": "b",
		"description": "", "params_schema": map[string]any{}, "return_schema": nil}}}
	require.NoError(t, protocol.ValidateAnyGeneration(protocol.EventGetTools, protocol.Ack, tool04))
	tool02 := map[string]any{"req_id": "r", "tools": []any{map[string]any{"name": "echo",
		"description": "", "params_schema": map[string]any{}, "return_schema": nil}}}
	require.Error(t, protocol.Gen04.ValidateValue(protocol.EventGetTools, protocol.Ack, tool02), "0.4 requires bundle_id")
	require.NoError(t, protocol.ValidateAnyGeneration(protocol.EventGetTools, protocol.Ack, tool02), "valid in 0.2.0")
	// notify:update_skills exists in 0.3/0.4 only.
	require.NoError(t, protocol.ValidateAnyGeneration(protocol.NotifyUpdateSkills, protocol.Request, map[string]any{"computer": "c"}))

	err := protocol.ValidateAnyGeneration(protocol.EventGetTools, protocol.Ack, map[string]any{"tools": "no"})
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, protocol.CodeBadRequest, pe.Code)
	require.ErrorAs(t, protocol.ValidateAnyGeneration("client:nope", protocol.Request, map[string]any{}), &pe)
	require.Equal(t, protocol.CodeBadRequest, pe.Code)
}
