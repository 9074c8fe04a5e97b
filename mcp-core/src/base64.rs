//! Base64 (RFC 4648), the one codec of the workspace: the protocol carries binary content
//! (images, audio, resource blobs) as standard base64; the HTTP client encodes
//! `=?base64?...?=` header values and HTTP Basic credentials, PKCE challenges and JWT segments;
//! the HTTP server decodes `=?base64?...?=` header values, strictly.
//!
//! Encoding writes the canonical form; decoding accepts only that form, so that one decoded
//! value has exactly one encoding (see [`decode_strict`]).

/// The standard alphabet (§4).
const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// The URL- and file-name-safe alphabet (§5).
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    encode(bytes, STANDARD, true)
}

/// Base64url without padding, as PKCE and JWTs want it.
pub fn base64url(bytes: &[u8]) -> String {
    encode(bytes, URL_SAFE, false)
}

fn encode(bytes: &[u8], abc: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(abc[((n >> (18 - 6 * i)) & 63) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 (RFC 4648 §4), strictly: whole groups of four, padding only where the
/// length calls for it, no other character, and zero bits where the last group has spare
/// ones. Every encoder writes exactly that; anything looser would let two different header
/// values stand for one body value, which is what the server's header-to-body comparison
/// rules out.
pub fn decode_strict(s: &str) -> Option<Vec<u8>> {
    decode(s, STANDARD, true)
}

/// Base64url without padding (§5), as strictly as [`decode_strict`]; the tests read JWTs
/// and DPoP proofs back with it.
pub fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    decode(s, URL_SAFE, false)
}

/// The canonical form only: with `pad`, a length in whole groups of four ending in just the
/// `=`s the data calls for; without, no `=` at all; either way no character outside `abc`, no
/// lone sixth-bit character, and zero spare bits in the last group.
fn decode(s: &str, abc: &[u8; 64], pad: bool) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    let body = if pad {
        if s.len() % 4 != 0 {
            return None;
        }
        let padding = s.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 {
            return None;
        }
        &s[..s.len() - padding]
    } else {
        s
    };
    if body.len() % 4 == 1 {
        return None;
    }
    let val = |c: u8| abc.iter().position(|&a| a == c).map(|v| v as u32);
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for chunk in body.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            // An `=` anywhere but at the very end is not in the alphabet, so it fails here.
            acc |= val(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        let keep = chunk.len() - 1;
        // The bits past the last whole byte must be zero.
        if bytes[1 + keep..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&bytes[1..1 + keep]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
            assert_eq!(decode_strict(coded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn decoding_takes_only_the_canonical_form() {
        let bytes: Vec<u8> = (0..=255).collect();
        for n in 0..bytes.len() {
            assert_eq!(
                decode_strict(&base64(&bytes[..n])).as_deref(),
                Some(&bytes[..n])
            );
        }
        for bad in [
            "aGk", "a", "a$b=", "aG=k", "aGk=aGk=", "a===", "aGl=", "-_8=", "aGk=\n",
        ] {
            assert_eq!(decode_strict(bad), None, "{bad}");
        }
    }
}
