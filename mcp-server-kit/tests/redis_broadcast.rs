//! `RedisBroadcast` against a real `redis-server` (from the PATH; the Debian package
//! `redis-server`): events cross between two broadcasts as they would between two
//! instances, and stay within their channel; after Redis restarts, every subscriber
//! resubscribes on its own, hears `Event::Resync` for what it may have missed, and hears what
//! is published afterwards.
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

/// A port no one listens on (yet).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn events_cross_instances_through_one_redis_channel() {
    let port = free_port();
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

#[test]
fn a_restarted_redis_costs_one_resync_and_events_flow_again() {
    let port = free_port();
    let server = redis(port);
    let url = format!("redis://127.0.0.1:{port}/");
    let a = RedisBroadcast::connect(&url, "mcp:restart").unwrap();
    let b = RedisBroadcast::connect(&url, "mcp:restart").unwrap();
    let (on_a, on_b) = (a.subscribe(16).unwrap(), b.subscribe(16).unwrap());
    b.publish(&Event::ListChanged(ListKind::Tools)).unwrap();
    let tools = Some(Event::ListChanged(ListKind::Tools));
    assert_eq!(on_a.recv_timeout(WAIT), tools);
    assert_eq!(on_b.recv_timeout(WAIT), tools);

    // Redis goes away (killed, waited for): a publish now cannot be handed on.
    drop(server);
    assert!(
        a.publish(&Event::ResourceUpdated("test://lost".into()))
            .is_err()
    );

    // Back on the same port: both subscriber threads reconnect by themselves (nothing here
    // asks them to) and tell their subscribers that events may have been lost meanwhile.
    let _server = redis(port);
    assert_eq!(on_a.recv_timeout(WAIT), Some(Event::Resync));
    assert_eq!(on_b.recv_timeout(WAIT), Some(Event::Resync));

    // Both are subscribed again (the resync is given once the subscription is in place), and
    // the publishers connect afresh: events cross again, either way.
    a.publish(&Event::ResourceUpdated("test://after".into()))
        .unwrap();
    let after = Some(Event::ResourceUpdated("test://after".into()));
    assert_eq!(on_b.recv_timeout(WAIT), after);
    assert_eq!(on_a.recv_timeout(WAIT), after);
    b.publish(&Event::ListChanged(ListKind::Prompts)).unwrap();
    assert_eq!(
        on_a.recv_timeout(WAIT),
        Some(Event::ListChanged(ListKind::Prompts))
    );
    // Nothing else was queued: the lost event stays lost, with the one resync for it.
    assert_eq!(on_a.recv_timeout(Duration::ZERO), None);
}
