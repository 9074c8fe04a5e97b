//! The child-process client against real processes (`cat`, `sh`, `sleep`).
#![cfg(unix)]

use std::os::unix::process::ExitStatusExt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use mcp_core::jsonrpc::{Message, Request, RequestId, codes};
use mcp_stdio::{ChildBuilder, Connection, Error, FrameError};

const WAIT: Duration = Duration::from_secs(10);
const SHORT: Duration = Duration::from_millis(100);

/// A child that announces it is ready on stdout (after setting up its signal handling), so the
/// test never races the child's start-up.
fn sh_ready(script_after_ready: &str) -> ChildBuilder {
    let script =
        format!(r#"printf '%s\n' '{{"jsonrpc":"2.0","method":"ready"}}'; {script_after_ready}"#);
    ChildBuilder::new("sh").arg("-c").arg(script)
}

fn wait_ready(conn: &Connection) {
    let m = conn.receiver.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(m.method(), Some("ready"));
}

#[test]
fn cat_echoes_messages_and_exits_when_stdin_closes() {
    let (conn, mut child) = ChildBuilder::new("cat").close_grace(WAIT).spawn().unwrap();
    for id in 1..=5 {
        let req = Request::new(id, "ping", &serde_json::json!({ "n": id })).unwrap();
        conn.sender.send(req.into()).unwrap();
    }
    for id in 1..=5 {
        let Message::Request(r) = conn.receiver.recv_timeout(WAIT).unwrap().unwrap() else {
            panic!("cat sends back what it got")
        };
        assert_eq!(r.id, RequestId::Number(id));
        assert_eq!(r.params_value()["n"], id);
    }
    let t0 = Instant::now();
    let status = child.shutdown().unwrap();
    assert!(status.success(), "cat exits 0 on stdin EOF: {status:?}");
    assert!(t0.elapsed() < WAIT, "no signal was needed");
    // The pipes are done: the receiver ends and sending fails.
    assert!(matches!(
        conn.receiver.recv_timeout(WAIT),
        Err(RecvTimeoutError::Disconnected)
    ));
    assert!(
        conn.sender
            .send(Message::error(
                None,
                mcp_core::jsonrpc::ErrorObject::internal("x")
            ))
            .is_err()
    );
    // Shutdown is idempotent.
    assert_eq!(child.shutdown().unwrap(), status);
}

#[test]
fn a_child_that_ignores_stdin_close_gets_sigterm() {
    let (conn, mut child) = sh_ready("exec sleep 30")
        .close_grace(SHORT)
        .term_grace(WAIT)
        .spawn()
        .unwrap();
    wait_ready(&conn);
    let t0 = Instant::now();
    let status = child.shutdown().unwrap();
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert!(t0.elapsed() < WAIT);
}

#[test]
fn a_child_that_ignores_sigterm_gets_sigkill() {
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(r#"trap "" TERM; printf '%s\n' '{"jsonrpc":"2.0","method":"ready"}'; exec sleep 30"#)
        .close_grace(SHORT)
        .term_grace(SHORT)
        .spawn()
        .unwrap();
    wait_ready(&conn);
    let t0 = Instant::now();
    let status = child.shutdown().unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
    assert!(t0.elapsed() < WAIT);
}

#[test]
fn a_dying_child_ends_the_receiver_and_reports_its_status() {
    let (conn, mut child) = sh_ready("exit 3").spawn().unwrap();
    wait_ready(&conn);
    // A client waiting for an answer learns the server is gone instead of hanging.
    assert!(matches!(
        conn.receiver.recv_timeout(WAIT),
        Err(RecvTimeoutError::Disconnected)
    ));
    let status = child.wait_timeout(WAIT).unwrap().unwrap();
    assert_eq!(status.code(), Some(3));
    assert_eq!(child.exit_status(), Some(status));
    assert_eq!(child.shutdown().unwrap(), status);
}

#[test]
fn bad_output_lines_are_reported_and_reading_goes_on() {
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(r#"printf 'garbage\n{"jsonrpc":"2.0","id":7,"result":5,"error":{}}\n\n{"jsonrpc":"2.0","id":8,"result":{}}\r\n'"#)
        .spawn()
        .unwrap();
    match conn.receiver.recv_timeout(WAIT).unwrap() {
        Err(FrameError::Decode(e)) => assert_eq!(e.error.code, codes::PARSE_ERROR),
        other => panic!("expected a parse error, got {other:?}"),
    }
    // A malformed answer still names its request, so a client can fail that call.
    match conn.receiver.recv_timeout(WAIT).unwrap() {
        Err(FrameError::Decode(e)) => assert_eq!(e.id, Some(RequestId::Number(7))),
        other => panic!("expected an invalid response, got {other:?}"),
    }
    let ok = conn.receiver.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(ok.id(), Some(&RequestId::Number(8)));
    assert!(child.shutdown().unwrap().success());
}

#[test]
fn an_over_long_answer_names_the_request_it_answers() {
    // The id last, as the TypeScript SDK writes it, after 100 KB of result: read as the line
    // streams past, so the call it answers fails at once instead of at its timeout.
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(
            r#"printf '{"result":{"content":[{"type":"text","text":"'; head -c 100000 /dev/zero | tr '\0' x; printf '"}]},"jsonrpc":"2.0","id":7}\n'"#,
        )
        .max_line_len(1000)
        .spawn()
        .unwrap();
    let item = conn.receiver.recv_timeout(WAIT).unwrap();
    match &item {
        Err(FrameError::TooLarge { id, method, .. }) => {
            assert_eq!((id, *method), (&Some(RequestId::Number(7)), false));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    match mcp_core::transport::Incoming::from(item.unwrap_err()) {
        mcp_core::transport::Incoming::Malformed { id, .. } => {
            assert_eq!(id, Some(RequestId::Number(7)));
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
    assert!(child.shutdown().unwrap().success());
}

#[test]
fn an_over_long_answer_fails_its_call_before_its_line_ends() {
    // 100 KB of result after the id: reported when the limit is passed (the id and `result`
    // already read), and the rest of the line goes without a second report.
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(
            r#"printf '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"'; head -c 100000 /dev/zero | tr '\0' x; printf '"}]}}\n{"jsonrpc":"2.0","method":"after"}\n'"#,
        )
        .max_line_len(1000)
        .spawn()
        .unwrap();
    match conn.receiver.recv_timeout(WAIT).unwrap() {
        Err(FrameError::TooLarge {
            id, method, len, ..
        }) => {
            assert_eq!((id, method), (Some(RequestId::Number(7)), false));
            assert!(len > 1000 && len < 100_000, "{len}");
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    let m = conn.receiver.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(m.method(), Some("after"));
    assert!(child.shutdown().unwrap().success());

    // A line that never ends: the call it answers still fails, at once.
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(r#"printf '{"jsonrpc":"2.0","id":8,"result":{"text":"'; exec cat /dev/zero"#)
        .max_line_len(1000)
        .close_grace(SHORT)
        .spawn()
        .unwrap();
    match conn.receiver.recv_timeout(WAIT) {
        Ok(Err(FrameError::TooLarge { id, .. })) => assert_eq!(id, Some(RequestId::Number(8))),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    let _ = child.shutdown();
}

#[test]
fn an_answer_that_is_not_utf8_names_the_request_it_answers() {
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(r#"printf '{"jsonrpc":"2.0","id":9,"result":{"x":"\377"}}\n'"#)
        .spawn()
        .unwrap();
    let item = conn.receiver.recv_timeout(WAIT).unwrap();
    match &item {
        Err(FrameError::Decode(e)) => {
            assert!(e.is_parse_error() && e.is_response(), "{e:?}");
            assert_eq!(e.id, Some(RequestId::Number(9)));
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    match mcp_core::transport::Incoming::from(item.unwrap_err()) {
        mcp_core::transport::Incoming::Malformed { id, .. } => {
            assert_eq!(id, Some(RequestId::Number(9)));
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
    assert!(child.shutdown().unwrap().success());
}

#[test]
fn an_over_long_line_from_the_child_is_skipped() {
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(r#"head -c 100000 /dev/zero | tr '\0' x; printf '\n{"jsonrpc":"2.0","method":"after"}\n'"#)
        .max_line_len(1000)
        .spawn()
        .unwrap();
    match conn.receiver.recv_timeout(WAIT).unwrap() {
        Err(FrameError::TooLarge { len, limit, .. }) => assert_eq!((len, limit), (100_000, 1000)),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    let m = conn.receiver.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(m.method(), Some("after"));
    assert!(child.shutdown().unwrap().success());
}

#[test]
fn environment_and_directory_reach_the_child() {
    let dir = std::env::temp_dir();
    let (conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg(r#"printf '{"jsonrpc":"2.0","method":"%s","params":{"dir":"%s"}}\n' "$MCP_TEST_VAR" "$(pwd -P)""#)
        .env("MCP_TEST_VAR", "from-env")
        .current_dir(&dir)
        .spawn()
        .unwrap();
    let Message::Notification(n) = conn.receiver.recv_timeout(WAIT).unwrap().unwrap() else {
        panic!("expected a notification")
    };
    assert_eq!(n.method, "from-env");
    let want = dir.canonicalize().unwrap();
    assert_eq!(n.params_value()["dir"], want.to_str().unwrap());
    assert!(child.shutdown().unwrap().success());
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    match ChildBuilder::new("/nonexistent/mcp-server-for-tests").spawn() {
        Err(Error::Spawn { program, .. }) => {
            assert_eq!(program, "/nonexistent/mcp-server-for-tests")
        }
        other => panic!("expected a spawn error, got {:?}", other.map(|_| ())),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn dropping_the_handle_stops_and_reaps_the_child() {
    let (conn, child) = sh_ready("exec sleep 30")
        .close_grace(SHORT)
        .term_grace(SHORT)
        .spawn()
        .unwrap();
    wait_ready(&conn);
    let pid = child.id();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    drop(child);
    // Reaped, not a zombie: the pid is gone from /proc.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

/// Collects what the crate logs under `mcp_stdio::child`.
struct Capture(OnceLock<Sender<String>>);

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target() == "mcp_stdio::child"
    }
    fn log(&self, r: &log::Record<'_>) {
        if let (true, Some(tx)) = (self.enabled(r.metadata()), self.0.get()) {
            let _ = tx.try_send(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture(OnceLock::new());

fn captured_logs() -> Receiver<String> {
    let (tx, rx) = bounded(1000);
    CAPTURE.0.set(tx).expect("only one test captures logs");
    log::set_logger(&CAPTURE).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    rx
}

#[test]
fn stderr_lines_go_to_the_log() {
    let logs = captured_logs();
    let (_conn, mut child) = ChildBuilder::new("sh")
        .arg("-c")
        .arg("echo 'hello from stderr' >&2; echo 'second line' >&2")
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut want = vec![
        format!("[{pid}] hello from stderr"),
        format!("[{pid}] second line"),
    ];
    let deadline = Instant::now() + WAIT;
    while !want.is_empty() {
        let line = logs.recv_deadline(deadline).expect("stderr was forwarded");
        want.retain(|w| *w != line);
    }
    assert!(child.shutdown().unwrap().success());
}

#[test]
fn memory_endpoints_are_connected_both_ways() {
    let (a, b) = mcp_stdio::memory(1).unwrap();
    let req = Request::new(1, "ping", &serde_json::json!({})).unwrap();
    a.sender.send(req.into()).unwrap();
    let got = b.receiver.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(got.method(), Some("ping"));
    b.sender
        .send(Message::error(
            Some(RequestId::Number(1)),
            mcp_core::jsonrpc::ErrorObject::method_not_found("ping"),
        ))
        .unwrap();
    assert!(
        a.receiver
            .recv_timeout(WAIT)
            .unwrap()
            .unwrap()
            .is_response()
    );
    drop(b);
    assert!(matches!(
        a.receiver.recv_timeout(WAIT),
        Err(RecvTimeoutError::Disconnected)
    ));
}
