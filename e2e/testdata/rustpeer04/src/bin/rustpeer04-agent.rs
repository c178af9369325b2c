//! A scripted A2C-SMCP Agent on the Rust SDK's `smcp-agent` 0.4.1 (protocol
//! 0.4.0), driven by the Go interop harness (e2e/peers_test.go). It speaks
//! the same line protocol as the Python driver (e2e/testdata/pypeer/agent.py).
//!
//! Configuration comes from the environment: SMCP_URL, SMCP_API_KEY (sent
//! the SDK's default way, as auth.token), SMCP_OFFICE, SMCP_AGENT,
//! SMCP_TIMEOUT and SMCP_TOOL_TIMEOUT (seconds, the SDK's own timeouts; the
//! SDK has no per-call timeout).
//!
//! Standard input carries one JSON step per line, e.g.
//! `{"op":"tool_call","computer":"c1","tool":"tools__echo","params":{"text":"hi"}}`;
//! standard output carries one JSON line per step, `{"op":…,"ok":true,"result":…}`
//! or `{"op":…,"ok":false,"error":…}`, and one line per notification the SDK
//! hands to its event handler, `{"notify":…,…}`. A step with an "id" runs in
//! the background and its answer carries the same "id". Every step has a
//! deadline (`deadline_ms`, default 60 s): an SDK call that never returns is
//! answered `{"ok":false,"hung":true}` instead of hanging the test. The first
//! line is the connection's outcome, `{"op":"connect",…}` — as the SDK reports
//! it: `connect()` returns Ok even when the Server refused the namespace
//! CONNECT, so a refused key shows up at the first request.
//!
//! Where the SDK cannot do what the matrix needs, the driver says so here:
//! - join: the SDK's join_office emits without an ack; the driver then lists
//!   the office until it sees itself there, and emits the join again when the
//!   listing lacks it (the Rust Server can drop the first event after
//!   CONNECT), at most 5 times. The answer is the listing that shows it.
//! - cancel: `tool_call` keeps the req_id it makes to itself, so
//!   `tool_call_cancel(req_id)` cannot name a call made through it; the
//!   cancel op sends `tool_call_cancel` for the req_id the step gives. The
//!   cancel the SDK does send for its own calls is the one on its tool-call
//!   timeout (SMCP_TOOL_TIMEOUT), answered locally with `meta.a2c_timeout`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use base64::Engine as _;
use serde_json::{json, Value};
use smcp::{
    A2CSkillRef, EnterOfficeNotification, LeaveOfficeNotification, SMCPTool, UpdateMCPConfigNotification,
    UpdateToolListNotification,
};
use smcp_agent::{AsyncAgentEventHandler, AsyncSmcpAgent, DefaultAuthProvider, SmcpAgentConfig, SmcpAgentError};
use smcp_go_rustpeer04::{env, init_log};
use tokio::io::{AsyncBufReadExt, BufReader};

fn emit_line(v: Value) {
    // stdout is line buffered; one println is one line.
    println!("{}", v);
}

/// Prints what the SDK hands to its event handler.
struct Printer;

#[async_trait]
impl AsyncAgentEventHandler for Printer {
    async fn on_computer_enter_office(
        &self,
        data: EnterOfficeNotification,
        _agent: &AsyncSmcpAgent,
    ) -> Result<(), SmcpAgentError> {
        emit_line(json!({"notify": "enter_office", "data": data}));
        Ok(())
    }

    async fn on_computer_leave_office(
        &self,
        data: LeaveOfficeNotification,
        _agent: &AsyncSmcpAgent,
    ) -> Result<(), SmcpAgentError> {
        emit_line(json!({"notify": "leave_office", "data": data}));
        Ok(())
    }

    async fn on_computer_update_config(
        &self,
        data: UpdateMCPConfigNotification,
        _agent: &AsyncSmcpAgent,
    ) -> Result<(), SmcpAgentError> {
        emit_line(json!({"notify": "update_config", "data": data}));
        Ok(())
    }

    async fn on_computer_update_tool_list(
        &self,
        data: UpdateToolListNotification,
        _agent: &AsyncSmcpAgent,
    ) -> Result<(), SmcpAgentError> {
        emit_line(json!({"notify": "update_tool_list", "data": data}));
        Ok(())
    }

    async fn on_tools_received(
        &self,
        computer: &str,
        tools: Vec<SMCPTool>,
        _agent: &AsyncSmcpAgent,
    ) -> Result<(), SmcpAgentError> {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        emit_line(json!({"notify": "tools", "computer": computer, "tools": names}));
        Ok(())
    }

    async fn on_desktop_updated(
        &self,
        computer: &str,
        desktops: Vec<String>,
        _agent: &AsyncSmcpAgent,
    ) -> Result<(), SmcpAgentError> {
        emit_line(json!({"notify": "desktop", "computer": computer, "desktops": desktops}));
        Ok(())
    }

    async fn on_skills_received(
        &self,
        computer: &str,
        skills: Vec<A2CSkillRef>,
        _agent: &AsyncSmcpAgent,
    ) -> Result<(), SmcpAgentError> {
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        emit_line(json!({"notify": "skills", "computer": computer, "skills": names}));
        Ok(())
    }
}

fn str_arg<'a>(step: &'a Value, key: &str) -> Result<&'a str, String> {
    step.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("step needs a string {key:?}"))
}

fn opt_str(step: &Value, key: &str) -> Option<String> {
    step.get(key).and_then(Value::as_str).map(String::from)
}

struct Peer {
    agent: AsyncSmcpAgent,
    office: String,
    name: String,
}

impl Peer {
    async fn step(&self, step: &Value) -> Result<Value, String> {
        let op = str_arg(step, "op")?;
        // A protocol refusal's Display is "[code] message": the reason of
        // details (4017, 4018) is added, as the Python driver's payload shows it.
        let err = |e: SmcpAgentError| match &e {
            SmcpAgentError::Protocol(p) => match &p.reason {
                Some(r) => format!("{e} (reason: {r})"),
                None => e.to_string(),
            },
            _ => e.to_string(),
        };
        let agent = &self.agent;
        match op {
            "join" => {
                for _ in 0..5 {
                    agent.join_office(&self.name).await.map_err(err)?;
                    let sessions = agent.list_room(&self.office).await.map_err(err)?;
                    if sessions.iter().any(|s| s.name == self.name) {
                        return Ok(json!(sessions));
                    }
                }
                Err("the office never listed this Agent after 5 joins".into())
            }
            "leave" => {
                agent.leave_office().await.map_err(err)?;
                Ok(Value::Null)
            }
            "list_room" => {
                let office = step.get("office").and_then(Value::as_str).unwrap_or(&self.office);
                Ok(json!(agent.list_room(office).await.map_err(err)?))
            }
            "get_tools" => Ok(json!(agent.get_tools(str_arg(step, "computer")?).await.map_err(err)?)),
            "get_config" => Ok(json!(agent
                .get_computer_config(str_arg(step, "computer")?)
                .await
                .map_err(err)?)),
            "get_desktop" => {
                let size = step.get("size").and_then(Value::as_i64).map(|s| s as i32);
                let desktops = agent
                    .get_desktop(str_arg(step, "computer")?, size, opt_str(step, "window"))
                    .await
                    .map_err(err)?;
                Ok(json!(desktops))
            }
            "tool_call" => {
                let params = step.get("params").cloned().unwrap_or_else(|| json!({}));
                agent
                    .tool_call(str_arg(step, "computer")?, str_arg(step, "tool")?, params)
                    .await
                    .map_err(err)
            }
            "cancel" => {
                let req_id = str_arg(step, "req_id")
                    .map_err(|_| "the SDK's tool_call does not reveal its req_id: give one".to_string())?;
                agent.tool_call_cancel(req_id).await.map_err(err)?;
                Ok(json!({"req_id": req_id}))
            }
            "get_resources" => {
                let ret = agent
                    .get_resources(
                        str_arg(step, "computer")?,
                        str_arg(step, "mcp_server")?,
                        opt_str(step, "cursor"),
                    )
                    .await
                    .map_err(err)?;
                Ok(json!(ret))
            }
            "get_skills" => Ok(json!(agent
                .get_skills(str_arg(step, "computer")?)
                .await
                .map_err(err)?)),
            "get_skill" => {
                let rel = opt_str(step, "rel_path");
                let ret = agent
                    .get_skill(str_arg(step, "computer")?, str_arg(step, "name")?, rel.as_deref())
                    .await
                    .map_err(err)?;
                Ok(json!(ret))
            }
            "get_blob" => {
                let ret = agent
                    .get_blob(
                        str_arg(step, "computer")?,
                        str_arg(step, "blob_handle")?,
                        step.get("chunk_offset").and_then(Value::as_u64),
                        step.get("max_chunk_bytes").and_then(Value::as_u64),
                    )
                    .await
                    .map_err(err)?;
                Ok(json!(ret))
            }
            "put_blob" => {
                let data = match step.get("data_b64").and_then(Value::as_str) {
                    Some(b) => base64::engine::general_purpose::STANDARD
                        .decode(b)
                        .map_err(|e| e.to_string())?,
                    None => step
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .as_bytes()
                        .to_vec(),
                };
                let hint = opt_str(step, "name_hint");
                let ret = agent
                    .put_blob(str_arg(step, "computer")?, &data, hint.as_deref(), None)
                    .await
                    .map_err(err)?;
                Ok(json!({"landing_path": ret.landing_path, "total_size": ret.total_size, "sha256": ret.sha256}))
            }
            other => Err(format!("unknown op {other:?}")),
        }
    }
}

async fn run_step(peer: Arc<Peer>, step: Value) {
    let op = step.get("op").cloned().unwrap_or(Value::Null);
    let deadline = Duration::from_millis(step.get("deadline_ms").and_then(Value::as_u64).unwrap_or(60_000));
    let started = Instant::now();
    let mut out = match tokio::time::timeout(deadline, peer.step(&step)).await {
        Ok(Ok(result)) => json!({"op": op, "ok": true, "result": result}),
        Ok(Err(e)) => json!({"op": op, "ok": false, "error": e}),
        Err(_) => json!({"op": op, "ok": false, "hung": true, "error": "no answer before the step deadline"}),
    };
    if let Some(id) = step.get("id") {
        out["id"] = id.clone();
    }
    out["ms"] = json!(started.elapsed().as_millis() as u64);
    emit_line(out);
}

#[tokio::main]
async fn main() {
    init_log("warn");
    let url = env("SMCP_URL", "http://127.0.0.1:8000");
    let key = env("SMCP_API_KEY", "");
    let office = env("SMCP_OFFICE", "o1");
    let name = env("SMCP_AGENT", "rust-agent");
    let timeout: u64 = env("SMCP_TIMEOUT", "20").parse().unwrap_or(20);
    let tool_timeout: u64 = env("SMCP_TOOL_TIMEOUT", "20").parse().unwrap_or(20);

    let auth = DefaultAuthProvider::new(name.clone(), office.clone()).with_api_key(key);
    let config = SmcpAgentConfig::new()
        .with_default_timeout(timeout)
        .with_get_timeout(timeout)
        .with_tool_call_timeout(tool_timeout);
    let mut agent = AsyncSmcpAgent::new(auth, config).with_event_handler(Printer);
    match tokio::time::timeout(Duration::from_secs(timeout + 5), agent.connect(&url)).await {
        Ok(Ok(())) => emit_line(json!({"op": "connect", "ok": true})),
        Ok(Err(e)) => {
            emit_line(json!({"op": "connect", "ok": false, "error": e.to_string()}));
            std::process::exit(1);
        }
        Err(_) => {
            emit_line(json!({"op": "connect", "ok": false, "hung": true, "error": "connect did not return"}));
            std::process::exit(1);
        }
    }

    let peer = Arc::new(Peer { agent, office, name });
    let mut background = Vec::new();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let step: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                emit_line(json!({"op": "parse", "ok": false, "error": e.to_string()}));
                continue;
            }
        };
        if step.get("op").and_then(Value::as_str) == Some("quit") {
            break;
        }
        if step.get("id").is_some() {
            background.push(tokio::spawn(run_step(peer.clone(), step)));
        } else {
            run_step(peer.clone(), step).await;
        }
    }
    for task in background {
        task.abort();
    }
}
