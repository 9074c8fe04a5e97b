//! The bounds of a listing. The [`Client`](crate::Client) keeps them (the builder sets them)
//! and `pages` and `skills` enforce them on every listing they follow, so they sit below all
//! of those.

use std::time::Duration;

/// The bounds of one listing (every page of a `*/list`), so that a server that pages without
/// end (a new `nextCursor` each time), or one whose list is too long to hold, cannot keep a
/// caller iterating forever while its memory grows. Set on the [`ClientBuilder`]
/// (`max_list_pages`, `max_list_items`, `list_timeout`).
///
/// [`ClientBuilder`]: crate::ClientBuilder
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListLimits {
    pub pages: usize,
    pub items: usize,
    pub deadline: Duration,
}

impl Default for ListLimits {
    /// 1,000 pages, 10,000 items, 2 minutes: far beyond a list a host could show or a model
    /// could choose from, and short of what a hostile server needs to exhaust memory (items
    /// of at most one message each, a page at most the transport's message limit).
    fn default() -> Self {
        ListLimits {
            pages: 1_000,
            items: 10_000,
            deadline: Duration::from_secs(120),
        }
    }
}
