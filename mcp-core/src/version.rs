//! Protocol revisions, the two eras they fall into, and the negotiation rules of each era.
//!
//! Up to 2025-11-25 the client proposes a revision in `initialize` and the server answers with
//! the one it will speak ("legacy" era: a handshake and, over HTTP, a session). From 2026-07-28
//! every request names its revision in `_meta` and the server either serves it or refuses it
//! with -32022 ("modern" era: stateless).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A released revision of the Model Context Protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05: the first release (stdio, HTTP+SSE).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, OAuth, batching, audio, tool annotations.
    V2025_03_26,
    /// 2025-06-18: structured tool output, elicitation, resource links; no batching.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, sampling tools, experimental tasks; the last legacy
    /// revision.
    V2025_11_25,
    /// 2026-07-28: the stateless revision (no initialize, no sessions).
    V2026_07_28,
}

/// The two ways a revision runs a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` / `initialized`, then a session (2024-11-05 .. 2025-11-25).
    Legacy,
    /// Every request carries its own revision and capabilities in `_meta` (2026-07-28 on).
    Modern,
}

impl ProtocolVersion {
    /// Every released revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest revision of the legacy era.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The newest revision this crate speaks.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The revision a Streamable HTTP server assumes when `MCP-Protocol-Version` is missing.
    pub const HTTP_DEFAULT: ProtocolVersion = ProtocolVersion::V2025_03_26;

    /// The revision as it appears on the wire, such as `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string; `None` for anything that is not a released revision.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Which era the revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// JSON-RPC batches are allowed only in 2025-03-26.
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// True when the revision knows the feature that appeared in `since`.
    pub fn at_least(self, since: ProtocolVersion) -> bool {
        self >= since
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a string that is not a released revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown MCP protocol version {:?}", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::parse(s).ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        ProtocolVersion::parse(&s).ok_or_else(|| serde::de::Error::custom(UnknownVersion(s.into())))
    }
}

/// The set of revisions one side is willing to speak, with the negotiation rules of both eras.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSet {
    versions: Vec<ProtocolVersion>,
}

impl Default for VersionSet {
    fn default() -> Self {
        VersionSet::all()
    }
}

impl VersionSet {
    /// Every released revision, both eras.
    pub fn all() -> Self {
        VersionSet {
            versions: ProtocolVersion::ALL.to_vec(),
        }
    }

    /// Exactly these revisions (order does not matter; duplicates are dropped).
    pub fn only(versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        let mut v: Vec<_> = versions.into_iter().collect();
        v.sort();
        v.dedup();
        VersionSet { versions: v }
    }

    /// The legacy revisions only.
    pub fn legacy_only() -> Self {
        VersionSet::only(
            ProtocolVersion::ALL
                .into_iter()
                .filter(|v| v.era() == Era::Legacy),
        )
    }

    /// The modern revisions only.
    pub fn modern_only() -> Self {
        VersionSet::only(
            ProtocolVersion::ALL
                .into_iter()
                .filter(|v| v.era() == Era::Modern),
        )
    }

    /// Whether `v` is in the set.
    pub fn contains(&self, v: ProtocolVersion) -> bool {
        self.versions.contains(&v)
    }

    /// The revisions, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = ProtocolVersion> + '_ {
        self.versions.iter().copied()
    }

    /// The newest revision of `era` in the set.
    pub fn latest(&self, era: Era) -> Option<ProtocolVersion> {
        self.iter().filter(|v| v.era() == era).max()
    }

    /// True when the set has a revision of `era`.
    pub fn speaks(&self, era: Era) -> bool {
        self.latest(era).is_some()
    }

    /// Server side of the legacy handshake: the client proposed `requested` in `initialize`.
    /// The server answers with the same revision when it supports it, otherwise with its own
    /// newest legacy revision (the client then decides whether it can go on). `None` when the
    /// server speaks no legacy revision at all.
    pub fn answer_initialize(&self, requested: &str) -> Option<ProtocolVersion> {
        match ProtocolVersion::parse(requested) {
            Some(v) if v.era() == Era::Legacy && self.contains(v) => Some(v),
            _ => self.latest(Era::Legacy),
        }
    }

    /// Client side of the legacy handshake: the server answered `answered`; the client goes on
    /// only if it speaks that revision.
    ///
    /// # Errors
    /// [`UnknownVersion`] when the answer is not a legacy revision this side speaks.
    pub fn accept_initialize_answer(
        &self,
        answered: &str,
    ) -> Result<ProtocolVersion, UnknownVersion> {
        match ProtocolVersion::parse(answered) {
            Some(v) if v.era() == Era::Legacy && self.contains(v) => Ok(v),
            _ => Err(UnknownVersion(answered.to_owned())),
        }
    }

    /// Server side of the modern era: a request names `requested` in its `_meta`.
    ///
    /// # Errors
    /// The revision list to put in the -32022 error's `data.supported`.
    pub fn check_modern(&self, requested: &str) -> Result<ProtocolVersion, Vec<&'static str>> {
        match ProtocolVersion::parse(requested) {
            Some(v) if v.era() == Era::Modern && self.contains(v) => Ok(v),
            _ => Err(self.supported_strings()),
        }
    }

    /// Client side of `server/discover`: the newest modern revision both sides speak.
    pub fn pick_from_discover<'a>(
        &self,
        server_supports: impl IntoIterator<Item = &'a str>,
    ) -> Option<ProtocolVersion> {
        server_supports
            .into_iter()
            .filter_map(ProtocolVersion::parse)
            .filter(|v| v.era() == Era::Modern && self.contains(*v))
            .max()
    }

    /// The revisions as wire strings, newest first (the order `supportedVersions` uses).
    pub fn supported_strings(&self) -> Vec<&'static str> {
        self.versions.iter().rev().map(|v| v.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<ProtocolVersion>(&json).unwrap(), v);
        }
        assert!(ProtocolVersion::parse("2025-01-01").is_none());
        assert!(serde_json::from_str::<ProtocolVersion>("\"1.0\"").is_err());
    }

    #[test]
    fn eras_and_batches() {
        assert_eq!(ProtocolVersion::V2025_11_25.era(), Era::Legacy);
        assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Modern);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert!(!ProtocolVersion::V2024_11_05.allows_batches());
    }

    #[test]
    fn legacy_negotiation() {
        let all = VersionSet::all();
        assert_eq!(
            all.answer_initialize("2025-03-26"),
            Some(ProtocolVersion::V2025_03_26)
        );
        // Unknown or modern proposals get our newest legacy revision.
        assert_eq!(
            all.answer_initialize("2099-01-01"),
            Some(ProtocolVersion::V2025_11_25)
        );
        assert_eq!(
            all.answer_initialize("2026-07-28"),
            Some(ProtocolVersion::V2025_11_25)
        );
        let old = VersionSet::only([ProtocolVersion::V2024_11_05]);
        assert_eq!(
            old.answer_initialize("2025-06-18"),
            Some(ProtocolVersion::V2024_11_05)
        );
        assert!(old.accept_initialize_answer("2025-06-18").is_err());
        assert_eq!(
            VersionSet::modern_only().answer_initialize("2025-06-18"),
            None
        );
    }

    #[test]
    fn modern_negotiation() {
        let all = VersionSet::all();
        assert_eq!(
            all.check_modern("2026-07-28"),
            Ok(ProtocolVersion::V2026_07_28)
        );
        let err = all.check_modern("2025-06-18").unwrap_err();
        assert_eq!(err[0], "2026-07-28");
        assert_eq!(
            all.pick_from_discover(["2026-07-28", "2030-01-01"]),
            Some(ProtocolVersion::V2026_07_28)
        );
        assert_eq!(
            VersionSet::legacy_only().pick_from_discover(["2026-07-28"]),
            None
        );
    }
}
