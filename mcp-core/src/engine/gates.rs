//! Which methods exist in which era, and which capability each one needs: the tables both roles
//! gate on, kept in one place so the client refuses exactly what the server would reject.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::types::methods as m;
use crate::version::{Era, ProtocolVersion};

use super::Refused;
use super::meta::has_capability;

/// Methods of the legacy era only (2024-11-05 .. 2025-11-25) that 2026-07-28 removed.
const LEGACY_ONLY: &[&str] = &[
    m::INITIALIZE,
    m::PING,
    m::LOGGING_SET_LEVEL,
    m::RESOURCES_SUBSCRIBE,
    m::RESOURCES_UNSUBSCRIBE,
];

/// Methods that appeared with 2026-07-28.
const MODERN_ONLY: &[&str] = &[m::SERVER_DISCOVER, m::SUBSCRIPTIONS_LISTEN];

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
    required_index(method).map(|i| DECLARABLE[i])
}

/// The index in [`DECLARABLE`] of the capability `method` needs.
fn required_index(method: &str) -> Option<usize> {
    Some(match method {
        m::TOOLS_LIST | m::TOOLS_CALL => 0,
        m::RESOURCES_LIST | m::RESOURCES_TEMPLATES_LIST | m::RESOURCES_READ => 1,
        m::RESOURCES_SUBSCRIBE | m::RESOURCES_UNSUBSCRIBE => 2,
        m::PROMPTS_LIST | m::PROMPTS_GET => 3,
        m::COMPLETION_COMPLETE => 4,
        m::LOGGING_SET_LEVEL => 5,
        _ => return None,
    })
}

/// Which of the capabilities a client request may need ([`required_server_capability`]) a
/// server declared, read once from its capabilities object: a lookup by path in a JSON map on
/// every request cost a hundred instructions of the usual `tools/call`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Declared(u8);

/// The paths [`required_server_capability`] names, one bit of [`Declared`] each.
const DECLARABLE: [&[&str]; 6] = [
    &["tools"],
    &["resources"],
    &["resources", "subscribe"],
    &["prompts"],
    &["completions"],
    &["logging"],
];

impl Declared {
    /// What `capabilities` declares.
    pub(crate) fn of(capabilities: &Value) -> Declared {
        let mut bits = 0;
        for (i, path) in DECLARABLE.iter().enumerate() {
            if has_capability(capabilities, path) {
                bits |= 1 << i;
            }
        }
        Declared(bits)
    }

    /// Whether a request for `method` may be served: it needs no capability, or one declared.
    pub(crate) fn allows(self, method: &str) -> bool {
        required_index(method).is_none_or(|i| self.0 & (1 << i) != 0)
    }
}

/// The client capability a server-to-client request needs (legacy era).
pub(crate) fn required_client_capability(method: &str) -> Option<&'static str> {
    Some(match method {
        m::SAMPLING_CREATE_MESSAGE => "sampling",
        m::ELICITATION_CREATE => "elicitation",
        m::ROOTS_LIST => "roots",
        _ => return None,
    })
}

/// The two facts about a server-to-client request's params that change which capability it
/// needs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RequestShape {
    /// `elicitation/create` with `mode: "url"`.
    pub url_mode: bool,
    /// `sampling/createMessage` with `tools`.
    pub with_tools: bool,
}

impl RequestShape {
    pub fn of_params(params: &Map<String, Value>) -> Self {
        RequestShape {
            url_mode: params.get("mode").and_then(Value::as_str) == Some("url"),
            with_tools: params.contains_key("tools"),
        }
    }

    pub fn of_raw(params: Option<&RawValue>) -> Self {
        #[derive(Deserialize)]
        struct Head {
            #[serde(default)]
            mode: Option<Value>,
            #[serde(default)]
            tools: Option<serde::de::IgnoredAny>,
        }
        let head = params
            .filter(|p| p.get().trim_start().starts_with('{'))
            .and_then(|p| serde_json::from_str::<Head>(p.get()).ok());
        match head {
            Some(h) => RequestShape {
                url_mode: h.mode.as_ref().and_then(Value::as_str) == Some("url"),
                with_tools: h.tools.is_some(),
            },
            None => RequestShape::default(),
        }
    }
}

/// The legacy rules for server-to-client requests, applied by the server before sending and by
/// the client on receipt: the method must exist in the negotiated revision and the client must
/// have declared the capability (and the sub-capability for URL elicitation and for sampling
/// with tools).
pub(crate) fn check_client_capability(
    method: &str,
    caps: &Value,
    version: ProtocolVersion,
    shape: RequestShape,
) -> Result<(), Refused> {
    let missing = |capability: &str| Refused::MissingCapability {
        method: method.to_owned(),
        capability: capability.to_owned(),
    };
    let too_old = |since: ProtocolVersion| {
        if version.at_least(since) {
            Ok(())
        } else {
            Err(Refused::UnsupportedByVersion {
                method: method.to_owned(),
                version,
            })
        }
    };
    let Some(cap) = required_client_capability(method) else {
        return Ok(());
    };
    if !has_capability(caps, &[cap]) {
        return Err(missing(cap));
    }
    match method {
        m::ELICITATION_CREATE => {
            too_old(ProtocolVersion::V2025_06_18)?;
            let elicitation = &caps["elicitation"];
            if shape.url_mode {
                too_old(ProtocolVersion::V2025_11_25)?;
                if !has_capability(elicitation, &["url"]) {
                    return Err(missing("elicitation.url"));
                }
            } else {
                // `elicitation: {}` is how clients before 2025-11-25 declared form mode.
                let empty = elicitation.as_object().is_some_and(|m| m.is_empty());
                if !empty && !has_capability(elicitation, &["form"]) {
                    return Err(missing("elicitation.form"));
                }
            }
        }
        m::SAMPLING_CREATE_MESSAGE
            if shape.with_tools && !has_capability(caps, &["sampling", "tools"]) =>
        {
            return Err(missing("sampling.tools"));
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is read once agrees with a lookup by path, for every method that needs one.
    #[test]
    fn declared_capabilities_allow_what_a_lookup_allows() {
        let caps = serde_json::json!({
            "tools": {},
            "resources": {"subscribe": false},
            "completions": null,
            "logging": {},
        });
        let declared = Declared::of(&caps);
        for method in [
            m::TOOLS_LIST,
            m::TOOLS_CALL,
            m::RESOURCES_LIST,
            m::RESOURCES_READ,
            m::RESOURCES_SUBSCRIBE,
            m::RESOURCES_UNSUBSCRIBE,
            m::PROMPTS_GET,
            m::COMPLETION_COMPLETE,
            m::LOGGING_SET_LEVEL,
            m::PING,
        ] {
            let by_path =
                required_server_capability(method).is_none_or(|p| has_capability(&caps, p));
            assert_eq!(declared.allows(method), by_path, "{method}");
        }
        assert!(declared.allows(m::TOOLS_CALL) && !declared.allows(m::RESOURCES_SUBSCRIBE));
        assert!(!declared.allows(m::PROMPTS_GET) && !declared.allows(m::COMPLETION_COMPLETE));
        assert!(!Declared::default().allows(m::TOOLS_CALL));
    }

    #[test]
    fn eras() {
        assert!(exists_in("ping", Era::Legacy));
        assert!(!exists_in("ping", Era::Modern));
        assert!(!exists_in("server/discover", Era::Legacy));
        assert!(exists_in("tools/call", Era::Modern));
        assert!(exists_in("vendor/custom", Era::Modern));
    }
}
