//! What the interop drivers in src/bin share.

/// Sends the SDK's log (tracing, filtered by RUST_LOG, else `default`) to
/// standard error: standard output carries the drivers' JSON lines.
pub fn init_log(default: &str) {
    tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| default.into()))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

/// The environment variable `name`, or `default` when it is not set.
pub fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}
