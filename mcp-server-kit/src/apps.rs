//! MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension): a tool names an
//! interactive HTML view, served as a `ui://` resource, that the host renders next to the
//! tool's result.
//!
//! The extension's parts on the server side, as its specification (2026-01-26) defines them:
//! - the **view**: a resource whose URI starts with `ui://`, whose MIME type is
//!   [`MIME_TYPE`] and whose `_meta.ui` carries what the host needs to sandbox it (the origins
//!   of its Content Security Policy, the browser permissions it asks for, a dedicated origin,
//!   whether it wants a border). [`AppView`] builds it; the same `_meta.ui` is put on the
//!   `resources/list` entry (so a host can review it at connection time) and on the content
//!   `resources/read` returns (which takes precedence for the host).
//! - the **link**: a tool's `_meta.ui.resourceUri` names the view, and `_meta.ui.visibility`
//!   says whether the model, the view, or both may call the tool. [`Tool::app_view`] sets it,
//!   and the deprecated flat key `_meta["ui/resourceUri"]` too, because the specification
//!   keeps it for hosts written before the nested form (until the extension's GA).
//! - the **declaration**: a server with a view declares `{}` under
//!   `capabilities.extensions["io.modelcontextprotocol/ui"]` (the form of SEP-1724).
//!   `mcp-core` sends `capabilities.extensions` to clients of every revision, since hosts of
//!   2025-06-18 and 2025-11-25 negotiate the extension there too; hosts find the views
//!   themselves through the tools' metadata.
//!
//! The view talks to the host, never to the server: the host relays its `tools/call` and
//! `resources/read`. So a server needs nothing more than the view and the link. The
//! specification asks tools with a view to keep returning meaningful `content` (hosts without
//! the extension show only that), and suggests (a SHOULD) that servers check the client's
//! declaration before offering a view; the kit always lists the metadata, which hosts that do
//! not know the extension ignore.
//!
//! ```
//! use mcp_server_kit::apps::{AppView, Csp};
//! use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
//!
//! let view = AppView::new("ui://clock/view", "clock", "<!DOCTYPE html><html>...</html>")
//!     .csp(Csp::default().connect_domain("https://time.example.com"))
//!     .prefers_border(true);
//! let server = Server::builder("clock", "1.0.0")
//!     .app_view(view)
//!     .tool(
//!         Tool::new("now", |_: NoArgs, _ctx: &Context| Ok::<_, Error>("12:00"))
//!             .app_view("ui://clock/view"),
//!     )
//!     .build()?;
//! # Ok::<(), Error>(())
//! ```

use serde_json::{Map, Value, json};

use crate::resource::Resource;
use crate::tool::Tool;
use mcp_core::types::ResourceContents;

/// The extension identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an HTML view: the only content type the extension defines.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme every view must use.
pub const URI_SCHEME: &str = "ui://";

/// The deprecated flat `_meta` key that named a tool's view before `_meta.ui.resourceUri`.
/// Hosts must still read it; [`Tool::app_view`] writes both.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The origins a view may reach, from which the host builds its Content Security Policy.
/// Empty lists are left out: an omitted list means the secure default (no origin).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csp {
    connect: Vec<String>,
    resource: Vec<String>,
    frame: Vec<String>,
    base_uri: Vec<String>,
}

impl Csp {
    /// Allows network requests (fetch, XHR, WebSocket) to `origin` (`connectDomains`, CSP
    /// `connect-src`).
    pub fn connect_domain(mut self, origin: impl Into<String>) -> Csp {
        self.connect.push(origin.into());
        self
    }

    /// Allows images, scripts, styles, fonts and media from `origin` (`resourceDomains`;
    /// wildcard subdomains such as `https://*.example.com` are allowed).
    pub fn resource_domain(mut self, origin: impl Into<String>) -> Csp {
        self.resource.push(origin.into());
        self
    }

    /// Allows nested iframes from `origin` (`frameDomains`, CSP `frame-src`).
    pub fn frame_domain(mut self, origin: impl Into<String>) -> Csp {
        self.frame.push(origin.into());
        self
    }

    /// Allows `origin` as the document's base URI (`baseUriDomains`, CSP `base-uri`).
    pub fn base_uri_domain(mut self, origin: impl Into<String>) -> Csp {
        self.base_uri.push(origin.into());
        self
    }

    fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        for (key, list) in [
            ("connectDomains", &self.connect),
            ("resourceDomains", &self.resource),
            ("frameDomains", &self.frame),
            ("baseUriDomains", &self.base_uri),
        ] {
            if !list.is_empty() {
                m.insert(key.into(), json!(list));
            }
        }
        m
    }
}

/// A browser capability a view asks for; the host may grant it through the iframe's `allow`
/// attribute (the view must not count on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    /// `camera`.
    Camera,
    /// `microphone`.
    Microphone,
    /// `geolocation`.
    Geolocation,
    /// `clipboardWrite` (Permission Policy `clipboard-write`).
    ClipboardWrite,
}

impl Permission {
    /// The key under `_meta.ui.permissions`.
    pub fn key(self) -> &'static str {
        match self {
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
            Permission::Geolocation => "geolocation",
            Permission::ClipboardWrite => "clipboardWrite",
        }
    }
}

/// Who may call a tool (`_meta.ui.visibility`; both when unset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// `"model"`: the agent sees and calls the tool.
    Model,
    /// `"app"`: views of this server may call the tool (through the host).
    App,
}

impl Visibility {
    fn as_str(self) -> &'static str {
        match self {
            Visibility::Model => "model",
            Visibility::App => "app",
        }
    }
}

/// An app view: HTML served as a `ui://` resource with the extension's MIME type and
/// `_meta.ui`. Register it with
/// [`ServerBuilder::app_view`](crate::ServerBuilder::app_view); link tools to it with
/// [`Tool::app_view`].
#[derive(Clone, Debug)]
pub struct AppView {
    uri: String,
    name: String,
    html: String,
    title: Option<String>,
    description: Option<String>,
    csp: Option<Csp>,
    permissions: Vec<Permission>,
    domain: Option<String>,
    prefers_border: Option<bool>,
}

impl AppView {
    /// A view at `uri` (it must start with `ui://`; [`build`](crate::ServerBuilder::build)
    /// refuses it otherwise) whose content is the HTML5 document `html`.
    pub fn new(
        uri: impl Into<String>,
        name: impl Into<String>,
        html: impl Into<String>,
    ) -> AppView {
        AppView {
            uri: uri.into(),
            name: name.into(),
            html: html.into(),
            title: None,
            description: None,
            csp: None,
            permissions: Vec::new(),
            domain: None,
            prefers_border: None,
        }
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Sets the display title of the resource.
    pub fn title(mut self, text: impl Into<String>) -> AppView {
        self.title = Some(text.into());
        self
    }

    /// Sets the description of the resource.
    pub fn description(mut self, text: impl Into<String>) -> AppView {
        self.description = Some(text.into());
        self
    }

    /// The origins the view may reach. Without it the host applies its restrictive default
    /// (no external origin at all), which suits a self-contained page.
    pub fn csp(mut self, csp: Csp) -> AppView {
        self.csp = Some(csp);
        self
    }

    /// Asks for a browser capability (once each; the host decides).
    pub fn permission(mut self, p: Permission) -> AppView {
        if !self.permissions.contains(&p) {
            self.permissions.push(p);
        }
        self
    }

    /// A dedicated origin for the view's sandbox (`_meta.ui.domain`); its form is up to each
    /// host, for views that need a stable origin (OAuth callbacks, CORS allowlists).
    pub fn domain(mut self, domain: impl Into<String>) -> AppView {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around the view
    /// (`_meta.ui.prefersBorder`); hosts' defaults differ, so saying it is recommended.
    pub fn prefers_border(mut self, border: bool) -> AppView {
        self.prefers_border = Some(border);
        self
    }

    /// The `_meta.ui` object: `csp`, `permissions`, `domain`, `prefersBorder`, each only
    /// when set.
    pub fn ui_meta(&self) -> Map<String, Value> {
        let mut ui = Map::new();
        if let Some(csp) = &self.csp {
            ui.insert("csp".into(), Value::Object(csp.to_json()));
        }
        if !self.permissions.is_empty() {
            let mut sorted = self.permissions.clone();
            sorted.sort();
            let perms: Map<String, Value> = sorted
                .iter()
                .map(|p| (p.key().to_owned(), json!({})))
                .collect();
            ui.insert("permissions".into(), Value::Object(perms));
        }
        if let Some(d) = &self.domain {
            ui.insert("domain".into(), json!(d));
        }
        if let Some(b) = self.prefers_border {
            ui.insert("prefersBorder".into(), json!(b));
        }
        ui
    }

    /// The resource that serves the view: the HTML as text with [`MIME_TYPE`], `_meta.ui` on
    /// both the listed definition and the content read.
    pub fn into_resource(self) -> Resource {
        let meta = ui_wrapped(self.ui_meta());
        let contents = match ResourceContents::text(self.uri.clone(), self.html) {
            ResourceContents::Text(mut t) => {
                t.mime_type = Some(MIME_TYPE.to_owned());
                t.meta = meta.clone();
                ResourceContents::Text(t)
            }
            other => other,
        };
        let mut r = Resource::new(self.uri, self.name, move |_| Ok(vec![contents.clone()]))
            .mime_type(MIME_TYPE);
        r.def.meta = meta;
        r.def.title = self.title;
        r.def.description = self.description;
        r
    }
}

/// `{"ui": ui}`, or nothing when `ui` is empty (an empty `_meta.ui` says nothing).
fn ui_wrapped(ui: Map<String, Value>) -> Option<Map<String, Value>> {
    if ui.is_empty() {
        return None;
    }
    let mut m = Map::new();
    m.insert("ui".into(), Value::Object(ui));
    Some(m)
}

impl Tool {
    /// Links the tool to the view at `uri`: sets `_meta.ui.resourceUri` and the deprecated
    /// `_meta["ui/resourceUri"]`, keeping the rest of `_meta`. The host reads the view with
    /// `resources/read` and renders the tool's results in it; the tool's `content` must still
    /// make sense alone, for hosts without the extension.
    pub fn app_view(mut self, uri: impl Into<String>) -> Tool {
        let uri = uri.into();
        let meta = self.def.meta.get_or_insert_with(Map::new);
        ui_object(meta).insert("resourceUri".into(), json!(uri));
        meta.insert(LEGACY_RESOURCE_URI_KEY.into(), json!(uri));
        self
    }

    /// Who may call the tool (`_meta.ui.visibility`): `[Visibility::App]` keeps it from the
    /// model, for calls only the view makes (a refresh button, a form). Unset means both.
    pub fn visibility(mut self, who: &[Visibility]) -> Tool {
        let list: Vec<&str> = who.iter().map(|v| v.as_str()).collect();
        let meta = self.def.meta.get_or_insert_with(Map::new);
        ui_object(meta).insert("visibility".into(), json!(list));
        self
    }

    /// The view this tool is linked to: `_meta.ui.resourceUri`, else the deprecated flat key.
    pub fn app_view_uri(&self) -> Option<&str> {
        view_uri(self.def.meta.as_ref()?)
    }
}

/// `meta["ui"]` as an object, made one if it is missing or not an object.
fn ui_object(meta: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let slot = meta.entry("ui").or_insert_with(|| json!({}));
    if !slot.is_object() {
        *slot = json!({});
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("made an object just above"),
    }
}

/// The view a tool's `_meta` names, in the nested form or the deprecated flat one.
pub(crate) fn view_uri(meta: &Map<String, Value>) -> Option<&str> {
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .and_then(Value::as_str)
        .or_else(|| meta.get(LEGACY_RESOURCE_URI_KEY).and_then(Value::as_str))
}

/// The server's entry under `capabilities.extensions` (no settings are defined for servers).
pub fn server_capability() -> Value {
    json!({})
}

/// Checks the views and links of a registry at build time, and says whether the server uses
/// the extension (a view or a linked tool), so it is declared.
///
/// # Errors
/// A view (a resource with [`MIME_TYPE`]) whose URI does not start with `ui://`, or a tool
/// linked to a view that no resource or template serves: the specification requires both,
/// and a host would fail on them only when it renders the tool.
pub(crate) fn check(reg: &crate::shared::Registry) -> Result<bool, crate::Error> {
    let mut used = false;
    for r in &reg.resources {
        if r.def.mime_type.as_deref() == Some(MIME_TYPE) {
            used = true;
            if !r.def.uri.starts_with(URI_SCHEME) {
                return Err(crate::Error::InvalidParams(format!(
                    "app view {:?}: the URI must start with {URI_SCHEME}",
                    r.def.uri
                )));
            }
        }
    }
    for t in &reg.tools {
        let Some(uri) = t.app_view_uri() else {
            continue;
        };
        used = true;
        let served = reg.resources.iter().any(|r| r.def.uri == uri)
            || reg
                .templates
                .iter()
                .any(|t| t.template.matches(uri).is_some());
        if !served {
            return Err(crate::Error::InvalidParams(format!(
                "tool {:?} links to the app view {uri:?}, which no resource serves",
                t.def.name
            )));
        }
    }
    Ok(used)
}
