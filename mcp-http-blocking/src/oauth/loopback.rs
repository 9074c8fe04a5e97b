//! The browser step for a program whose user signs in with a real browser: a redirect
//! listener on the loopback interface (RFC 8252 §7.3), so the authorization server can send
//! the browser back to the program with the code.
//!
//! The listener binds 127.0.0.1 only, answers the one redirect path, reads at most a few KiB of
//! each request within a few seconds, and echoes nothing of what it reads into its page. The
//! `state` of the redirect is checked by the provider, as for any browser step.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use crossbeam_channel::bounded;

use super::Browser;
use super::FlowError;

/// The redirect path.
const PATH: &str = "/callback";
/// Largest request head read from the browser.
const HEAD_LIMIT: usize = 8 * 1024;
/// Longest wait for one connection's request head.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// A listener on `http://127.0.0.1:PORT/callback` for the authorization code grant.
///
/// ```no_run
/// use std::time::Duration;
/// use mcp_http_blocking::oauth::{LoopbackRedirect, OAuthConfig, OAuthProvider};
///
/// let redirect = LoopbackRedirect::bind()?;
/// let browser = redirect.browser(Duration::from_secs(300), |url| {
///     // Start the user's browser here; printing the URL is the portable fallback.
///     eprintln!("Sign in at {url}");
///     Ok(())
/// });
/// let cfg = OAuthConfig::authorization_code(redirect.redirect_uri(), browser).build();
/// let auth = OAuthProvider::new(cfg);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LoopbackRedirect {
    listener: Arc<TcpListener>,
    addr: SocketAddr,
    uri: String,
}

impl LoopbackRedirect {
    /// Binds 127.0.0.1 on a port the system picks (RFC 8252 asks authorization servers to
    /// accept any port for a loopback redirect URI).
    ///
    /// # Errors
    /// When the socket cannot be bound.
    pub fn bind() -> io::Result<LoopbackRedirect> {
        LoopbackRedirect::bind_port(0)
    }

    /// Binds 127.0.0.1 on `port`, for an authorization server that wants the exact
    /// registered redirect URI.
    ///
    /// # Errors
    /// When the socket cannot be bound (the port is taken, say).
    pub fn bind_port(port: u16) -> io::Result<LoopbackRedirect> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        let addr = listener.local_addr()?;
        Ok(LoopbackRedirect {
            listener: Arc::new(listener),
            addr,
            uri: format!("http://{addr}{PATH}"),
        })
    }

    /// The redirect URI to register and to put in the configuration.
    pub fn redirect_uri(&self) -> &str {
        &self.uri
    }

    /// The browser step: calls `open` with the authorization URL (to start the user's
    /// browser, or print the URL), then waits up to `timeout` for the browser to come back to
    /// the redirect URI, and returns that full URL.
    pub fn browser(
        &self,
        timeout: Duration,
        open: impl Fn(&str) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync
        + 'static,
    ) -> Browser {
        let me = self.clone();
        Arc::new(move |url: &str| {
            open(url)?;
            Ok(me.wait(timeout)?)
        })
    }

    /// Accepts connections on another thread until the redirect arrives; on timeout, wakes
    /// that thread with a connection of its own so it ends.
    fn wait(&self, timeout: Duration) -> Result<String, FlowError> {
        let (tx, rx) = bounded(1);
        let done = Arc::new(AtomicBool::new(false));
        let (listener, done2, addr) = (self.listener.clone(), done.clone(), self.addr);
        let acceptor = thread::Builder::new()
            .name("mcp-oauth-redirect".into())
            .spawn(move || {
                while !done2.load(Ordering::SeqCst) {
                    let stream = match listener.accept() {
                        Ok((stream, _)) => stream,
                        Err(e) => {
                            let _ = tx.send(Err(FlowError::Redirect(e)));
                            return;
                        }
                    };
                    if done2.load(Ordering::SeqCst) {
                        return;
                    }
                    if let Some(target) = answer(stream) {
                        let _ = tx.send(Ok(format!("http://{addr}{target}")));
                        return;
                    }
                }
            })
            .map_err(FlowError::Redirect)?;
        let got = rx.recv_timeout(timeout);
        done.store(true, Ordering::SeqCst);
        match got {
            Ok(result) => result,
            Err(_) => {
                // The accepting thread sees the flag with this connection and ends. It is
                // waited for: left running, it would share the listener with the next wait's
                // thread and could take (and drop) the redirect meant for that one.
                if TcpStream::connect_timeout(&self.addr, READ_TIMEOUT).is_ok() {
                    let _ = acceptor.join();
                }
                Err(FlowError::Redirect(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("nobody came back to {} within {timeout:?}", self.uri),
                )))
            }
        }
    }
}

/// Reads one request; answers it; returns its target when it is the redirect.
fn answer(mut stream: TcpStream) -> Option<String> {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(READ_TIMEOUT));
    let head = read_head(&mut stream)?;
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    let path = target.split('?').next().unwrap_or("");
    let hit = method == "GET" && path == PATH && target.len() > path.len();
    let (status, page) = if hit {
        (
            "200 OK",
            "<!doctype html><title>Signed in</title><p>Signed in. You can close this tab.</p>",
        )
    } else {
        ("404 Not Found", "<!doctype html><title>Not found</title>")
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.flush();
    hit.then(|| target.to_owned())
}

/// The request head (up to the blank line), within [`HEAD_LIMIT`] bytes.
fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        if buf.len() >= HEAD_LIMIT {
            break;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    String::from_utf8(buf).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    /// A browser's GET: the status line it got back.
    fn get(uri: &str) -> String {
        let rest = uri.strip_prefix("http://").unwrap();
        let (host, target) = rest.split_at(rest.find('/').unwrap());
        let mut s = TcpStream::connect(host).unwrap();
        write!(s, "GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let mut line = String::new();
        io::BufReader::new(s).read_line(&mut line).unwrap();
        line.trim_end().to_owned()
    }

    #[test]
    fn returns_the_redirect_and_ignores_other_paths() {
        let r = LoopbackRedirect::bind().unwrap();
        assert!(r.redirect_uri().starts_with("http://127.0.0.1:"));
        assert!(r.redirect_uri().ends_with("/callback"));
        let uri = r.redirect_uri().to_owned();
        let browser = r.browser(Duration::from_secs(10), move |auth_url| {
            assert_eq!(auth_url, "https://as.example/authorize?x=1");
            let uri = uri.clone();
            thread::spawn(move || {
                let base = uri.trim_end_matches("/callback");
                assert!(get(&format!("{base}/favicon.ico")).contains("404"));
                assert!(get(&format!("{uri}?code=c1&state=s1")).contains("200"));
            });
            Ok(())
        });
        let back = browser("https://as.example/authorize?x=1").unwrap();
        assert_eq!(back, format!("{}?code=c1&state=s1", r.redirect_uri()));
    }

    #[test]
    fn gives_up_after_the_timeout_and_can_wait_again() {
        let r = LoopbackRedirect::bind().unwrap();
        let browser = r.browser(Duration::from_millis(100), |_| Ok(()));
        let e = browser("https://as.example/authorize").unwrap_err();
        assert!(e.to_string().contains("within"), "{e}");
        // The listener is still there for the next sign-in.
        let uri = r.redirect_uri().to_owned();
        let browser = r.browser(Duration::from_secs(10), move |_| {
            let uri = uri.clone();
            thread::spawn(move || get(&format!("{uri}?code=c2&state=s2")));
            Ok(())
        });
        assert!(browser("x").unwrap().ends_with("code=c2&state=s2"));
    }

    #[test]
    fn an_open_that_fails_fails_the_step() {
        let r = LoopbackRedirect::bind().unwrap();
        let browser = r.browser(Duration::from_secs(10), |_| {
            Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no browser").into())
        });
        // The host's own error comes back, not a description of it.
        let e = browser("x").unwrap_err();
        let io = e.downcast_ref::<std::io::Error>().expect("the io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    }
}
