//! A session that serves some lines from their text (`Session::handle_line`): the stdio server
//! offers each single-object line first, hands what the session declines to `handle` decoded,
//! and keeps reading while a line's handler blocks.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{Message, RequestView, Response};
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use mcp_stdio::{Config, serve_on};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

struct Lines {
    release: (Sender<()>, Receiver<()>),
}

struct LinesSession {
    out: Arc<dyn Outbound>,
    release: (Sender<()>, Receiver<()>),
    /// The lines offered, in order.
    offered: Mutex<Vec<String>>,
}

impl Service for Lines {
    fn open(&self, _info: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        Arc::new(LinesSession {
            out,
            release: self.release.clone(),
            offered: Mutex::default(),
        })
    }
}

impl LinesSession {
    fn answer(&self, id: &mcp_core::jsonrpc::RequestId, result: Value) {
        let msg = Response::new(id.clone(), &result).unwrap().into();
        let _ = self.out.send(msg, Some(id));
    }
}

impl Session for LinesSession {
    fn handle_line(&self, line: &str) -> bool {
        self.offered.lock().unwrap().push(line.to_owned());
        let Some(view) = RequestView::read(line) else {
            return false;
        };
        match view.method {
            "fast" => {
                let params = view.params.unwrap_or("null");
                self.answer(&view.id, json!({ "via": "line", "params": params }));
                true
            }
            "block" => {
                // As a slow handler does: the reading goes to another thread first.
                assert!(self.out.will_block());
                self.release.1.recv_timeout(WAIT).unwrap();
                self.answer(&view.id, json!({ "via": "line" }));
                true
            }
            _ => false,
        }
    }

    fn handle(&self, msg: Message) {
        let Message::Request(r) = msg else { return };
        let offered = self.offered.lock().unwrap().len();
        self.answer(
            &r.id,
            json!({ "via": "message", "method": r.method, "params": r.params_value(), "offered": offered }),
        );
        // After its own answer, so that the blocked line's answer comes second.
        if r.method == "release" {
            self.release.0.send(()).unwrap();
        }
    }

    fn close(&self) {}
}

struct Client {
    input: UnixStream,
    output: BufReader<UnixStream>,
}

impl Client {
    fn start() -> Client {
        let (client_in, server_in) = UnixStream::pair().unwrap();
        let (server_out, client_out) = UnixStream::pair().unwrap();
        client_out.set_read_timeout(Some(WAIT)).unwrap();
        let service = Lines {
            release: bounded(1),
        };
        thread::spawn(move || serve_on(server_in, server_out, service, &Config::default()));
        Client {
            input: client_in,
            output: BufReader::new(client_out),
        }
    }

    fn send(&mut self, line: &[u8]) {
        self.input.write_all(line).unwrap();
        self.input.write_all(b"\n").unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

#[test]
fn lines_the_session_serves_never_reach_handle_and_the_rest_arrive_decoded() {
    let mut c = Client::start();
    c.send(br#"{"jsonrpc":"2.0","id":1,"method":"fast","params":{"a":[1,{"b":"c"}]}}"#);
    let a = c.read();
    assert_eq!(a["id"], 1);
    assert_eq!(a["result"]["via"], "line");
    assert_eq!(a["result"]["params"], r#"{"a":[1,{"b":"c"}]}"#);

    // Declined by the session: the same message reaches `handle`, decoded (escapes and all).
    c.send(br#"{"jsonrpc":"2.0","id":2,"method":"slow","params":{"x":"\u00e9"}}"#);
    let a = c.read();
    assert_eq!(a["id"], 2);
    assert_eq!(a["result"]["via"], "message");
    assert_eq!(a["result"]["method"], "slow");
    assert_eq!(a["result"]["params"], json!({ "x": "é" }));
    assert_eq!(a["result"]["offered"], 2);

    // Not of the usual shape for the view: decoded, though its method is `fast`.
    c.send(br#"{"jsonrpc":"2.0","id":3,"method":"f\u0061st"}"#);
    let a = c.read();
    assert_eq!(a["result"]["via"], "message");
    assert_eq!(a["result"]["method"], "fast");

    // Invalid UTF-8 is never offered: the parse error is the transport's.
    c.send(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"fast\",\"params\":{\"a\":\"\xff\"}}");
    let a = c.read();
    assert_eq!(a["error"]["code"], -32700);
    // Neither is a batch (refused whole in this revision) nor a blank line.
    c.send(br#"[{"jsonrpc":"2.0","id":5,"method":"fast"}]"#);
    let a = c.read();
    assert_eq!(a["error"]["code"], -32600);
    c.send(b"   ");
    c.send(br#"{"jsonrpc":"2.0","id":6,"method":"count"}"#);
    let a = c.read();
    assert_eq!(a["id"], 6);
    // fast, slow, f\u0061st, count: four offered.
    assert_eq!(a["result"]["offered"], 4);
}

#[test]
fn a_line_whose_handler_blocks_leaves_the_reading_to_another_thread() {
    let mut c = Client::start();
    c.send(br#"{"jsonrpc":"2.0","id":1,"method":"block"}"#);
    // Read and answered while `block` waits: the reading went on elsewhere.
    c.send(br#"{"jsonrpc":"2.0","id":2,"method":"release"}"#);
    let first = c.read();
    assert_eq!(first["id"], 2);
    assert_eq!(first["result"]["via"], "message");
    let second = c.read();
    assert_eq!(second["id"], 1);
    assert_eq!(second["result"]["via"], "line");
    // And the reading carries on after the handler returned.
    c.send(br#"{"jsonrpc":"2.0","id":3,"method":"fast"}"#);
    assert_eq!(c.read()["id"], 3);
}
