//! The dashboard's boundaries (docs/security.md, "The dashboard"):
//!
//! - it binds 127.0.0.1 unless told otherwise; any other address needs the access token, and
//!   `gza serve` refuses to start there without one. The token is 32 random bytes, printed once
//!   by `gza serve --new-token`; only its SHA-256 is kept, in `~/.gza/serve-token` (mode 0600,
//!   refused when others can read it). A browser signs in once at `/login`; an HttpOnly,
//!   SameSite=Strict cookie then holds this run's session, never the token (a browser sends a
//!   host's cookies to every port of it);
//! - every request's Host header must name the bound address (or a name given with
//!   `--allow-host`): a page of another site whose name was re-pointed at 127.0.0.1 (DNS
//!   rebinding) is refused before anything is read;
//! - every request that is not GET or HEAD is state-changing: it must carry this run's CSRF token
//!   (a hidden field every form has), must not come from another site (`Origin`,
//!   `Sec-Fetch-Site`), and is refused outright under `--read-only`;
//! - every response forbids framing, sniffing, referrers to other sites, caching and any script or style not
//!   served by the dashboard itself (Content-Security-Policy), so even a text that escaped
//!   escaping could not run.
//!
//! All of it is one middleware in front of every route, so a new route cannot forget it.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::App;
use crate::cli::usage;

/// The file, in `~/.gza/`, holding the access token's hash.
pub const TOKEN_FILE_NAME: &str = "serve-token";

/// The largest request body accepted (a prompt may be up to 16 MiB).
pub const MAX_BODY: usize = crate::actions::MAX_PROMPT_BYTES + 1024 * 1024;

/// `~/.gza/serve-token`.
pub fn token_path() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".gza").join(TOKEN_FILE_NAME))
}

/// `n` random bytes as lowercase hex, from the operating system's generator.
fn random_hex(n: usize) -> anyhow::Result<String> {
    let mut bytes = vec![0u8; n];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot get random bytes from the system: {e}"))?;
    Ok(hex(&bytes))
}

use crate::text::hex;

fn sha256(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// Equal, in a time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Make a new access token, keep its hash (mode 0600, written whole, then renamed over any old
/// one) and return it: the only time it is seen.
pub fn new_token() -> anyhow::Result<String> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let path =
        token_path().ok_or_else(|| usage("HOME is not set; the token is kept in ~/.gza/"))?;
    let dir = path.parent().expect("a file in ~/.gza");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| crate::error::Error::io(dir, "create directory", e))?;
    let token = format!("gzs_{}", random_hex(32)?);
    let tmp = dir.join(format!(".{TOKEN_FILE_NAME}.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| crate::error::Error::io(&tmp, "create", e))?;
    writeln!(file, "sha256:{}", hex(&sha256(&token)))
        .and_then(|()| file.sync_all())
        .map_err(|e| crate::error::Error::io(&tmp, "write", e))?;
    std::fs::rename(&tmp, &path).map_err(|e| crate::error::Error::io(&path, "replace", e))?;
    Ok(token)
}

/// The kept hash of the access token, for serving on `bind` (beyond loopback). Refused, in one
/// line saying what to do, when there is none, when it is not a regular file of this user's, or
/// when others may read it.
pub fn load_token_hash(bind: SocketAddr) -> anyhow::Result<[u8; 32]> {
    use std::os::unix::fs::MetadataExt;
    let path =
        token_path().ok_or_else(|| usage("HOME is not set; the token is kept in ~/.gza/"))?;
    let shown = path.display();
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(usage(if bind.ip().is_loopback() {
                "--token needs an access token and there is none: run `gza serve --new-token` once, keep what it prints, then start again".to_string()
            } else {
                format!(
                    "listening on {bind}, beyond loopback, needs an access token and there is none: run `gza serve --new-token` once, keep what it prints, then start again (or bind 127.0.0.1)"
                )
            }));
        }
        Err(e) => return Err(crate::error::Error::io(&path, "read", e).into()),
    };
    if !meta.file_type().is_file() {
        return Err(usage(format!(
            "{shown} is not a regular file; remove it and run `gza serve --new-token`"
        )));
    }
    if meta.uid() != unsafe { libc::geteuid() } {
        return Err(usage(format!(
            "{shown} belongs to another user; remove it and run `gza serve --new-token`"
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(usage(format!(
            "{shown} can be read by other users (mode {:o}); run `chmod 600 {shown}`, or make a new token with `gza serve --new-token`",
            meta.mode() & 0o777
        )));
    }
    let text =
        std::fs::read_to_string(&path).map_err(|e| crate::error::Error::io(&path, "read", e))?;
    let digest = text
        .trim()
        .strip_prefix("sha256:")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| {
            usage(format!(
                "{shown} is not a token file gza wrote; run `gza serve --new-token`"
            ))
        })?;
    let mut hash = [0u8; 32];
    for (i, pair) in digest.as_bytes().chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).expect("hex digits");
        hash[i] = u8::from_str_radix(text, 16).expect("hex digits");
    }
    Ok(hash)
}

/// The settings every request is checked against.
pub struct Security {
    addr: SocketAddr,
    /// `host:port` forms the Host header may take (lowercase).
    hosts: Vec<String>,
    /// Bound to every address (0.0.0.0 or ::): any IP literal with the port is accepted too.
    wildcard: bool,
    token: Option<[u8; 32]>,
    /// The token is this run's sign-in code (the loopback default), which the address printed
    /// at start carries: a browser may sign in by opening it.
    run_code: bool,
    /// What a signed-in browser's cookie holds: 32 random bytes of this run, never the token
    /// or the code. Browsers send a host's cookies to every port of it, so whatever listens on
    /// another port of the name (another user's server, an agent's, a team's service on the
    /// same machine) that the browser visits receives the cookie: it must not be the kept token,
    /// which outlives the run.
    session: String,
    csrf: String,
}

/// How a dashboard asks who is there.
pub enum Access {
    /// Nobody is asked (`--no-token` on loopback).
    Open,
    /// The kept access token (`--token`, or any address beyond loopback): its hash.
    Kept([u8; 32]),
    /// A sign-in code made for this run and printed once, in the address that signs in.
    Run(String),
}

impl Access {
    /// A new code for this run.
    pub fn new_run_code() -> anyhow::Result<Access> {
        Ok(Access::Run(format!("gzr_{}", random_hex(24)?)))
    }
}

impl Security {
    pub fn new(
        addr: SocketAddr,
        allow_hosts: &[String],
        access: &Access,
    ) -> anyhow::Result<Security> {
        let (token, run_code) = match access {
            Access::Open => (None, false),
            Access::Kept(hash) => (Some(*hash), false),
            Access::Run(code) => (Some(sha256(code)), true),
        };
        let port = addr.port();
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() || addr.ip().is_unspecified() {
            hosts.push(format!("localhost:{port}"));
        }
        for name in allow_hosts {
            let name = name.trim().to_ascii_lowercase();
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'));
            if !valid {
                return Err(usage(format!(
                    "--allow-host {:?} is not a host name (letters, digits, dots and dashes)",
                    crate::cli::output::one_line(&name, 60)
                )));
            }
            hosts.push(format!("{name}:{port}"));
        }
        if port == 80 {
            // Browsers leave the default port out of the Host header.
            let bare: Vec<String> = hosts
                .iter()
                .filter_map(|h| h.strip_suffix(":80").map(str::to_string))
                .collect();
            hosts.extend(bare);
        }
        Ok(Security {
            addr,
            hosts,
            wildcard: addr.ip().is_unspecified(),
            token,
            run_code,
            session: format!("gzc_{}", random_hex(32)?),
            csrf: random_hex(32)?,
        })
    }

    /// Whether the token is this run's sign-in code, which may come in the address.
    pub fn signs_in_by_address(&self) -> bool {
        self.run_code
    }

    /// Where a person gets the token, for the lines that ask for it.
    pub fn where_the_token_is(&self) -> &'static str {
        if self.run_code {
            "open the sign-in address `gza serve` printed when it started (its second line)"
        } else {
            "sign in at /login with the token from `gza serve --new-token`"
        }
    }

    /// The address served, as a URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    pub fn needs_token(&self) -> bool {
        self.token.is_some()
    }

    /// This run's CSRF token, which every form carries.
    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// The value of a signed-in browser's cookie: this run's session, not the token.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// The cookie carrying this run's session (named per port, so runs on two ports keep
    /// theirs; the name does not keep another port's server from receiving it).
    pub fn cookie_name(&self) -> String {
        format!("gza_token_{}", self.addr.port())
    }

    /// Whether `host` (the Host header) names this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        if self.hosts.contains(&host) {
            return true;
        }
        // Bound to every address: a literal address of any interface, with our port.
        self.wildcard
            && host
                .parse::<SocketAddr>()
                .is_ok_and(|a| a.port() == self.addr.port())
    }

    /// Whether `presented` is the access token.
    pub fn token_ok(&self, presented: &str) -> bool {
        self.token
            .is_some_and(|hash| same(&sha256(presented.trim()), &hash))
    }

    fn signed_in(&self, headers: &HeaderMap) -> bool {
        let name = self.cookie_name();
        let from_cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(k, v)| {
                k == name
                    && self.token.is_some()
                    && same(v.trim().as_bytes(), self.session.as_bytes())
            });
        let from_header = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| self.token_ok(t));
        from_cookie || from_header
    }

    fn csrf_ok(&self, presented: &str) -> bool {
        same(presented.as_bytes(), self.csrf.as_bytes())
    }
}

/// A refusal: a status and one line of plain text saying why and what to do.
fn refuse(status: StatusCode, text: impl Into<String>) -> Response {
    let mut response = (status, text.into()).into_response();
    protect(response.headers_mut());
    response
}

/// The headers every response carries.
fn protect(headers: &mut HeaderMap) {
    let set = |headers: &mut HeaderMap, name: header::HeaderName, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    // `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` with
    // a form, and the origin check could not tell the dashboard's own forms from a sandboxed
    // frame's.
    set(headers, header::REFERRER_POLICY, "same-origin");
    if !headers.contains_key(header::CACHE_CONTROL) {
        set(headers, header::CACHE_CONTROL, "no-store");
    }
}

/// The one gate in front of every route.
pub async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let security = &app.security;
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !security.host_allowed(host) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "this dashboard answers only to {} (the request named host {:?}); a name re-pointed at it is refused against DNS rebinding; `gza serve --allow-host NAME` adds a name\n",
                security.addr,
                crate::cli::output::one_line(host, 80)
            ),
        );
    }
    let path = request.uri().path();
    let open_path = path == "/login" || path.starts_with("/assets/");
    if security.needs_token() && !open_path && !security.signed_in(request.headers()) {
        if request.method() == Method::GET || request.method() == Method::HEAD {
            let mut response = axum::response::Redirect::to("/login").into_response();
            protect(response.headers_mut());
            return response;
        }
        return refuse(
            StatusCode::UNAUTHORIZED,
            format!("sign in first: {}\n", security.where_the_token_is()),
        );
    }
    let changes_state = !matches!(*request.method(), Method::GET | Method::HEAD);
    let request = if changes_state {
        if app.read_only && path != "/login" {
            return refuse(
                StatusCode::FORBIDDEN,
                "this dashboard is read-only (gza serve --read-only): it changes nothing; use the gza command, or serve without --read-only\n",
            );
        }
        if let Some(why) = cross_site(request.headers()) {
            return refuse(StatusCode::FORBIDDEN, format!("{why}\n"));
        }
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
            Ok(bytes) => bytes,
            Err(_) => {
                return refuse(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the request is over {} MiB; put large material in a spec file\n",
                        MAX_BODY >> 20
                    ),
                );
            }
        };
        let presented = form_urlencoded_field(&bytes, "csrf")
            .or_else(|| {
                parts
                    .headers
                    .get("x-csrf-token")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            })
            .unwrap_or_default();
        if !security.csrf_ok(&presented) {
            return refuse(
                StatusCode::FORBIDDEN,
                "the form's CSRF token is missing or from another run of gza serve: reload the page and try again\n",
            );
        }
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
    };
    let started = std::time::Instant::now();
    let mut response = next.run(request).await;
    protect(response.headers_mut());
    // How long the page took to make, for the benchmarks and a browser's developer tools.
    let took = started.elapsed().as_secs_f64() * 1000.0;
    if let Ok(value) = HeaderValue::from_str(&format!("app;dur={took:.2}")) {
        response
            .headers_mut()
            .insert(header::HeaderName::from_static("server-timing"), value);
    }
    response
}

/// Why a state-changing request looks like it came from another site, if it does.
fn cross_site(headers: &HeaderMap) -> Option<String> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok())
        && !origin.eq_ignore_ascii_case(&format!("http://{host}"))
    {
        return Some(format!(
            "a request from another site ({}) is refused",
            crate::cli::output::one_line(origin, 80)
        ));
    }
    if let Some(site) = headers.get("sec-fetch-site").and_then(|s| s.to_str().ok())
        && !matches!(site, "same-origin" | "none")
    {
        return Some(format!("a {site} request is refused"));
    }
    None
}

/// The first value of `name` in an `application/x-www-form-urlencoded` body.
fn form_urlencoded_field(body: &[u8], name: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body).ok()?;
    pairs.into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn security(addr: &str, allow: &[&str]) -> Security {
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        Security::new(addr.parse().unwrap(), &allow, &Access::Open).unwrap()
    }

    #[test]
    fn the_host_must_name_the_bound_address() {
        let s = security("127.0.0.1:4920", &[]);
        assert!(s.host_allowed("127.0.0.1:4920"));
        assert!(s.host_allowed("LOCALHOST:4920"));
        for bad in [
            "evil.example:4920",
            "127.0.0.1:4921",
            "127.0.0.1",
            "",
            "localhost",
            "127.0.0.2:4920",
        ] {
            assert!(!s.host_allowed(bad), "{bad}");
        }
        let s = security("127.0.0.1:4920", &["box.lan"]);
        assert!(s.host_allowed("box.lan:4920"));
        let s = security("0.0.0.0:8080", &[]);
        assert!(s.host_allowed("192.0.2.7:8080"));
        assert!(s.host_allowed("[2001:db8::1]:8080"));
        assert!(!s.host_allowed("192.0.2.7:8081"));
        assert!(!s.host_allowed("rebound.example:8080"));
        assert!(
            Security::new(
                "127.0.0.1:1".parse().unwrap(),
                &["a b".into()],
                &Access::Open
            )
            .is_err()
        );
    }

    #[test]
    fn tokens_compare_by_hash_and_the_csrf_token_is_random() {
        let mut s = security("127.0.0.1:1", &[]);
        assert!(!s.token_ok("anything"));
        s.token = Some(sha256("gzs_secret"));
        assert!(s.token_ok("gzs_secret"));
        assert!(!s.token_ok("gzs_secreT"));
        assert_eq!(s.csrf().len(), 64);
        assert_ne!(s.csrf(), security("127.0.0.1:1", &[]).csrf());
        assert!(s.csrf_ok(&s.csrf.clone()));
        assert!(!s.csrf_ok(""));
        // A run's code: random, its hash kept, and it may come in the address.
        let Access::Run(code) = Access::new_run_code().unwrap() else {
            unreachable!()
        };
        let Access::Run(other) = Access::new_run_code().unwrap() else {
            unreachable!()
        };
        assert_ne!(code, other);
        let s = Security::new(
            "127.0.0.1:1".parse().unwrap(),
            &[],
            &Access::Run(code.clone()),
        )
        .unwrap();
        assert!(s.needs_token() && s.signs_in_by_address());
        assert!(s.token_ok(&code) && !s.token_ok(&other));
    }

    #[test]
    fn a_form_field_is_read_from_the_body() {
        assert_eq!(
            form_urlencoded_field(b"a=1&csrf=x%20y&csrf=z", "csrf").as_deref(),
            Some("x y")
        );
        assert_eq!(form_urlencoded_field(b"a=1", "csrf"), None);
    }
}
