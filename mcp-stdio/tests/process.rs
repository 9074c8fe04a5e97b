//! End to end with real processes: this test binary starts itself as an MCP server on its own
//! stdin/stdout (`serve`), and talks to it through `ChildBuilder`. It runs without libtest's
//! harness, because the harness prints to stdout and the server's stdout belongs to the protocol.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_core::jsonrpc::{Message, Request, RequestId, Response};
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use mcp_stdio::ChildBuilder;

const ROLE: &str = "MCP_STDIO_TEST_ROLE";

struct Echo;
struct EchoSession(Arc<dyn Outbound>);

impl Service for Echo {
    fn open(&self, _: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        Arc::new(EchoSession(out))
    }
}

impl Session for EchoSession {
    fn handle(&self, msg: Message) {
        if let Message::Request(r) = msg {
            let reply = Response::new(r.id.clone(), &r.params_value()).unwrap();
            let _ = self.0.send(reply.into(), Some(&r.id));
        }
    }
    fn close(&self) {
        eprintln!("echo server: session closed");
    }
}

fn main() {
    if std::env::var_os(ROLE).is_some() {
        let code = match mcp_stdio::serve(Echo) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("echo server: {e}");
                1
            }
        };
        std::process::exit(code);
    }

    let exe = std::env::current_exe().unwrap();
    let (conn, mut child) = ChildBuilder::new(exe.clone())
        .env(ROLE, "server")
        // Long graces: the test fails (by signal status) if the server needs a signal to exit.
        .close_grace(Duration::from_secs(20))
        .spawn()
        .unwrap();
    const N: i64 = 200;
    for id in 1..=N {
        let req = Request::new(id, "echo", &serde_json::json!({ "n": id })).unwrap();
        conn.sender.send(req.into()).unwrap();
    }
    for id in 1..=N {
        let msg = conn
            .receiver
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers")
            .expect("the server writes only messages");
        let Message::Response(r) = msg else {
            panic!("expected a response, got {msg:?}")
        };
        assert_eq!(r.id, RequestId::Number(id));
        let v: serde_json::Value = r.result().unwrap();
        assert_eq!(v["n"], id);
    }
    let t0 = Instant::now();
    let status = child.shutdown().unwrap();
    assert_eq!(status.code(), Some(0), "the server exits 0 on stdin EOF");
    assert!(t0.elapsed() < Duration::from_secs(20));
    println!("process: {N} requests answered by a child `serve`, exit 0 on stdin EOF: ok");

    // A stdin that is not open at all reads as the end of input: the server exits 0 at once
    // instead of failing. (A Rust program's runtime puts /dev/null on a closed standard
    // descriptor before `main`; a host without that runtime gets the same from `serve`.)
    #[cfg(unix)]
    {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" <&- >/dev/null")
            .arg(&exe)
            .env(ROLE, "server")
            .status()
            .unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "a closed stdin ends serving cleanly"
        );
        println!("process: a child `serve` with stdin closed exits 0: ok");
    }
}
