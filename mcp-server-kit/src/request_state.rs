//! `requestState` for the 2026-07-28 era.
//!
//! In that era a server cannot call the client back in the middle of a request. A handler that
//! needs input makes the server answer `InputRequiredResult`; the client gathers the answers and
//! retries with them plus the `requestState` the server handed out. The state holds the answers
//! given so far, is bound to the method and arguments of its request and to who made it (the
//! requester the transport's authorization step names, `mcp_core::service::requester`), and
//! expires.
//!
//! Where it lives depends on the transport:
//! - **Sealed**, when the session has the transport's sealer (`SessionInfo::sealer`; the HTTP
//!   transport always gives one): a 2026-07-28 HTTP exchange is a session of its own, and the
//!   retry may reach another instance, so the state travels with the client. It is then
//!   attacker-controlled, and holds the user's answers, which the client has no business
//!   reading back: the sealer (an AEAD) keeps it secret and tamper-proof, and binds it to its
//!   request and its requester through the associated data, so a state is never accepted for
//!   another request, nor from another user who got hold of it (it holds the first user's
//!   answers, which the retry would otherwise act on in the second user's name).
//! - **Kept in the session** otherwise (stdio, where one session is one client): the client
//!   gets a handle (`local:N`) to a state that never leaves the server, and the kit needs no
//!   cryptography at all.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::Context;

/// The prefix of a handle to a state kept in the session.
const LOCAL_STATE: &str = "local:";

/// What a state holds.
#[derive(Serialize, Deserialize)]
struct State {
    v: u8,
    /// The request it belongs to, for a state kept in the session (a sealed one is bound by
    /// the sealer's associated data instead, and does not carry it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    fp: String,
    /// Expiry, in seconds since the Unix epoch.
    exp: u64,
    answers: Map<String, Value>,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

/// What a sealed state is bound to: its purpose, its requester (JSON text, `null` without
/// authorization) and its request, each ended by a NUL byte, which JSON text never holds
/// unescaped: no requester and binding can be read as another pair.
fn context_of(ctx: &Context, binding: &str) -> Vec<u8> {
    let who = match &ctx.call.auth {
        Some(claims) => mcp_core::service::requester(claims).to_string(),
        None => "null".to_owned(),
    };
    let mut c = b"requestState\0".to_vec();
    c.extend_from_slice(who.as_bytes());
    c.push(0);
    c.extend_from_slice(binding.as_bytes());
    c
}

/// The answers so far as a `requestState` for the request `binding` names (its method and
/// arguments), good for `ttl`. `None` when it cannot be sealed (no random source): the
/// caller then fails closed rather than hand out a state nobody can open.
pub(crate) fn seal(
    ctx: &Context,
    binding: &Value,
    answers: Map<String, Value>,
    ttl: Duration,
) -> Option<String> {
    let binding = binding.to_string();
    let link = &ctx.call.link;
    let sealer = link.sealer();
    let state = State {
        v: 2,
        fp: if sealer.is_some() {
            String::new()
        } else {
            binding.clone()
        },
        exp: unix_now() + ttl.as_secs(),
        answers,
    };
    let payload = serde_json::to_vec(&state).ok()?;
    match sealer {
        Some(s) => s.seal(&payload, &context_of(ctx, &binding)),
        None => Some(format!("{LOCAL_STATE}{}", link.stash(payload))),
    }
}

/// The answers a `requestState` carries, or `None` when it is not one this server issued
/// for the request `binding` names, or has expired.
pub(crate) fn open(ctx: &Context, state: &str, binding: &Value) -> Option<Map<String, Value>> {
    let binding = binding.to_string();
    let link = &ctx.call.link;
    let payload = match (link.sealer(), state.strip_prefix(LOCAL_STATE)) {
        (Some(s), None) => s.open(state, &context_of(ctx, &binding))?,
        (None, Some(handle)) => link.unstash(handle)?,
        // A handle where states are sealed, or a sealed state where they are kept: neither
        // was issued here.
        _ => return None,
    };
    let s: State = serde_json::from_slice(&payload).ok()?;
    let bound = link.sealer().is_some() || s.fp == binding;
    (s.v == 2 && bound && s.exp >= unix_now()).then_some(s.answers)
}
