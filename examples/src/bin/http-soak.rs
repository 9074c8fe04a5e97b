//! A soak of `everything --http`: mixed traffic of both eras from many clients for a while, with
//! the server's resident memory, threads and descriptors sampled as it runs and after it stops.
//!
//! ```text
//! http-soak [--server PATH] [--seconds 120] [--clients 32] [--every 10]
//! ```
//!
//! Each client loops: it connects in one era (a legacy 2025-11-25 session with its GET stream,
//! or 2026-07-28 stateless exchanges), makes a handful of calls (a plain tool answered as JSON,
//! a tool with progress answered as SSE, sampling and elicitation that the server asks of the
//! client (legacy: requests on the stream; 2026-07-28: `input_required` retries), a paged tool
//! list, a resource read), then closes (a legacy session is deleted). The report ends with the
//! change of VmRSS from the 30 s mark to the end, and the threads and descriptors once the load
//! has stopped and the clients' connections are gone. Used by `scripts/soak.sh`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{CallOptions, Client, Revision};
use mcp_core::types::{CreateMessageResult, ElicitRequestParams, ElicitResult};
use mcp_examples::server_proc::{ServerProc, proc_status};
use serde_json::{Map, json};

/// Growth of VmRSS from the 30 s mark to the end above which the soak fails.
const MAX_GROWTH_PCT: f64 = 5.0;

struct Opts {
    server: PathBuf,
    seconds: u64,
    clients: usize,
    every: u64,
}

fn opts() -> Result<Opts, String> {
    let dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut o = Opts {
        server: dir.join("everything"),
        seconds: 120,
        clients: 32,
        every: 10,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--server" => o.server = PathBuf::from(value()?),
            "--seconds" => o.seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--clients" => o.clients = value()?.parse().map_err(|e| format!("--clients: {e}"))?,
            "--every" => o.every = value()?.parse().map_err(|e| format!("--every: {e}"))?,
            _ => {
                return Err(
                    "usage: http-soak [--server PATH] [--seconds S] [--clients N] [--every S]"
                        .into(),
                );
            }
        }
    }
    Ok(o)
}

/// VmRSS (KiB), threads and open descriptors of a process.
fn sample(pid: u32) -> Option<(u64, u64, usize)> {
    let (threads, rss) = proc_status(pid)?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some((rss, threads, fds))
}

/// A small xorshift generator: which era and which calls, varied but repeatable per client.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn client(url: &str, revision: Revision) -> Result<Client, mcp_client::Error> {
    Client::builder()
        .client_info("http-soak", "1.0.0")
        .revision(revision)
        .sampling(|_| {
            Ok(serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant", "model": "soak", "stopReason": "endTurn",
                "content": {"type": "text", "text": "soaked"}
            }))
            .expect("a valid CreateMessageResult"))
        })
        .elicitation(|p| {
            let mut content = Map::new();
            if let ElicitRequestParams::Form(form) = p {
                for (name, schema) in form.requested_schema.properties {
                    let schema = serde_json::to_value(schema).unwrap_or_default();
                    let v = schema
                        .get("default")
                        .cloned()
                        .unwrap_or_else(|| json!("soak"));
                    content.insert(name, v);
                }
            }
            Ok(ElicitResult::accept(content))
        })
        .connect_http(url)
}

/// One client's loop; counts requests and failures.
fn run_client(url: &str, seed: u64, stop: &AtomicBool, done: &AtomicU64, failed: &AtomicU64) {
    let mut rng = Rng(seed | 1);
    while !stop.load(Ordering::Relaxed) {
        let revision = if rng.below(2) == 0 {
            Revision::Legacy
        } else {
            Revision::Modern
        };
        let c = match client(url, revision) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("http-soak: connect: {e}");
                failed.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        };
        for _ in 0..8 {
            let r = match rng.below(6) {
                0 => c.call_tool("test_simple_text", json!({})).map(drop),
                1 => c
                    .call_tool_with(
                        "test_tool_with_progress",
                        json!({}),
                        &CallOptions::new().on_progress(|_| {}),
                    )
                    .map(drop),
                2 => c
                    .call_tool("test_sampling", json!({"prompt": "soak"}))
                    .map(drop),
                3 => c
                    .call_tool("test_elicitation", json!({"message": "soak"}))
                    .map(drop),
                4 => c.list_tools().try_for_each(|t| t.map(drop)),
                _ => c.read_resource("test://static-text").map(drop),
            };
            match r {
                Ok(()) => done.fetch_add(1, Ordering::Relaxed),
                Err(e) => {
                    eprintln!("http-soak: {e}");
                    failed.fetch_add(1, Ordering::Relaxed)
                }
            };
        }
        if c.close().is_err() {
            failed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("http-soak: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    let o = opts()?;
    let server = ServerProc::start_with(&o.server, &["--no-rate-limits"], Duration::from_secs(20))?;
    let pid = server.pid();
    let url = server.url();
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let (idle_rss, idle_threads, idle_fds) = sample(pid).ok_or("cannot read /proc")?;
    println!(
        "## http-soak: {} clients, {} s, both eras",
        o.clients, o.seconds
    );
    println!();
    println!("idle: VmRSS {idle_rss} KiB, {idle_threads} threads, {idle_fds} fds");
    println!();
    println!("| t (s) | requests | req/s | VmRSS (KiB) | threads | fds |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    let workers: Vec<_> = (0..o.clients)
        .map(|i| {
            let (url, stop, done, failed) =
                (url.clone(), stop.clone(), done.clone(), failed.clone());
            std::thread::spawn(move || {
                run_client(
                    &url,
                    0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
                    &stop,
                    &done,
                    &failed,
                )
            })
        })
        .collect();
    let start = Instant::now();
    let mut at_30 = None;
    let mut last = (0u64, start);
    let mut end_rss = idle_rss;
    let mut t = 0;
    while t < o.seconds {
        t = (t + o.every).min(o.seconds);
        let wake = start + Duration::from_secs(t);
        std::thread::sleep(wake.saturating_duration_since(Instant::now()));
        let n = done.load(Ordering::Relaxed);
        let now = Instant::now();
        let rate = (n - last.0) as f64 / now.duration_since(last.1).as_secs_f64();
        last = (n, now);
        let (rss, threads, fds) = sample(pid).ok_or("the server died")?;
        if t >= 30 && at_30.is_none() {
            at_30 = Some(rss);
        }
        end_rss = rss;
        println!("| {t} | {n} | {rate:.0} | {rss} | {threads} | {fds} |");
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = w.join();
    }
    let n = done.load(Ordering::Relaxed);
    let bad = failed.load(Ordering::Relaxed);
    // The clients are gone; their connections close, and the server's threads end with them.
    let mut after = sample(pid).ok_or("the server died")?;
    for _ in 0..50 {
        if after.1 <= idle_threads + 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        after = sample(pid).ok_or("the server died")?;
    }
    println!();
    println!(
        "done: {n} requests ({:.0}/s), {bad} failed",
        n as f64 / start.elapsed().as_secs_f64()
    );
    println!(
        "after the load: VmRSS {} KiB, {} threads, {} fds (idle before: {idle_threads} threads, {idle_fds} fds)",
        after.0, after.1, after.2
    );
    let mut verdict = Vec::new();
    if let Some(r30) = at_30 {
        let change = (end_rss as f64 - r30 as f64) / r30 as f64 * 100.0;
        println!("VmRSS from the 30 s mark to the end: {r30} -> {end_rss} KiB ({change:+.1}%)");
        if change > MAX_GROWTH_PCT {
            verdict.push(format!("VmRSS grew {change:.1}% after the 30 s mark"));
        }
    }
    if after.1 > idle_threads + 2 || after.2 > idle_fds + 2 {
        verdict.push("threads or descriptors did not come back after the load".to_owned());
    }
    if bad > 0 {
        verdict.push(format!("{bad} requests failed"));
    }
    if verdict.is_empty() {
        println!("steady state: flat");
        Ok(())
    } else {
        Err(verdict.join("; "))
    }
}
