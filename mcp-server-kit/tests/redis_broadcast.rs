//! `RedisBroadcast` against a real `redis-server` (from the PATH; the Debian package
//! `redis-server`): events cross between two broadcasts as they would between two
//! instances, and stay within their channel. (The resync after a lost connection is not
//! covered here yet.)
#![cfg(feature = "redis")]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_server_kit::broadcast::{Broadcast, Event, ListKind, RedisBroadcast};

const WAIT: Duration = Duration::from_secs(20);

/// A redis-server, killed when dropped (a failing test leaves none behind).
struct Redis(Child);

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A redis-server on `port`, returned once it says it accepts connections.
fn redis(port: u16) -> Redis {
    let mut child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server on the PATH (apt-get install redis-server)");
    let stdout = child.stdout.take();
    let server = Redis(child);
    let out = BufReader::new(stdout.expect("a pipe"));
    for line in out.lines() {
        if line
            .expect("redis-server's output")
            .contains("Ready to accept connections")
        {
            return server;
        }
    }
    panic!("redis-server did not start");
}

#[test]
fn events_cross_instances_through_one_redis_channel() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = redis(port);
    let url = format!("redis://127.0.0.1:{port}/");
    let a = RedisBroadcast::connect(&url, "mcp:test").unwrap();
    let b = RedisBroadcast::connect(&url, "mcp:test").unwrap();
    let other = RedisBroadcast::connect(&url, "mcp:another-server").unwrap();
    let (on_a, on_b) = (a.subscribe(16).unwrap(), b.subscribe(16).unwrap());
    let on_other = other.subscribe(16).unwrap();

    b.publish(&Event::ResourceUpdated("test://r".into()))
        .unwrap();
    let want = Some(Event::ResourceUpdated("test://r".into()));
    assert_eq!(on_a.recv_timeout(WAIT), want);
    assert_eq!(on_b.recv_timeout(WAIT), want);
    a.publish(&Event::ListChanged(ListKind::Tools)).unwrap();
    assert_eq!(
        on_b.recv_timeout(WAIT),
        Some(Event::ListChanged(ListKind::Tools))
    );
    // Another channel hears none of it.
    other.publish(&Event::Resync).unwrap();
    assert_eq!(on_other.recv_timeout(WAIT), Some(Event::Resync));
    assert_eq!(on_other.recv_timeout(Duration::ZERO), None);

    drop(server);
}
