//! Which methods exist in which era, and which capability each one needs: the tables both roles
//! gate on, kept in one place so the client refuses exactly what the server would reject.

use crate::version::Era;

/// Methods of the legacy era only (2024-11-05 .. 2025-11-25) that 2026-07-28 removed.
const LEGACY_ONLY: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Methods that appeared with 2026-07-28.
const MODERN_ONLY: &[&str] = &["server/discover", "subscriptions/listen"];

/// Whether a client-to-server method exists in `era`. Methods this table does not know
/// (extensions, experiments) exist everywhere: the application decides.
pub(crate) fn exists_in(method: &str, era: Era) -> bool {
    match era {
        Era::Legacy => !MODERN_ONLY.contains(&method),
        Era::Modern => !LEGACY_ONLY.contains(&method),
    }
}

/// The server capability (as a path into `ServerCapabilities`) a client-to-server method needs;
/// `None` for methods that need none (or that the table does not know).
pub(crate) fn required_server_capability(method: &str) -> Option<&'static [&'static str]> {
    Some(match method {
        "tools/list" | "tools/call" => &["tools"],
        "resources/list" | "resources/templates/list" | "resources/read" => &["resources"],
        "resources/subscribe" | "resources/unsubscribe" => &["resources", "subscribe"],
        "prompts/list" | "prompts/get" => &["prompts"],
        "completion/complete" => &["completions"],
        "logging/setLevel" => &["logging"],
        _ => return None,
    })
}

/// The client capability a server-to-client request needs (legacy era).
pub(crate) fn required_client_capability(method: &str) -> Option<&'static str> {
    Some(match method {
        "sampling/createMessage" => "sampling",
        "elicitation/create" => "elicitation",
        "roots/list" => "roots",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras() {
        assert!(exists_in("ping", Era::Legacy));
        assert!(!exists_in("ping", Era::Modern));
        assert!(!exists_in("server/discover", Era::Legacy));
        assert!(exists_in("tools/call", Era::Modern));
        assert!(exists_in("vendor/custom", Era::Modern));
    }
}
