//! Handlers that block on their cancellation (`Context::wait_cancelled`,
//! `Context::cancelled_signal`) wake when the client cancels, over a real socket pair: a small
//! line transport in the test reads the client's lines and hands them to the kit's session,
//! noting when it read the cancellation, and the handler notes when it woke.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mcp_core::jsonrpc::{Message, RequestId, decode};
use mcp_core::service::{Closed, Outbound, Service, SessionInfo, TransportKind};
use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

/// The server's side of the socket, one JSON line per message.
struct Lines(Mutex<UnixStream>);

impl Outbound for Lines {
    fn send(&self, msg: Message, _: Option<&RequestId>) -> Result<(), Closed> {
        let mut s = self.0.lock().unwrap();
        let mut line = msg.to_vec();
        line.push(b'\n');
        s.write_all(&line).map_err(|_| Closed)
    }
}

/// Serves `server` on `sock` (as a stdio transport would, the session being told nothing may
/// block in `handle`); reports the instant each `notifications/cancelled` was read.
fn serve(server: Server, sock: UnixStream) -> Receiver<Instant> {
    let (cancel_read_tx, cancel_read_rx) = sync_channel(4);
    let out = Arc::new(Lines(Mutex::new(sock.try_clone().unwrap())));
    let session = server.open(SessionInfo::new(TransportKind::Stdio), out);
    thread::spawn(move || {
        for line in BufReader::new(sock).lines() {
            let Ok(line) = line else { break };
            let msg = decode(line.as_bytes()).unwrap();
            if msg.method() == Some("notifications/cancelled") {
                let _ = cancel_read_tx.try_send(Instant::now());
            }
            session.handle(msg);
        }
        session.close();
    });
    cancel_read_rx
}

struct Client {
    w: UnixStream,
    r: BufReader<UnixStream>,
}

impl Client {
    fn send(&mut self, v: Value) {
        let mut line = v.to_string().into_bytes();
        line.push(b'\n');
        self.w.write_all(&line).unwrap();
    }

    fn response(&mut self, id: i64) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.r.read_line(&mut line).unwrap() > 0, "server closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                return v;
            }
        }
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }
}

fn start(tool: Tool) -> (Client, Receiver<Instant>) {
    let server = Server::builder("t", "1").tool(tool).build().unwrap();
    let (client, srv) = UnixStream::pair().unwrap();
    client.set_read_timeout(Some(WAIT)).unwrap();
    let cancel_read = serve(server, srv);
    let mut c = Client {
        w: client.try_clone().unwrap(),
        r: BufReader::new(client),
    };
    let init = c.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    (c, cancel_read)
}

fn cancel(c: &mut Client, id: i64) {
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": id, "reason": "user"}}),
    );
}

#[test]
fn a_handler_waiting_on_its_cancellation_wakes_within_10ms_of_the_cancel() {
    let (started_tx, started_rx) = sync_channel::<()>(1);
    let (woke_tx, woke_rx) = sync_channel::<(bool, Instant)>(1);
    let tool = Tool::new("block", move |_: NoArgs, ctx: &Context| {
        started_tx.send(()).unwrap();
        let cancelled = ctx.wait_cancelled(Duration::from_secs(30));
        woke_tx.send((cancelled, Instant::now())).unwrap();
        Ok::<_, Error>("not cancelled")
    });
    let (mut c, cancel_read) = start(tool);
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                  "params": {"name": "block"}}));
    started_rx.recv_timeout(WAIT).unwrap();
    // The server keeps answering while the handler blocks.
    assert_eq!(c.request(6, "ping", json!({}))["result"], json!({}));
    cancel(&mut c, 5);
    let read_at = cancel_read.recv_timeout(WAIT).unwrap();
    let (cancelled, woke_at) = woke_rx.recv_timeout(WAIT).unwrap();
    assert!(cancelled, "wait_cancelled reports the cancellation");
    let after = woke_at.saturating_duration_since(read_at);
    assert!(
        after < Duration::from_millis(10),
        "woke {after:?} after the cancel"
    );
    assert_eq!(c.request(7, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_handler_selecting_on_its_cancellation_signal_wakes_on_cancel() {
    let (started_tx, started_rx) = sync_channel::<()>(1);
    let (woke_tx, woke_rx) = sync_channel::<(bool, Instant)>(1);
    // The handler's own work never arrives; only the cancellation ends the select.
    let (_work_tx, work_rx) = crossbeam_channel::bounded::<u32>(1);
    let tool = Tool::new("select", move |_: NoArgs, ctx: &Context| {
        let signal = ctx.cancelled_signal();
        started_tx.send(()).unwrap();
        let cancelled = crossbeam_channel::select! {
            recv(work_rx) -> _ => false,
            recv(signal) -> _ => true,
            default(Duration::from_secs(30)) => false,
        };
        woke_tx
            .send((cancelled && ctx.is_cancelled(), Instant::now()))
            .unwrap();
        Ok::<_, Error>("not cancelled")
    });
    let (mut c, cancel_read) = start(tool);
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                  "params": {"name": "select"}}));
    started_rx.recv_timeout(WAIT).unwrap();
    cancel(&mut c, 5);
    let read_at = cancel_read.recv_timeout(WAIT).unwrap();
    let (cancelled, woke_at) = woke_rx.recv_timeout(WAIT).unwrap();
    assert!(cancelled, "the signal fired, and is_cancelled agrees");
    let after = woke_at.saturating_duration_since(read_at);
    assert!(
        after < Duration::from_millis(10),
        "woke {after:?} after the cancel"
    );
}

#[test]
fn wait_cancelled_times_out_false_when_nobody_cancels() {
    let (tx, rx) = sync_channel::<bool>(1);
    let tool = Tool::new("short", move |_: NoArgs, ctx: &Context| {
        tx.send(ctx.wait_cancelled(Duration::from_millis(1)))
            .unwrap();
        Ok::<_, Error>("done")
    });
    let (mut c, _) = start(tool);
    let r = c.request(5, "tools/call", json!({"name": "short"}));
    assert_eq!(r["result"]["content"][0]["text"], "done");
    assert_eq!(rx.recv_timeout(WAIT), Ok(false));
}

/// Counts `will_block` calls, and hands every message to a channel.
struct Announcing {
    blocks: Mutex<std::sync::mpsc::Sender<&'static str>>,
}

impl Outbound for Announcing {
    fn send(&self, _: Message, _: Option<&RequestId>) -> Result<(), Closed> {
        Ok(())
    }
    fn will_block(&self) -> bool {
        let _ = self.blocks.lock().unwrap().send("will_block");
        true
    }
}

/// A session of `server` over `transport` whose `handle` may block (handlers run inline),
/// its handshake done; `will_block` calls are reported on `blocks`.
fn open_inline(
    server: &Server,
    transport: TransportKind,
    blocks: std::sync::mpsc::Sender<&'static str>,
) -> Arc<dyn mcp_core::service::Session> {
    let out = Arc::new(Announcing {
        blocks: Mutex::new(blocks),
    });
    let s = server.open(SessionInfo::new(transport).with_blocking_handle(), out);
    let send = |v: Value| s.handle(decode(v.to_string().as_bytes()).unwrap());
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "1"}}}));
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s
}

/// Runs one `tools/call` inline (a transport that lets `handle` block) of the tool `make`
/// builds around a sender, and returns what the handler and the outbound reported, in order.
fn inline_call(
    quick: bool,
    make: impl FnOnce(std::sync::mpsc::Sender<&'static str>) -> Tool,
) -> Vec<&'static str> {
    let (tx, rx) = std::sync::mpsc::channel();
    let server = Server::builder("t", "1")
        .tool(make(tx.clone()))
        .quick_handlers(quick)
        .build()
        .unwrap();
    let s = open_inline(&server, TransportKind::Memory, tx.clone());
    let send = |v: Value| s.handle(decode(v.to_string().as_bytes()).unwrap());
    tx.send("call").unwrap();
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "t"}}));
    drop(tx);
    // `handle` returned: the handler ran inline and everything it reported is in.
    rx.try_iter().collect()
}

#[test]
fn inline_handlers_announce_their_block_unless_declared_quick() {
    for (quick, wait, expected) in [
        (false, false, vec!["call", "will_block", "handler"]),
        (true, false, vec!["call", "handler"]),
        (true, true, vec!["call", "handler", "will_block"]),
    ] {
        let got = inline_call(quick, |tx| {
            let tx = Mutex::new(tx);
            Tool::new("t", move |_: NoArgs, ctx: &Context| {
                tx.lock().unwrap().send("handler").unwrap();
                if wait {
                    ctx.wait_cancelled(Duration::from_millis(1));
                }
                Ok::<_, Error>("done")
            })
        });
        assert_eq!(got, expected, "quick {quick}, wait {wait}");
    }
}

/// Over HTTP another connection may carry a cancellation while a quick handler runs on its
/// own connection's thread: the call is listed from the start, and the cancellation reaches it.
#[test]
fn a_quick_handler_over_http_sees_a_cancellation_from_another_connection() {
    let (started_tx, started_rx) = sync_channel(1);
    let (seen_tx, seen_rx) = sync_channel(1);
    let tool = Tool::new("spin", move |_: NoArgs, ctx: &Context| {
        started_tx.send(()).unwrap();
        let until = Instant::now() + WAIT;
        // A quick handler polls; it never announces a block.
        while !ctx.is_cancelled() && Instant::now() < until {
            std::hint::spin_loop();
        }
        seen_tx.send(ctx.is_cancelled()).unwrap();
        Ok::<_, Error>("done")
    });
    let server = Server::builder("t", "1")
        .tool(tool)
        .quick_handlers(true)
        .build()
        .unwrap();
    let (tx, _rx) = std::sync::mpsc::channel();
    let s = open_inline(&server, TransportKind::StreamableHttp, tx);
    let send = |v: Value| s.handle(decode(v.to_string().as_bytes()).unwrap());
    let caller = {
        let s = s.clone();
        thread::spawn(move || {
            s.handle(
                decode(
                    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "spin"}})
                    .to_string()
                    .as_bytes(),
                )
                .unwrap(),
            );
        })
    };
    started_rx.recv_timeout(WAIT).unwrap();
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1}}),
    );
    assert_eq!(seen_rx.recv_timeout(WAIT * 2), Ok(true));
    caller.join().unwrap();
}
