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

/// A server whose one tool waits for its cancellation (`Context::wait_cancelled`, or a select
/// on `Context::cancelled_signal`), reporting on `woke` whether it was cancelled.
fn cancel_waiting_server(quick: bool, signal: bool) -> (Server, Receiver<bool>) {
    let (woke_tx, woke) = sync_channel(64);
    let tool = Tool::new("wait", move |_: NoArgs, ctx: &Context| {
        let cancelled = if signal {
            // Nothing is ever sent: the receiver disconnects at the cancellation.
            let r = ctx.cancelled_signal().recv_timeout(WAIT * 3);
            r == Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        } else {
            ctx.wait_cancelled(WAIT * 3)
        };
        woke_tx.send(cancelled).unwrap();
        if cancelled {
            return Err(Error::Cancelled);
        }
        Ok::<_, Error>("waited")
    });
    let server = Server::builder("t", "1")
        .tool(tool)
        .quick_handlers(quick)
        .build()
        .unwrap();
    (server, woke)
}

/// More calls waiting for their cancellation than the transport has threads, then every one
/// cancelled and a ping: each call waits (and is cancelled, unanswered) or is refused busy at
/// once, and the reading goes on, so the cancellations and the ping are read at once. Were
/// the reading to wait for a thread (or a handler to wait although nobody could read), every
/// handler would wait out its timeout (30 s here, 60 s and more in real tools) with the
/// input unread.
fn calls_waiting_on_their_cancellation_beyond_the_threads(quick: bool, signal: bool) {
    let max = 2;
    let calls = 6;
    let (server, woke) = cancel_waiting_server(quick, signal);
    let config = mcp_stdio::Config::builder().max_threads(max).build();
    let mut c = Client::start_with(server, config);
    c.initialize();
    for id in 1..=calls {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "wait"}}));
    }
    // Answered only once every call was read: no call answered but busy before it.
    c.send(json!({"jsonrpc": "2.0", "id": 100, "method": "ping"}));
    let mut busy = Vec::new();
    loop {
        // `next` fails after 10 s (WAIT): the handlers' waits last 30 s.
        let m = c.next();
        if m["id"] == 100 {
            break;
        }
        assert_eq!(
            m["error"]["code"],
            codes::SERVER_BUSY,
            "only a busy answer may come before the ping's: {m}"
        );
        busy.push(m["id"].as_i64().unwrap());
    }
    let waiting = calls as usize - busy.len();
    assert!(waiting >= max, "only {waiting} calls waited");
    assert!(!busy.is_empty(), "none refused");
    // Every refused handler was told to stop (true, as for a cancellation).
    for _ in 0..busy.len() {
        assert_eq!(woke.recv_timeout(WAIT), Ok(true), "a refused handler woke");
    }
    for id in 1..=calls {
        c.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": id}}),
        );
    }
    for _ in 0..waiting {
        assert_eq!(
            woke.recv_timeout(WAIT),
            Ok(true),
            "the cancellation reached a waiting handler"
        );
    }
    c.send(json!({"jsonrpc": "2.0", "id": 101, "method": "ping"}));
    c.close_input();
    // What is left, up to the end of the output: only the ping's answer (a cancelled request
    // gets no answer).
    let mut rest = Vec::new();
    loop {
        let line = c.next_line();
        if line.is_empty() {
            break;
        }
        rest.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
    }
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 101, "{rest:?}");
    c.served.recv_timeout(WAIT).unwrap().unwrap();
}

#[test]
fn handlers_waiting_on_their_cancellation_beyond_the_threads_let_the_reading_go_on() {
    calls_waiting_on_their_cancellation_beyond_the_threads(false, false);
}

#[test]
fn quick_handlers_waiting_on_their_cancellation_beyond_the_threads_let_the_reading_go_on() {
    calls_waiting_on_their_cancellation_beyond_the_threads(true, false);
}

#[test]
fn handlers_blocking_on_their_cancellation_signal_beyond_the_threads_let_the_reading_go_on() {
    calls_waiting_on_their_cancellation_beyond_the_threads(false, true);
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

/// The text of the answer to `tools/call` `id` (notifications met first are skipped).
fn text_of(c: &mut Client, id: i64) -> String {
    loop {
        let v = c.next();
        if v["id"] == id && v.get("method").is_none() {
            return v["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("a text answer: {v}"))
                .to_owned();
        }
    }
}

fn call(c: &mut Client, id: i64, tool: &str) {
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                  "params": {"name": tool, "arguments": {}}}));
}

/// A quick call on the stdio reader takes over the last one's context when nothing kept it
/// (a reference count is an atomic operation, and that path runs few else): each call must
/// still be its own request, whatever the calls before it did with theirs.
#[test]
fn every_quick_call_has_a_context_of_its_own_after_one_kept_or_cancelled() {
    let kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Context>::new()));
    let k = kept.clone();
    let keep = Tool::new("keep", move |_: NoArgs, ctx: &Context| {
        k.lock().unwrap().push(ctx.clone());
        Ok::<_, Error>(ctx.request_id().to_string())
    });
    let look = Tool::new("look", |_: NoArgs, ctx: &Context| {
        Ok::<_, Error>(format!("{} {}", ctx.request_id(), ctx.is_cancelled()))
    });
    let (started_tx, waited) = sync_channel(4);
    let wait = Tool::new("wait", move |_: NoArgs, ctx: &Context| {
        started_tx.send(ctx.wait_cancelled(WAIT * 2)).unwrap();
        Ok::<_, Error>("waited")
    });
    let server = Server::builder("t", "1")
        .tool(keep)
        .tool(look)
        .tool(wait)
        .quick_handlers(true)
        .build()
        .unwrap();
    let mut c = start(server);
    for id in 1..=2 {
        call(&mut c, id, "look");
        assert_eq!(text_of(&mut c, id), format!("{id} false"));
    }
    for id in 3..=4 {
        call(&mut c, id, "keep");
        assert_eq!(text_of(&mut c, id), id.to_string());
    }
    call(&mut c, 5, "look");
    assert_eq!(text_of(&mut c, 5), "5 false");
    // A call cancelled while it blocks: the next one is not.
    call(&mut c, 6, "wait");
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 6}}),
    );
    assert_eq!(waited.recv_timeout(WAIT), Ok(true));
    for id in 7..=8 {
        call(&mut c, id, "look");
        assert_eq!(text_of(&mut c, id), format!("{id} false"));
    }
    let ids: Vec<String> = kept
        .lock()
        .unwrap()
        .iter()
        .map(|ctx| ctx.request_id().to_string())
        .collect();
    assert_eq!(ids, ["3", "4"], "a kept context stays its own request's");
    c.close_input();
    c.served.recv_timeout(WAIT).unwrap().unwrap();
}

/// The tool a quick call runs is kept for the next call of it (no registry lock a call): a
/// tool replaced or removed in between must be what the next call meets.
#[test]
fn a_tool_replaced_or_removed_between_quick_calls_is_what_the_next_call_meets() {
    let answer =
        |text: &'static str| Tool::new("t", move |_: NoArgs, _: &Context| Ok::<_, Error>(text));
    let server = Server::builder("t", "1")
        .tool(answer("old"))
        .quick_handlers(true)
        .build()
        .unwrap();
    let handle = server.clone();
    let mut c = start(server);
    for id in 1..=3 {
        call(&mut c, id, "t");
        assert_eq!(text_of(&mut c, id), "old");
    }
    handle.add_tool(answer("new"));
    for id in 4..=5 {
        call(&mut c, id, "t");
        assert_eq!(text_of(&mut c, id), "new");
    }
    assert!(handle.remove_tool("t"));
    call(&mut c, 6, "t");
    let v = loop {
        let v = c.next();
        if v["id"] == 6 {
            break v;
        }
    };
    let said = v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
        + v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
    assert!(said.contains("Unknown tool"), "{v}");
    c.close_input();
    c.served.recv_timeout(WAIT).unwrap().unwrap();
}
