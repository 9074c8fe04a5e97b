//! Building skills: from files given in code, and from a directory walked under a root
//! without ever leaving it.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_core::types::skills::{self as ext, SKILL_FILE, frontmatter};
use serde_json::{Map, Value};

/// How deep the walk goes below the root (deeper trees are refused, not followed).
const MAX_DEPTH: usize = 32;

/// A skill whose files and frontmatter passed every rule.
#[derive(Debug, Clone)]
pub(crate) struct BuiltSkill {
    /// The skill path (`/`-separated, the last segment the name).
    pub(crate) path: String,
    pub(crate) frontmatter: Map<String, Value>,
    /// Files by path relative to the skill, `SKILL.md` among them.
    pub(crate) files: Vec<(String, Arc<[u8]>)>,
}

/// What a directory held: the skills it serves, and those it left out with why.
pub(crate) struct Found {
    pub(crate) skills: Vec<BuiltSkill>,
    pub(crate) skipped: Vec<(String, String)>,
}

fn check_segments(what: &str, path: &str) -> Result<(), String> {
    for seg in path.split('/') {
        if seg.is_empty() || seg == "." || seg == ".." || seg.contains(['\\', '\0']) {
            return Err(format!(
                "{what} {path:?} has an empty, `.`, `..` or backslash segment"
            ));
        }
    }
    Ok(())
}

/// Checks a skill's files and reads its frontmatter: the rules of the extension and of the
/// Agent Skills format.
pub(crate) fn build_skill(path: &str, files: &[(String, Arc<[u8]>)]) -> Result<BuiltSkill, String> {
    check_segments("skill path", path)?;
    let name = path.rsplit('/').next().unwrap_or(path);
    if !ext::valid_name(name) {
        return Err(format!(
            "{name:?} is not a skill name (1-64 lowercase letters, digits and single hyphens)"
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut total = 0u64;
    for (rel, bytes) in files {
        check_segments("file", rel)?;
        if !seen.insert(rel.as_str()) {
            return Err(format!("{rel} is given twice"));
        }
        total += bytes.len() as u64;
    }
    if files.len() > ext::MAX_RESOURCES_PER_SKILL {
        return Err(format!(
            "{} files, over the extension's limit of {}",
            files.len(),
            ext::MAX_RESOURCES_PER_SKILL
        ));
    }
    if total > ext::MAX_SKILL_BYTES {
        return Err(format!(
            "{total} bytes in all, over the extension's limit of {}",
            ext::MAX_SKILL_BYTES
        ));
    }
    let Some((_, md)) = files.iter().find(|(p, _)| p == SKILL_FILE) else {
        return Err("no SKILL.md".into());
    };
    let text = std::str::from_utf8(md).map_err(|_| "SKILL.md is not UTF-8".to_owned())?;
    let fm = frontmatter::parse(text).map_err(|e| e.to_string())?;
    match fm.get("name") {
        Some(Value::String(n)) if n == name => {}
        Some(Value::String(n)) => {
            return Err(format!(
                "frontmatter name {n:?} is not the directory's name {name:?}"
            ));
        }
        _ => return Err("frontmatter has no string `name`".into()),
    }
    if !matches!(fm.get("description"), Some(Value::String(d)) if !d.is_empty()) {
        return Err("frontmatter has no non-empty `description`".into());
    }
    Ok(BuiltSkill {
        path: path.to_owned(),
        frontmatter: fm,
        files: files.to_vec(),
    })
}

/// One entry the walk met: the file to read (a symlink's target already checked to be under
/// the root), or why it cannot be served. Bytes are read later, and only for files inside a
/// skill, so a root holding other large files costs nothing for them.
struct Entry {
    rel: String,
    content: Result<PathBuf, String>,
}

/// Walks `root` (canonical) and builds every skill under it.
pub(crate) fn scan_dir(root: &Path, max_file_size: u64) -> std::io::Result<Found> {
    let mut entries = Vec::new();
    // The root itself must be readable: that is the caller's error, not a skipped skill.
    fs::read_dir(root)?;
    walk(root, root, "", 0, &mut entries);
    let mut found = Found {
        skills: Vec::new(),
        skipped: Vec::new(),
    };
    let skill_dirs: Vec<String> = entries
        .iter()
        .filter_map(|e| {
            if e.rel == SKILL_FILE {
                return Some(String::new());
            }
            e.rel
                .strip_suffix(SKILL_FILE)
                .and_then(|d| d.strip_suffix('/'))
                .map(str::to_owned)
        })
        .collect();
    let mut read_cache: HashMap<String, Result<Arc<[u8]>, String>> = HashMap::new();
    for dir in skill_dirs {
        if dir.is_empty() {
            found.skipped.push((
                SKILL_FILE.to_owned(),
                "a SKILL.md at the root has no skill path (put it in a directory named after the skill)".into(),
            ));
            continue;
        }
        let prefix = format!("{dir}/");
        let mut files = Vec::new();
        let mut bad = None;
        for e in entries.iter().filter(|e| e.rel.starts_with(&prefix)) {
            // A nested skill's files belong to the enclosing skill too: read once.
            let read = match &e.content {
                Ok(path) => read_cache
                    .entry(e.rel.clone())
                    .or_insert_with(|| read_limited(path, max_file_size))
                    .clone(),
                Err(why) => Err(why.clone()),
            };
            match read {
                Ok(b) => files.push((e.rel[prefix.len()..].to_owned(), b)),
                Err(why) => {
                    bad = Some(format!("{}: {why}", e.rel));
                    break;
                }
            }
        }
        let result = match bad {
            Some(why) => Err(why),
            None => build_skill(&dir, &files),
        };
        match result {
            Ok(s) => found.skills.push(s),
            Err(why) => found.skipped.push((dir, why)),
        }
    }
    Ok(found)
}

fn walk(root: &Path, dir: &Path, rel: &str, depth: usize, out: &mut Vec<Entry>) {
    let join = |name: &str| {
        if rel.is_empty() {
            name.to_owned()
        } else {
            format!("{rel}/{name}")
        }
    };
    if depth > MAX_DEPTH {
        out.push(Entry {
            rel: rel.to_owned(),
            content: Err("the tree is too deep".into()),
        });
        return;
    }
    let read = match fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) => {
            out.push(Entry {
                rel: rel.to_owned(),
                content: Err(format!("unreadable directory: {e}")),
            });
            return;
        }
    };
    let mut items: Vec<_> = read.filter_map(Result::ok).collect();
    items.sort_by_key(|d| d.file_name());
    for item in items {
        let os_name = item.file_name();
        let Some(name) = os_name.to_str() else {
            out.push(Entry {
                rel: join(&os_name.to_string_lossy()),
                content: Err("a file name that is not UTF-8".into()),
            });
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = item.path();
        let child = join(name);
        let meta = match fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                out.push(Entry {
                    rel: child,
                    content: Err(e.to_string()),
                });
                continue;
            }
        };
        if meta.file_type().is_symlink() {
            // Followed only when it stays under the root, and only to a file.
            let target = match path.canonicalize() {
                Ok(t) => t,
                Err(e) => {
                    out.push(Entry {
                        rel: child,
                        content: Err(format!("a dangling symlink: {e}")),
                    });
                    continue;
                }
            };
            if !target.starts_with(root) {
                out.push(Entry {
                    rel: child,
                    content: Err("a symlink out of the skills root (refused)".into()),
                });
                continue;
            }
            if !target.is_file() {
                out.push(Entry {
                    rel: child,
                    content: Err("a symlink to a directory (not followed)".into()),
                });
                continue;
            }
            out.push(Entry {
                rel: child,
                content: Ok(target),
            });
        } else if meta.is_dir() {
            walk(root, &path, &child, depth + 1, out);
        } else if meta.is_file() {
            out.push(Entry {
                rel: child,
                content: Ok(path),
            });
        } else {
            out.push(Entry {
                rel: child,
                content: Err("not a regular file".into()),
            });
        }
    }
}

/// A file's bytes, refused past `max` (checked on the metadata, and again on what is read,
/// so a file growing meanwhile cannot get past it).
fn read_limited(path: &Path, max: u64) -> Result<Arc<[u8]>, String> {
    let too_big = |n: u64| format!("{n} bytes, over the size limit of {max}");
    let f = fs::File::open(path).map_err(|e| e.to_string())?;
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    if len > max {
        return Err(too_big(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes.into())
}
