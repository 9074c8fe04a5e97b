//! A secret shared by every instance of one server, so that what one instance seals
//! (`requestState`, pagination cursors) another can open.
//!
//! Behind a load balancer the retry of an `input_required` answer, or the request for the next
//! page, may land on any instance. Keys drawn at random when each process starts cannot serve
//! that; keys derived from one configured secret can. The secret is never used as a key itself:
//! each use gets its own key, HMAC-SHA-256 of a fixed label under the secret, so a cursor tag
//! can never be replayed as a request-state key and the other way round.

#[cfg(feature = "request-state")]
pub use keyed::StateSecret;

#[cfg(feature = "request-state")]
mod keyed {
    use std::fmt;
    use std::io;
    use std::path::Path;
    use std::sync::Arc;

    use hmac::{Hmac, KeyInit, Mac};
    use sha2::Sha256;

    /// Secret bytes shared by the instances of one server (see
    /// [`ServerBuilder::state_secret`](crate::ServerBuilder::state_secret)).
    ///
    /// At least [`StateSecret::MIN_LEN`] bytes, so that guessing it is out of reach; 32 bytes from
    /// a random source (`head -c 32 /dev/urandom`, `openssl rand -hex 32`) are right. The bytes
    /// never appear in `Debug` output, in errors or in logs.
    #[derive(Clone)]
    pub struct StateSecret {
        bytes: Arc<[u8]>,
    }

    impl StateSecret {
        /// The fewest bytes a secret may have.
        pub const MIN_LEN: usize = 32;

        /// A secret from bytes the caller holds.
        ///
        /// # Errors
        /// Fewer than [`StateSecret::MIN_LEN`] bytes (`InvalidInput`).
        pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> io::Result<StateSecret> {
            let bytes = bytes.into();
            if bytes.len() < Self::MIN_LEN {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "a state secret needs at least {} bytes, got {}",
                        Self::MIN_LEN,
                        bytes.len()
                    ),
                ));
            }
            Ok(StateSecret {
                bytes: bytes.into(),
            })
        }

        /// A secret read from a file. Trailing ASCII whitespace is dropped, so a file written by
        /// `openssl rand -hex 32 > FILE` (which ends in a newline) gives the same secret on every
        /// instance however it was copied; the rest is used as it is.
        ///
        /// # Errors
        /// The file cannot be read, or holds too few bytes.
        pub fn from_file(path: impl AsRef<Path>) -> io::Result<StateSecret> {
            let path = path.as_ref();
            let mut bytes = std::fs::read(path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot read state secret file {}: {e}", path.display()),
                )
            })?;
            let kept = bytes.trim_ascii_end().len();
            bytes.truncate(kept);
            Self::from_bytes(bytes).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("state secret file {}: {e}", path.display()),
                )
            })
        }

        /// A secret from an environment variable (trailing whitespace dropped, as for a file).
        ///
        /// # Errors
        /// The variable is not set or not valid Unicode, or holds too few bytes.
        pub fn from_env(var: &str) -> io::Result<StateSecret> {
            let value = std::env::var(var).map_err(|e| {
                io::Error::new(io::ErrorKind::NotFound, format!("state secret ${var}: {e}"))
            })?;
            Self::from_bytes(value.trim_end().as_bytes().to_vec())
                .map_err(|e| io::Error::new(e.kind(), format!("state secret ${var}: {e}")))
        }

        /// The key for one use of the secret: HMAC-SHA-256 of `label` under the secret (the
        /// HKDF-Expand step with one block; the extract step is not needed for a secret that is
        /// already uniformly random and at least as long as the hash).
        pub(crate) fn derive(&self, label: &str) -> [u8; 32] {
            let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.bytes)
                .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
            m.update(b"mcp-server-kit/v1/");
            m.update(label.as_bytes());
            m.finalize().into_bytes().into()
        }
    }

    impl fmt::Debug for StateSecret {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("StateSecret(<redacted>)")
        }
    }
}

/// The secrets a server was configured with: the current one seals and opens, the previous one
/// (during a rotation) only opens.
#[derive(Clone, Debug, Default)]
pub(crate) struct Secrets {
    #[cfg(feature = "request-state")]
    pub(crate) current: Option<StateSecret>,
    #[cfg(feature = "request-state")]
    pub(crate) previous: Option<StateSecret>,
}

#[cfg(feature = "request-state")]
impl Secrets {
    /// Keys for `label`: the sealing key first, then the one only for opening. `None` without a
    /// configured secret (the caller then draws a per-process key, as before).
    pub(crate) fn keys(&self, label: &str) -> Option<Vec<[u8; 32]>> {
        let current = self.current.as_ref()?;
        Some(
            std::iter::once(current)
                .chain(self.previous.as_ref())
                .map(|s| s.derive(label))
                .collect(),
        )
    }
}

#[cfg(all(test, feature = "request-state"))]
mod tests {
    use super::*;

    #[test]
    fn too_short_refused_debug_redacted_labels_distinct() {
        assert!(StateSecret::from_bytes(vec![7u8; 31]).is_err());
        let s = StateSecret::from_bytes(b"0123456789abcdef0123456789abcdef".to_vec()).unwrap();
        let shown = format!("{s:?}");
        assert!(!shown.contains("0123"), "{shown}");
        assert_ne!(s.derive("cursor"), s.derive("request-state"));
        let again = StateSecret::from_bytes(b"0123456789abcdef0123456789abcdef".to_vec()).unwrap();
        assert_eq!(s.derive("cursor"), again.derive("cursor"));
    }

    #[test]
    fn file_trailing_newline_is_dropped() {
        let dir = std::env::temp_dir().join(format!("kit-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, "00112233445566778899aabbccddeeff\n").unwrap();
        std::fs::write(&b, "00112233445566778899aabbccddeeff").unwrap();
        let (sa, sb) = (
            StateSecret::from_file(&a).unwrap(),
            StateSecret::from_file(&b).unwrap(),
        );
        assert_eq!(sa.derive("x"), sb.derive("x"));
        std::fs::write(&a, "short\n").unwrap();
        let err = StateSecret::from_file(&a).unwrap_err().to_string();
        assert!(!err.contains("short"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
