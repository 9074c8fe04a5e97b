//! Sets this project's stdio `echo` against mcport's two runtimes, rmcp, the bare floor and a
//! server that does no work.
//!
//! ```text
//! compare [-n REQUESTS] [--rounds R] [--window W] [--pin CPU] [--ours DIR] [--peers DIR]
//! ```
//!
//! It builds nothing. It runs the workspace's own load generator, `stdio-bench`, once over all
//! seven servers with `--rounds R --json`, so every server gets the same client, the same bytes
//! and its share of the machine's drifting load (the rounds are interleaved), then prints one
//! Markdown table of the medians with the machine, the load average before and after, the
//! versions and the command lines, ready to paste into a README.
//!
//! `--pin CPU` runs the load generator, and so every server it starts, on that one CPU (with
//! `taskset -c CPU`, from util-linux). One at a time (window 1) a round trip is two pipe
//! wake-ups and the server's code, and unpinned, whether the client and the server wake each
//! other on one core (a few µs) or across two (tens of µs, an idle core woken) is the
//! scheduler's choice, made anew for each server process and kept for its run: the medians then
//! say more about that choice than about the servers. On one core every server meets the same
//! wake-ups and its own code is what differs.
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

/// One column of the table.
struct Server {
    title: &'static str,
    program: &'static str,
    /// Extra arguments; stdio-bench splits its commands on spaces.
    args: &'static str,
    dir: Dir,
    /// An MCP server (`--server`, handshake first) or the floor (`--raw`).
    handshake: bool,
}

/// The servers in the table's order.
const SERVERS: [Server; 7] = [
    Server {
        title: "this project's `echo`",
        program: "echo",
        args: "",
        dir: Dir::Ours,
        handshake: true,
    },
    Server {
        title: "mcport inline (`McpServer`)",
        program: "mcport-echo",
        args: "",
        dir: Dir::Peers,
        handshake: true,
    },
    Server {
        title: "mcport pooled (`ConcurrentMcpServer`)",
        program: "mcport-pooled-echo",
        args: "",
        dir: Dir::Peers,
        handshake: true,
    },
    Server {
        title: "rmcp (`stdio()`)",
        program: "rmcp-echo",
        args: "",
        dir: Dir::Peers,
        handshake: true,
    },
    Server {
        title: "rmcp (`stdio_pipes()`)",
        program: "rmcp-echo",
        args: "--pipes",
        dir: Dir::Peers,
        handshake: true,
    },
    Server {
        title: "floor (`stdio-floor`)",
        program: "stdio-floor",
        args: "",
        dir: Dir::Ours,
        handshake: false,
    },
    Server {
        title: "no work (`stdio-null`)",
        program: "stdio-null",
        args: "",
        dir: Dir::Peers,
        handshake: false,
    },
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
    pin: Option<usize>,
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
    let mut argv: Vec<String> = match o.pin {
        Some(cpu) => vec!["taskset".into(), "-c".into(), cpu.to_string()],
        None => Vec::new(),
    };
    argv.extend([
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
    ]);
    let mut missing = Vec::new();
    if !bench.exists() {
        missing.push(bench.display().to_string());
    }
    for s in &SERVERS {
        let path = match s.dir {
            Dir::Ours => ours.join(s.program),
            Dir::Peers => peers.join(s.program),
        };
        if !path.exists() {
            missing.push(path.display().to_string());
        }
        argv.push(if s.handshake { "--server" } else { "--raw" }.into());
        argv.push(
            format!("{} {}", path.display(), s.args)
                .trim_end()
                .to_string(),
        );
    }
    missing.dedup();
    if !missing.is_empty() {
        return Err(format!(
            "not built: {}\nbuild with `cargo build --release -p mcp-examples \
             --no-default-features && cargo build --release --manifest-path bench/Cargo.toml` \
             from the repository root, or pass --ours / --peers",
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

    if let Some(cpu) = o.pin {
        println!("Every program on CPU {cpu} alone (`taskset -c {cpu}`).");
        println!();
    }
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
        pin: None,
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
            "--pin" => {
                let cpu = value("--pin")?;
                o.pin = Some(
                    cpu.parse()
                        .map_err(|_| format!("{cpu} is not a CPU number"))?,
                );
            }
            "--ours" => o.ours = Some(PathBuf::from(value("--ours")?)),
            "--peers" => o.peers = Some(PathBuf::from(value("--peers")?)),
            "-h" | "--help" => {
                println!(
                    "usage: compare [-n REQUESTS] [--rounds R] [--window W] [--pin CPU] \
                     [--ours DIR] [--peers DIR]\n(defaults: -n 60000 --rounds 3 --window 64, \
                     unpinned, --ours target/release --peers the directory of this program)"
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
    // stdio-bench reports the servers in the order they were given, each at window 1 then W
    // (`wi` 0 and 1).
    let find = |server: usize, wi: usize| -> Result<Figures<'_>, String> {
        let s = &SERVERS[server];
        let w = [1, window][wi];
        let row = rows
            .get(2 * server + wi)
            .filter(|r| r["window"].as_u64() == Some(w as u64))
            .filter(|r| {
                r["command"].as_str().is_some_and(|c| {
                    let mut words = c.split(' ');
                    words
                        .next()
                        .and_then(|p| Path::new(p).file_name())
                        .is_some_and(|f| f == s.program)
                        && words.collect::<Vec<_>>().join(" ") == s.args
                })
            })
            .ok_or(format!("no figures for {} at window {w}", s.title))?;
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
    // Per server, its figures at window 1 and at window W.
    let mut figures = Vec::with_capacity(SERVERS.len());
    for i in 0..SERVERS.len() {
        figures.push([find(i, 0)?, find(i, 1)?]);
    }
    let per_sec = |f: &Figures<'_>| f.median["per_sec"].as_f64();
    let floor = SERVERS.iter().position(|s| !s.handshake);

    let rounds = report["rounds"].as_u64().unwrap_or(0);
    let requests = report["requests"].as_u64().unwrap_or(0);
    println!(
        "stdio, `tools/call` echo, {requests} calls per run, medians of {rounds} interleaved \
         rounds (req/s: median, then the lowest and highest round)."
    );
    println!();
    let titles: Vec<&str> = SERVERS.iter().map(|s| s.title).collect();
    println!("| window | | {} |", titles.join(" | "));
    println!("| ---: | --- |{}", " ---: |".repeat(titles.len()));
    let names = [
        "req/s",
        "range",
        "vs floor",
        "p50 / p99 (µs)",
        "server CPU per call (µs)",
        "error answers",
        "peak RSS (MiB)",
    ];
    for (wi, w) in [1, window].into_iter().enumerate() {
        let floor_per_sec = floor.and_then(|f| per_sec(&figures[f][wi]));
        let columns: Vec<Vec<String>> = figures
            .iter()
            .map(|f| {
                let mut c = cells(&f[wi]);
                c[2] = match (per_sec(&f[wi]), floor_per_sec) {
                    (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                    _ => "-".into(),
                };
                c
            })
            .collect();
        for (k, name) in names.iter().enumerate() {
            let values: Vec<&str> = columns.iter().map(|c| c[k].as_str()).collect();
            let label = if k == 0 { w.to_string() } else { String::new() };
            println!("| {label} | {name} | {} |", values.join(" | "));
        }
    }
    let idle: Vec<String> = figures
        .iter()
        .map(|f| mib(&f[0].median["idle_rss_kib"]))
        .collect();
    println!("| | idle RSS (MiB) | {} |", idle.join(" | "));
    println!();
    // The medians above come from different moments; a round's runs share one, so the ratio
    // within each round takes out the machine's drift (the spread between rounds is far
    // larger than the servers' difference at window 1).
    let paired: Vec<String> = [1, window]
        .into_iter()
        .enumerate()
        .filter_map(|(wi, w)| {
            let r = paired_ratios(&figures[0][wi].runs, &figures[1][wi].runs)?;
            Some(format!(
                "window {w}: {:.3}x (rounds {:.3} – {:.3})",
                r.median, r.lowest, r.highest
            ))
        })
        .collect();
    if !paired.is_empty() {
        println!(
            "Paired, round by round (this project's req/s over mcport inline's in the same \
             round), median: {}.",
            paired.join("; ")
        );
        println!();
    }
    // The server that does no work, against mcport inline at window 1: how much of a round
    // trip there is the server's to win at all.
    let null = SERVERS.iter().position(|s| s.program == "stdio-null");
    if let Some(r) = null.and_then(|n| paired_ratios(&figures[n][0].runs, &figures[1][0].runs)) {
        println!(
            "No work (`stdio-null`: no JSON parsed, a canned answer) over mcport inline, window \
             1, paired: {:.3}x (rounds {:.3} – {:.3}). At window 1 a round trip is two pipe \
             wake-ups plus the server's code; where a server with no code is not ahead, no \
             server can be by being faster.",
            r.median, r.lowest, r.highest
        );
        println!();
    }
    println!(
        "Error answers (a server refusing a call) count in req/s and latency like any answer. \
         Server CPU per call is the time the server's threads spent on a CPU (user and kernel, \
         from /proc/<pid>/task/*/schedstat) over the measured calls, divided by their number: \
         the part of a round trip the server's own code decides. Peak RSS is VmHWM just before \
         stdin closes; idle RSS is VmRSS after the handshake."
    );
    Ok(())
}

/// The median, lowest and highest of `ours[i] / theirs[i]` over the rounds both ran.
struct Paired {
    median: f64,
    lowest: f64,
    highest: f64,
}

fn paired_ratios(ours: &[f64], theirs: &[f64]) -> Option<Paired> {
    let mut r: Vec<f64> = ours
        .iter()
        .zip(theirs)
        .filter(|(_, t)| **t > 0.0)
        .map(|(o, t)| o / t)
        .collect();
    if r.is_empty() {
        return None;
    }
    r.sort_by(f64::total_cmp);
    let n = r.len();
    let median = if n % 2 == 1 {
        r[n / 2]
    } else {
        (r[n / 2 - 1] + r[n / 2]) / 2.0
    };
    Some(Paired {
        median,
        lowest: r[0],
        highest: r[n - 1],
    })
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
    let cpu = num("cpu_us").map_or("-".into(), |c| format!("{c:.2}"));
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
        cpu,
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
    println!("- command: `{}`", shell_words(&me));
    println!("- load generator: `{}`", shell_words(argv));
}

/// A command line to paste into a shell: words with spaces or quotes in single quotes.
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if w.is_empty() || w.contains([' ', '\'', '"', '\\', '$', '`']) {
                format!("'{}'", w.replace('\'', r"'\''"))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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
        .args(["describe", "--always", "--dirty", "--abbrev=7"])
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
    use super::{locked_version, shell_words, thousands, utc_date_time};
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn pairs_rounds_before_taking_the_median() {
        // Each round is its own moment: only same-round figures are set against each other.
        let p = super::paired_ratios(&[10.0, 20.0, 30.0, 40.0], &[9.0, 18.0, 29.0, 35.0])
            .expect("four rounds");
        // Sorted: 30/29, 10/9, 20/18, 40/35; the middle two are both 10/9.
        assert!((p.median - 10.0 / 9.0).abs() < 1e-12);
        assert!((p.lowest - 30.0 / 29.0).abs() < 1e-12);
        assert!((p.highest - 40.0 / 35.0).abs() < 1e-12);
        assert!(super::paired_ratios(&[1.0], &[0.0]).is_none());
    }

    #[test]
    fn formats_thousands() {
        assert_eq!(thousands(0.4), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(64_540.3), "64,540");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
    }

    #[test]
    fn quotes_words_a_shell_would_split() {
        let argv = ["stdio-bench", "--server", "rmcp-echo --pipes", "it's"].map(String::from);
        assert_eq!(
            shell_words(&argv),
            r"stdio-bench --server 'rmcp-echo --pipes' 'it'\''s'"
        );
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
