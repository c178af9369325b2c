package dpekit

// SessionsForTest returns how many MCP sessions the Server tracks for
// notifications.
func SessionsForTest(s *Server) int {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	return len(s.subs.sessions)
}

// SubscriptionsForTest returns the URIs a session subscribed to.
func SubscriptionsForTest(s *Server, sessionID string) []string {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	var out []string
	if st := s.subs.sessions[sessionID]; st != nil {
		for u := range st.uris {
			out = append(out, u)
		}
	}
	return out
}
