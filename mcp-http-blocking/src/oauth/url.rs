//! Just enough URL handling for OAuth: split an `http(s)://` URL into origin, path and query,
//! build the well-known URLs from them, and encode form and query parameters. (No URL crate:
//! the URLs here are the server's and the authorization server's, and these few operations
//! are all discovery needs.)

/// An absolute `http://` or `https://` URL, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `http` or `https`, lower-case.
    pub scheme: String,
    /// `host[:port]`, host lower-cased, default port dropped.
    pub authority: String,
    /// The path, `""` when there is none (never just `/`).
    pub path: String,
    /// The query without `?`, if any.
    pub query: Option<String>,
}

impl Url {
    /// Parses `s`; None when it is not an absolute http(s) URL. A fragment is dropped.
    pub fn parse(s: &str) -> Option<Url> {
        let (scheme, rest) = s.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.split('#').next().unwrap_or("");
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let mut authority = authority.to_ascii_lowercase();
        let default_port = if scheme == "http" { ":80" } else { ":443" };
        if let Some(a) = authority.strip_suffix(default_port) {
            authority = a.to_owned();
        }
        let (path, query) = match tail.split_once('?') {
            Some((p, q)) => (p, Some(q.to_owned())),
            None => (tail, None),
        };
        let path = if path == "/" { "" } else { path };
        Some(Url {
            scheme,
            authority,
            path: path.to_owned(),
            query,
        })
    }

    /// `scheme://authority`.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// The URL without query or fragment (the form a `resource` parameter takes).
    pub fn without_query(&self) -> String {
        format!("{}{}", self.origin(), self.path)
    }

    /// `origin/.well-known/{name}{path}`: RFC 8414 / RFC 9728 path insertion (with no path,
    /// the root well-known URL).
    pub fn well_known_inserted(&self, name: &str) -> String {
        format!(
            "{}/.well-known/{name}{}",
            self.origin(),
            self.path.trim_end_matches('/')
        )
    }

    /// `origin{path}/.well-known/{name}`: OpenID Connect Discovery's path appending.
    pub fn well_known_appended(&self, name: &str) -> String {
        format!(
            "{}{}/.well-known/{name}",
            self.origin(),
            self.path.trim_end_matches('/')
        )
    }

    /// True when `resource` (a protected resource identifier) covers this URL: same origin,
    /// and this path is the resource's path or lies under it.
    ///
    /// Both paths are normalised first (see `normalize_path`): compared as written,
    /// `/x/../admin` or `/x/%2e%2e/admin` would pass for a path under `/x` although the server
    /// resolves them to `/admin`, and `/%7Ex` would not match `/~x` although it is the same path.
    pub fn is_covered_by(&self, resource: &Url) -> bool {
        if self.origin() != resource.origin() {
            return false;
        }
        let path = normalize_path(&self.path);
        let base = normalize_path(&resource.path);
        let base = base.trim_end_matches('/');
        path == base
            || path
                .strip_prefix(base)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// A path in RFC 3986's normal form, for comparing paths (§6.2.2): escapes of unreserved
/// characters decoded and the others' hex digits upper-cased (§6.2.2.1-2), then `.` and `..`
/// segments removed (§5.2.4). Decoding comes first, so `%2e%2e` is a `..` segment, as a server
/// that decodes before resolving takes it. An escaped `/` stays escaped: it is not a separator.
pub(crate) fn normalize_path(path: &str) -> String {
    let b = path.as_bytes();
    let mut decoded = String::with_capacity(path.len());
    let mut i = 0;
    while i < b.len() {
        let hex = (b[i] == b'%')
            .then(|| path.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) if v.is_ascii_alphanumeric() || b"-._~".contains(&v) => {
                decoded.push(char::from(v));
                i += 3;
            }
            Some(v) => {
                decoded.push_str(&format!("%{v:02X}"));
                i += 3;
            }
            None if b[i] == b'%' => {
                // A `%` that starts no escape stays as it is.
                decoded.push('%');
                i += 1;
            }
            None => {
                // Plain text: copy up to the next `%` (i is on a character boundary).
                let end = path[i..].find('%').map_or(path.len(), |e| i + e);
                decoded.push_str(&path[i..end]);
                i = end;
            }
        }
    }
    remove_dot_segments(&decoded)
}

/// RFC 3986 §5.2.4, with the input buffer as a cursor into `path` (the rewrites of `/./` and
/// `/../` to `/` only ever shorten it from the front).
fn remove_dot_segments(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut input = path;
    fn pop_segment(out: &mut String) {
        let cut = out.rfind('/').unwrap_or(0);
        out.truncate(cut);
    }
    while !input.is_empty() {
        if let Some(rest) = input.strip_prefix("../") {
            input = rest;
        } else if let Some(rest) = input.strip_prefix("./") {
            input = rest;
        } else if input.starts_with("/./") {
            input = &input[2..];
        } else if input == "/." {
            input = "/";
        } else if input.starts_with("/../") {
            input = &input[3..];
            pop_segment(&mut out);
        } else if input == "/.." {
            input = "/";
            pop_segment(&mut out);
        } else if input == "." || input == ".." {
            input = "";
        } else {
            let end = input[1..].find('/').map_or(input.len(), |e| e + 1);
            out.push_str(&input[..end]);
            input = &input[end..];
        }
    }
    out
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `a=1&b=2` from pairs, each side percent-encoded (valid both as a query and as an
/// `application/x-www-form-urlencoded` body).
pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes `%XX` escapes and `+` (as a space); invalid escapes stay as they are.
pub fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits a query string or form body into decoded pairs.
pub fn parse_form(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

/// Appends a query string to a URL that may already have one.
pub fn with_query(url: &str, query: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{query}")
}

pub use mcp_core::base64::{base64, base64url};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_well_known() {
        let u = Url::parse("HTTP://LocalHost:80/tenant1/?x=1#f").unwrap();
        assert_eq!(u.origin(), "http://localhost");
        assert_eq!(u.path, "/tenant1/");
        assert_eq!(u.query.as_deref(), Some("x=1"));
        assert_eq!(
            u.well_known_inserted("oauth-authorization-server"),
            "http://localhost/.well-known/oauth-authorization-server/tenant1"
        );
        assert_eq!(
            u.well_known_appended("openid-configuration"),
            "http://localhost/tenant1/.well-known/openid-configuration"
        );
        let root = Url::parse("https://as.example:8443").unwrap();
        assert_eq!(root.path, "");
        assert_eq!(
            root.well_known_inserted("oauth-authorization-server"),
            "https://as.example:8443/.well-known/oauth-authorization-server"
        );
        assert!(Url::parse("ftp://x/").is_none());
        assert!(Url::parse("http://user@x/").is_none());
        assert!(Url::parse("/relative").is_none());
    }

    #[test]
    fn resource_coverage() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        for ok in [
            "http://localhost:3000",
            "http://localhost:3000/",
            "http://localhost:3000/mcp",
        ] {
            assert!(server.is_covered_by(&Url::parse(ok).unwrap()), "{ok}");
        }
        for bad in [
            "https://evil.example.com/mcp",
            "http://localhost:3001/mcp",
            "http://localhost:3000/mc",
            "http://localhost:3000/mcp/other",
        ] {
            assert!(!server.is_covered_by(&Url::parse(bad).unwrap()), "{bad}");
        }
    }

    #[test]
    fn coverage_normalises_dot_segments_and_escapes() {
        let scope = Url::parse("https://a/x").unwrap();
        let covered = |u: &str| Url::parse(u).unwrap().is_covered_by(&scope);
        for escape in [
            "https://a/x/../admin",
            "https://a/x/%2e%2e/admin",
            "https://a/x/%2E%2E/admin",
            "https://a/x/.%2e/admin",
            "https://a/x/./../admin",
            "https://a/x/y/../../admin",
            "https://a/x/..",
            "https://a/x/%2e%2e",
            "https://a/x/../x2",
            "https://a/x%2Fy",
        ] {
            assert!(!covered(escape), "{escape}");
        }
        for inside in [
            "https://a/x",
            "https://a/x/",
            "https://a/x/y",
            "https://a/x/./y",
            "https://a/x/y/../z",
            "https://a/x/%2e/y",
            "https://a/other/../x/y",
            "https://a/%78/y",
        ] {
            assert!(covered(inside), "{inside}");
        }
        // Unreserved escapes compare equal to the characters, in either direction.
        let tilde = Url::parse("https://a/~me").unwrap();
        assert!(
            Url::parse("https://a/%7Eme/t")
                .unwrap()
                .is_covered_by(&tilde)
        );
        assert!(
            Url::parse("https://a/~me")
                .unwrap()
                .is_covered_by(&Url::parse("https://a/%7eme").unwrap())
        );
        // A scope written with dot segments or escapes means its resolved path.
        let dotted = Url::parse("https://a/x/../y/%2E/").unwrap();
        assert!(Url::parse("https://a/y/z").unwrap().is_covered_by(&dotted));
        assert!(!Url::parse("https://a/x/z").unwrap().is_covered_by(&dotted));
    }

    #[test]
    fn path_normal_form() {
        assert_eq!(normalize_path("/a/b/c/./../../g"), "/a/g");
        assert_eq!(normalize_path("mid/content=5/../6"), "mid/6");
        assert_eq!(normalize_path("/%7e%41%2f%2fé%zz%"), "/~A%2F%2Fé%zz%");
        assert_eq!(normalize_path("/%2e%2E/%2e"), "/");
        assert_eq!(normalize_path("/../../a"), "/a");
        assert_eq!(normalize_path(""), "");
    }

    #[test]
    fn encodings() {
        assert_eq!(encode("a b/c~"), "a%20b%2Fc~");
        assert_eq!(decode("a+b%2Fc%zz%"), "a b/c%zz%");
        assert_eq!(
            parse_form("code=x%20y&state=s&flag"),
            [
                ("code".into(), "x y".into()),
                ("state".into(), "s".into()),
                ("flag".into(), String::new())
            ]
        );
        assert_eq!(with_query("http://a/b?x=1", "y=2"), "http://a/b?x=1&y=2");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }
}
