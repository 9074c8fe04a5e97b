//! Randomized, seeded (`MCP_FUZZ_SEED` replays a run, the seed is printed on failure;
//! `MCP_FUZZ_ROUNDS` changes the length): hostile bodies POSTed to a 2025-03-26 session (the
//! revision with batches), from the generator the codec's and stdio's randomized tests use.
//! Every request with a readable id gets exactly one well-formed answer with that id, invalid
//! elements their -32600 / -32700, notifications none, and the server answers a plain `ping`
//! after each round.

#[path = "../../mcp-core/tests/wire_fuzz_support.rs"]
mod wire_fuzz_support;

mod common;

use common::*;
use mcp_core::jsonrpc::{Message, Payload, RequestId, codes, decode_incoming};
use mcp_http_blocking::HttpServer;
use serde_json::{Value, json};
use wire_fuzz_support::{Rng, SeedGuard, line, seed};

/// One answer, as far as this test tells answers apart.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Answer {
    /// The service's answer (a result, or its own error) to the request with this id.
    For(RequestId),
    /// The transport's refusal: the id it could read, and -32600 or -32700.
    Refused(Option<RequestId>, i64),
}

fn expected(body: &[u8]) -> (u16, Vec<Answer>) {
    let refused = |e: &mcp_core::jsonrpc::DecodeError| Answer::Refused(e.id.clone(), e.error.code);
    match decode_incoming(body, true) {
        Err(e) if !e.is_answered() => (400, Vec::new()),
        Err(e) => (400, vec![refused(&e)]),
        Ok(Payload::Single(Message::Request(r))) => (200, vec![Answer::For(r.id)]),
        Ok(Payload::Single(_)) => (202, Vec::new()),
        Ok(Payload::Batch(items)) => {
            let a: Vec<Answer> = items
                .iter()
                .filter_map(|i| match i {
                    Ok(Message::Request(r)) => Some(Answer::For(r.id.clone())),
                    Ok(_) => None,
                    Err(e) if !e.is_answered() => None,
                    Err(e) => Some(refused(e)),
                })
                .collect();
            (if a.is_empty() { 202 } else { 200 }, a)
        }
    }
}

fn answer_of(v: &Value) -> Answer {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    let id = RequestId::from_value(&v["id"]);
    match v["error"]["code"].as_i64() {
        Some(c) if c == codes::INVALID_REQUEST || c == codes::PARSE_ERROR => Answer::Refused(id, c),
        Some(_) => Answer::For(id.expect("the service answers with the request's id")),
        None => {
            assert!(v.get("result").is_some(), "{v}");
            Answer::For(id.expect("a result carries an id"))
        }
    }
}

/// A test server and a session on it in `version`.
fn server_with_session(version: &str) -> (mcp_http_blocking::ServerHandle, String) {
    let h = HttpServer::builder()
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap();
    let sid = open_session(h.local_addr(), version);
    (h, sid)
}

/// The headers of a POST in that session.
fn session_headers<'a>(sid: &'a str, version: &'a str) -> [(&'a str, &'a str); 4] {
    [
        ("Accept", "application/json"),
        JSON_CT,
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", version),
    ]
}

#[test]
fn hostile_bodies_get_exactly_their_answers() {
    let seed = seed();
    let mut guard = SeedGuard::new("http hostile_bodies", seed);
    let mut rng = Rng::new(seed);
    let rounds: usize = std::env::var("MCP_FUZZ_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let (h, sid) = server_with_session("2025-03-26");
    let a = h.local_addr();
    let headers = session_headers(&sid, "2025-03-26");
    for round in 0..rounds {
        let body = line(&mut rng).bytes;
        guard.current.clone_from(&body);
        let (status, mut want) = expected(&body);
        let r = request(a, "POST", "/mcp", &headers, &body);
        assert_eq!(
            r.status,
            status,
            "round {round}: {}",
            String::from_utf8_lossy(&r.body)
        );
        let mut got: Vec<Answer> = if r.body.is_empty() {
            Vec::new()
        } else {
            match serde_json::from_slice::<Value>(&r.body).expect("a well-formed JSON answer") {
                Value::Array(items) => items.iter().map(answer_of).collect(),
                v => vec![answer_of(&v)],
            }
        };
        want.sort();
        got.sort();
        assert_eq!(got, want, "round {round}");
        let ping = request(
            a,
            "POST",
            "/mcp",
            &headers,
            &rpc(round as i64, "ping", json!({})),
        );
        assert_eq!(ping.status, 200, "round {round}: the server still answers");
        assert_eq!(ping.json()["result"], json!({}));
    }
}

#[test]
fn an_invalid_response_is_refused_without_an_answer() {
    let (h, sid) = server_with_session("2025-06-18");
    let a = h.local_addr();
    let headers = session_headers(&sid, "2025-06-18");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":12345,"error":{{"code":1,"message":"m","data":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    for body in [
        deep.as_str(),
        r#"{"jsonrpc":"2.0","id":3,"error":[-32601,"no"]}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"1.0","id":3,"result":{}}"#,
    ] {
        // The transport's rule for a response the server cannot accept: an HTTP error, and
        // no JSON-RPC answer carrying the response's id.
        let r = request(a, "POST", "/mcp", &headers, body.as_bytes());
        assert_eq!(r.status, 400, "{}", &body[..body.len().min(80)]);
        assert!(r.body.is_empty(), "{}", String::from_utf8_lossy(&r.body));
    }
    let ping = request(a, "POST", "/mcp", &headers, &rpc(1, "ping", json!({})));
    assert_eq!(ping.json()["result"], json!({}));
}
