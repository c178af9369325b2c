// Package e2e holds end-to-end tests across the roles: a real Server, real
// Computers running real MCP servers, and real Agents, over loopback. The
// Rust interop tests (rust_interop_test.go) also run the Rust SDK's Server,
// Agent and Computer, built from testdata/rustpeer by `go run mage.go
// setup`; conformance/lockstep-rust.md lists what they found. The reference
// peers of protocols 0.3 and 0.4 (a2c-smcp 0.3.3 and 0.4.2, the Rust crates
// 0.4.1) run under the harness of peers_test.go; PEERS.md says how to start
// them and which of their defects the drivers work around.
package e2e
