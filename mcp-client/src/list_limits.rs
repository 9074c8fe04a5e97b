//! The bounds of a listing. The [`Client`](crate::Client) keeps them (the builder sets them)
//! and `pages` and `skills` enforce them on every listing they follow, so they sit below all
//! of those.

use std::time::Duration;

/// The bounds of one listing (every page of a `*/list`), so that a server that pages without
/// end (a new `nextCursor` each time), or one whose list is too long to hold, cannot keep a
/// caller iterating forever while its memory grows. Set on the [`ClientBuilder`]
/// (`max_list_pages`, `max_list_items`, `max_list_bytes`, `list_timeout`).
///
/// [`ClientBuilder`]: crate::ClientBuilder
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListLimits {
    pub pages: usize,
    pub items: usize,
    /// The pages' JSON, all of them: what a caller collecting the list holds at most.
    pub bytes: usize,
    pub deadline: Duration,
}

/// The default of `ClientBuilder::max_list_bytes`: 64 MiB of JSON for one listing.
pub(crate) const DEFAULT_LIST_BYTES: usize = 64 << 20;

impl Default for ListLimits {
    /// 1,000 pages, 10,000 items, 64 MiB, 2 minutes: far beyond a list a host could show or a
    /// model could choose from, and short of what a hostile server needs to exhaust memory
    /// (the pages and items alone would allow a thousand pages of the transport's largest
    /// message, gigabytes: the bytes bound the whole).
    fn default() -> Self {
        ListLimits {
            pages: 1_000,
            items: 10_000,
            bytes: DEFAULT_LIST_BYTES,
            deadline: Duration::from_secs(120),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A collected listing stays within tens of megabytes by default, whatever the server.
    #[test]
    fn a_listing_is_bounded_in_bytes_by_default() {
        let l = super::ListLimits::default();
        assert!(l.bytes <= 64 << 20, "{}", l.bytes);
    }
}
