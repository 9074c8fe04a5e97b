//! Hostile input into the typed decoders: truncated, mutated, mistyped and deeply nested JSON
//! must give errors, never panics.

use mcp_core::jsonrpc::{Message, decode};
use mcp_core::types::*;
use serde_json::json;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn feed(bytes: &[u8]) {
    if let Ok(msg) = decode(bytes) {
        match msg {
            Message::Request(r) => {
                let _ = ClientRequest::from_request(&r);
                let _ = ServerRequest::from_request(&r);
            }
            Message::Notification(n) => {
                let _ = ClientNotification::from_notification(&n);
                let _ = ServerNotification::from_notification(&n);
            }
            Message::Response(r) => {
                let _ = r.result::<CallToolResult>();
                let _ = r.result::<InputRequiredResult>();
                let _ = r.result::<CreateMessageResult>();
                let _ = r.result::<InitializeResult>();
            }
            Message::Error(_) => {}
        }
    }
    let _ = serde_json::from_slice::<ContentBlock>(bytes);
    let _ = serde_json::from_slice::<SamplingMessageContentBlock>(bytes);
    let _ = serde_json::from_slice::<ElicitRequestParams>(bytes);
    let _ = serde_json::from_slice::<PrimitiveSchemaDefinition>(bytes);
    let _ = serde_json::from_slice::<ResourceContents>(bytes);
    let _ = serde_json::from_slice::<RequestMeta>(bytes);
    let _ = serde_json::from_slice::<tasks_ext::TaskResult>(bytes);
}

const SEEDS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,2,{"b":null}]},"_meta":{"progressToken":"p"}}}"#,
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"x"},{"type":"resource","resource":{"uri":"u","blob":"AA"}}],"isError":false}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}]}}}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"1","content":[]}]}],"maxTokens":1}}"#,
    r#"{"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}"#,
];

#[test]
fn mutated_and_truncated_messages_do_not_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for seed in SEEDS {
        let base = seed.as_bytes();
        for cut in 0..base.len() {
            feed(&base[..cut]);
        }
        for _ in 0..400 {
            let mut b = base.to_vec();
            for _ in 0..(1 + rng.next() % 4) {
                let i = (rng.next() as usize) % b.len();
                b[i] = match rng.next() % 6 {
                    0 => b'"',
                    1 => b'{',
                    2 => b']',
                    3 => b'0',
                    4 => 0xff,
                    _ => (rng.next() & 0xff) as u8,
                };
            }
            feed(&b);
        }
    }
}

#[test]
fn wrong_types_in_every_field_are_errors() {
    let cases = [
        json!({"type": 5}),
        json!({"type": "text", "text": 5}),
        json!({"type": "resource_link", "uri": "u", "name": "n", "size": -1}),
        json!({"type": "resource", "resource": "nope"}),
        json!({"type": "tool_use", "id": 1, "name": "n", "input": {}}),
        json!({"type": "image", "data": "x", "mimeType": "y", "annotations": {"audience": ["robot"]}}),
        json!({"type": "text", "text": "x", "_meta": []}),
    ];
    for c in cases {
        assert!(
            serde_json::from_value::<ContentBlock>(c.clone()).is_err(),
            "{c}"
        );
    }
    assert!(
        serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"}))
            .is_err()
    );
    assert!(
        serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "object"})).is_err()
    );
    assert!(
        serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "string", "enum": "x"}))
            .is_err()
    );
    assert!(
        serde_json::from_value::<InputRequest>(json!({"method": "tools/call", "params": {}}))
            .is_err()
    );
    assert!(
        RequestMeta::from_meta(
            json!({"io.modelcontextprotocol/logLevel": "loud"})
                .as_object()
                .unwrap()
        )
        .is_err()
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let depth = 100_000;
    let mut s = String::from(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":"#,
    );
    s.push_str(&"[".repeat(depth));
    s.push_str(&"]".repeat(depth));
    s.push_str("}}}");
    feed(s.as_bytes());
    let mut c = String::from(r#"{"type":"tool_result","toolUseId":"1","content":"#);
    for _ in 0..5000 {
        c.push_str(r#"[{"type":"tool_result","toolUseId":"1","content":"#);
    }
    feed(c.as_bytes());
}
