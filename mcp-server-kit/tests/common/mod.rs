//! What the kit's tests share: a session of a server opened in memory, driven with JSON values.
#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::jsonrpc::{Message, RequestId, decode};
use mcp_core::service::{Closed, Outbound, Service, Session, SessionInfo, TransportKind};
use mcp_server_kit::Server;
use serde_json::{Value, json};

#[cfg(unix)]
pub mod stdio;

/// How long a test waits for one message before it fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// How many messages may wait for the test to read them (a server that sends more blocks).
const BACKLOG: usize = 4096;

/// An outbound that hands every message to the test.
pub struct Collect(pub Mutex<SyncSender<Message>>);

impl Outbound for Collect {
    fn send(&self, msg: Message, _related: Option<&RequestId>) -> Result<(), Closed> {
        self.0.lock().unwrap().send(msg).map_err(|_| Closed)
    }
}

/// One client connection: the session, and what the server sent on it.
pub struct Peer {
    pub session: Arc<dyn Session>,
    pub rx: Receiver<Message>,
}

impl Peer {
    /// A session of `server` over an in-memory transport.
    pub fn open(server: &Server) -> Peer {
        Peer::open_with(server, SessionInfo::new(TransportKind::Memory))
    }

    /// A session of `server` described by `info`.
    pub fn open_with(server: &Server, info: SessionInfo) -> Peer {
        let (tx, rx) = sync_channel(BACKLOG);
        let session = server.open(info, Arc::new(Collect(Mutex::new(tx))));
        Peer { session, rx }
    }

    /// Hands one message to the session.
    pub fn send(&self, json: Value) {
        self.session
            .handle(decode(json.to_string().as_bytes()).unwrap());
    }

    /// The next message the server sent, within [`WAIT`].
    pub fn next(&self) -> Value {
        let m = self
            .rx
            .recv_timeout(WAIT)
            .expect("a message from the server");
        serde_json::from_slice(&m.to_vec()).unwrap()
    }

    /// The response to `id`, and what came before it.
    pub fn response(&self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let v = self.next();
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                return (v, before);
            }
            before.push(v);
        }
    }

    /// Sends a request and returns its response.
    pub fn request(&self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id).0
    }

    /// `initialize` at `version` with `caps`, then `notifications/initialized`.
    pub fn initialize(&self, version: &str, caps: Value) -> Value {
        let r = self.request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": caps,
                   "clientInfo": {"name": "test", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }
}
