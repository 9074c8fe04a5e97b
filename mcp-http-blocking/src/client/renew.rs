//! A new legacy session when the server forgot the old one (HTTP 404 to a request that carried
//! `Mcp-Session-Id`). The spec tells the client to start over with a new `initialize`; doing it
//! here, by repeating the `initialize` the client sent first, keeps it transparent: the request
//! that met the 404 was never processed by the server, so it is simply sent again in the new
//! session. What the old session held on the server side is set up again in the new one:
//! the resource subscriptions and the log level the client asked for (see [`Replay`]), before
//! the request is sent again.

use mcp_core::types::methods;
use std::collections::BTreeSet;
use std::sync::Arc;

use mcp_core::jsonrpc::{Message, Notification, Request, RequestId, decode};
use serde_json::{Value, json};
use ureq::http::Response;

use super::exchange::{header, mime, with_headers};
use super::headers::Shape;
use super::{Lease, Shared};
use crate::SESSION_HEADER;

/// What a legacy session holds on the server side because the client asked for it, learnt
/// from the requests as they go out. A request the server refused is replayed too, and
/// refused again: harmless, and simpler than matching answers to requests.
#[derive(Debug, Default)]
pub(super) struct Replay {
    /// `resources/subscribe` minus `resources/unsubscribe`.
    subscriptions: BTreeSet<String>,
    /// The level of the last `logging/setLevel`.
    log_level: Option<String>,
}

impl Replay {
    /// Notes a request the client sends.
    pub(super) fn note(&mut self, r: &Request) {
        let param = |k: &str| {
            r.params_value()
                .get(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        match r.method.as_str() {
            methods::RESOURCES_SUBSCRIBE => {
                if let Some(uri) = param("uri") {
                    self.subscriptions.insert(uri);
                }
            }
            methods::RESOURCES_UNSUBSCRIBE => {
                if let Some(uri) = param("uri") {
                    self.subscriptions.remove(&uri);
                }
            }
            methods::LOGGING_SET_LEVEL => self.log_level = param("level").or(self.log_level.take()),
            _ => {}
        }
    }

    /// The requests that set it up again (ids of their own, which the client never sees).
    fn requests(&self) -> Vec<Message> {
        let mut out = Vec::new();
        let mut id = 0;
        let mut push = |method: &str, params: Value| {
            id += 1;
            let rid = RequestId::String(format!("mcp-http-blocking-renewal-{id}"));
            if let Ok(r) = Request::new(rid, method, &params) {
                out.push(Message::Request(r));
            }
        };
        if let Some(level) = &self.log_level {
            push(methods::LOGGING_SET_LEVEL, json!({ "level": level }));
        }
        for uri in &self.subscriptions {
            push(methods::RESOURCES_SUBSCRIBE, json!({ "uri": uri }));
        }
        out
    }
}

impl Shared {
    /// Starts a new session in place of `stale`, unless another exchange already did.
    /// Only one renewal runs at a time; a request that met the 404 then goes out again.
    pub(super) fn renew_session(
        self: &Arc<Self>,
        lease: &Lease,
        stale: &str,
    ) -> Result<(), String> {
        let _one = self.renewing.lock().unwrap_or_else(|p| p.into_inner());
        let body = {
            let st = self.state();
            if st.closed {
                return Err("the client is closing".into());
            }
            if st.session.as_deref() != Some(stale) {
                return Ok(());
            }
            st.init_body.clone().ok_or("no initialize to repeat")?
        };
        log::info!("{} forgot the session; starting a new one", self.url);
        let resp = self
            .send_authorized(
                || self.base_headers("POST", &self.url),
                |hs| {
                    with_headers(lease.agent.post(&self.url), hs)
                        .header("Accept", "application/json, text/event-stream")
                        .header("Content-Type", "application/json")
                        .send(&body[..])
                },
            )
            .map_err(|e| format!("{}: {e}", methods::INITIALIZE))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(format!("{}: HTTP {status}", methods::INITIALIZE));
        }
        let session = header(&resp, SESSION_HEADER);
        let answer = self
            .answer_of(resp)
            .map_err(|e| format!("{}: {e}", methods::INITIALIZE))?;
        let Message::Response(r) = answer else {
            return Err(format!("{}: the server refused it", methods::INITIALIZE));
        };
        let version = r
            .result::<Value>()
            .ok()
            .and_then(|v| v.get("protocolVersion")?.as_str().map(str::to_owned));
        {
            let mut st = self.state();
            if version.is_some() && version != st.version {
                // The client negotiated features for the old revision; it cannot switch.
                return Err(format!(
                    "the new session speaks {version:?}, not {:?}",
                    st.version
                ));
            }
            st.session = session;
            st.session_lost = false;
        }
        let initialized = Message::Notification(
            Notification::new(methods::NOTIFICATION_INITIALIZED, &serde_json::json!({}))
                .map_err(|e| e.to_string())?,
        );
        if self.post_one_way(lease, &initialized).is_err() {
            return Err(format!("{} was refused", methods::NOTIFICATION_INITIALIZED));
        }
        let replay = self.state().replay.requests();
        for msg in replay {
            self.replay_one(lease, &msg);
        }
        self.restart_get_stream();
        Ok(())
    }

    /// Sends one request of a [`Replay`] in the new session; its answer only goes to the log.
    fn replay_one(&self, lease: &Lease, msg: &Message) {
        let method = msg.method().unwrap_or("?").to_owned();
        let body = msg.to_vec();
        let sent = self.send_authorized(
            || self.headers_for(&Shape::default(), "POST", &self.url),
            |hs| {
                with_headers(lease.agent.post(&self.url), hs)
                    .header("Accept", "application/json, text/event-stream")
                    .header("Content-Type", "application/json")
                    .send(&body[..])
            },
        );
        let outcome = match sent {
            Ok(resp) if resp.status().is_success() => self.answer_of(resp),
            Ok(resp) => Err(format!("HTTP {}", resp.status().as_u16())),
            Err(e) => Err(e.to_string()),
        };
        match outcome {
            Ok(Message::Response(_)) => log::debug!("{method} set up again in the new session"),
            Ok(other) => log::info!("{method} in the new session: {other:?}"),
            Err(e) => log::info!("{method} in the new session failed: {e}"),
        }
    }

    /// The answer in a response to a request the client makes for itself: a JSON body, or
    /// the first answer on an SSE stream (notifications before it belong to nobody).
    fn answer_of(&self, resp: Response<ureq::Body>) -> Result<Message, String> {
        match mime(&resp).as_str() {
            "application/json" => resp
                .into_body()
                .into_with_config()
                .limit(self.cfg.max_message as u64)
                .read_to_vec()
                .map_err(|e| e.to_string())
                .and_then(|b: Vec<u8>| decode(&b).map_err(|e| e.error.message)),
            "text/event-stream" => {
                let mut rd = self.sse(resp.into_body());
                loop {
                    match rd.next_event() {
                        Ok(Some(ev)) if ev.data.is_empty() => {}
                        Ok(Some(ev)) => match decode(&ev.data) {
                            Ok(m @ (Message::Response(_) | Message::Error(_))) => break Ok(m),
                            // Notifications before the answer: the caller never sees this
                            // request, so there is nobody to give them to.
                            Ok(_) => {}
                            Err(e) => break Err(e.error.message),
                        },
                        Ok(None) => break Err("the stream ended before the answer".into()),
                        Err(e) => break Err(e.to_string()),
                    }
                }
            }
            other => Err(format!("unexpected content type {other:?}")),
        }
    }
}
