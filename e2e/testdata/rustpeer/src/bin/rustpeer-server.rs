//! The Rust SDK's Server (smcp-server-core's Socket.IO layer served by
//! smcp-server-hyper) with an API key, for the Go interop tests.
//!
//! The SDK's own `smcp-server-hyper` binary builds its layer with the default
//! authentication provider and no admin secret, which refuses every
//! connection (see conformance/lockstep-rust.md); this program builds the
//! same layer with the key in SMCP_API_KEY, read from the header named by
//! SMCP_AUTH_HEADER (default x-api-key), and serves it on the address given
//! as the first argument (default 127.0.0.1:0). The SDK logs
//! "Server listening on ADDR" to standard error once it is bound.

use smcp_server_core::SmcpServerBuilder;
use smcp_server_hyper::HyperServerBuilder;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".into()).parse()?;
    let key = std::env::var("SMCP_API_KEY").map_err(|_| "SMCP_API_KEY is not set")?;
    let header = std::env::var("SMCP_AUTH_HEADER").unwrap_or_else(|_| "x-api-key".into());
    let layer = SmcpServerBuilder::new()
        .with_default_auth(Some(key), Some(header))
        .build_layer()?;
    HyperServerBuilder::new().with_layer(layer).with_addr(addr).build().run(addr).await
}
