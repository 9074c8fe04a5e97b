//! Notifications across instances: a change announced on one server reaches the clients of
//! another through a shared broadcast (in process here; Redis in `redis_broadcast.rs`).

use std::sync::Arc;

use mcp_server_kit::broadcast::{Broadcast, Event, ListKind, LocalBroadcast};
use mcp_server_kit::types::ResourceContents;
use mcp_server_kit::{Context, Error, NoArgs, Resource, Server, Tool};
use serde_json::json;

mod common;
use common::Peer;

const URI: &str = "test://watched";

impl Peer {
    /// A legacy session on `server`, initialized and subscribed to `URI`.
    fn subscribed(server: &Server) -> Peer {
        let p = Peer::open(server);
        p.initialize("2025-11-25", json!({}));
        p.request(2, "resources/subscribe", json!({"uri": URI}));
        p
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
    // Opened before any event: each instance's listener delivers on its own thread and may
    // lag, so a session opened later could still hear events published before it opened.
    let on_b = Peer::subscribed(&b);
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
    b.resource_updated(URI);
    assert_eq!(on_a.next()["method"], "notifications/resources/updated");
    // B's own sessions hear B's events once each, through the broadcast, in order: a second
    // delivery (local and broadcast) would show in this sequence.
    let seen: Vec<String> = (0..4)
        .map(|_| on_b.next()["method"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        seen,
        [
            "notifications/resources/updated",
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/updated",
        ]
    );
}

#[test]
fn without_a_broadcast_instances_stay_apart() {
    let (a, b) = (instance(None), instance(None));
    let on_a = Peer::subscribed(&a);
    let on_b = Peer::subscribed(&b);
    b.resource_updated(URI);
    // B's listener delivers in publication order, on its own thread: the list change
    // published before this session opened may reach it first, never after the update.
    let mut n = on_b.next();
    while n["method"] == "notifications/resources/list_changed" {
        n = on_b.next();
    }
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    a.resource_updated("test://other");
    a.resource_updated(URI);
    // A's subscriber hears only A's update of its URI: nothing came over from B.
    let n = on_a.next();
    assert_eq!(n["params"]["uri"], URI);
    assert!(on_a.rx.try_recv().is_err());
}

#[test]
fn subscriptions_are_bounded_per_session() {
    let server = instance(None);
    let p = Peer::subscribed(&server);
    // One already held, and more up to the session's limit (1,024 URIs), are taken.
    let r = p.request(3, "resources/subscribe", json!({"uri": URI}));
    assert_eq!(r["result"], json!({}), "{r}");
    for i in 1..1024 {
        let r = p.request(
            10 + i,
            "resources/subscribe",
            json!({"uri": format!("test://r{i}")}),
        );
        assert_eq!(r["result"], json!({}), "{r}");
    }
    // Beyond it: -32602, and the session's memory stays where it was.
    let r = p.request(
        5000,
        "resources/subscribe",
        json!({"uri": "test://one-more"}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A place given back can be taken again.
    p.request(5001, "resources/unsubscribe", json!({"uri": "test://r1"}));
    let r = p.request(
        5002,
        "resources/subscribe",
        json!({"uri": "test://one-more"}),
    );
    assert_eq!(r["result"], json!({}), "{r}");
    // The URIs' bytes are bounded too (128 KiB a session): a fresh session, long URIs.
    let q = Peer::subscribed(&server);
    let long = "x".repeat(40_000);
    let mut refused = None;
    for i in 0..5 {
        let r = q.request(
            10 + i,
            "resources/subscribe",
            json!({"uri": format!("test://{i}/{long}")}),
        );
        if r.get("error").is_some() {
            refused = Some((i, r["error"]["code"].clone()));
            break;
        }
    }
    assert_eq!(refused, Some((3, json!(-32602))));
    // The subscription held from the start still gets its updates.
    server.resource_updated(URI);
    let n = p.next();
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
}
