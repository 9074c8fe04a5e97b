//! Typed decode + encode of a `tools/call` request and its result, against a plain
//! `serde_json::Value` round trip of the same bytes.
//!
//! Run: `cargo bench -p mcp-core --bench roundtrip` (add `-- N` for N iterations per case).
//! A bench binary (no harness) so it builds on stable with no extra dependency.

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcp_core::jsonrpc::{
    Message, Request, Response, decode, decode_request_as, decode_response_as, encode_request,
    encode_response,
};
use mcp_core::types::{CallToolRequestParams, CallToolResult};
use serde_json::Value;

const REQUEST: &str = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"deadlock in writer thread","labels":["bug","stdio"],"limit":20,"include_closed":false},"_meta":{"progressToken":"p-42"}}}"#;

const RESULT: &str = r#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Found 3 issues:\n#12 writer thread deadlocks when the client stops reading\n#31 stdio EOF while a tool is running\n#57 flush after every message is slow"},{"type":"resource_link","uri":"issues://12","name":"issue-12","mimeType":"application/json"}],"structuredContent":{"total":3,"ids":[12,31,57]},"isError":false}}"#;

/// One pass each way: the params type is known up front.
fn typed_request(bytes: &[u8]) -> Vec<u8> {
    let req = decode_request_as::<CallToolRequestParams>(bytes).expect("a tools/call request");
    let mut out = Vec::with_capacity(bytes.len() + 16);
    encode_request(&req.id, &req.method, &req.params, &mut out).expect("encodes");
    out
}

fn typed_result(bytes: &[u8]) -> Vec<u8> {
    let (id, result) = decode_response_as::<CallToolResult>(bytes).expect("a response");
    let result = result.expect("a result");
    let mut out = Vec::with_capacity(bytes.len() + 16);
    encode_response(&id, &result, &mut out).expect("encodes");
    out
}

/// The general path: `decode` into a `Message` (params kept raw), then typed params.
fn message_request(bytes: &[u8]) -> Vec<u8> {
    let Ok(Message::Request(req)) = decode(bytes) else {
        panic!("bench input is a request")
    };
    let params: CallToolRequestParams = req.params().expect("typed params");
    let out = Request::new(req.id, req.method, &params).expect("encodes");
    Message::Request(out).to_vec()
}

fn message_result(bytes: &[u8]) -> Vec<u8> {
    let Ok(Message::Response(resp)) = decode(bytes) else {
        panic!("bench input is a response")
    };
    let result: CallToolResult = resp.result().expect("typed result");
    let out = Response::new(resp.id, &result).expect("encodes");
    Message::Response(out).to_vec()
}

fn value_round_trip(bytes: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(bytes).expect("valid JSON");
    serde_json::to_vec(&v).expect("encodes")
}

fn time(iters: u32, f: impl Fn(&[u8]) -> Vec<u8>, input: &[u8]) -> Duration {
    for _ in 0..iters / 10 {
        black_box(f(black_box(input)));
    }
    // Best of five runs: the least disturbed by whatever else the machine does.
    (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(f(black_box(input)));
            }
            start.elapsed() / iters
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let iters: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200_000);
    // The typed path must give back the same JSON (key order aside).
    for (typed, input) in [
        (typed_request as fn(&[u8]) -> Vec<u8>, REQUEST),
        (typed_result, RESULT),
        (message_request, REQUEST),
        (message_result, RESULT),
    ] {
        let a: Value = serde_json::from_slice(&typed(input.as_bytes())).unwrap();
        let b: Value = serde_json::from_str(input).unwrap();
        assert_eq!(a, b, "the typed round trip changed the message");
    }
    println!(
        "| message | typed, one pass | typed via Message | Value round trip | one pass / Value | via Message / Value |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (name, typed, general, input) in [
        (
            "tools/call request",
            typed_request as fn(&[u8]) -> Vec<u8>,
            message_request as fn(&[u8]) -> Vec<u8>,
            REQUEST,
        ),
        ("tools/call result", typed_result, message_result, RESULT),
    ] {
        let t = time(iters, typed, input.as_bytes());
        let g = time(iters, general, input.as_bytes());
        let v = time(iters, value_round_trip, input.as_bytes());
        let ratio = |a: Duration| a.as_secs_f64() / v.as_secs_f64();
        println!(
            "| {name} ({} bytes) | {} ns | {} ns | {} ns | {:.2} | {:.2} |",
            input.len(),
            t.as_nanos(),
            g.as_nanos(),
            v.as_nanos(),
            ratio(t),
            ratio(g)
        );
    }
}
