//! An A2C-SMCP Computer on the Rust SDK's `smcp-computer` 0.4.1 library
//! (protocol 0.4.0), for the Go interop harness (e2e/peers_test.go). It
//! speaks the same line protocol as the Python driver
//! (e2e/testdata/pypeer/computer.py).
//!
//! It uses the SDK's `Computer` the way its own CLI does (boot_up, then
//! connect_socketio and join_office), but takes the Computer's name from the
//! environment: the SDK's CLI always names itself "friday_hands" (its
//! `socket join OFFICE NAME` ignores NAME), so two of them cannot share an
//! office.
//!
//! Usage: rustpeer04-computer PEER.json, with SMCP_URL, SMCP_API_KEY (sent
//! the SDK's default way, as auth.token), SMCP_OFFICE and SMCP_COMPUTER in
//! the environment. PEER.json is `{"servers": [MCP server configs in the
//! SDK's format], "skill_home": DIR, "landing_root": DIR}`. Prints
//! `{"ready":true,"tools":[…]}` once joined (or `{"ready":false,"error":…}`
//! and exits 1), then reads commands from standard input, one per line —
//! update_config, update_tool_list, update_desktop, update_skills, leave,
//! join — each answered with one JSON line `{"cmd":…,"ok":…}`. Closing
//! standard input disconnects and exits. The SDK's log (RUST_LOG) goes to
//! standard error.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use smcp_computer::computer::{Computer, ConnectOptions, SilentSession};
use smcp_computer::errors::{ComputerError, ComputerResult};
use smcp_computer::mcp_clients::model::MCPServerConfig;
use smcp_go_rustpeer04::{env, init_log};
use tokio::io::{AsyncBufReadExt, BufReader};

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    println!("{}", json!({"ready": false, "error": format!("{what}: {e}")}));
    std::process::exit(1);
}

async fn command(computer: &Computer<SilentSession>, office: &str, name: &str, cmd: &str) -> ComputerResult<()> {
    let client = computer.get_socketio_client().read().await.clone();
    let client = || {
        client
            .clone()
            .ok_or_else(|| ComputerError::InvalidState("not connected".into()))
    };
    match cmd {
        "update_config" => computer.emit_update_config().await,
        "update_tool_list" => client()?.emit_update_tool_list().await,
        "update_desktop" => client()?.emit_update_desktop().await,
        "update_skills" => client()?.emit_update_skills().await,
        "leave" => computer.leave_office().await,
        "join" => computer.join_office(office, name).await,
        other => Err(ComputerError::InvalidState(format!("unknown command {other:?}"))),
    }
}

#[tokio::main]
async fn main() {
    init_log("warn");
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| fail("usage", "rustpeer04-computer PEER.json"));
    let url = env("SMCP_URL", "http://127.0.0.1:8000");
    let key = env("SMCP_API_KEY", "");
    let office = env("SMCP_OFFICE", "o1");
    let name = env("SMCP_COMPUTER", "rust-computer");
    let timeout = Duration::from_secs(env("SMCP_TIMEOUT", "20").parse().unwrap_or(20));

    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail("reading the peer config", e));
    let peer: Value = serde_json::from_str(&text).unwrap_or_else(|e| fail("parsing the peer config", e));
    let servers: Vec<MCPServerConfig> =
        serde_json::from_value(peer.get("servers").cloned().unwrap_or_else(|| json!([])))
            .unwrap_or_else(|e| fail("parsing the servers", e));
    let servers: HashMap<String, MCPServerConfig> = servers
        .into_iter()
        .enumerate()
        .map(|(i, s)| (i.to_string(), s))
        .collect();

    let mut computer = Computer::new(
        name.clone(),
        SilentSession::new("rustpeer04"),
        None,
        Some(servers),
        true,
        true,
    );
    if let Some(home) = peer.get("skill_home").and_then(Value::as_str) {
        computer = computer.with_skill_home(home);
    }
    if let Some(root) = peer.get("landing_root").and_then(Value::as_str) {
        computer = computer.with_landing_root(root);
    }
    let bounded = |what: &'static str| {
        move |_| -> ComputerError { ComputerError::InvalidState(format!("{what} did not finish in time")) }
    };
    let started: ComputerResult<()> = async {
        tokio::time::timeout(Duration::from_secs(60), computer.boot_up())
            .await
            .map_err(bounded("boot_up"))??;
        tokio::time::timeout(Duration::from_secs(60), computer.start_all_mcp_clients())
            .await
            .map_err(bounded("starting the MCP servers"))??;
        let options = ConnectOptions {
            auth_payload: Some(json!({"token": key})),
            ..ConnectOptions::default()
        };
        tokio::time::timeout(
            timeout + Duration::from_secs(5),
            computer.connect_socketio(&url, options),
        )
        .await
        .map_err(bounded("connect_socketio"))??;
        // The Rust Server can drop the first event a client sends after
        // CONNECT (it registers its handlers after an async auth step): a
        // join that gets no answer is sent again, at most 3 times in all. A
        // refusal is final.
        for attempt in 1..=3 {
            let why = match tokio::time::timeout(timeout, computer.join_office(&office, &name)).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) if attempt == 3 || e.to_string().contains("Failed to join office") => return Err(e),
                Ok(Err(e)) => e.to_string(),
                Err(_) if attempt == 3 => {
                    return Err(ComputerError::InvalidState("join_office did not finish in time".into()))
                }
                Err(_) => format!("no answer in {}s", timeout.as_secs()),
            };
            eprintln!("join: {why}; sending it again");
        }
        Ok(())
    }
    .await;
    if let Err(e) = started {
        let _ = tokio::time::timeout(Duration::from_secs(15), computer.shutdown()).await;
        fail("starting", e);
    }
    let tools: Vec<String> = match computer.get_available_tools().await {
        Ok(tools) => tools.iter().map(|t| t.name.to_string()).collect(),
        Err(e) => fail("listing the tools", e),
    };
    println!("{}", json!({"ready": true, "tools": tools}));

    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let cmd = line.trim();
        if cmd.is_empty() {
            continue;
        }
        let out = match tokio::time::timeout(timeout, command(&computer, &office, &name, cmd)).await {
            Ok(Ok(())) => json!({"cmd": cmd, "ok": true}),
            Ok(Err(e)) => json!({"cmd": cmd, "ok": false, "error": e.to_string()}),
            Err(_) => json!({"cmd": cmd, "ok": false, "hung": true, "error": "no answer in time"}),
        };
        println!("{}", out);
    }
    if let Err(e) = tokio::time::timeout(Duration::from_secs(15), computer.shutdown()).await {
        eprintln!("shutdown: {e}");
    }
}
