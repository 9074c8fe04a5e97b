//! Notifications across instances: a change announced on one server reaches the clients of
//! another through a shared broadcast (in process here; Redis in `redis_broadcast.rs`).

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::jsonrpc::{Message, RequestId, decode};
use mcp_core::service::{Closed, Outbound, Service, Session, SessionInfo, TransportKind};
use mcp_server_kit::broadcast::{Broadcast, Event, ListKind, LocalBroadcast};
use mcp_server_kit::types::ResourceContents;
use mcp_server_kit::{Context, Error, NoArgs, Resource, Server, Tool};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);
const URI: &str = "test://watched";

struct Collect(Mutex<Sender<Message>>);

impl Outbound for Collect {
    fn send(&self, msg: Message, _related: Option<&RequestId>) -> Result<(), Closed> {
        self.0.lock().unwrap().send(msg).map_err(|_| Closed)
    }
}

struct Peer {
    session: Arc<dyn Session>,
    rx: Receiver<Message>,
}

impl Peer {
    /// A legacy session on `server`, initialized and subscribed to `URI`.
    fn subscribed(server: &Server) -> Peer {
        let (tx, rx) = channel();
        let session = server.open(
            SessionInfo::new(TransportKind::Memory),
            Arc::new(Collect(Mutex::new(tx))),
        );
        let p = Peer { session, rx };
        p.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        );
        p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        p.request(2, "resources/subscribe", json!({"uri": URI}));
        p
    }

    fn send(&self, v: Value) {
        self.session
            .handle(decode(v.to_string().as_bytes()).unwrap());
    }

    fn next(&self) -> Value {
        let m = self.rx.recv_timeout(WAIT).expect("a message");
        serde_json::from_slice(&m.to_vec()).unwrap()
    }

    fn request(&self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.next();
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                return v;
            }
        }
    }
}

fn instance(broadcast: Option<Arc<dyn Broadcast>>) -> Server {
    let mut b = Server::builder("i", "1")
        .resource(
            Resource::new(URI, "watched", |_: &Context| {
                Ok::<_, Error>(vec![ResourceContents::text(URI, "x")])
            })
            .subscribable(),
        )
        .tool(Tool::new("t", |_: NoArgs, _: &Context| Ok::<_, Error>("x")));
    if let Some(bc) = broadcast {
        b = b.broadcast(bc);
    }
    b.build().unwrap()
}

#[test]
fn an_update_on_one_instance_reaches_a_subscriber_on_another() {
    let hub: Arc<dyn Broadcast> = Arc::new(LocalBroadcast::new());
    let (a, b) = (instance(Some(hub.clone())), instance(Some(hub.clone())));
    let on_a = Peer::subscribed(&a);
    b.resource_updated(URI);
    let n = on_a.next();
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    assert_eq!(n["params"]["uri"], URI);
    // A list change made on B, and one published by a third party.
    b.add_tool(Tool::new("new", |_: NoArgs, _: &Context| {
        Ok::<_, Error>("y")
    }));
    assert_eq!(on_a.next()["method"], "notifications/tools/list_changed");
    hub.publish(&Event::ListChanged(ListKind::Prompts)).unwrap();
    b.list_changed(ListKind::Resources);
    // (A has no prompts, so its session is not told about them.)
    assert_eq!(
        on_a.next()["method"],
        "notifications/resources/list_changed"
    );
    // B's own sessions hear B's events once, through the broadcast.
    let on_b = Peer::subscribed(&b);
    b.resource_updated(URI);
    assert_eq!(on_b.next()["method"], "notifications/resources/updated");
    assert_eq!(on_a.next()["method"], "notifications/resources/updated");
    assert!(on_b.rx.try_recv().is_err());
}

#[test]
fn without_a_broadcast_instances_stay_apart() {
    let (a, b) = (instance(None), instance(None));
    let on_a = Peer::subscribed(&a);
    let on_b = Peer::subscribed(&b);
    b.resource_updated(URI);
    assert_eq!(on_b.next()["method"], "notifications/resources/updated");
    a.resource_updated("test://other");
    a.resource_updated(URI);
    // A's subscriber hears only A's update of its URI: nothing came over from B.
    let n = on_a.next();
    assert_eq!(n["params"]["uri"], URI);
    assert!(on_a.rx.try_recv().is_err());
}
