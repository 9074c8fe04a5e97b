//! PKCE (RFC 7636, method S256) and the random `state` values of authorization requests. The
//! randomness comes from the OS (getrandom) and the hash from sha2: nothing here is home-made
//! cryptography, only encoding.

use super::FlowError;
use sha2::{Digest, Sha256};

use super::url::base64url;

/// A code verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub(crate) struct Pkce {
    /// Sent with the token request.
    pub(crate) verifier: String,
    /// Sent with the authorization request (`code_challenge_method=S256`).
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh verifier: 32 random bytes, base64url (43 characters, within RFC 7636's 43..128).
    ///
    /// # Errors
    /// When the OS random source fails.
    pub(crate) fn new() -> Result<Pkce, FlowError> {
        Ok(Pkce::from_verifier(random_token(32)?))
    }

    /// The challenge of a given verifier: `BASE64URL(SHA256(verifier))`.
    pub(crate) fn from_verifier(verifier: String) -> Pkce {
        let challenge = base64url(&Sha256::digest(verifier.as_bytes()));
        Pkce {
            verifier,
            challenge,
        }
    }
}

/// `n` random bytes from the OS, base64url-encoded (for `state`, PKCE, JWT ids).
///
/// # Errors
/// When the OS random source fails.
pub(crate) fn random_token(n: usize) -> Result<String, FlowError> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b)
        .map_err(|_| FlowError::Crypto("no randomness from the operating system"))?;
    Ok(base64url(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let p = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
        assert_eq!(p.challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[test]
    fn fresh_verifiers_differ_and_have_the_right_length() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_eq!(a.verifier.len(), 43);
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(
            Pkce::from_verifier(a.verifier.clone()).challenge,
            a.challenge
        );
    }
}
