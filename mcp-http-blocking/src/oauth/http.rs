//! The OAuth side's own HTTP calls (metadata GETs, form and JSON POSTs) on a ureq agent that
//! follows no redirects: a metadata or token endpoint that redirects is not followed blindly.

use std::time::Duration;

use serde_json::Value;
use ureq::Agent;

use super::FlowError;
use super::url::{base64, encode, form};

/// Largest metadata or token answer read.
const BODY_LIMIT: u64 = 1 << 20;

#[derive(Clone)]
pub(crate) struct Http {
    agent: Agent,
}

impl Http {
    pub(crate) fn new(timeout: Duration, user_agent: &str) -> Http {
        let agent = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(user_agent)
            .timeout_global(Some(timeout))
            .build()
            .new_agent();
        Http { agent }
    }

    /// GETs a JSON object. `Ok(None)` for a 4xx (nothing there: try the next URL), `Err` for
    /// a failed connection, a 5xx or a body that is not a JSON object. `version`: sent as
    /// `MCP-Protocol-Version` (discovery on behalf of an MCP session).
    pub(crate) fn get_json(
        &self,
        url: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, FlowError> {
        let mut rb = self.agent.get(url).header("Accept", "application/json");
        if let Some(v) = version {
            rb = rb.header(crate::VERSION_HEADER, v);
        }
        let resp = rb.call().map_err(|e| transport(url, e))?;
        let status = resp.status().as_u16();
        if (400..500).contains(&status) {
            log::debug!("GET {url}: HTTP {status}");
            return Ok(None);
        }
        if status != 200 {
            return Err(FlowError::Status {
                url: url.to_owned(),
                status,
            });
        }
        let body = read(url, resp.into_body())?;
        match serde_json::from_slice::<Value>(&body) {
            Ok(v) if v.is_object() => Ok(Some(v)),
            _ => Err(not_an_object(url)),
        }
    }

    /// POSTs a form (optionally with HTTP Basic client credentials, RFC 6749 §2.3.1) and
    /// returns the JSON answer of a 2xx; an OAuth error answer is [`FlowError::Refused`].
    pub(crate) fn post_form(
        &self,
        url: &str,
        pairs: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<Value, FlowError> {
        self.post_form_raw(url, pairs, basic, None)?
            .into_result(url)
    }

    /// POSTs a form with optional Basic credentials and an optional `DPoP` proof header, and
    /// returns the answer as it came (a DPoP nonce challenge is an error answer the caller
    /// reacts to).
    pub(crate) fn post_form_raw(
        &self,
        url: &str,
        pairs: &[(&str, &str)],
        basic: Option<(&str, &str)>,
        dpop: Option<&str>,
    ) -> Result<FormAnswer, FlowError> {
        let mut rb = self
            .agent
            .post(url)
            .header("Accept", "application/json")
            .header("Content-Type", "application/x-www-form-urlencoded");
        if let Some((id, secret)) = basic {
            let creds = base64(format!("{}:{}", encode(id), encode(secret)).as_bytes());
            rb = rb.header("Authorization", format!("Basic {creds}"));
        }
        if let Some(proof) = dpop {
            rb = rb.header("DPoP", proof);
        }
        let resp = rb
            .send(form(pairs).as_bytes())
            .map_err(|e| transport(url, e))?;
        let status = resp.status().as_u16();
        let dpop_nonce = resp
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = resp
            .into_body()
            .into_with_config()
            .limit(BODY_LIMIT)
            .read_to_vec()
            .map_err(|e| transport(url, e))?;
        Ok(FormAnswer {
            status,
            json: serde_json::from_slice::<Value>(&body).ok(),
            dpop_nonce,
        })
    }

    /// POSTs a JSON body (dynamic client registration) and returns the JSON answer of a 2xx.
    pub(crate) fn post_json(&self, url: &str, body: &Value) -> Result<Value, FlowError> {
        let resp = self
            .agent
            .post(url)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes())
            .map_err(|e| transport(url, e))?;
        let status = resp.status().as_u16();
        let body = read(url, resp.into_body())?;
        judge(url, status, serde_json::from_slice::<Value>(&body).ok())
    }

    /// GETs `url` without following a redirect and returns its `Location` (what a browser
    /// would go to next). For hosts whose "browser" is automatic, such as tests.
    pub(crate) fn location(&self, url: &str) -> Result<String, FlowError> {
        let resp = self.agent.get(url).call().map_err(|e| transport(url, e))?;
        let status = resp.status().as_u16();
        resp.headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| FlowError::Status {
                url: url.to_owned(),
                status,
            })
    }
}

fn transport(url: &str, source: ureq::Error) -> FlowError {
    FlowError::Http(crate::Error::Http {
        url: url.to_owned(),
        source,
    })
}

fn not_an_object(url: &str) -> FlowError {
    FlowError::BadAnswer {
        url: url.to_owned(),
        what: "the answer is not a JSON object",
    }
}

fn read(url: &str, body: ureq::Body) -> Result<Vec<u8>, FlowError> {
    body.into_with_config()
        .limit(BODY_LIMIT)
        .read_to_vec()
        .map_err(|e| transport(url, e))
}

/// A token endpoint's answer, before it is judged.
pub(crate) struct FormAnswer {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The body, when it is JSON.
    pub(crate) json: Option<Value>,
    /// The `DPoP-Nonce` header (RFC 9449 §8).
    #[cfg_attr(not(feature = "oauth-jwt"), allow(dead_code))]
    pub(crate) dpop_nonce: Option<String>,
}

impl FormAnswer {
    /// The OAuth `error` code of an error answer.
    #[cfg_attr(not(feature = "oauth-jwt"), allow(dead_code))]
    pub(crate) fn error(&self) -> Option<&str> {
        if (200..300).contains(&self.status) {
            return None;
        }
        self.json
            .as_ref()
            .and_then(|j| j.get("error"))
            .and_then(Value::as_str)
    }

    /// The JSON object of a 2xx; otherwise the OAuth error ([`FlowError::Refused`]) or the
    /// status.
    pub(crate) fn into_result(self, url: &str) -> Result<Value, FlowError> {
        judge(url, self.status, self.json)
    }
}

fn judge(url: &str, status: u16, json: Option<Value>) -> Result<Value, FlowError> {
    if (200..300).contains(&status) {
        return json
            .filter(Value::is_object)
            .ok_or_else(|| not_an_object(url));
    }
    let text = |k: &str| {
        json.as_ref()
            .and_then(|j| j.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Err(match text("error") {
        Some(error) => FlowError::Refused {
            url: url.to_owned(),
            error,
            description: text("error_description"),
        },
        None => FlowError::Status {
            url: url.to_owned(),
            status,
        },
    })
}
