package server_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readUntil returns the first message with the given prefix, skipping the
// notifications a raw peer receives on the way.
func (r *rawConn) readUntil(prefix string) string {
	r.t.Helper()
	for {
		if m := r.read(); strings.HasPrefix(m, prefix) {
			return m
		}
	}
}

// TestRoutedBytesRelayedVerbatim: a routed request reaches the Computer as
// the bytes the Agent sent, and the Computer's answer reaches the Agent as
// the bytes the Computer sent (key order included): the Server decodes a
// request once to check it and never decodes an answer (docs/performance.md).
func TestRoutedBytesRelayedVerbatim(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.url)
	c.send(`42/smcp,1["server:join_office",{"role":"computer","name":"c1","office_id":"o1"}]`)
	require.Equal(t, `43/smcp,1[true,null]`, c.readUntil("43/smcp,1["))
	a := dialRaw(t, ts.url)
	a.send(`42/smcp,1["server:join_office",{"role":"agent","name":"a1","office_id":"o1"}]`)
	require.Equal(t, `43/smcp,1[true,null]`, a.readUntil("43/smcp,1["))

	const req = `{"req_id":"r1","computer":"c1","agent":"a1"}`
	a.send(`42/smcp,2["client:get_tools",` + req + `]`)
	got := c.readUntil(`42/smcp,`)
	for !strings.Contains(got, "client:get_tools") { // skip notify:enter_office
		got = c.readUntil(`42/smcp,`)
	}
	m := regexp.MustCompile(`^42/smcp,(\d+)\["client:get_tools",(.*)\]$`).FindStringSubmatch(got)
	require.NotNil(t, m, got)
	require.Equal(t, req, m[2], "the request is forwarded as sent")

	const answer = `{"tools":[],"req_id":"r1","zz":{"b":1,"a":[2.50,1e3]}}`
	c.send(`43/smcp,` + m[1] + `[` + answer + `]`)
	require.Equal(t, `43/smcp,2[`+answer+`]`, a.readUntil("43/smcp,2["), "the answer is relayed as sent")
}
