//! Handlers declared quick (`ServerBuilder::quick_handlers`) run on the stdio reader and are
//! listed for cancellation only once they block. One that blocks after all must still be
//! cancellable by what is read meanwhile, and closed with the session; and however many
//! handlers wait for the client, quick or not, the reading never stops: served by the real
//! stdio transport (`serve_on`) over a socket pair.
#![cfg(unix)]

use std::sync::mpsc::{Receiver, sync_channel};

use mcp_core::jsonrpc::codes;
use mcp_core::types::CreateMessageRequestParams;

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

/// A server whose one tool asks the client's model (sampling) and waits for the answer.
fn sampling_server(quick: bool) -> Server {
    let tool = Tool::new("ask", |_: NoArgs, ctx: &Context| {
        let params: CreateMessageRequestParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10
        }))
        .unwrap();
        ctx.sample(params)?;
        Ok::<_, Error>("answered")
    });
    Server::builder("t", "1")
        .tool(tool)
        .quick_handlers(quick)
        .build()
        .unwrap()
}

/// More calls waiting for the client's answers than the transport has threads: each is asked
/// (and then answered) or refused busy at once, and the reading goes on, so every answer the
/// client gives is read. Were the reading to wait for a thread, the asking handlers would
/// wait for answers nobody reads, until their timeouts (60 s).
fn calls_beyond_the_threads_are_refused_busy(quick: bool) {
    let max = 2;
    let calls = 6;
    let config = mcp_stdio::Config::builder().max_threads(max).build();
    let mut c = Client::start_with(sampling_server(quick), config);
    c.initialize_with(json!({"sampling": {}}));
    for id in 1..=calls {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "ask"}}));
    }
    // Every call is asked or refused before any answer is given.
    let (mut asked, mut busy) = (Vec::new(), 0);
    while asked.len() + busy < calls {
        let m = c.next();
        if m["method"] == "sampling/createMessage" {
            asked.push(m["id"].clone());
        } else {
            assert_eq!(m["error"]["code"], codes::SERVER_BUSY, "{m}");
            busy += 1;
        }
    }
    assert!(asked.len() >= max, "{} asked", asked.len());
    assert!(busy >= 1, "none refused");
    for id in &asked {
        c.send(json!({"jsonrpc": "2.0", "id": id, "result": {
            "role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}}));
    }
    for _ in 0..asked.len() {
        let m = c.next();
        assert_eq!(m["result"]["content"][0]["text"], "answered", "{m}");
    }
    c.send(json!({"jsonrpc": "2.0", "id": 100, "method": "ping"}));
    assert_eq!(c.next()["id"], 100);
    c.close_input();
    c.served.recv_timeout(WAIT).unwrap().unwrap();
}

#[test]
fn handlers_beyond_the_threads_are_refused_busy_and_the_reading_goes_on() {
    calls_beyond_the_threads_are_refused_busy(false);
}

#[test]
fn quick_handlers_beyond_the_threads_are_refused_busy_and_the_reading_goes_on() {
    calls_beyond_the_threads_are_refused_busy(true);
}

/// A request read before the end of input is answered even when its handler returns after
/// the session closed (JSON-RPC: every request gets its response): the outbound stays until
/// the last one is, and serving then ends at once. (Such answers were lost, a few in a
/// thousand pipelined requests.)
#[test]
fn an_answer_computed_after_the_end_of_input_still_goes_out() {
    let (woke_tx, woke) = sync_channel(4);
    let tool = Tool::new("late", move |_: NoArgs, ctx: &Context| {
        // Returns only once the session closed (which cancels it), with its answer anyway.
        let closed = ctx.wait_cancelled(WAIT * 2);
        woke_tx.send(closed).unwrap();
        Ok::<_, Error>("finished")
    });
    let server = Server::builder("t", "1").tool(tool).build().unwrap();
    let mut c = start(server);
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                  "params": {"name": "late"}}));
    c.send(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}));
    assert_eq!(c.next()["id"], 6);
    c.close_input();
    assert_eq!(woke.recv_timeout(WAIT), Ok(true), "closing woke it");
    let answer = c.next();
    assert_eq!(answer["id"], 5, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "finished",
        "{answer}"
    );
    c.served.recv_timeout(WAIT).unwrap().unwrap();
}
