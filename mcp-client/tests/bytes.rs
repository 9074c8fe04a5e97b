//! The client's receiving queues are bounded in bytes (issue 20): a server that floods large
//! messages while the client cannot keep up costs the client a bounded amount of memory, and
//! the call still ends within its timeout with a clear error.
//!
//! How the client is made to fall behind, as a real hostile server would do it: the server
//! first sends many `ping` requests, and does not take the client's answers (over HTTP it
//! never acknowledges the POSTed replies; over stdio it stops reading its stdin). The client's
//! outgoing queue fills, its reading thread waits to send the next answer, and everything the
//! server sends next piles up in the receiving queue: 30 notifications of 8 MiB (HTTP) or
//! 3 MiB (stdio, under its 4 MiB line limit). Bounded by count only, that queue held all of
//! them (256 x 16 MiB and 64 x 4 MiB allowed); bounded by bytes, it holds 16 MiB.
//!
//! Each client runs in a child process (this test binary, run again for that one test), so its
//! peak memory (`VmHWM` of `/proc/self/status`) is its own: the scripted servers live in the
//! parent process or in a process of their own.
//!
//! Stated bounds: the call ends within its timeout plus [`SLACK`], and the client process's
//! peak resident memory stays under [`PEAK_BOUND_MIB`].

#![cfg(target_os = "linux")]

use std::io::{BufRead, Write};
#[cfg(feature = "http")]
use std::io::{BufReader, Read};
#[cfg(feature = "http")]
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use mcp_client::{Client, Error, Revision, Timeout};
use serde_json::{Value, json};

/// The peak resident memory a client process may reach, whatever the server sends.
const PEAK_BOUND_MIB: u64 = 64;
/// The call's own timeout.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// How much past its timeout a call may end (the caller keeps its deadline itself, even while
/// the client's reader thread is held up, waiting to queue an answer to a ping).
const SLACK: Duration = Duration::from_millis(500);
/// Pings the HTTP server sends first: more than the client's outgoing queue holds (256), fewer
/// than its receiving queue holds (256 messages), so that with a queue bounded by count only
/// the whole flood fits in after them.
#[cfg(feature = "http")]
const HTTP_PINGS: usize = 400;
/// The same for stdio: each answer (about 1 KiB, from the ping's long id, just under the
/// 1,024 bytes of id the client answers at all) fills the stdin pipe after about 64, so about
/// 130 fill the client's outgoing path; the receiving queue holds 64 messages.
const STDIO_PINGS: usize = 200;
/// The padding of the stdio pings' ids.
const STDIO_ID_PAD: usize = 1000;
/// The flood: this many notifications...
const FLOOD: usize = 30;

/// Set in the child process: what it is to run.
const ROLE: &str = "MCP_BYTES_ROLE";
/// Set in the child process that runs a client: where its server is.
#[cfg(feature = "http")]
const TARGET: &str = "MCP_BYTES_TARGET";

/// The peak resident set of this process, in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A `notifications/message` of about `bytes` bytes.
fn big_notification(bytes: usize) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
           "params": {"level": "info", "data": "x".repeat(bytes)}})
    .to_string()
}

fn ping(i: usize, pad: usize) -> String {
    // A long id makes each answer long too (the stdio server fills its stdin pipe sooner).
    json!({"jsonrpc": "2.0", "id": format!("p{i}-{}", "i".repeat(pad)), "method": "ping"})
        .to_string()
}

/// Runs this binary's test `test` again in a child process with `env`; its stdout.
fn run_child(test: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The client's side, in the child process: one call to the flooding tool; prints what the
/// parent checks.
fn client_side(client: Result<Client, Error>) {
    let client = client.unwrap();
    let started = Instant::now();
    let r = client.call_tool("flood", json!({}));
    let took = started.elapsed();
    let error = match &r {
        Err(e) => e.to_string(),
        Ok(v) => format!("unexpected success: {v:?}"),
    };
    let timed_out = matches!(r, Err(Error::Timeout { .. }));
    println!(
        "RESULT took_ms={} peak_kib={} timed_out={timed_out} error={error}",
        took.as_millis(),
        peak_kib()
    );
    std::io::stdout().flush().unwrap();
    // Closing ends the server's child process (stdio) or the session (HTTP).
    drop(client);
    std::process::exit(0);
}

/// Reads the child's RESULT line and checks the stated bounds.
fn check(stdout: &str, what: &str) {
    let line = stdout
        .lines()
        .find_map(|l| l.find("RESULT ").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("no result from the {what} client: {stdout}"));
    let field = |k: &str| {
        line.split(' ')
            .find_map(|f| f.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} missing: {line}"))
    };
    let took = Duration::from_millis(field("took_ms").parse().unwrap());
    let peak_mib = field("peak_kib").parse::<u64>().unwrap() / 1024;
    eprintln!("{what}: {line}");
    assert_eq!(field("timed_out"), "true", "{line}");
    assert!(
        took < CALL_TIMEOUT + SLACK,
        "{what}: the call took {took:?}"
    );
    assert!(
        peak_mib < PEAK_BOUND_MIB,
        "{what}: the client's peak memory was {peak_mib} MiB (bound {PEAK_BOUND_MIB} MiB)"
    );
}

// ---------------------------------------------------------------------------------------
// Streamable HTTP

/// One HTTP request: method line, body.
#[cfg(feature = "http")]
fn read_request(r: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut len = 0;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end().to_ascii_lowercase();
        if h.is_empty() {
            break;
        }
        if let Some(v) = h.strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some((line, body))
}

#[cfg(feature = "http")]
fn respond_json(w: &mut TcpStream, v: &Value) -> std::io::Result<()> {
    let body = v.to_string();
    write!(
        w,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A legacy Streamable HTTP server: answers the handshake, never acknowledges a POSTed
/// answer of the client (the connection is held open, unanswered), and answers `tools/call`
/// with an SSE stream of pings followed by the flood (written until the client stops reading,
/// which blocks this thread: TCP back-pressure).
#[cfg(feature = "http")]
fn flooding_http_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let (hold_tx, hold_rx) = crossbeam_channel::bounded(1);
            thread::spawn(move || serve_http(conn, &hold_tx));
            // Connections the server holds unanswered stay open until the test ends.
            held.push(hold_rx);
        }
    });
    format!("http://{addr}/mcp")
}

#[cfg(feature = "http")]
fn serve_http(conn: TcpStream, hold: &crossbeam_channel::Sender<TcpStream>) {
    let mut w = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    while let Some((line, body)) = read_request(&mut r) {
        if line.starts_with("GET") {
            let _ = write!(
                w,
                "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"
            );
            continue;
        }
        if line.starts_with("DELETE") {
            let _ = write!(w, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            continue;
        }
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        match (v["method"].as_str(), v.get("id")) {
            (Some("initialize"), Some(id)) => {
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": v["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "flood", "version": "1"}}});
                let _ = respond_json(&mut w, &answer);
            }
            (Some("tools/call"), Some(_)) => {
                let _ = write!(
                    w,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                );
                for i in 0..HTTP_PINGS {
                    if write!(w, "data: {}\n\n", ping(i, 0)).is_err() {
                        return;
                    }
                }
                let big = big_notification(8 << 20);
                for _ in 0..FLOOD {
                    if write!(w, "data: {big}\n\n").is_err() {
                        return;
                    }
                }
                return;
            }
            (Some(_), None) => {
                let _ = write!(w, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
            }
            _ => {
                // The client's answer to a ping (or anything else): never acknowledged.
                let _ = hold.send(w);
                return;
            }
        }
    }
}

#[cfg(feature = "http")]
#[test]
fn a_flooding_http_server_costs_the_client_bounded_memory() {
    if let Ok(url) = std::env::var(TARGET) {
        if std::env::var(ROLE).as_deref() == Ok("http-client") {
            client_side(
                Client::builder()
                    .revision(Revision::Legacy)
                    .timeout(Timeout::fixed(CALL_TIMEOUT))
                    .connect_http(&url),
            );
        }
        return;
    }
    let url = flooding_http_server();
    let out = run_child(
        "a_flooding_http_server_costs_the_client_bounded_memory",
        &[(ROLE, "http-client"), (TARGET, &url)],
    );
    check(&out, "HTTP");
}

// ---------------------------------------------------------------------------------------
// stdio

/// The stdio server, in a process of its own: answers the handshake, and on `tools/call`
/// sends pings with long ids, stops reading its stdin for good, and floods.
fn flooding_stdio_server() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut lines = stdin.lock().lines();
    while let Some(Ok(line)) = lines.next() {
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match v["method"].as_str() {
            Some("initialize") => {
                let answer = json!({"jsonrpc": "2.0", "id": v["id"], "result": {
                    "protocolVersion": v["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "flood", "version": "1"}}});
                writeln!(out, "{answer}").unwrap();
                out.flush().unwrap();
            }
            Some("tools/call") => break,
            _ => {}
        }
    }
    for i in 0..STDIO_PINGS {
        if writeln!(out, "{}", ping(i, STDIO_ID_PAD)).is_err() {
            return;
        }
    }
    let big = big_notification(3 << 20);
    for _ in 0..FLOOD {
        if writeln!(out, "{big}").is_err() {
            return;
        }
    }
    let _ = out.flush();
    // Holds its pipes open, reading nothing, until it is killed.
    loop {
        thread::park();
    }
}

#[test]
fn a_flooding_stdio_server_costs_the_client_bounded_memory() {
    const NAME: &str = "a_flooding_stdio_server_costs_the_client_bounded_memory";
    match std::env::var(ROLE).as_deref() {
        Ok("stdio-server") => return flooding_stdio_server(),
        Ok("stdio-client") => {
            let server = mcp_stdio::ChildBuilder::new(std::env::current_exe().unwrap())
                .args([NAME, "--exact", "--nocapture", "--test-threads=1", "-q"])
                .env(ROLE, "stdio-server")
                .close_grace(Duration::from_millis(100))
                .term_grace(Duration::from_millis(100));
            client_side(
                Client::builder()
                    .revision(Revision::Legacy)
                    .timeout(Timeout::fixed(CALL_TIMEOUT))
                    .spawn(server),
            );
            return;
        }
        _ => {}
    }
    let out = run_child(NAME, &[(ROLE, "stdio-client")]);
    check(&out, "stdio");
}
