package protocol

// CallerVersionMember is the member an smcp-go Server adds to a client:*
// request it relays to an smcp-go Computer (one that declared extensions
// when it joined): the protocol version of the requesting Agent's session,
// its generation's ("0.2.0", "0.4.0"). A Computer whose Server confirmed
// its generation answers that request in the caller's generation instead
// of its own session's, so that a 0.2.0 Agent and a 0.4.0 Agent in one
// office each get their own tool names, markers and error shape. It is an
// smcp-go extension member: no reference peer sends or reads it, and the
// Server never relays it to a Computer that declared no extensions
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#confirmation-and-extensions).
const CallerVersionMember = "a2c_caller_version"

// CallerGeneration returns the generation a request names in its
// CallerVersionMember, when it names a version of a generation smcp-go
// speaks; ok is false otherwise (absent, not a string, unknown).
func CallerGeneration(payload any) (g Generation, ok bool) {
	m, _ := payload.(map[string]any)
	s, _ := m[CallerVersionMember].(string)
	if s == "" {
		return 0, false
	}
	g, err := ParseGeneration(s)
	if err != nil {
		return 0, false
	}
	return g, true
}
