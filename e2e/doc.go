// Package e2e holds end-to-end tests across the roles: a real Server, real
// Computers running real MCP servers, and real Agents, over loopback. The
// Rust interop tests (rust_interop_test.go) also run the Rust SDK's Server,
// Agent and Computer, built from testdata/rustpeer by `go run mage.go
// setup`; conformance/lockstep-rust.md lists what they found.
package e2e
