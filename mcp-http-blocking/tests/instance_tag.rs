//! Legacy sessions behind a load balancer: an instance tag in front of every session id it
//! mints, so a proxy can route on the header alone; a session of another instance is unknown.

mod common;

use std::time::Duration;

use common::*;
use mcp_http_blocking::{HttpConfig, InstanceTag};
use serde_json::json;

#[test]
fn tags_are_http_tokens_without_dots() {
    for good in ["node-a", "n1", "A_b~c", &"x".repeat(64)] {
        assert_eq!(InstanceTag::new(good).unwrap().as_str(), good);
    }
    for bad in ["", "a.b", "a b", "ä", "a/b", "a\r\n", &"x".repeat(65)] {
        assert!(InstanceTag::new(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn session_ids_carry_the_tag_and_other_instances_sessions_are_not_found() {
    let tag = InstanceTag::new("node-a").unwrap();
    let cfg = HttpConfig::builder().instance_tag(tag).build();
    let (h, _) = serve(cfg, Duration::from_secs(5));
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    let random = sid.strip_prefix("node-a.").expect("the tag in front");
    assert!(
        random.len() >= 32 && random.bytes().all(|b| b.is_ascii_hexdigit()),
        "{sid}"
    );

    let ping = |sid: &str| {
        let pv = ("MCP-Protocol-Version", "2025-06-18");
        request(
            a,
            "POST",
            "/mcp",
            &[ACCEPT_BOTH, JSON_CT, pv, ("Mcp-Session-Id", sid)],
            &rpc(2, "ping", json!({})),
        )
        .status
    };
    assert_eq!(ping(&sid), 200);
    // The same random part under another instance's tag, or without the tag: not a session
    // of this instance.
    assert_eq!(ping(&format!("node-b.{random}")), 404);
    assert_eq!(ping(random), 404);

    // Without a tag, ids are the random part alone.
    let (plain, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let sid = open_session(plain.local_addr(), "2025-06-18");
    assert!(!sid.contains('.'), "{sid}");
}
