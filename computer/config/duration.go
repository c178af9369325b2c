package config

import (
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/sosodev/duration"
)

// Timeouts of a server connection, decoded from its server_parameters:
// streamable configs carry ISO-8601 durations (Python timedelta, e.g.
// "PT30S"), SSE configs float seconds. Zero means "not set".
type Timeouts struct {
	// Request bounds each MCP request of the Computer's own (listing,
	// reading); tool calls use the Agent's timeout instead.
	Request time.Duration
	// SSERead is how long an event stream may stay silent before the
	// Computer closes it (computer/mcpclient applies it to the HTTP client
	// it gives mcp-go, which has no such setting).
	SSERead time.Duration
}

// TimeoutsOf decodes the timeouts of s.
func TimeoutsOf(s protocol.MCPServerConfig) (Timeouts, error) {
	var t Timeouts
	switch {
	case s.Streamable != nil:
		p := s.Streamable.ServerParameters
		var err error
		if t.Request, err = isoDuration(p.Timeout); err != nil {
			return t, protocol.NewBadRequest("server %q: timeout %q: %v", s.Name(), p.Timeout, err).With("server", s.Name())
		}
		if t.SSERead, err = isoDuration(p.SSEReadTimeout); err != nil {
			return t, protocol.NewBadRequest("server %q: sse_read_timeout %q: %v", s.Name(), p.SSEReadTimeout, err).With("server", s.Name())
		}
	case s.SSE != nil:
		p := s.SSE.ServerParameters
		if p.Timeout != nil {
			t.Request = time.Duration(*p.Timeout * float64(time.Second))
		}
		if p.SSEReadTimeout != nil {
			t.SSERead = time.Duration(*p.SSEReadTimeout * float64(time.Second))
		}
	}
	return t, nil
}

// isoDuration parses an ISO-8601 duration with github.com/sosodev/duration
// (the format pydantic writes for timedelta, e.g. "PT30S", "P1DT2H").
func isoDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := duration.Parse(s)
	if err != nil {
		return 0, err
	}
	td := d.ToTimeDuration()
	if td < 0 {
		return 0, nil
	}
	return td, nil
}
