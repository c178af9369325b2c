//! The Rust SDK's Server of protocol 0.4 (smcp-server-core 0.4.1's Socket.IO
//! layer served by smcp-server-hyper 0.4.1) with an API key, for the Go
//! interop harness (e2e/peers_test.go).
//!
//! The SDK's own `smcp-server-hyper` binary builds its layer with the default
//! authentication provider and no admin secret, which refuses every
//! connection; this program builds the same layer with the key in
//! SMCP_API_KEY as the admin secret, read from the SDK's default auth field
//! (`auth.token`, or the field named by SMCP_AUTH_FIELD), and serves it with
//! the SDK's defaults: `HyperServer::run` wraps it in the version-handshake
//! gate, enabled, accepting 0.4.x only. It listens on the address given as
//! the first argument (default 127.0.0.1:0); the SDK logs "Server listening
//! on ADDR" to standard error once it is bound.

use smcp_go_rustpeer04::init_log;
use smcp_server_core::SmcpServerBuilder;
use smcp_server_hyper::HyperServerBuilder;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    init_log("info");
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into())
        .parse()?;
    let key = std::env::var("SMCP_API_KEY").map_err(|_| "SMCP_API_KEY is not set")?;
    let field = std::env::var("SMCP_AUTH_FIELD").ok();
    let layer = SmcpServerBuilder::new()
        .with_default_auth(Some(key), field)
        .build_layer()?;
    HyperServerBuilder::new()
        .with_layer(layer)
        .with_addr(addr)
        .build()
        .run(addr)
        .await
}
