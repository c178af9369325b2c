//! A scripted A2C-SMCP Agent built on the Rust SDK's `smcp-agent`, driven by
//! the Go interop tests (e2e/rust_interop_test.go).
//!
//! Configuration comes from the environment: SMCP_URL, SMCP_API_KEY,
//! SMCP_AUTH_HEADER (the header carrying the key, default x-api-key),
//! SMCP_OFFICE, SMCP_AGENT, SMCP_TIMEOUT and SMCP_TOOL_TIMEOUT (seconds).
//!
//! Standard input carries one JSON step per line, e.g.
//! `{"op":"tool_call","computer":"desk","tool":"echo","params":{"text":"hi"}}`;
//! standard output carries one JSON line per step,
//! `{"op":…,"ok":true,"result":…}` or `{"op":…,"ok":false,"error":…}`, and one
//! line per notification the SDK hands to its event handler,
//! `{"notify":…,…}`. Every step has a deadline (`deadline_ms`, default 60 s)
//! so that an SDK call that never returns is reported as
//! `{"ok":false,"hung":true}` instead of hanging the test.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{json, Value};
use smcp::{EnterOfficeNotification, LeaveOfficeNotification, SMCPTool, UpdateMCPConfigNotification};
use smcp_agent::{
    AsyncAgentEventHandler, AsyncSmcpAgent, DefaultAuthProvider, SmcpAgentConfig, SmcpAgentError,
};
use tf_rust_socketio::asynchronous::{Client, ClientBuilder};
use tf_rust_socketio::{Event, Payload, TransportType};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{oneshot, Mutex};

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
}

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn str_arg<'a>(step: &'a Value, key: &str) -> Result<&'a str, String> {
    step.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("step needs a string {key:?}"))
}

/// Emits one event with an ack on a plain tf-rust-socketio client (the
/// transport the SDK uses) and returns every value of the ack, so the test
/// sees the ack's arity as a Rust client receives it.
async fn raw_call(client: &Client, event: &str, data: Value, wait: Duration) -> Result<Value, String> {
    let (tx, rx) = oneshot::channel::<Vec<Value>>();
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let cb = move |payload: Payload, _c: Client| {
        let tx = tx.clone();
        let fut: futures_util_boxed::BoxFuture = Box::pin(async move {
            let values = match payload {
                Payload::Text(values, _) => values,
                #[allow(deprecated)]
                Payload::String(s, _) => vec![Value::String(s)],
                Payload::Binary(_, _) => vec![Value::String("<binary>".into())],
            };
            if let Some(tx) = tx.lock().ok().and_then(|mut g| g.take()) {
                let _ = tx.send(values);
            }
        });
        fut
    };
    client
        .emit_with_ack(event, Payload::Text(vec![data], None), wait, cb)
        .await
        .map_err(|e| e.to_string())?;
    match tokio::time::timeout(wait, rx).await {
        Ok(Ok(values)) => Ok(Value::Array(values)),
        Ok(Err(_)) => Err("the ack was dropped".into()),
        Err(_) => Err("no ack".into()),
    }
}

/// A tiny alias module so the callback's type reads plainly.
mod futures_util_boxed {
    pub type BoxFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;
}

struct Peer {
    agent: AsyncSmcpAgent,
    url: String,
    header: String,
    key: String,
    office: String,
    name: String,
    raw: Mutex<HashMap<String, Client>>,
}

impl Peer {
    async fn raw_client(&self, id: &str) -> Result<Client, String> {
        let mut raw = self.raw.lock().await;
        if let Some(c) = raw.get(id) {
            return Ok(c.clone());
        }
        // connect() returns before the Server has answered the namespace
        // CONNECT (the SDK sleeps 100 ms instead); an event sent earlier is
        // dropped by some servers, so wait for the CONNECT answer.
        let (tx, rx) = oneshot::channel::<()>();
        let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
        let c = ClientBuilder::new(self.url.as_str())
            .namespace("/smcp")
            .transport_type(TransportType::Websocket)
            .opening_header(self.header.as_str(), self.key.as_str())
            .reconnect(false)
            .on(Event::Connect, move |_payload: Payload, _c: Client| {
                if let Some(tx) = tx.lock().ok().and_then(|mut g| g.take()) {
                    let _ = tx.send(());
                }
                let fut: futures_util_boxed::BoxFuture = Box::pin(async {});
                fut
            })
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        tokio::time::timeout(Duration::from_secs(10), rx)
            .await
            .map_err(|_| "no namespace CONNECT answer".to_string())?
            .map_err(|_| "no namespace CONNECT answer".to_string())?;
        raw.insert(id.to_string(), c.clone());
        Ok(c)
    }

    async fn step(&self, step: &Value) -> Result<Value, String> {
        let op = str_arg(step, "op")?;
        let err = |e: SmcpAgentError| e.to_string();
        match op {
            "join" => {
                self.agent.join_office(&self.name).await.map_err(err)?;
                Ok(Value::Null)
            }
            "leave" => {
                self.agent.leave_office().await.map_err(err)?;
                Ok(Value::Null)
            }
            "list_room" => {
                let office = step.get("office").and_then(Value::as_str).unwrap_or(&self.office);
                let sessions = self.agent.list_room(office).await.map_err(err)?;
                Ok(json!(sessions))
            }
            "get_tools" => {
                let tools = self.agent.get_tools(str_arg(step, "computer")?).await.map_err(err)?;
                Ok(json!(tools))
            }
            "get_desktop" => {
                let size = step.get("size").and_then(Value::as_i64).map(|s| s as i32);
                let window = step.get("window").and_then(Value::as_str).map(String::from);
                let desktops = self
                    .agent
                    .get_desktop(str_arg(step, "computer")?, size, window)
                    .await
                    .map_err(err)?;
                Ok(json!(desktops))
            }
            "tool_call" => {
                let params = step.get("params").cloned().unwrap_or_else(|| json!({}));
                self.agent
                    .tool_call(str_arg(step, "computer")?, str_arg(step, "tool")?, params)
                    .await
                    .map_err(err)
            }
            "raw_call" => {
                // On a separate plain Socket.IO connection named by "client".
                let id = step.get("client").and_then(Value::as_str).unwrap_or("raw");
                let client = self.raw_client(id).await?;
                let data = step.get("data").cloned().unwrap_or(Value::Null);
                let wait = Duration::from_millis(step.get("wait_ms").and_then(Value::as_u64).unwrap_or(10_000));
                raw_call(&client, str_arg(step, "event")?, data, wait).await
            }
            "raw_close" => {
                let id = step.get("client").and_then(Value::as_str).unwrap_or("raw");
                if let Some(c) = self.raw.lock().await.remove(id) {
                    c.disconnect().await.map_err(|e| e.to_string())?;
                }
                Ok(Value::Null)
            }
            "sleep" => {
                let ms = step.get("ms").and_then(Value::as_u64).unwrap_or(100);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(Value::Null)
            }
            other => Err(format!("unknown op {other:?}")),
        }
    }
}

#[tokio::main]
async fn main() {
    let url = env("SMCP_URL", "http://127.0.0.1:8000");
    let header = env("SMCP_AUTH_HEADER", "x-api-key");
    let key = env("SMCP_API_KEY", "");
    let office = env("SMCP_OFFICE", "o1");
    let name = env("SMCP_AGENT", "rust-agent");
    let timeout: u64 = env("SMCP_TIMEOUT", "20").parse().unwrap_or(20);
    let tool_timeout: u64 = env("SMCP_TOOL_TIMEOUT", "20").parse().unwrap_or(20);

    let auth = DefaultAuthProvider::new(name.clone(), office.clone())
        .with_api_key(key.clone())
        .with_auth_header_name(header.clone());
    let config = SmcpAgentConfig::new()
        .with_default_timeout(timeout)
        .with_tool_call_timeout(tool_timeout);
    let mut agent = AsyncSmcpAgent::new(auth, config).with_event_handler(Printer);
    if let Err(e) = agent.connect(&url).await {
        emit_line(json!({"op": "connect", "ok": false, "error": e.to_string()}));
        std::process::exit(1);
    }
    emit_line(json!({"op": "connect", "ok": true}));

    let peer = Peer { agent, url, header, key, office, name, raw: Mutex::new(HashMap::new()) };
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
        let op = step.get("op").cloned().unwrap_or(Value::Null);
        if op == "quit" {
            break;
        }
        let deadline = Duration::from_millis(step.get("deadline_ms").and_then(Value::as_u64).unwrap_or(60_000));
        let started = Instant::now();
        let out = match tokio::time::timeout(deadline, peer.step(&step)).await {
            Ok(Ok(result)) => json!({"op": op, "ok": true, "result": result}),
            Ok(Err(e)) => json!({"op": op, "ok": false, "error": e}),
            Err(_) => json!({"op": op, "ok": false, "hung": true, "error": "no answer before the step deadline"}),
        };
        let mut out = out;
        out["ms"] = json!(started.elapsed().as_millis() as u64);
        emit_line(out);
    }
    for (_, c) in peer.raw.lock().await.drain() {
        let _ = c.disconnect().await;
    }
}
