//! The 2024-11-05 HTTP+SSE transport, reached the way later revisions describe for backward
//! compatibility: when `initialize` POSTed to the URL gets a 4xx other than 401 and 403 (those
//! are the authorization flow's), GET the URL; a
//! server of that era answers with an SSE stream whose `endpoint` event names where to POST.
//! From then on every message is POSTed there (and gets 202), and every answer, notification
//! and server request comes on that one stream, which is the session.

use std::sync::Arc;
use std::thread;

use mcp_core::jsonrpc::{Message, RequestId};

use super::exchange::{Cursor, PumpEnd, mime, with_headers};
use super::headers::Shape;
use super::{Lease, Shared};
use crate::Error;
use mcp_core::transport::Incoming;

impl Shared {
    /// True while no session of either kind exists yet.
    pub(super) fn may_use_old_sse(&self) -> bool {
        let st = self.state();
        st.session.is_none() && st.old_endpoint.is_none() && !st.closed
    }

    /// Opens the HTTP+SSE stream, learns the endpoint, starts relaying the stream, and sends
    /// `msg` (the `initialize`) again, to the endpoint. False when the server is not of that
    /// era (the original failure then stands).
    pub(super) fn old_sse_fallback(
        self: &Arc<Self>,
        lease: &Lease,
        id: &RequestId,
        msg: &Message,
        shape: &Shape,
    ) -> bool {
        let Some(stream) = self.lease(None, false) else {
            return false;
        };
        let resp = with_headers(
            stream.agent.get(&self.url),
            &self.base_headers("GET", &self.url),
        )
        .header("Accept", "text/event-stream")
        .call();
        let body = match resp {
            Ok(r) if r.status().as_u16() == 200 && mime(&r) == "text/event-stream" => r.into_body(),
            _ => {
                self.release(stream);
                return false;
            }
        };
        let mut rd = self.sse(body);
        let endpoint = loop {
            match rd.next_event() {
                Ok(Some(ev)) if ev.event.as_deref() == Some("endpoint") => {
                    break resolve(&self.url, String::from_utf8_lossy(&ev.data).trim());
                }
                Ok(Some(_)) => {}
                _ => break None,
            }
        };
        let Some(endpoint) = endpoint else {
            log::debug!("{}: no usable endpoint event", self.url);
            self.release(stream);
            return false;
        };
        log::debug!(
            "{} speaks HTTP+SSE (2024-11-05); posting to {endpoint}",
            self.url
        );
        self.state().old_endpoint = Some(endpoint);
        let me = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("mcp-http-sse".into())
            .spawn(move || {
                let mut cur = Cursor::new(me.cfg.default_retry);
                let end = me.pump(&mut rd, &stream, None, &Shape::default(), &mut cur);
                let cancelled = stream.cancelled();
                me.release(stream);
                let why = match end {
                    PumpEnd::Ended(why) => why,
                    PumpEnd::Invalid(why) => Some(why),
                    PumpEnd::Answered | PumpEnd::Stopped => return,
                };
                if !cancelled {
                    me.forward(Incoming::Broken(Box::new(Error::StreamEnded {
                        attempts: 0,
                        source: why.map(Box::new),
                    })));
                }
            });
        match spawned {
            Ok(t) => self.state().get_thread = Some(t),
            Err(e) => {
                self.fail(id, Error::Io(e));
                return true;
            }
        }
        self.request_exchange(lease, id, msg, shape);
        true
    }
}

/// The endpoint as an absolute URL, which must be on the same origin as `base` (a server
/// must not send the client's messages, and their credentials, elsewhere). A relative
/// endpoint is resolved against the base's path, never against its `scheme://` (a base with
/// no path has the directory `/`), and a network-path reference (`//host/...`) names its own
/// origin, like an absolute URL.
fn resolve(base: &str, endpoint: &str) -> Option<String> {
    let (scheme, rest) = base.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let base_origin = format!("{scheme}://{authority}");
    let path = rest[authority.len()..]
        .split(['?', '#'])
        .next()
        .unwrap_or("");
    let same_origin = |url: &str| -> Option<String> {
        let (s, r) = url.split_once("://")?;
        let a = r.split(['/', '?', '#']).next()?;
        (s.eq_ignore_ascii_case(scheme) && a.eq_ignore_ascii_case(authority))
            .then(|| url.to_owned())
    };
    // An absolute URL: a scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`),
    // then `://`; a `://` later on (in a query, say) does not make one.
    if let Some((s, _)) = endpoint.split_once("://") {
        let is_scheme = s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if is_scheme {
            return same_origin(endpoint);
        }
    }
    if let Some(net) = endpoint.strip_prefix("//") {
        return same_origin(&format!("{scheme}://{net}"));
    }
    if endpoint.starts_with('/') {
        return Some(format!("{base_origin}{endpoint}"));
    }
    let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
    Some(format!("{base_origin}{dir}{endpoint}"))
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn endpoints_resolve_on_the_same_origin_only() {
        let base = "http://127.0.0.1:8080/sse";
        assert_eq!(
            resolve(base, "/messages?sessionId=ab").as_deref(),
            Some("http://127.0.0.1:8080/messages?sessionId=ab")
        );
        assert_eq!(
            resolve("http://h:1/a/sse?x=1", "messages?s=1").as_deref(),
            Some("http://h:1/a/messages?s=1")
        );
        assert_eq!(
            resolve(base, "http://127.0.0.1:8080/m").as_deref(),
            Some("http://127.0.0.1:8080/m")
        );
        assert_eq!(resolve(base, "http://evil.example/m"), None);
        // A base with no path: a relative endpoint stays on its origin (it once resolved
        // against the `//` of `http://`, sending the messages to the host it named).
        assert_eq!(
            resolve("http://127.0.0.1:8080", "127.0.0.2:9/steal").as_deref(),
            Some("http://127.0.0.1:8080/127.0.0.2:9/steal")
        );
        assert_eq!(
            resolve("http://127.0.0.1:8080?x=1", "evil.example/m").as_deref(),
            Some("http://127.0.0.1:8080/evil.example/m")
        );
        // A network-path reference names its own host.
        assert_eq!(resolve(base, "//evil.example/m"), None);
        assert_eq!(
            resolve(base, "//127.0.0.1:8080/m").as_deref(),
            Some("http://127.0.0.1:8080/m")
        );
        // `://` inside a query is no scheme.
        assert_eq!(
            resolve(base, "/messages?back=http://evil.example").as_deref(),
            Some("http://127.0.0.1:8080/messages?back=http://evil.example")
        );
        assert_eq!(resolve(base, "HTTPS://127.0.0.1:8080/m"), None);
    }
}
