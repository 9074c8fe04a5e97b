//! A server program started for a benchmark or a soak (`PROGRAM --http 127.0.0.1:0`), stopped
//! when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::sync_channel;
use std::time::Duration;

/// A running server program and the address it listens on.
pub struct ServerProc {
    child: Child,
    /// Where it listens (`http://ADDR/mcp`).
    pub addr: SocketAddr,
}

impl ServerProc {
    /// Starts `path --http 127.0.0.1:0` and waits (at most `wait`) for its
    /// `listening on http://ADDR/mcp` line; the rest of its stderr is drained, and lines that
    /// say ERROR or WARN are passed on.
    ///
    /// # Errors
    /// When it cannot start or prints no address in time.
    pub fn start(path: &Path, wait: Duration) -> Result<ServerProc, String> {
        ServerProc::start_with(path, &[], wait)
    }

    /// [`ServerProc::start`] with more arguments after `--http 127.0.0.1:0` (our servers take
    /// `--no-rate-limits`, so that a benchmark measures the server and not its limiter).
    ///
    /// # Errors
    /// As [`ServerProc::start`].
    pub fn start_with(path: &Path, extra: &[&str], wait: Duration) -> Result<ServerProc, String> {
        let mut child = Command::new(path)
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", path.display()))?;
        let Some(stderr) = child.stderr.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("no stderr pipe".into());
        };
        let (tx, rx) = sync_channel::<SocketAddr>(1);
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if let Some(sender) = tx.as_ref() {
                    let addr = line
                        .split_once("listening on http://")
                        .and_then(|(_, rest)| rest.split('/').next())
                        .and_then(|a| a.parse::<SocketAddr>().ok());
                    if let Some(addr) = addr {
                        let _ = sender.send(addr);
                        tx = None;
                    }
                } else if line.contains("ERROR") || line.contains("WARN") {
                    eprintln!("server: {line}");
                }
            }
        });
        match rx.recv_timeout(wait) {
            Ok(addr) => Ok(ServerProc { child, addr }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!(
                    "{} printed no 'listening on http://ADDR/mcp' line within {wait:?}",
                    path.display()
                ))
            }
        }
    }

    /// The process id (for `/proc/PID/...`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Threads and VmRSS (KiB) of a process, from `/proc/PID/status` (Linux).
pub fn proc_status(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("Threads:")?, field("VmRSS:")?))
}
