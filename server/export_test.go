package server

// WithTestHook runs hook at the start of every dispatched event, so tests can
// make a handler panic.
func WithTestHook(hook func(event string)) Option {
	return func(c *config) error {
		c.testHook = hook
		return nil
	}
}

// KillNode makes a cluster node stop as if its process had been killed:
// its heartbeat stops and its Redis connections close at once, without
// releasing anything.
func (s *Server) KillNode() {
	s.cl.cancel()
	_ = s.cl.rdb.Close()
}

// NodeID is a cluster node's id.
func (s *Server) NodeID() string { return s.cl.node }
