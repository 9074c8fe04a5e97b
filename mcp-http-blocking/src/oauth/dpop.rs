//! DPoP (RFC 9449, SEP-1932): sender-constrained tokens. The client holds a P-256 key of its
//! own (made when the provider first needs it, never saved), proves possession of it with a
//! fresh signed JWT in a `DPoP` header at the token endpoint and on every request to the MCP
//! server, and the authorization server binds the token to the key's thumbprint. A stolen token
//! is then useless without the key. ES256 is p256's (feature `oauth-jwt`); this file only frames
//! the JSON.

use std::sync::Mutex;

use p256::ecdsa::SigningKey;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::FlowError;
use super::jwt::sign_es256;
use super::pkce::random_token;
use super::url::{Url, base64url};

/// A DPoP key and the nonces servers handed out for it.
pub(crate) struct Dpop {
    key: SigningKey,
    /// The public key as a JWK (`crv`, `kty`, `x`, `y`), for the proofs' header.
    jwk: Value,
    /// The authorization server's last `DPoP-Nonce` (RFC 9449 §8), for its next proofs.
    as_nonce: Mutex<Option<String>>,
    /// The resource server's last `DPoP-Nonce` (RFC 9449 §9).
    rs_nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dpop(ES256, ..)")
    }
}

impl Dpop {
    /// A new key from the OS random source.
    pub(crate) fn generate() -> Result<Dpop, FlowError> {
        // A random 32-byte string is a valid P-256 scalar unless it is zero or not below the
        // group order, which happens with a probability near 2^-32: draw again then.
        for _ in 0..8 {
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret)
                .map_err(|_| FlowError::Crypto("no randomness from the operating system"))?;
            if let Ok(key) = SigningKey::from_slice(&secret) {
                return Dpop::with_key(key);
            }
        }
        Err(FlowError::Crypto("could not make a P-256 key"))
    }

    fn with_key(key: SigningKey) -> Result<Dpop, FlowError> {
        let point = key.verifying_key().to_sec1_point(false);
        let (Some(x), Some(y)) = (point.x(), point.y()) else {
            return Err(FlowError::Crypto("the DPoP public key has no coordinates"));
        };
        let jwk = json!({"crv": "P-256", "kty": "EC", "x": base64url(x), "y": base64url(y)});
        Ok(Dpop {
            key,
            jwk,
            as_nonce: Mutex::new(None),
            rs_nonce: Mutex::new(None),
        })
    }

    /// The key's JWK thumbprint (RFC 7638): what the authorization server puts in the
    /// token's `cnf.jkt` (the client itself never needs it; the tests compare it).
    #[cfg(test)]
    pub(crate) fn thumbprint(&self) -> String {
        let s = |k: &str| self.jwk.get(k).and_then(Value::as_str).unwrap_or("");
        thumbprint(s("x"), s("y"))
    }

    /// A proof for one request (RFC 9449 §4.2): a new `jti`, the method, the URL without
    /// query and fragment, the time, and for a resource request the hash of the access
    /// token (`ath`), plus the server's nonce when it gave one.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, FlowError> {
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut claims = json!({
            "jti": random_token(16)?,
            "htm": method,
            "htu": htu(url),
            "iat": iat,
        });
        if let Some(t) = access_token {
            claims["ath"] = json!(base64url(&Sha256::digest(t.as_bytes())));
        }
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        Ok(sign_es256(&self.key, &header, &claims))
    }

    /// A token endpoint proof, with the authorization server's nonce if it gave one.
    pub(crate) fn token_proof(&self, token_endpoint: &str) -> Result<String, FlowError> {
        let nonce = self.as_nonce();
        self.proof("POST", token_endpoint, None, nonce.as_deref())
    }

    /// The authorization server's current nonce.
    pub(crate) fn as_nonce(&self) -> Option<String> {
        lock(&self.as_nonce).clone()
    }

    /// Keeps the authorization server's new nonce; true when it differs from the old one
    /// (a retry with it can help).
    pub(crate) fn set_as_nonce(&self, nonce: &str) -> bool {
        replace(&self.as_nonce, nonce)
    }

    /// The resource server's current nonce.
    pub(crate) fn rs_nonce(&self) -> Option<String> {
        lock(&self.rs_nonce).clone()
    }

    /// Keeps the resource server's new nonce.
    pub(crate) fn set_rs_nonce(&self, nonce: &str) {
        replace(&self.rs_nonce, nonce);
    }
}

fn lock(m: &Mutex<Option<String>>) -> std::sync::MutexGuard<'_, Option<String>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn replace(m: &Mutex<Option<String>>, nonce: &str) -> bool {
    let mut n = lock(m);
    if n.as_deref() == Some(nonce) {
        return false;
    }
    *n = Some(nonce.to_owned());
    true
}

/// The RFC 7638 thumbprint of a P-256 public key given by its base64url coordinates: the
/// SHA-256 of the required members in lexicographic order, without whitespace.
#[cfg(test)]
fn thumbprint(x: &str, y: &str) -> String {
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    base64url(&Sha256::digest(canonical.as_bytes()))
}

/// `htu`: the request URL without query and fragment (RFC 9449 §4.2).
fn htu(url: &str) -> String {
    match Url::parse(url) {
        Some(u) => {
            let path = if u.path.is_empty() { "/" } else { &u.path };
            format!("{}{path}", u.origin())
        }
        None => url.split(['?', '#']).next().unwrap_or(url).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::jwt::tests::decode_b64url;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::{Signature, VerifyingKey};

    #[test]
    fn rfc9449_example_thumbprint() {
        // The example key of RFC 9449 §4.1 and the `jkt` the RFC gives for it (§6.1).
        assert_eq!(
            thumbprint(
                "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
                "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"
            ),
            "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
        );
    }

    fn json_part(p: &str) -> Value {
        serde_json::from_slice(&decode_b64url(p)).unwrap()
    }

    #[test]
    fn a_proof_verifies_under_its_own_jwk_and_carries_the_claims() {
        let d = Dpop::generate().unwrap();
        let proof = d
            .proof("POST", "http://h:1/mcp?x=1#f", Some("tok"), Some("n1"))
            .unwrap();
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header = json_part(parts[0]);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        // Rebuild the public key from the JWK alone and check the signature with it.
        let mut sec1 = vec![4u8];
        sec1.extend(decode_b64url(header["jwk"]["x"].as_str().unwrap()));
        sec1.extend(decode_b64url(header["jwk"]["y"].as_str().unwrap()));
        let vk = VerifyingKey::from_sec1_bytes(&sec1).unwrap();
        let sig = Signature::from_slice(&decode_b64url(parts[2])).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(vk.verify(input.as_bytes(), &sig).is_ok());
        let c = json_part(parts[1]);
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "http://h:1/mcp");
        assert_eq!(c["nonce"], "n1");
        assert_eq!(
            c["ath"],
            base64url(&Sha256::digest(b"tok")),
            "ath is the token's hash"
        );
        assert!(c["iat"].as_u64().is_some_and(|t| t > 1_700_000_000));
        let again = d.proof("POST", "http://h:1/mcp", None, None).unwrap();
        let c2 = json_part(again.split('.').nth(1).unwrap());
        assert_ne!(c["jti"], c2["jti"], "a fresh jti per proof");
        assert!(c2.get("ath").is_none() && c2.get("nonce").is_none());
        let jwk = &header["jwk"];
        assert_eq!(
            d.thumbprint(),
            thumbprint(jwk["x"].as_str().unwrap(), jwk["y"].as_str().unwrap())
        );
    }

    #[test]
    fn nonces_are_kept_and_a_repeat_is_noticed() {
        let d = Dpop::generate().unwrap();
        assert!(d.set_as_nonce("a"));
        assert!(!d.set_as_nonce("a"), "the same nonce again cannot help");
        d.set_rs_nonce("r");
        assert_eq!(d.as_nonce().as_deref(), Some("a"));
        assert_eq!(d.rs_nonce().as_deref(), Some("r"));
        assert_eq!(htu("https://h/"), "https://h/");
    }
}
