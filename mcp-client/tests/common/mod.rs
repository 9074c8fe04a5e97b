//! What the client's test files share: JSON helpers and a scripted server on a memory pipe.
// Each test binary uses its own part of this.
#![allow(dead_code)]

use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, bounded};
use mcp_client::ChannelTransport;
use mcp_core::jsonrpc::{Message, decode};
use serde_json::{Value, json};

/// The safety net of every wait (tests wait on events; this only bounds a failure).
pub const WAIT: Duration = Duration::from_secs(10);

/// A wire message from JSON.
pub fn msg(v: Value) -> Message {
    decode(&serde_json::to_vec(&v).unwrap()).unwrap()
}

/// A wire message as JSON.
pub fn to_value(m: &Message) -> Value {
    serde_json::from_slice(&m.to_vec()).unwrap()
}

/// A result answer to `id`.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// What a scripted server does with one request (handshake excluded): the messages to send.
pub type Script = Box<dyn FnMut(&Value) -> Vec<Value> + Send>;

/// Starts a scripted server on one end of a memory pipe. It answers the handshake of its era:
/// `server/discover` with `modern_caps` when `modern`, else -32601 and then `initialize` with
/// `legacy_caps` (and the revision the client proposed); it hands every other message to
/// `script` and copies everything it receives to the returned channel.
pub fn scripted(
    modern: bool,
    modern_caps: Value,
    legacy_caps: Value,
    mut script: Script,
) -> (ChannelTransport, Receiver<Value>) {
    let (a, b) = mcp_stdio::memory(16).unwrap();
    let (seen_tx, seen_rx) = bounded(256);
    thread::spawn(move || {
        for item in &b.receiver {
            let Ok(m) = item else { continue };
            let v = to_value(&m);
            let _ = seen_tx.try_send(v.clone());
            let id = v.get("id").cloned();
            let replies = match (v["method"].as_str(), id) {
                (Some("server/discover"), Some(id)) if modern => vec![json!({
                "jsonrpc": "2.0", "id": id, "result": {
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": modern_caps,
                    "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}}
                }})],
                (Some("server/discover"), Some(id)) => vec![json!({
                    "jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "Method not found"}})],
                (Some("initialize"), Some(id)) => vec![json!({
                    "jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": v["params"]["protocolVersion"],
                        "capabilities": legacy_caps,
                        "serverInfo": {"name": "fake-legacy", "version": "1"}}})],
                (Some("notifications/initialized"), None) => vec![],
                _ => script(&v),
            };
            for r in replies {
                if b.sender.send(msg(r)).is_err() {
                    return;
                }
            }
        }
    });
    (ChannelTransport::new(a), seen_rx)
}
