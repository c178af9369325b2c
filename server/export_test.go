package server

// WithTestHook runs hook at the start of every dispatched event, so tests can
// make a handler panic.
func WithTestHook(hook func(event string)) Option {
	return func(c *config) error {
		c.testHook = hook
		return nil
	}
}
