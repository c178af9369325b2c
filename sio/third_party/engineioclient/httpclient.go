package engine

// smcp-go patch 15: what the transports used from
// github.com/zishang520/socket.io/v3/pkg/request, whose HTTP client (resty
// with an HTTP/3 transport for Alt-Svc upgrades) linked QUIC and HTTP/3
// into every client. An Engine.IO server answers long-polling over
// HTTP/1.1 or HTTP/2, which net/http speaks.

import (
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// newPollingClient returns the HTTP client of the polling transport: as
// upstream's, it bounds each request by timeout (0: no bound), keeps
// cookies in jar, uses tlsConfig, and does not follow redirects.
func newPollingClient(timeout time.Duration, jar http.CookieJar, tlsConfig *tls.Config) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConfig != nil {
		t.TLSClientConfig = tlsConfig
	}
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		Jar:       jar,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// statusError is the error of a response whose status is not 2xx, nil for
// a 2xx one.
func statusError(res *http.Response) error {
	if res.StatusCode >= 200 && res.StatusCode <= 299 {
		return nil
	}
	// smcp-go patch 16: the server's answer is kept.
	return newHandshakeError(res, fmt.Errorf("unexpected HTTP status %s", res.Status))
}

// randomString is the cache-busting timestamp parameter of a request:
// upstream's request.RandomString.
func randomString() string {
	timestamp := strconv.FormatInt(time.Now().UnixNano(), 36)[5:]
	random := strconv.FormatUint(rand.Uint64(), 36)
	if len(random) > 8 {
		random = random[2:8]
	}
	return timestamp + random
}
