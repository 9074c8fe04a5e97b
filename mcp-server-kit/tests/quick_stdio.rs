//! Handlers declared quick (`ServerBuilder::quick_handlers`) run on the stdio reader and are
//! listed for cancellation only once they block. One that blocks after all must still be
//! cancellable by what is read meanwhile, and closed with the session: served by the real
//! stdio transport (`serve_on`) over a socket pair.
#![cfg(unix)]

use std::sync::mpsc::{Receiver, sync_channel};

use common::WAIT;
use common::stdio::Client;
use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
use serde_json::json;

mod common;

/// The server served over stdio, the handshake done.
fn start(server: Server) -> Client {
    let mut c = Client::start(server);
    c.initialize();
    c
}

/// A quick tool that blocks until cancelled, reporting whether it was.
fn blocking_server() -> (Server, Receiver<bool>) {
    let (started_tx, started) = sync_channel(4);
    let tool = Tool::new("wait", move |_: NoArgs, ctx: &Context| {
        let cancelled = ctx.wait_cancelled(WAIT * 2);
        started_tx.send(cancelled).unwrap();
        Ok::<_, Error>("waited")
    });
    let server = Server::builder("t", "1")
        .tool(tool)
        .quick_handlers(true)
        .build()
        .unwrap();
    (server, started)
}

#[test]
fn a_quick_handler_that_blocks_is_cancelled_by_what_is_read_meanwhile() {
    let (server, woke) = blocking_server();
    let mut c = start(server);
    // Quick calls that never block go in and out first.
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert_eq!(c.next()["id"], 1);
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                  "params": {"name": "wait"}}));
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 5}}),
    );
    assert_eq!(
        woke.recv_timeout(WAIT),
        Ok(true),
        "the cancellation reached the handler"
    );
    // A cancelled request gets no answer: the next line is the ping's.
    c.send(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}));
    assert_eq!(c.next()["id"], 6);
    c.close_input();
    c.served.recv_timeout(WAIT).unwrap().unwrap();
}

#[test]
fn a_quick_handler_that_blocks_is_cancelled_when_the_session_closes() {
    let (server, woke) = blocking_server();
    let mut c = start(server);
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                  "params": {"name": "wait"}}));
    // A ping answered means the reading went on past the blocked call.
    c.send(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}));
    assert_eq!(c.next()["id"], 6);
    c.close_input();
    assert_eq!(woke.recv_timeout(WAIT), Ok(true), "closing cancelled it");
    c.served.recv_timeout(WAIT).unwrap().unwrap();
}
