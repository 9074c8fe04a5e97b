//! The skills catalog when the `skills` feature is off: a type with no values, so every
//! `Option<Skills>` in the kit is `None`, the paths that serve skills compile to nothing, and
//! skills requests get -32601 as on a server that serves none. (The real catalog needs
//! SHA-256 for its manifests, which a server without skills should not have to build.)

use mcp_core::types::skills::Skill;
use mcp_core::types::{Resource as ResourceDef, ResourceContents};

/// No catalog can be made without the feature.
#[derive(Clone, Debug)]
pub(crate) enum Skills {}

/// What a read of a URI under the skills' scheme came to (never anything but `Missing` here).
#[allow(dead_code)]
pub(crate) enum Lookup<T> {
    Found(T),
    Refused(String),
    Missing,
}

impl Skills {
    pub(crate) fn owns(uri: &str) -> bool {
        uri.starts_with("skill://")
    }
    pub(crate) fn list(&self) -> Vec<Skill> {
        match *self {}
    }
    pub(crate) fn get(&self, _uri: &str) -> Option<Skill> {
        match *self {}
    }
    pub(crate) fn read(&self, _uri: &str) -> Lookup<ResourceContents> {
        match *self {}
    }
    pub(crate) fn read_directory(&self, _uri: &str) -> Lookup<Vec<ResourceDef>> {
        match *self {}
    }
    pub(crate) fn resources(&self) -> Vec<ResourceDef> {
        match *self {}
    }
    pub(crate) fn on_change(&self, _f: impl Fn() + Send + Sync + 'static) {
        match *self {}
    }
}
