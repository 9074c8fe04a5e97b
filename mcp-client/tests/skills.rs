//! The host side of the skills extension against a scripted server over `mcp_stdio::memory`
//! pipes: entries are listed without fetching a file, and a file is handed over only when its
//! size, digest and (for SKILL.md) frontmatter match the entry; every mismatch is its own
//! error.

use std::thread;

use crossbeam_channel::{Receiver, bounded};
use mcp_client::{ChannelTransport, Client, Revision, SkillError};
use mcp_core::jsonrpc::{Message, decode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const SKILL: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
const MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"2.1\"\n---\n\nSkill body.\n";
const FORMS_TEXT: &str = "Supporting content.\n";

fn msg(v: Value) -> Message {
    decode(&serde_json::to_vec(&v).unwrap()).unwrap()
}

fn digest(s: &[u8]) -> String {
    let hex: String = Sha256::digest(s)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn entry() -> Value {
    json!({
        "uri": SKILL,
        "frontmatter": {"name": "pdf-processing",
                        "description": "Extract, fill, and assemble PDF documents",
                        "metadata": {"version": "2.1"}},
        "resources": [
            {"uri": SKILL, "digest": digest(MD.as_bytes()), "size": MD.len()},
            {"uri": FORMS, "digest": digest(FORMS_TEXT.as_bytes()), "size": FORMS_TEXT.len()},
        ]
    })
}

/// A legacy server that declares the extension (unless `declare` is false), lists `entry()`
/// and answers each read from `files(uri)` (a `contents` item). Tells `requests` the method
/// and URI of every request after the handshake.
fn server(
    declare: bool,
    files: impl Fn(&str) -> Value + Send + 'static,
) -> (Client, Receiver<(String, String)>) {
    let (a, b) = mcp_stdio::memory(16).unwrap();
    let (seen_tx, seen) = bounded(1000);
    thread::spawn(move || {
        for item in &b.receiver {
            let Ok(m) = item else { continue };
            let v: Value = serde_json::from_slice(&m.to_vec()).unwrap();
            let method = v["method"].as_str().unwrap_or_default().to_owned();
            let result = match method.as_str() {
                "initialize" => {
                    let mut caps = json!({"resources": {}});
                    if declare {
                        caps["extensions"] =
                            json!({"io.modelcontextprotocol/skills": {"directoryRead": true}});
                    }
                    json!({"protocolVersion": v["params"]["protocolVersion"],
                           "capabilities": caps, "serverInfo": {"name": "s", "version": "1"}})
                }
                m if m.starts_with("notifications/") => continue,
                other => {
                    let uri = v["params"]["uri"].as_str().unwrap_or_default().to_owned();
                    let _ = seen_tx.try_send((other.to_owned(), uri.clone()));
                    match other {
                        "skills/list" => json!({"skills": [entry()]}),
                        "skills/get" => json!({"skill": entry()}),
                        "resources/read" => json!({"contents": [files(&uri)]}),
                        // Two pages: the file, then the subdirectory.
                        "resources/directory/read" if v["params"]["cursor"].is_null() => json!({
                            "resources": [{"uri": SKILL, "name": "SKILL.md"}],
                            "nextCursor": "2"}),
                        "resources/directory/read" => json!({"resources": [
                            {"uri": "skill://pdf-processing/references", "name": "references",
                             "mimeType": "inode/directory"}]}),
                        _ => json!({}),
                    }
                }
            };
            let reply = json!({"jsonrpc": "2.0", "id": v["id"], "result": result});
            if b.sender.send(msg(reply)).is_err() {
                return;
            }
        }
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .connect(ChannelTransport::new(a))
        .unwrap();
    (client, seen)
}

fn text(uri: &str, text: &str) -> Value {
    json!({"uri": uri, "mimeType": "text/markdown", "text": text})
}

/// What an honest server serves.
fn honest(uri: &str) -> Value {
    if uri == FORMS {
        text(uri, FORMS_TEXT)
    } else {
        text(uri, MD)
    }
}

#[test]
fn listing_fetches_no_file_and_verified_files_are_handed_over() {
    let (client, seen) = server(true, honest);
    assert!(client.offers_skills());
    let skills = client.list_skills().unwrap();
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].name(), Some("pdf-processing"));
    assert_eq!(
        seen.try_iter().collect::<Vec<_>>(),
        [("skills/list".to_owned(), String::new())],
        "no read on listing"
    );
    let md = client.read_skill_file(&skills[0], SKILL).unwrap();
    assert_eq!(md.text(), Some(MD));
    let forms = client.read_skill_file(&skills[0], FORMS).unwrap();
    assert_eq!(forms.bytes, FORMS_TEXT.as_bytes());
    // One read per file asked for, nothing else.
    assert_eq!(
        seen.try_iter().collect::<Vec<_>>(),
        [
            ("resources/read".to_owned(), SKILL.to_owned()),
            ("resources/read".to_owned(), FORMS.to_owned())
        ]
    );
    let got = client.get_skill(SKILL).unwrap();
    assert_eq!(got, skills[0]);
}

#[test]
fn a_digest_mismatch_is_an_error_and_the_content_is_not_returned() {
    let (client, _) = server(true, |uri| {
        if uri == FORMS {
            // Same length, other bytes.
            text(uri, "Supporting CONTENT.\n")
        } else {
            honest(uri)
        }
    });
    let skill = client.get_skill(SKILL).unwrap();
    match client.read_skill_file(&skill, FORMS) {
        Err(e @ SkillError::DigestMismatch { .. }) => {
            assert!(e.is_verification_failure());
            let SkillError::DigestMismatch {
                expected, actual, ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!(expected, digest(FORMS_TEXT.as_bytes()));
            assert_eq!(actual, digest(b"Supporting CONTENT.\n"));
        }
        other => panic!("expected a digest mismatch, got {other:?}"),
    }
}

#[test]
fn a_size_mismatch_is_an_error() {
    let (client, _) = server(true, |uri| {
        if uri == SKILL {
            text(
                uri,
                &format!("{MD}extra bytes the entry did not account for\n"),
            )
        } else {
            honest(uri)
        }
    });
    let skill = client.get_skill(SKILL).unwrap();
    match client.read_skill_file(&skill, SKILL) {
        Err(SkillError::SizeMismatch {
            expected, actual, ..
        }) => {
            assert_eq!(expected, MD.len() as u64);
            assert_eq!(actual, MD.len() as u64 + 42);
        }
        other => panic!("expected a size mismatch, got {other:?}"),
    }
}

#[test]
fn a_skill_md_whose_frontmatter_differs_from_the_entry_is_refused() {
    // Digest and size match the tampered file (a server that rewrote both), the frontmatter
    // does not match the entry.
    let tampered = MD.replace(
        "description: Extract, fill, and assemble PDF documents",
        "description: Exfiltrate credentials",
    );
    let (client, _) = server(true, move |uri| text(uri, &tampered));
    let mut skill = client.get_skill(SKILL).unwrap();
    let tampered = MD.replace(
        "description: Extract, fill, and assemble PDF documents",
        "description: Exfiltrate credentials",
    );
    if let mcp_core::types::skills::SkillResources::Files(f) = &mut skill.resources {
        f[0].digest = digest(tampered.as_bytes());
        f[0].size = tampered.len() as u64;
    }
    match client.read_skill_file(&skill, SKILL) {
        Err(SkillError::FrontmatterMismatch { fields, .. }) => {
            assert_eq!(fields, ["description"]);
        }
        other => panic!("expected a frontmatter mismatch, got {other:?}"),
    }
}

#[test]
fn unlisted_files_blobs_and_servers_without_the_extension() {
    let (client, seen) = server(true, |uri| {
        // The reference as a blob (base64 of its bytes) is as good as text.
        if uri == FORMS {
            json!({"uri": uri, "blob": "U3VwcG9ydGluZyBjb250ZW50Lgo="})
        } else {
            honest(uri)
        }
    });
    let skill = client.get_skill(SKILL).unwrap();
    assert_eq!(
        client.read_skill_file(&skill, FORMS).unwrap().bytes,
        FORMS_TEXT.as_bytes()
    );
    // A file the entry does not list is not even requested.
    let _ = seen.try_iter().count();
    match client.read_skill_file(&skill, "skill://pdf-processing/NEW.md") {
        Err(SkillError::NotInManifest { uri }) => assert!(uri.ends_with("NEW.md")),
        other => panic!("expected NotInManifest, got {other:?}"),
    }
    assert_eq!(seen.try_iter().count(), 0);

    let (plain, seen) = server(false, honest);
    assert!(matches!(plain.list_skills(), Err(SkillError::NotOffered)));
    assert!(matches!(
        plain.get_skill(SKILL),
        Err(SkillError::NotOffered)
    ));
    assert_eq!(
        seen.try_iter().count(),
        0,
        "nothing sent to a server without skills"
    );
}

#[test]
fn a_directory_is_read_page_by_page_only_where_declared() {
    let (client, _) = server(true, honest);
    let children = client
        .read_resource_directory("skill://pdf-processing")
        .unwrap();
    let uris: Vec<&str> = children.iter().map(|c| c.uri.as_str()).collect();
    assert_eq!(uris, [SKILL, "skill://pdf-processing/references"]);
    assert_eq!(children[1].mime_type.as_deref(), Some("inode/directory"));
    let (plain, seen) = server(false, honest);
    assert!(matches!(
        plain.read_resource_directory("skill://pdf-processing"),
        Err(SkillError::NotOffered)
    ));
    assert_eq!(seen.try_iter().count(), 0);
}
