//! The stdio server over real OS socket pairs with a tiny echo service.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use mcp_core::jsonrpc::{ErrorObject, Message, Notification, RequestId, Response, codes, decode};
use mcp_core::service::{Closed, Outbound, Service, Session, SessionInfo, TransportKind};
use mcp_stdio::{Config, Error, serve_on};

/// The hostile-line generator and by-the-book oracle shared with mcp-core's codec test.
#[path = "../../mcp-core/tests/wire_fuzz_support.rs"]
mod wire_fuzz_support;

const WAIT: Duration = Duration::from_secs(10);

/// What the test can observe of the service.
struct Probe {
    closed: Sender<()>,
    progress: Sender<usize>,
    /// The outbound, kept (when `hold` is set) so the test can send after shutdown.
    kept: Mutex<Option<Arc<dyn Outbound>>>,
    farewell: bool,
    hold: bool,
    /// `wait` blocks in `handle` until a `release` message arrives (as a handler that waits
    /// for the client's answer to a sampling request does).
    release_tx: Sender<()>,
    release_rx: Receiver<()>,
    /// Named gates: a `wait` or `await` with `{"gate": name}` waits for that one, opened by
    /// the test or by a `release` with the same params.
    gates: Gates,
    /// The gate names that `handle`s started waiting for (after they announced it).
    waiting: Sender<String>,
    waiting_rx: Receiver<String>,
    /// The thread that called `serve_on`.
    serving: std::sync::OnceLock<thread::ThreadId>,
}

/// Gates opened by name (so that each blocked `handle` waits for its own).
#[derive(Default)]
struct Gates {
    open: Mutex<std::collections::HashSet<String>>,
    changed: std::sync::Condvar,
}

impl Gates {
    fn open(&self, name: &str) {
        self.open.lock().unwrap().insert(name.to_owned());
        self.changed.notify_all();
    }

    /// True once `name` is open; false after `WAIT`.
    fn wait(&self, name: &str) -> bool {
        let open = self.open.lock().unwrap();
        let (open, _) = self
            .changed
            .wait_timeout_while(open, WAIT, |o| !o.contains(name))
            .unwrap();
        open.contains(name)
    }
}

struct Echo(Arc<Probe>);

struct EchoSession {
    out: Mutex<Option<Arc<dyn Outbound>>>,
    probe: Arc<Probe>,
}

impl Service for Echo {
    fn open(&self, info: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        assert_eq!(info.transport, TransportKind::Stdio);
        if self.0.hold {
            *self.0.kept.lock().unwrap() = Some(out.clone());
        }
        Arc::new(EchoSession {
            out: Mutex::new(Some(out)),
            probe: self.0.clone(),
        })
    }
}

impl EchoSession {
    fn out(&self) -> Option<Arc<dyn Outbound>> {
        self.out.lock().unwrap().clone()
    }
}

impl Session for EchoSession {
    fn handle(&self, msg: Message) {
        let Some(out) = self.out() else { return };
        let r = match msg {
            Message::Request(r) => r,
            // Tells the test which notification reached the session.
            Message::Notification(n) => {
                let heard = Notification::new("heard", &serde_json::json!({ "method": n.method }));
                let _ = out.send(heard.unwrap().into(), None);
                return;
            }
            _ => return,
        };
        match r.method.as_str() {
            "initialize" => {
                // Agrees to the revision asked for: the transport reads it from this answer.
                let v = r.params_value()["protocolVersion"].clone();
                let _ = out.send(
                    Response::new(r.id.clone(), &serde_json::json!({ "protocolVersion": v }))
                        .unwrap()
                        .into(),
                    Some(&r.id),
                );
            }
            "ping" => {
                let _ = out.send(
                    Response::new(r.id.clone(), &serde_json::json!({}))
                        .unwrap()
                        .into(),
                    Some(&r.id),
                );
            }
            "echo" => {
                let params = r.params_value();
                let _ = out.send(
                    Response::new(r.id.clone(), &params).unwrap().into(),
                    Some(&r.id),
                );
            }
            "threads" => {
                // Several senders at once, some writing directly, some through the queue.
                for t in 0..4u64 {
                    let out = out.clone();
                    thread::spawn(move || {
                        for i in 0..300u64 {
                            let note =
                                Notification::new("seq", &serde_json::json!({ "t": t, "i": i }))
                                    .unwrap();
                            if out.send(note.into(), None).is_err() {
                                return;
                            }
                        }
                    });
                }
            }
            "flood" => {
                // Sends from a worker, as a real service would: `handle` must return quickly.
                let n = r.params_value()["n"].as_u64().unwrap() as usize;
                let size = r.params_value()["size"].as_u64().unwrap() as usize;
                let progress = self.probe.progress.clone();
                thread::spawn(move || {
                    let payload = "x".repeat(size);
                    for i in 1..=n {
                        let note = Notification::new(
                            "flood",
                            &serde_json::json!({ "i": i, "pad": payload }),
                        )
                        .unwrap();
                        if out.send(note.into(), None).is_err() {
                            return;
                        }
                        let _ = progress.send(i);
                    }
                });
            }
            "panic" => panic!("the session panicked on purpose"),
            "whoami" => {
                let same = self.probe.serving.get() == Some(&thread::current().id());
                let _ = out.send(
                    Response::new(r.id.clone(), &serde_json::json!({ "serving_thread": same }))
                        .unwrap()
                        .into(),
                    Some(&r.id),
                );
            }
            "wait" | "await" | "wait_then_await" => {
                // Announced, so the transport reads on in another thread meanwhile. `wait`
                // ends on its own (the test releases it); `await` waits for the client (a
                // `release` request, read by the transport); `wait_then_await` does one, then
                // the other (gates `gate`, then `then`). Refused, answered at once (as the
                // kit answers busy).
                let p = r.params_value();
                let gate = |name: &serde_json::Value| match name.as_str() {
                    Some(name) => {
                        let _ = self.probe.waiting.try_send(name.to_owned());
                        self.probe.gates.wait(name)
                    }
                    None => self.probe.release_rx.recv_timeout(WAIT).is_ok(),
                };
                let answer = if r.method == "wait_then_await" {
                    if !out.will_block() {
                        serde_json::json!({ "refused": "wait" })
                    } else if !gate(&p["gate"]) {
                        serde_json::json!({ "released": false })
                    } else if !out.will_await_peer() {
                        serde_json::json!({ "refused": "await" })
                    } else {
                        serde_json::json!({ "released": gate(&p["then"]) })
                    }
                } else if if r.method == "await" {
                    out.will_await_peer()
                } else {
                    out.will_block()
                } {
                    serde_json::json!({ "released": gate(&p["gate"]) })
                } else {
                    serde_json::json!({ "refused": true })
                };
                let _ = out.send(
                    Response::new(r.id.clone(), &answer).unwrap().into(),
                    Some(&r.id),
                );
            }
            "release" => {
                match r.params_value()["gate"].as_str() {
                    Some(name) => self.probe.gates.open(name),
                    None => {
                        let _ = self.probe.release_tx.send(());
                    }
                }
                let _ = out.send(
                    Response::new(r.id.clone(), &serde_json::json!({}))
                        .unwrap()
                        .into(),
                    Some(&r.id),
                );
            }
            _ => {
                let _ = out.send(
                    Message::error(Some(r.id.clone()), ErrorObject::method_not_found(&r.method)),
                    Some(&r.id),
                );
            }
        }
    }

    fn close(&self) {
        let out = self.out.lock().unwrap().take();
        if self.probe.farewell {
            if let Some(out) = out {
                let _ = out.send(Notification::bare("bye").into(), None);
            }
        }
        let _ = self.probe.closed.send(());
    }
}

struct Harness {
    input: UnixStream,
    output: BufReader<UnixStream>,
    result: Receiver<Result<(), Error>>,
    closed: Receiver<()>,
    progress: Receiver<usize>,
    probe: Arc<Probe>,
}

fn start(config: Config, farewell: bool, hold: bool) -> Harness {
    let (client_in, server_in) = UnixStream::pair().unwrap();
    let (server_out, client_out) = UnixStream::pair().unwrap();
    let (closed_tx, closed) = bounded(4);
    let (progress_tx, progress) = bounded(10_000);
    let (release_tx, release_rx) = bounded(16);
    let (waiting, waiting_rx) = bounded(64);
    let probe = Arc::new(Probe {
        closed: closed_tx,
        progress: progress_tx,
        kept: Mutex::new(None),
        farewell,
        hold,
        release_tx,
        release_rx,
        gates: Gates::default(),
        waiting,
        waiting_rx,
        serving: std::sync::OnceLock::new(),
    });
    let (tx, result) = bounded(1);
    let service = Echo(probe.clone());
    let serving = probe.clone();
    thread::spawn(move || {
        let _ = serving.serving.set(thread::current().id());
        let _ = tx.send(serve_on(server_in, server_out, service, &config));
    });
    Harness {
        input: client_in,
        output: BufReader::new(client_out),
        result,
        closed,
        progress,
        probe,
    }
}

impl Harness {
    fn send_line(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).unwrap();
        self.input.write_all(b"\n").unwrap();
    }

    fn echo(&mut self, id: i64, text: &str) {
        self.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"echo","params":{{"text":"{text}"}}}}"#
        ));
    }

    /// Negotiates revision `version` (the echo service agrees to any).
    fn initialize(&mut self, version: &str) {
        self.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":"{version}"}}}}"#
        ));
        let answer = self.read().unwrap();
        assert_eq!(answer.id(), Some(&RequestId::from("init")), "{answer:?}");
    }

    /// The next line from the server, whole, or `None` at EOF.
    fn line(&mut self) -> Option<String> {
        let mut line = String::new();
        if self.output.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        assert!(
            line.ends_with('\n'),
            "every message ends its line: {line:?}"
        );
        line.truncate(line.trim_end().len());
        Some(line)
    }

    /// The next line from the server, one message, or `None` at EOF.
    fn read(&mut self) -> Option<Message> {
        let line = self.line()?;
        Some(decode(line.as_bytes()).expect("the server writes only messages"))
    }

    /// The messages of the next line: one, or a batch's answers (a JSON array).
    fn read_any(&mut self) -> Option<Vec<Message>> {
        let line = self.line()?;
        if line.starts_with('[') {
            Some(batch_of(&line))
        } else {
            Some(vec![decode(line.as_bytes()).expect("a message")])
        }
    }

    /// The next line that is not the echo service's `heard` notification, which must be a
    /// batch's answers: a JSON array of messages.
    fn read_batch(&mut self) -> Vec<Message> {
        loop {
            let line = self.line().expect("an answer");
            if !line.starts_with(r#"{"jsonrpc":"2.0","method":"heard""#) {
                return batch_of(&line);
            }
        }
    }

    fn eof(&mut self) {
        self.input.shutdown(std::net::Shutdown::Write).unwrap();
    }

    fn result(&self) -> Result<(), Error> {
        self.result
            .recv_timeout(WAIT)
            .expect("serve_on returned in time")
    }
}

/// The messages of a batch's answer line (a non-empty JSON array).
fn batch_of(line: &str) -> Vec<Message> {
    let items: Vec<serde_json::Value> =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not an array ({e}): {line}"));
    assert!(!items.is_empty(), "an empty array is no answer");
    items
        .iter()
        .map(|v| decode(v.to_string().as_bytes()).unwrap())
        .collect()
}

fn error_code(m: &Message) -> (i64, Option<RequestId>) {
    match m {
        Message::Error(e) => (e.error.code, e.id.clone()),
        other => panic!("expected an error response, got {other:?}"),
    }
}

#[test]
fn pipelined_echo_then_eof_shuts_down_cleanly() {
    let mut h = start(Config::default(), false, false);
    for id in 1..=3 {
        h.echo(id, &format!("hello {id}"));
    }
    for id in 1..=3 {
        let Some(Message::Response(r)) = h.read() else {
            panic!("expected a response")
        };
        assert_eq!(r.id, RequestId::Number(id));
        let v: serde_json::Value = r.result().unwrap();
        assert_eq!(v["text"], format!("hello {id}"));
    }
    h.eof();
    h.result().unwrap();
    h.closed.recv_timeout(WAIT).expect("the session was closed");
    // The writer is gone, so the server's output reaches EOF.
    assert!(h.read().is_none());
}

#[test]
fn bad_lines_are_answered_and_reading_goes_on() {
    let config = Config::builder().max_line_len(1024).build();
    let mut h = start(config, false, false);
    h.send_line("garbage");
    h.send_line(&"y".repeat(5 * 1024 * 1024));
    h.send_line(r#"{"jsonrpc":"2.0","id":4,"method":7}"#);
    h.input.write_all(b"\r\n\n").unwrap();
    h.echo(5, "after");

    assert_eq!(error_code(&h.read().unwrap()), (codes::PARSE_ERROR, None));
    let too_large = h.read().unwrap();
    assert_eq!(error_code(&too_large), (codes::INVALID_REQUEST, None));
    let Message::Error(e) = &too_large else {
        unreachable!()
    };
    assert_eq!(e.error.message, "message too large");
    assert_eq!(
        error_code(&h.read().unwrap()),
        (codes::INVALID_REQUEST, Some(RequestId::Number(4)))
    );
    assert_eq!(h.read().unwrap().id(), Some(&RequestId::Number(5)));
    h.eof();
    h.result().unwrap();
}

#[test]
fn batches_are_split_or_refused() {
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-03-26");
    h.send_line(
        r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{}},{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}]"#,
    );
    // One line, an array (JSON-RPC 2.0 §6), whatever order the answers came in.
    let mut ids: Vec<RequestId> = h
        .read_batch()
        .iter()
        .map(|m| m.id().cloned().unwrap())
        .collect();
    ids.sort_by_key(|id| id.to_string());
    assert_eq!(ids, [RequestId::Number(1), RequestId::Number(2)]);
    // Elements refused get their answers in the array too (a null id where none could be
    // read); notifications none; a batch of notifications no answer at all.
    h.send_line(
        r#"[{"jsonrpc":"2.0","id":3,"method":"echo","params":{}},{"jsonrpc":"2.0","method":"notifications/x"},5,{"jsonrpc":"1.0","id":4,"method":"echo"}]"#,
    );
    let answers = h.read_batch();
    assert_eq!(answers.len(), 3, "{answers:?}");
    let refused = |id: Option<RequestId>| {
        answers.iter().any(|m| {
            matches!(m, Message::Error(e) if e.error.code == codes::INVALID_REQUEST && e.id == id)
        })
    };
    assert!(
        answers
            .iter()
            .any(|m| matches!(m, Message::Response(r) if r.id == RequestId::Number(3)))
    );
    assert!(refused(None) && refused(Some(RequestId::Number(4))));
    h.send_line(r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#);
    // Answers outside batches stay single lines (the test service's `heard` is its own
    // notification, not an answer).
    h.echo(6, "alone");
    assert_eq!(
        heard(&h.read().unwrap()).as_deref(),
        Some("notifications/x")
    );
    assert_eq!(h.read().unwrap().id(), Some(&RequestId::Number(6)));
    h.eof();
    h.result().unwrap();

    let mut h = start(Config::builder().allow_batches(false).build(), false, false);
    h.initialize("2025-03-26");
    h.send_line(r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}]"#);
    assert_eq!(
        error_code(&h.read().unwrap()),
        (codes::INVALID_REQUEST, None)
    );
    h.eof();
    h.result().unwrap();
}

/// One batch rule for stdio and HTTP (issue 20): a batch only once `initialize` was answered
/// with a revision that has batches (2025-03-26), never with `initialize` inside.
#[test]
fn batches_follow_the_negotiated_revision_and_never_carry_initialize() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}]"#;
    let init_batch = r#"[{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26"}}]"#;

    // Nothing negotiated: `[initialize]` is refused as a whole, and nothing ran.
    let mut h = start(Config::default(), false, false);
    h.send_line(init_batch);
    assert_eq!(
        error_code(&h.read().unwrap()),
        (codes::INVALID_REQUEST, None)
    );
    h.send_line(batch);
    assert_eq!(
        error_code(&h.read().unwrap()),
        (codes::INVALID_REQUEST, None)
    );
    h.echo(2, "alone");
    assert_eq!(h.read().unwrap().id(), Some(&RequestId::Number(2)));
    h.eof();
    h.result().unwrap();

    // A revision without batches refuses them.
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-06-18");
    h.send_line(batch);
    assert_eq!(
        error_code(&h.read().unwrap()),
        (codes::INVALID_REQUEST, None)
    );
    h.eof();
    h.result().unwrap();

    // 2025-03-26 takes them, but not `initialize` inside: that one is refused with its id,
    // the rest of the batch served (one answer per request, as JSON-RPC has it).
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-03-26");
    h.send_line(batch);
    assert_eq!(h.read_batch()[0].id(), Some(&RequestId::Number(1)));
    h.send_line(&init_batch.replace(
        "}}]",
        r#"}},{"jsonrpc":"2.0","id":3,"method":"echo","params":{}}]"#,
    ));
    let answers = h.read_batch();
    assert_eq!(answers.len(), 2, "{answers:?}");
    let refused = answers
        .iter()
        .find(|m| m.id() == Some(&RequestId::String("i".into())))
        .expect("the initialize is answered");
    assert_eq!(
        error_code(refused),
        (codes::INVALID_REQUEST, Some(RequestId::String("i".into())))
    );
    let Message::Error(e) = refused else {
        unreachable!()
    };
    assert!(e.error.message.contains("initialize"), "{e:?}");
    assert!(
        answers
            .iter()
            .any(|m| m.id() == Some(&RequestId::Number(3)) && m.is_response())
    );
    h.eof();
    h.result().unwrap();
}

#[test]
fn messages_sent_while_closing_still_go_out() {
    let mut h = start(Config::default(), true, false);
    h.eof();
    assert_eq!(h.read().unwrap().method(), Some("bye"));
    assert!(h.read().is_none());
    h.result().unwrap();
}

#[test]
fn a_service_that_keeps_its_outbound_gets_closed_after_the_grace() {
    let grace = Duration::from_millis(200);
    let config = Config::builder().shutdown_grace(grace).build();
    let mut h = start(config, false, true);
    h.echo(1, "x");
    assert!(h.read().is_some());
    let t0 = Instant::now();
    h.eof();
    h.result().unwrap();
    let took = t0.elapsed();
    assert!(
        took >= grace,
        "returned before the grace was over: {took:?}"
    );
    assert!(took < WAIT, "grace is bounded: {took:?}");
    let kept = h.probe.kept.lock().unwrap().clone().unwrap();
    assert_eq!(
        kept.send(Notification::bare("late").into(), None),
        Err(Closed)
    );
}

#[test]
fn a_client_that_stops_reading_blocks_the_service_not_memory() {
    const N: usize = 64;
    let config = Config::builder().outbound_capacity(1).build();
    let mut h = start(config, false, false);
    h.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"flood","params":{{"n":{N},"size":262144}}}}"#
    ));
    // Nobody reads: the socket buffer and the one-slot queue fill, and the service's sends block.
    let mut sent = 0;
    loop {
        match h.progress.recv_timeout(Duration::from_millis(500)) {
            Ok(i) => sent = i,
            Err(RecvTimeoutError::Timeout) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        sent < N,
        "all {N} messages of 256 KiB were accepted without a reader"
    );
    // Reading lets every message through, in order.
    for i in 1..=N {
        let m = h.read().unwrap();
        let Message::Notification(n) = m else {
            panic!("expected a notification")
        };
        let v: serde_json::Value = n.params().unwrap();
        assert_eq!(v["i"], i);
    }
    while sent < N {
        sent = h.progress.recv_timeout(WAIT).unwrap();
    }
    h.eof();
    h.result().unwrap();
}

#[test]
fn output_failure_ends_serving_with_an_error() {
    let mut h = start(Config::default(), false, false);
    // The client stops listening, then asks for something.
    let (_, dummy) = UnixStream::pair().unwrap();
    let out = std::mem::replace(&mut h.output, BufReader::new(dummy));
    drop(out);
    h.echo(1, "nobody hears this");
    match h.result() {
        Err(Error::Io(_)) => {}
        other => panic!("expected an I/O error, got {other:?}"),
    }
    h.closed.recv_timeout(WAIT).expect("the session was closed");
}

/// A service that never ends sessions on its own is read on the caller's thread: a quick
/// request costs no thread at all (the writer starts only when a message has to queue).
#[test]
fn requests_are_read_and_handled_on_the_thread_that_serves() {
    let mut h = start(Config::default(), false, false);
    h.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#);
    let Some(Message::Response(r)) = h.read() else {
        panic!("expected an answer")
    };
    let v: serde_json::Value = r.result().unwrap();
    assert_eq!(v["serving_thread"], true);
    // Once a handler blocks, the reading goes on elsewhere, and still ends cleanly at EOF.
    h.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"wait"}"#);
    h.send_line(r#"{"jsonrpc":"2.0","id":3,"method":"whoami"}"#);
    let Some(Message::Response(r)) = h.read() else {
        panic!("expected an answer")
    };
    assert_eq!(r.id, RequestId::Number(3));
    let v: serde_json::Value = r.result().unwrap();
    assert_eq!(
        v["serving_thread"], false,
        "read by the reader it was handed to"
    );
    h.send_line(r#"{"jsonrpc":"2.0","id":4,"method":"release"}"#);
    let ids: Vec<_> = (0..2).map(|_| h.read().unwrap().id().cloned()).collect();
    assert!(ids.contains(&Some(RequestId::Number(2))), "{ids:?}");
    h.eof();
    h.result().unwrap();
}

#[test]
fn a_panicking_session_is_reported_not_hidden() {
    let mut h = start(Config::default(), false, false);
    h.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"panic"}"#);
    match h.result() {
        Err(Error::ThreadPanicked { thread }) => assert_eq!(thread, "mcp-stdio-reader"),
        other => panic!("expected a panic report, got {other:?}"),
    }
    h.closed.recv_timeout(WAIT).expect("the session was closed");
}

#[test]
fn outbound_after_shutdown_is_closed() {
    let h = start(Config::default(), false, true);
    h.input.shutdown(std::net::Shutdown::Write).unwrap();
    h.result().unwrap();
    let kept = h.probe.kept.lock().unwrap().clone().unwrap();
    assert_eq!(
        kept.send(Notification::bare("late").into(), None),
        Err(Closed)
    );
}

#[test]
fn each_senders_messages_keep_their_order() {
    let mut h = start(Config::builder().outbound_capacity(4).build(), false, false);
    h.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"threads"}"#);
    let mut next = [0u64; 4];
    for _ in 0..1200 {
        let Some(Message::Notification(n)) = h.read() else {
            panic!("expected a notification")
        };
        let v = n.params_value();
        let (t, i) = (v["t"].as_u64().unwrap() as usize, v["i"].as_u64().unwrap());
        assert_eq!(i, next[t], "sender {t} out of order");
        next[t] += 1;
    }
    assert_eq!(next, [300; 4]);
    h.eof();
    h.result().unwrap();
}

#[test]
fn the_session_declares_that_handle_may_block() {
    struct Check(Sender<bool>);
    struct Nothing;
    impl Session for Nothing {
        fn handle(&self, _: Message) {}
        fn close(&self) {}
    }
    impl Service for Check {
        fn open(&self, info: SessionInfo, _: Arc<dyn Outbound>) -> Arc<dyn Session> {
            let _ = self.0.send(info.handle_may_block);
            Arc::new(Nothing)
        }
    }
    let (a, b) = UnixStream::pair().unwrap();
    let (tx, rx) = bounded(1);
    drop(a);
    serve_on(b.try_clone().unwrap(), b, Check(tx), &Config::default()).unwrap();
    assert_eq!(rx.recv_timeout(WAIT), Ok(true));
}

#[test]
fn a_blocked_handle_does_not_stop_the_reading() {
    let mut h = start(Config::default(), false, false);
    // `wait` announces its block and blocks inside handle; another thread must take over
    // the reading for the
    // `echo` and the `release` behind it to be answered at all.
    h.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#);
    h.echo(2, "meanwhile");
    let m = h.read().unwrap();
    assert_eq!(m.id(), Some(&RequestId::Number(2)), "{m:?}");
    h.send_line(r#"{"jsonrpc":"2.0","id":3,"method":"release"}"#);
    let mut answers = Vec::new();
    for _ in 0..2 {
        let m = h.read().unwrap();
        answers.push((m.id().cloned(), serde_json::to_value(&m).unwrap()));
    }
    answers.sort_by_key(|(id, _)| format!("{id:?}"));
    assert_eq!(answers[0].0, Some(RequestId::Number(1)));
    assert_eq!(answers[0].1["result"]["released"], true);
    assert_eq!(answers[1].0, Some(RequestId::Number(3)));
    h.eof();
    h.result().unwrap();
}

#[test]
fn blocked_handles_are_bounded_by_max_threads() {
    // Two threads at most: one blocked in `wait`, one more that takes over the reading and
    // blocks in the second `wait`; nothing reads the third line until one returns.
    let mut h = start(Config::builder().max_threads(2).build(), false, false);
    h.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#);
    h.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"wait"}"#);
    h.echo(3, "late");
    // Releasing one lets its thread read on: the echo is answered after it.
    h.probe.release_tx.send(()).unwrap();
    let first = h.read().unwrap();
    assert!(
        matches!(first.id(), Some(RequestId::Number(1 | 2))),
        "a released wait answers first: {first:?}"
    );
    let second = h.read().unwrap();
    assert_eq!(second.id(), Some(&RequestId::Number(3)), "{second:?}");
    h.probe.release_tx.send(()).unwrap();
    assert!(h.read().is_some());
    h.eof();
    h.result().unwrap();
}

#[test]
fn handles_awaiting_the_client_beyond_max_threads_are_refused_and_reading_goes_on() {
    // Two threads may block in `handle` (and the one that called `serve_on`, once). When all
    // of them wait for the client, the next `await` finds nobody left to read while it would
    // wait: it is told so and answers at once, and reading goes on. Were it to wait, or the
    // reading to wait for a thread, nothing would read the `release`s they all wait for: a
    // deadlock that only their timeouts end.
    let mut h = start(Config::builder().max_threads(2).build(), false, false);
    h.output.get_ref().set_read_timeout(Some(WAIT)).unwrap();
    for id in 1..=4 {
        h.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"await"}}"#
        ));
    }
    h.echo(5, "read on");
    let refused = h.read().expect("the refused await's answer");
    assert_eq!(refused.id(), Some(&RequestId::Number(4)), "{refused:?}");
    let Message::Response(r) = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(r.result::<serde_json::Value>().unwrap()["refused"], true);
    let echoed = h.read().expect("the echo after it");
    assert_eq!(echoed.id(), Some(&RequestId::Number(5)), "{echoed:?}");
    // The client's releases are read, and the waiting ones end well.
    for id in 6..=8 {
        h.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"release"}}"#
        ));
    }
    let mut answers: Vec<i64> = (0..6)
        .map(|_| {
            let m = h.read().unwrap();
            let Message::Response(r) = &m else {
                panic!("{m:?}")
            };
            let n = match m.id() {
                Some(RequestId::Number(n)) => *n,
                other => panic!("{other:?}"),
            };
            if n < 6 {
                assert_eq!(
                    r.result::<serde_json::Value>().unwrap()["released"],
                    true,
                    "{m:?}"
                );
            }
            n
        })
        .collect();
    answers.sort_unstable();
    assert_eq!(answers, [1, 2, 3, 6, 7, 8]);
    h.eof();
    h.result().unwrap();
}

/// The id of an answer, and its result.
fn answered(m: &Message) -> (i64, serde_json::Value) {
    let Message::Response(r) = m else {
        panic!("{m:?}")
    };
    match &r.id {
        RequestId::Number(n) => (*n, r.result().unwrap()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_thread_that_serves_frees_no_worker_for_the_reading() {
    // One handler thread: the thread that called `serve_on` blocks in a `wait` (it will end
    // on its own, but its thread then returns to `serve_on`, not to the workers), one worker
    // awaits the client, and the reading, on the other worker, meets a second `await`. No
    // worker would ever come free for it: the `await` is refused and the reading goes on.
    let mut h = start(Config::builder().max_threads(1).build(), false, false);
    h.output.get_ref().set_read_timeout(Some(WAIT)).unwrap();
    h.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"wait","params":{"gate":"x"}}"#);
    h.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"await","params":{"gate":"a"}}"#);
    h.send_line(r#"{"jsonrpc":"2.0","id":3,"method":"await","params":{"gate":"b"}}"#);
    h.echo(4, "read on");
    assert_eq!(
        answered(&h.read().unwrap()),
        (3, serde_json::json!({"refused": true}))
    );
    assert_eq!(answered(&h.read().unwrap()).0, 4);
    h.probe.gates.open("x");
    h.send_line(r#"{"jsonrpc":"2.0","id":5,"method":"release","params":{"gate":"a"}}"#);
    let mut rest: Vec<_> = (0..3).map(|_| answered(&h.read().unwrap())).collect();
    rest.sort_by_key(|(id, _)| *id);
    assert_eq!(rest[0], (1, serde_json::json!({"released": true})));
    assert_eq!(rest[1], (2, serde_json::json!({"released": true})));
    assert_eq!(rest[2].0, 5);
    h.eof();
    h.result().unwrap();
}

#[test]
fn a_handler_may_not_become_the_last_one_to_await_the_client_while_the_reading_waits() {
    // One handler thread, two workers. The reading waits in the queue behind a handler that
    // will end on its own (`wait_then_await`'s first half) and one that awaits the client.
    // When the first turns to await the client too, nobody would be left to read its answer:
    // it is refused, its worker comes free, and the reading goes on.
    let mut h = start(Config::builder().max_threads(1).build(), false, false);
    h.output.get_ref().set_read_timeout(Some(WAIT)).unwrap();
    h.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"await","params":{"gate":"a"}}"#);
    h.send_line(
        r#"{"jsonrpc":"2.0","id":2,"method":"wait_then_await","params":{"gate":"b","then":"c"}}"#,
    );
    h.send_line(r#"{"jsonrpc":"2.0","id":3,"method":"await","params":{"gate":"d"}}"#);
    h.send_line(r#"{"jsonrpc":"2.0","id":4,"method":"release","params":{"gate":"a"}}"#);
    h.send_line(r#"{"jsonrpc":"2.0","id":5,"method":"release","params":{"gate":"d"}}"#);
    // Once `d` is awaited the reading waits for a worker (the releases are not read yet);
    // then `b` opens.
    while h.probe.waiting_rx.recv_timeout(WAIT).unwrap() != "d" {}
    h.probe.gates.open("b");
    let mut all: Vec<_> = (0..5).map(|_| answered(&h.read().unwrap())).collect();
    all.sort_by_key(|(id, _)| *id);
    assert_eq!(all[0], (1, serde_json::json!({"released": true})));
    assert_eq!(all[1], (2, serde_json::json!({"refused": "await"})));
    assert_eq!(all[2], (3, serde_json::json!({"released": true})));
    assert_eq!((all[3].0, all[4].0), (4, 5));
    h.eof();
    h.result().unwrap();
}

#[test]
fn answers_held_back_in_a_burst_go_out_before_a_blocking_handle() {
    let mut h = start(Config::default(), false, false);
    // One write with three requests: the first two answers may wait for the end of the
    // burst, but not for the blocked `wait` behind them.
    h.send_line(concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"b"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"wait"}"#
    ));
    assert_eq!(h.read().unwrap().id(), Some(&RequestId::Number(1)));
    assert_eq!(h.read().unwrap().id(), Some(&RequestId::Number(2)));
    h.probe.release_tx.send(()).unwrap();
    assert_eq!(h.read().unwrap().id(), Some(&RequestId::Number(3)));
    h.eof();
    h.result().unwrap();
}

/// The same when every worker is taken: the reading waits in the executor's queue (for as
/// long as a handler runs), and what its burst held back must not wait with it (an answer
/// computed at once was held for as long as the slowest handler ran).
#[test]
fn answers_held_back_in_a_burst_go_out_when_the_reading_waits_for_a_worker() {
    let mut h = start(Config::builder().max_threads(1).build(), false, false);
    h.send_line(concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"wait"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"wait"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":4,"method":"wait"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{"text":"b"}}"#
    ));
    // The waits block (on the serving thread and on every thread the executor has) with the
    // last echo still unread, and the reading is queued: the first echo's answer is out all
    // the same.
    assert_eq!(h.read().unwrap().id(), Some(&RequestId::Number(1)));
    for _ in 0..3 {
        h.probe.release_tx.send(()).unwrap();
    }
    // Each wait was released by the test (not timed out while the answer was held).
    let mut rest: Vec<(i64, serde_json::Value)> =
        (0..4).map(|_| answered(&h.read().unwrap())).collect();
    rest.sort_by_key(|(id, _)| *id);
    let ids: Vec<i64> = rest.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [2, 3, 4, 5]);
    for (id, result) in &rest[..3] {
        assert_eq!(result["released"], true, "wait {id}: {result}");
    }
    h.eof();
    h.result().unwrap();
}

/// Reads `n` messages and shuts the server down, checking that nothing more was written.
fn read_all_then_eof(h: &mut Harness, n: usize) -> Vec<Message> {
    let got: Vec<Message> = (0..n).map(|_| h.read().expect("an answer")).collect();
    h.eof();
    let extra: Vec<Message> = std::iter::from_fn(|| h.read()).collect();
    assert!(extra.is_empty(), "unexpected output: {extra:?}");
    h.result().unwrap();
    got
}

fn heard(m: &Message) -> Option<String> {
    match m {
        Message::Notification(n) if n.method == "heard" => {
            n.params_value()["method"].as_str().map(str::to_owned)
        }
        _ => None,
    }
}

#[test]
fn members_are_read_by_value() {
    let mut h = start(Config::default(), false, false);
    h.send_line(r#"{"jsonrpc":"\u0032.0","id":7,"method":"echo","params":{"text":"escaped"}}"#);
    h.send_line(r#"{"jsonrpc":"2\u002e0","method":"notifications/initialized"}"#);
    let integral = [
        ("-0", 0),
        ("1.0", 1),
        ("1e0", 1),
        ("1E2", 100),
        ("100e-2", 1),
    ];
    for (text, _) in integral {
        h.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#
        ));
    }
    let invalid = ["1.5", "1e400", "9223372036854775808", "true", "{}", "[1]"];
    for text in invalid {
        h.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#
        ));
    }
    let got = read_all_then_eof(&mut h, 2 + integral.len() + invalid.len());
    let Message::Response(r) = &got[0] else {
        panic!("expected the echo, got {:?}", got[0])
    };
    assert_eq!(r.id, RequestId::Number(7));
    assert_eq!(r.result::<serde_json::Value>().unwrap()["text"], "escaped");
    // The notification reached the session and was not answered.
    assert_eq!(heard(&got[1]).as_deref(), Some("notifications/initialized"));
    for (m, (text, n)) in got[2..].iter().zip(integral) {
        assert!(
            matches!(m, Message::Response(r) if r.id == RequestId::Number(n)),
            "{text}: {m:?}"
        );
        // Answered with the integer the id is.
        assert!(
            String::from_utf8(m.to_vec())
                .unwrap()
                .contains(&format!(r#""id":{n},"#))
        );
    }
    for (m, text) in got[2 + integral.len()..].iter().zip(invalid) {
        assert_eq!(error_code(m), (codes::INVALID_REQUEST, None), "{text}");
    }
}

#[test]
fn arrays_are_not_requests() {
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-03-26");
    // A batch of one positional array: one invalid element.
    h.send_line(r#"[["2.0",6,"echo",{"text":"positional"}]]"#);
    // A positional array alone is a batch of four invalid elements.
    h.send_line(r#"["2.0",6,"echo",{"text":"positional"}]"#);
    h.echo(8, "after");
    // Each batch's refusals come as one array.
    let one = h.read_batch();
    let four = h.read_batch();
    assert_eq!((one.len(), four.len()), (1, 4));
    for m in one.iter().chain(&four) {
        assert_eq!(error_code(m), (codes::INVALID_REQUEST, None));
    }
    // Nothing ran: the only answer with an id is the echo's.
    let got = read_all_then_eof(&mut h, 1);
    assert_eq!(got[0].id(), Some(&RequestId::Number(8)));
}

#[test]
fn invalid_notifications_are_never_answered() {
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-03-26");
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        r#"{"method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"n","result":{}}"#,
        r#"[{"jsonrpc":"2.0","method":"n","params":1},{"jsonrpc":"2.0","method":"batched"}]"#,
    ] {
        h.send_line(line);
    }
    // JSON-RPC 2.0's own example: the method is not a string, so this is no notification.
    h.send_line(r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#);
    h.echo(9, "after");
    let got = read_all_then_eof(&mut h, 3);
    assert_eq!(heard(&got[0]).as_deref(), Some("batched"));
    assert_eq!(error_code(&got[1]), (codes::INVALID_REQUEST, None));
    assert_eq!(got[2].id(), Some(&RequestId::Number(9)));
}

#[test]
fn invalid_responses_are_never_answered() {
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-03-26");
    // An error whose data nests past the parser's depth limit (valid JSON all the same).
    h.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":12345,"error":{{"code":1,"message":"m","data":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    ));
    for line in [
        r#"{"jsonrpc":"2.0","id":3,"error":[-32601,"no"]}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"1.0","id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"[{"jsonrpc":"2.0","id":true,"result":{}},{"jsonrpc":"2.0","method":"batched"}]"#,
    ] {
        h.send_line(line);
    }
    // Neither a request nor a response: answered.
    h.send_line(r#"{"jsonrpc":"2.0","id":7}"#);
    h.echo(9, "after");
    let got = read_all_then_eof(&mut h, 3);
    assert_eq!(heard(&got[0]).as_deref(), Some("batched"));
    assert_eq!(
        error_code(&got[1]),
        (codes::INVALID_REQUEST, Some(RequestId::Number(7)))
    );
    assert_eq!(got[2].id(), Some(&RequestId::Number(9)));
}

#[test]
fn a_batch_runs_the_first_of_duplicate_ids_and_refuses_the_others() {
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-03-26");
    h.send_line(concat!(
        r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"first"}},"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"second"}},"#,
        r#"{"jsonrpc":"2.0","id":"1","method":"echo","params":{"text":"string"}},"#,
        r#"{"jsonrpc":"2.0","id":1.0,"method":"echo","params":{"text":"third"}}]"#
    ));
    // The four answers come as one array.
    let got = h.read_batch();
    assert_eq!(got.len(), 4, "{got:?}");
    h.eof();
    h.result().unwrap();
    let mut texts = Vec::new();
    let mut refused = 0;
    for m in &got {
        match m {
            Message::Response(r) => {
                texts.push((
                    r.id.clone(),
                    r.result::<serde_json::Value>().unwrap()["text"].clone(),
                ));
            }
            Message::Error(e) => {
                assert_eq!(
                    (e.error.code, e.id.clone()),
                    (codes::INVALID_REQUEST, Some(RequestId::Number(1)))
                );
                assert!(e.error.message.contains("duplicate id 1 in batch"), "{e:?}");
                refused += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    texts.sort_by_key(|(id, _)| format!("{id:?}"));
    assert_eq!(
        texts,
        vec![
            (RequestId::Number(1), serde_json::json!("first")),
            (RequestId::from("1"), serde_json::json!("string")),
        ]
    );
    assert_eq!(refused, 2);
}

/// What the test service sends for one input item, as the randomized test compares it.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Answer {
    Result(RequestId),
    Error(Option<RequestId>, i64),
    Heard(String),
}

fn answer_of(m: &Message) -> Answer {
    match m {
        Message::Response(r) => Answer::Result(r.id.clone()),
        Message::Error(e) => Answer::Error(e.id.clone(), e.error.code),
        m => Answer::Heard(heard(m).unwrap_or_else(|| panic!("unexpected {m:?}"))),
    }
}

/// What the server must send for one item its framing reads: exactly one answer per request
/// (with its id) and per invalid message that is not a notification, one `heard` per
/// notification (the session got it), nothing for anything else.
fn expected_answer(item: Result<Message, mcp_stdio::FrameError>) -> Option<Answer> {
    use mcp_stdio::FrameError;
    match item {
        Ok(Message::Request(r)) => Some(match r.method.as_str() {
            "echo" | "ping" | "initialize" => Answer::Result(r.id),
            _ => Answer::Error(Some(r.id), codes::METHOD_NOT_FOUND),
        }),
        Ok(Message::Notification(n)) => Some(Answer::Heard(n.method)),
        Ok(_) => None,
        Err(FrameError::Decode(e)) if !e.is_answered() => None,
        Err(FrameError::Decode(e)) => Some(Answer::Error(e.id, e.error.code)),
        // A request is refused by its id, anything else by none.
        Err(FrameError::TooLarge { id, method, .. }) => {
            Some(Answer::Error(id.filter(|_| method), codes::INVALID_REQUEST))
        }
        Err(e) => panic!("reading bytes from memory failed: {e}"),
    }
}

/// Randomized, seeded (`MCP_FUZZ_SEED` replays a run; the seed is printed on failure;
/// `MCP_FUZZ_ROUNDS` changes the length): rounds of hostile lines over the real server, each
/// followed by a plain ping. Every request with a readable id gets exactly one well-formed
/// answer with that id, invalid notifications and responses get none, and the server keeps
/// answering.
#[test]
fn hostile_lines_get_exactly_their_answers() {
    use wire_fuzz_support::{Rng, SeedGuard, book_payload, codec_kind, line, seed};

    const MAX_LINE: usize = 64 * 1024;
    let seed = seed();
    let mut guard = SeedGuard::new("stdio hostile_lines", seed);
    let mut rng = Rng::new(seed);
    let rounds: usize = std::env::var("MCP_FUZZ_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let mut h = start(
        Config::builder().max_line_len(MAX_LINE).build(),
        false,
        false,
    );
    // A missing answer fails the test instead of hanging it.
    h.output.get_ref().set_read_timeout(Some(WAIT)).unwrap();
    // The revision with batches, so the server judges them as a reader of no session does.
    h.initialize("2025-03-26");
    for round in 0..rounds {
        let lines: Vec<_> = (0..=rng.below(6)).map(|_| line(&mut rng)).collect();
        let mut payload = Vec::new();
        for l in &lines {
            payload.extend_from_slice(&l.bytes);
            payload.push(b'\n');
            // Where the book can judge a line, the transport's framing must agree with it.
            if l.pristine && l.bytes.len() <= MAX_LINE {
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&l.bytes) {
                    if let Some(book) = book_payload(&v) {
                        let framed: Vec<_> = mcp_stdio::MessageReader::new(&l.bytes[..])
                            .with_max_line_len(MAX_LINE)
                            .with_batches(true)
                            .map(|item| match item {
                                Ok(m) => codec_kind(&Ok(m)),
                                Err(mcp_stdio::FrameError::Decode(e)) => codec_kind(&Err(e)),
                                Err(e) => panic!("{e}"),
                            })
                            .collect();
                        assert_eq!(framed, book, "round {round}");
                    }
                }
            }
        }
        let ping = RequestId::from(format!("ping-{round}"));
        payload.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","id":"ping-{round}","method":"ping"}}"#).as_bytes(),
        );
        payload.push(b'\n');
        let mut expected: Vec<Answer> = mcp_stdio::MessageReader::new(&payload[..])
            .with_max_line_len(MAX_LINE)
            .with_batches(true)
            .filter_map(expected_answer)
            .collect();
        assert!(expected.contains(&Answer::Result(ping)));
        guard.current.clone_from(&payload);
        // Written by another thread: long echoes may fill the output before the input is all
        // written, and the server stops reading while its answers cannot go out.
        let mut input = h.input.try_clone().unwrap();
        let writing = thread::spawn(move || input.write_all(&payload));
        let mut got: Vec<Answer> = Vec::new();
        while got.len() < expected.len() {
            let line = h.read_any().expect("the server answers");
            got.extend(line.iter().map(answer_of));
        }
        writing.join().unwrap().unwrap();
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "round {round}");
    }
    // Nothing more than expected was sent.
    let extra = read_all_then_eof(&mut h, 0);
    assert!(extra.is_empty());
}

#[test]
fn the_writer_starts_when_every_worker_is_blocked_in_a_handler() {
    // Every thread the reading may use is blocked in a `wait`, but for the one reading on,
    // when several senders at once make messages queue: the writer must still start (it
    // needs no worker), or the queued messages are never written and serving ends.
    let max = 2;
    let waits = max + 1;
    let mut h = start(Config::builder().max_threads(max).build(), false, false);
    // A lost writer shows as silence: fail then, rather than wait for ever.
    h.output.get_ref().set_read_timeout(Some(WAIT)).unwrap();
    for id in 1..=waits as i64 {
        h.send_line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"wait"}}"#));
    }
    h.send_line(r#"{"jsonrpc":"2.0","id":100,"method":"threads"}"#);
    // The four senders' 1,200 notifications, every one of them, while the waits still block.
    let mut seen = std::collections::HashSet::new();
    while seen.len() < 1200 {
        let m = h.read().expect("the senders' notifications");
        if let Message::Notification(n) = &m {
            let p = n.params_value();
            seen.insert((p["t"].as_u64().unwrap(), p["i"].as_u64().unwrap()));
        }
    }
    for _ in 1..=waits {
        h.probe.release_tx.send(()).unwrap();
    }
    let mut answered: Vec<RequestId> = (1..=waits)
        .map(|_| h.read().unwrap().id().cloned().unwrap())
        .collect();
    answered.sort_by_key(|id| format!("{id:?}"));
    let expected: Vec<RequestId> = (1..=waits as i64).map(RequestId::Number).collect();
    assert_eq!(answered, expected);
    h.eof();
    h.result().unwrap();
}

/// A single request reusing an id a batch still owes (a protocol error, which a server
/// answers at once) gets its answer on a line of its own, and the batch its own answer.
#[test]
fn a_single_request_reusing_an_id_a_batch_owes_is_answered_alone() {
    let mut h = start(Config::default(), false, false);
    h.initialize("2025-03-26");
    h.send_line(concat!(
        r#"[{"jsonrpc":"2.0","id":1,"method":"wait","params":{"gate":"g"}},"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"two"}}]"#
    ));
    assert_eq!(h.probe.waiting_rx.recv_timeout(WAIT).unwrap(), "g");
    // Answered at once (the echo service takes any id): alone, not in the batch's array.
    h.echo(1, "again");
    let alone = h.read_any().unwrap();
    assert_eq!(alone.len(), 1, "{alone:?}");
    let Message::Response(r) = &alone[0] else {
        panic!("{alone:?}")
    };
    assert_eq!(r.id, RequestId::Number(1));
    assert_eq!(r.result::<serde_json::Value>().unwrap()["text"], "again");
    // The batch's own answer to id 1 comes in its array, with id 2's.
    h.probe.gates.open("g");
    let got = h.read_batch();
    assert_eq!(got.len(), 2, "{got:?}");
    let released = got
        .iter()
        .find_map(|m| match m {
            Message::Response(r) if r.id == RequestId::Number(1) => {
                Some(r.result::<serde_json::Value>().unwrap())
            }
            _ => None,
        })
        .expect("id 1's answer in the batch");
    assert_eq!(released["released"], true);
    h.eof();
    h.result().unwrap();
}
