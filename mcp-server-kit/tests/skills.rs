//! The skills extension as a client sees it: entries with verbatim frontmatter and correct
//! digests, files and directories served only from inside the root, the size limit, and a
//! rescan that tells clients the list changed.

use std::fs;
use std::path::{Path, PathBuf};

use mcp_server_kit::Server;
use mcp_server_kit::skills::{InlineSkill, Skills};
use serde_json::json;
use sha2::{Digest, Sha256};

mod common;
use common::Peer;

const PDF_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n  tags: [pdf, forms]\n---\n\n# PDF\n\nSee references/FORMS.md.\n";

/// A fresh directory for one test (under Cargo's per-target scratch directory).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("skills-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

/// A root with one skill: SKILL.md, a reference, and a template in a nested directory.
fn pdf_root(name: &str) -> PathBuf {
    let root = scratch(name);
    write(&root, "pdf-processing/SKILL.md", PDF_MD.as_bytes());
    write(&root, "pdf-processing/references/FORMS.md", b"Forms.\n");
    write(&root, "pdf-processing/templates/regional/eu.md", b"EU\n");
    write(
        &root,
        "pdf-processing/assets/logo.bin",
        &[0, 159, 146, 150, 255],
    );
    root
}

fn serve(skills: Skills) -> Peer {
    let server = Server::builder("t", "1").skills(skills).build().unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    p
}

fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

#[test]
fn the_extension_is_declared_inline_with_the_resources_capability() {
    let server = Server::builder("t", "1")
        .skills(Skills::from_dir(pdf_root("caps")).unwrap())
        .build()
        .unwrap();
    let caps = server.capabilities();
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert_eq!(caps["resources"]["listChanged"], true);
    // Without skills, the methods are not there.
    let plain = Server::builder("t", "1").build().unwrap();
    let p = Peer::open(&plain);
    p.initialize("2025-11-25", json!({}));
    assert_eq!(
        p.request(1, "skills/list", json!({}))["error"]["code"],
        -32601
    );
}

#[test]
fn entries_carry_frontmatter_verbatim_and_the_digest_and_size_of_every_file() {
    let root = pdf_root("entries");
    let p = serve(Skills::from_dir(&root).unwrap());
    let list = p.request(1, "skills/list", json!({}));
    let skills = list["result"]["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    let s = &skills[0];
    assert_eq!(s["uri"], "skill://pdf-processing/SKILL.md");
    assert_eq!(
        s["frontmatter"],
        json!({"name": "pdf-processing",
               "description": "Extract, fill, and assemble PDF documents",
               "license": "Apache-2.0",
               "metadata": {"version": "2.1.0", "tags": ["pdf", "forms"]}})
    );
    let files = s["resources"].as_array().unwrap();
    let uris: Vec<&str> = files.iter().map(|f| f["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/assets/logo.bin",
            "skill://pdf-processing/references/FORMS.md",
            "skill://pdf-processing/templates/regional/eu.md",
        ]
    );
    for f in files {
        let rel = f["uri"].as_str().unwrap().strip_prefix("skill://").unwrap();
        let bytes = fs::read(root.join(rel)).unwrap();
        assert_eq!(f["digest"], digest(&bytes), "{rel}");
        assert_eq!(f["size"], bytes.len(), "{rel}");
    }
    // skills/get answers the same entry, and -32602 for a skill not served.
    let got = p.request(
        2,
        "skills/get",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    );
    assert_eq!(&got["result"]["skill"], s);
    assert!(got["result"].get("nextCursor").is_none());
    let none = p.request(3, "skills/get", json!({"uri": "skill://nope/SKILL.md"}));
    assert_eq!(none["error"]["code"], -32602);
    // Text comes back as text with its MIME type, bytes as base64.
    let md = p.request(
        4,
        "resources/read",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    );
    assert_eq!(md["result"]["contents"][0]["text"], PDF_MD);
    assert_eq!(md["result"]["contents"][0]["mimeType"], "text/markdown");
    let bin = p.request(
        5,
        "resources/read",
        json!({"uri": "skill://pdf-processing/assets/logo.bin"}),
    );
    assert_eq!(bin["result"]["contents"][0]["blob"], "AJ+Slv8=");
    // The SKILL.md is listed as a resource, named and described from its frontmatter.
    let res = p.request(6, "resources/list", json!({}));
    assert_eq!(
        res["result"]["resources"],
        json!([{"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "mimeType": "text/markdown", "size": PDF_MD.len()}])
    );
}

#[test]
fn modern_results_carry_the_cache_attributes() {
    let server = Server::builder("t", "1")
        .skills(Skills::from_dir(pdf_root("modern")).unwrap())
        .build()
        .unwrap();
    let p = Peer::open(&server);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let list = p.request(1, "skills/list", json!({"_meta": meta}));
    assert_eq!(list["result"]["resultType"], "complete");
    assert!(list["result"]["ttlMs"].is_u64() && list["result"]["cacheScope"].is_string());
    let get = p.request(
        2,
        "skills/get",
        json!({"_meta": meta, "uri": "skill://pdf-processing/SKILL.md"}),
    );
    assert!(get["result"]["ttlMs"].is_u64() && get["result"]["cacheScope"].is_string());
}

#[test]
fn directories_list_their_direct_children_in_pages() {
    let server = Server::builder("t", "1")
        .page_size(1)
        .skills(Skills::from_dir(pdf_root("dirs")).unwrap())
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    let mut children = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1.. {
        let mut params = json!({"uri": "skill://pdf-processing"});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let r = p.request(id, "resources/directory/read", params);
        children.extend(r["result"]["resources"].as_array().unwrap().clone());
        match r["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let seen: Vec<(&str, &str)> = children
        .iter()
        .map(|c| (c["uri"].as_str().unwrap(), c["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [
            ("skill://pdf-processing/SKILL.md", "text/markdown"),
            ("skill://pdf-processing/assets", "inode/directory"),
            ("skill://pdf-processing/references", "inode/directory"),
            ("skill://pdf-processing/templates", "inode/directory"),
        ]
    );
    let sub = p.request(
        20,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing/templates"}),
    );
    assert_eq!(
        sub["result"]["resources"][0]["uri"],
        "skill://pdf-processing/templates/regional"
    );
    // A file, or nothing at all, is no directory.
    for uri in ["skill://pdf-processing/SKILL.md", "skill://nothing"] {
        let e = p.request(21, "resources/directory/read", json!({"uri": uri}));
        assert_eq!(e["error"]["code"], -32602, "{uri}");
    }
}

#[test]
fn escape_attempts_are_refused() {
    let root = pdf_root("escape");
    // A file outside the root that an escape would reach.
    let outside = scratch("escape-outside");
    write(&outside, "secret.txt", b"secret");
    let p = serve(Skills::from_dir(&root).unwrap());
    let depth = "../".repeat(20);
    for uri in [
        "skill://x/../../etc/passwd".to_owned(),
        "skill://pdf-processing/../../../etc/passwd".to_owned(),
        "skill://pdf-processing/%2e%2e/%2E%2E/etc/passwd".to_owned(),
        "skill://pdf-processing/..%2f..%2fetc/passwd".to_owned(),
        format!(
            "skill://pdf-processing/{depth}{}",
            outside.join("secret.txt").display()
        ),
        // An absolute path: the empty authority makes an empty segment.
        "skill:///etc/passwd".to_owned(),
        format!("skill://{}", outside.join("secret.txt").display()),
    ] {
        let r = p.request(1, "resources/read", json!({"uri": uri}));
        assert!(r.get("error").is_some(), "{uri}: {r}");
        assert!(!r.to_string().contains("secret\""), "{uri}: {r}");
        let d = p.request(2, "resources/directory/read", json!({"uri": uri}));
        assert_eq!(d["error"]["code"], -32602, "{uri}: {d}");
    }
    // The encoded `..` is refused by name, not merely not found.
    let r = p.request(
        3,
        "resources/read",
        json!({"uri": "skill://pdf-processing/%2e%2e/SKILL.md"}),
    );
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"].as_str().unwrap().contains(".."),
        "{r}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_root_keeps_its_skill_from_being_served() {
    let root = pdf_root("symlink");
    let outside = scratch("symlink-outside");
    write(&outside, "secret.txt", b"secret");
    write(
        &root,
        "leaky/SKILL.md",
        b"---\nname: leaky\ndescription: Points outside\n---\n",
    );
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("leaky/secret.txt")).unwrap();
    // A symlink that stays inside the root is followed.
    std::os::unix::fs::symlink(
        root.join("pdf-processing/references/FORMS.md"),
        root.join("pdf-processing/FORMS-link.md"),
    )
    .unwrap();
    let skills = Skills::from_dir(&root).unwrap();
    let uris: Vec<String> = skills.list().into_iter().map(|s| s.uri).collect();
    assert_eq!(uris, ["skill://pdf-processing/SKILL.md"]);
    let skipped = skills.skipped();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].0, "leaky");
    assert!(
        skipped[0].1.contains("symlink out of the skills root"),
        "{skipped:?}"
    );
    let p = serve(skills);
    let r = p.request(
        1,
        "resources/read",
        json!({"uri": "skill://leaky/secret.txt"}),
    );
    assert!(r.get("error").is_some(), "{r}");
    let r = p.request(
        2,
        "resources/read",
        json!({"uri": "skill://pdf-processing/FORMS-link.md"}),
    );
    assert_eq!(r["result"]["contents"][0]["text"], "Forms.\n");
}

#[test]
fn a_file_over_the_size_limit_keeps_its_skill_from_being_served() {
    let root = pdf_root("size");
    write(
        &root,
        "small/SKILL.md",
        b"---\nname: small\ndescription: Fits\n---\n",
    );
    write(&root, "pdf-processing/big.bin", &[7u8; 4096]);
    let skills = Skills::builder()
        .dir(&root)
        .max_file_size(1024)
        .build()
        .unwrap();
    let uris: Vec<String> = skills.list().into_iter().map(|s| s.uri).collect();
    assert_eq!(uris, ["skill://small/SKILL.md"]);
    assert!(skills.skipped()[0].1.contains("over the size limit"));
    let p = serve(skills);
    let r = p.request(
        1,
        "resources/read",
        json!({"uri": "skill://pdf-processing/big.bin"}),
    );
    assert!(r.get("error").is_some(), "{r}");
    // In code, the same limit is an error.
    let e = Skills::builder()
        .max_file_size(4)
        .skill(InlineSkill::new("a", "---\nname: a\ndescription: d\n---\n"))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("over the limit"), "{e}");
}

#[test]
fn skills_with_bad_frontmatter_or_names_are_left_out() {
    let root = scratch("bad");
    write(
        &root,
        "good/SKILL.md",
        b"---\nname: good\ndescription: d\n---\n",
    );
    write(
        &root,
        "wrong-name/SKILL.md",
        b"---\nname: other\ndescription: d\n---\n",
    );
    write(&root, "no-front/SKILL.md", b"# no frontmatter\n");
    write(
        &root,
        "Bad_Name/SKILL.md",
        b"---\nname: Bad_Name\ndescription: d\n---\n",
    );
    write(&root, "no-desc/SKILL.md", b"---\nname: no-desc\n---\n");
    let skills = Skills::from_dir(&root).unwrap();
    let uris: Vec<String> = skills.list().into_iter().map(|s| s.uri).collect();
    assert_eq!(uris, ["skill://good/SKILL.md"]);
    assert_eq!(skills.skipped().len(), 4, "{:?}", skills.skipped());
}

#[test]
fn skills_made_in_code_nest_under_a_prefix() {
    let skills = Skills::builder()
        .skill(
            InlineSkill::new(
                "acme/billing/refunds",
                "---\nname: refunds\ndescription: Refunds\n---\n",
            )
            .file("examples/email.md", "Dear customer\n"),
        )
        .build()
        .unwrap();
    let p = serve(skills);
    let got = p.request(
        1,
        "skills/get",
        json!({"uri": "skill://acme/billing/refunds/SKILL.md"}),
    );
    let files = &got["result"]["skill"]["resources"];
    assert_eq!(
        files[1],
        json!({"uri": "skill://acme/billing/refunds/examples/email.md",
               "digest": digest(b"Dear customer\n"), "size": 14})
    );
    let r = p.request(
        2,
        "resources/read",
        json!({"uri": "skill://acme/billing/refunds/examples/email.md"}),
    );
    assert_eq!(r["result"]["contents"][0]["text"], "Dear customer\n");
    // Every level of the prefix is a directory one can read down to the skill.
    for (dir, child) in [
        ("skill://acme", "skill://acme/billing"),
        ("skill://acme/billing", "skill://acme/billing/refunds"),
        (
            "skill://acme/billing/refunds",
            "skill://acme/billing/refunds/SKILL.md",
        ),
    ] {
        let d = p.request(3, "resources/directory/read", json!({"uri": dir}));
        let listed = d["result"]["resources"].as_array().expect("a listing");
        assert!(
            listed.iter().any(|r| r["uri"] == child),
            "{dir} lists {child}: {d}"
        );
    }
    let d = p.request(
        4,
        "resources/directory/read",
        json!({"uri": "skill://acme"}),
    );
    assert_eq!(
        d["result"]["resources"],
        json!([{"uri": "skill://acme/billing", "name": "billing",
                "mimeType": "inode/directory"}])
    );
    let bad = Skills::builder()
        .skill(InlineSkill::new(
            "x/../y",
            "---\nname: y\ndescription: d\n---\n",
        ))
        .build();
    assert!(bad.is_err());
}

#[test]
fn a_rescan_picks_up_changes_and_says_the_list_changed() {
    let root = pdf_root("rescan");
    let skills = Skills::from_dir(&root).unwrap();
    let server = Server::builder("t", "1")
        .skills(skills.clone())
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    // Nothing changed: no notification (the next message is the answer to the ping).
    assert!(!skills.rescan().unwrap());
    p.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert_eq!(p.next()["id"], 1);
    // A file edited: the digest changes, and clients hear of it.
    write(&root, "pdf-processing/references/FORMS.md", b"Forms, v2.\n");
    assert!(skills.rescan().unwrap());
    assert_eq!(p.next()["method"], "notifications/resources/list_changed");
    let got = p.request(
        2,
        "skills/get",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    );
    let forms = got["result"]["skill"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"] == "skill://pdf-processing/references/FORMS.md")
        .unwrap()
        .clone();
    assert_eq!(forms["digest"], digest(b"Forms, v2.\n"));
    // A skill added.
    write(
        &root,
        "new-one/SKILL.md",
        b"---\nname: new-one\ndescription: New\n---\n",
    );
    assert!(skills.rescan().unwrap());
    assert_eq!(p.next()["method"], "notifications/resources/list_changed");
    let list = p.request(3, "skills/list", json!({}));
    assert_eq!(list["result"]["skills"].as_array().unwrap().len(), 2);
}

#[test]
fn a_nested_skill_is_its_own_skill_and_supporting_files_of_the_enclosing_one() {
    let root = scratch("nested");
    write(
        &root,
        "outer/SKILL.md",
        b"---\nname: outer\ndescription: Outer\n---\n",
    );
    write(
        &root,
        "outer/inner/SKILL.md",
        b"---\nname: inner\ndescription: Inner\n---\n",
    );
    write(&root, "outer/inner/notes.md", b"notes\n");
    // Files outside every skill are neither served nor a reason to refuse one.
    write(&root, "loose.bin", &[1u8; 4096]);
    let skills = Skills::builder()
        .dir(&root)
        .max_file_size(1024)
        .build()
        .unwrap();
    assert!(skills.skipped().is_empty(), "{:?}", skills.skipped());
    let list = skills.list();
    let uris: Vec<&str> = list.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(
        uris,
        ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"]
    );
    let outer: Vec<&str> = list[0]
        .resources
        .files()
        .unwrap()
        .iter()
        .map(|f| f.uri.as_str())
        .collect();
    assert_eq!(
        outer,
        [
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
            "skill://outer/inner/notes.md"
        ]
    );
    assert_eq!(list[1].resources.files().unwrap().len(), 2);
}
