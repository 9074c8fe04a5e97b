//! Streamable HTTP (feature `http`): [`HttpTransport`] puts the blocking HTTP client of
//! `mcp-http-blocking` behind [`Transport`], so a [`Client`] talks to a server URL the way it
//! talks to a child process. The HTTP crate knows nothing of this one; this file is the glue.

use std::process::ExitStatus;

use crossbeam_channel::{Receiver, Sender};
use mcp_core::jsonrpc::Message;
use mcp_core::transport::Incoming;
use mcp_core::version::{Era, ProtocolVersion};
pub use mcp_http_blocking::client::{
    AuthError, AuthProvider, BearerToken, Challenge, HttpClient, HttpClientConfig,
    HttpClientConfigBuilder,
};

use crate::builder::ClientBuilder;
use crate::client::Client;
use crate::error::{Closed, Error};
use crate::transport::Transport;

/// A Streamable HTTP connection to one MCP endpoint (`http://host:port/mcp`).
#[derive(Debug)]
pub struct HttpTransport {
    url: String,
    inner: HttpClient,
}

impl HttpTransport {
    /// Prepares the connection (nothing is sent before the handshake).
    ///
    /// # Errors
    /// [`Error::Transport`] (an `mcp_http_blocking::Error::InvalidUrl`) for a URL that is not
    /// `http://` / `https://`, [`Error::Io`] when a thread cannot start.
    pub fn connect(url: &str, config: HttpClientConfig) -> Result<Self, Error> {
        let inner = HttpClient::connect(url, config).map_err(|e| match e {
            mcp_http_blocking::Error::Io(e) | mcp_http_blocking::Error::Bind(e) => Error::Io(e),
            other => Error::Transport(Box::new(other)),
        })?;
        Ok(HttpTransport {
            url: url.to_owned(),
            inner,
        })
    }

    /// The legacy session id, once `initialize` has been answered.
    pub fn session_id(&self) -> Option<String> {
        self.inner.session_id()
    }
}

impl Transport for HttpTransport {
    type Item = Incoming;

    fn sender(&self) -> Sender<Message> {
        self.inner.sender()
    }

    fn receiver(&self) -> Receiver<Incoming> {
        self.inner.receiver()
    }

    /// Closes every stream and ends a legacy session with DELETE.
    fn close(&mut self) -> Result<Option<ExitStatus>, Error> {
        self.inner.close();
        Ok(None)
    }

    fn handshake_done(&mut self, era: Era, version: ProtocolVersion) {
        self.inner.set_protocol(era, version);
    }

    fn end_reason(&mut self) -> Option<Closed> {
        self.inner
            .end_reason()
            .map(|e| Closed::Broken(std::sync::Arc::new(e)))
    }

    fn server_key(&self) -> Option<String> {
        Some(self.url.clone())
    }
}

impl ClientBuilder {
    /// Connects to the Streamable HTTP endpoint `url` with default HTTP settings.
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`], plus [`Error::Transport`] for a URL that is not HTTP.
    pub fn connect_http(self, url: &str) -> Result<Client, Error> {
        self.connect_http_with(url, HttpClientConfig::default())
    }

    /// Connects to `url` with these HTTP settings (timeouts, limits, extra headers such as
    /// `Authorization`).
    ///
    /// # Errors
    /// As [`ClientBuilder::connect_http`].
    pub fn connect_http_with(self, url: &str, config: HttpClientConfig) -> Result<Client, Error> {
        self.connect(HttpTransport::connect(url, config)?)
    }
}
