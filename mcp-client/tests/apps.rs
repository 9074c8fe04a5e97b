//! MCP Apps (`io.modelcontextprotocol/ui`) on the host side, against a scripted server over an
//! in-memory pipe: the declaration in both eras, a tool's view URI and visibility, and reading
//! the view (text, base64 blob, and what is refused).

use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, bounded};
use mcp_client::apps::{AppTool, EXTENSION_ID, MIME_TYPE};
use mcp_client::{ChannelTransport, Client, Error, Revision, Unexpected};
use mcp_core::jsonrpc::{Message, decode};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);
const VIEW: &str = "ui://weather/view";
const HTML: &str = "<!DOCTYPE html><p>hi</p>";

fn msg(v: Value) -> Message {
    decode(&serde_json::to_vec(&v).unwrap()).unwrap()
}

/// What the scripted server answers to `resources/read` of each URI.
fn read_answer(uri: &str) -> Value {
    match uri {
        VIEW => json!({"contents": [{
            "uri": VIEW, "mimeType": MIME_TYPE, "text": HTML,
            "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]},
                             "prefersBorder": false}}}]}),
        // The same HTML as base64, without settings.
        "ui://blob" => json!({"contents": [{
            "uri": "ui://blob", "mimeType": MIME_TYPE,
            "blob": "PCFET0NUWVBFIGh0bWw+PHA+aGk8L3A+"}]}),
        _ => json!({"contents": [{"uri": uri, "mimeType": "text/html", "text": HTML}]}),
    }
}

/// A scripted server of `modern`'s era with three tools (a view in the nested form, one in the
/// deprecated flat form, one app-only) that serves `read_answer`; everything the client sends
/// is copied to the returned channel.
fn server(modern: bool) -> (ChannelTransport, Receiver<Value>) {
    let (a, b) = mcp_stdio::memory(16).unwrap();
    let (seen_tx, seen_rx) = bounded(64);
    thread::spawn(move || {
        for item in &b.receiver {
            let Ok(m) = item else { continue };
            let v: Value = serde_json::from_slice(&m.to_vec()).unwrap();
            let _ = seen_tx.try_send(v.clone());
            let Some(id) = v.get("id").cloned() else {
                continue;
            };
            let modern_meta =
                json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private"});
            let mut result = match v["method"].as_str() {
                Some("server/discover") if !modern => {
                    let e = json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": "Method not found"}});
                    let _ = b.sender.send(msg(e));
                    continue;
                }
                Some("server/discover") => json!({
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}, "resources": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}}}),
                Some("initialize") => json!({
                    "protocolVersion": v["params"]["protocolVersion"],
                    "capabilities": {"tools": {}, "resources": {}},
                    "serverInfo": {"name": "fake", "version": "1"}}),
                Some("tools/list") => json!({"tools": [
                    {"name": "weather", "inputSchema": {"type": "object"},
                     "_meta": {"ui": {"resourceUri": VIEW}}},
                    {"name": "old", "inputSchema": {"type": "object"},
                     "_meta": {"ui/resourceUri": "ui://old"}},
                    {"name": "refresh", "inputSchema": {"type": "object"},
                     "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["app"]}}},
                    {"name": "plain", "inputSchema": {"type": "object"}}]}),
                Some("resources/read") => read_answer(v["params"]["uri"].as_str().unwrap_or("")),
                _ => json!({}),
            };
            if modern {
                if let (Some(r), Value::Object(extra)) = (result.as_object_mut(), modern_meta) {
                    r.extend(extra);
                }
            }
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            if b.sender.send(msg(reply)).is_err() {
                return;
            }
        }
    });
    (ChannelTransport::new(a).named("scripted"), seen_rx)
}

fn first_with_method(seen: &Receiver<Value>, method: &str) -> Value {
    loop {
        let v = seen.recv_timeout(WAIT).expect("the client's message");
        if v["method"] == method {
            return v;
        }
    }
}

#[test]
fn a_legacy_initialize_declares_apps_only_when_asked_and_never_tasks() {
    let (transport, seen) = server(false);
    let client = Client::builder()
        .revision(Revision::Legacy)
        .apps(true)
        .connect(transport)
        .unwrap();
    let init = first_with_method(&seen, "initialize");
    assert_eq!(
        init["params"]["capabilities"]["extensions"],
        json!({EXTENSION_ID: {"mimeTypes": ["text/html;profile=mcp-app"]}}),
        "{init}"
    );
    client.close().unwrap();

    let (transport, seen) = server(false);
    let client = Client::builder()
        .revision(Revision::Legacy)
        .connect(transport)
        .unwrap();
    let init = first_with_method(&seen, "initialize");
    assert!(
        init["params"]["capabilities"].get("extensions").is_none(),
        "{init}"
    );
    client.close().unwrap();
}

#[test]
fn a_modern_request_declares_apps_beside_tasks() {
    let (transport, seen) = server(true);
    let client = Client::builder()
        .revision(Revision::Modern)
        .apps(true)
        .connect(transport)
        .unwrap();
    client.read_app_view(VIEW).unwrap();
    let read = first_with_method(&seen, "resources/read");
    let ext = &read["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
    assert_eq!(ext[EXTENSION_ID]["mimeTypes"][0], MIME_TYPE, "{read}");
    assert!(ext["io.modelcontextprotocol/tasks"].is_object(), "{read}");
    client.close().unwrap();
}

#[test]
fn tools_name_their_views_in_either_form_with_their_visibility() {
    let (transport, _seen) = server(false);
    let client = Client::builder().apps(true).connect(transport).unwrap();
    let tools: Vec<_> = client.list_tools().map(Result::unwrap).collect();
    let by = |n: &str| tools.iter().find(|t| t.name == n).unwrap();
    assert_eq!(by("weather").app_view_uri(), Some(VIEW));
    assert_eq!(by("old").app_view_uri(), Some("ui://old"));
    assert_eq!(by("plain").app_view_uri(), None);
    assert!(by("weather").visible_to_model() && by("weather").visible_to_app());
    assert!(!by("refresh").visible_to_model() && by("refresh").visible_to_app());
    client.close().unwrap();
}

#[test]
fn a_view_is_read_with_its_ui_meta_from_text_or_blob_and_another_type_is_refused() {
    let (transport, _seen) = server(false);
    let client = Client::builder().apps(true).connect(transport).unwrap();
    let view = client.read_app_view(VIEW).unwrap();
    assert_eq!(view.uri, VIEW);
    assert_eq!(view.html, HTML);
    assert_eq!(view.connect_domains(), vec!["https://api.example.com"]);
    assert!(view.resource_domains().is_empty());
    assert_eq!(view.prefers_border(), Some(false));

    let blob = client.read_app_view("ui://blob").unwrap();
    assert_eq!(blob.html, "<!DOCTYPE html><p>hi</p>");
    assert!(blob.ui.is_empty());

    let e = client.read_app_view("ui://plain-html").unwrap_err();
    assert!(
        matches!(&e, Error::Unexpected(Unexpected::NotAView { uri, why })
            if uri == "ui://plain-html" && why.contains("text/html")),
        "{e}"
    );
    client.close().unwrap();
}
