//! A new legacy session when the server forgot the old one (HTTP 404 to a request that carried
//! `Mcp-Session-Id`). The spec tells the client to start over with a new `initialize`; doing it
//! here, by repeating the `initialize` the client sent first, keeps it transparent: the request
//! that met the 404 was never processed by the server, so it is simply sent again in the new
//! session. What the old session held on the server side (resource subscriptions, the log
//! level) is not replayed.

use std::sync::Arc;

use mcp_core::jsonrpc::{Message, Notification, decode};
use serde_json::Value;

use super::exchange::{header, mime, with_headers};
use super::{Lease, Shared};
use crate::SESSION_HEADER;

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
                || self.base_headers(),
                |hs| {
                    with_headers(lease.agent.post(&self.url), hs)
                        .header("Accept", "application/json, text/event-stream")
                        .header("Content-Type", "application/json")
                        .send(&body[..])
                },
            )
            .map_err(|e| format!("initialize: {e}"))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(format!("initialize: HTTP {status}"));
        }
        let session = header(&resp, SESSION_HEADER);
        let answer = match mime(&resp).as_str() {
            "application/json" => resp
                .into_body()
                .into_with_config()
                .limit(self.cfg.max_message as u64)
                .read_to_vec()
                .map_err(|e| format!("initialize: {e}"))
                .and_then(|b: Vec<u8>| decode(&b).map_err(|e| e.error.message)),
            "text/event-stream" => {
                let mut rd = self.sse(resp.into_body());
                loop {
                    match rd.next_event() {
                        Ok(Some(ev)) if ev.data.is_empty() => {}
                        Ok(Some(ev)) => match decode(&ev.data) {
                            Ok(m @ (Message::Response(_) | Message::Error(_))) => break Ok(m),
                            // Notifications before the answer belong to a handshake the
                            // client does not see again.
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
        .map_err(|e| format!("initialize: {e}"))?;
        let Message::Response(r) = answer else {
            return Err("initialize: the server refused it".into());
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
            Notification::new("notifications/initialized", &serde_json::json!({}))
                .map_err(|e| e.to_string())?,
        );
        if !self.post_one_way(lease, &initialized) {
            return Err("notifications/initialized was refused".into());
        }
        self.restart_get_stream();
        Ok(())
    }
}
