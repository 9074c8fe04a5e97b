//! A randomized test of the codec: seeded hostile lines (see `wire_fuzz_support.rs`) must
//! never make it panic, every verdict must be answerable and round-trip, and wherever
//! JSON-RPC 2.0 can be applied by the book (the line parses as a `serde_json::Value` and was
//! built without repeated members or byte damage) the codec must agree with the book.
//!
//! `MCP_FUZZ_SEED=<n>` replays a run (the seed is printed on failure), `MCP_FUZZ_LINES=<n>`
//! changes how many lines are tried.

mod wire_fuzz_support;

use mcp_core::jsonrpc::{
    DecodeError, Message, Payload, decode, decode_incoming, decode_request_as, decode_response_as,
};
use serde_json::Value;
use wire_fuzz_support::{Kind, Rng, SeedGuard, book_payload, codec_kind, line, seed};

const DEFAULT_LINES: usize = 1_500;

#[test]
fn hostile_lines_never_panic_and_agree_with_the_book() {
    let seed = seed();
    let mut guard = SeedGuard::new("jsonrpc_fuzz", seed);
    let mut rng = Rng::new(seed);
    let lines = std::env::var("MCP_FUZZ_LINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_LINES);
    let mut judged = 0;
    for _ in 0..lines {
        let l = line(&mut rng);
        guard.current = l.bytes.clone();
        if check(&l.bytes, l.pristine) {
            judged += 1;
        }
    }
    // The generator must keep producing lines the book can judge, or the test proves little.
    assert!(
        judged * 5 > lines,
        "the book judged only {judged} of {lines} lines"
    );
}

/// Checks one line; true when the book judged it too.
fn check(bytes: &[u8], pristine: bool) -> bool {
    let items: Vec<Result<Message, DecodeError>> = match decode_incoming(bytes, true) {
        Ok(Payload::Single(m)) => vec![Ok(m)],
        Ok(Payload::Batch(items)) => items,
        Err(e) => vec![Err(e)],
    };
    let single = decode(bytes);
    let typed = decode_request_as::<Value>(bytes);
    let _ = decode_response_as::<Value>(bytes);
    let _ = serde_json::from_slice::<Message>(bytes);

    // -32700 exactly when the bytes are not JSON.
    let is_json = std::str::from_utf8(bytes)
        .is_ok_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok());
    let parse_error = matches!(&items[..], [Err(e)] if e.is_parse_error());
    assert_eq!(parse_error, !is_json, "-32700 exactly for what is not JSON");
    assert_eq!(
        matches!(&single, Err(e) if e.is_parse_error()),
        !is_json,
        "decode agrees on -32700"
    );

    for item in &items {
        match item {
            Ok(m) => {
                let back = decode(&m.to_vec()).expect("a decoded message re-encodes");
                assert_eq!(codec_kind(&Ok(back)), codec_kind(item), "round trip");
            }
            Err(e) => {
                assert!(matches!(e.error.code, -32700 | -32600), "{e}");
                if e.is_notification() {
                    assert_eq!(e.id, None, "a notification has no id");
                }
                let answer = decode(&e.to_response().to_vec()).expect("the answer decodes");
                assert!(
                    matches!(&answer, Message::Error(r) if r.id == e.id && r.error == e.error),
                    "{answer:?}"
                );
            }
        }
    }

    // The typed one-pass decoder refuses what decode refuses (it does not look at params
    // that are not objects when `P` takes anything), and reads the same request.
    match (&single, &typed) {
        (Err(e), Err(t)) => assert_eq!((t.error.code, &t.id), (e.error.code, &e.id)),
        (Err(e), Ok(_)) => assert!(e.error.message.contains("params"), "typed took {e}"),
        (Ok(Message::Request(r)), Ok(t)) => {
            assert_eq!((&t.id, &t.method), (&r.id, &r.method));
        }
        (Ok(Message::Request(r)), Err(t)) => {
            // Only params a Value cannot hold (nesting beyond serde_json's limit).
            assert_eq!(
                t.error.code,
                mcp_core::jsonrpc::codes::INVALID_PARAMS,
                "{t}"
            );
            assert_eq!(t.id.as_ref(), Some(&r.id));
        }
        (Ok(_), Ok(t)) => panic!("typed decoded a request out of a non-request: {t:?}"),
        (Ok(_), Err(_)) => {}
    }

    if !pristine {
        return false;
    }
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return false;
    };
    let Some(book) = book_payload(&value) else {
        return false;
    };
    let codec: Vec<Kind> = items.iter().map(codec_kind).collect();
    assert_eq!(codec, book, "the codec disagrees with the book");
    true
}
