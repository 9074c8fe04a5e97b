//! What the client tests share: a client builder whose sampling and elicitation handlers
//! answer as the conformance suite's client does and record what they were asked.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, bounded};
use mcp_client::{Client, ClientBuilder, Revision};
use mcp_core::jsonrpc::Notification;
use mcp_core::types::{CreateMessageResult, ElicitRequestParams, ElicitResult};
use serde_json::{Map, Value, json};

/// What the handlers were asked, in order.
pub type Asked = Arc<Mutex<Vec<String>>>;

/// A client named `name` with sampling and elicitation handlers that record what they were
/// asked in `asked`.
pub fn builder(name: &str, revision: Revision, asked: &Asked) -> ClientBuilder {
    let (a, b) = (Arc::clone(asked), Arc::clone(asked));
    Client::builder()
        .client_info(name, "1.0.0")
        .revision(revision)
        .sampling(move |p| {
            let prompt = serde_json::to_value(&p.messages).unwrap_or_default();
            a.lock().unwrap().push(format!("sampling {prompt}"));
            Ok(serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant", "model": "test-model", "stopReason": "endTurn",
                "content": {"type": "text", "text": "This is a test response from the client"}
            }))
            .expect("a valid CreateMessageResult"))
        })
        .elicitation(move |p| {
            let ElicitRequestParams::Form(form) = p else {
                panic!("URL mode was not declared");
            };
            b.lock()
                .unwrap()
                .push(format!("elicitation {}", form.message));
            // Accept with a value for each property that the form allows: its default when it
            // has one, else the first choice of an enum (a list of one for a multi-select).
            let mut content = Map::new();
            for (name, schema) in form.requested_schema.properties {
                let schema = serde_json::to_value(schema).unwrap_or_default();
                let first = |s: &Value| {
                    s["enum"].get(0).cloned().or_else(|| {
                        let of = s.get("oneOf").or_else(|| s.get("anyOf"))?;
                        of.get(0)?.get("const").cloned()
                    })
                };
                let value = schema
                    .get("default")
                    .cloned()
                    .or_else(|| first(&schema))
                    .or_else(|| first(&schema["items"]).map(|v| json!([v])))
                    .unwrap_or_else(|| json!(format!("{name}-value")));
                content.insert(name, value);
            }
            Ok(ElicitResult::accept(content))
        })
}

/// Collects the notifications the client's callback receives.
#[allow(dead_code)] // not every test binary that includes this module listens
pub fn notification_sink() -> (
    impl Fn(&Notification) + Send + Sync + 'static,
    Receiver<Notification>,
) {
    let (tx, rx) = bounded(256);
    (
        move |n: &Notification| {
            let _ = tx.try_send(n.clone());
        },
        rx,
    )
}

/// The first notification that passes `pred`, within `within`.
#[allow(dead_code)]
pub fn wait_notification(
    rx: &Receiver<Notification>,
    within: Duration,
    pred: impl Fn(&Notification) -> bool,
) -> Notification {
    let deadline = Instant::now() + within;
    loop {
        let n = rx
            .recv_deadline(deadline)
            .expect("the notification arrives in time");
        if pred(&n) {
            return n;
        }
    }
}
