//! Resources and resource templates: definitions plus the handlers that read them.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_core::types::{
    Annotations, Icon, Resource as ResourceDef, ResourceContents,
    ResourceTemplate as ResourceTemplateDef,
};

use crate::context::Context;
use crate::error::Error;
use crate::prompt::Completer;
use crate::uri_template::{TemplateError, UriTemplate};

pub(crate) type ReadFn =
    dyn Fn(&Context) -> Result<Vec<ResourceContents>, Error> + Send + Sync + 'static;
pub(crate) type TemplateReadFn = dyn Fn(&str, &BTreeMap<String, String>, &Context) -> Result<Vec<ResourceContents>, Error>
    + Send
    + Sync
    + 'static;

/// A resource with a fixed URI.
///
/// ```
/// use mcp_server_kit::Resource;
/// let r = Resource::text("test://static-text", "static-text", "text/plain", "hello");
/// assert_eq!(r.uri(), "test://static-text");
/// ```
#[derive(Clone)]
pub struct Resource {
    pub(crate) def: ResourceDef,
    pub(crate) read: Arc<ReadFn>,
    pub(crate) subscribable: bool,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("def", &self.def).finish()
    }
}

impl Resource {
    /// A resource read by `read` each time a client asks.
    pub fn new<F>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Resource
    where
        F: Fn(&Context) -> Result<Vec<ResourceContents>, Error> + Send + Sync + 'static,
    {
        Resource {
            def: ResourceDef::new(uri, name),
            read: Arc::new(read),
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

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime: &str) -> Resource {
        self.def.mime_type = Some(mime.to_owned());
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
    /// variables matched from it.
    ///
    /// # Errors
    /// When the template is not a valid RFC 6570 template of the supported forms.
    pub fn new<F>(
        uri_template: &str,
        name: impl Into<String>,
        read: F,
    ) -> Result<ResourceTemplate, TemplateError>
    where
        F: Fn(&str, &BTreeMap<String, String>, &Context) -> Result<Vec<ResourceContents>, Error>
            + Send
            + Sync
            + 'static,
    {
        let template = UriTemplate::parse(uri_template)?;
        Ok(ResourceTemplate {
            def: ResourceTemplateDef::new(uri_template, name),
            template,
            read: Arc::new(read),
            completers: BTreeMap::new(),
            subscribable: false,
        })
    }

    /// The definition clients see in `resources/templates/list`.
    pub fn definition(&self) -> &ResourceTemplateDef {
        &self.def
    }

    /// Sets the MIME type of the resources.
    pub fn mime_type(mut self, mime: &str) -> ResourceTemplate {
        self.def.mime_type = Some(mime.to_owned());
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

/// Sets the MIME type of resource contents.
pub fn with_mime(contents: ResourceContents, mime_type: &str) -> ResourceContents {
    match contents {
        ResourceContents::Text(mut t) => {
            t.mime_type = Some(mime_type.to_owned());
            ResourceContents::Text(t)
        }
        ResourceContents::Blob(mut b) => {
            b.mime_type = Some(mime_type.to_owned());
            ResourceContents::Blob(b)
        }
    }
}
