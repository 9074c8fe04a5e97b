//! Thread growth stays bounded under hostile connections (alone in its binary so the count is
//! not disturbed by other tests).

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::*;
use mcp_http_blocking::{HttpConfig, HttpServer};

#[test]
fn hostile_connections_do_not_grow_threads_without_bound() {
    let io = Duration::from_secs(1);
    let h = HttpServer::builder()
        .config(HttpConfig::default())
        .io_timeout(io)
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap();
    let base = thread_count();
    for wave in 0..2 {
        // 40 idle or slowloris connections at once: each gets its own thread at once.
        let mut conns = Vec::new();
        for i in 0..39 {
            let mut s = connect(h.local_addr());
            if i % 2 == 0 {
                let _ = s.write_all(b"GET /mcp HTTP/1.1\r\n");
            }
            conns.push(s);
        }
        // The last one is answered once, then stays idle. Connections are accepted in the
        // order they were made, and each is registered before the next is accepted: with this
        // answer read, all 40 are picked up.
        let mut last = std::io::BufReader::new(connect(h.local_addr()));
        write_request(last.get_mut(), "OPTIONS", "/mcp", &[], b"");
        let status = read_response(&mut last).status;
        assert!((200..300).contains(&status), "wave {wave}: {status}");
        conns.push(last.into_inner());
        assert_eq!(h.connections(), 40, "wave {wave}: connections picked up");
        let peak = thread_count();
        assert!(peak <= base + 40, "wave {wave}: peak {peak} (base {base})");
        // The server hangs up on every one of them within the io timeout, with nothing sent
        // (EOF or a reset; the client's own timeout is 10 s).
        for s in &mut conns {
            let mut b = [0u8; 256];
            let r = s.read(&mut b);
            assert!(peer_closed(&r), "wave {wave}: connection left open: {r:?}");
        }
        // Their threads exit: nothing accumulates (the server says so when its last
        // connection worker has retired; idle workers end after a second).
        assert!(
            h.wait_until_idle(Duration::from_secs(10)),
            "wave {wave}: still busy: {} connections, {} threads (base {base}): {:?}",
            h.connections(),
            thread_count(),
            names()
        );
        drop(conns);
    }
}

fn names() -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let n = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        *m.entry(n.trim().to_owned()).or_insert(0) += 1;
    }
    m
}
