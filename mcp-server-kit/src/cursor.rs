//! Opaque pagination cursors.
//!
//! A cursor names an offset into one list and carries a 64-bit tag, so a cursor this server did
//! not mint, or one minted for another list, is refused with -32602 instead of silently paging
//! from a wrong place. This is an integrity check against mistakes and casual forgery, not a
//! security boundary: a forged cursor could at worst select another page of a list the client
//! may read anyway, which is also why the offset itself is not hidden and the tag is short.
//!
//! Without a configured [`StateSecret`](crate::StateSecret) the tag is SipHash under a
//! per-process random key (std's `RandomState`). With one, it is HMAC-SHA-256 truncated to 64
//! bits under a key derived from the secret, so every instance sharing the secret accepts the
//! cursors of the others; a previous secret (a rotation) is accepted too.

use std::hash::BuildHasher;

use std::collections::hash_map::RandomState;

use crate::secret::Secrets;

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

/// Mints and checks cursors for one server.
pub(crate) enum CursorCodec {
    /// This process only.
    Local(RandomState),
    /// Keys derived from the shared secrets, the minting key first.
    #[cfg(feature = "request-state")]
    Shared(Vec<[u8; 32]>),
}

impl CursorCodec {
    pub(crate) fn new(secrets: &Secrets) -> Self {
        #[cfg(feature = "request-state")]
        if let Some(keys) = secrets.keys("cursor") {
            return CursorCodec::Shared(keys);
        }
        let _ = secrets;
        CursorCodec::Local(RandomState::new())
    }

    pub(crate) fn encode(&self, kind: ListKind, offset: usize) -> String {
        let tag = self.tags(kind, offset).next().unwrap_or(0);
        format!("{offset}.{tag:016x}")
    }

    /// The offset a cursor names, or `None` for a cursor this server did not mint for `kind`.
    pub(crate) fn decode(&self, kind: ListKind, cursor: &str) -> Option<usize> {
        let (offset, tag) = cursor.split_once('.')?;
        let offset: usize = offset.parse().ok()?;
        if tag.len() != 16 {
            return None;
        }
        let tag = u64::from_str_radix(tag, 16).ok()?;
        // A 64-bit comparison: its timing could only leak a tag of a page the client may read.
        self.tags(kind, offset).any(|t| t == tag).then_some(offset)
    }

    /// The tags `offset` of `kind` may carry: the minting key's first.
    fn tags(&self, kind: ListKind, offset: usize) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            CursorCodec::Local(keys) => {
                Box::new(std::iter::once(keys.hash_one((kind, offset as u64))))
            }
            #[cfg(feature = "request-state")]
            CursorCodec::Shared(keys) => Box::new(keys.iter().map(move |k| {
                use hmac::{Hmac, KeyInit, Mac};
                let mut m = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(k)
                    .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
                m.update(kind.label().as_bytes());
                m.update(&(offset as u64).to_be_bytes());
                let full = m.finalize().into_bytes();
                let mut first = [0u8; 8];
                first.copy_from_slice(&full[..8]);
                u64::from_be_bytes(first)
            })),
        }
    }
}

impl ListKind {
    /// A stable name, so every instance tags a list's cursors alike.
    #[cfg_attr(not(feature = "request-state"), allow(dead_code))]
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
        let c = CursorCodec::new(&Secrets::default());
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
        assert!(
            CursorCodec::new(&Secrets::default())
                .decode(ListKind::Tools, &next)
                .is_none()
        );
    }

    #[cfg(feature = "request-state")]
    #[test]
    fn a_shared_secret_mints_cursors_every_instance_accepts() {
        use crate::StateSecret;
        let secret = |b: u8| Some(StateSecret::from_bytes(vec![b; 32]).unwrap());
        let with = |current, previous| Secrets { current, previous };
        let (a, b) = (
            CursorCodec::new(&with(secret(1), None)),
            CursorCodec::new(&with(secret(1), None)),
        );
        let c = a.encode(ListKind::Tools, 7);
        assert_eq!(b.decode(ListKind::Tools, &c), Some(7));
        assert_eq!(b.decode(ListKind::Prompts, &c), None);
        assert_eq!(
            CursorCodec::new(&with(secret(2), None)).decode(ListKind::Tools, &c),
            None
        );
        let rotated = CursorCodec::new(&with(secret(2), secret(1)));
        assert_eq!(rotated.decode(ListKind::Tools, &c), Some(7));
        // The new secret mints; the old one only opens.
        let fresh = rotated.encode(ListKind::Tools, 7);
        assert_eq!(a.decode(ListKind::Tools, &fresh), None);
    }
}
