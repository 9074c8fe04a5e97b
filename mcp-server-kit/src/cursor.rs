//! Opaque pagination cursors.
//!
//! A cursor names an offset into one list and carries a tag keyed with a per-server random
//! SipHash key (std's `RandomState`), so a cursor this server did not mint, or one minted for
//! another list, is refused with -32602 instead of silently paging from a wrong place. This is
//! an integrity check against mistakes and casual forgery, not a security boundary: a forged
//! cursor could at worst select another page of a list the client may read anyway.

use std::hash::BuildHasher;

use std::collections::hash_map::RandomState;

/// Which list a cursor belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ListKind {
    Tools,
    Prompts,
    Resources,
    Templates,
}

/// Mints and checks cursors for one server.
pub(crate) struct CursorCodec {
    keys: RandomState,
}

impl CursorCodec {
    pub(crate) fn new() -> Self {
        CursorCodec {
            keys: RandomState::new(),
        }
    }

    pub(crate) fn encode(&self, kind: ListKind, offset: usize) -> String {
        let tag = self.keys.hash_one((kind, offset as u64));
        format!("{offset}.{tag:016x}")
    }

    /// The offset a cursor names, or `None` for a cursor this server did not mint for `kind`.
    pub(crate) fn decode(&self, kind: ListKind, cursor: &str) -> Option<usize> {
        let (offset, tag) = cursor.split_once('.')?;
        let offset: usize = offset.parse().ok()?;
        let tag = u64::from_str_radix(tag, 16).ok()?;
        (self.keys.hash_one((kind, offset as u64)) == tag).then_some(offset)
    }
}

/// One page of `items` starting at the cursor, and the cursor of the next page.
pub(crate) fn page<T: Clone>(
    codec: &CursorCodec,
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

    #[test]
    fn pages_and_refuses_forgeries() {
        let c = CursorCodec::new();
        let items: Vec<u32> = (0..5).collect();
        let (p1, next) = page(&c, ListKind::Tools, &items, None, 2).unwrap();
        assert_eq!(p1, vec![0, 1]);
        let next = next.unwrap();
        let (p2, next2) = page(&c, ListKind::Tools, &items, Some(&next), 2).unwrap();
        assert_eq!(p2, vec![2, 3]);
        let (p3, none) = page(&c, ListKind::Tools, &items, next2.as_deref(), 2).unwrap();
        assert_eq!((p3, none), (vec![4], None));
        assert!(page(&c, ListKind::Prompts, &items, Some(&next), 2).is_err());
        assert!(page(&c, ListKind::Tools, &items, Some("2.0000000000000000"), 2).is_err());
        assert!(page(&c, ListKind::Tools, &items, Some("garbage"), 2).is_err());
        assert!(CursorCodec::new().decode(ListKind::Tools, &next).is_none());
    }
}
