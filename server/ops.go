package server

import (
	"context"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Ready reports whether the Server can take new sessions (README.md,
// Operations): nil while it serves; a 503 *protocol.Error once Close has
// begun or, in cluster mode, while Redis is unreachable. It is what
// smcp-server's /readyz answers.
func (s *Server) Ready(ctx context.Context) error {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return protocol.NewUnavailable("server is shutting down")
	}
	return s.clusterReady(ctx)
}
