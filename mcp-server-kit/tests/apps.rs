//! MCP Apps (`io.modelcontextprotocol/ui`): the view resource, the tool's link to it and the
//! extension's declaration, as a client sees them on the wire.

use mcp_server_kit::apps::{AppView, Csp, EXTENSION_ID, MIME_TYPE, Permission, Visibility};
#[cfg(feature = "tasks")]
use mcp_server_kit::types::tasks_ext::{self, TaskSupport};
use mcp_server_kit::{Context, Error, NoArgs, Resource, Server, Tool};
use serde_json::{Map, json};

mod common;
use common::Peer;

const VIEW: &str = "ui://weather/view";
const HTML: &str = "<!DOCTYPE html><html><body>weather</body></html>";

fn view() -> AppView {
    AppView::new(VIEW, "weather_view", HTML)
        .title("Weather")
        .csp(
            Csp::default()
                .connect_domain("https://api.example.com")
                .resource_domain("https://cdn.example.com"),
        )
        .permission(Permission::ClipboardWrite)
        .permission(Permission::Camera)
        .prefers_border(true)
}

fn weather() -> Tool {
    Tool::new("weather", |_: NoArgs, _: &Context| Ok::<_, Error>("sunny")).app_view(VIEW)
}

fn server() -> Server {
    Server::builder("apps", "1")
        .app_view(view())
        .tool(weather())
        .build()
        .unwrap()
}

fn expected_ui() -> serde_json::Value {
    json!({
        "csp": {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com"]
        },
        "permissions": {"camera": {}, "clipboardWrite": {}},
        "prefersBorder": true
    })
}

#[test]
fn the_view_is_listed_and_read_with_the_apps_mime_type_and_its_ui_meta() {
    let p = Peer::open(&server());
    p.initialize("2025-11-25", json!({}));
    let list = p.request(1, "resources/list", json!({}));
    let r = &list["result"]["resources"][0];
    assert_eq!(r["uri"], VIEW, "{list}");
    assert_eq!(r["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(r["title"], "Weather");
    assert_eq!(r["_meta"]["ui"], expected_ui());
    let read = p.request(2, "resources/read", json!({"uri": VIEW}));
    let c = &read["result"]["contents"][0];
    assert_eq!(c["uri"], VIEW, "{read}");
    assert_eq!(c["mimeType"], MIME_TYPE);
    assert_eq!(c["text"], HTML);
    assert_eq!(c["_meta"]["ui"], expected_ui());
}

#[test]
fn a_view_without_settings_carries_no_ui_meta() {
    let bare = AppView::new(VIEW, "v", HTML);
    assert!(bare.ui_meta().is_empty());
    let r = bare.into_resource();
    assert_eq!(r.definition().mime_type.as_deref(), Some(MIME_TYPE));
    assert!(r.definition().meta.is_none());
}

#[test]
fn a_linked_tool_names_its_view_in_both_meta_forms() {
    let p = Peer::open(&server());
    p.initialize("2025-06-18", json!({}));
    let list = p.request(1, "tools/list", json!({}));
    let t = &list["result"]["tools"][0];
    assert_eq!(t["_meta"]["ui"]["resourceUri"], VIEW, "{list}");
    assert_eq!(t["_meta"]["ui/resourceUri"], VIEW, "{list}");
}

#[test]
fn linking_keeps_other_meta_and_sets_visibility() {
    let mut other = Map::new();
    other.insert("vendor/x".into(), json!(1));
    let t = Tool::new("refresh", |_: NoArgs, _: &Context| Ok::<_, Error>("ok"))
        .meta(other)
        .app_view(VIEW)
        .visibility(&[Visibility::App]);
    let meta = t.definition().meta.clone().unwrap();
    assert_eq!(
        serde_json::Value::Object(meta),
        json!({
            "vendor/x": 1,
            "ui": {"resourceUri": VIEW, "visibility": ["app"]},
            "ui/resourceUri": VIEW
        })
    );
    assert_eq!(t.app_view_uri(), Some(VIEW));
    let plain = Tool::new("plain", |_: NoArgs, _: &Context| Ok::<_, Error>("ok"));
    assert_eq!(plain.app_view_uri(), None);
}

#[test]
fn the_extension_is_declared_only_by_servers_with_a_view() {
    let server = server();
    let caps = server.capabilities();
    assert_eq!(caps["extensions"][EXTENSION_ID], json!({}), "{caps}");
    // Beside the tasks extension (feature `tasks`), both are declared.
    #[cfg(feature = "tasks")]
    {
        let both = Server::builder("b", "1")
            .app_view(view())
            .tool(weather().task_support(TaskSupport::Optional))
            .build()
            .unwrap();
        let ext = &both.capabilities()["extensions"];
        assert_eq!(ext[EXTENSION_ID], json!({}), "{ext}");
        assert!(ext[tasks_ext::EXTENSION_ID].is_object(), "{ext}");
    }
    let plain = Server::builder("p", "1")
        .tool(Tool::new("t", |_: NoArgs, _: &Context| Ok::<_, Error>("x")))
        .build()
        .unwrap();
    assert!(plain.capabilities().get("extensions").is_none());
}

#[test]
fn build_refuses_a_view_outside_ui_and_a_link_to_nothing() {
    let outside = Server::builder("a", "1")
        .app_view(AppView::new("https://example.com/view", "v", HTML))
        .build();
    assert!(
        matches!(&outside, Err(Error::InvalidParams(m)) if m.contains("ui://")),
        "{outside:?}"
    );
    let dangling = Server::builder("a", "1").tool(weather()).build();
    assert!(
        matches!(&dangling, Err(Error::InvalidParams(m)) if m.contains(VIEW)),
        "{dangling:?}"
    );
    // A view served by a resource registered some other way is a valid target.
    let other = Server::builder("a", "1")
        .resource(Resource::text(VIEW, "v", MIME_TYPE, HTML))
        .tool(weather())
        .build();
    assert!(other.is_ok());
}
