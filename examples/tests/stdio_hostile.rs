//! The `everything` server against a hostile or clumsy client: bad bytes, huge lines, reused
//! ids, floods, and an abrupt end of input. After each, the server must still answer correctly.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{Client, RawServer, TIMEOUT, answers, only_text};
use serde_json::json;

#[test]
fn garbage_line_is_a_parse_error_with_null_id() {
    let mut s = RawServer::spawn();
    s.initialize();
    s.write(b"this is not json\n");
    let r = s.recv();
    assert_eq!(r["id"], json!(null), "{r}");
    assert_eq!(r["error"]["code"], -32700, "{r}");
    // A truncated object too.
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"\n");
    let r = s.recv();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    s.assert_alive("after-garbage");
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let mut s = RawServer::spawn();
    s.initialize();
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\xfeng\"}\n");
    let r = s.recv();
    assert_eq!(r["id"], json!(null), "{r}");
    assert_eq!(r["error"]["code"], -32700, "{r}");
    s.write(b"\xc3\x28\n");
    let r = s.recv();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    s.assert_alive("after-utf8");
}

#[test]
fn not_a_jsonrpc_message_is_invalid_request() {
    let mut s = RawServer::spawn();
    s.initialize();
    // The id is echoed when it can be read, null otherwise.
    for (line, id) in [
        (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, json!(1)),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            json!(null),
        ),
        (r#"{"jsonrpc":"2.0","id":2,"method":17}"#, json!(2)),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            json!(null),
        ),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, json!(null)),
        (r#"[]"#, json!(null)),
        (r#"42"#, json!(null)),
        // JSON-RPC 2.0's own example: a method that is not a string makes no notification.
        (
            r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
            json!(null),
        ),
        // An id written as a float is the integer it is.
        (r#"{"jsonrpc":"2.1","id":3.0,"method":"ping"}"#, json!(3)),
    ] {
        s.write(format!("{line}\n").as_bytes());
        let r = s.recv();
        assert_eq!(r["id"], id, "{line}: {r}");
        assert_eq!(r["error"]["code"], -32600, "{line}: {r}");
    }
    // A batch in a revision without batches: refused as a whole (one error, id null).
    s.write(b"[1,2]\n");
    let r = s.recv();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert_eq!(r["id"], json!(null), "{r}");
    // An invalid notification is dropped, never answered: the next line is the ping's answer.
    s.write(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":\"x\"}\n");
    s.assert_alive("after-invalid");
}

/// JSON-RPC 2.0 §6: a batch is answered with one array of its answers.
#[test]
fn a_batch_is_answered_with_one_array() {
    let mut s = RawServer::spawn();
    // The one revision with batches.
    s.initialize_as("2025-03-26");
    // A batch of two invalid elements: one error each, in one array.
    s.write(b"[1,2]\n");
    let r = s.recv();
    let errors = r.as_array().unwrap_or_else(|| panic!("not an array: {r}"));
    assert_eq!(errors.len(), 2, "{r}");
    for e in errors {
        assert_eq!(e["error"]["code"], -32600, "{r}");
    }
    s.write(
        br#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]
"#,
    );
    let r = s.recv();
    let answers = r.as_array().unwrap_or_else(|| panic!("not an array: {r}"));
    let mut ids: Vec<serde_json::Value> = answers.iter().map(|a| a["id"].clone()).collect();
    ids.sort_by_key(|v| v.to_string());
    assert_eq!(ids, vec![json!("b1"), json!("b2")]);
    s.assert_alive("after-batch");
}

#[test]
fn blank_lines_and_crlf_are_tolerated() {
    let mut s = RawServer::spawn();
    s.initialize();
    s.write(b"\n\r\n   \n{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r\n");
    let r = s.recv();
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": "crlf", "result": {}}));
    s.assert_alive("after-blank");
}

#[test]
fn ten_mib_line_is_refused_and_the_next_request_works() {
    let mut s = RawServer::spawn();
    s.initialize();
    // A well-formed request whose one string makes the line 10 MiB: over the 4 MiB limit.
    let head = br#"{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"test_simple_text","arguments":{"pad":""#;
    let tail = b"\"}}}\n";
    let total = 10 * 1024 * 1024;
    let mut line = Vec::with_capacity(total + 1);
    line.extend_from_slice(head);
    line.resize(total - tail.len() + 1, b'x');
    line.extend_from_slice(tail);
    assert_eq!(line.len(), total + 1);
    s.write(&line);
    let r = s.recv();
    // Refused by its id, read as the line streamed past (nothing of it kept).
    assert_eq!(r["id"], json!("huge"), "{r}");
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert_eq!(r["error"]["data"]["maxLength"], 4 * 1024 * 1024, "{r}");
    assert_eq!(r["error"]["data"]["length"], total, "{r}");
    s.assert_alive("after-huge");
}

#[test]
fn reused_id_of_a_request_in_flight_is_refused() {
    let (mut c, _) = Client::legacy("2025-11-25", json!({}));
    let id = json!("dup");
    c.request_with_id(
        id.clone(),
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "t"}}),
    );
    // It is running once its first progress notification is out.
    c.wait_for("first progress", TIMEOUT, |m| {
        common::has_method(m, "notifications/progress")
    });
    c.request_with_id(id.clone(), "ping", json!({}));
    let first = c.response(&id);
    assert_eq!(first["error"]["code"], -32600, "{first}");
    // The original still completes, exactly once.
    let second = c.response(&id);
    assert_eq!(only_text(&second["result"]), "Progress test completed");
    let target = id.clone();
    let barrier = c.request("ping", json!({}));
    c.assert_none_before("a third answer", &barrier, |m| answers(m, &target));
    // Once answered, the id may be used again.
    c.request_with_id(id.clone(), "ping", json!({}));
    assert_eq!(c.response(&id)["result"], json!({}));
    let r = c.call_tool("test_simple_text", json!({}));
    assert_eq!(only_text(&r), "This is a simple text response for testing.");
}

#[test]
fn stray_responses_and_unknown_notifications_are_ignored() {
    let (mut c, _) = Client::legacy("2025-11-25", json!({}));
    c.reply(&json!(987_654), json!({"whatever": true}));
    c.reply_error(&json!("nobody-asked"), -32000, "boom");
    c.notify("notifications/unheard_of", Some(json!({"x": 1})));
    c.notify(
        "notifications/cancelled",
        Some(json!({"requestId": 424_242})),
    );
    // Nothing was sent back for any of those: the first message after them answers the
    // ping that followed them.
    let barrier = c.request("ping", json!({}));
    c.assert_none_before("an answer to a stray message", &barrier, |m| {
        m.get("id").is_some()
    });
    let r = c.call_tool("test_simple_text", json!({}));
    assert_eq!(only_text(&r), "This is a simple text response for testing.");
}

#[test]
fn flood_of_ten_thousand_pipelined_calls_each_answered_once() {
    const N: i64 = 10_000;
    let (mut c, _) = Client::legacy("2025-11-25", json!({}));
    let sender = c.sender();
    let writer = std::thread::spawn(move || {
        for i in 0..N {
            let msg = mcp_core::jsonrpc::Request::new(
                1_000_000 + i,
                "tools/call",
                &json!({"name": "test_simple_text", "arguments": {}}),
            )
            .expect("a request");
            if sender.send_timeout(msg.into(), TIMEOUT).is_err() {
                return i;
            }
        }
        N
    });
    let mut seen: HashMap<i64, u32> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.len() < N as usize {
        let m = c
            .next_raw(deadline)
            .unwrap_or_else(|| panic!("only {} of {N} answered in time", seen.len()));
        if m.get("id").is_none() && m.get("method").is_some() {
            // A notification of the server's own (its dynamic tool arrives after two
            // seconds, which a flood on a loaded machine outlasts): not an answer.
            continue;
        }
        let id = m["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("unexpected message: {m}"));
        assert_eq!(
            m["result"]["content"][0]["text"], "This is a simple text response for testing.",
            "{m}"
        );
        *seen.entry(id).or_default() += 1;
    }
    assert_eq!(writer.join().expect("writer thread"), N);
    assert!(seen.values().all(|&n| n == 1));
    assert!(
        seen.keys()
            .all(|id| (1_000_000..1_000_000 + N).contains(id))
    );
    // No duplicate answers trail behind.
    let barrier = c.request("ping", json!({}));
    c.assert_none_before("a duplicate answer", &barrier, |m| m.get("id").is_some());
}

#[test]
fn stdin_eof_exits_zero_promptly() {
    let mut s = RawServer::spawn();
    s.initialize();
    s.assert_alive("before-eof");
    let t = Instant::now();
    s.close_stdin();
    let status = s
        .wait_exit(Duration::from_secs(5))
        .expect("the server exits within 5 s of stdin EOF");
    assert!(status.success(), "{status:?}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

#[test]
fn stdin_eof_with_calls_in_flight_still_exits_zero() {
    let (mut c, _) = Client::legacy("2025-11-25", json!({"sampling": {}}));
    // A call blocked on a sampling request the client never answers, and a slow one.
    c.request(
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "p"}}),
    );
    c.server_request("sampling/createMessage");
    c.request(
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": 1}}),
    );
    let t = Instant::now();
    let status = c.close();
    assert!(status.success(), "{status:?}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

/// More calls waiting on their cancellation (`slow_compute`, `Context::wait_cancelled`) than
/// the server has handler threads (64), then every one cancelled and a ping: the reading never
/// stops, so both pings are answered at once rather than after the calls' 120 s. The calls
/// beyond the threads are refused busy (-32006) as they are read; the others wait, and once
/// cancelled get no answer. (The 66th to 70th used to wait anyway, with nobody reading, so
/// that neither the cancellations nor the ping were read before the waits ended.)
#[test]
fn calls_waiting_on_their_cancellation_beyond_the_threads_leave_the_reading_going() {
    const N: i64 = 70;
    // Ids of their own (the client's fresh ids are small integers).
    let call_id = |i: i64| 1_000 + i;
    let (mut c, _) = Client::legacy("2025-11-25", json!({}));
    for i in 1..=N {
        c.request_with_id(
            json!(call_id(i)),
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 120, "label": "w"}}),
        );
    }
    // Read after every call (input is handled in order): answered within TIMEOUT (15 s), the
    // reading went past all of them.
    let ping = json!("after-the-calls");
    c.request_with_id(ping.clone(), "ping", json!({}));
    let (before, answer) = c.until_response(&ping);
    assert_eq!(answer["result"], json!({}), "{answer}");
    let mut busy = Vec::new();
    for m in &before {
        if m.get("id").is_some() && m.get("method").is_none() {
            assert_eq!(m["error"]["code"], -32006, "only busy answers so far: {m}");
            busy.push(m["id"].clone());
        }
    }
    assert!(
        !busy.is_empty(),
        "no call refused busy beyond the 64 threads"
    );
    assert!(busy.len() <= 10, "too many refused: {busy:?}");
    for i in 1..=N {
        c.notify(
            "notifications/cancelled",
            Some(json!({"requestId": call_id(i)})),
        );
    }
    // Answered within TIMEOUT (15 s), the calls' waits being of 120 s.
    let barrier = json!("after-the-cancellations");
    c.request_with_id(barrier.clone(), "ping", json!({}));
    c.assert_none_before("an answer to a cancelled call", &barrier, |m| {
        m.get("id").is_some() && m.get("method").is_none()
    });
    let status = c.close();
    assert!(status.success(), "{status:?}");
}
