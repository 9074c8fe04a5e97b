//! Integrity-protected `requestState` for the 2026-07-28 era.
//!
//! In that era a server cannot call the client back in the middle of a request. A handler that
//! needs input makes the server answer `InputRequiredResult`; the client gathers the answers and
//! retries with them plus the `requestState` the server handed out. That state travels through
//! the client, so the server must treat it as attacker-controlled: it is sealed with
//! HMAC-SHA-256 under a key drawn from the OS random source when the server starts, bound to the
//! method and arguments of the request it belongs to, and given an expiry.
//!
//! The format is `hex(payload JSON) "." hex(tag)`: boring, URL-safe and easy to inspect.

#[cfg(feature = "request-state")]
mod sealed {
    use hmac::{Hmac, KeyInit, Mac};
    use sha2::{Digest, Sha256};

    /// Seals and opens request states with one per-server key.
    pub(crate) struct StateSealer {
        key: [u8; 32],
    }

    impl StateSealer {
        pub(crate) fn new() -> Option<StateSealer> {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key).ok()?;
            Some(StateSealer { key })
        }

        fn mac(&self) -> Hmac<Sha256> {
            // HMAC accepts keys of any length, so this cannot fail.
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
                .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"))
        }

        pub(crate) fn seal(&self, payload: &[u8]) -> String {
            let mut m = self.mac();
            m.update(payload);
            let tag = m.finalize().into_bytes();
            format!("{}.{}", super::hex(payload), super::hex(&tag))
        }

        pub(crate) fn open(&self, state: &str) -> Option<Vec<u8>> {
            let (payload, tag) = state.split_once('.')?;
            let payload = super::unhex(payload)?;
            let tag = super::unhex(tag)?;
            let mut m = self.mac();
            m.update(&payload);
            // Constant-time comparison, from the hmac crate.
            m.verify_slice(&tag).ok()?;
            Some(payload)
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
        pub(crate) fn new() -> Option<StateSealer> {
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

    #[test]
    fn seal_open_and_tamper() {
        let s = StateSealer::new().unwrap();
        let sealed = s.seal(b"{\"a\":1}");
        assert_eq!(s.open(&sealed).unwrap(), b"{\"a\":1}");
        // Flip one payload nibble.
        let mut bad = sealed.clone().into_bytes();
        bad[0] = if bad[0] == b'7' { b'8' } else { b'7' };
        assert!(s.open(std::str::from_utf8(&bad).unwrap()).is_none());
        // Another server's key.
        assert!(StateSealer::new().unwrap().open(&sealed).is_none());
        assert!(s.open("zz.zz").is_none());
        assert!(s.open("").is_none());
    }
}
