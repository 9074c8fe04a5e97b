//! The floor for the HTTP benchmark: the least a tiny_http JSON-RPC server can do.
//!
//! ```text
//! http-floor [--http ADDR] [--workers N]
//! ```
//!
//! It binds ADDR (default `127.0.0.1:0`), prints `listening on http://ADDR/mcp` to stderr like
//! the real examples, and runs N worker threads (default 4) that call `recv()` on one shared
//! `tiny_http::Server`. Every POST body is read and parsed into a `serde_json::Value` (as any
//! real server must), and answered with a canned `tools/call` echo result carrying the
//! request's id, as `application/json`. Other methods get 405. `http-bench` runs it next to the
//! real `echo --http` server, so the ratio shows what the MCP layers (session, transport core,
//! server kit) cost on top of tiny_http, HTTP parsing and JSON parsing.

use std::sync::Arc;

fn main() {
    let mut addr = "127.0.0.1:0".to_owned();
    let mut workers = 4usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--http", Some(a)) => addr = a,
            ("--workers", Some(n)) => match n.parse::<usize>() {
                Ok(n) if n > 0 => workers = n,
                _ => fail(&format!("--workers {n}: not a positive count")),
            },
            _ => fail("usage: http-floor [--http ADDR] [--workers N]"),
        }
    }
    let server = match tiny_http::Server::http(&addr) {
        Ok(s) => Arc::new(s),
        Err(e) => fail(&format!("cannot bind {addr}: {e}")),
    };
    match server.server_addr().to_ip() {
        Some(a) => eprintln!("listening on http://{a}/mcp"),
        None => fail("not bound to an IP address"),
    }
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let server = server.clone();
            std::thread::spawn(move || work(&server))
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("http-floor: {msg}");
    std::process::exit(2);
}

/// Answers requests until the server's accept loop dies.
fn work(server: &tiny_http::Server) {
    let json = tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..])
        .expect("a static header is valid");
    loop {
        let mut rq = match server.recv() {
            Ok(rq) => rq,
            Err(e) => {
                eprintln!("http-floor: {e}");
                return;
            }
        };
        if rq.method() != &tiny_http::Method::Post {
            let _ = rq.respond(tiny_http::Response::empty(405));
            continue;
        }
        let mut body = Vec::new();
        let answer = match rq.as_reader().read_to_end(&mut body) {
            Ok(_) => answer(&body),
            Err(_) => continue,
        };
        let resp = tiny_http::Response::from_data(answer).with_header(json.clone());
        let _ = rq.respond(resp);
    }
}

/// The canned answer to one request body.
fn answer(body: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(msg) => {
            let id = msg.get("id").cloned().unwrap_or(serde_json::Value::Null);
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hello"}}]}}}}"#
            )
            .into_bytes()
        }
        Err(_) => br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
            .to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::answer;

    #[test]
    fn answers_with_the_request_id_or_a_parse_error() {
        let ok: serde_json::Value = serde_json::from_slice(&answer(
            br#"{"jsonrpc":"2.0","id":"a-7","method":"tools/call","params":{"name":"echo"}}"#,
        ))
        .expect("JSON");
        assert_eq!(ok["id"], "a-7");
        assert_eq!(ok["result"]["content"][0]["text"], "hello");
        let bad: serde_json::Value = serde_json::from_slice(&answer(b"{nope")).expect("JSON");
        assert_eq!(bad["error"]["code"], -32700);
    }
}
