//! What a stdio server's transport learns of the revision its session negotiated, so that its
//! reader follows the batch rule every transport follows (`mcp_core::jsonrpc::check_batch`):
//! the reader notes the id of the `initialize` request it passes on, and the outbound side reads
//! `protocolVersion` from the answer to that id on its way out. (The HTTP transport learns it
//! the same way, from the answer it routes.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use mcp_core::jsonrpc::{Message, RequestId};
use mcp_core::version::ProtocolVersion;

/// The negotiated revision of one stdio session, once its `initialize` was answered.
#[derive(Debug, Default)]
pub(crate) struct Negotiated {
    /// Set while an `initialize` request waits for its answer: the outbound side looks at
    /// responses only then (one atomic load per message otherwise).
    waiting: AtomicBool,
    init_id: Mutex<Option<RequestId>>,
    version: OnceLock<ProtocolVersion>,
}

impl Negotiated {
    /// The reader passes `msg` on to the session.
    pub(crate) fn incoming(&self, msg: &Message) {
        if let Message::Request(r) = msg {
            if r.method == "initialize" && self.version.get().is_none() {
                *self.lock() = Some(r.id.clone());
                self.waiting.store(true, Ordering::Release);
            }
        }
    }

    /// The session sends `msg`.
    pub(crate) fn outgoing(&self, msg: &Message) {
        if !self.waiting.load(Ordering::Acquire) {
            return;
        }
        let Message::Response(r) = msg else {
            if let Message::Error(e) = msg {
                let mut id = self.lock();
                if e.id.is_some() && *id == e.id {
                    // Refused: nothing was negotiated.
                    *id = None;
                    self.waiting.store(false, Ordering::Release);
                }
            }
            return;
        };
        let mut id = self.lock();
        if id.as_ref() != Some(&r.id) {
            return;
        }
        *id = None;
        self.waiting.store(false, Ordering::Release);
        let version = r.result::<serde_json::Value>().ok().and_then(|v| {
            v.get("protocolVersion")
                .and_then(serde_json::Value::as_str)
                .and_then(ProtocolVersion::parse)
        });
        if let Some(v) = version {
            let _ = self.version.set(v);
        }
    }

    /// The revision negotiated, once `initialize` was answered.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.version.get().copied()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<RequestId>> {
        // Each write is one assignment: a poisoned value is still whole.
        self.init_id.lock().unwrap_or_else(|p| p.into_inner())
    }
}
