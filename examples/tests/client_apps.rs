//! The `apps` example end to end with our client as the host: the tool names its view, the
//! view reads back as an MCP Apps view, and the tool's result carries what the view renders,
//! in both eras.

use mcp_client::apps::{AppTool, MIME_TYPE};
use mcp_client::{Client, Revision};
use mcp_stdio::ChildBuilder;
use serde_json::json;

const APPS: &str = env!("CARGO_BIN_EXE_apps");

fn check(revision: Revision) {
    let client = Client::builder()
        .revision(revision)
        .apps(true)
        .spawn(ChildBuilder::new(APPS))
        .unwrap();
    let tool = client
        .list_tools()
        .map(Result::unwrap)
        .find(|t| t.name == "show_weather")
        .expect("show_weather is listed");
    let uri = tool.app_view_uri().expect("show_weather has a view");
    assert_eq!(uri, "ui://weather/view");
    let view = client.read_app_view(uri).unwrap();
    assert!(view.html.starts_with("<!DOCTYPE html>"), "{}", view.html);
    // The view speaks the host protocol itself.
    for method in ["ui/initialize", "ui/notifications/tool-result"] {
        assert!(view.html.contains(method), "the view handles {method}");
    }
    assert_eq!(view.prefers_border(), Some(true));
    let listed = client
        .list_resources()
        .map(Result::unwrap)
        .find(|r| r.uri == uri)
        .expect("the view is listed");
    assert_eq!(listed.mime_type.as_deref(), Some(MIME_TYPE));
    let result = client
        .call_tool("show_weather", json!({"city": "Paris"}))
        .unwrap();
    let data = result
        .structured_content
        .expect("structured content for the view");
    assert_eq!(data["city"], "Paris");
    assert!(data["temperatureC"].is_i64() && data["conditions"].is_string());
    client.close().unwrap();
}

#[test]
fn the_apps_example_serves_a_view_a_host_can_render_legacy() {
    check(Revision::Legacy);
}

#[test]
fn the_apps_example_serves_a_view_a_host_can_render_modern() {
    check(Revision::Modern);
}
