//! Signed JWTs for `private_key_jwt` client authentication (RFC 7523 §2.2): ES256 on P-256
//! with RustCrypto's `p256` (feature `oauth-jwt`). Only the JSON and base64url framing is
//! written here; the signature is the crate's.

use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::json;

use super::FlowError;
use super::pkce::random_token;
use super::url::base64url;

/// A P-256 private key that signs client assertions.
#[derive(Clone)]
pub struct PrivateKey(SigningKey);

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivateKey(ES256, ..)")
    }
}

impl PrivateKey {
    /// Reads a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) P-256 key.
    ///
    /// # Errors
    /// [`Error::InvalidKey`](crate::Error::InvalidKey) when the text is not such a key.
    pub fn from_pem(pem: &str) -> Result<PrivateKey, crate::Error> {
        SigningKey::from_pkcs8_pem(pem)
            .map(PrivateKey)
            .map_err(|e| crate::Error::InvalidKey(Box::new(e)))
    }

    /// Signs `claims` as a compact JWS with header `{"alg":"ES256","typ":typ}`.
    pub(crate) fn sign(&self, typ: &str, claims: &serde_json::Value) -> String {
        sign_es256(&self.0, &json!({"alg": "ES256", "typ": typ}), claims)
    }
}

/// A compact JWS of `claims` under `header` (which must say `"alg":"ES256"`), signed with
/// `key`: the framing is base64url of the two JSON texts; the signature is p256's, in the
/// fixed-size `r || s` form JWS wants (RFC 7518 §3.4).
pub(crate) fn sign_es256(
    key: &SigningKey,
    header: &serde_json::Value,
    claims: &serde_json::Value,
) -> String {
    let input = format!(
        "{}.{}",
        base64url(header.to_string().as_bytes()),
        base64url(claims.to_string().as_bytes())
    );
    let sig: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", base64url(&sig.to_bytes()))
}

/// A client assertion: `iss` and `sub` are the client id, `aud` the authorization server,
/// valid for five minutes, with a random `jti`.
///
/// # Errors
/// When the OS random source fails.
pub(crate) fn client_assertion(
    key: &PrivateKey,
    client_id: &str,
    audience: &str,
) -> Result<String, FlowError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": random_token(16)?,
    });
    Ok(key.sign("JWT", &claims))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier;

    // A throwaway test key (generated for this test only).
    const PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg8h53fD7QFeycgrX5
Q0OkK33xwYd154gFTOAHaXJHYKmhRANCAASzOUZtfXTNIlAFPmsl7f5GfmSLD1bK
PalCS66SgiQdGiuJ6WwGlmu8TYU/mg2Q9l44cmEmTCmTZWSEnpcvQOZH
-----END PRIVATE KEY-----";

    #[test]
    fn assertion_verifies_under_the_public_key() {
        let key = PrivateKey::from_pem(PEM).unwrap();
        let jwt = client_assertion(&key, "client-1", "https://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let sig_bytes = decode_b64url(parts[2]);
        let sig = Signature::from_slice(&sig_bytes).unwrap();
        let vk = VerifyingKey::from(&key.0);
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(vk.verify(input.as_bytes(), &sig).is_ok());
        assert!(vk.verify(b"tampered", &sig).is_err());
        let claims: serde_json::Value = serde_json::from_slice(&decode_b64url(parts[1])).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
    }

    #[test]
    fn a_bad_key_is_invalid_key_with_the_parsers_error() {
        let e = PrivateKey::from_pem("not a key").unwrap_err();
        assert!(matches!(e, crate::Error::InvalidKey(_)), "{e:?}");
        assert!(std::error::Error::source(&e).is_some(), "{e}");
    }

    /// Test input is ours, so a bad segment is a failed test.
    pub(crate) fn decode_b64url(s: &str) -> Vec<u8> {
        mcp_core::base64::base64url_decode(s).expect("base64url")
    }
}
