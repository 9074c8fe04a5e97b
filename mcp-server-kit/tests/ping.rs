//! Server pings (issue 20): with `ServerBuilder::ping_every`, a stdio client that answers the
//! server's pings keeps its session, and one that stops answering (while its pipes stay
//! open: a hung host) ends it: `serve_on` returns `Error::SessionEnded`. Off by default.
#![cfg(unix)]

use std::time::Duration;

use common::WAIT;
use common::stdio::Client;
use mcp_server_kit::Server;
use serde_json::{Value, json};

mod common;

/// The next ping from the server.
fn ping(c: &mut Client) -> Value {
    loop {
        let v = c.next();
        if v["method"] == "ping" {
            return v;
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
        let p = ping(&mut c);
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
    c.close_input();
    assert!(c.served.recv_timeout(WAIT).unwrap().is_ok());
}
