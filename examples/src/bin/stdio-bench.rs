//! Stdio benchmark: `tools/call` echo round trips over a child process's pipes.
//!
//! ```text
//! stdio-bench [-n REQUESTS] [--window W] [--rounds R] [--json] [--allow-errors]
//!             [--server CMD]... [--raw CMD]...
//! ```
//!
//! Each `--server` command is a real MCP server (initialize handshake first); each `--raw`
//! command is answered without a handshake. With neither, the bench runs `echo` (a real server)
//! and `stdio-floor` (the floor: parse a line, write a canned answer) from the bench's own
//! directory, e.g. `target/release/`. Every program is measured sending REQUESTS echo calls one
//! at a time (window 1: latency) and with W in flight (default 64: throughput). The output is a
//! Markdown table, then the ratios of the first program to the last.
//!
//! With `--rounds R` (default 1) the whole list is run R times, interleaved (round 1: every
//! program at both windows, then round 2, ...), so a change in the machine's load falls on every
//! program alike; each figure is then the median over the rounds. Besides speed, the bench reads
//! each server's memory from `/proc/<pid>/status` (Linux): its resident set right after the
//! handshake (`VmRSS`, idle) and its peak just before its stdin is closed (`VmHWM`), and the
//! CPU time the server's threads spent on the measured calls (the sum of the first field of
//! `/proc/<pid>/task/*/schedstat`, nanoseconds on a CPU, user and kernel, read before the first
//! and after the last measured call), per call: at window 1 the round trip is mostly the two
//! wake-ups, which every server pays alike, and this is the part a server's own code decides.
//! A thread that ended during the run is not counted. `--json`
//! prints the medians and every round's figures as one JSON document instead of the tables, for
//! `bench/`'s `compare`, which sets this bench against other SDKs' servers.
//!
//! One at a time (window 1, and the handshake and warm-up of every run) the bench reads each
//! answer on the thread that wrote the request, as a blocking client does: the round trip is
//! then the server's code and two pipe wake-ups, nothing of the bench's own (a reader thread
//! handing answers over a channel would add a third wake-up to every call, and its timing, which
//! can put a server that does less behind one that does more). With more in flight a reader
//! thread takes the answers while the bench writes. A server that stops answering is killed
//! after 10 s either way.
//!
//! An error answer to a measured call stops the bench, unless `--allow-errors`: then it is
//! counted (and timed like any answer) and reported, for servers that shed load by design
//! (mcport's pooled runtime answers "request queue is full" beyond its queue).
//!
//! Build with `cargo build --release -p mcp-examples` and run `target/release/stdio-bench`.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// How long one answer may take before the bench gives up on a server.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);
/// Window-1 requests sent before each measurement, to warm caches and the allocator.
const WARMUP: usize = 500;

/// One program to measure.
struct Target {
    label: String,
    argv: Vec<String>,
    handshake: bool,
}

/// Throughput, latency and memory of one run (or the medians of several).
#[derive(Clone, Copy)]
struct Stats {
    requests: usize,
    per_sec: f64,
    p50: Duration,
    p99: Duration,
    /// Measured calls answered with an error (only with `--allow-errors`).
    errors: usize,
    /// `VmRSS` in KiB after the handshake (after the first answer for a `--raw` program).
    idle_rss_kib: Option<u64>,
    /// `VmHWM` in KiB just before the bench closed the program's stdin.
    peak_rss_kib: Option<u64>,
    /// The program's CPU time per measured call, in µs (`None` where `/proc` cannot tell).
    cpu_us: Option<f64>,
}

/// One program at one window over every round.
struct Row {
    target: usize,
    window: usize,
    runs: Vec<Stats>,
}

/// What the reader thread reports for each line from the server.
enum Event {
    Reply { id: u64, at: Instant, ok: bool },
    Closed(Option<String>),
}

/// The fields of a server line the bench looks at; the rest is skipped unparsed.
#[derive(Deserialize)]
struct Line {
    id: Option<serde_json::Value>,
    method: Option<String>,
    error: Option<serde::de::IgnoredAny>,
}

fn main() {
    match run() {
        Ok(()) => {}
        Err(e) => {
            eprintln!("stdio-bench: {e}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<(), String> {
    let mut requests = 20_000usize;
    let mut window = 64usize;
    let mut rounds = 1usize;
    let mut json = false;
    let mut allow_errors = false;
    let mut targets = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-n" => requests = parse_count(&value("-n")?)?,
            "--window" => window = parse_count(&value("--window")?)?,
            "--rounds" => rounds = parse_count(&value("--rounds")?)?,
            "--json" => json = true,
            "--allow-errors" => allow_errors = true,
            "--server" | "--raw" => {
                let cmd = value(&arg)?;
                let argv: Vec<String> = cmd.split_whitespace().map(String::from).collect();
                if argv.is_empty() {
                    return Err(format!("{arg} needs a command"));
                }
                targets.push(Target {
                    label: label_of(&argv),
                    argv,
                    handshake: arg == "--server",
                });
            }
            "-h" | "--help" => {
                println!(
                    "usage: stdio-bench [-n REQUESTS] [--window W] [--rounds R] [--json] \
                     [--allow-errors] [--server CMD]... [--raw CMD]..."
                );
                return Ok(());
            }
            other => return Err(format!("unknown argument {other} (see --help)")),
        }
    }
    if targets.is_empty() {
        let dir = std::env::current_exe()
            .map_err(|e| format!("cannot find the bench's own path: {e}"))?
            .parent()
            .map(PathBuf::from)
            .ok_or("the bench's path has no parent directory")?;
        for (name, handshake) in [("echo", true), ("stdio-floor", false)] {
            let path = dir.join(name);
            if !path.exists() {
                return Err(format!(
                    "{} not found; build it or pass --server/--raw",
                    path.display()
                ));
            }
            targets.push(Target {
                label: name.into(),
                argv: vec![path.display().to_string()],
                handshake,
            });
        }
    }

    let mut rows: Vec<Row> = (0..targets.len())
        .flat_map(|target| {
            [1, window].map(|window| Row {
                target,
                window,
                runs: Vec::with_capacity(rounds),
            })
        })
        .collect();
    // Interleaved: every program once per round, so drifting load is shared out evenly.
    for round in 1..=rounds {
        for row in &mut rows {
            let t = &targets[row.target];
            eprintln!(
                "stdio-bench: round {round}/{rounds}: {} window {}: {requests} requests",
                t.label, row.window
            );
            let stats = measure(t, requests, row.window, allow_errors)
                .map_err(|e| format!("{}: {e}", t.label))?;
            row.runs.push(stats);
        }
    }
    if json {
        println!("{}", json_report(&targets, &rows, requests, window, rounds));
    } else {
        let medians: Vec<(String, usize, Stats)> = rows
            .iter()
            .map(|r| (targets[r.target].label.clone(), r.window, median(&r.runs)))
            .collect();
        print_report(&medians, window, rounds);
    }
    Ok(())
}

/// The median of each figure on its own (with an even count, the upper middle one).
fn median(runs: &[Stats]) -> Stats {
    fn mid<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        v[v.len() / 2]
    }
    fn mid_opt<T: Copy + PartialOrd>(v: Vec<Option<T>>) -> Option<T> {
        let known: Vec<T> = v.into_iter().flatten().collect();
        (!known.is_empty()).then(|| mid(known))
    }
    Stats {
        requests: runs[0].requests,
        per_sec: mid(runs.iter().map(|s| s.per_sec).collect()),
        p50: mid(runs.iter().map(|s| s.p50).collect()),
        p99: mid(runs.iter().map(|s| s.p99).collect()),
        errors: mid(runs.iter().map(|s| s.errors).collect()),
        idle_rss_kib: mid_opt(runs.iter().map(|s| s.idle_rss_kib).collect()),
        peak_rss_kib: mid_opt(runs.iter().map(|s| s.peak_rss_kib).collect()),
        cpu_us: mid_opt(runs.iter().map(|s| s.cpu_us).collect()),
    }
}

/// The `--json` document: the run's settings, then per program and window the medians and
/// every round's figures (latencies in µs, memory in KiB, `null` where unknown).
fn json_report(
    targets: &[Target],
    rows: &[Row],
    requests: usize,
    window: usize,
    rounds: usize,
) -> serde_json::Value {
    let figures = |s: &Stats| {
        serde_json::json!({
            "per_sec": s.per_sec,
            "p50_us": micros(s.p50),
            "p99_us": micros(s.p99),
            "errors": s.errors,
            "idle_rss_kib": s.idle_rss_kib,
            "peak_rss_kib": s.peak_rss_kib,
            "cpu_us": s.cpu_us,
        })
    };
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let t = &targets[r.target];
            serde_json::json!({
                "label": t.label,
                "command": t.argv.join(" "),
                "handshake": t.handshake,
                "window": r.window,
                "median": figures(&median(&r.runs)),
                "runs": r.runs.iter().map(figures).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "requests": requests,
        "window": window,
        "rounds": rounds,
        "rows": rows,
    })
}

fn parse_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{s} is not a positive count")),
    }
}

/// A short name for a command: the file names of the program and of its first argument, so
/// that `node path/to/server.js` reads as `node server.js`.
fn label_of(argv: &[String]) -> String {
    let base = |s: &String| s.rsplit('/').next().unwrap_or(s).to_string();
    argv.iter().take(2).map(base).collect::<Vec<_>>().join(" ")
}

/// Runs one program once: spawn, optional handshake, warm-up, then `requests` calls with at most
/// `window` in flight.
fn measure(
    t: &Target,
    requests: usize,
    window: usize,
    allow_errors: bool,
) -> Result<Stats, String> {
    let mut child = Command::new(&t.argv[0])
        .args(&t.argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", t.argv.join(" ")))?;
    let result = drive(&mut child, t.handshake, requests, window, allow_errors);
    // Dropping stdin (inside drive) ends the server; kill it if it lingers after an error.
    if result.is_err() {
        let _ = child.kill();
    }
    let _ = child.wait();
    result
}

fn drive(
    child: &mut Child,
    handshake: bool,
    requests: usize,
    window: usize,
    allow_errors: bool,
) -> Result<Stats, String> {
    let pid = child.id();
    let stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let mut replies = Replies::Here {
        input: BufReader::new(stdout),
        line: String::new(),
        watchdog: Watchdog::start(pid),
    };
    let mut out = BufWriter::new(stdin);

    let mut next_id = 0u64;
    if handshake {
        let init = r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-bench","version":"1.0.0"}}"#;
        send(&mut out, next_id, "initialize", init)?;
        out.flush().map_err(io_err)?;
        wait_reply(&mut replies, next_id)?;
        next_id += 1;
        writeln!(
            out,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .map_err(io_err)?;
    }
    let mut idle_rss_kib = handshake.then(|| proc_status_kib(pid, "VmRSS")).flatten();
    for _ in 0..WARMUP {
        call(&mut out, next_id)?;
        out.flush().map_err(io_err)?;
        wait_reply(&mut replies, next_id)?;
        next_id += 1;
        if idle_rss_kib.is_none() && !handshake {
            idle_rss_kib = proc_status_kib(pid, "VmRSS");
        }
    }

    if window > 1 {
        // Bounded: the reader never runs more than a window (plus stray notifications) ahead.
        replies = replies.threaded(window * 2 + 16);
    }
    let first = next_id;
    let mut sent_at = vec![None; requests];
    let mut latencies = Vec::with_capacity(requests);
    let cpu_before = cpu_ns(pid);
    let start = Instant::now();
    let mut sent = 0usize;
    let mut errors = 0usize;
    while latencies.len() < requests {
        while sent < requests && sent - latencies.len() < window {
            sent_at[sent] = Some(Instant::now());
            call(&mut out, first + sent as u64)?;
            sent += 1;
        }
        out.flush().map_err(io_err)?;
        let (id, at) = match replies.next(allow_errors)? {
            (id, at, true) => (id, at),
            (id, at, false) => {
                errors += 1;
                (id, at)
            }
        };
        let slot = id
            .checked_sub(first)
            .and_then(|i| sent_at.get_mut(i as usize))
            .and_then(Option::take)
            .ok_or(format!("unexpected or repeated reply id {id}"))?;
        latencies.push(at.duration_since(slot));
    }
    let elapsed = start.elapsed();
    let cpu_us = cpu_before
        .zip(cpu_ns(pid))
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e3 / requests as f64);
    // The peak over the whole run, read while the server is still alive.
    let peak_rss_kib = proc_status_kib(pid, "VmHWM");
    drop(out);
    replies.finish();

    latencies.sort_unstable();
    let pick = |pct: usize| latencies[(latencies.len() * pct / 100).min(latencies.len() - 1)];
    Ok(Stats {
        requests,
        per_sec: requests as f64 / elapsed.as_secs_f64(),
        p50: pick(50),
        p99: pick(99),
        errors,
        idle_rss_kib,
        peak_rss_kib,
        cpu_us,
    })
}

/// The nanoseconds the threads of `pid` have spent on a CPU so far: the sum of the first field
/// of each `/proc/<pid>/task/<tid>/schedstat`; `None` off Linux or if unreadable (a kernel
/// without `CONFIG_SCHED_INFO`).
fn cpu_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0u64;
    for task in tasks.flatten() {
        // A thread may end between the listing and the read: it is left out.
        if let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) {
            total += schedstat_ns(&stat)?;
        }
    }
    Some(total)
}

/// The first field of a `schedstat` line (time on a CPU, in nanoseconds).
fn schedstat_ns(stat: &str) -> Option<u64> {
    stat.split_whitespace().next()?.parse().ok()
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`); `None` off Linux or if unreadable.
fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status_field_kib(&status, field)
}

fn status_field_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

fn io_err(e: std::io::Error) -> String {
    format!("pipe error: {e}")
}

fn send(
    out: &mut BufWriter<ChildStdin>,
    id: u64,
    method: &str,
    params: &str,
) -> Result<(), String> {
    writeln!(
        out,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
    )
    .map_err(io_err)
}

fn call(out: &mut BufWriter<ChildStdin>, id: u64) -> Result<(), String> {
    send(
        out,
        id,
        "tools/call",
        r#"{"name":"echo","arguments":{"message":"hello"}}"#,
    )
}

/// Waits for the answer to `id`, which must be the next answer to arrive.
fn wait_reply(replies: &mut Replies, id: u64) -> Result<(), String> {
    let (got, ..) = replies.next(false)?;
    if got == id {
        Ok(())
    } else {
        Err(format!("expected the reply to {id}, got {got}"))
    }
}

/// Where a run's answers come from.
enum Replies {
    /// Read by the thread that writes the requests (one at a time).
    Here {
        input: BufReader<ChildStdout>,
        line: String,
        watchdog: Watchdog,
    },
    /// Read by a thread of their own while requests are written (pipelined).
    Thread {
        rx: Receiver<Event>,
        reader: JoinHandle<()>,
    },
}

impl Replies {
    /// The same answers, read from now on by a thread of their own, at most `bound` ahead.
    fn threaded(self, bound: usize) -> Replies {
        match self {
            Replies::Here {
                input, watchdog, ..
            } => {
                // The channel's timeout takes over from the watchdog.
                drop(watchdog);
                let (tx, rx) = sync_channel::<Event>(bound);
                let reader = std::thread::spawn(move || read_replies(input, tx));
                Replies::Thread { rx, reader }
            }
            threaded => threaded,
        }
    }

    /// The next answer: its id, when it was read, and whether it was a success. An error
    /// answer is an `Err` unless `allow_errors`.
    fn next(&mut self, allow_errors: bool) -> Result<(u64, Instant, bool), String> {
        let event = match self {
            Replies::Here {
                input,
                line,
                watchdog,
            } => {
                let event = loop {
                    if let Some(event) = read_event(input, line) {
                        break event;
                    }
                };
                watchdog.answered();
                event
            }
            Replies::Thread { rx, .. } => match rx.recv_timeout(REPLY_TIMEOUT) {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no reply within {REPLY_TIMEOUT:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => return Err("reader thread ended".into()),
            },
        };
        match event {
            Event::Reply { id, at, ok } if ok || allow_errors => Ok((id, at, ok)),
            Event::Reply { id, .. } => Err(format!(
                "request {id} got an error response (see --allow-errors)"
            )),
            Event::Closed(why) => Err(format!(
                "server closed stdout{}",
                why.map(|w| format!(": {w}")).unwrap_or_default()
            )),
        }
    }

    /// After the program's stdin closed: the reader thread ends with its output.
    fn finish(self) {
        if let Replies::Thread { reader, .. } = self {
            let _ = reader.join();
        }
    }
}

/// Kills a program that leaves a call unanswered for [`REPLY_TIMEOUT`] while the bench waits
/// in a blocking read (which then meets the end of its output). It looks once per timeout.
struct Watchdog {
    answers: Arc<AtomicU64>,
    /// Dropped to stop the watchdog.
    _stop: SyncSender<()>,
}

impl Watchdog {
    fn start(pid: u32) -> Watchdog {
        let answers = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = sync_channel::<()>(0);
        let seen = Arc::clone(&answers);
        std::thread::spawn(move || {
            // Answers counted when the last look came (none before the first).
            let mut last = 0;
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(REPLY_TIMEOUT) {
                let now = seen.load(Ordering::Relaxed);
                if now == last {
                    eprintln!("stdio-bench: no reply within {REPLY_TIMEOUT:?}: killing {pid}");
                    let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
                    return;
                }
                last = now;
            }
        });
        Watchdog {
            answers,
            _stop: stop,
        }
    }

    fn answered(&self) {
        self.answers.fetch_add(1, Ordering::Relaxed);
    }
}

/// Reads server lines, timestamps each answer as soon as it is read, and skips server
/// notifications and requests (lines with a method).
fn read_replies(mut input: impl BufRead, tx: SyncSender<Event>) {
    let mut line = String::new();
    loop {
        let Some(event) = read_event(&mut input, &mut line) else {
            continue;
        };
        let closed = matches!(event, Event::Closed(_));
        if tx.send(event).is_err() || closed {
            return;
        }
    }
}

/// The next line of the server's as an event, timestamped as soon as it is read; `None` for a
/// server notification or request (a line with a method), which the bench skips.
fn read_event(input: &mut impl BufRead, line: &mut String) -> Option<Event> {
    line.clear();
    match input.read_line(line) {
        Ok(0) => return Some(Event::Closed(None)),
        Ok(_) => {}
        Err(e) => return Some(Event::Closed(Some(e.to_string()))),
    }
    let at = Instant::now();
    Some(match serde_json::from_str::<Line>(line) {
        Ok(Line {
            method: Some(_), ..
        }) => return None,
        Ok(Line {
            id: Some(id),
            error,
            ..
        }) => match id.as_u64() {
            Some(id) => Event::Reply {
                id,
                at,
                ok: error.is_none(),
            },
            None => Event::Closed(Some(format!("reply with a foreign id: {}", line.trim()))),
        },
        _ => Event::Closed(Some(format!("unreadable line: {}", line.trim()))),
    })
}

fn print_report(rows: &[(String, usize, Stats)], window: usize, rounds: usize) {
    if rounds > 1 {
        println!("Medians of {rounds} interleaved rounds.");
        println!();
    }
    println!(
        "| program | window | requests | req/s | p50 (µs) | p99 (µs) | CPU per call (µs) | idle RSS (KiB) | peak RSS (KiB) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let kib = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let errors: Vec<String> = rows
        .iter()
        .filter(|r| r.2.errors > 0)
        .map(|(label, w, s)| format!("{label} at window {w}: {} error answers", s.errors))
        .collect();
    for (label, w, s) in rows {
        println!(
            "| {label} | {w} | {} | {:.0} | {:.1} | {:.1} | {} | {} | {} |",
            s.requests,
            s.per_sec,
            micros(s.p50),
            micros(s.p99),
            s.cpu_us
                .map_or_else(|| "-".to_string(), |c| format!("{c:.2}")),
            kib(s.idle_rss_kib),
            kib(s.peak_rss_kib)
        );
    }
    if !errors.is_empty() {
        println!();
        println!("Counted in req/s: {}.", errors.join("; "));
    }
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return;
    };
    if first.0 == last.0 {
        return;
    }
    println!();
    println!("| {} vs {} | window 1 | window {window} |", first.0, last.0);
    println!("| --- | ---: | ---: |");
    let get = |label: &str, w: usize| rows.iter().find(|r| r.0 == label && r.1 == w).map(|r| &r.2);
    let pair = |w: usize| get(&first.0, w).zip(get(&last.0, w));
    let ratio = |f: &dyn Fn(&Stats, &Stats) -> f64, w: usize| {
        pair(w)
            .map(|(a, b)| format!("{:.2}x", f(a, b)))
            .unwrap_or_else(|| "-".into())
    };
    let thr = |a: &Stats, b: &Stats| a.per_sec / b.per_sec;
    let p50 = |a: &Stats, b: &Stats| micros(a.p50) / micros(b.p50).max(1e-3);
    let p99 = |a: &Stats, b: &Stats| micros(a.p99) / micros(b.p99).max(1e-3);
    println!(
        "| throughput ratio | {} | {} |",
        ratio(&thr, 1),
        ratio(&thr, window)
    );
    println!(
        "| p50 latency ratio | {} | {} |",
        ratio(&p50, 1),
        ratio(&p50, window)
    );
    println!(
        "| p99 latency ratio | {} | {} |",
        ratio(&p99, 1),
        ratio(&p99, window)
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

#[cfg(test)]
mod tests {
    use super::{Event, Stats, median, read_replies, schedstat_ns, status_field_kib};
    use std::sync::mpsc::sync_channel;
    use std::time::Duration;

    #[test]
    fn reader_skips_server_messages_and_flags_errors() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"x"}}"#,
            "\n"
        );
        let (tx, rx) = sync_channel(8);
        read_replies(input.as_bytes(), tx);
        let got: Vec<Event> = rx.iter().collect();
        assert!(matches!(
            got[0],
            Event::Reply {
                id: 3,
                ok: true,
                ..
            }
        ));
        assert!(matches!(
            got[1],
            Event::Reply {
                id: 4,
                ok: false,
                ..
            }
        ));
        assert!(matches!(got[2], Event::Closed(None)));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn reads_kib_fields_of_proc_status() {
        let status = "Name:\techo\nVmHWM:\t    2048 kB\nVmRSS:\t    1536 kB\nThreads:\t1\n";
        assert_eq!(status_field_kib(status, "VmHWM"), Some(2048));
        assert_eq!(status_field_kib(status, "VmRSS"), Some(1536));
        assert_eq!(status_field_kib(status, "VmSwap"), None);
        // A field whose name only starts like the one asked for is not it.
        assert_eq!(status_field_kib("VmRSSx:\t1 kB\n", "VmRSS"), None);
    }

    #[test]
    fn median_takes_each_figure_on_its_own() {
        let run = |per_sec: f64, p50: u64, peak: Option<u64>| Stats {
            requests: 10,
            per_sec,
            p50: Duration::from_micros(p50),
            p99: Duration::from_micros(p50 * 2),
            errors: 0,
            idle_rss_kib: None,
            peak_rss_kib: peak,
            cpu_us: peak.map(|p| p as f64 / 100.0),
        };
        let m = median(&[
            run(300.0, 5, Some(900)),
            run(100.0, 9, None),
            run(200.0, 7, Some(700)),
        ]);
        assert_eq!(m.per_sec, 200.0);
        assert_eq!(m.p50, Duration::from_micros(7));
        assert_eq!(m.p99, Duration::from_micros(14));
        assert_eq!(m.idle_rss_kib, None);
        // Unknown figures are left out, not counted as zero: the upper middle of 700 and 900.
        assert_eq!(m.peak_rss_kib, Some(900));
        assert_eq!(m.cpu_us, Some(9.0));
    }

    #[test]
    fn reads_the_time_on_a_cpu_from_schedstat() {
        assert_eq!(schedstat_ns("347910541 363718 22\n"), Some(347_910_541));
        assert_eq!(schedstat_ns(""), None);
        assert_eq!(schedstat_ns("x 1 2"), None);
    }

    #[test]
    fn counts_the_cpu_time_of_a_live_process() {
        // Every thread's file reads and parses (a kernel without scheduler statistics
        // reports zeros, so the figure itself is not asserted).
        let ns = super::cpu_ns(std::process::id());
        if std::path::Path::new("/proc/self/task").exists() {
            assert!(ns.is_some());
        }
    }
}
