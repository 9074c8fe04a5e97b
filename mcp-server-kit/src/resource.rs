//! Resources and resource templates: definitions plus the handlers that read them.
//!
//! A read handler returns anything [`IntoResourceResult`]: text, a [`Blob`], JSON, or the
//! contents in full. For the short forms the kit fills in the URI being read and the MIME
//! type declared on the resource (or template), so a handler never repeats its own URI.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_core::types::{
    Annotations, Icon, ReadResourceResult, Resource as ResourceDef, ResourceContents,
    ResourceTemplate as ResourceTemplateDef,
};
use serde::Serialize;
use serde_json::Value;

use crate::context::Context;
use crate::error::Error;
use crate::prompt::Completer;
use crate::results::{Blob, Structured, with_mime};
use crate::schema::JsonSchema;
use crate::uri_template::{TemplateError, UriTemplate};

pub(crate) type ReadFn =
    dyn Fn(&Context) -> Result<Vec<ResourceContents>, Error> + Send + Sync + 'static;
pub(crate) type TemplateReadFn = dyn Fn(&str, &BTreeMap<String, String>, &Context) -> Result<Vec<ResourceContents>, Error>
    + Send
    + Sync
    + 'static;

/// A resource's handler before the kit binds its URI and MIME type: kept so that
/// [`Resource::mime_type`], called after construction, still reaches what the handler returns.
type SourceFn = dyn Fn(&str, Option<&str>, &Context) -> Result<Vec<ResourceContents>, Error>
    + Send
    + Sync
    + 'static;
/// The same for a template, which also gets the variables matched from the URI.
type TemplateSourceFn = dyn Fn(
        &str,
        &BTreeMap<String, String>,
        Option<&str>,
        &Context,
    ) -> Result<Vec<ResourceContents>, Error>
    + Send
    + Sync
    + 'static;

/// What a resource read handler may return. The short forms get the URI being read and the
/// MIME type declared on the resource or template from the kit:
///
/// - `String` / `&str`: text contents;
/// - [`Blob`]: blob contents, with the blob's own MIME type;
/// - `serde_json::Value` or [`Structured`]: the JSON as text, `application/json`;
/// - [`ResourceContents`], `Vec<ResourceContents>` or [`ReadResourceResult`]: as given (a
///   handler with several parts, or other URIs, says so in full).
pub trait IntoResourceResult {
    /// The contents of the resource at `uri`, whose declared MIME type is `mime_type`.
    ///
    /// # Errors
    /// When the value cannot be turned into contents (a [`Structured`] value that does not
    /// serialize).
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error>;
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource_contents(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        Ok(self)
    }
}

impl IntoResourceResult for ResourceContents {
    fn into_resource_contents(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        Ok(vec![self])
    }
}

/// Only the contents are kept: the cache hints of a result are the server's to set
/// ([`ServerBuilder`](crate::ServerBuilder)), not one read's.
impl IntoResourceResult for ReadResourceResult {
    fn into_resource_contents(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        Ok(self.contents)
    }
}

fn text_contents(uri: &str, mime_type: Option<&str>, text: String) -> Vec<ResourceContents> {
    let contents = ResourceContents::text(uri, text);
    vec![match mime_type {
        Some(m) => with_mime(contents, m),
        None => contents,
    }]
}

impl IntoResourceResult for String {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        Ok(text_contents(uri, mime_type, self))
    }
}

impl IntoResourceResult for &str {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        Ok(text_contents(uri, mime_type, self.to_owned()))
    }
}

impl IntoResourceResult for Blob {
    fn into_resource_contents(
        self,
        uri: &str,
        _: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        let contents = ResourceContents::blob(uri, self.base64());
        Ok(vec![with_mime(contents, self.mime_type())])
    }
}

impl IntoResourceResult for Value {
    fn into_resource_contents(
        self,
        uri: &str,
        _: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        Ok(text_contents(
            uri,
            Some("application/json"),
            self.to_string(),
        ))
    }
}

impl<T: Serialize + JsonSchema> IntoResourceResult for Structured<T> {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, Error> {
        serde_json::to_value(&self.0)
            .map_err(|e| Error::Message(format!("resource could not be serialized: {e}")))?
            .into_resource_contents(uri, mime_type)
    }
}

/// Binds a resource's handler to its URI and MIME type.
fn bind(source: &Arc<SourceFn>, uri: &str, mime_type: Option<&str>) -> Arc<ReadFn> {
    let (source, uri, mime) = (source.clone(), uri.to_owned(), mime_type.map(str::to_owned));
    Arc::new(move |ctx| source(&uri, mime.as_deref(), ctx))
}

/// Binds a template's handler to its MIME type.
fn bind_template(source: &Arc<TemplateSourceFn>, mime_type: Option<&str>) -> Arc<TemplateReadFn> {
    let (source, mime) = (source.clone(), mime_type.map(str::to_owned));
    Arc::new(move |uri, vars, ctx| source(uri, vars, mime.as_deref(), ctx))
}

/// A resource with a fixed URI.
///
/// ```
/// use mcp_server_kit::{Context, Error, Resource};
/// let r = Resource::text("test://static-text", "static-text", "text/plain", "hello");
/// assert_eq!(r.uri(), "test://static-text");
///
/// // A handler returns the text alone; the kit adds the URI and the MIME type.
/// let motd = Resource::new("notes://motd", "motd", |_ctx: &Context| {
///     Ok::<_, Error>(String::from("Welcome"))
/// })
/// .mime_type("text/markdown");
/// ```
#[derive(Clone)]
pub struct Resource {
    pub(crate) def: ResourceDef,
    pub(crate) read: Arc<ReadFn>,
    source: Arc<SourceFn>,
    pub(crate) subscribable: bool,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("def", &self.def).finish()
    }
}

impl Resource {
    /// A resource read by `read` each time a client asks; `read` returns anything
    /// [`IntoResourceResult`] (text, a [`Blob`], JSON, or the contents in full).
    pub fn new<R, F>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Resource
    where
        R: IntoResourceResult,
        F: Fn(&Context) -> Result<R, Error> + Send + Sync + 'static,
    {
        let def = ResourceDef::new(uri, name);
        let source: Arc<SourceFn> =
            Arc::new(move |uri, mime, ctx| read(ctx)?.into_resource_contents(uri, mime));
        Resource {
            read: bind(&source, &def.uri, None),
            source,
            def,
            subscribable: false,
        }
    }

    /// A resource whose content is fixed text.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: &str,
        text: impl Into<String>,
    ) -> Resource {
        let uri = uri.into();
        let contents = with_mime(ResourceContents::text(uri.clone(), text), mime_type);
        Resource::new(uri, name, move |_| Ok(vec![contents.clone()])).mime_type(mime_type)
    }

    /// A resource whose content is fixed binary data, given base64-encoded.
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: &str,
        base64: impl Into<String>,
    ) -> Resource {
        let uri = uri.into();
        let contents = with_mime(ResourceContents::blob(uri.clone(), base64), mime_type);
        Resource::new(uri, name, move |_| Ok(vec![contents.clone()])).mime_type(mime_type)
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.def.uri
    }

    /// The definition clients see in `resources/list`.
    pub fn definition(&self) -> &ResourceDef {
        &self.def
    }

    /// Sets the MIME type, which text returned by the handler then carries too.
    pub fn mime_type(mut self, mime: &str) -> Resource {
        self.def.mime_type = Some(mime.to_owned());
        self.read = bind(&self.source, &self.def.uri, Some(mime));
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Resource {
        self.def.description = Some(text.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, text: impl Into<String>) -> Resource {
        self.def.title = Some(text.into());
        self
    }

    /// Sets the size in bytes.
    pub fn size(mut self, bytes: u64) -> Resource {
        self.def.size = Some(bytes);
        self
    }

    /// Sets annotations.
    pub fn annotations(mut self, a: Annotations) -> Resource {
        self.def.annotations = Some(a);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Resource {
        self.def.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Clients may subscribe to updates of this resource; announce them with
    /// [`Server::resource_updated`](crate::Server::resource_updated).
    pub fn subscribable(mut self) -> Resource {
        self.subscribable = true;
        self
    }
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) def: ResourceTemplateDef,
    pub(crate) template: UriTemplate,
    pub(crate) read: Arc<TemplateReadFn>,
    source: Arc<TemplateSourceFn>,
    pub(crate) completers: BTreeMap<String, Arc<Completer>>,
    pub(crate) subscribable: bool,
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("def", &self.def)
            .finish()
    }
}

impl ResourceTemplate {
    /// A template such as `test://template/{id}/data`; `read` gets the concrete URI and the
    /// variables matched from it, and returns anything [`IntoResourceResult`] (text is filled
    /// in with that URI and the template's MIME type).
    ///
    /// # Errors
    /// When the template is not a valid RFC 6570 template of the supported forms.
    pub fn new<R, F>(
        uri_template: &str,
        name: impl Into<String>,
        read: F,
    ) -> Result<ResourceTemplate, TemplateError>
    where
        R: IntoResourceResult,
        F: Fn(&str, &BTreeMap<String, String>, &Context) -> Result<R, Error>
            + Send
            + Sync
            + 'static,
    {
        let template = UriTemplate::parse(uri_template)?;
        let source: Arc<TemplateSourceFn> = Arc::new(move |uri, vars, mime, ctx| {
            read(uri, vars, ctx)?.into_resource_contents(uri, mime)
        });
        Ok(ResourceTemplate {
            def: ResourceTemplateDef::new(uri_template, name),
            template,
            read: bind_template(&source, None),
            source,
            completers: BTreeMap::new(),
            subscribable: false,
        })
    }

    /// The definition clients see in `resources/templates/list`.
    pub fn definition(&self) -> &ResourceTemplateDef {
        &self.def
    }

    /// Sets the MIME type of the resources, which text returned by the handler then carries.
    pub fn mime_type(mut self, mime: &str) -> ResourceTemplate {
        self.def.mime_type = Some(mime.to_owned());
        self.read = bind_template(&self.source, Some(mime));
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> ResourceTemplate {
        self.def.description = Some(text.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, text: impl Into<String>) -> ResourceTemplate {
        self.def.title = Some(text.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> ResourceTemplate {
        self.def.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Completes values of the template variable `var` for `completion/complete`.
    pub fn complete<F>(mut self, var: &str, f: F) -> ResourceTemplate
    where
        F: Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync + 'static,
    {
        self.completers.insert(var.to_owned(), Arc::new(f));
        self
    }

    /// Clients may subscribe to resources of this template.
    pub fn subscribable(mut self) -> ResourceTemplate {
        self.subscribable = true;
        self
    }
}
