//! The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): Agent Skills served as
//! `skill://` resources, with `skills/list`, `skills/get` and `resources/directory/read`.
//!
//! A [`Skills`] is a catalog held in memory: every file's bytes, digest and size are taken
//! together when the catalog is built, so what `resources/read` returns is always exactly what
//! the manifest describes (a file edited on disk is served as it was until [`Skills::rescan`]
//! picks the edit up and tells clients the list changed). Reads are lookups in that catalog,
//! never paths joined from a URI, so a URI cannot reach a file the scan did not take; the URI
//! is still checked first (no `.`/`..` segment, plain or percent-encoded, no backslash, no
//! empty segment), so an escape attempt is refused by name rather than merely not found.
//!
//! The scan ([`Skills::from_dir`]) takes every directory under the root that holds a
//! `SKILL.md` as a skill, at `skill://<its path under the root>/SKILL.md`. It refuses, with a
//! logged reason and the skill left out (see [`Skills::skipped`]): a symlink whose target is
//! outside the root, a file over the size limit, a skill over the extension's limits (512
//! files, 16 MiB), frontmatter that is missing, unreadable, or whose `name` is not the
//! directory's name. Hidden files and directories (a name starting with `.`) are not served.

mod scan;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use mcp_core::types::skills::{
    self as ext, DIRECTORY_MIME_TYPE, SKILL_FILE, SKILL_MIME_TYPE, Skill, SkillResource,
    SkillResources,
};
use mcp_core::types::{Resource as ResourceDef, ResourceContents};
use sha2::{Digest, Sha256};

/// The default limit on one file's size (the whole per-skill budget of the extension).
pub const DEFAULT_MAX_FILE_SIZE: u64 = ext::MAX_SKILL_BYTES;

/// Why a catalog could not be built.
#[derive(Debug)]
pub enum SkillsError {
    /// The root directory could not be read.
    Io(PathBuf, std::io::Error),
    /// A skill made in code breaks a rule (the message says which).
    Invalid(String),
}

impl std::fmt::Display for SkillsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkillsError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            SkillsError::Invalid(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for SkillsError {}

/// A skill made in code: its path in the skill namespace (`refunds` or
/// `acme/billing/refunds`, the last segment being its name), its `SKILL.md` and its other
/// files.
///
/// ```
/// use mcp_server_kit::skills::{InlineSkill, Skills};
///
/// let skills = Skills::builder()
///     .skill(
///         InlineSkill::new("greeting", "---\nname: greeting\ndescription: Greets people\n---\nSay hi.\n")
///             .file("references/STYLE.md", "Be brief.\n"),
///     )
///     .build()?;
/// assert_eq!(skills.list()[0].uri, "skill://greeting/SKILL.md");
/// # Ok::<(), mcp_server_kit::skills::SkillsError>(())
/// ```
#[derive(Debug, Clone)]
pub struct InlineSkill {
    path: String,
    files: Vec<(String, Vec<u8>)>,
}

impl InlineSkill {
    /// A skill at `path` whose `SKILL.md` is `skill_md`.
    pub fn new(path: impl Into<String>, skill_md: impl Into<String>) -> Self {
        InlineSkill {
            path: path.into(),
            files: vec![(SKILL_FILE.to_owned(), skill_md.into().into_bytes())],
        }
    }

    /// Adds a supporting file at `path` (relative to the skill, `/`-separated).
    pub fn file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), bytes.into()));
        self
    }
}

/// Builds a [`Skills`] catalog from a directory, skills made in code, or both.
#[derive(Debug, Clone)]
pub struct SkillsBuilder {
    root: Option<PathBuf>,
    inline: Vec<InlineSkill>,
    max_file_size: u64,
}

impl SkillsBuilder {
    /// Serves every skill under `root` (scanned when built, and again on
    /// [`Skills::rescan`]).
    pub fn dir(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Some(root.into());
        self
    }

    /// Adds a skill made in code.
    pub fn skill(mut self, skill: InlineSkill) -> Self {
        self.inline.push(skill);
        self
    }

    /// The largest file served, in bytes (default [`DEFAULT_MAX_FILE_SIZE`]). A skill with a
    /// larger file is not served at all: its manifest must list every file.
    pub fn max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self
    }

    /// Scans the directory and checks the inline skills.
    ///
    /// # Errors
    /// The root cannot be read, or an inline skill breaks a rule (an inline skill is code:
    /// its mistakes are errors, not log lines).
    pub fn build(self) -> Result<Skills, SkillsError> {
        let root = match &self.root {
            Some(r) => Some(
                r.canonicalize()
                    .map_err(|e| SkillsError::Io(r.clone(), e))?,
            ),
            None => None,
        };
        let mut inline = Vec::new();
        for s in &self.inline {
            let files = s
                .files
                .iter()
                .map(|(p, b)| {
                    if b.len() as u64 > self.max_file_size {
                        return Err(SkillsError::Invalid(format!(
                            "{}/{p}: {} bytes, over the limit of {}",
                            s.path,
                            b.len(),
                            self.max_file_size
                        )));
                    }
                    Ok((p.clone(), Arc::<[u8]>::from(b.as_slice())))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let built = scan::build_skill(&s.path, &files).map_err(SkillsError::Invalid)?;
            inline.push(built);
        }
        let inner = Inner {
            root,
            max_file_size: self.max_file_size,
            inline,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            listeners: Mutex::new(Vec::new()),
        };
        let catalog = inner.scan()?;
        *inner.catalog.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(catalog);
        Ok(Skills {
            inner: Arc::new(inner),
        })
    }
}

/// A catalog of skills a server serves: give it to
/// [`ServerBuilder::skills`](crate::ServerBuilder::skills). Cloning is cheap; clones share
/// the catalog.
#[derive(Clone)]
pub struct Skills {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills")
            .field("root", &self.inner.root)
            .field("skills", &self.catalog().skills.len())
            .finish()
    }
}

type Listener = Box<dyn Fn() + Send + Sync>;

struct Inner {
    /// The canonical root, when skills come from a directory.
    root: Option<PathBuf>,
    max_file_size: u64,
    inline: Vec<scan::BuiltSkill>,
    catalog: RwLock<Arc<Catalog>>,
    /// Told when a rescan changed the catalog (the servers serving it).
    listeners: Mutex<Vec<Listener>>,
}

impl Inner {
    fn scan(&self) -> Result<Catalog, SkillsError> {
        let mut built = self.inline.clone();
        let mut skipped = Vec::new();
        if let Some(root) = &self.root {
            let found = scan::scan_dir(root, self.max_file_size)
                .map_err(|e| SkillsError::Io(root.clone(), e))?;
            for (path, why) in &found.skipped {
                log::warn!("skill {path} not served: {why}");
            }
            skipped = found.skipped;
            built.extend(found.skills);
        }
        Ok(Catalog::new(built, skipped))
    }
}

/// One file of the catalog.
#[derive(Clone)]
struct File {
    bytes: Arc<[u8]>,
    mime: String,
}

/// The catalog at one moment: entries, files and directories, all by URI.
#[derive(Default)]
struct Catalog {
    /// Entries by their `SKILL.md` URI.
    skills: BTreeMap<String, Skill>,
    files: BTreeMap<String, File>,
    /// Directory URI to its children, sorted by URI.
    dirs: BTreeMap<String, Vec<ResourceDef>>,
    skipped: Vec<(String, String)>,
}

impl Catalog {
    fn new(built: Vec<scan::BuiltSkill>, skipped: Vec<(String, String)>) -> Catalog {
        let mut c = Catalog {
            skipped,
            ..Catalog::default()
        };
        for s in built {
            let base = format!("{}://{}", ext::SCHEME, encode_path(&s.path));
            let uri = format!("{base}/{SKILL_FILE}");
            if c.skills.contains_key(&uri) {
                c.skipped
                    .push((s.path.clone(), "a second skill at the same path".into()));
                continue;
            }
            let mut manifest = Vec::new();
            // SKILL.md first, then the rest in path order.
            let mut files: Vec<&(String, Arc<[u8]>)> = s.files.iter().collect();
            files.sort_by_key(|(p, _)| (p != SKILL_FILE, p.clone()));
            for (rel, bytes) in files {
                let file_uri = format!("{base}/{}", encode_path(rel));
                manifest.push(SkillResource {
                    uri: file_uri.clone(),
                    digest: ext::format_digest(&Sha256::digest(bytes).into()),
                    size: bytes.len() as u64,
                });
                c.files.insert(
                    file_uri.clone(),
                    File {
                        bytes: Arc::clone(bytes),
                        mime: mime_of(rel).to_owned(),
                    },
                );
                // Every directory from the skill's root down to the file.
                let mut dir = base.clone();
                let segments: Vec<&str> = rel.split('/').collect();
                for (i, seg) in segments.iter().enumerate() {
                    let child_uri = format!("{dir}/{}", encode_segment(seg));
                    let last = i + 1 == segments.len();
                    let mut child = ResourceDef::new(child_uri.clone(), *seg);
                    if last {
                        child.mime_type = Some(mime_of(rel).to_owned());
                        child.size = Some(bytes.len() as u64);
                    } else {
                        child.mime_type = Some(DIRECTORY_MIME_TYPE.to_owned());
                    }
                    let children = c.dirs.entry(dir.clone()).or_default();
                    if !children.iter().any(|r| r.uri == child_uri) {
                        children.push(child);
                    }
                    dir = child_uri;
                }
            }
            // The levels of the skill's prefix are directories of the namespace too
            // (`skill://acme` and `skill://acme/billing` above `acme/billing/refunds`): the
            // extension wants every directory level readable, not only those inside a skill.
            let mut levels = s.path.split('/');
            let mut dir = format!(
                "{}://{}",
                ext::SCHEME,
                encode_segment(levels.next().unwrap_or_default())
            );
            for seg in levels {
                let child_uri = format!("{dir}/{}", encode_segment(seg));
                let children = c.dirs.entry(dir).or_default();
                if !children.iter().any(|r| r.uri == child_uri) {
                    let mut child = ResourceDef::new(child_uri.clone(), seg);
                    child.mime_type = Some(DIRECTORY_MIME_TYPE.to_owned());
                    children.push(child);
                }
                dir = child_uri;
            }
            c.skills.insert(
                uri.clone(),
                Skill {
                    uri,
                    frontmatter: s.frontmatter,
                    resources: SkillResources::Files(manifest),
                    extra: Default::default(),
                },
            );
        }
        for children in c.dirs.values_mut() {
            children.sort_by(|a, b| a.uri.cmp(&b.uri));
        }
        c
    }

    /// What a client could see: entries and files (directories follow from the files).
    fn same_as(&self, other: &Catalog) -> bool {
        self.skills == other.skills
    }
}

/// What a read of a URI under the skills' scheme came to.
pub(crate) enum Lookup<T> {
    /// Served.
    Found(T),
    /// The URI is malformed or tries to leave the namespace (-32602, with this reason).
    Refused(String),
    /// Not a URI of the catalog.
    Missing,
}

impl Skills {
    /// A builder (a directory, skills made in code, limits).
    pub fn builder() -> SkillsBuilder {
        SkillsBuilder {
            root: None,
            inline: Vec::new(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }

    /// Serves every skill under `root`, with the default limits.
    ///
    /// # Errors
    /// The root cannot be read.
    pub fn from_dir(root: impl AsRef<Path>) -> Result<Skills, SkillsError> {
        Skills::builder().dir(root.as_ref()).build()
    }

    fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.inner.catalog.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Scans the directory again. When what clients see changed (a skill added, removed, or
    /// any file's bytes), the new catalog replaces the old one and every server serving it
    /// sends `notifications/resources/list_changed`. Returns whether it changed.
    ///
    /// # Errors
    /// The root cannot be read any more (the old catalog stays).
    pub fn rescan(&self) -> Result<bool, SkillsError> {
        let fresh = self.inner.scan()?;
        let changed = {
            let mut cur = self
                .inner
                .catalog
                .write()
                .unwrap_or_else(|p| p.into_inner());
            let changed = !cur.same_as(&fresh);
            *cur = Arc::new(fresh);
            changed
        };
        if changed {
            for l in self
                .inner
                .listeners
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
            {
                l();
            }
        }
        Ok(changed)
    }

    /// Every entry, in URI order.
    pub fn list(&self) -> Vec<Skill> {
        self.catalog().skills.values().cloned().collect()
    }

    /// The entry whose `SKILL.md` is at `uri`.
    pub fn get(&self, uri: &str) -> Option<Skill> {
        self.catalog().skills.get(uri).cloned()
    }

    /// The skills the last scan left out, with why (`(path under the root, reason)`).
    pub fn skipped(&self) -> Vec<(String, String)> {
        self.catalog().skipped.clone()
    }

    /// Whether `uri` is one this catalog answers for (its scheme).
    pub(crate) fn owns(uri: &str) -> bool {
        uri.starts_with("skill://")
    }

    /// The contents of the file at `uri`: text when it is UTF-8, else base64.
    pub(crate) fn read(&self, uri: &str) -> Lookup<ResourceContents> {
        if let Err(why) = check_uri(uri) {
            return Lookup::Refused(why);
        }
        let Some(f) = self.catalog().files.get(uri).cloned() else {
            return Lookup::Missing;
        };
        let mut c = match std::str::from_utf8(&f.bytes) {
            Ok(text) => ResourceContents::text(uri, text),
            Err(_) => ResourceContents::blob(uri, mcp_core::base64::base64(&f.bytes)),
        };
        match &mut c {
            ResourceContents::Text(t) => t.mime_type = Some(f.mime),
            ResourceContents::Blob(b) => b.mime_type = Some(f.mime),
        }
        Lookup::Found(c)
    }

    /// The children of the directory at `uri`.
    pub(crate) fn read_directory(&self, uri: &str) -> Lookup<Vec<ResourceDef>> {
        if let Err(why) = check_uri(uri) {
            return Lookup::Refused(why);
        }
        match self.catalog().dirs.get(uri.trim_end_matches('/')) {
            Some(children) => Lookup::Found(children.clone()),
            None => Lookup::Missing,
        }
    }

    /// The `SKILL.md` of every skill as a resource, for `resources/list` (its name and
    /// description from the frontmatter, as the extension asks).
    pub(crate) fn resources(&self) -> Vec<ResourceDef> {
        let catalog = self.catalog();
        catalog
            .skills
            .values()
            .map(|s| {
                let mut r = ResourceDef::new(s.uri.clone(), s.name().unwrap_or_default());
                r.description = s.description().map(str::to_owned);
                r.mime_type = Some(SKILL_MIME_TYPE.to_owned());
                r.size = catalog.files.get(&s.uri).map(|f| f.bytes.len() as u64);
                r
            })
            .collect()
    }

    /// Calls `f` after each rescan that changed the catalog.
    pub(crate) fn on_change(&self, f: impl Fn() + Send + Sync + 'static) {
        self.inner
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Box::new(f));
    }
}

/// Refuses a URI that could mean a path outside the namespace, whatever the catalog holds:
/// a `.` or `..` segment (also percent-encoded), a backslash, a NUL, an empty segment.
fn check_uri(uri: &str) -> Result<(), String> {
    let Some(rest) = uri.strip_prefix("skill://") else {
        return Err(format!("{uri} is not a skill:// URI"));
    };
    if rest.is_empty() {
        return Err("a skill:// URI without a path".into());
    }
    for seg in rest.trim_end_matches('/').split('/') {
        let decoded = percent_decode(seg).ok_or_else(|| format!("{uri}: bad percent-encoding"))?;
        if decoded.is_empty() || decoded == b"." || decoded == b".." {
            return Err(format!(
                "{uri}: an empty, `.` or `..` segment would leave the skill"
            ));
        }
        if decoded.iter().any(|&b| b == b'/' || b == b'\\' || b == 0) {
            return Err(format!("{uri}: a segment holds a path separator or NUL"));
        }
    }
    Ok(())
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// A path segment as it goes into a URI: unreserved characters and sub-delimiters as they
/// are, everything else percent-encoded.
fn encode_segment(seg: &str) -> String {
    let mut out = String::with_capacity(seg.len());
    for &b in seg.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// The MIME type of a file, from its extension.
fn mime_of(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_checks() {
        assert!(check_uri("skill://a/SKILL.md").is_ok());
        for bad in [
            "skill://x/../../etc/passwd",
            "skill://x/%2e%2e/%2E%2E/etc/passwd",
            "skill://x/./SKILL.md",
            "skill://x//SKILL.md",
            "skill://x/a%2fb",
            "skill://x/a%5cb",
            "skill://x/%zz",
            "file:///etc/passwd",
        ] {
            assert!(check_uri(bad).is_err(), "{bad}");
        }
        assert_eq!(encode_path("a b/c.md"), "a%20b/c.md");
    }
}
