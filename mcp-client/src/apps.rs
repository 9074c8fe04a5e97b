//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) for hosts: which tools have an
//! interactive view, and the view itself, ready to put in a sandboxed iframe.
//!
//! A host that can render views declares it with [`ClientBuilder::apps`](crate::ClientBuilder::apps)
//! (servers may offer views, or other tool variants, only to such clients). It finds a tool's
//! view with [`AppTool::app_view_uri`], fetches it with
//! [`Client::read_app_view`](crate::Client::read_app_view) (the specification has hosts read
//! views with `resources/read`), and builds the iframe's Content Security Policy and `allow`
//! attribute from [`AppView::ui`]. The conversation with the view
//! (the `ui/` JSON-RPC over `postMessage`) is the host's own: this crate only talks to the
//! server, and relays nothing by itself.
//!
//! ```no_run
//! use mcp_client::Client;
//! use mcp_client::apps::AppTool;
//! # fn main() -> Result<(), mcp_client::Error> {
//! let client = Client::builder().apps(true).spawn(mcp_stdio::ChildBuilder::new("apps"))?;
//! for tool in client.list_tools() {
//!     let tool = tool?;
//!     if let Some(uri) = tool.app_view_uri() {
//!         let view = client.read_app_view(uri)?;
//!         println!("{}: {} bytes of HTML, ui meta {:?}", tool.name, view.html.len(), view.ui);
//!     }
//! }
//! # Ok(())
//! # }
//! ```

// The extension's vocabulary, and no client: the handlers (below the client) declare
// `client_capability`, and the one request, `Client::read_app_view`, sits with the other
// `resources/read` methods in `client`.

use serde_json::{Map, Value, json};

use crate::error::{Error, Unexpected};
use mcp_core::types::{ResourceContents, Tool};

/// The extension identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an HTML view, the only one the extension defines.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The deprecated flat `_meta` key that named a tool's view; hosts still read it.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// What a client declares under `capabilities.extensions[EXTENSION_ID]`: the view types it
/// renders (`mimeTypes` is required).
pub fn client_capability() -> Value {
    json!({ "mimeTypes": [MIME_TYPE] })
}

/// The view-related metadata of a tool listed by `tools/list`.
pub trait AppTool {
    /// The URI of the tool's view: `_meta.ui.resourceUri`, else the deprecated
    /// `_meta["ui/resourceUri"]`. `None` for a tool without a view.
    fn app_view_uri(&self) -> Option<&str>;

    /// Whether the model may see and call the tool (`_meta.ui.visibility` holds `"model"`,
    /// or is absent). A host leaves the others out of the agent's tool list.
    fn visible_to_model(&self) -> bool;

    /// Whether a view of this server may call the tool (`_meta.ui.visibility` holds `"app"`,
    /// or is absent). A host refuses a view's `tools/call` of the others.
    fn visible_to_app(&self) -> bool;
}

impl AppTool for Tool {
    fn app_view_uri(&self) -> Option<&str> {
        let meta = self.meta.as_ref()?;
        meta.get("ui")
            .and_then(|ui| ui.get("resourceUri"))
            .and_then(Value::as_str)
            .or_else(|| meta.get(LEGACY_RESOURCE_URI_KEY).and_then(Value::as_str))
    }

    fn visible_to_model(&self) -> bool {
        visible(self, "model")
    }

    fn visible_to_app(&self) -> bool {
        visible(self, "app")
    }
}

fn visible(tool: &Tool, who: &str) -> bool {
    let list = tool
        .meta
        .as_ref()
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array);
    match list {
        None => true,
        Some(l) => l.iter().any(|v| v.as_str() == Some(who)),
    }
}

/// A view as read from the server: its HTML and the `_meta.ui` its content carries.
#[derive(Debug, Clone, PartialEq)]
pub struct AppView {
    /// The `ui://` URI.
    pub uri: String,
    /// The HTML document (decoded from base64 when the server sent a blob).
    pub html: String,
    /// `_meta.ui` of the content: `csp` (`connectDomains`, `resourceDomains`,
    /// `frameDomains`, `baseUriDomains`), `permissions`, `domain`, `prefersBorder`. Empty
    /// when the server sent none; the host then applies the restrictive default policy.
    pub ui: Map<String, Value>,
}

impl AppView {
    /// The origins the view may connect to (`csp.connectDomains`); empty means none.
    pub fn connect_domains(&self) -> Vec<&str> {
        self.csp_list("connectDomains")
    }

    /// The origins the view may load resources from (`csp.resourceDomains`).
    pub fn resource_domains(&self) -> Vec<&str> {
        self.csp_list("resourceDomains")
    }

    /// Whether the view would like a border (`prefersBorder`); `None` leaves it to the host.
    pub fn prefers_border(&self) -> Option<bool> {
        self.ui.get("prefersBorder").and_then(Value::as_bool)
    }

    fn csp_list(&self, key: &str) -> Vec<&str> {
        self.ui
            .get("csp")
            .and_then(|c| c.get(key))
            .and_then(Value::as_array)
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

fn not_a_view(uri: &str, why: impl Into<String>) -> Error {
    Error::Unexpected(Unexpected::NotAView {
        uri: uri.to_owned(),
        why: why.into(),
    })
}

/// The view at `uri` in the contents of a `resources/read` answer.
pub(crate) fn view_from(uri: &str, contents: Vec<ResourceContents>) -> Result<AppView, Error> {
    let only = contents.len() == 1;
    let part = contents.into_iter().find(|c| {
        only || match c {
            ResourceContents::Text(t) => t.uri == uri,
            ResourceContents::Blob(b) => b.uri == uri,
        }
    });
    let (mime, meta, html) = match part {
        None => return Err(not_a_view(uri, "the answer has no content for this URI")),
        Some(ResourceContents::Text(t)) => (t.mime_type, t.meta, t.text),
        Some(ResourceContents::Blob(b)) => {
            let bytes = decode_base64(&b.blob)
                .ok_or_else(|| not_a_view(uri, "the blob is not valid base64"))?;
            let html = String::from_utf8(bytes)
                .map_err(|_| not_a_view(uri, "the blob is not UTF-8 text"))?;
            (b.mime_type, b.meta, html)
        }
    };
    if mime.as_deref() != Some(MIME_TYPE) {
        return Err(not_a_view(
            uri,
            format!("its MIME type is {mime:?}, not {MIME_TYPE:?}"),
        ));
    }
    let ui = meta
        .and_then(|mut m| m.remove("ui"))
        .and_then(|ui| match ui {
            Value::Object(o) => Some(o),
            _ => None,
        })
        .unwrap_or_default();
    Ok(AppView {
        uri: uri.to_owned(),
        html,
        ui,
    })
}

/// Standard base64 (padding optional, no line breaks), or `None`.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.as_bytes().chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode_base64;

    #[test]
    fn base64_decodes_with_and_without_padding_and_refuses_garbage() {
        assert_eq!(decode_base64("aGk=").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode_base64("aGk").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode_base64("PGI+").as_deref(), Some(&b"<b>"[..]));
        assert_eq!(decode_base64("").as_deref(), Some(&b""[..]));
        assert!(decode_base64("a").is_none());
        assert!(decode_base64("a$==").is_none());
    }
}
