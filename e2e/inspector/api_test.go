package inspector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/inspector"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// answer is one response of the inspector's API.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(a.body), &v), a.body)
	return v
}

// errorCode is the protocol code of an error answer.
func (a answer) errorCode(t *testing.T) int {
	t.Helper()
	e, ok := a.json(t)["error"].(map[string]any)
	require.True(t, ok, "not an error: %s", a.body)
	return int(e["code"].(float64))
}

func request(t *testing.T, c *http.Client, method, u string, body string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{res.StatusCode, res.Header, string(b)}
}

func csrfToken(t *testing.T, base string) string {
	t.Helper()
	a := request(t, http.DefaultClient, "GET", base+"/api/session", "", nil)
	require.Equal(t, http.StatusOK, a.status, a.body)
	return a.json(t)["csrf"].(string)
}

// State-changing requests need the page's token, the same origin and a
// JSON body; every answer carries the strict Content-Security-Policy; the
// API key never reaches the browser; the page answers loopback names only.
func TestSecurity(t *testing.T) {
	d := startServer(t)
	_, base := dialInspector(t, d)
	token := csrfToken(t, base)
	call := `{"call_id":"c1","computer":"nobody","tool":"echo","params":{}}`
	jsonCT := map[string]string{"Content-Type": "application/json"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "X-SMCP-CSRF": token}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}

	t.Run("csrf", func(t *testing.T) {
		for name, tc := range map[string]struct {
			header map[string]string
			code   int
		}{
			"no token":          {jsonCT, 403},
			"wrong token":       {map[string]string{"Content-Type": "application/json", "X-SMCP-CSRF": "x" + token}, 403},
			"other origin":      {with(map[string]string{"Origin": "http://evil.example"}), 403},
			"cross-site fetch":  {with(map[string]string{"Sec-Fetch-Site": "cross-site"}), 403},
			"form content type": {with(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}), 400},
		} {
			a := request(t, http.DefaultClient, "POST", base+"/api/call", call, tc.header)
			assert.Equal(t, tc.code, a.errorCode(t), "%s: %s", name, a.body)
		}
		a := request(t, http.DefaultClient, "POST", base+"/api/cancel", `{"call_id":"c1"}`, jsonCT)
		assert.Equal(t, 403, a.errorCode(t), a.body)
		// With the token, the request goes through to the office: there
		// is no Computer "nobody" there.
		a = request(t, http.DefaultClient, "POST", base+"/api/call", call, with(map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}))
		assert.NotContains(t, []int{400, 403}, a.errorCode(t), a.body)
		a = request(t, http.DefaultClient, "POST", base+"/api/cancel", `{"call_id":"none"}`, with(nil))
		assert.Equal(t, 404, a.errorCode(t), a.body)
		a = request(t, http.DefaultClient, "GET", base+"/api/call", "", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, a.status)
	})

	t.Run("limits", func(t *testing.T) {
		big := `{"call_id":"c2","computer":"x","tool":"y","params":{"s":"` + strings.Repeat("a", 1<<20) + `"}}`
		a := request(t, http.DefaultClient, "POST", base+"/api/call", big, with(nil))
		assert.Equal(t, 413, a.errorCode(t))
		a = request(t, http.DefaultClient, "POST", base+"/api/call", `{"call_id":"","computer":"x","tool":"y"}`, with(nil))
		assert.Equal(t, 400, a.errorCode(t))
		a = request(t, http.DefaultClient, "POST", base+"/api/call", `{"call_id":"c3","computer":"x","tool":"y","timeout":100000}`, with(nil))
		assert.Equal(t, 400, a.errorCode(t))
		a = request(t, http.DefaultClient, "GET", base+"/api/finder?computer=x&limit=-1", "", nil)
		assert.Equal(t, 400, a.errorCode(t))
		a = request(t, http.DefaultClient, "GET", base+"/api/finder?computer=x&limit=101", "", nil)
		assert.Equal(t, 404, a.errorCode(t), "the organizer's maximum applies: the request goes on (to no such Computer)")
		a = request(t, http.DefaultClient, "GET", base+"/api/read?computer=x&uri=http://example.com", "", nil)
		assert.Equal(t, 4204, a.errorCode(t))
	})

	t.Run("headers", func(t *testing.T) {
		for _, p := range []string{"/", "/finder?computer=x", "/static/app.js", "/api/session", "/api/office"} {
			a := request(t, http.DefaultClient, "GET", base+p, "", nil)
			require.Equal(t, http.StatusOK, a.status, "%s: %s", p, a.body)
			csp := a.header.Get("Content-Security-Policy")
			assert.Contains(t, csp, "script-src 'self'", p)
			assert.Contains(t, csp, "default-src 'none'", p)
			assert.NotContains(t, csp, "unsafe-inline", p)
			assert.Equal(t, "nosniff", a.header.Get("X-Content-Type-Options"), p)
			assert.NotContains(t, a.body, d.key, "%s shows the API key", p)
		}
	})

	t.Run("loopback only", func(t *testing.T) {
		for _, host := range []string{"evil.example", "evil.example:80", "10.0.0.1"} {
			a := request(t, http.DefaultClient, "GET", base+"/api/session", "", map[string]string{"Host": host})
			assert.Equal(t, 403, a.errorCode(t), host)
		}
		for _, host := range []string{"localhost:1234", "127.0.0.1", "[::1]:80"} {
			a := request(t, http.DefaultClient, "GET", base+"/api/session", "", map[string]string{"Host": host})
			assert.Equal(t, http.StatusOK, a.status, host)
		}
	})
}

// With a login token the page shows nothing before the token is given,
// then works through its session cookie.
func TestLogin(t *testing.T) {
	d := startServer(t)
	_, base := dialInspector(t, d, inspector.WithLoginToken("s3cret-token"))
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	a := request(t, noRedirect, "GET", base+"/api/session", "", nil)
	assert.Equal(t, 401, a.errorCode(t))
	a = request(t, noRedirect, "GET", base+"/finder", "", nil)
	assert.Equal(t, http.StatusSeeOther, a.status)
	assert.Equal(t, "/login", a.header.Get("Location"))
	a = request(t, noRedirect, "GET", base+"/login", "", nil)
	assert.Equal(t, http.StatusOK, a.status)
	assert.Contains(t, a.body, `<form method="post" action="/login">`)
	assert.NotContains(t, a.body, "s3cret-token")
	a = request(t, noRedirect, "GET", base+"/static/app.css", "", nil)
	assert.Equal(t, http.StatusOK, a.status, "the login form has its style sheet")
	a = request(t, noRedirect, "POST", base+"/login", "token=wrong", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	assert.Equal(t, http.StatusUnauthorized, a.status)
	// Any Host is accepted once behind a login: the page is meant for other machines.
	a = request(t, noRedirect, "GET", base+"/api/office", "", map[string]string{"Host": "inspector.example:8080"})
	assert.Equal(t, 401, a.errorCode(t))

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	a = request(t, browser, "POST", base+"/login", "token=s3cret-token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	require.Equal(t, http.StatusOK, a.status, "redirected to the page")
	u, _ := url.Parse(base)
	cookies := jar.Cookies(u)
	require.Len(t, cookies, 1)
	a = request(t, browser, "GET", base+"/api/office", "", nil)
	assert.Equal(t, http.StatusOK, a.status, a.body)
	a = request(t, http.DefaultClient, "GET", base+"/api/office", "", map[string]string{"Cookie": "smcp_inspector=guess"})
	assert.Equal(t, 401, a.errorCode(t))
}

// The office holds one Agent: a second inspector is told the seat is taken,
// with code 4101.
func TestSeatTaken(t *testing.T) {
	d := startServer(t)
	dialInspector(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := inspector.Dial(ctx, d.url, d.office, inspector.WithAPIKey(d.key), inspector.WithName("second"), inspector.WithLogger(logger(t)))
	var perr *protocol.Error
	require.True(t, errors.As(err, &perr), "got %v", err)
	assert.Equal(t, protocol.CodeRoomFull, perr.Code)
	assert.Contains(t, perr.Message, "seat is taken")
}

// testAPI checks the API against the two real Computers of startOffice:
// the catalog paged by the Computer, the MCP-server filter, the sanitised
// rendering of a hostile document, and the Finder's error codes with their
// details.
func testAPI(t *testing.T, base string) {
	get := func(path string, q url.Values) answer {
		return request(t, http.DefaultClient, "GET", base+path+"?"+q.Encode(), "", nil)
	}

	a := get("/api/office", nil)
	require.Equal(t, http.StatusOK, a.status, a.body)
	assert.ElementsMatch(t, []any{"desk", "lab"}, a.json(t)["computers"])

	a = get("/api/finder", url.Values{"computer": {"lab"}, "offset": {"9990"}, "limit": {"20"}})
	require.Equal(t, http.StatusOK, a.status, a.body)
	assert.EqualValues(t, labDocs, a.json(t)["total_count"])
	assert.Len(t, a.json(t)["documents"], 10)

	a = get("/api/servers", url.Values{"computer": {"desk"}})
	require.Equal(t, http.StatusOK, a.status, a.body)
	assert.Equal(t, []any{"docs", "tools"}, a.json(t)["servers"])
	assert.NotContains(t, a.body, roleEnv, "only the names of the servers leave")

	a = get("/api/finder", url.Values{"computer": {"desk"}, "server": {"docs"}, "offset": {"1"}, "limit": {"2"}})
	require.Equal(t, http.StatusOK, a.status, a.body)
	assert.EqualValues(t, 5, a.json(t)["total_count"])
	assert.Len(t, a.json(t)["documents"], 2)
	a = get("/api/finder", url.Values{"computer": {"desk"}, "server": {"tools"}})
	assert.EqualValues(t, 0, a.json(t)["total_count"])
	a = get("/api/finder", url.Values{"computer": {"desk"}, "q": {"budget"}})
	assert.EqualValues(t, 1, a.json(t)["total_count"])

	page0 := dpe.PageURI(deskHost, docserver.DocRef("xss.md"), 0).String()
	a = get("/api/read", url.Values{"computer": {"desk"}, "uri": {page0}})
	require.Equal(t, http.StatusOK, a.status, a.body)
	html := strings.ToLower(a.json(t)["html"].(string))
	for _, bad := range []string{"<script", "onerror", "onload", "onmouseover", "javascript:", "<iframe", "<svg", "<img"} {
		assert.NotContains(t, html, bad)
	}
	assert.Contains(t, html, "<table>")

	doc := dpe.DocumentURI(deskHost, docserver.DocRef("quarterly-report.md"))
	for uri, code := range map[string]int{
		dpe.DocumentURI(deskHost, "missing").String():                4201,
		dpe.PageURI(deskHost, doc.DocRef, 99).String():               4202,
		dpe.ElementURI(deskHost, doc.DocRef, "nope").String():        4203,
		doc.String() + "?limit=0":                                    4204,
		fmt.Sprintf("dpe://%s/%s/pages/x", deskHost, doc.DocRef):     4204,
		dpe.DocumentURI(deskHost, doc.DocRef).String() + "?format=x": 4204,
	} {
		a := get("/api/read", url.Values{"computer": {"desk"}, "uri": {uri}})
		assert.Equal(t, code, a.errorCode(t), "%s: %s", uri, a.body)
	}
	a = get("/api/read", url.Values{"computer": {"desk"}, "uri": {dpe.PageURI(deskHost, doc.DocRef, 99).String()}})
	e := a.json(t)["error"].(map[string]any)
	assert.Equal(t, "PageOutOfRange", e["name"])
	assert.NotEmpty(t, e["details"], "the details reach the page")

	// The 0.4 capabilities: a skill, a page of resources, and the
	// refusals with their codes and statuses.
	a = get("/api/skill", url.Values{"computer": {"desk"}, "name": {"review"}})
	require.Equal(t, http.StatusOK, a.status, a.body)
	assert.Equal(t, "# Review\nRead the diff.\n", a.json(t)["body"])
	a = get("/api/resources", url.Values{"computer": {"desk"}, "server": {"docs"}, "offset": {"1"}, "limit": {"2"}})
	require.Equal(t, http.StatusOK, a.status, a.body)
	assert.Len(t, a.json(t)["resources"], 2)
	for _, tc := range []struct {
		path   string
		q      url.Values
		status int
		code   int
	}{
		{"/api/blob", url.Values{"computer": {"desk"}, "handle": {"sp1.guessed"}}, http.StatusNotFound, 4018},
		{"/api/blob", url.Values{"computer": {"desk"}}, http.StatusBadRequest, 400},
		{"/api/skill", url.Values{"computer": {"desk"}, "name": {"review"}, "path": {"../../etc/passwd"}}, http.StatusNotFound, 4017},
		{"/api/skill", url.Values{"computer": {"desk"}, "name": {"nope"}}, http.StatusNotFound, 4014},
		{"/api/skill", url.Values{"computer": {"desk"}}, http.StatusBadRequest, 400},
		{"/api/resources", url.Values{"computer": {"desk"}, "server": {"ghost"}}, http.StatusNotFound, 4014},
		{"/api/resources", url.Values{"computer": {"desk"}, "server": {"docs"}, "limit": {"101"}}, http.StatusBadRequest, 400},
	} {
		a := get(tc.path, tc.q)
		assert.Equal(t, tc.status, a.status, "%s %v: %s", tc.path, tc.q, a.body)
		assert.Equal(t, tc.code, a.errorCode(t), "%s %v: %s", tc.path, tc.q, a.body)
	}
}
