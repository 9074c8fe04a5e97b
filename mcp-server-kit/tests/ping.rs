//! Server pings (issue 20): with `ServerBuilder::ping_every`, a stdio client that answers the
//! server's pings keeps its session, and one that stops answering (while its pipes stay
//! open: a hung host) ends it: `serve_on` returns `Error::SessionEnded`. Off by default.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, sync_channel};
use std::time::Duration;

use mcp_server_kit::Server;
use serde_json::{Value, json};

/// A safety net for each wait on the server; no test sleeps.
const WAIT: Duration = Duration::from_secs(10);

struct Client {
    input: UnixStream,
    output: BufReader<UnixStream>,
    /// The result of `serve_on`, once it returns.
    served: Receiver<Result<(), mcp_stdio::Error>>,
}

impl Client {
    fn start(server: Server) -> Client {
        let (ours, theirs) = UnixStream::pair().unwrap();
        ours.set_read_timeout(Some(WAIT)).unwrap();
        let (tx, served) = sync_channel(1);
        let reader = theirs.try_clone().unwrap();
        std::thread::spawn(move || {
            let r = mcp_stdio::serve_on(reader, theirs, server, &mcp_stdio::Config::default());
            let _ = tx.send(r);
        });
        let output = BufReader::new(ours.try_clone().unwrap());
        Client {
            input: ours,
            output,
            served,
        }
    }

    fn send(&mut self, v: Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.input.write_all(line.as_bytes()).unwrap();
    }

    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.output.read_line(&mut line).expect("a line in time");
        serde_json::from_str(&line).unwrap()
    }

    fn initialize(&mut self) {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}),
        );
        loop {
            let v = self.next();
            if v["id"] == 0 && v.get("method").is_none() {
                break;
            }
        }
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// The next ping from the server.
    fn ping(&mut self) -> Value {
        loop {
            let v = self.next();
            if v["method"] == "ping" {
                return v;
            }
        }
    }
}

#[test]
fn a_stdio_client_that_stops_answering_pings_ends_the_session() {
    let server = Server::builder("t", "1")
        .ping_every(Duration::from_millis(50), 3)
        .build()
        .unwrap();
    let mut c = Client::start(server);
    c.initialize();
    // Five pings answered: the session goes on (three would have to be missed in a row).
    for _ in 0..5 {
        let p = c.ping();
        c.send(json!({"jsonrpc": "2.0", "id": p["id"], "result": {}}));
    }
    assert!(c.served.try_recv().is_err(), "the session ended early");
    // A request still works: the session is alive.
    c.send(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    loop {
        let v = c.next();
        if v["id"] == 7 && v.get("method").is_none() {
            break;
        }
        assert_eq!(v["method"], "ping", "{v}");
    }
    // Then the client hangs: its pipes stay open, it answers nothing more.
    let r = c.served.recv_timeout(WAIT).expect("serving ended");
    match r {
        Err(mcp_stdio::Error::SessionEnded { reason }) => {
            assert!(reason.contains("3 pings"), "{reason}");
        }
        other => panic!("expected SessionEnded, got {other:?}"),
    }
}

#[test]
fn no_pings_by_default() {
    let server = Server::builder("t", "1").build().unwrap();
    let mut c = Client::start(server);
    c.initialize();
    // A request of ours is answered, and nothing came before its answer.
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    let v = c.next();
    assert_eq!(v["id"], 1, "{v}");
    assert!(v.get("method").is_none(), "{v}");
    // EOF on the server's input (the read half is a clone of the same socket).
    c.input.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(c.served.recv_timeout(WAIT).unwrap().is_ok());
}
