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
        for i in 0..40 {
            let mut s = connect(h.local_addr());
            if i % 2 == 0 {
                let _ = s.write_all(b"GET /mcp HTTP/1.1\r\n");
            }
            conns.push(s);
        }
        assert!(
            eventually(Duration::from_secs(5), || h.connections() == 40),
            "wave {wave}: {} connections picked up",
            h.connections()
        );
        let peak = thread_count();
        assert!(peak <= base + 40, "wave {wave}: peak {peak} (base {base})");
        // The server hangs up on every one of them within the io timeout.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        for s in &mut conns {
            let mut b = [0u8; 256];
            let hung_up = loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    break false;
                }
                s.set_read_timeout(Some(left)).unwrap();
                match s.read(&mut b) {
                    Ok(0) | Err(_) => break true,
                    Ok(_) => {}
                }
            };
            assert!(hung_up, "wave {wave}: connection left open");
        }
        // Their threads exit: nothing accumulates.
        assert!(
            eventually(Duration::from_secs(5), || thread_count() <= base
                && h.connections() == 0),
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
