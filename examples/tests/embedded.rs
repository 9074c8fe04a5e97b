//! The `embedded` example: MCP on a thread of a host loop that owns the state.

mod common;

use common::{Client, has_method};
use serde_json::{Value, json};
use std::time::Duration;

fn status(c: &mut Client) -> Value {
    let r = c.result("resources/read", json!({"uri": "thermostat://status"}));
    serde_json::from_str(r["contents"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn tools_change_the_host_state_and_subscribers_hear_of_it() {
    let mut c = Client::spawn_program(env!("CARGO_BIN_EXE_embedded"));
    c.initialize("2025-11-25", json!({}));
    assert_eq!(status(&mut c)["target"], 21.0);
    c.result("resources/subscribe", json!({"uri": "thermostat://status"}));

    let r = c.call_tool("set_target", json!({"celsius": 25}));
    let text = r["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap()["target"], 25.0);
    c.wait_for("the status update", Duration::from_secs(5), |m| {
        has_method(m, "notifications/resources/updated")
    });
    assert_eq!(status(&mut c)["target"], 25.0);

    // The host validates its own input; the model sees the reason.
    let r = c.call_tool("set_target", json!({"celsius": 99}));
    assert_eq!(r["isError"], true);
    assert_eq!(status(&mut c)["target"], 25.0);

    // Closing stdin ends the MCP thread, which stops the host loop: a clean exit.
    assert!(c.close().success());
}
