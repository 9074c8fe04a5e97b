//! Sets this project's stdio `echo` against mcport's two runtimes, rmcp and the bare floor.
//!
//! ```text
//! compare [-n REQUESTS] [--rounds R] [--window W] [--ours DIR] [--peers DIR]
//! ```
//!
//! It builds nothing. It runs the workspace's own load generator, `stdio-bench`, once over all
//! five servers with `--rounds R --json`, so every server gets the same client, the same bytes
//! and its share of the machine's drifting load (the rounds are interleaved), then prints one
//! Markdown table of the medians with the machine, the load average before and after, the
//! versions and the command lines, ready to paste into a README.
//!
//! `--ours` is the main workspace's release directory (default `target/release`, from the
//! repository root: `echo`, `stdio-floor`, `stdio-bench`); `--peers` holds the mcport and rmcp
//! servers (default: this program's own directory, where `cargo build --release` put them).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// The lock file this program was built with: the peers' exact versions come from it.
const LOCK: &str = include_str!("../../Cargo.lock");

/// The servers in the table's order: column title, program, directory (ours or peers), and
/// whether it speaks MCP (handshake) or is the floor (`--raw`).
const SERVERS: [(&str, &str, Dir, bool); 5] = [
    ("this project's `echo`", "echo", Dir::Ours, true),
    (
        "mcport inline (`McpServer`)",
        "mcport-echo",
        Dir::Peers,
        true,
    ),
    (
        "mcport pooled (`ConcurrentMcpServer`)",
        "mcport-pooled-echo",
        Dir::Peers,
        true,
    ),
    ("rmcp", "rmcp-echo", Dir::Peers, true),
    ("floor (`stdio-floor`)", "stdio-floor", Dir::Ours, false),
];

#[derive(Clone, Copy)]
enum Dir {
    Ours,
    Peers,
}

struct Options {
    requests: usize,
    rounds: usize,
    window: usize,
    ours: Option<PathBuf>,
    peers: Option<PathBuf>,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("compare: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let Some(o) = parse_args()? else {
        return Ok(());
    };
    let own_dir = std::env::current_exe()
        .map_err(|e| format!("cannot find this program's path: {e}"))?
        .parent()
        .map(Path::to_path_buf)
        .ok_or("this program's path has no parent directory")?;
    let ours = match o.ours {
        Some(dir) => dir,
        None => default_ours(&own_dir),
    };
    let peers = o.peers.unwrap_or(own_dir);

    let bench = ours.join("stdio-bench");
    let mut argv: Vec<String> = vec![
        bench.display().to_string(),
        "-n".into(),
        o.requests.to_string(),
        "--window".into(),
        o.window.to_string(),
        "--rounds".into(),
        o.rounds.to_string(),
        "--json".into(),
        // mcport's pooled runtime refuses calls beyond its queue ("request queue is full"):
        // counted and shown, not fatal.
        "--allow-errors".into(),
    ];
    let mut missing = Vec::new();
    if !bench.exists() {
        missing.push(bench.display().to_string());
    }
    for (_, program, dir, handshake) in SERVERS {
        let path = match dir {
            Dir::Ours => ours.join(program),
            Dir::Peers => peers.join(program),
        };
        if !path.exists() {
            missing.push(path.display().to_string());
        }
        argv.push(if handshake { "--server" } else { "--raw" }.into());
        argv.push(path.display().to_string());
    }
    if !missing.is_empty() {
        return Err(format!(
            "not built: {}\nbuild with `cargo build --release -p mcp-examples && cargo build \
             --release --manifest-path bench/Cargo.toml` from the repository root, or pass \
             --ours / --peers",
            missing.join(", ")
        ));
    }

    let load_before = load_average();
    let started = SystemTime::now();
    eprintln!("compare: running {}", argv.join(" "));
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
    if !output.status.success() {
        return Err(format!("stdio-bench failed ({})", output.status));
    }
    let load_after = load_average();
    let report: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("stdio-bench's --json output is not JSON: {e}"))?;

    print_table(&report, o.window)?;
    println!();
    print_context(
        &argv,
        started,
        load_before.as_deref(),
        load_after.as_deref(),
    );
    Ok(())
}

fn parse_args() -> Result<Option<Options>, String> {
    let mut o = Options {
        requests: 60_000,
        rounds: 3,
        window: 64,
        ours: None,
        peers: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-n" => o.requests = count(&value("-n")?)?,
            "--rounds" => o.rounds = count(&value("--rounds")?)?,
            "--window" => o.window = count(&value("--window")?)?,
            "--ours" => o.ours = Some(PathBuf::from(value("--ours")?)),
            "--peers" => o.peers = Some(PathBuf::from(value("--peers")?)),
            "-h" | "--help" => {
                println!(
                    "usage: compare [-n REQUESTS] [--rounds R] [--window W] [--ours DIR] \
                     [--peers DIR]\n(defaults: -n 60000 --rounds 3 --window 64 --ours \
                     target/release --peers the directory of this program)"
                );
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other} (see --help)")),
        }
    }
    Ok(Some(o))
}

fn count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{s} is not a positive count")),
    }
}

/// `target/release` of the current directory if it holds the bench, else the one three levels
/// above this program (`<root>/bench/target/release/compare` gives `<root>/target/release`).
fn default_ours(own_dir: &Path) -> PathBuf {
    let here = PathBuf::from("target/release");
    if here.join("stdio-bench").exists() {
        return here;
    }
    own_dir
        .ancestors()
        .nth(3)
        .map(|root| root.join("target/release"))
        .unwrap_or(here)
}

/// One row of the bench's JSON: its medians and each round's requests per second.
struct Figures<'a> {
    median: &'a Value,
    runs: Vec<f64>,
    requests: u64,
}

fn print_table(report: &Value, window: usize) -> Result<(), String> {
    let rows = report["rows"]
        .as_array()
        .ok_or("stdio-bench's JSON has no rows")?;
    let find = |program: &str, w: usize| -> Result<Figures<'_>, String> {
        let row = rows
            .iter()
            .find(|r| {
                r["command"]
                    .as_str()
                    .and_then(|c| Path::new(c).file_name())
                    .is_some_and(|f| f == program)
                    && r["window"].as_u64() == Some(w as u64)
            })
            .ok_or(format!("no figures for {program} at window {w}"))?;
        let runs = row["runs"]
            .as_array()
            .map(|runs| runs.iter().filter_map(|r| r["per_sec"].as_f64()).collect())
            .unwrap_or_default();
        Ok(Figures {
            median: &row["median"],
            runs,
            requests: report["requests"].as_u64().unwrap_or(0),
        })
    };
    let mut table: Vec<[Vec<String>; 2]> = Vec::new();
    for (_, program, _, _) in SERVERS {
        table.push([find(program, 1)?, find(program, window)?].map(|f| cells(&f)));
    }
    let floor = |w: usize| {
        find("stdio-floor", w)
            .ok()
            .and_then(|f| f.median["per_sec"].as_f64())
    };

    let rounds = report["rounds"].as_u64().unwrap_or(0);
    let requests = report["requests"].as_u64().unwrap_or(0);
    println!(
        "stdio, `tools/call` echo, {requests} calls per run, medians of {rounds} interleaved \
         rounds (req/s: median, then the lowest and highest round)."
    );
    println!();
    let titles: Vec<&str> = SERVERS.iter().map(|s| s.0).collect();
    println!("| window | | {} |", titles.join(" | "));
    println!("| ---: | --- |{}", " ---: |".repeat(titles.len()));
    let names = [
        "req/s",
        "range",
        "vs floor",
        "p50 / p99 (µs)",
        "error answers",
        "peak RSS (MiB)",
    ];
    for (wi, w) in [1, window].into_iter().enumerate() {
        for (k, name) in names.iter().enumerate() {
            let values: Vec<String> = SERVERS
                .iter()
                .enumerate()
                .map(|(i, (_, program, _, _))| {
                    if *name == "vs floor" {
                        let own = find(program, w)
                            .ok()
                            .and_then(|f| f.median["per_sec"].as_f64());
                        match (own, floor(w)) {
                            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                            _ => "-".into(),
                        }
                    } else {
                        table[i][wi][k].clone()
                    }
                })
                .collect();
            let label = if k == 0 { w.to_string() } else { String::new() };
            println!("| {label} | {name} | {} |", values.join(" | "));
        }
    }
    let idle: Vec<String> = SERVERS
        .iter()
        .map(|(_, program, _, _)| {
            find(program, 1)
                .ok()
                .map(|f| mib(&f.median["idle_rss_kib"]))
                .unwrap_or_else(|| "-".into())
        })
        .collect();
    println!("| | idle RSS (MiB) | {} |", idle.join(" | "));
    println!();
    println!(
        "Error answers (a server refusing a call) count in req/s and latency like any answer. \
         Peak RSS is VmHWM just before stdin closes; idle RSS is VmRSS after the handshake."
    );
    Ok(())
}

/// The cells of one server at one window, in the order of `print_table`'s names ("vs floor"
/// is filled in there).
fn cells(f: &Figures<'_>) -> Vec<String> {
    let m = f.median;
    let num = |key: &str| m[key].as_f64();
    let per_sec = num("per_sec").map_or("-".into(), thousands);
    let lo = f.runs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = f.runs.iter().copied().fold(0.0, f64::max);
    let range = if f.runs.is_empty() {
        "-".into()
    } else {
        format!("{} – {}", thousands(lo), thousands(hi))
    };
    let lat = match (num("p50_us"), num("p99_us")) {
        (Some(a), Some(b)) => format!("{a:.1} / {b:.1}"),
        _ => "-".into(),
    };
    let errors = match (m["errors"].as_u64(), f.requests) {
        (Some(0), _) => "0".into(),
        (Some(e), n) if n > 0 => format!("{e} ({:.0}%)", e as f64 * 100.0 / n as f64),
        (Some(e), _) => e.to_string(),
        (None, _) => "-".into(),
    };
    vec![
        per_sec,
        range,
        String::new(),
        lat,
        errors,
        mib(&m["peak_rss_kib"]),
    ]
}

fn mib(kib: &Value) -> String {
    kib.as_f64()
        .map_or("-".into(), |k| format!("{:.1}", k / 1024.0))
}

/// 64540.3 as "64,540".
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn print_context(argv: &[String], started: SystemTime, before: Option<&str>, after: Option<&str>) {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    println!("- date: {} (UTC)", utc_date_time(started));
    println!("- machine: {cpus} CPUs (nproc), {model}");
    println!(
        "- load average (1, 5, 15 min): before {}, after {}",
        before.unwrap_or("unknown"),
        after.unwrap_or("unknown")
    );
    println!(
        "- versions: this project at {}, mcport {}, rmcp {} (with tokio {}), {}",
        git_commit().unwrap_or_else(|| "commit unknown".into()),
        locked_version("mcport").unwrap_or("?"),
        locked_version("rmcp").unwrap_or("?"),
        locked_version("tokio").unwrap_or("?"),
        rustc_version().unwrap_or_else(|| "rustc unknown".into())
    );
    let me: Vec<String> = std::env::args().collect();
    println!("- command: `{}`", me.join(" "));
    println!("- load generator: `{}`", argv.join(" "));
}

/// The first three fields of `/proc/loadavg`.
fn load_average() -> Option<String> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The version of `name` in the lock file this program was built with.
fn locked_version(name: &str) -> Option<&'static str> {
    let wanted = format!("name = \"{name}\"");
    let mut lines = LOCK.lines();
    while let Some(line) = lines.next() {
        if line == wanted {
            return lines
                .next()?
                .strip_prefix("version = \"")?
                .strip_suffix('"');
        }
    }
    None
}

fn git_commit() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let commit = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !commit.is_empty()).then(|| format!("commit {commit}"))
}

fn rustc_version() -> Option<String> {
    let out = Command::new("rustc").arg("--version").output().ok()?;
    let v = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !v.is_empty()).then_some(v)
}

/// `YYYY-MM-DD HH:MM` in UTC, from the days since 1970 (the proleptic Gregorian calendar,
/// counted in 400-year eras of 146,097 days).
fn utc_date_time(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::{locked_version, thousands, utc_date_time};
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn formats_thousands() {
        assert_eq!(thousands(0.4), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(64_540.3), "64,540");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
    }

    #[test]
    fn dates_from_unix_seconds() {
        assert_eq!(utc_date_time(UNIX_EPOCH), "1970-01-01 00:00");
        // 2024-02-29 12:34 UTC, a leap day.
        let t = UNIX_EPOCH + Duration::from_secs(1_709_210_040);
        assert_eq!(utc_date_time(t), "2024-02-29 12:34");
    }

    #[test]
    fn peers_versions_come_from_the_lock_file() {
        assert_eq!(locked_version("mcport"), Some("0.6.1"));
        assert!(locked_version("rmcp").is_some_and(|v| v.starts_with("3.")));
        assert_eq!(locked_version("no-such-crate"), None);
    }
}
