//! An A2C-SMCP Computer built on the Rust SDK's `smcp-computer` library, for
//! the Go interop tests (e2e/rust_interop_test.go).
//!
//! It wires the SDK's Socket.IO client (`SmcpComputerClientBuilder`) to an
//! `MCPServerManager` holding the MCP servers of a config file — what the
//! SDK's own `Computer::connect_socketio` should do but does not (it hands the
//! client a new, empty manager; see conformance/lockstep-rust.md).
//!
//! Usage: rustpeer-computer CONFIG.json, with SMCP_URL, SMCP_API_KEY,
//! SMCP_AUTH_HEADER (default x-api-key), SMCP_OFFICE and SMCP_COMPUTER in the
//! environment. CONFIG.json is `{"servers":[…]}` in the SDK's own format.
//! Prints `{"ready":true,"tools":[…]}` once joined, then reads commands from
//! standard input, one per line: `update_config`, `update_tool_list`,
//! `update_desktop`, `leave`, `join`; each answered with a JSON line. Closing
//! standard input disconnects and exits. The SDK's log (RUST_LOG) goes to
//! standard error.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};
use smcp_computer::mcp_clients::{MCPServerConfig, MCPServerManager};
use smcp_computer::socketio_client::SmcpComputerClientBuilder;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::RwLock;

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    println!("{}", json!({"error": format!("{what}: {e}")}));
    std::process::exit(1);
}

#[tokio::main]
async fn main() {
    // The SDK's own log lines (RUST_LOG, e.g. smcp_computer=debug) go to
    // standard error; the tests read some of them.
    tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let path = std::env::args().nth(1).unwrap_or_else(|| fail("usage", "rustpeer-computer CONFIG.json"));
    let url = env("SMCP_URL", "http://127.0.0.1:8000");
    let header = env("SMCP_AUTH_HEADER", "x-api-key");
    let key = env("SMCP_API_KEY", "");
    let office = env("SMCP_OFFICE", "o1");
    let name = env("SMCP_COMPUTER", "rust-computer");

    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail("reading the config", e));
    let cfg: Value = serde_json::from_str(&text).unwrap_or_else(|e| fail("parsing the config", e));
    let servers: Vec<MCPServerConfig> =
        serde_json::from_value(cfg.get("servers").cloned().unwrap_or_else(|| json!([])))
            .unwrap_or_else(|e| fail("parsing the servers", e));

    let manager = MCPServerManager::new();
    manager.initialize(servers).await.unwrap_or_else(|e| fail("initializing the MCP servers", e));
    manager.start_all().await.unwrap_or_else(|e| fail("starting the MCP servers", e));
    let tools: Vec<String> = manager.list_available_tools().await.iter().map(|t| t.name.to_string()).collect();
    let manager = Arc::new(RwLock::new(Some(manager)));

    let client = SmcpComputerClientBuilder::new(url, manager.clone(), name, Arc::new(RwLock::new(HashMap::new())))
        .auth_secret(key)
        .auth_header_name(header)
        .connect()
        .await
        .unwrap_or_else(|e| fail("connecting", e));
    client.join_office(&office).await.unwrap_or_else(|e| fail("joining", e));
    println!("{}", json!({"ready": true, "tools": tools}));

    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let cmd = line.trim();
        let res = match cmd {
            "" => continue,
            "update_config" => client.emit_update_config().await,
            "update_tool_list" => client.emit_update_tool_list().await,
            "update_desktop" => client.emit_update_desktop().await,
            "leave" => client.leave_office(&office).await,
            "join" => client.join_office(&office).await,
            other => {
                println!("{}", json!({"cmd": other, "ok": false, "error": "unknown command"}));
                continue;
            }
        };
        match res {
            Ok(()) => println!("{}", json!({"cmd": cmd, "ok": true})),
            Err(e) => println!("{}", json!({"cmd": cmd, "ok": false, "error": e.to_string()})),
        }
    }
    let _ = client.disconnect().await;
    let m = manager.write().await.take();
    if let Some(m) = m {
        let _ = m.stop_all().await;
    }
}
