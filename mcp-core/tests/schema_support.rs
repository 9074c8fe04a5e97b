//! Loads the vendored official schemas and validates instances against one definition.
//! Shared by the `schema_*` tests (as a module); built alone it is an empty test target.
#![allow(dead_code)]

use std::path::PathBuf;

use mcp_core::version::ProtocolVersion;
use serde_json::{Value, json};

/// The five schema documents, loaded once per test.
pub struct Schemas {
    docs: Vec<(ProtocolVersion, Value)>,
}

impl Schemas {
    pub fn load() -> Schemas {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec");
        let docs = ProtocolVersion::ALL
            .into_iter()
            .map(|v| {
                let path = root.join(v.as_str()).join("schema.json");
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                (v, serde_json::from_str(&text).unwrap())
            })
            .collect();
        Schemas { docs }
    }

    fn doc(&self, v: ProtocolVersion) -> &Value {
        &self.docs.iter().find(|(dv, _)| *dv == v).unwrap().1
    }

    /// The document with a root `$ref` to definition `def`.
    fn schema_for(&self, v: ProtocolVersion, def: &str) -> Value {
        let doc = self.doc(v);
        let (section, prefix) = if doc.get("$defs").is_some() {
            ("$defs", "#/$defs/")
        } else {
            ("definitions", "#/definitions/")
        };
        assert!(
            doc[section].get(def).is_some(),
            "{v} has no definition {def}"
        );
        let mut s = json!({ section: doc[section].clone(), "$ref": format!("{prefix}{def}") });
        s["$schema"] = doc["$schema"].clone();
        s
    }

    pub fn errors(&self, v: ProtocolVersion, def: &str, instance: &Value) -> Vec<String> {
        let schema = self.schema_for(v, def);
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{v} {def}: schema does not compile: {e}"));
        validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }

    pub fn is_valid(&self, v: ProtocolVersion, def: &str, instance: &Value) -> bool {
        self.errors(v, def, instance).is_empty()
    }

    pub fn assert_valid(&self, v: ProtocolVersion, def: &str, instance: &Value) {
        let errs = self.errors(v, def, instance);
        assert!(
            errs.is_empty(),
            "{v} {def} rejects {instance}:\n{}",
            errs.join("\n")
        );
    }
}
