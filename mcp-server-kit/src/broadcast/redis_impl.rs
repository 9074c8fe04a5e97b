//! [`Broadcast`] through Redis pub/sub, with the `redis` crate's synchronous API (no async
//! runtime, in keeping with the rest of the kit).
//!
//! Every instance publishes its events on one Redis channel and subscribes to it on a
//! connection of its own, read by one thread that fans the events out to the bounded
//! subscriptions of this process. Redis pub/sub keeps nothing for a subscriber that is not
//! connected, so after a lost connection the thread reconnects (waiting a little longer after
//! each failure, up to 5 s) and gives every subscriber [`Event::Resync`].

use std::io;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Broadcast, Event, Hub, ListKind, Subscription};

/// How long connecting may take before it counts as a failure.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The subscriber's read timeout: when it expires with nothing heard, the thread checks that
/// its broadcast still exists (it ends when the broadcast was dropped) and reads on.
const IDLE_CHECK: Duration = Duration::from_secs(30);

/// A [`Broadcast`] between processes through a Redis channel (feature `redis`).
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_server_kit::{Server, broadcast::RedisBroadcast};
///
/// let redis = RedisBroadcast::connect("redis://127.0.0.1:6379/", "mcp:everything")?;
/// let server = Server::builder("s", "1").broadcast(Arc::new(redis)).build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisBroadcast {
    client: redis::Client,
    channel: String,
    /// The publishing connection, made again after a failure.
    publisher: Mutex<Option<redis::Connection>>,
    hub: Arc<Hub>,
    /// Dropped with the broadcast, which ends the subscriber thread's back-off waits.
    _stop: SyncSender<()>,
}

impl std::fmt::Debug for RedisBroadcast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the URL: it may carry a password.
        f.debug_struct("RedisBroadcast")
            .field("channel", &self.channel)
            .finish()
    }
}

fn io_err(e: redis::RedisError) -> io::Error {
    io::Error::other(format!("redis: {e}"))
}

impl RedisBroadcast {
    /// Connects to the Redis server at `url` (`redis://[:password@]host:port/`) and starts
    /// listening on `channel` (one channel per server: every instance of it names the same).
    ///
    /// # Errors
    /// The URL is invalid, the first connection fails, or the thread cannot start.
    pub fn connect(url: &str, channel: &str) -> io::Result<RedisBroadcast> {
        let client = redis::Client::open(url).map_err(io_err)?;
        let hub = Arc::new(Hub::default());
        let (stop, stopped) = sync_channel(0);
        let (ready_tx, ready) = sync_channel(1);
        let (c, ch, weak) = (client.clone(), channel.to_owned(), Arc::downgrade(&hub));
        std::thread::Builder::new()
            .name("mcp-redis-sub".into())
            .spawn(move || run_subscriber(c, ch, ready_tx, weak, stopped))?;
        // The first subscription is in place before this returns (so nothing published after
        // it is missed), and a wrong address fails here, not later.
        match ready.recv_timeout(CONNECT_TIMEOUT * 2) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(io_err(e)),
            Err(_) => return Err(io::Error::other("redis: subscribing timed out")),
        }
        Ok(RedisBroadcast {
            client,
            channel: channel.to_owned(),
            publisher: Mutex::new(None),
            hub,
            _stop: stop,
        })
    }

    fn try_publish(&self, payload: &str) -> redis::RedisResult<()> {
        let mut guard = self.publisher.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            let con = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
            con.set_write_timeout(Some(CONNECT_TIMEOUT))?;
            con.set_read_timeout(Some(CONNECT_TIMEOUT))?;
            *guard = Some(con);
        }
        let Some(con) = guard.as_mut() else {
            return Ok(());
        };
        let sent = redis::cmd("PUBLISH")
            .arg(&self.channel)
            .arg(payload)
            .query::<i64>(con);
        if sent.is_err() {
            // Connect afresh next time.
            *guard = None;
        }
        sent.map(drop)
    }
}

impl Broadcast for RedisBroadcast {
    fn publish(&self, event: &Event) -> io::Result<()> {
        let payload = encode(event).to_string();
        // One retry on a fresh connection: the kept one may have been closed by the server.
        self.try_publish(&payload)
            .or_else(|_| self.try_publish(&payload))
            .map_err(io_err)
    }

    fn subscribe(&self, capacity: usize) -> io::Result<Subscription> {
        Ok(self.hub.subscribe(capacity))
    }
}

/// Subscribes `con` to `channel` and reads it until the connection fails (`Some(error)`) or the
/// broadcast is dropped (`None`). `subscribed` runs once the subscription is in place.
fn read(
    con: &mut redis::Connection,
    channel: &str,
    hub: &Weak<Hub>,
    subscribed: impl FnOnce(),
) -> Option<redis::RedisError> {
    if let Err(e) = con.set_read_timeout(Some(IDLE_CHECK)) {
        return Some(e);
    }
    // One PubSub for subscribing and reading: dropping it unsubscribes.
    let mut pubsub = con.as_pubsub();
    if let Err(e) = pubsub.subscribe(channel) {
        return Some(e);
    }
    subscribed();
    loop {
        match pubsub.get_message() {
            Ok(msg) => {
                // The broadcast was dropped: stop reading.
                let h = hub.upgrade()?;
                match decode(msg.get_payload_bytes()) {
                    Some(event) => h.deliver(&event),
                    None => log::warn!("redis broadcast: an event of unknown shape, ignored"),
                }
            }
            Err(e) if e.is_timeout() => {
                if hub.strong_count() == 0 {
                    return None;
                }
            }
            Err(e) => return Some(e),
        }
    }
}

fn run_subscriber(
    client: redis::Client,
    channel: String,
    ready: SyncSender<redis::RedisResult<()>>,
    hub: Weak<Hub>,
    stopped: Receiver<()>,
) {
    let first = client
        .get_connection_with_timeout(CONNECT_TIMEOUT)
        .and_then(|mut con| {
            let mut ok = false;
            let err = read(&mut con, &channel, &hub, || {
                ok = ready.try_send(Ok(())).is_ok();
            });
            match (ok, err) {
                (true, Some(e)) => {
                    log::warn!("redis broadcast: subscription lost: {e}; reconnecting");
                    Ok(true)
                }
                (true, None) => Ok(false),
                (false, Some(e)) => Err(e),
                // The caller gave up waiting.
                (false, None) => Ok(false),
            }
        });
    match first {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            let _ = ready.try_send(Err(e));
            return;
        }
    }
    let mut backoff = Duration::from_millis(100);
    loop {
        // Wait before the next attempt; the broadcast being dropped ends the wait.
        if stopped.recv_timeout(backoff) != Err(RecvTimeoutError::Timeout) {
            return;
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
        let mut con = match client.get_connection_with_timeout(CONNECT_TIMEOUT) {
            Ok(c) => c,
            Err(e) => {
                log::warn!("redis broadcast: cannot reconnect: {e}");
                continue;
            }
        };
        let lost = read(&mut con, &channel, &hub, || {
            // Whatever was published while we were away is lost.
            if let Some(h) = hub.upgrade() {
                h.lag_all();
            }
            backoff = Duration::from_millis(100);
        });
        match lost {
            Some(e) => log::warn!("redis broadcast: subscription lost: {e}; reconnecting"),
            None => return,
        }
    }
}

fn list_name(kind: ListKind) -> &'static str {
    match kind {
        ListKind::Tools => "tools",
        ListKind::Prompts => "prompts",
        ListKind::Resources => "resources",
    }
}

/// The wire form of an event: a small JSON object, so other programs can publish too.
fn encode(event: &Event) -> Value {
    match event {
        Event::ResourceUpdated(uri) => json!({"event": "resourceUpdated", "uri": uri}),
        Event::ListChanged(kind) => json!({"event": "listChanged", "list": list_name(*kind)}),
        Event::Resync => json!({"event": "resync"}),
    }
}

fn decode(bytes: &[u8]) -> Option<Event> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    match v.get("event")?.as_str()? {
        "resourceUpdated" => Some(Event::ResourceUpdated(v.get("uri")?.as_str()?.to_owned())),
        "listChanged" => {
            let kind = [ListKind::Tools, ListKind::Prompts, ListKind::Resources]
                .into_iter()
                .find(|k| v.get("list").and_then(Value::as_str) == Some(list_name(*k)))?;
            Some(Event::ListChanged(kind))
        }
        "resync" => Some(Event::Resync),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_and_strange_payloads_are_refused() {
        for e in [
            Event::ResourceUpdated("file:///a b".into()),
            Event::ListChanged(ListKind::Prompts),
            Event::Resync,
        ] {
            assert_eq!(decode(encode(&e).to_string().as_bytes()), Some(e));
        }
        for bad in [
            &b"not json"[..],
            b"{}",
            b"{\"event\":\"listChanged\",\"list\":\"x\"}",
        ] {
            assert_eq!(decode(bad), None);
        }
    }
}
