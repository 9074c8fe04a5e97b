//! The skills extension (SEP-2640) from the host's side: list and get skill entries, and read
//! a skill's files one at a time, each verified against the entry before it is handed over.
//!
//! Nothing is fetched ahead of need: [`Client::list_skills`] and [`Client::get_skill`] return
//! entries only (frontmatter and manifest, enough to show and approve a skill), and
//! [`Client::read_skill_file`] fetches exactly the one file asked for. What it returns has
//! passed every check the extension requires of a host, in this order: the file is in the
//! held entry's manifest (an unlisted file is a change to the skill), its byte length is the
//! listed size, its SHA-256 is the listed digest, and, for the skill's own `SKILL.md`, its
//! frontmatter equals the entry's field by field. Any failure is a [`SkillError`] and the
//! content is dropped: the host never sees unverified bytes. To recover from a stale entry,
//! get it again ([`Client::get_skill`]) and ask the user again if the manifest changed.
//!
//! Digests are not a trust anchor (the same server sends both), so this guards against
//! corruption, staleness and a server changing content under an approval, not against a
//! hostile server.
//!
//! ```no_run
//! # fn f(client: &mcp_client::Client) -> Result<(), mcp_client::SkillError> {
//! for skill in client.list_skills()? {
//!     println!("{}: {}", skill.uri, skill.description().unwrap_or(""));
//! }
//! let skill = client.get_skill("skill://pdf-processing/SKILL.md")?;
//! let md = client.read_skill_file(&skill, &skill.uri)?; // verified, or an error
//! println!("{}", md.text().unwrap_or(""));
//! # Ok(()) }
//! ```

use std::fmt;

use mcp_core::types::methods;
use mcp_core::types::skills::{
    self as ext, ListSkillsResult, ReadResourceDirectoryResult, Skill, SkillResources, frontmatter,
};
use mcp_core::types::{ReadResourceResult, Resource};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::client::Client;
use crate::error::{Error, Unexpected};
use crate::pages::{PageKind, Pages};

/// Why a skill or one of its files was not handed over.
#[derive(Debug)]
pub enum SkillError {
    /// The server did not declare `io.modelcontextprotocol/skills`, so the client does not
    /// call the extension's methods.
    NotOffered,
    /// The request itself failed (the server's error, a timeout, a closed connection...).
    Request(Error),
    /// The entry's `resources` is `"dynamic"`: there is no manifest to verify against, and
    /// this client does not load unverifiable content.
    Unverifiable {
        /// The skill.
        skill: String,
    },
    /// The file is not in the held entry's manifest (a change to the skill: get the entry
    /// again).
    NotInManifest {
        /// The file asked for.
        uri: String,
    },
    /// The server's answer holds no content for the file (or content that cannot be decoded
    /// into bytes).
    NoContent {
        /// The file.
        uri: String,
        /// What was wrong.
        why: String,
    },
    /// The content's length is not the listed size (a verification failure, like a digest
    /// mismatch).
    SizeMismatch {
        /// The file.
        uri: String,
        /// The size the entry lists.
        expected: u64,
        /// The size received.
        actual: u64,
    },
    /// The content's SHA-256 is not the listed digest.
    DigestMismatch {
        /// The file.
        uri: String,
        /// The digest the entry lists.
        expected: String,
        /// The digest of what was received.
        actual: String,
    },
    /// The fetched `SKILL.md` has no frontmatter this client can read.
    BadFrontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// The reader's error.
        why: String,
    },
    /// The fetched `SKILL.md`'s frontmatter differs from the entry's (the skill must not be
    /// loaded).
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The fields that differ.
        fields: Vec<String>,
    },
}

impl SkillError {
    /// Whether this is a verification failure (the content was received but is not what the
    /// entry describes), as opposed to a failure to get it at all.
    pub fn is_verification_failure(&self) -> bool {
        matches!(
            self,
            SkillError::NotInManifest { .. }
                | SkillError::SizeMismatch { .. }
                | SkillError::DigestMismatch { .. }
                | SkillError::BadFrontmatter { .. }
                | SkillError::FrontmatterMismatch { .. }
        )
    }
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillError::NotOffered => f.write_str("the server does not offer the skills extension"),
            SkillError::Request(e) => write!(f, "{e}"),
            SkillError::Unverifiable { skill } => write!(
                f,
                "{skill} publishes no manifest (\"dynamic\"); its content cannot be verified"
            ),
            SkillError::NotInManifest { uri } => {
                write!(f, "{uri} is not in the skill's manifest")
            }
            SkillError::NoContent { uri, why } => write!(f, "{uri}: {why}"),
            SkillError::SizeMismatch {
                uri,
                expected,
                actual,
            } => write!(
                f,
                "{uri}: {actual} bytes received, the manifest lists {expected}"
            ),
            SkillError::DigestMismatch {
                uri,
                expected,
                actual,
            } => write!(
                f,
                "{uri}: content hashes to {actual}, the manifest lists {expected}"
            ),
            SkillError::BadFrontmatter { uri, why } => write!(f, "{uri}: {why}"),
            SkillError::FrontmatterMismatch { uri, fields } => write!(
                f,
                "{uri}: frontmatter differs from the entry in {}",
                fields.join(", ")
            ),
        }
    }
}

impl std::error::Error for SkillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SkillError::Request(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for SkillError {
    fn from(e: Error) -> Self {
        SkillError::Request(e)
    }
}

/// A skill file that passed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The file's URI.
    pub uri: String,
    /// Its MIME type, as the server gave it.
    pub mime_type: Option<String>,
    /// Its bytes (whose size and digest are the manifest's).
    pub bytes: Vec<u8>,
}

impl SkillFile {
    /// The content as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

/// `skills/list`, for [`Pages`].
#[derive(Debug)]
pub enum SkillEntries {}

impl PageKind for SkillEntries {
    const METHOD: &'static str = methods::SKILLS_LIST;
    type Page = ListSkillsResult;
    type Item = Skill;
    fn split(p: ListSkillsResult) -> (Vec<Skill>, Option<String>) {
        (p.skills, p.next_cursor)
    }
}

impl Client {
    /// Whether the server declared the skills extension.
    pub fn offers_skills(&self) -> bool {
        ext::declared_by(self.server_capabilities())
    }

    /// Every skill entry the server lists (all pages, within the client's list bounds).
    /// Entries only: no file is fetched.
    ///
    /// # Errors
    /// [`SkillError::NotOffered`] when the server did not declare the extension, else the
    /// request's error.
    pub fn list_skills(&self) -> Result<Vec<Skill>, SkillError> {
        if !self.offers_skills() {
            return Err(SkillError::NotOffered);
        }
        Ok(Pages::<SkillEntries>::new(self).collect::<Result<_, _>>()?)
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (a listed one, or one known only
    /// by its URI). No file is fetched.
    ///
    /// # Errors
    /// [`SkillError::NotOffered`], or the request's error (-32602 from the server for a
    /// URI that names no skill).
    pub fn get_skill(&self, uri: &str) -> Result<Skill, SkillError> {
        if !self.offers_skills() {
            return Err(SkillError::NotOffered);
        }
        #[derive(serde::Deserialize)]
        struct Got {
            skill: Skill,
        }
        let got: Got = self.request(methods::SKILLS_GET, json!({ "uri": uri }))?;
        Ok(got.skill)
    }

    /// The direct children of the directory resource at `uri` (`resources/directory/read`,
    /// every page, within the client's list bounds); subdirectories carry the MIME type
    /// `inode/directory`. Only against a server that declared `directoryRead`. What it lists
    /// is a live view, not part of any held entry: a file it shows that the entry does not
    /// list is still refused by [`Client::read_skill_file`].
    ///
    /// # Errors
    /// [`SkillError::NotOffered`] without `directoryRead`, else the request's error (-32602
    /// from the server for a URI that is no directory).
    pub fn read_resource_directory(&self, uri: &str) -> Result<Vec<Resource>, SkillError> {
        if !ext::directory_read_declared(self.server_capabilities()) {
            return Err(SkillError::NotOffered);
        }
        let limits = self.list_limits();
        let mut children = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        let mut bytes = 0usize;
        for _ in 0..limits.pages {
            let mut params = json!({ "uri": uri });
            if let Some(c) = &cursor {
                params["cursor"] = json!(c);
            }
            let page: ReadResourceDirectoryResult =
                self.request(methods::RESOURCES_DIRECTORY_READ, params)?;
            bytes = bytes.saturating_add(mcp_core::jsonrpc::json_len(&page));
            children.extend(page.resources);
            if children.len() > limits.items || bytes > limits.bytes {
                break;
            }
            match page.next_cursor {
                Some(c) if seen.insert(c.clone()) => cursor = Some(c),
                Some(c) => {
                    return Err(Error::Unexpected(Unexpected::RepeatedCursor {
                        method: methods::RESOURCES_DIRECTORY_READ,
                        cursor: c,
                    })
                    .into());
                }
                None => return Ok(children),
            }
        }
        Err(Error::Unexpected(Unexpected::ListTooLong {
            method: methods::RESOURCES_DIRECTORY_READ,
            reached: format!(
                "{} pages, {} items or {} bytes (ClientBuilder::max_list_pages, \
                 max_list_items, max_list_bytes)",
                limits.pages, limits.items, limits.bytes
            ),
        })
        .into())
    }

    /// Reads one file of `skill` (its own `SKILL.md` when `uri` is `skill.uri`) and verifies
    /// it against the entry: listed, same size, same digest, and for the `SKILL.md` the same
    /// frontmatter. Only then is it returned.
    ///
    /// # Errors
    /// A [`SkillError`] saying which check failed (nothing of the content is returned), or
    /// the request's error.
    pub fn read_skill_file(&self, skill: &Skill, uri: &str) -> Result<SkillFile, SkillError> {
        let SkillResources::Files(manifest) = &skill.resources else {
            return Err(SkillError::Unverifiable {
                skill: skill.uri.clone(),
            });
        };
        let Some(listed) = manifest.iter().find(|r| r.uri == uri) else {
            return Err(SkillError::NotInManifest {
                uri: uri.to_owned(),
            });
        };
        let read: ReadResourceResult =
            self.request(methods::RESOURCES_READ, json!({ "uri": uri }))?;
        let (bytes, mime_type) = content_bytes(uri, &read)?;
        let actual = bytes.len() as u64;
        if actual != listed.size {
            return Err(SkillError::SizeMismatch {
                uri: uri.to_owned(),
                expected: listed.size,
                actual,
            });
        }
        let digest = ext::format_digest(&Sha256::digest(&bytes).into());
        if digest != listed.digest {
            return Err(SkillError::DigestMismatch {
                uri: uri.to_owned(),
                expected: listed.digest.clone(),
                actual: digest,
            });
        }
        if uri == skill.uri {
            check_frontmatter(skill, &bytes)?;
        }
        Ok(SkillFile {
            uri: uri.to_owned(),
            mime_type,
            bytes,
        })
    }
}

/// The bytes of the content for `uri` in a `resources/read` answer: text as its UTF-8, a
/// blob base64-decoded.
fn content_bytes(
    uri: &str,
    read: &ReadResourceResult,
) -> Result<(Vec<u8>, Option<String>), SkillError> {
    let no = |why: &str| SkillError::NoContent {
        uri: uri.to_owned(),
        why: why.to_owned(),
    };
    let contents = serde_json::to_value(&read.contents).map_err(|e| no(&e.to_string()))?;
    let items = contents.as_array().cloned().unwrap_or_default();
    // The entry for this URI; a single entry with another URI is not accepted either.
    let Some(c) = items.iter().find(|c| c["uri"] == uri) else {
        return Err(no("the answer holds no contents for this URI"));
    };
    let mime = c["mimeType"].as_str().map(str::to_owned);
    if let Some(text) = c.get("text").and_then(Value::as_str) {
        return Ok((text.as_bytes().to_vec(), mime));
    }
    if let Some(blob) = c.get("blob").and_then(Value::as_str) {
        let bytes = base64_decode(blob).ok_or_else(|| no("the blob is not valid base64"))?;
        return Ok((bytes, mime));
    }
    Err(no("the contents carry neither text nor blob"))
}

fn check_frontmatter(skill: &Skill, bytes: &[u8]) -> Result<(), SkillError> {
    let bad = |why: String| SkillError::BadFrontmatter {
        uri: skill.uri.clone(),
        why,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| bad("SKILL.md is not UTF-8".into()))?;
    let file = frontmatter::parse(text).map_err(|e| bad(e.to_string()))?;
    let mut fields: Vec<String> = file
        .keys()
        .chain(skill.frontmatter.keys())
        .filter(|k| {
            let a = file.get(*k).unwrap_or(&Value::Null);
            let b = skill.frontmatter.get(*k).unwrap_or(&Value::Null);
            !frontmatter::same(a, b)
        })
        .cloned()
        .collect();
    fields.sort();
    fields.dedup();
    if fields.is_empty() {
        Ok(())
    } else {
        Err(SkillError::FrontmatterMismatch {
            uri: skill.uri.clone(),
            fields,
        })
    }
}

/// Standard base64 (with or without padding); `None` for anything else.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    // Leftover bits must be padding zeros, and one leftover character is no byte at all.
    if bits >= 6 || acc & ((1 << bits) - 1) != 0 {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_standard_text_and_refuses_the_rest() {
        assert_eq!(base64_decode("AJ+Slv8=").unwrap(), [0, 159, 146, 150, 255]);
        assert_eq!(base64_decode("Zm9vYmFy").unwrap(), b"foobar");
        assert_eq!(base64_decode("Zg==").unwrap(), b"f");
        assert_eq!(base64_decode("").unwrap(), b"");
        assert!(base64_decode("Z").is_none());
        assert!(base64_decode("Zh==").is_none());
        assert!(base64_decode("Zm9v!").is_none());
    }
}
