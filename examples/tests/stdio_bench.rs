//! `stdio-bench`, the load generator of `bench/`'s comparison: it measures a server and the
//! floor at both windows and reports every run, and a program that stops answering ends the
//! bench with an error instead of hanging it.

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_stdio-bench"))
        .args(args)
        .output()
        .expect("stdio-bench runs")
}

#[test]
fn echo_and_the_floor_are_measured_at_both_windows() {
    let out = bench(&[
        "-n",
        "300",
        "--window",
        "8",
        "--rounds",
        "2",
        "--json",
        "--server",
        env!("CARGO_BIN_EXE_echo"),
        "--raw",
        env!("CARGO_BIN_EXE_stdio-floor"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let rows = report["rows"].as_array().expect("rows");
    // Each program one at a time (answers read on the writing thread) and 8 in flight (a
    // reader thread), in the order given.
    let shape: Vec<(bool, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["handshake"].as_bool().unwrap(),
                r["window"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shape, [(true, 1), (true, 8), (false, 1), (false, 8)]);
    for row in rows {
        let runs = row["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 2, "{row}");
        for run in runs {
            assert!(run["per_sec"].as_f64().unwrap() > 0.0, "{row}");
            assert_eq!(run["errors"], 0, "{row}");
        }
    }
}

#[test]
fn a_program_that_never_answers_ends_the_bench_with_an_error() {
    // `cat` sends each request back: a line with a method, which the bench skips as a server
    // request, so it waits in a blocking read for an answer that never comes.
    let child = Command::new(env!("CARGO_BIN_EXE_stdio-bench"))
        .args(["-n", "10", "--raw", "cat"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("stdio-bench runs");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("stdio-bench ends"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("stdio-bench still waits after 60 s");
        }
    };
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no reply within"), "{err}");
}
