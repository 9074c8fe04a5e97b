//! HTTP benchmark: `tools/call` echo round trips over Streamable HTTP, next to a bare tiny_http
//! floor, plus a run with many sessions each holding an open GET SSE stream.
//!
//! ```text
//! http-bench [-n REQUESTS] [--clients 1,16] [--rounds R] [--streams S]
//!            [--server PATH] [--floor PATH] [--no-streams]
//!            [--modes floor,legacy,floor-2026,2026] [--burst]
//! ```
//!
//! The bench starts the servers itself on 127.0.0.1 ephemeral ports (`PATH --http 127.0.0.1:0`,
//! waiting for the `listening on http://ADDR/mcp` line): by default `echo` (the real server)
//! and `http-floor` (tiny_http answering every POST with a canned result) from the bench's own
//! directory, e.g. `target/release/`. Each client is one keep-alive HTTP/1.1 connection
//! written on `std::net::TcpStream` that sends REQUESTS/clients calls one at a time. Modes:
//! - `legacy`: `initialize` + `notifications/initialized` per client (its own session), then
//!   calls with `Mcp-Session-Id` and `MCP-Protocol-Version: 2025-11-25`; the session is
//!   deleted afterwards;
//! - `2026`: stateless `MCP-Protocol-Version: 2026-07-28` POSTs with `Mcp-Method`/`Mcp-Name`
//!   headers and the `_meta` envelope;
//! - `floor` and `floor-2026`: the same calls as `legacy` (with a made-up session id of the
//!   same length) and as `2026`, byte for byte, sent to http-floor. Each era's ratio is taken
//!   against the floor that was sent its own requests, so the ratio measures only what the
//!   MCP layers add: tiny_http's cost of reading the extra headers and body is in both.
//!
//! Every (mode, clients) pair runs R times (default 3), interleaved, and the round with the
//! median throughput is reported. Then a fresh `echo` opens S sessions (default 1,000), each
//! with a GET SSE stream held open, and the bench reports the server's threads and resident
//! memory (from `/proc/PID/status`) and checks that `tools/call` still works meanwhile.
//! Output: Markdown tables, throughput ratios against the floor.
//!
//! Build with `cargo build --release -p mcp-examples` and run `target/release/http-bench`.

use mcp_examples::server_proc::{ServerProc, proc_status};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest wait for any one read, write, connect or server start.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Calls each client makes before the measurement starts.
const WARMUP: usize = 200;
/// Calls made to prove the server still answers while the streams are open.
const PROBE_CALLS: usize = 200;
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
/// The session id sent to the floor in legacy calls: 48 hex digits, like the server's ids.
const FLOOR_SESSION: &str = "000000000000000000000000000000000000000000000000";

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// http-floor, sent the bytes of a `Legacy` call (a session id of the same length included).
    Floor,
    /// http-floor, sent the bytes of a `Modern` call.
    FloorModern,
    Legacy,
    Modern,
}

impl Mode {
    fn is_floor(self) -> bool {
        matches!(self, Mode::Floor | Mode::FloorModern)
    }

    /// The floor mode sent the same bytes as this mode.
    fn floor(self) -> Mode {
        match self {
            Mode::Floor | Mode::Legacy => Mode::Floor,
            Mode::FloorModern | Mode::Modern => Mode::FloorModern,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Mode::Floor => "http-floor (legacy request)",
            Mode::FloorModern => "http-floor (2026-07-28 request)",
            Mode::Legacy => "echo legacy 2025-11-25",
            Mode::Modern => "echo stateless 2026-07-28",
        }
    }
}

/// Throughput and latency of one run.
struct Stats {
    requests: usize,
    per_sec: f64,
    p50: Duration,
    p99: Duration,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("http-bench: {e}");
        std::process::exit(1);
    }
}

struct Options {
    requests: usize,
    clients: Vec<usize>,
    rounds: usize,
    streams: usize,
    server: PathBuf,
    floor: PathBuf,
    modes: Vec<Mode>,
    burst: bool,
}

fn parse_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{s} is not a positive count")),
    }
}

fn options() -> Result<Option<Options>, String> {
    let dir = std::env::current_exe()
        .map_err(|e| format!("cannot find the bench's own path: {e}"))?
        .parent()
        .map(PathBuf::from)
        .ok_or("the bench's path has no parent directory")?;
    let mut o = Options {
        requests: 20_000,
        clients: vec![1, 16],
        rounds: 3,
        streams: 1000,
        server: dir.join("echo"),
        floor: dir.join("http-floor"),
        modes: vec![Mode::Floor, Mode::Legacy, Mode::FloorModern, Mode::Modern],
        burst: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-n" => o.requests = parse_count(&value("-n")?)?,
            "--clients" => {
                o.clients = value("--clients")?
                    .split(',')
                    .map(parse_count)
                    .collect::<Result<_, _>>()?;
            }
            "--rounds" => o.rounds = parse_count(&value("--rounds")?)?,
            "--streams" => o.streams = parse_count(&value("--streams")?)?,
            "--no-streams" => o.streams = 0,
            "--burst" => o.burst = true,
            "--modes" => {
                o.modes = value("--modes")?
                    .split(',')
                    .map(|m| match m {
                        "floor" => Ok(Mode::Floor),
                        "legacy" => Ok(Mode::Legacy),
                        "floor-2026" => Ok(Mode::FloorModern),
                        "2026" => Ok(Mode::Modern),
                        _ => Err(format!(
                            "unknown mode {m} (floor, legacy, floor-2026, 2026)"
                        )),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--server" => o.server = PathBuf::from(value("--server")?),
            "--floor" => o.floor = PathBuf::from(value("--floor")?),
            "-h" | "--help" => {
                println!(
                    "usage: http-bench [-n REQUESTS] [--clients 1,16] [--rounds R] [--streams S] \
                     [--server PATH] [--floor PATH] [--no-streams] [--modes floor,legacy,floor-2026,2026] [--burst]"
                );
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other} (see --help)")),
        }
    }
    for p in [&o.server, &o.floor] {
        if !p.exists() {
            return Err(format!(
                "{} not found; cargo build --release -p mcp-examples, or pass --server/--floor",
                p.display()
            ));
        }
    }
    Ok(Some(o))
}

fn run() -> Result<(), String> {
    let Some(o) = options()? else {
        return Ok(());
    };
    let floor = ServerProc::start(&o.floor, IO_TIMEOUT)?;
    let echo = ServerProc::start_with(&o.server, &["--no-rate-limits"], IO_TIMEOUT)?;
    let modes = o.modes.clone();
    let mut rows: Vec<(Mode, usize, Stats)> = Vec::new();
    for &clients in &o.clients {
        let mut rounds: Vec<Vec<Stats>> = modes.iter().map(|_| Vec::new()).collect();
        for round in 0..o.rounds {
            for (i, &mode) in modes.iter().enumerate() {
                let target = if mode.is_floor() { &floor } else { &echo };
                eprintln!(
                    "http-bench: {} clients {clients} round {}/{}",
                    mode.label(),
                    round + 1,
                    o.rounds
                );
                let s = measure(target.addr, mode, clients, o.requests, o.burst)
                    .map_err(|e| format!("{} with {clients} clients: {e}", mode.label()))?;
                rounds[i].push(s);
            }
        }
        for (i, mut r) in rounds.into_iter().enumerate() {
            r.sort_by(|a, b| a.per_sec.total_cmp(&b.per_sec));
            let median = r.swap_remove(r.len() / 2);
            rows.push((modes[i], clients, median));
        }
    }
    let echo_status = proc_status(echo.pid());
    drop(echo);
    drop(floor);
    print_throughput(&rows, o.rounds);
    if let Some((threads, rss)) = echo_status {
        println!();
        println!("echo after the runs above: {threads} threads, VmRSS {rss} kB");
    }
    if o.streams > 0 {
        println!();
        streams(&o.server, o.streams)?;
    }
    Ok(())
}

// ---- a minimal HTTP/1.1 keep-alive client

/// One HTTP response, body read whole (Content-Length or chunked).
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of the body: the body itself, or the last `data:` of an SSE body.
    fn message(&self) -> Result<Value, String> {
        let is_sse = self
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let text = String::from_utf8_lossy(&self.body);
        let json = if is_sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|d| !d.is_empty())
                .unwrap_or("")
                .to_owned()
        } else {
            text.into_owned()
        };
        serde_json::from_str(&json).map_err(|e| format!("unreadable answer ({e}): {json}"))
    }
}

/// One keep-alive connection.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
    buf: Vec<u8>,
}

impl Conn {
    fn open(addr: SocketAddr) -> Result<Conn, String> {
        let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT).map_err(|e| {
            let hint = if e.raw_os_error() == Some(24) {
                " (raise `ulimit -n`)"
            } else {
                ""
            };
            format!("connect {addr}: {e}{hint}")
        })?;
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|_| s.set_write_timeout(Some(IO_TIMEOUT)))
            .map_err(|e| e.to_string())?;
        let writer = s.try_clone().map_err(|e| e.to_string())?;
        Ok(Conn {
            reader: BufReader::new(s),
            writer,
            host: addr.to_string(),
            buf: Vec::with_capacity(1024),
        })
    }

    /// Sends one request (in one write) without reading the answer.
    fn send(&mut self, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<(), String> {
        self.buf.clear();
        let _ = write!(
            self.buf,
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\n",
            self.host
        );
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("accept"))
        {
            self.buf
                .extend_from_slice(b"Accept: application/json, text/event-stream\r\n");
        }
        if !body.is_empty() {
            let _ = write!(
                self.buf,
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            );
        }
        for (n, v) in headers {
            let _ = write!(self.buf, "{n}: {v}\r\n");
        }
        self.buf.extend_from_slice(b"\r\n");
        self.buf.extend_from_slice(body);
        self.writer
            .write_all(&self.buf)
            .map_err(|e| format!("write: {e}"))
    }

    fn request(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Resp, String> {
        self.send(method, headers, body)?;
        let (status, headers) = self.read_head()?;
        let body = self.read_body(&headers)?;
        Ok(Resp {
            status,
            headers,
            body,
        })
    }

    fn line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => Err("connection closed by the server".into()),
            Ok(_) => Ok(line),
            Err(e) => Err(format!("read: {e}")),
        }
    }

    fn read_head(&mut self) -> Result<(u16, Vec<(String, String)>), String> {
        let status_line = self.line()?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or(format!("bad status line {status_line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let l = self.line()?;
            let l = l.trim_end();
            if l.is_empty() {
                return Ok((status, headers));
            }
            if let Some((n, v)) = l.split_once(':') {
                headers.push((n.trim().to_owned(), v.trim().to_owned()));
            }
        }
    }

    fn read_body(&mut self, headers: &[(String, String)]) -> Result<Vec<u8>, String> {
        let get = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let mut body = Vec::new();
        if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                let size_line = self.line()?;
                let size_hex = size_line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size_hex, 16)
                    .map_err(|_| format!("bad chunk size {size_line:?}"))?;
                if size == 0 {
                    // Trailers, then the blank line.
                    while !self.line()?.trim_end().is_empty() {}
                    return Ok(body);
                }
                let start = body.len();
                body.resize(start + size, 0);
                self.reader
                    .read_exact(&mut body[start..])
                    .map_err(|e| format!("read chunk: {e}"))?;
                self.line()?;
            }
        }
        let len = match get("content-length") {
            Some(v) => v
                .parse::<usize>()
                .map_err(|_| format!("bad Content-Length {v:?}"))?,
            None => 0,
        };
        body.resize(len, 0);
        self.reader
            .read_exact(&mut body)
            .map_err(|e| format!("read body: {e}"))?;
        Ok(body)
    }
}

// ---- the MCP exchanges

/// An MCP client on one connection, in one mode.
struct McpClient {
    conn: Conn,
    mode: Mode,
    session: Option<String>,
    next_id: u64,
}

impl McpClient {
    fn connect(addr: SocketAddr, mode: Mode) -> Result<McpClient, String> {
        let mut c = McpClient {
            conn: Conn::open(addr)?,
            mode,
            session: None,
            next_id: 0,
        };
        if mode == Mode::Legacy {
            c.initialize()?;
        }
        Ok(c)
    }

    fn initialize(&mut self) -> Result<(), String> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"http-bench","version":"1.0.0"}}}}}}"#
        );
        let r = self.conn.request("POST", &[], body.as_bytes())?;
        let msg = if r.status == 200 {
            r.message()?
        } else {
            Value::Null
        };
        if msg.get("result").is_none() {
            return Err(format!(
                "initialize answered {}: {}",
                r.status,
                String::from_utf8_lossy(&r.body)
            ));
        }
        let sid = r
            .header("mcp-session-id")
            .ok_or("initialize answer has no Mcp-Session-Id")?
            .to_owned();
        let headers = [
            ("Mcp-Session-Id", sid.as_str()),
            ("MCP-Protocol-Version", LEGACY),
        ];
        let r = self.conn.request(
            "POST",
            &headers,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )?;
        if r.status != 202 {
            return Err(format!("notifications/initialized answered {}", r.status));
        }
        self.session = Some(sid);
        self.next_id = 1;
        Ok(())
    }

    /// One `tools/call` echo round trip; checks the answer.
    fn call(&mut self) -> Result<(), String> {
        let id = self.next_id;
        self.next_id += 1;
        let resp = match self.mode {
            Mode::Modern | Mode::FloorModern => {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
                );
                let headers = [
                    ("MCP-Protocol-Version", MODERN),
                    ("Mcp-Method", "tools/call"),
                    ("Mcp-Name", "echo"),
                ];
                self.conn.request("POST", &headers, body.as_bytes())?
            }
            Mode::Legacy | Mode::Floor => {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}}}}}}"#
                );
                // The floor gets a made-up session id as long as the real ones.
                let sid = self.session.as_deref().unwrap_or(FLOOR_SESSION);
                let headers = [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", LEGACY)];
                self.conn.request("POST", &headers, body.as_bytes())?
            }
        };
        if resp.status != 200 {
            return Err(format!(
                "tools/call answered HTTP {}: {}",
                resp.status,
                String::from_utf8_lossy(&resp.body)
            ));
        }
        if resp
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"))
        {
            return Err("the server closed the keep-alive connection (an SSE answer?)".into());
        }
        let msg = resp.message()?;
        let ok = msg.get("id").and_then(Value::as_u64) == Some(id)
            && msg
                .pointer("/result/content/0/text")
                .and_then(Value::as_str)
                == Some("hello");
        if ok {
            Ok(())
        } else {
            Err(format!("unexpected answer to {id}: {msg}"))
        }
    }

    /// Ends a legacy session (DELETE), so sessions do not pile up in the server.
    fn close(mut self) {
        if let Some(sid) = self.session.take() {
            let _ = self.conn.request(
                "DELETE",
                &[("Mcp-Session-Id", &sid), ("MCP-Protocol-Version", LEGACY)],
                b"",
            );
        }
    }
}

/// `clients` connections, each making `requests / clients` calls one at a time, started
/// together after a warm-up.
///
/// The connections are opened one after another, each completing a call before the next one
/// connects, unless `burst`: tiny_http 0.12's TaskPool counts idle threads before they take
/// the connection they were woken for, so of several connections arriving at once one can be
/// queued until another connection ends, which with keep-alive clients is never (see
/// `--burst`, and the report).
fn measure(
    addr: SocketAddr,
    mode: Mode,
    clients: usize,
    requests: usize,
    burst: bool,
) -> Result<Stats, String> {
    let per_client = (requests / clients).max(1);
    let barrier = Arc::new(Barrier::new(clients + 1));
    let mut ready = Vec::with_capacity(clients);
    for _ in 0..clients {
        ready.push(if burst {
            None
        } else {
            let mut c = McpClient::connect(addr, mode)?;
            c.call()?;
            Some(c)
        });
    }
    let workers: Vec<_> = ready
        .into_iter()
        .map(|ready| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let prepared = ready
                    .map_or_else(|| McpClient::connect(addr, mode), Ok)
                    .and_then(|mut c| (0..WARMUP).try_for_each(|_| c.call()).map(|()| c));
                // Everyone meets at the barrier, even a client that failed to prepare.
                barrier.wait();
                let mut c = prepared?;
                let mut lat = Vec::with_capacity(per_client);
                for _ in 0..per_client {
                    let t = Instant::now();
                    c.call()?;
                    lat.push(t.elapsed());
                }
                let done = Instant::now();
                c.close();
                Ok::<_, String>((lat, done))
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let mut latencies = Vec::with_capacity(per_client * clients);
    let mut end = start;
    for w in workers {
        let (lat, done) = w.join().map_err(|_| "a client thread panicked")??;
        latencies.extend(lat);
        end = end.max(done);
    }
    latencies.sort_unstable();
    let pick = |pct: usize| latencies[(latencies.len() * pct / 100).min(latencies.len() - 1)];
    Ok(Stats {
        requests: latencies.len(),
        per_sec: latencies.len() as f64 / end.duration_since(start).as_secs_f64(),
        p50: pick(50),
        p99: pick(99),
    })
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn print_throughput(rows: &[(Mode, usize, Stats)], rounds: usize) {
    println!("## tools/call echo over HTTP/1.1 keep-alive (median of {rounds} rounds)");
    println!();
    println!(
        "| server / mode | clients | requests | req/s | p50 (µs) | p99 (µs) | req/s vs floor |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (mode, clients, s) in rows {
        let floor = rows
            .iter()
            .find(|(m, c, _)| *m == mode.floor() && c == clients)
            .map(|(_, _, f)| f.per_sec);
        let ratio = floor
            .map(|f| format!("{:.0}%", 100.0 * s.per_sec / f))
            .unwrap_or_else(|| "-".into());
        println!(
            "| {} | {clients} | {} | {:.0} | {:.1} | {:.1} | {ratio} |",
            mode.label(),
            s.requests,
            s.per_sec,
            micros(s.p50),
            micros(s.p99)
        );
    }
    let get = |m: Mode, c: usize| {
        rows.iter()
            .find(|(rm, rc, _)| *rm == m && *rc == c)
            .map(|(_, _, s)| s.per_sec)
    };
    let verdict = |x: f64| if x >= 0.7 { "met" } else { "NOT met" };
    let mut goals = Vec::new();
    for (mode, name) in [(Mode::Legacy, "legacy"), (Mode::Modern, "2026-07-28")] {
        if let (Some(floor), Some(x)) = (get(mode.floor(), 16), get(mode, 16)) {
            goals.push(format!(
                "{name} {:.0}% ({})",
                100.0 * x / floor,
                verdict(x / floor)
            ));
        }
    }
    if !goals.is_empty() {
        println!();
        println!(
            "goal (16 clients >= 70% of the floor sent the same requests): {}",
            goals.join(", ")
        );
    }
}

// ---- many sessions with open GET streams

/// `HttpServerBuilder::max_streams` by default.
const STREAM_CAP: usize = 512;

/// Opens `n` legacy sessions on a fresh server, each holding a GET SSE stream, and reports the
/// server's threads and memory, and whether `tools/call` still works meanwhile.
fn streams(server: &Path, n: usize) -> Result<(), String> {
    let echo = ServerProc::start_with(server, &["--no-rate-limits"], IO_TIMEOUT)?;
    let pid = echo.pid();
    let idle = proc_status(pid).ok_or("cannot read /proc/PID/status of the server")?;
    let started = Instant::now();
    let mut open = Vec::with_capacity(n);
    let mut refused: Option<String> = None;
    for i in 0..n {
        match open_stream(echo.addr) {
            Ok(c) => open.push(c),
            Err(e) => {
                refused = Some(format!("stream {} of {n}: {e}", i + 1));
                break;
            }
        }
    }
    let open_time = started.elapsed();
    let held = proc_status(pid).ok_or("the server is gone")?;

    // Meanwhile: a legacy session and a stateless exchange, each on a new connection.
    let probe = |mode: Mode| -> Result<Stats, String> {
        let mut c = McpClient::connect(echo.addr, mode)?;
        let mut lat = Vec::with_capacity(PROBE_CALLS);
        let t0 = Instant::now();
        for _ in 0..PROBE_CALLS {
            let t = Instant::now();
            c.call()?;
            lat.push(t.elapsed());
        }
        let total = t0.elapsed();
        c.close();
        lat.sort_unstable();
        Ok(Stats {
            requests: lat.len(),
            per_sec: lat.len() as f64 / total.as_secs_f64(),
            p50: lat[lat.len() / 2],
            p99: lat[(lat.len() * 99 / 100).min(lat.len() - 1)],
        })
    };
    let legacy = probe(Mode::Legacy);
    let modern = probe(Mode::Modern);
    // Still open? A stream the server ended would now read EOF; none should have.
    let alive = open.iter().filter(|c| still_open(c)).count();
    let count = open.len();
    drop(open);
    drop(echo);

    println!("## {n} legacy sessions, each holding an open GET SSE stream (a fresh echo)");
    println!();
    println!("| state | open GET streams | server threads | server VmRSS (MiB) |");
    println!("| --- | ---: | ---: | ---: |");
    println!(
        "| after start | 0 | {} | {:.1} |",
        idle.0,
        idle.1 as f64 / 1024.0
    );
    println!(
        "| streams open | {count} | {} | {:.1} |",
        held.0,
        held.1 as f64 / 1024.0
    );
    println!();
    println!(
        "opened {count} sessions+streams in {:.2} s ({:.0}/s); {alive} still open after the probes; \
         per stream: {:.1} threads, {:.0} KiB",
        open_time.as_secs_f64(),
        count as f64 / open_time.as_secs_f64().max(1e-9),
        (held.0 as f64 - idle.0 as f64) / count.max(1) as f64,
        (held.1 as f64 - idle.1 as f64) / count.max(1) as f64
    );
    if let Some(why) = &refused {
        println!("stopped opening streams: {why}");
    }
    for (label, r) in [("legacy session", &legacy), ("2026-07-28", &modern)] {
        match r {
            Ok(s) => println!(
                "tools/call meanwhile ({label}, new connection): {} ok, p50 {:.1} µs, p99 {:.1} µs",
                s.requests,
                micros(s.p50),
                micros(s.p99)
            ),
            Err(e) => println!("tools/call meanwhile ({label}): FAILED: {e}"),
        }
    }
    // The server's default cap on standing streams (`HttpServerBuilder::max_streams`): beyond
    // it a stream is refused 503, which is the cap working, not a failure.
    let at_cap = |why: &String| count >= STREAM_CAP && why.contains("HTTP 503");
    match (refused, legacy, modern) {
        (None, Ok(_), Ok(_)) if alive == count => Ok(()),
        (Some(why), Ok(_), Ok(_)) if alive == count && at_cap(&why) => {
            println!("(the server's cap on standing streams, {STREAM_CAP}, refused the rest)");
            Ok(())
        }
        _ => Err("the many-streams run did not fully succeed (see above)".into()),
    }
}

/// A legacy session with its GET SSE stream open (the response head read, the body left
/// unread on the connection).
fn open_stream(addr: SocketAddr) -> Result<Conn, String> {
    let mut c = McpClient::connect(addr, Mode::Legacy)?;
    let sid = c.session.clone().ok_or("no session")?;
    c.conn.send(
        "GET",
        &[
            ("Mcp-Session-Id", &sid),
            ("MCP-Protocol-Version", LEGACY),
            ("Accept", "text/event-stream"),
        ],
        b"",
    )?;
    let (status, headers) = c.conn.read_head()?;
    let sse = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("content-type") && v.starts_with("text/event-stream"));
    if status != 200 || !sse {
        return Err(format!("GET stream answered HTTP {status} {headers:?}"));
    }
    Ok(c.conn)
}

/// Whether the server still holds the stream: no EOF or error waiting on the socket.
fn still_open(c: &Conn) -> bool {
    let s = c.reader.get_ref();
    if s.set_nonblocking(true).is_err() {
        return false;
    }
    let mut buf = [0u8; 4096];
    let mut peek = s;
    let open = loop {
        match peek.read(&mut buf) {
            Ok(0) => break false,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break true,
            Err(_) => break false,
        }
    };
    let _ = s.set_nonblocking(false);
    open
}
