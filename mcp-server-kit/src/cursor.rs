//! Opaque pagination cursors.
//!
//! A cursor names an offset into one list, so a cursor this server did not mint, or one minted
//! for another list, is refused with -32602 instead of silently paging from a wrong place.
//!
//! Where the transport gives the session a sealer (HTTP: `SessionInfo::sealer`), the cursor is
//! sealed by it, bound to its list: every instance sharing the transport's secret accepts the
//! others' cursors, as a load balancer needs. Elsewhere (stdio, where the session is the one
//! client) a cursor is the offset and a 64-bit SipHash tag under a per-process random key
//! (std's `RandomState`): an integrity check against mistakes and casual forgery, not a
//! security boundary, since a forged cursor could at worst select another page of a list the
//! client may read anyway.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use mcp_core::service::Sealer;

/// Which list a cursor belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ListKind {
    Tools,
    Prompts,
    Resources,
    Templates,
    /// `skills/list`.
    Skills,
    /// `resources/directory/read` (any directory: a cursor carries an offset only).
    Directory,
}

/// Mints and checks this process's own cursors.
pub(crate) struct CursorCodec(RandomState);

impl CursorCodec {
    pub(crate) fn new() -> Self {
        CursorCodec(RandomState::new())
    }

    fn encode(&self, kind: ListKind, offset: usize) -> String {
        format!("{offset}.{:016x}", self.tag(kind, offset))
    }

    /// The offset a cursor names, or `None` for a cursor this server did not mint for `kind`.
    fn decode(&self, kind: ListKind, cursor: &str) -> Option<usize> {
        let (offset, tag) = cursor.split_once('.')?;
        let offset: usize = offset.parse().ok()?;
        if tag.len() != 16 {
            return None;
        }
        let tag = u64::from_str_radix(tag, 16).ok()?;
        // A 64-bit comparison: its timing could only leak a tag of a page the client may read.
        (self.tag(kind, offset) == tag).then_some(offset)
    }

    fn tag(&self, kind: ListKind, offset: usize) -> u64 {
        self.0.hash_one((kind, offset as u64))
    }
}

/// The cursors of one session: sealed by the transport's sealer when it has one, else this
/// process's own.
#[derive(Clone, Copy)]
pub(crate) struct Cursors<'a> {
    pub(crate) local: &'a CursorCodec,
    pub(crate) sealer: Option<&'a dyn Sealer>,
}

impl Cursors<'_> {
    fn encode(&self, kind: ListKind, offset: usize) -> String {
        self.sealer
            .and_then(|s| s.seal(offset.to_string().as_bytes(), &kind.context()))
            // No random source for a nonce: a cursor only this process accepts still pages.
            .unwrap_or_else(|| self.local.encode(kind, offset))
    }

    fn decode(&self, kind: ListKind, cursor: &str) -> Option<usize> {
        let sealed = self
            .sealer
            .and_then(|s| s.open(cursor, &kind.context()))
            .and_then(|b| std::str::from_utf8(&b).ok()?.parse().ok());
        sealed.or_else(|| self.local.decode(kind, cursor))
    }
}

impl ListKind {
    /// What a sealed cursor is bound to: a stable name per list, so every instance reads a
    /// list's cursors alike and one list's cursor never pages another.
    fn context(self) -> Vec<u8> {
        let mut c = b"cursor\0".to_vec();
        c.extend_from_slice(self.label().as_bytes());
        c
    }

    fn label(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Prompts => "prompts/list",
            ListKind::Resources => "resources/list",
            ListKind::Templates => "resources/templates/list",
            ListKind::Skills => "skills/list",
            ListKind::Directory => "resources/directory/read",
        }
    }
}

/// One page of `items` starting at the cursor, and the cursor of the next page.
pub(crate) fn page<T: Clone>(
    codec: Cursors<'_>,
    kind: ListKind,
    items: &[T],
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(Vec<T>, Option<String>), ()> {
    let start = match cursor {
        None => 0,
        Some(c) => codec.decode(kind, c).ok_or(())?,
    };
    if start > items.len() {
        return Err(());
    }
    let end = (start + page_size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| codec.encode(kind, end));
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for the transport's sealer: "sealed" is the context and the text, and
    /// opening checks the context (enough to test how cursors use it).
    #[derive(Debug)]
    struct Tagged;

    impl Sealer for Tagged {
        fn seal(&self, plaintext: &[u8], context: &[u8]) -> Option<String> {
            Some(format!(
                "{}|{}",
                String::from_utf8_lossy(context),
                String::from_utf8_lossy(plaintext)
            ))
        }
        fn open(&self, sealed: &str, context: &[u8]) -> Option<Vec<u8>> {
            let (c, p) = sealed.split_once('|')?;
            (c.as_bytes() == context).then(|| p.as_bytes().to_vec())
        }
    }

    #[test]
    fn pages_and_refuses_forgeries() {
        let local = CursorCodec::new();
        let c = Cursors {
            local: &local,
            sealer: None,
        };
        let items: Vec<u32> = (0..5).collect();
        let (p1, next) = page(c, ListKind::Tools, &items, None, 2).unwrap();
        assert_eq!(p1, vec![0, 1]);
        let next = next.unwrap();
        let (p2, next2) = page(c, ListKind::Tools, &items, Some(&next), 2).unwrap();
        assert_eq!(p2, vec![2, 3]);
        let (p3, none) = page(c, ListKind::Tools, &items, next2.as_deref(), 2).unwrap();
        assert_eq!((p3, none), (vec![4], None));
        assert!(page(c, ListKind::Prompts, &items, Some(&next), 2).is_err());
        assert!(page(c, ListKind::Tools, &items, Some("2.0000000000000000"), 2).is_err());
        assert!(page(c, ListKind::Tools, &items, Some("garbage"), 2).is_err());
        let other = CursorCodec::new();
        assert!(
            Cursors {
                local: &other,
                sealer: None
            }
            .decode(ListKind::Tools, &next)
            .is_none()
        );
    }

    #[test]
    fn a_session_with_a_sealer_seals_its_cursors_bound_to_the_list() {
        let local = CursorCodec::new();
        let c = Cursors {
            local: &local,
            sealer: Some(&Tagged),
        };
        let items: Vec<u32> = (0..5).collect();
        let (_, next) = page(c, ListKind::Tools, &items, None, 2).unwrap();
        let next = next.unwrap();
        assert_eq!(next, "cursor\0tools/list|2");
        assert_eq!(
            page(c, ListKind::Tools, &items, Some(&next), 2).unwrap().0,
            [2, 3]
        );
        assert!(page(c, ListKind::Prompts, &items, Some(&next), 2).is_err());
        assert!(page(c, ListKind::Tools, &items, Some("cursor\0tools/list|x"), 2).is_err());
    }
}
