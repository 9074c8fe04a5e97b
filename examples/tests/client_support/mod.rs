//! What the client tests share: a client builder whose sampling and elicitation handlers
//! answer as the conformance suite's client does and record what they were asked.

use std::sync::{Arc, Mutex};

use mcp_client::{Client, ClientBuilder, Revision};
use mcp_core::types::{CreateMessageResult, ElicitRequestParams, ElicitResult};
use serde_json::{Map, json};

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
            // Accept with a value for each property: its default when it has one.
            let mut content = Map::new();
            for (name, schema) in form.requested_schema.properties {
                let schema = serde_json::to_value(schema).unwrap_or_default();
                let value = schema
                    .get("default")
                    .cloned()
                    .unwrap_or_else(|| json!(format!("{name}-value")));
                content.insert(name, value);
            }
            Ok(ElicitResult::accept(content))
        })
}
