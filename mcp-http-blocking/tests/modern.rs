//! The 2026-07-28 era over real sockets: header checks, status codes, one exchange per POST,
//! disconnect as cancellation.

mod common;

use std::time::Duration;

use std::sync::Arc;

use common::*;
use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{Message, RequestId, Response};
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use mcp_http_blocking::{HttpConfig, HttpServer};
use serde_json::{Value, json};

/// POSTs `body` to /mcp as a 2026-07-28 client does (`Accept` both, JSON, the version
/// header), with `extra` headers after those.
fn post_modern(addr: std::net::SocketAddr, extra: &[(&str, &str)], body: &[u8]) -> Resp {
    let mut headers = vec![ACCEPT_BOTH, JSON_CT, PV];
    headers.extend_from_slice(extra);
    request(addr, "POST", "/mcp", &headers, body)
}

fn body(id: i64, method: &str, mut params: Value) -> Vec<u8> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    rpc(id, method, params)
}

/// The server's io timeout (the builder's default).
const IO: Duration = Duration::from_secs(30);
const PV: (&str, &str) = ("MCP-Protocol-Version", "2026-07-28");

#[test]
fn a_request_is_one_exchange_answered_with_json() {
    let (h, ctl) = serve(HttpConfig::default(), IO);
    let a = h.local_addr();
    let r = post_modern(
        a,
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "add")],
        &body(1, "tools/call", json!({"name": "add"})),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["echo"]["name"], "add");
    assert!(
        r.header("mcp-session-id").is_none(),
        "no sessions in 2026-07-28"
    );
    // The exchange's session knew the revision and was closed after the answer.
    assert!(
        ctl.wait_for("session-closed", Duration::from_secs(5))
            .is_some()
    );
    let info = ctl.infos.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        info.protocol_version.map(|v| v.as_str()),
        Some("2026-07-28")
    );
    // A stray `Mcp-Session-Id` (of a live legacy session, or any) is ignored: 2026-07-28
    // has no sessions.
    let sid = open_session(a, "2025-11-25");
    for stray in [sid.as_str(), "no-such-session"] {
        let r = post_modern(
            a,
            &[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "add"),
                ("Mcp-Session-Id", stray),
            ],
            &body(1, "tools/call", json!({"name": "add"})),
        );
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.json()["result"]["echo"]["name"], "add");
    }
    // The base64 form of a header value is decoded before comparing.
    let r = post_modern(
        a,
        &[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?5pel5pys?="),
        ],
        &body(2, "tools/call", json!({"name": "日本"})),
    );
    assert_eq!(r.status, 200);
    // A resources/read names its uri.
    let r = post_modern(
        a,
        &[("Mcp-Method", "resources/read"), ("Mcp-Name", "file:///a")],
        &body(3, "resources/read", json!({"uri": "file:///a"})),
    );
    assert_eq!(r.status, 200);
    // A notification: 202.
    let n = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}).to_string();
    let r = post_modern(a, &[("Mcp-Method", "notifications/progress")], n.as_bytes());
    assert_eq!(r.status, 202);
    // Without `Mcp-Method` (required of requests only; the TypeScript SDK's client cancels a
    // listen this way): 202 all the same. A wrong one is still refused.
    let c = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen:0"}}).to_string();
    let r = post_modern(a, &[], c.as_bytes());
    assert_eq!(r.status, 202);
    let r = post_modern(a, &[("Mcp-Method", "tools/list")], c.as_bytes());
    assert_eq!(r.status, 400);
}

#[test]
fn header_checks_give_the_modern_errors_and_statuses() {
    let (h, _) = serve(HttpConfig::default(), IO);
    let a = h.local_addr();
    let call = body(1, "tools/call", json!({"name": "add"}));
    let code = |r: &Resp| r.json()["error"]["code"].as_i64();
    // Missing Mcp-Method.
    let r = post_modern(a, &[("Mcp-Name", "add")], &call);
    assert_eq!((r.status, code(&r)), (400, Some(-32020)));
    // Mcp-Method differs from the body.
    let r = post_modern(
        a,
        &[("Mcp-Method", "tools/list"), ("Mcp-Name", "add")],
        &call,
    );
    assert_eq!((r.status, code(&r)), (400, Some(-32020)));
    // Missing or wrong Mcp-Name.
    let r = post_modern(a, &[("Mcp-Method", "tools/call")], &call);
    assert_eq!((r.status, code(&r)), (400, Some(-32020)));
    let r = post_modern(
        a,
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "sub")],
        &call,
    );
    assert_eq!((r.status, code(&r)), (400, Some(-32020)));
    assert_eq!(r.json()["id"], 1);
    // Header version differs from _meta.
    let mut other = serde_json::from_slice::<Value>(&call).unwrap();
    other["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2027-01-01");
    let r = post_modern(
        a,
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "add")],
        other.to_string().as_bytes(),
    );
    assert_eq!((r.status, code(&r)), (400, Some(-32020)));
    // A legacy version header on a modern body, no session: the two disagree.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ],
        &call,
    );
    assert_eq!((r.status, code(&r)), (400, Some(-32020)));
    assert_eq!(r.json()["id"], 1);
    // Both say 2025-11-25 (a `_meta` naming a legacy revision): they agree; the request is a
    // legacy one without its session, not a mismatch.
    let mut legacy = serde_json::from_slice::<Value>(&call).unwrap();
    legacy["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("MCP-Protocol-Version", "2025-11-25")],
        legacy.to_string().as_bytes(),
    );
    assert_eq!(r.status, 400);
    assert_ne!(code(&r), Some(-32020), "{:?}", r.json());
    // Missing version header on a modern body.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ],
        &call,
    );
    assert_eq!((r.status, code(&r)), (400, Some(-32020)));
    // Unsupported version: -32022 with the supported list.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ],
        &call,
    );
    assert_eq!((r.status, code(&r)), (400, Some(-32022)));
    assert!(
        r.json()["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "2026-07-28")
    );
    assert_eq!(r.json()["error"]["data"]["requested"], "2099-01-01");
    // Unknown method: 404 with -32601.
    let r = post_modern(
        a,
        &[("Mcp-Method", "no/such")],
        &body(2, "no/such", json!({})),
    );
    assert_eq!((r.status, code(&r)), (404, Some(-32601)));
    // Batches do not exist in 2026-07-28.
    let batch = format!(
        "[{}]",
        String::from_utf8(body(3, "tools/list", json!({}))).unwrap()
    );
    let r = post_modern(a, &[("Mcp-Method", "tools/list")], batch.as_bytes());
    assert_eq!(r.status, 400);
    // GET and DELETE: 405 for a modern client.
    assert_eq!(
        request(
            a,
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), PV],
            b""
        )
        .status,
        405
    );
    assert_eq!(request(a, "DELETE", "/mcp", &[PV], b"").status, 405);
}

#[test]
fn a_modern_only_server_refuses_initialize_and_a_legacy_only_server_refuses_modern() {
    let cfg = HttpConfig::builder()
        .versions(mcp_core::version::VersionSet::modern_only())
        .build();
    let (h, _) = serve(cfg, IO);
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-11-25"),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32022);
    let cfg = HttpConfig::builder()
        .versions(mcp_core::version::VersionSet::legacy_only())
        .build();
    let (h, _) = serve(cfg, IO);
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, PV, ("Mcp-Method", "tools/list")],
        &body(1, "tools/list", json!({})),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32022);
    assert_eq!(r.json()["id"], 1, "the refusal names the request");
    assert_eq!(r.json()["error"]["data"]["requested"], "2026-07-28");
}

#[test]
fn notifications_first_make_an_sse_answer_without_ids() {
    let (h, _) = serve(HttpConfig::default(), IO);
    let mut s = SseClient::open(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, PV, ("Mcp-Method", "progress")],
        &body(4, "progress", json!({})),
    );
    assert_eq!(s.status, 200);
    assert_eq!(
        s.headers.get("x-accel-buffering").map(String::as_str),
        Some("no")
    );
    let n = s.next().unwrap();
    assert!(n.id.is_none(), "no event ids in 2026-07-28");
    assert!(n.data.contains("notifications/progress"));
    assert!(s.next().unwrap().data.contains(r#""id":4"#));
    assert!(s.next().is_none());
}

#[test]
fn a_client_disconnect_cancels_the_exchange() {
    let cfg = HttpConfig::builder()
        .keepalive(Duration::from_millis(50))
        .build();
    let (h, ctl) = serve(cfg, IO);
    let mut s = SseClient::open(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, PV, ("Mcp-Method", "wait_cancel")],
        &body(7, "wait_cancel", json!({})),
    );
    assert!(s.next().unwrap().data.contains("progress"));
    s.cut();
    // The keep-alive write fails, the session hears stream_closed(7) and is closed.
    assert_eq!(
        ctl.wait_for("closed:", Duration::from_secs(5)).as_deref(),
        Some("closed:7")
    );
    assert!(
        ctl.wait_for("session-closed", Duration::from_secs(5))
            .is_some()
    );
}

#[test]
fn a_request_without_the_envelope_is_400_invalid_params_with_its_id() {
    let (h, _) = serve(HttpConfig::default(), IO);
    let a = h.local_addr();
    let discover = |id: i64, params: Value| {
        post_modern(
            a,
            &[("Mcp-Method", "server/discover")],
            &rpc(id, "server/discover", params),
        )
    };
    let info = json!({"name": "c", "version": "1"});
    let cases = [
        (101, json!({})),
        (
            102,
            json!({"_meta": {"io.modelcontextprotocol/clientInfo": info,
                "io.modelcontextprotocol/clientCapabilities": {}}}),
        ),
        (
            104,
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": info}}),
        ),
        (
            106,
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": []}}),
        ),
        (107, json!({"_meta": 3})),
    ];
    for (id, params) in cases {
        let r = discover(id, params);
        assert_eq!(
            r.status,
            400,
            "id {id}: {}",
            String::from_utf8_lossy(&r.body)
        );
        assert_eq!(r.json()["error"]["code"], -32602, "id {id}");
        assert_eq!(r.json()["id"], id);
    }
    // A _meta version that differs from the header stays a header mismatch.
    let r = discover(
        302,
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0",
            "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    assert_eq!(r.json()["id"], 302);
}

#[test]
fn mcp_param_headers_reach_the_service_decoded_and_broken_base64_is_refused() {
    let (h, ctl) = serve(HttpConfig::default(), IO);
    let a = h.local_addr();
    let call = |id: i64, param: Option<&str>| {
        let mut headers = vec![
            ACCEPT_BOTH,
            JSON_CT,
            PV,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ];
        if let Some(v) = param {
            headers.push(("Mcp-Param-Region", v));
        }
        request(
            a,
            "POST",
            "/mcp",
            &headers,
            &body(id, "tools/call", json!({"name": "add"})),
        )
    };
    for (id, bad) in [
        (1, "=?base64?SGVsbG8?="),
        (2, "=?base64?SGVs!!!bG8=?="),
        (3, "=?base64?/w==?="),
    ] {
        let r = call(id, Some(bad));
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["error"]["code"], -32020, "{bad}");
        assert_eq!(r.json()["id"], id);
    }
    let seen = |ctl: &Ctl| ctl.infos.lock().unwrap().last().cloned().unwrap();
    let r = call(4, Some("=?base64?SGVsbG8=?="));
    assert_eq!(r.status, 200);
    assert_eq!(
        seen(&ctl).param_headers,
        Some(vec![("Region".to_owned(), "Hello".to_owned())])
    );
    // Half the encoded form is a literal value.
    let r = call(5, Some("=?base64?SGVsbG8="));
    assert_eq!(r.status, 200);
    assert_eq!(
        seen(&ctl).param_headers,
        Some(vec![("Region".to_owned(), "=?base64?SGVsbG8=".to_owned())])
    );
    let r = call(6, None);
    assert_eq!(r.status, 200);
    assert_eq!(seen(&ctl).param_headers, Some(vec![]));
}

/// A service whose `wait` blocks inside `handle` (on the request's own thread, as a tool
/// handler does) until its exchange is told the client went away; it reports how it ended.
struct Blocking(Sender<bool>);

struct BlockingSession {
    out: Arc<dyn Outbound>,
    gone: (Sender<()>, Receiver<()>),
    report: Sender<bool>,
}

impl Service for Blocking {
    fn open(&self, _: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        Arc::new(BlockingSession {
            out,
            gone: bounded(1),
            report: self.0.clone(),
        })
    }
}

impl Session for BlockingSession {
    fn handle(&self, msg: Message) {
        let Message::Request(r) = msg else {
            return;
        };
        let _ = self.out.will_block();
        let cancelled = self.gone.1.recv_timeout(WAIT).is_ok();
        let _ = self.report.send(cancelled);
        let answer = Response::new(r.id.clone(), &json!({})).unwrap();
        let _ = self.out.send(answer.into(), Some(&r.id));
    }

    fn stream_closed(&self, _: &RequestId) {
        let _ = self.gone.0.try_send(());
    }

    fn close(&self) {}
}

#[test]
fn a_client_that_accepts_only_json_and_hangs_up_cancels_the_exchange() {
    // Its answer can only be JSON, written when the handler is done: only a watch on the
    // connection sees the hang-up, which in 2026-07-28 is the cancellation.
    let (report_tx, report) = bounded(4);
    let cfg = HttpConfig::builder()
        .json_window(Duration::from_millis(50))
        .build();
    let h = HttpServer::builder()
        .config(cfg)
        .build(Blocking(report_tx))
        .unwrap()
        .spawn()
        .unwrap();
    let mut s = connect(h.local_addr());
    write_request(
        &mut s,
        "POST",
        "/mcp",
        &[
            ("Accept", "application/json"),
            JSON_CT,
            PV,
            ("Mcp-Method", "wait"),
        ],
        &body(9, "wait", json!({})),
    );
    drop(s);
    assert_eq!(
        report.recv_timeout(WAIT),
        Ok(true),
        "the handler was cancelled"
    );
}

/// A routing header twice (a proxy may go by the other copy) is refused, each name of
/// `Mcp-Param-*` too; and a `subscriptions/listen` whose client takes only JSON is refused at
/// once, with its id (it waited the 5-minute answer timeout, then got 504 with a null id).
#[test]
fn duplicate_routing_headers_and_a_json_only_listen_are_refused() {
    let (h, _) = serve(HttpConfig::default(), IO);
    let a = h.local_addr();
    let call = body(1, "tools/call", json!({"name": "add"}));
    let m = ("Mcp-Method", "tools/call");
    let n = ("Mcp-Name", "add");
    for extra in [
        vec![m, n, ("Mcp-Name", "sub")],
        vec![m, ("Mcp-Method", "tools/list"), n],
        vec![m, n, ("Mcp-Param-Region", "eu"), ("mcp-param-region", "us")],
    ] {
        let r = post_modern(a, &extra, &call);
        assert_eq!(r.status, 400, "{extra:?}");
        // The client learns why, as from any other 400 (there was a bare 400 here).
        assert_eq!(r.json()["error"]["code"], -32600, "{extra:?}");
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("appears twice")),
            "{:?}",
            r.json()
        );
    }
    assert_eq!(post_modern(a, &[m, n], &call).status, 200);
    let listen = body(
        2,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let started = std::time::Instant::now();
    let r = request(
        a,
        "POST",
        "/mcp",
        &[
            ("Accept", "application/json"),
            JSON_CT,
            PV,
            ("Mcp-Method", "subscriptions/listen"),
        ],
        &listen,
    );
    assert_eq!(r.status, 406);
    assert_eq!(r.json()["id"], 2);
    assert!(started.elapsed() < Duration::from_secs(5));
}
