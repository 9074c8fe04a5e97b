//! The `*/list` requests as iterators that follow `nextCursor`.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::time::Instant;
use std::vec;

use mcp_core::types::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt,
    Resource, ResourceTemplate, Tool, methods,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::call::CallOptions;
use crate::client::Client;
use crate::error::{Error, Unexpected};
use crate::list_limits::ListLimits;

/// One of the paginated lists: its method, page type and item type.
pub trait PageKind {
    /// The method (`tools/list`, ...).
    const METHOD: &'static str;
    /// The result of one page.
    type Page: DeserializeOwned + Serialize;
    /// What the list holds.
    type Item;
    /// A page's items and the cursor of the next page.
    fn split(page: Self::Page) -> (Vec<Self::Item>, Option<String>);
}

/// `tools/list`.
#[derive(Debug)]
pub enum Tools {}
/// `prompts/list`.
#[derive(Debug)]
pub enum Prompts {}
/// `resources/list`.
#[derive(Debug)]
pub enum Resources {}
/// `resources/templates/list`.
#[derive(Debug)]
pub enum ResourceTemplates {}

impl PageKind for Tools {
    const METHOD: &'static str = methods::TOOLS_LIST;
    type Page = ListToolsResult;
    type Item = Tool;
    fn split(p: ListToolsResult) -> (Vec<Tool>, Option<String>) {
        (p.tools, p.next_cursor)
    }
}

impl PageKind for Prompts {
    const METHOD: &'static str = methods::PROMPTS_LIST;
    type Page = ListPromptsResult;
    type Item = Prompt;
    fn split(p: ListPromptsResult) -> (Vec<Prompt>, Option<String>) {
        (p.prompts, p.next_cursor)
    }
}

impl PageKind for Resources {
    const METHOD: &'static str = methods::RESOURCES_LIST;
    type Page = ListResourcesResult;
    type Item = Resource;
    fn split(p: ListResourcesResult) -> (Vec<Resource>, Option<String>) {
        (p.resources, p.next_cursor)
    }
}

impl PageKind for ResourceTemplates {
    const METHOD: &'static str = methods::RESOURCES_TEMPLATES_LIST;
    type Page = ListResourceTemplatesResult;
    type Item = ResourceTemplate;
    fn split(p: ListResourceTemplatesResult) -> (Vec<ResourceTemplate>, Option<String>) {
        (p.resource_templates, p.next_cursor)
    }
}

impl Client {
    fn page<K: PageKind>(&self, cursor: Option<&str>) -> Result<K::Page, Error> {
        self.page_with::<K>(cursor, &CallOptions::default())
    }

    fn page_with<K: PageKind>(
        &self,
        cursor: Option<&str>,
        options: &CallOptions,
    ) -> Result<K::Page, Error> {
        let params = match cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        self.request_with(K::METHOD, params, options)
    }

    /// Every tool, following `nextCursor` page by page as the iterator is consumed.
    pub fn list_tools(&self) -> Pages<'_, Tools> {
        Pages::new(self)
    }

    /// One page of `tools/list`.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn list_tools_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<mcp_core::types::ListToolsResult, Error> {
        self.page::<Tools>(cursor)
    }

    /// Every prompt, page by page.
    pub fn list_prompts(&self) -> Pages<'_, Prompts> {
        Pages::new(self)
    }

    /// One page of `prompts/list`.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn list_prompts_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<mcp_core::types::ListPromptsResult, Error> {
        self.page::<Prompts>(cursor)
    }

    /// Every resource, page by page.
    pub fn list_resources(&self) -> Pages<'_, Resources> {
        Pages::new(self)
    }

    /// One page of `resources/list`.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn list_resources_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<mcp_core::types::ListResourcesResult, Error> {
        self.page::<Resources>(cursor)
    }

    /// Every resource template, page by page.
    pub fn list_resource_templates(&self) -> Pages<'_, ResourceTemplates> {
        Pages::new(self)
    }

    /// One page of `resources/templates/list`.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<mcp_core::types::ListResourceTemplatesResult, Error> {
        self.page::<ResourceTemplates>(cursor)
    }
}

/// The items of a paginated list, fetched one page at a time as the iteration reaches them.
/// An error ends the iteration after it is yielded; so does a cursor the server already
/// returned (a server looping its pages would otherwise never end), and so does a list that
/// goes past the client's bounds ([`Unexpected::ListTooLong`]: `max_list_pages`,
/// `max_list_items`, `max_list_bytes`, and `list_timeout` for the whole list, each page's
/// request included).
///
/// ```no_run
/// # fn f(client: &mcp_client::Client) -> Result<(), mcp_client::Error> {
/// let tools: Vec<_> = client.list_tools().collect::<Result<_, _>>()?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Pages<'c, K: PageKind> {
    client: &'c Client,
    items: vec::IntoIter<K::Item>,
    next: Option<Option<String>>,
    /// Hashes of the cursors seen: a cursor may be long, and a hash is all a repeat needs (a
    /// collision ends the list early, with an error, which a server can only cause on purpose).
    seen: HashSet<u64>,
    failed: Option<Error>,
    limits: ListLimits,
    pages: usize,
    items_seen: usize,
    bytes_seen: usize,
    deadline: Option<Instant>,
    _kind: PhantomData<K>,
}

impl<'c, K: PageKind> Pages<'c, K> {
    pub(crate) fn new(client: &'c Client) -> Self {
        Pages {
            client,
            items: Vec::new().into_iter(),
            next: Some(None),
            seen: HashSet::new(),
            failed: None,
            limits: client.list_limits(),
            pages: 0,
            items_seen: 0,
            bytes_seen: 0,
            deadline: None,
            _kind: PhantomData,
        }
    }

    fn too_long(&self, reached: String) -> Error {
        Error::Unexpected(Unexpected::ListTooLong {
            method: K::METHOD,
            reached,
        })
    }
}

fn cursor_hash(c: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    c.hash(&mut h);
    h.finish()
}

impl<K: PageKind> Iterator for Pages<'_, K> {
    type Item = Result<K::Item, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.items.next() {
                return Some(Ok(item));
            }
            if let Some(e) = self.failed.take() {
                return Some(Err(e));
            }
            let cursor = self.next.take()?;
            let limits = self.limits;
            if self.pages >= limits.pages {
                return Some(Err(self.too_long(format!(
                    "{} pages (ClientBuilder::max_list_pages)",
                    limits.pages
                ))));
            }
            let now = Instant::now();
            let deadline = *self.deadline.get_or_insert(now + limits.deadline);
            let left = deadline.saturating_duration_since(now);
            if left.is_zero() {
                return Some(Err(self.too_long(format!(
                    "{:?} for the whole list (ClientBuilder::list_timeout)",
                    limits.deadline
                ))));
            }
            // Each page's request ends by the list's deadline at the latest.
            let t = self.client.default_timeout();
            let timeout = mcp_core::engine::Timeout {
                initial: t.initial.min(left),
                reset_on_progress: t.reset_on_progress,
                max_total: t.max_total.min(left),
            };
            let options = CallOptions::new().timeout(timeout);
            let page = match self.client.page_with::<K>(cursor.as_deref(), &options) {
                Ok(p) => p,
                Err(Error::Timeout { .. }) if Instant::now() >= deadline => {
                    return Some(Err(self.too_long(format!(
                        "{:?} for the whole list (ClientBuilder::list_timeout)",
                        limits.deadline
                    ))));
                }
                Err(e) => return Some(Err(e)),
            };
            self.pages += 1;
            self.bytes_seen = self
                .bytes_seen
                .saturating_add(mcp_core::jsonrpc::json_len(&page));
            if self.bytes_seen > limits.bytes {
                return Some(Err(self.too_long(format!(
                    "{} bytes (ClientBuilder::max_list_bytes)",
                    limits.bytes
                ))));
            }
            let (mut items, next) = K::split(page);
            let room = limits.items - self.items_seen;
            if items.len() > room || (items.len() == room && next.is_some()) {
                items.truncate(room);
                self.failed = Some(self.too_long(format!(
                    "{} items (ClientBuilder::max_list_items)",
                    limits.items
                )));
                self.items_seen = limits.items;
                self.items = items.into_iter();
                continue;
            }
            self.items_seen += items.len();
            self.items = items.into_iter();
            if let Some(n) = next {
                if self.seen.insert(cursor_hash(&n)) {
                    self.next = Some(Some(n));
                } else {
                    self.failed = Some(Error::Unexpected(Unexpected::RepeatedCursor {
                        method: K::METHOD,
                        cursor: n,
                    }));
                }
            }
        }
    }
}
