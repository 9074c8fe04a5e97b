//! A rolling restart: `everything --http` gets SIGTERM while a slow tool call is answered; the
//! call's answer still arrives in full, then the process exits on its own within the grace.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use crossbeam_channel::bounded;
use serde_json::{Value, json};

mod http_support;

const EVERYTHING: &str = env!("CARGO_BIN_EXE_everything");

/// Reads one SSE event's data from a chunked stream (the server sends one event per chunk).
fn next_event(r: &mut impl BufRead) -> Option<Value> {
    loop {
        let mut size = String::new();
        r.read_line(&mut size).ok()?;
        let n = usize::from_str_radix(size.trim(), 16).ok()?;
        let mut chunk = vec![0; n + 2];
        r.read_exact(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&chunk[..n]).into_owned();
        if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
            return serde_json::from_str(data).ok();
        }
    }
}

#[test]
fn sigterm_lets_a_slow_call_finish_then_the_process_exits() {
    let mut child = Command::new(EVERYTHING)
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("everything starts");
    let url = http_support::listening_url(&mut child);
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();

    // A 2026-07-28 call of the tool that reports progress three times, 50 ms apart.
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "test_tool_with_progress", "arguments": {},
            "_meta": {
                "progressToken": "p",
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "drain-test", "version": "1"}
            }
        }
    })
    .to_string();
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: test_tool_with_progress\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    while {
        line.clear();
        r.read_line(&mut line).unwrap();
        line != "\r\n"
    } {}
    let first = next_event(&mut r).expect("the first progress notification");
    assert_eq!(first["method"], "notifications/progress");

    // The handler is running: now the restart.
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());

    let mut answer = None;
    while let Some(ev) = next_event(&mut r) {
        if ev.get("id") == Some(&json!(1)) {
            answer = Some(ev);
        }
    }
    let answer = answer.expect("the call's answer arrived after SIGTERM");
    assert_eq!(
        answer["result"]["content"][0]["text"], "Progress test completed",
        "{answer}"
    );

    // The process then exits by itself, well within the default grace of 10 s.
    let (done_tx, done_rx) = bounded(1);
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });
    let status = done_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the process exits after draining")
        .unwrap();
    assert!(status.success(), "{status}");
    // Nobody is listening any more.
    assert!(TcpStream::connect(&addr).is_err());
}
