//! Sealing for what a service hands the client to carry: 2026-07-28 `requestState` and
//! pagination cursors.
//!
//! Over stdio one session is one client, so a service keeps such state in the session. Over
//! HTTP a 2026-07-28 exchange is a session of its own, and behind a load balancer the next
//! request may reach another instance: the state has to travel with the client, which must
//! neither read it (a request state holds the user's earlier answers) nor change it. So this
//! transport, the one that needs it, gives every session a [`Sealer`]: XChaCha20-Poly1305 (an
//! AEAD from RustCrypto, secret and tamper-proof in one vetted step) under a key drawn from
//! the OS random source when the transport starts, or derived from a [`StateSecret`] that
//! several instances share, so each opens what another sealed. A previous secret (a rotation)
//! opens but never seals. XChaCha's 192-bit nonces are drawn at random for every seal: many
//! instances share one key, and random nonces of that size never collide in practice (96-bit
//! ones could).
//!
//! A stdio server never builds any of this: the kit's stash in the session needs no
//! cryptography, which keeps a stdio server's dependency tree small.
//!
//! Format: `hex(nonce || ciphertext || tag)`, URL-safe and opaque; the caller's `context` is
//! the AEAD's associated data, authenticated but not carried.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use mcp_core::service::Sealer;
use sha2::Sha256;

const NONCE_LEN: usize = 24;
/// Bound into every seal beside the caller's context, so nothing sealed under the same key
/// for another purpose could pass (there is none today).
const DOMAIN: &[u8] = b"mcp-http-blocking seal v1\0";

/// Secret bytes shared by the instances of one server (see
/// [`HttpConfigBuilder::state_secret`](crate::HttpConfigBuilder::state_secret)).
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

    /// The sealing key: HMAC-SHA-256 of a fixed label under the secret (the HKDF-Expand step
    /// with one block; the extract step is not needed for a secret that is already uniformly
    /// random and at least as long as the hash). The secret itself is never a key.
    fn key(&self) -> [u8; 32] {
        let mut m = <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(&self.bytes)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        m.update(b"mcp-http-blocking/v1/seal");
        m.finalize().into_bytes().into()
    }
}

impl fmt::Debug for StateSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateSecret(<redacted>)")
    }
}

/// The transport's [`Sealer`]: XChaCha20-Poly1305 under a random key, or under keys derived
/// from shared secrets.
pub struct StateSealer {
    /// The sealing key first, then the one that only opens (a rotation). Empty when no key
    /// could be drawn: everything then fails closed.
    ciphers: Vec<XChaCha20Poly1305>,
}

impl StateSealer {
    /// A sealer with a key of its own, drawn from the OS random source: what it seals, only it
    /// opens.
    ///
    /// # Errors
    /// The OS has no random source to offer.
    pub fn random() -> io::Result<StateSealer> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| io::Error::other(e.to_string()))?;
        Ok(StateSealer::with_keys(&[key]))
    }

    /// A sealer keyed from `current` (which seals and opens) and, during a rotation,
    /// `previous` (which only opens), so that every instance configured alike opens what any
    /// of them sealed.
    pub fn shared(current: &StateSecret, previous: Option<&StateSecret>) -> StateSealer {
        let keys: Vec<[u8; 32]> = std::iter::once(current)
            .chain(previous)
            .map(StateSecret::key)
            .collect();
        StateSealer::with_keys(&keys)
    }

    /// The sealer a transport configured with these secrets uses: shared when a secret is
    /// set, random otherwise; one that fails closed if the random source is missing.
    pub(crate) fn for_config(
        current: Option<&StateSecret>,
        previous: Option<&StateSecret>,
    ) -> Self {
        match current {
            Some(c) => StateSealer::shared(c, previous),
            None => StateSealer::random().unwrap_or_else(|e| {
                log::error!("no random source for the state key ({e}); states cannot be sealed");
                StateSealer {
                    ciphers: Vec::new(),
                }
            }),
        }
    }

    fn with_keys(keys: &[[u8; 32]]) -> StateSealer {
        StateSealer {
            ciphers: keys
                .iter()
                .map(|k| XChaCha20Poly1305::new(&(*k).into()))
                .collect(),
        }
    }
}

/// The associated data of one seal: the domain, then the caller's context.
fn aad(context: &[u8]) -> Vec<u8> {
    let mut a = Vec::with_capacity(DOMAIN.len() + context.len());
    a.extend_from_slice(DOMAIN);
    a.extend_from_slice(context);
    a
}

impl Sealer for StateSealer {
    fn seal(&self, plaintext: &[u8], context: &[u8]) -> Option<String> {
        let cipher = self.ciphers.first()?;
        let mut nonce = [0u8; NONCE_LEN];
        // No random source: no seal, rather than a reused nonce.
        getrandom::fill(&mut nonce).ok()?;
        let aad = aad(context);
        let ct = cipher
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .ok()?;
        let mut out = String::with_capacity(2 * (NONCE_LEN + ct.len()));
        hex_into(&mut out, &nonce);
        hex_into(&mut out, &ct);
        Some(out)
    }

    fn open(&self, sealed: &str, context: &[u8]) -> Option<Vec<u8>> {
        let bytes = unhex(sealed)?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, ct) = bytes.split_at(NONCE_LEN);
        let nonce = XNonce::try_from(nonce).ok()?;
        let aad = aad(context);
        self.ciphers
            .iter()
            .find_map(|c| c.decrypt(&nonce, Payload { msg: ct, aad: &aad }).ok())
    }
}

impl fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateSealer")
            .field("keys", &self.ciphers.len())
            .finish_non_exhaustive()
    }
}

fn hex_into(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(b: u8) -> StateSecret {
        StateSecret::from_bytes(vec![b; 32]).unwrap()
    }

    #[test]
    fn seal_open_tamper_and_context() {
        let s = StateSealer::random().unwrap();
        let sealed = s.seal(b"{\"a\":1}", b"ctx").unwrap();
        assert_eq!(s.open(&sealed, b"ctx").unwrap(), b"{\"a\":1}");
        // Another context (another request, another list) does not open it.
        assert!(s.open(&sealed, b"other").is_none());
        // A fresh nonce each time, and the plaintext is hidden.
        assert_ne!(sealed, s.seal(b"{\"a\":1}", b"ctx").unwrap());
        let mut hidden = String::new();
        hex_into(&mut hidden, b"{\"a\":1}");
        assert!(!sealed.contains(&hidden));
        // One nibble changed.
        let mut bad = sealed.clone().into_bytes();
        let i = bad.len() - 1;
        bad[i] = if bad[i] == b'7' { b'8' } else { b'7' };
        assert!(s.open(std::str::from_utf8(&bad).unwrap(), b"ctx").is_none());
        // Another key; garbage.
        assert!(
            StateSealer::random()
                .unwrap()
                .open(&sealed, b"ctx")
                .is_none()
        );
        assert!(s.open("zz.zz", b"ctx").is_none());
        assert!(s.open("", b"ctx").is_none());
    }

    #[test]
    fn shared_secrets_and_rotation() {
        let a = StateSealer::shared(&secret(1), None);
        let b = StateSealer::shared(&secret(1), None);
        let sealed = a.seal(b"x", b"c").unwrap();
        assert_eq!(b.open(&sealed, b"c").unwrap(), b"x");
        assert!(
            StateSealer::shared(&secret(2), None)
                .open(&sealed, b"c")
                .is_none()
        );
        let rotated = StateSealer::shared(&secret(2), Some(&secret(1)));
        assert_eq!(rotated.open(&sealed, b"c").unwrap(), b"x");
        // The new secret seals; the old one alone cannot open that.
        let fresh = rotated.seal(b"y", b"c").unwrap();
        assert!(a.open(&fresh, b"c").is_none());
    }

    #[test]
    fn secrets_short_refused_debug_redacted() {
        assert!(StateSecret::from_bytes(vec![7u8; 31]).is_err());
        let s = StateSecret::from_bytes(b"0123456789abcdef0123456789abcdef".to_vec()).unwrap();
        assert!(!format!("{s:?}").contains("0123"));
        assert!(!format!("{:?}", StateSealer::shared(&s, None)).contains("0123"));
    }

    #[test]
    fn file_trailing_newline_is_dropped() {
        let dir = std::env::temp_dir().join(format!("http-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, "00112233445566778899aabbccddeeff\n").unwrap();
        std::fs::write(&b, "00112233445566778899aabbccddeeff").unwrap();
        let (sa, sb) = (
            StateSecret::from_file(&a).unwrap(),
            StateSecret::from_file(&b).unwrap(),
        );
        assert_eq!(sa.key(), sb.key());
        std::fs::write(&a, "short\n").unwrap();
        let err = StateSecret::from_file(&a).unwrap_err().to_string();
        assert!(!err.contains("short"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
