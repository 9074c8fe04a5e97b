//! Several instances of one server behind a load balancer: with the same state secret each
//! continues the others' `input_required` retries and pagination cursors, with another it
//! refuses them, and a rotation keeps accepting what the previous secret sealed. Driven in
//! memory through the service seam, each "instance" a server of its own whose sessions carry
//! the sealer the HTTP transport would give them (`mcp_http_blocking::StateSealer`).

use std::sync::Arc;

use mcp_core::service::{SessionInfo, TransportKind};
use mcp_http_blocking::{StateSealer, StateSecret};
use mcp_server_kit::types::ElicitRequestParams;
use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
use serde_json::{Value, json};

mod common;
use common::Peer;

const ARG: &str = "confidential-argument-7731";
const ANSWER: &str = "confidential-answer-4242";

impl Peer {
    /// A 2026-07-28 request (no handshake: the version and capabilities ride in `_meta`).
    fn modern(&self, id: i64, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        });
        self.request(id, method, params)
    }
}

fn secret(byte: u8) -> StateSecret {
    StateSecret::from_bytes(vec![byte; 32]).unwrap()
}

fn ask(key: &str) -> ElicitRequestParams {
    serde_json::from_value(json!({
        "message": key,
        "requestedSchema": {"type": "object", "properties": {"v": {"type": "string"}}}
    }))
    .unwrap()
}

/// A session of an instance: a tool that asks twice (so the state carries the first answer),
/// and five tools listed two per page; sealed under `current` (and `previous`, to open), or a
/// key of its own without them.
fn instance(current: Option<StateSecret>, previous: Option<StateSecret>) -> Peer {
    let sealer = match &current {
        Some(c) => StateSealer::shared(c, previous.as_ref()),
        None => StateSealer::random().unwrap(),
    };
    let server = server();
    Peer::open_with(
        &server,
        SessionInfo::new(TransportKind::StreamableHttp).with_sealer(Arc::new(sealer)),
    )
}

fn server() -> Server {
    let mut b = Server::builder("scaled", "1").page_size(2).tool(Tool::new(
        "two",
        |a: Value, ctx: &Context| {
            let first = ctx.elicit_as("first", ask("first"))?;
            let second = ctx.elicit_as("second", ask("second"))?;
            let (f, s) = (
                serde_json::to_value(first).unwrap(),
                serde_json::to_value(second).unwrap(),
            );
            Ok::<_, Error>(format!(
                "{} {} {}",
                a["word"].as_str().unwrap_or(""),
                f["content"]["v"].as_str().unwrap_or(""),
                s["content"]["v"].as_str().unwrap_or("")
            ))
        },
    ));
    for i in 0..4 {
        b = b.tool(Tool::new(format!("t{i}"), |_: NoArgs, _: &Context| {
            Ok::<_, Error>("x")
        }));
    }
    b.build().unwrap()
}

fn call(p: &Peer, id: i64, state: Option<&str>, answers: Value) -> Value {
    let mut params = json!({"name": "two", "arguments": {"word": ARG}, "inputResponses": answers});
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    p.modern(id, "tools/call", params)
}

fn answer(v: &str) -> Value {
    json!({"action": "accept", "content": {"v": v}})
}

fn state_of(r: &Value) -> String {
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    r["result"]["requestState"].as_str().unwrap().to_owned()
}

#[test]
fn instances_with_one_secret_continue_each_others_retries() {
    let (a, b) = (
        instance(Some(secret(1)), None),
        instance(Some(secret(1)), None),
    );
    let s1 = state_of(&call(&a, 1, None, json!({})));
    // The retry lands on B, which asks for the second input; the last round is back on A.
    let s2 = state_of(&call(&b, 2, Some(&s1), json!({"first": answer(ANSWER)})));
    let done = call(&a, 3, Some(&s2), json!({"second": answer("two")}));
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("{ARG} {ANSWER} two")
    );

    // An instance with another secret refuses both states.
    let c = instance(Some(secret(2)), None);
    for (id, s) in [(4, &s1), (5, &s2)] {
        let r = call(&c, id, Some(s), json!({"second": answer("two")}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
    // So does one with no secret at all (its key is its own).
    let d = instance(None, None);
    let r = call(&d, 6, Some(&s2), json!({"second": answer("two")}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[test]
fn a_state_discloses_neither_arguments_nor_answers() {
    let a = instance(Some(secret(1)), None);
    let s1 = state_of(&call(&a, 1, None, json!({})));
    let s2 = state_of(&call(&a, 2, Some(&s1), json!({"first": answer(ANSWER)})));
    for s in [&s1, &s2] {
        // Whatever the encoding, the text must not be there: plain, hex, or in the bytes the
        // hex stands for.
        let bytes: Vec<u8> = (0..s.len() / 2)
            .filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok())
            .collect();
        for secret_text in [ARG, ANSWER, "first", "answers"] {
            let hex: String = secret_text.bytes().map(|b| format!("{b:02x}")).collect();
            assert!(!s.contains(secret_text), "{secret_text} in {s}");
            assert!(!s.contains(&hex), "{secret_text} (hex) in {s}");
            assert!(
                !bytes
                    .windows(secret_text.len())
                    .any(|w| w == secret_text.as_bytes()),
                "{secret_text} in the bytes of {s}"
            );
        }
    }
}

#[test]
fn a_rotation_opens_with_the_previous_secret_and_seals_with_the_new() {
    let old = instance(Some(secret(1)), None);
    let rotated = instance(Some(secret(2)), Some(secret(1)));
    let s1 = state_of(&call(&old, 1, None, json!({})));
    let s2 = state_of(&call(
        &rotated,
        2,
        Some(&s1),
        json!({"first": answer(ANSWER)}),
    ));
    // The new state is sealed with the new secret: an instance still on the old one alone
    // cannot open it, one on the new secret can.
    let r = call(&old, 3, Some(&s2), json!({"second": answer("two")}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let new = instance(Some(secret(2)), None);
    let r = call(&new, 4, Some(&s2), json!({"second": answer("two")}));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    // The previous secret is for opening only: without it, the old state is refused.
    let r = call(&new, 5, Some(&s1), json!({"first": answer(ANSWER)}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

/// The tool names of every page, each page asked of the next instance in turn.
fn pages(instances: &[&Peer]) -> Result<Vec<String>, Value> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1..10 {
        let p = instances[id % instances.len()];
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = p.modern(id as i64, "tools/list", params);
        let Some(tools) = r["result"]["tools"].as_array() else {
            return Err(r);
        };
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match r["result"].get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
            None => return Ok(names),
        }
    }
    panic!("more pages than tools");
}

#[test]
fn cursors_cross_instances_that_share_a_secret_and_its_rotation() {
    let a = instance(Some(secret(1)), None);
    let b = instance(Some(secret(1)), None);
    let rotated = instance(Some(secret(2)), Some(secret(1)));
    let all = ["two", "t0", "t1", "t2", "t3"];
    assert_eq!(pages(&[&a, &b]).unwrap(), all);
    // A cursor of the previous secret still pages on a rotated instance.
    let first = a.modern(1, "tools/list", json!({}));
    let cursor = first["result"]["nextCursor"].clone();
    let second = rotated.modern(2, "tools/list", json!({ "cursor": cursor }));
    assert_eq!(second["result"]["tools"][0]["name"], "t1", "{second}");
    // Another secret: the second page is refused.
    let other = instance(Some(secret(3)), None);
    let refused = pages(&[&a, &other]).unwrap_err();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[test]
fn without_a_sealer_the_state_stays_in_its_session() {
    // Stdio and in-memory sessions have no sealer: the client gets a handle to a state the
    // session keeps, which works there and nowhere else (and discloses nothing).
    let server = server();
    let (a, b) = (Peer::open(&server), Peer::open(&server));
    let s1 = state_of(&call(&a, 1, None, json!({})));
    assert!(s1.starts_with("local:"), "{s1}");
    assert!(!s1.contains(ARG), "{s1}");
    let r = call(&b, 2, Some(&s1), json!({"first": answer(ANSWER)}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let s2 = state_of(&call(&a, 3, Some(&s1), json!({"first": answer(ANSWER)})));
    let done = call(&a, 4, Some(&s2), json!({"second": answer("two")}));
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("{ARG} {ANSWER} two"),
        "{done}"
    );
    // A sealed state is no handle: refused where states are kept.
    let sealed = state_of(&call(&instance(None, None), 5, None, json!({})));
    let r = call(&a, 6, Some(&sealed), json!({"first": answer(ANSWER)}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

/// A session of an instance sealing under secret 1, for the user the claims name.
fn instance_for(claims: Value) -> Peer {
    let sealer = StateSealer::shared(&secret(1), None);
    Peer::open_with(
        &server(),
        SessionInfo::new(TransportKind::StreamableHttp)
            .with_sealer(Arc::new(sealer))
            .with_auth(claims),
    )
}

#[test]
fn a_state_is_accepted_only_from_the_user_it_was_issued_to() {
    let alice = instance_for(json!({"iss": "https://as", "sub": "alice", "exp": 100}));
    let s1 = state_of(&call(&alice, 1, None, json!({})));
    // Another user holding alice's state (and answers of their own) gets nothing out of it.
    let bob = instance_for(json!({"iss": "https://as", "sub": "bob", "exp": 100}));
    let r = call(&bob, 2, Some(&s1), json!({"first": answer(ANSWER)}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Nor does a request without authorization.
    let r = call(&instance(Some(secret(1)), None), 3, Some(&s1), json!({}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Alice with a refreshed token (a new expiry, a wider scope) goes on.
    let later =
        instance_for(json!({"iss": "https://as", "sub": "alice", "exp": 200, "scope": "a b"}));
    let s2 = state_of(&call(
        &later,
        4,
        Some(&s1),
        json!({"first": answer(ANSWER)}),
    ));
    let done = call(&later, 5, Some(&s2), json!({"second": answer("two")}));
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
}
