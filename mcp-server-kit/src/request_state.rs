//! Sealed `requestState` for the 2026-07-28 era.
//!
//! In that era a server cannot call the client back in the middle of a request. A handler that
//! needs input makes the server answer `InputRequiredResult`; the client gathers the answers and
//! retries with them plus the `requestState` the server handed out. That state travels through
//! the client, so the server must treat it as attacker-controlled, and it holds the answers the
//! user gave so far, which the client has no business reading back out of it: it is sealed
//! with XChaCha20-Poly1305 (an AEAD from RustCrypto: secret and tamper-proof in one step), bound
//! to the method and arguments of the request it belongs to, and given an expiry.
//!
//! The key is drawn from the OS random source when the server starts, or, with a configured
//! [`StateSecret`](crate::StateSecret), derived from it so that every instance sharing the
//! secret opens what any of them sealed. A previous secret (a rotation) is tried for opening
//! only. XChaCha's 192-bit nonces are drawn at random for every state: many instances share
//! one key, and random nonces of that size never collide in practice (96-bit ones could).
//!
//! The format is `hex(nonce || ciphertext || tag)`: URL-safe and opaque.

#[cfg(feature = "request-state")]
mod sealed {
    use chacha20poly1305::aead::{Aead, KeyInit, Payload};
    use chacha20poly1305::{XChaCha20Poly1305, XNonce};
    use sha2::{Digest, Sha256};

    use crate::secret::Secrets;

    const NONCE_LEN: usize = 24;
    /// Bound into every seal, so a ciphertext made for something else under the same key
    /// (there is none today) could never pass as a request state.
    const AAD: &[u8] = b"mcp-server-kit requestState v1";

    /// Seals with one key and opens with it or, during a rotation, the previous one.
    pub(crate) struct StateSealer {
        /// The sealing key first.
        ciphers: Vec<XChaCha20Poly1305>,
    }

    impl StateSealer {
        /// Keys derived from the configured secrets, or a fresh random key without them.
        pub(crate) fn new(secrets: &Secrets) -> Option<StateSealer> {
            let keys = match secrets.keys("request-state") {
                Some(keys) => keys,
                None => {
                    let mut key = [0u8; 32];
                    getrandom::fill(&mut key).ok()?;
                    vec![key]
                }
            };
            let ciphers = keys
                .iter()
                .map(|k| XChaCha20Poly1305::new(&(*k).into()))
                .collect();
            Some(StateSealer { ciphers })
        }

        pub(crate) fn seal(&self, payload: &[u8]) -> String {
            let mut nonce = [0u8; NONCE_LEN];
            let sealed = getrandom::fill(&mut nonce).ok().and_then(|()| {
                self.ciphers
                    .first()?
                    .encrypt(
                        &XNonce::from(nonce),
                        Payload {
                            msg: payload,
                            aad: AAD,
                        },
                    )
                    .ok()
            });
            match sealed {
                Some(ct) => {
                    let mut out = nonce.to_vec();
                    out.extend_from_slice(&ct);
                    super::hex(&out)
                }
                // No random source (or no key): a state nobody can open, so the retry fails
                // closed with -32602 instead of reusing a nonce.
                None => String::new(),
            }
        }

        pub(crate) fn open(&self, state: &str) -> Option<Vec<u8>> {
            let bytes = super::unhex(state)?;
            if bytes.len() < NONCE_LEN {
                return None;
            }
            let (nonce, ct) = bytes.split_at(NONCE_LEN);
            let nonce = XNonce::try_from(nonce).ok()?;
            self.ciphers
                .iter()
                .find_map(|c| c.decrypt(&nonce, Payload { msg: ct, aad: AAD }).ok())
        }
    }

    /// A digest of a request's identifying parameters, to bind a state to the request.
    pub(crate) fn fingerprint(bytes: &[u8]) -> String {
        super::hex(&Sha256::digest(bytes))
    }
}

#[cfg(not(feature = "request-state"))]
mod sealed {
    /// Without the `request-state` feature no state can be sealed, so handlers that need input
    /// in the 2026-07-28 era get `CallError::Unsupported`.
    pub(crate) struct StateSealer;

    impl StateSealer {
        pub(crate) fn new(_secrets: &crate::secret::Secrets) -> Option<StateSealer> {
            None
        }
        pub(crate) fn seal(&self, _payload: &[u8]) -> String {
            String::new()
        }
        pub(crate) fn open(&self, _state: &str) -> Option<Vec<u8>> {
            None
        }
    }

    pub(crate) fn fingerprint(bytes: &[u8]) -> String {
        super::hex(bytes)
    }
}

pub(crate) use sealed::{StateSealer, fingerprint};

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[cfg_attr(not(feature = "request-state"), allow(dead_code))]
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(all(test, feature = "request-state"))]
mod tests {
    use super::*;
    use crate::secret::Secrets;

    #[test]
    fn seal_open_and_tamper() {
        let s = StateSealer::new(&Secrets::default()).unwrap();
        let sealed = s.seal(b"{\"a\":1}");
        assert_eq!(s.open(&sealed).unwrap(), b"{\"a\":1}");
        // Two seals of one payload differ (a fresh nonce each time) and hide it.
        let again = s.seal(b"{\"a\":1}");
        assert_ne!(sealed, again);
        assert!(!sealed.contains(&hex(b"{\"a\":1}")));
        // Flip one nibble of the ciphertext.
        let mut bad = sealed.clone().into_bytes();
        let i = bad.len() - 1;
        bad[i] = if bad[i] == b'7' { b'8' } else { b'7' };
        assert!(s.open(std::str::from_utf8(&bad).unwrap()).is_none());
        // Another server's key.
        assert!(
            StateSealer::new(&Secrets::default())
                .unwrap()
                .open(&sealed)
                .is_none()
        );
        assert!(s.open("zz.zz").is_none());
        assert!(s.open("").is_none());
    }
}
