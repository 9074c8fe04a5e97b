//! The `io.modelcontextprotocol/skills` extension (SEP-2640): a server serves Agent Skills (a
//! directory with a `SKILL.md` and supporting files) as resources, conventionally under
//! `skill://`, and describes each skill with an entry ([`Skill`]) that carries the `SKILL.md`
//! frontmatter verbatim and a manifest of every file with its SHA-256 digest and size, so a
//! host can verify what it later reads. `skills/list` enumerates entries, `skills/get` returns
//! one, and `resources/directory/read` lists a directory's children.
//!
//! Not part of any revision's core schema, so these names are not re-exported at the top of
//! [`crate::types`]. Both roles need the frontmatter rules, so [`frontmatter`] (the YAML
//! subset skills are written in) lives here too.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{CacheScope, Cursor, Meta, ResultType};
use super::definitions::Resource;

pub mod frontmatter;

/// The extension identifier, as a key of `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/skills";

/// The URI scheme the extension recommends for skill files.
pub const SCHEME: &str = "skill";

/// The name of the file at the root of every skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// The MIME type of a directory resource (what `resources/directory/read` lists and reads).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// The MIME type the extension asks for on `SKILL.md` resources.
pub const SKILL_MIME_TYPE: &str = "text/markdown";

/// The per-skill limit on manifest entries hosts must accept (and servers should not exceed).
pub const MAX_RESOURCES_PER_SKILL: usize = 512;

/// The per-skill limit on the sum of file sizes (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The `capabilities.extensions` entry a server declares: the settings sit inline under the
/// identifier (`{}` when `directoryRead` is not offered).
pub fn server_capability(directory_read: bool) -> Value {
    if directory_read {
        serde_json::json!({ "directoryRead": true })
    } else {
        Value::Object(Map::new())
    }
}

/// Whether a server's capabilities (an object, as sent) declare the skills extension.
pub fn declared_by(server_capabilities: &Value) -> bool {
    server_capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION_ID))
        .is_some_and(Value::is_object)
}

/// Whether a server's capabilities declare `resources/directory/read` (clients must not call
/// it otherwise).
pub fn directory_read_declared(server_capabilities: &Value) -> bool {
    server_capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION_ID))
        .and_then(|s| s.get("directoryRead"))
        == Some(&Value::Bool(true))
}

/// One file of a skill: where to read it, and what its bytes must hash to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits, over the file's raw bytes.
    pub digest: String,
    /// The file's length in bytes (the bytes `digest` covers).
    pub size: u64,
}

/// A skill's files: a complete manifest, or `"dynamic"` for content generated such that no
/// stable digest can be published (hosts may refuse to load those).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each once.
    Files(Vec<SkillResource>),
    /// No manifest (`"dynamic"`).
    Dynamic,
}

impl Default for SkillResources {
    fn default() -> Self {
        SkillResources::Files(Vec::new())
    }
}

impl SkillResources {
    /// The manifest, or `None` for a dynamic skill.
    pub fn files(&self) -> Option<&[SkillResource]> {
        match self {
            SkillResources::Files(f) => Some(f),
            SkillResources::Dynamic => None,
        }
    }
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(f) => f.serialize(s),
            SkillResources::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Any other string (or shape) is an invalid entry, which hosts must not load.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Files(Vec<SkillResource>),
            Word(String),
        }
        match Wire::deserialize(d)? {
            Wire::Files(f) => Ok(SkillResources::Files(f)),
            Wire::Word(w) if w == "dynamic" => Ok(SkillResources::Dynamic),
            Wire::Word(w) => Err(de::Error::custom(format!(
                "resources is {w:?}, neither an array nor \"dynamic\""
            ))),
        }
    }
}

/// The entry for one skill, the same in `skills/list` and `skills/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of the skill's `SKILL.md`; its last path segment before `/SKILL.md` is the
    /// skill's name.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter, verbatim, as a JSON object (`name` and `description`
    /// always present).
    pub frontmatter: Map<String, Value>,
    /// The skill's files.
    pub resources: SkillResources,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Skill {
    /// The frontmatter's `name`.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The manifest entry for `uri`, if the skill lists it.
    pub fn resource(&self, uri: &str) -> Option<&SkillResource> {
        self.resources.files()?.iter().find(|r| r.uri == uri)
    }
}

/// Result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// The entries of this page (an entry is never split across pages).
    pub skills: Vec<Skill>,
    /// Where the next page starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// 2026-07-28 cache lifetime hint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// 2026-07-28 cache scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// 2026-07-28 discriminator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetSkillRequestParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl GetSkillRequestParams {
    /// Params naming the skill whose `SKILL.md` is at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        GetSkillRequestParams {
            uri: uri.into(),
            ..Default::default()
        }
    }
}

/// Result of `skills/get` (no cursor: one entry is not a list).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The entry.
    pub skill: Skill,
    /// 2026-07-28 cache lifetime hint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// 2026-07-28 cache scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// 2026-07-28 discriminator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReadResourceDirectoryRequestParams {
    /// The directory resource (no trailing slash).
    pub uri: String,
    /// Where to start (the previous result's `nextCursor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ReadResourceDirectoryRequestParams {
    /// Params reading the directory `uri` from its first page.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadResourceDirectoryRequestParams {
            uri: uri.into(),
            ..Default::default()
        }
    }
}

/// Result of `resources/directory/read`: the directory's direct children (subdirectories with
/// [`DIRECTORY_MIME_TYPE`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceDirectoryResult {
    /// The children of this page.
    pub resources: Vec<Resource>,
    /// Where the next page starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// 2026-07-28 discriminator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Whether `name` satisfies the Agent Skills naming rules: 1 to 64 characters of lowercase
/// ASCII letters, digits and hyphens, with no leading, trailing or doubled hyphen.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The skill name a `SKILL.md` URI carries (the segment before `/SKILL.md`), if it has one.
pub fn name_from_uri(uri: &str) -> Option<&str> {
    let rest = &uri[uri.find("://")? + 3..];
    let dir = rest.strip_suffix(SKILL_FILE)?.strip_suffix('/')?;
    let name = dir.rsplit('/').next()?;
    (!name.is_empty()).then_some(name)
}

/// The skill's root directory URI: its `SKILL.md` URI without `/SKILL.md`.
pub fn root_of(skill_uri: &str) -> Option<&str> {
    skill_uri
        .strip_suffix(SKILL_FILE)
        .and_then(|d| d.strip_suffix('/'))
}

/// `sha256:` and the lowercase hex of a 32-byte hash, as manifests write digests.
pub fn format_digest(hash: &[u8; 32]) -> String {
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in hash {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether `digest` has the manifest's form: `sha256:` and 64 lowercase hex digits.
pub fn valid_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_are_an_array_or_the_word_dynamic_and_nothing_else() {
        let s: Skill = serde_json::from_value(json!({
            "uri": "skill://a/SKILL.md",
            "frontmatter": {"name": "a", "description": "d"},
            "resources": "dynamic"
        }))
        .unwrap();
        assert_eq!(s.resources, SkillResources::Dynamic);
        assert_eq!(serde_json::to_value(&s).unwrap()["resources"], "dynamic");
        for bad in [json!("static"), json!(null), json!({})] {
            let r: Result<Skill, _> = serde_json::from_value(json!({
                "uri": "skill://a/SKILL.md",
                "frontmatter": {}, "resources": bad
            }));
            assert!(r.is_err(), "{bad}");
        }
        let r: Result<Skill, _> =
            serde_json::from_value(json!({"uri": "skill://a/SKILL.md", "frontmatter": {}}));
        assert!(r.is_err(), "resources is required");
    }

    #[test]
    fn names_uris_and_digests_follow_the_extension() {
        assert!(valid_name("pdf-processing"));
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(
            name_from_uri("skill://acme/billing/refunds/SKILL.md"),
            Some("refunds")
        );
        assert_eq!(name_from_uri("skill://SKILL.md"), None);
        assert_eq!(root_of("skill://a/b/SKILL.md"), Some("skill://a/b"));
        let d = format_digest(&[0xab; 32]);
        assert!(valid_digest(&d), "{d}");
        assert!(!valid_digest(&d.to_uppercase()));
    }
}
