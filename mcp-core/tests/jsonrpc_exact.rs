//! The codec reads JSON-RPC by value: what a member *is* decides, never how it is spelled.
//! Escaped strings, integers written as decimals or with exponents, and positional arrays that
//! serde's derived code would take for objects are all checked here.

use mcp_core::jsonrpc::{
    DecodeError, Message, Payload, RequestId, codes, decode, decode_incoming, decode_request_as,
};
use serde_json::Value;

fn refused(bytes: &str) -> DecodeError {
    match decode(bytes.as_bytes()) {
        Err(e) => e,
        Ok(m) => panic!("{bytes} decoded as {m:?}"),
    }
}

fn request_id(bytes: &str) -> RequestId {
    match decode(bytes.as_bytes()) {
        Ok(Message::Request(r)) => r.id,
        other => panic!("{bytes}: expected a request, got {other:?}"),
    }
}

fn batch(bytes: &str) -> Vec<Result<Message, DecodeError>> {
    match decode_incoming(bytes.as_bytes(), true) {
        Ok(Payload::Batch(items)) => items,
        other => panic!("{bytes}: expected a batch, got {other:?}"),
    }
}

#[test]
fn escaped_jsonrpc_and_method_are_read_by_value() {
    let r = decode(br#"{"jsonrpc":"\u0032.0","id":7,"method":"ping"}"#).unwrap();
    assert!(
        matches!(&r, Message::Request(r) if r.id == RequestId::Number(7) && r.method == "ping")
    );
    let n = decode(br#"{"jsonrpc":"2\u002e0","method":"notifications/initialized"}"#).unwrap();
    assert_eq!(n.method(), Some("notifications/initialized"));
    assert!(matches!(n, Message::Notification(_)));
    let r = decode(br#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#).unwrap();
    assert_eq!(r.method(), Some("tools/call"));
    // Escaped member names are the same members.
    let r = decode(br#"{"\u006asonrpc":"2.0","\u0069d":"x","m\u0065thod":"ping"}"#).unwrap();
    assert!(matches!(&r, Message::Request(r) if r.id == RequestId::from("x")));
    let r = decode(br#"{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"ping"}"#).unwrap();
    assert_eq!(r.id(), Some(&RequestId::from("a\"bé")));
    // An escape that spells something else is still wrong.
    let e = refused(r#"{"jsonrpc":"\u0033.0","id":7,"method":"ping"}"#);
    assert_eq!(
        (e.error.code, e.id),
        (codes::INVALID_REQUEST, Some(RequestId::Number(7)))
    );
}

#[test]
fn only_objects_are_messages() {
    for text in [
        r#"["2.0",6,"tools/call",{"name":"test_simple_text","arguments":{}}]"#,
        r#"[["2.0",6,"tools/call",{"name":"test_simple_text","arguments":{}}]]"#,
    ] {
        let items = match decode_incoming(text.as_bytes(), true) {
            Ok(Payload::Batch(items)) => items,
            other => panic!("{text}: {other:?}"),
        };
        assert!(!items.is_empty());
        for item in items {
            let e = item.expect_err("an array is not a request");
            assert_eq!((e.error.code, e.id.clone()), (codes::INVALID_REQUEST, None));
            assert!(!e.is_notification());
        }
    }
    // As a single message and through serde, an array is refused too.
    let e = refused(r#"["2.0",6,"ping"]"#);
    assert_eq!((e.error.code, e.id), (codes::INVALID_REQUEST, None));
    assert!(serde_json::from_str::<Message>(r#"["2.0",6,"ping"]"#).is_err());
    // An error member must be an object as well.
    let e = refused(r#"{"jsonrpc":"2.0","id":3,"error":[-32601,"no"]}"#);
    assert_eq!(e.error.code, codes::INVALID_REQUEST);
    // And the one-pass typed decoder agrees.
    let e = decode_request_as::<Value>(br#"["2.0",6,"ping",{}]"#).unwrap_err();
    assert_eq!((e.error.code, e.id), (codes::INVALID_REQUEST, None));
}

#[test]
fn integral_ids_are_integers_however_written() {
    for (text, n) in [
        ("-0", 0),
        ("0", 0),
        ("1.0", 1),
        ("1e0", 1),
        ("1E2", 100),
        ("100e-2", 1),
        ("1.5e1", 15),
        ("-12.50e1", -125),
        ("0.0e-7", 0),
        ("-0.0", 0),
        ("0e999999999999999999999", 0),
        ("9223372036854775807", i64::MAX),
        ("9223372036854775807.000", i64::MAX),
        ("-9223372036854775808", i64::MIN),
        ("-92233720368547758.08e2", i64::MIN),
        ("922337203685477580.7E1", i64::MAX),
    ] {
        let id = request_id(&format!(
            r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#
        ));
        assert_eq!(id, RequestId::Number(n), "{text}");
        // The same rule wherever an id is read: from a Value, and through Deserialize.
        let v: Value = serde_json::from_str(text).unwrap();
        if v.as_f64().is_some_and(|f| f.abs() < 9.0e15) {
            assert_eq!(
                RequestId::from_value(&v),
                Some(RequestId::Number(n)),
                "{text}"
            );
            assert_eq!(
                serde_json::from_str::<RequestId>(text).unwrap(),
                RequestId::Number(n),
                "{text}"
            );
        }
        // And the one-pass typed decoder.
        let r = decode_request_as::<Value>(
            format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#).as_bytes(),
        )
        .unwrap();
        assert_eq!(r.id, RequestId::Number(n), "{text}");
    }
}

#[test]
fn other_ids_are_invalid_with_id_null() {
    for text in [
        "1.5",
        "-0.5",
        "1e-1",
        "1.0000000000000000001",
        "9223372036854775808",
        "9223372036854775807.5",
        "-9223372036854775809",
        "1e19",
        "18446744073709551616",
        "1e400",
        "-1e400",
        "1e-400",
        "123456789012345678901234567890e-5",
        "true",
        "false",
        "null",
        "{}",
        r#"{"a":1}"#,
        "[]",
        "[1]",
        r#""\ud800""#,
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#);
        let e = refused(&line);
        // A huge number is valid JSON: -32600, not -32700.
        assert_eq!(
            (e.error.code, e.id.clone()),
            (codes::INVALID_REQUEST, None),
            "{text}"
        );
        assert!(!e.is_notification(), "{text}");
        let e = decode_request_as::<Value>(line.as_bytes()).unwrap_err();
        assert_eq!(
            (e.error.code, e.id),
            (codes::INVALID_REQUEST, None),
            "{text}"
        );
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            if !v.is_f64() {
                assert_eq!(RequestId::from_value(&v), None, "{text}");
            }
        }
    }
    assert_eq!(RequestId::from_value(&serde_json::json!(1.5)), None);
    assert_eq!(RequestId::from_value(&serde_json::json!(1e19)), None);
    assert_eq!(RequestId::from_value(&serde_json::json!(u64::MAX)), None);
    assert!(serde_json::from_str::<RequestId>("1.5").is_err());
    assert!(serde_json::from_str::<RequestId>("true").is_err());
}

#[test]
fn invalid_notifications_are_flagged_never_answered() {
    for text in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        r#"{"method":"notifications/initialized"}"#,
        r#"{"jsonrpc":2,"method":"notifications/initialized","params":null}"#,
        r#"{"jsonrpc":"2.0","method":"x","result":{}}"#,
        r#"{"jsonrpc":"2.0","method":"x","method":"y"}"#,
        r#"{"jsonrpc":"2.0","method":1,"method":"y"}"#,
        r#"{"jsonrpc":"2.0","method":"x","method":null}"#,
        r#"{"jsonrpc":"2.0","method":"\ud800"}"#,
    ] {
        let e = refused(text);
        assert_eq!(e.error.code, codes::INVALID_REQUEST, "{text}");
        assert_eq!(e.id, None, "{text}");
        assert!(e.is_notification(), "{text}: {e}");
    }
    // Anything with an id member, or whose method is not a string, is answered.
    for (text, id) in [
        (r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#, None),
        (r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, None),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"x","params":3}"#,
            Some(RequestId::Number(5)),
        ),
        (
            r#"{"jsonrpc":"1.0","id":"a","method":"x"}"#,
            Some(RequestId::from("a")),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.0,"method":"x","params":3}"#,
            Some(RequestId::Number(1)),
        ),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#, None),
        (r#"{"jsonrpc":"2.0"}"#, None),
    ] {
        let e = refused(text);
        assert_eq!(
            (e.error.code, e.id.clone()),
            (codes::INVALID_REQUEST, id),
            "{text}"
        );
        assert!(!e.is_notification(), "{text}");
    }
    // Parse errors are never notifications.
    let e = refused(r#"{"jsonrpc":"2.0","method":"x""#);
    assert!(e.is_parse_error() && !e.is_notification());
}

#[test]
fn invalid_responses_are_flagged_never_answered() {
    // An error object nested past serde_json's depth limit in its data, as a hostile peer
    // may send: refused, and not answered (it is a response).
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":12345,"error":{{"code":1,"message":"m","data":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let mut texts = vec![deep];
    texts.extend(
        [
            r#"{"jsonrpc":"2.0","id":3,"error":[-32601,"no"]}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":"x","message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"1.0","id":3,"result":{}}"#,
            r#"{"id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"id":4,"result":{}}"#,
        ]
        .map(String::from),
    );
    for text in &texts {
        let e = refused(text);
        assert_eq!(e.error.code, codes::INVALID_REQUEST, "{text}");
        assert!(e.is_response() && !e.is_answered(), "{text}: {e}");
        assert!(!e.is_notification(), "{text}");
    }
    // With a method it may be a request: answered, as is an object that is neither.
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
    ] {
        let e = refused(text);
        assert!(!e.is_response() && e.is_answered(), "{text}");
    }
    // An invalid notification is not answered either; a parse error is.
    assert!(!refused(r#"{"method":"notifications/initialized"}"#).is_answered());
    assert!(refused(r#"{"jsonrpc":"2.0","id":1,"result":"#).is_answered());
}

#[test]
fn a_batch_answers_each_invalid_element_and_refuses_later_duplicate_ids() {
    let items = batch(
        r#"[{"jsonrpc":"2.0","id":1,"method":"a"},1,{"jsonrpc":"2.0","method":"n","params":1},{"jsonrpc":"2.0","id":1.0,"method":"b"},{"jsonrpc":"2.0","id":"1","method":"c"},{"jsonrpc":"2.0","id":1,"method":"d"}]"#,
    );
    assert_eq!(items.len(), 6);
    assert!(matches!(&items[0], Ok(Message::Request(r)) if r.method == "a"));
    let e = items[1].as_ref().unwrap_err();
    assert_eq!((e.error.code, e.id.clone()), (codes::INVALID_REQUEST, None));
    assert!(items[2].as_ref().unwrap_err().is_notification());
    for i in [3, 5] {
        let e = items[i].as_ref().unwrap_err();
        assert_eq!(
            (e.error.code, e.id.clone()),
            (codes::INVALID_REQUEST, Some(RequestId::Number(1)))
        );
        assert!(
            e.error.message.contains("duplicate id 1 in batch"),
            "{}",
            e.error.message
        );
        assert!(!e.is_notification());
    }
    // A string id "1" is not the integer 1.
    assert!(matches!(&items[4], Ok(Message::Request(r)) if r.method == "c"));
    // Responses and notifications may repeat; only requests run.
    let items = batch(
        r#"[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"n"}]"#,
    );
    assert!(items.iter().all(Result::is_ok));
}

#[test]
fn deep_nesting_and_huge_numbers_are_valid_json() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let e = refused(&deep);
    assert_eq!(e.error.code, codes::INVALID_REQUEST);
    let items = batch(&deep);
    assert_eq!(items.len(), 1);
    let line = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{{"a":{deep}}}}}"#);
    assert!(matches!(decode(line.as_bytes()), Ok(Message::Request(_))));
    let line = format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"x"}}"#);
    assert_eq!(refused(&line).error.code, codes::INVALID_REQUEST);
    // Unclosed nesting is not JSON.
    assert!(refused(&"[".repeat(10_000)).is_parse_error());
    let line = br#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"n":1e400}}"#;
    assert!(matches!(decode(line), Ok(Message::Request(_))));
}

#[test]
fn the_typed_decoder_refuses_what_decode_refuses() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","result":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","error":null}"#,
    ] {
        let precise = refused(text);
        let typed = decode_request_as::<Value>(text.as_bytes()).unwrap_err();
        assert_eq!(typed, precise, "{text}");
    }
}

#[test]
fn member_names_and_skipped_members_are_checked_as_json() {
    // A raw control character in a member name is not JSON, escaped it is.
    let e = decode(b"{\"jsonrpc\r\":\"2.0\",\"id\":1,\"method\":\"x\"}").unwrap_err();
    assert!(e.is_parse_error(), "{e}");
    let m = decode(br#"{"jsonrpc":"2.0","id":1,"method":"x","a\u000db":1}"#).unwrap();
    assert!(matches!(m, Message::Request(_)));
    // A member name with a lone surrogate is valid JSON and simply unknown.
    let m = decode(br#"{"jsonrpc":"2.0","id":1,"method":"x","\ud800":1}"#).unwrap();
    assert!(matches!(m, Message::Request(_)));
    let e = decode(br#"{"jsonrpc":"2.0","method":"x","params":1,"\ud800":1}"#).unwrap_err();
    assert!(e.is_notification());
    // Invalid UTF-8 in a member nobody reads is still not JSON, for the typed decoders too.
    let bad = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"pad\":\"\xff\"}";
    assert!(decode(bad).unwrap_err().is_parse_error());
    assert!(
        decode_request_as::<Value>(bad)
            .unwrap_err()
            .is_parse_error()
    );
    let bad = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"pad\":\"\xff\"}";
    assert!(
        mcp_core::jsonrpc::decode_response_as::<Value>(bad)
            .unwrap_err()
            .is_parse_error()
    );
}
