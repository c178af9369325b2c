package inspector

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// contentSecurityPolicy allows the page's own scripts, styles and requests
// and nothing else: no inline script or style, no other origin, no frame, no
// plugin. What a document or a tool returns cannot run even if it slipped
// through the sanitiser.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// csrfHeader carries the page's same-origin token on requests that change
// something (a tool call, its cancellation).
const csrfHeader = "X-SMCP-CSRF"

// sessionCookie holds the login token once a browser has given it.
const sessionCookie = "smcp_inspector"

// secure wraps the page's handler: security headers on every answer, the
// loopback Host check (no login token) or the login (with one).
func (in *Inspector) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if in.login == "" {
			if !loopbackHost(r.Host) {
				writeError(w, protocol.Errorf(protocol.CodeForbidden, "host %q is not a loopback name: this page is served for this machine only", r.Host))
				return
			}
		} else if r.URL.Path == "/login" {
			in.serveLogin(w, r)
			return
		} else if !in.loggedIn(r) && !strings.HasPrefix(r.URL.Path, "/static/") {
			// (The page's own files hold nothing secret, and the login
			// form uses its style sheet.)
			if strings.HasPrefix(r.URL.Path, "/api/") {
				writeError(w, protocol.Errorf(protocol.CodeUnauthorized, "log in first: open /login with the token smcp-inspector printed"))
				return
			}
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether the Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (in *Inspector) tokenOK(got string) bool {
	return in.login != "" && subtle.ConstantTimeCompare([]byte(got), []byte(in.login)) == 1
}

func (in *Inspector) loggedIn(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	return err == nil && in.tokenOK(c.Value)
}

// serveLogin shows the login form (GET) and checks the token (GET with
// ?token=, or the form's POST), setting the session cookie.
func (in *Inspector) serveLogin(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		token = r.PostFormValue("token")
	}
	if token != "" {
		if !in.tokenOK(token) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(loginPage("Wrong token."))
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: sessionCookie, Value: in.login, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int((12 * time.Hour).Seconds()),
		})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(loginPage(""))
}

func loginPage(msg string) []byte {
	// msg is one of our own constant strings.
	return []byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>smcp-inspector: log in</title>
<link rel="stylesheet" href="/static/app.css"></head><body><main>
<h1>smcp-inspector</h1><p>` + msg + `</p>
<form method="post" action="/login"><label for="token">Login token (printed by smcp-inspector at start)</label>
<input id="token" name="token" type="password" autocomplete="off" autofocus required>
<button type="submit">Log in</button></form></main></body></html>`)
}

// checkSameOrigin guards the requests that change something: they must
// carry the page's token in csrfHeader, come from this origin (Origin and
// Sec-Fetch-Site when the browser sends them) and be JSON, which a form on
// another site cannot send without a CORS preflight this server never
// grants.
func (in *Inspector) checkSameOrigin(r *http.Request) error {
	if r.Method != http.MethodPost {
		return protocol.Errorf(protocol.CodeBadRequest, "%s needs POST", r.URL.Path)
	}
	if got := r.Header.Get(csrfHeader); subtle.ConstantTimeCompare([]byte(got), []byte(in.csrf)) != 1 {
		return protocol.Errorf(protocol.CodeForbidden, "missing or wrong %s token", csrfHeader)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return protocol.Errorf(protocol.CodeForbidden, "cross-site request (Sec-Fetch-Site %s)", site)
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host && origin != "https://"+r.Host {
		return protocol.Errorf(protocol.CodeForbidden, "request from another origin")
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return protocol.Errorf(protocol.CodeBadRequest, "the body must be application/json")
	}
	return nil
}
