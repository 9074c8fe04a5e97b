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
    // Each idle accept loop restart (once per io timeout) leaves tiny_http's 4 pool threads to
    // exit 5 s later, so an idle server settles at about 5 x (5 s / io) threads.
    let steady = base + 5 * 7;
    for wave in 0..2 {
        // 40 idle or slowloris connections at once: one tiny_http thread each while they live.
        let mut conns = Vec::new();
        for i in 0..40 {
            let mut s = connect(h.local_addr());
            if i % 2 == 0 {
                let _ = s.write_all(b"GET /mcp HTTP/1.1\r\n");
            }
            conns.push(s);
        }
        if wave == 0 {
            // They are served: the count does rise (so this test can see growth). In the next
            // wave idle pool threads from this one may be reused, so only the first checks.
            assert!(
                eventually(Duration::from_secs(5), || thread_count() >= base + 30),
                "connections not picked up ({})",
                thread_count()
            );
        }
        let peak = thread_count();
        assert!(peak <= steady + 40, "wave {wave}: peak {peak}");
        // The server hangs up on every one of them.
        for s in &mut conns {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut b = [0u8; 256];
            let t0 = std::time::Instant::now();
            while let Ok(n) = s.read(&mut b) {
                if n == 0 {
                    break;
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(4),
                "wave {wave}: connection left open"
            );
        }
        // The io timeout closes them and their threads exit: nothing accumulates.
        assert!(
            eventually(Duration::from_secs(20), || thread_count() <= steady),
            "wave {wave}: threads stayed at {} (base {base}): {:?}",
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
