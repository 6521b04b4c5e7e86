//! Where a project's records live: the SQLite file in `.gza/` (the default), or a PostgreSQL
//! database a team shares (`database:` setting or `GZA_DATABASE_URL`), and the project's name in
//! it (`project:` setting, else the normalised URL of the repository's `origin`).
//!
//! A connection is given as a URL (`postgres://user@host:5432/db?sslmode=require`) or as
//! libpq's `key=value` words (`host=db dbname=gza service=team`). A password never comes from a
//! settings file: [`DatabaseSpec::parse`] refuses one there; it comes from the environment
//! (`PGPASSWORD`, or `GZA_DATABASE_URL`), `~/.pgpass` or a service file, as with libpq.

use std::path::{Path, PathBuf};

/// The environment variable naming the database; it overrides the `database` setting.
pub const URL_ENV: &str = "GZA_DATABASE_URL";

/// A connection to PostgreSQL as written, before the environment, service file and `.pgpass`
/// fill in what it leaves out (the store does that when it connects).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabaseSpec {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub dbname: Option<String>,
    /// Only ever from the environment (`GZA_DATABASE_URL`).
    pub password: Option<String>,
    pub sslmode: Option<String>,
    pub sslrootcert: Option<PathBuf>,
    /// A client certificate and its key, for a server that asks for one (`hostssl … cert`).
    pub sslcert: Option<PathBuf>,
    pub sslkey: Option<PathBuf>,
    pub service: Option<String>,
    pub connect_timeout: Option<u64>,
    pub application_name: Option<String>,
}

/// The TLS modes gza knows: `disable`, `prefer` (TLS when the server offers it), `require`
/// and `verify-full` (TLS, the certificate checked against the system's roots or
/// `sslrootcert`, and the host name). `verify-ca` is taken as `verify-full`: gza always checks
/// the name.
pub const SSL_MODES: [&str; 5] = ["disable", "prefer", "require", "verify-ca", "verify-full"];

impl DatabaseSpec {
    /// Parse a connection URL or `key=value` words. `from_file` names the settings file it
    /// came from: a password there is refused, however malformed the rest of the value is.
    /// Every error that echoes any part of the value echoes it through [`mask`].
    pub fn parse(text: &str, from_file: Option<&Path>) -> Result<DatabaseSpec, String> {
        let text = text.trim();
        // Belt and braces: a message that echoes a piece of the value out of its context
        // (`sslmode=…` holding what `password=` holds) still never shows the password.
        Self::parse_unredacted(text, from_file).map_err(|e| redact(&e, text))
    }

    fn parse_unredacted(text: &str, from_file: Option<&Path>) -> Result<DatabaseSpec, String> {
        // First, before anything can fail on the rest: the one line a password in a settings
        // file gets, whatever else is wrong with the value.
        if let Some(file) = from_file
            && holds_password(text)
        {
            return Err(password_in_file(file));
        }
        let scheme = text
            .split_once("://")
            .map(|(scheme, _)| scheme)
            .filter(|s| !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == '='));
        let spec = match scheme {
            Some(s)
                if s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql") =>
            {
                parse_url(text)?
            }
            Some(s) => {
                return Err(format!(
                    "{:?} is not a PostgreSQL connection: a URL starts with postgres:// or postgresql://, not {s}://",
                    mask(text)
                ));
            }
            None if looks_like_words(text) => parse_words(text)?,
            None => {
                return Err(format!(
                    "{:?} is not a PostgreSQL connection: write a URL (postgres://user@host/db) or key=value words (host=… dbname=…), or `sqlite`",
                    mask(text)
                ));
            }
        };
        if let Some(mode) = &spec.sslmode
            && !SSL_MODES.contains(&mode.as_str())
        {
            return Err(format!(
                "sslmode={} is not one gza knows; use one of {}",
                mask(mode),
                SSL_MODES.join(", ")
            ));
        }
        if spec.password.is_some()
            && let Some(file) = from_file
        {
            return Err(password_in_file(file));
        }
        Ok(spec)
    }

    /// The connection as a person may see it: never the password.
    pub fn display(&self) -> String {
        let mut out = String::from("postgres://");
        if let Some(user) = &self.user {
            out.push_str(user);
            out.push('@');
        }
        match &self.host {
            Some(h) if h.starts_with('/') => out.push_str(&format!("[{h}]")),
            Some(h) => out.push_str(h),
            None => {}
        }
        if let Some(port) = self.port {
            out.push_str(&format!(":{port}"));
        }
        out.push('/');
        if let Some(db) = &self.dbname {
            out.push_str(db);
        }
        let mut query = Vec::new();
        if let Some(s) = &self.service {
            query.push(format!("service={s}"));
        }
        if let Some(m) = &self.sslmode {
            query.push(format!("sslmode={m}"));
        }
        if !query.is_empty() {
            out.push('?');
            out.push_str(&query.join("&"));
        }
        out
    }

    fn set(&mut self, key: &str, value: String) -> Result<(), String> {
        match key {
            "host" | "hostaddr" => self.host = Some(value),
            "port" => {
                self.port = Some(
                    value
                        .parse()
                        .map_err(|_| format!("port={} is not a port number", mask(&value)))?,
                )
            }
            "user" => self.user = Some(value),
            "dbname" => self.dbname = Some(value),
            "password" => self.password = Some(value),
            "sslmode" => self.sslmode = Some(value),
            "sslrootcert" => self.sslrootcert = Some(PathBuf::from(value)),
            "sslcert" => self.sslcert = Some(PathBuf::from(value)),
            "sslkey" => self.sslkey = Some(PathBuf::from(value)),
            "service" => self.service = Some(value),
            "connect_timeout" => {
                self.connect_timeout = Some(value.parse().map_err(|_| {
                    format!(
                        "connect_timeout={} is not a number of seconds",
                        mask(&value)
                    )
                })?)
            }
            "application_name" => self.application_name = Some(value),
            other => {
                return Err(format!(
                    "{} is not a connection parameter gza reads (host, port, user, dbname, sslmode, sslrootcert, sslcert, sslkey, service, connect_timeout, application_name)",
                    mask(other)
                ));
            }
        }
        Ok(())
    }
}

/// The one line a password in a settings file gets.
fn password_in_file(file: &Path) -> String {
    format!(
        "the database setting in {} holds a password; settings files are read by (and often committed for) others: remove it and give it in ~/.pgpass, a service file (service=…), PGPASSWORD or GZA_DATABASE_URL",
        file.display()
    )
}

/// Where a database value (a URL, `key=value` words, or anything a person wrote instead)
/// holds a password, as byte ranges of `text`: the password of a URL's userinfo (from the
/// first `:` after `scheme://`, or after the start when there is no scheme, to the last `@`:
/// however malformed, nothing between them is shown), and the value of every `password=`
/// (any case, spaces around `=`, quoted or not; in words or a URL's query).
/// A value of words with no `://` in it has no userinfo.
fn secret_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = lower[from..].find("password") {
        let mut i = from + found + "password".len();
        from = i;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        if bytes.get(i) == Some(&b'\'') {
            i += 1;
            while i < bytes.len() && bytes[i] != b'\'' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
        } else {
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'&' {
                i += 1;
            }
        }
        spans.push(start..i);
        from = i.max(from);
    }
    // libpq's words have no userinfo (an `@` and a `:` in their values are just text), unless
    // a URL is among them.
    let start = match text.find("://") {
        Some(i) => i + 3,
        None if looks_like_words(text) => return spans,
        None => 0,
    };
    if let Some(at) = text[start..].rfind('@').map(|i| start + i)
        && let Some(colon) = text[start..at].find(':').map(|i| start + i)
    {
        spans.push(colon + 1..at);
    }
    spans
}

/// Whether a database value holds a password anywhere, however malformed it is.
fn holds_password(text: &str) -> bool {
    secret_spans(text).iter().any(|span| !span.is_empty())
}

/// A database value as it may be shown (in an error, `gza config`, a log): every password in
/// it, as [`secret_spans`] finds them, replaced by `***`. The one function every message that
/// echoes a database value, or a piece of one, goes through.
pub fn mask(text: &str) -> String {
    let mut spans = secret_spans(text);
    spans.sort_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        if span.end <= at {
            continue;
        }
        let start = span.start.max(at);
        // Spans are found at ASCII delimiters, so these are character boundaries.
        out.push_str(&text[at..start]);
        out.push_str("***");
        at = span.end;
    }
    out.push_str(&text[at..]);
    redact(&out, text)
}

/// `message` with every password `value` holds (of four characters or more: a shorter one
/// would blot out ordinary words) replaced by `***` wherever it appears.
fn redact(message: &str, value: &str) -> String {
    secret_spans(value)
        .into_iter()
        .map(|span| value[span].trim_matches('\'').to_string())
        .filter(|secret| secret.len() >= 4)
        .fold(message.to_string(), |m, secret| m.replace(&secret, "***"))
}

/// Whether a value that is not a URL is libpq's words: it starts with `key=` (a key of letters,
/// digits and `_`, spaces allowed before `=`).
fn looks_like_words(text: &str) -> bool {
    let key_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    key_end > 0 && text[key_end..].trim_start().starts_with('=')
}

fn parse_url(text: &str) -> Result<DatabaseSpec, String> {
    // A space is no part of a URL: what follows it (`… password=…`) would otherwise be taken
    // into the database's name, silently.
    if text.contains(char::is_whitespace) {
        return Err("the database URL holds a space; percent-encode it (%20), or write key=value words (host=… dbname=…) instead of a URL".into());
    }
    let url = url::Url::parse(text).map_err(|e| format!("the database URL is not valid: {e}"))?;
    // PostgreSQL's URLs have no fragment: what follows `#` would be silently dropped.
    if url.fragment().is_some() {
        return Err("the database URL holds a fragment (#…), which PostgreSQL URLs do not have; percent-encode a # in a name or password as %23".into());
    }
    let mut spec = DatabaseSpec::default();
    if !url.username().is_empty() {
        spec.user = Some(percent_decode(url.username()));
    }
    if let Some(p) = url.password() {
        spec.password = Some(percent_decode(p));
    }
    if let Some(host) = url.host_str().filter(|h| !h.is_empty()) {
        spec.host = Some(percent_decode(
            host.trim_start_matches('[').trim_end_matches(']'),
        ));
    }
    spec.port = url.port();
    let path = url.path().trim_start_matches('/');
    if !path.is_empty() {
        spec.dbname = Some(percent_decode(path));
    }
    for (k, v) in url.query_pairs() {
        spec.set(&k, v.into_owned())?;
    }
    Ok(spec)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// libpq's `key=value` words; a value may be single-quoted, with `\'` and `\\` inside.
fn parse_words(text: &str) -> Result<DatabaseSpec, String> {
    let mut spec = DatabaseSpec::default();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!("{:?} has no value (write key=value)", mask(&key)));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => {
                        return Err(format!("the value of {} has no closing quote", mask(&key)));
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                value.push(c);
            }
        }
        spec.set(&key, value)?;
    }
    Ok(spec)
}

/// Where a project's records are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// The SQLite file (`.gza/gza.db`).
    Sqlite(PathBuf),
    /// A shared PostgreSQL database, and the project's name in it.
    Postgres {
        spec: Box<DatabaseSpec>,
        project: String,
    },
}

impl Database {
    /// Where the records are, as a person may see it (no password).
    pub fn describe(&self) -> String {
        match self {
            Database::Sqlite(path) => path.display().to_string(),
            Database::Postgres { spec, project } => {
                format!("{} (project {project})", spec.display())
            }
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Database::Postgres { .. })
    }
}

/// The project's name when nothing names it: its `origin`, normalised; a repository without
/// one is named by this machine and its path (no other clone shares it).
pub fn default_project_name(root: &Path) -> String {
    if let Ok(url) = crate::git::run(root, &["remote", "get-url", "origin"])
        && !url.trim().is_empty()
    {
        return normalise_remote(&resolve_ssh_alias(&url), root);
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    format!("file://{host}{}", root.display())
}

/// Hosts whose repository paths are case-insensitive (`Acme/App` and `acme/app` are one
/// repository there), so their paths are lowercased.
const CASE_INSENSITIVE_HOSTS: [&str; 4] =
    ["github.com", "gitlab.com", "bitbucket.org", "dev.azure.com"];

/// Hosts that serve a forge's repositories under another name (ssh over port 443, the
/// `www.` of the web address): the forge's own name.
const HOST_ALIASES: [(&str, &str); 6] = [
    ("ssh.github.com", "github.com"),
    ("www.github.com", "github.com"),
    ("altssh.gitlab.com", "gitlab.com"),
    ("www.gitlab.com", "gitlab.com"),
    ("altssh.bitbucket.org", "bitbucket.org"),
    ("www.bitbucket.org", "bitbucket.org"),
];

/// The name a project has in a shared database when no `project` setting gives one: the
/// normalised URL of the repository's `origin`, so every clone of a repository (by ssh or
/// https, with or without `.git` in any case, with or without credentials in the URL) has the
/// same one, and different repositories never share one. A path (a bare repository on this
/// machine or a share, plain or `file://`) is the canonical path of the repository git would
/// use for it, symbolic links resolved.
///
/// The port is how a server is reached, never which repository it is (a forge's ssh on 2222
/// or 443 and its https on 443 serve the same paths), so it is left out; a forge's other
/// host names (`ssh.github.com`, `www.github.com`) are the forge's; Azure DevOps' ssh
/// (`ssh.dev.azure.com:v3/org/project/repo`), https (`dev.azure.com/org/project/_git/repo`)
/// and old (`org.visualstudio.com/project/_git/repo`) forms are `dev.azure.com/org/project/repo`.
/// An ssh `Host` alias of `~/.ssh/config` (`git@github-work:acme/app`) is resolved by
/// [`resolve_ssh_alias`] before this, where ssh can be asked.
pub fn normalise_remote(url: &str, root: &Path) -> String {
    let url = url.trim();
    // scheme://[user[:pass]@]host[:port]/path
    if let Some((scheme, rest)) = url.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if scheme == "file" {
            // file:///path and file://localhost/path are this machine's /path.
            let path = match rest.strip_prefix("localhost") {
                Some(p) if p.starts_with('/') => p,
                _ => rest,
            };
            return local_repository(&percent_decode(path), root);
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, _port) = split_host_port(host_port);
        return remote_name(host, path);
    }
    // scp-like: [user@]host:path, the host perhaps in brackets ([::1]); not when a `/` comes
    // before the `:` (a local path with a colon in it), as git decides.
    let after_user = url.split_once('@').map_or(url, |(_, h)| h);
    let scp = if let Some(bracketed) = after_user.strip_prefix('[') {
        bracketed
            .split_once("]:")
            .map(|(host, path)| (&after_user[..host.len() + 2], path))
    } else {
        url.split_once(':')
            .filter(|(left, _)| !left.is_empty() && !left.contains('/'))
            .map(|(left, path)| (left.rsplit_once('@').map_or(left, |(_, h)| h), path))
    };
    if let Some((host, path)) = scp
        && !url[..url.len() - path.len()].contains('/')
    {
        return remote_name(host, path);
    }
    local_repository(url, root)
}

/// `host[:port]` or `[v6][:port]`: the host and the port as written (perhaps empty).
fn split_host_port(host_port: &str) -> (&str, Option<&str>) {
    if host_port.starts_with('[')
        && let Some(end) = host_port.find(']')
    {
        let rest = &host_port[end + 1..];
        return (&host_port[..=end], rest.strip_prefix(':'));
    }
    match host_port.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => (h, Some(p)),
        _ => (host_port, None),
    }
}

/// `host/path` of a repository on a server: the host in lowercase, the path without
/// its slashes at either end and its `.git` (in any case), lowercased where the host's paths
/// are case-insensitive.
fn remote_name(host: &str, path: &str) -> String {
    let host = host.to_ascii_lowercase();
    let (host, path) = forge_name(&host, path.trim_matches('/'));
    let path = path.as_str();
    let path = match path.len().checked_sub(4) {
        Some(i) if path.is_char_boundary(i) && path[i..].eq_ignore_ascii_case(".git") => &path[..i],
        _ => path,
    };
    let path = path.trim_end_matches('/');
    let path = if CASE_INSENSITIVE_HOSTS.contains(&host.as_str()) {
        path.to_lowercase()
    } else {
        path.to_string()
    };
    format!("{host}/{path}")
}

/// The forge's own host and path for `host` and `path` (see [`normalise_remote`]).
fn forge_name(host: &str, path: &str) -> (String, String) {
    let host = HOST_ALIASES
        .iter()
        .find(|(alias, _)| *alias == host)
        .map_or(host, |(_, forge)| forge);
    let path = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>();
    // Azure DevOps: ssh `v3/org/project/repo`; https `org/project/_git/repo`, or
    // `org/_git/repo` for a project's repository of the project's own name.
    let azure = |org: &str, rest: &[&str]| -> Option<String> {
        match rest {
            [project, "_git", repo] => Some(format!("{org}/{project}/{repo}")),
            ["_git", repo] => Some(format!("{org}/{repo}/{repo}")),
            _ => None,
        }
    };
    let joined = path.join("/");
    match host {
        "ssh.dev.azure.com" | "vs-ssh.visualstudio.com" => match path.as_slice() {
            ["v3", org, project, repo] => {
                ("dev.azure.com".into(), format!("{org}/{project}/{repo}"))
            }
            _ => (host.into(), joined),
        },
        "dev.azure.com" => match path.split_first() {
            Some((org, rest)) => match azure(org, rest) {
                Some(p) => ("dev.azure.com".into(), p),
                None => (host.into(), joined),
            },
            None => (host.into(), joined),
        },
        _ if host.ends_with(".visualstudio.com") => {
            let org = host.trim_end_matches(".visualstudio.com");
            let rest: Vec<&str> = match path.split_first() {
                Some((first, rest)) if first.eq_ignore_ascii_case("DefaultCollection") => {
                    rest.to_vec()
                }
                _ => path.clone(),
            };
            match azure(org, &rest) {
                Some(p) => ("dev.azure.com".into(), p),
                None => (host.into(), joined),
            }
        }
        _ => (host.into(), joined),
    }
}

/// `url` with an ssh `Host` alias replaced by the host name ssh would connect to, asking
/// `ssh -G` (which reads the person's ssh configuration and connects nowhere): a clone made
/// through an alias (`git@github-work:acme/app.git`, for a second key) is then named as the
/// clones made through the forge's name. Only a host without a dot is asked about (an alias
/// is a word; a server's name has its domain); ssh missing or failing leaves `url` as it is,
/// named by its alias (the `project` setting names it otherwise). `$HOME/.ssh/config` is
/// given to ssh explicitly, as ssh reads the home of the passwd entry, not `$HOME`.
pub fn resolve_ssh_alias(url: &str) -> String {
    let url = url.trim();
    // The host of an ssh URL or of git's scp-like form, and where it is in `url`.
    let (start, host) = if let Some(rest) = url
        .strip_prefix("ssh://")
        .or_else(|| url.strip_prefix("git+ssh://"))
        .or_else(|| url.strip_prefix("ssh+git://"))
    {
        let authority = rest.split('/').next().unwrap_or("");
        let after_user = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = after_user.split(':').next().unwrap_or("");
        (
            url.len() - rest.len() + (authority.len() - after_user.len()),
            host,
        )
    } else if url.contains("://") {
        return url.to_string();
    } else {
        match url.split_once(':') {
            Some((left, _)) if !left.is_empty() && !left.contains('/') => {
                let host = left.rsplit_once('@').map_or(left, |(_, h)| h);
                (left.len() - host.len(), host)
            }
            _ => return url.to_string(),
        }
    };
    if host.is_empty()
        || host.contains('.')
        || host.starts_with('[')
        || host.eq_ignore_ascii_case("localhost")
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return url.to_string();
    }
    let mut ssh = std::process::Command::new("ssh");
    if let Some(config) = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".ssh/config"))
        .filter(|c| c.is_file())
    {
        ssh.arg("-F").arg(config);
    }
    let Ok(out) = ssh
        .arg("-G")
        .arg("--")
        .arg(host)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return url.to_string();
    };
    if !out.status.success() {
        return url.to_string();
    }
    let resolved = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("hostname ").map(|h| h.trim().to_string()));
    match resolved {
        Some(name)
            if !name.is_empty()
                && name != host
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-_:".contains(c)) =>
        {
            format!("{}{name}{}", &url[..start], &url[start + host.len()..])
        }
        _ => url.to_string(),
    }
}

/// A repository on this machine named by `path` (relative to `root`): the canonical path of
/// the one git uses for it (`path`, else `path.git`, as git tries them), so a symbolic link
/// and its target are one project, and `origin` and `origin.git` (two repositories) are two.
/// A path that leads nowhere is named as written, made absolute.
fn local_repository(path: &str, root: &Path) -> String {
    let path = Path::new(path);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    let trimmed = absolute.to_string_lossy().trim_end_matches('/').to_string();
    let trimmed = if trimmed.is_empty() {
        "/".to_string()
    } else {
        trimmed
    };
    let found = [trimmed.clone(), format!("{trimmed}.git")]
        .into_iter()
        .find_map(|candidate| Path::new(&candidate).canonicalize().ok());
    match found {
        Some(found) => found.to_string_lossy().into_owned(),
        None => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_https_and_scp_forms_of_one_repository_normalise_alike() {
        let root = Path::new("/work/app");
        let forms = [
            "git@github.com:acme/app.git",
            "git@GitHub.com:acme/app",
            "ssh://git@github.com/acme/app.git",
            "ssh://git@github.com:22/acme/app.git/",
            "https://github.com/acme/app.git",
            "https://x-token:ghp_secret@github.com/acme/app",
            "http://github.com:80/acme/app/",
        ];
        for f in forms {
            assert_eq!(normalise_remote(f, root), "github.com/acme/app", "{f}");
        }
        // The port reaches the server; it does not name the repository.
        assert_eq!(
            normalise_remote("ssh://git@example.com:2222/acme/app.git", root),
            normalise_remote("https://example.com/acme/app.git", root),
        );
        assert_ne!(
            normalise_remote("git@github.com:acme/other.git", root),
            "github.com/acme/app"
        );
    }

    #[test]
    fn a_forges_other_hosts_and_ports_and_azures_forms_normalise_to_one_name() {
        let root = Path::new("/work/app");
        for f in [
            "ssh://git@ssh.github.com:443/acme/app.git",
            "https://www.github.com/acme/app",
            "https://github.com:443/acme/app.git",
        ] {
            assert_eq!(normalise_remote(f, root), "github.com/acme/app", "{f}");
        }
        for f in [
            "ssh://git@gitlab.example.com:2222/acme/app.git",
            "https://gitlab.example.com/acme/app.git",
            "https://gitlab.example.com:8443/acme/app",
        ] {
            assert_eq!(
                normalise_remote(f, root),
                "gitlab.example.com/acme/app",
                "{f}"
            );
        }
        assert_eq!(
            normalise_remote("ssh://git@altssh.gitlab.com:443/acme/app.git", root),
            "gitlab.com/acme/app"
        );
        for f in [
            "git@ssh.dev.azure.com:v3/Org/Proj/Repo",
            "https://org@dev.azure.com/org/proj/_git/repo",
            "https://dev.azure.com/Org/Proj/_git/Repo",
            "ssh://git@ssh.dev.azure.com:22/v3/org/proj/repo",
            "https://org.visualstudio.com/proj/_git/repo",
            "https://org.visualstudio.com/DefaultCollection/proj/_git/repo",
            "org@vs-ssh.visualstudio.com:v3/org/proj/repo",
        ] {
            assert_eq!(
                normalise_remote(f, root),
                "dev.azure.com/org/proj/repo",
                "{f}"
            );
        }
        // A project's repository of the project's own name.
        assert_eq!(
            normalise_remote("https://dev.azure.com/org/_git/proj", root),
            normalise_remote("git@ssh.dev.azure.com:v3/org/proj/proj", root)
        );
        assert_ne!(
            normalise_remote("https://dev.azure.com/org/proj/_git/other", root),
            "dev.azure.com/org/proj/repo"
        );
    }

    #[test]
    fn only_an_ssh_host_without_a_dot_is_asked_of_ssh() {
        // Names with a domain, other schemes and paths are left as written (ssh not asked).
        for url in [
            "git@github.com:acme/app.git",
            "ssh://git@gitlab.example.com:2222/acme/app.git",
            "https://github-work/acme/app.git",
            "/srv/git/app.git",
            "./relative:path",
            "git@[::1]:acme/app.git",
        ] {
            assert_eq!(resolve_ssh_alias(url), url, "{url}");
        }
    }

    #[test]
    fn a_local_origin_is_named_by_its_absolute_path() {
        let root = Path::new("/nonexistent/work/app");
        assert_eq!(
            normalise_remote("/nonexistent/git/app.git", root),
            "/nonexistent/git/app.git"
        );
        assert_eq!(
            normalise_remote("file:///nonexistent/git/app.git/", root),
            "/nonexistent/git/app.git"
        );
        assert_eq!(
            normalise_remote("file://localhost/nonexistent/git/app.git", root),
            "/nonexistent/git/app.git"
        );
        assert_eq!(
            normalise_remote("../origin.git", root),
            "/nonexistent/work/app/../origin.git"
        );
    }

    /// One repository always gets one name, different repositories never the same: each row
    /// is a set of spellings of one repository, and no two rows share a name.
    #[test]
    fn every_spelling_of_a_repository_has_its_name_and_no_other_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        let h = home.display();
        let root = home.join("work");
        std::fs::create_dir_all(&root).unwrap();
        // Two different bare repositories, origin.git and origin; a link to the first.
        std::fs::create_dir(home.join("origin.git")).unwrap();
        std::fs::create_dir(home.join("origin")).unwrap();
        std::fs::create_dir(home.join("only.git")).unwrap();
        std::os::unix::fs::symlink(home.join("origin.git"), home.join("link.git")).unwrap();
        let rows: Vec<(String, Vec<String>)> = vec![
            (
                "github.com/acme/app".into(),
                [
                    "git@github.com:acme/app.git",
                    "git@github.com:Acme/App.git",
                    "git@github.com:acme/app",
                    "git@GitHub.com:acme/app.GIT",
                    "ssh://git@github.com/acme/app.git",
                    "ssh://git@github.com:/acme/app",
                    "ssh://git@github.com:22/acme/app.git/",
                    "https://github.com/ACME/app.Git",
                    "https://x-token:ghp_secret@github.com/acme/app",
                    "http://github.com:80/acme/app/",
                ]
                .map(String::from)
                .into(),
            ),
            (
                "gitlab.com/group/sub/proj".into(),
                [
                    "git@gitlab.com:Group/Sub/Proj.git",
                    "https://gitlab.com/group/sub/proj",
                ]
                .map(String::from)
                .into(),
            ),
            (
                // Elsewhere, paths keep their case: these are two repositories.
                "git.example.com/Acme/App".into(),
                [
                    "git@git.example.com:Acme/App.git",
                    "ssh://git.example.com/Acme/App",
                ]
                .map(String::from)
                .into(),
            ),
            (
                "git.example.com/acme/app".into(),
                ["git@git.example.com:acme/app"].map(String::from).into(),
            ),
            (
                // The port reaches the server; it does not name the repository.
                "example.com/acme/app".into(),
                [
                    "ssh://git@example.com:2222/acme/app.git",
                    "https://example.com:8443/acme/app",
                ]
                .map(String::from)
                .into(),
            ),
            (
                "[::1]/acme/app".into(),
                [
                    "git@[::1]:acme/app",
                    "ssh://git@[::1]/acme/app.git",
                    "ssh://[::1]:22/acme/app",
                    "ssh://git@[::1]:2222/acme/app",
                ]
                .map(String::from)
                .into(),
            ),
            (
                format!("{h}/origin.git"),
                vec![
                    format!("{h}/origin.git"),
                    format!("{h}/origin.git/"),
                    format!("file://{h}/link.git"),
                    format!("{h}/link.git"),
                    format!("file://localhost{h}/origin.git"),
                    "../origin.git".into(),
                ],
            ),
            (
                format!("{h}/origin"),
                vec![
                    format!("{h}/origin"),
                    format!("file://{h}/origin"),
                    "../origin".into(),
                ],
            ),
            (
                // As git does: `only` is found as only.git.
                format!("{h}/only.git"),
                vec![format!("{h}/only"), format!("file://{h}/only.git")],
            ),
        ];
        let mut seen = std::collections::BTreeMap::new();
        for (name, spellings) in &rows {
            for spelling in spellings {
                assert_eq!(&normalise_remote(spelling, &root), name, "{spelling}");
            }
            assert!(seen.insert(name.clone(), ()).is_none(), "{name} twice");
        }
    }

    #[test]
    fn urls_and_words_parse_alike() {
        let url = DatabaseSpec::parse("postgres://gza@db.internal:5433/team?sslmode=require", None)
            .unwrap();
        let words = DatabaseSpec::parse(
            "host=db.internal port=5433 user=gza dbname=team sslmode=require",
            None,
        )
        .unwrap();
        assert_eq!(url, words);
        assert_eq!(
            url.display(),
            "postgres://gza@db.internal:5433/team?sslmode=require"
        );
        let socket = DatabaseSpec::parse("host=/tmp/pg dbname='a b\\'c'", None).unwrap();
        assert_eq!(socket.host.as_deref(), Some("/tmp/pg"));
        assert_eq!(socket.dbname.as_deref(), Some("a b'c"));
    }

    #[test]
    fn a_password_in_a_settings_file_is_refused_and_never_shown() {
        let file = Path::new("/p/gza.yaml");
        for text in [
            "postgres://gza:hunter2@db/team",
            "host=db password=hunter2 dbname=team",
        ] {
            let err = DatabaseSpec::parse(text, Some(file)).unwrap_err();
            assert!(err.contains("holds a password"), "{err}");
            assert!(!err.contains("hunter2"), "{err}");
            let from_env = DatabaseSpec::parse(text, None).unwrap();
            assert_eq!(from_env.password.as_deref(), Some("hunter2"));
            assert!(!from_env.display().contains("hunter2"));
        }
        let encoded = DatabaseSpec::parse("postgres://gza:p%40ss@db/team", None).unwrap();
        assert_eq!(encoded.password.as_deref(), Some("p@ss"));
    }

    /// The probe's values, and their kin: however malformed, no error (and no display) shows
    /// the password, from a file the one "holds a password" line is given, schemes are matched
    /// in any case, and a URL with a space or a fragment is refused.
    #[test]
    fn no_error_ever_shows_a_password() {
        const SECRET: &str = "hunter2SECRET";
        let file = Path::new("/p/gza.local.yaml");
        // (value, whether it is a valid connection when it comes from the environment)
        let table: &[(&str, bool)] = &[
            ("POSTGRES://gza:hunter2SECRET@127.0.0.1:24021/pw1", true),
            (
                "Postgres://gza:hunter2SECRET@127.0.0.1:24021/pw1?sslmode=disable",
                true,
            ),
            ("PostgreSQL://gza:hunter2SECRET@127.0.0.1/pw1", true),
            ("gza:hunter2SECRET@127.0.0.1:24021/pw1", false),
            (
                "gza:hunter2SECRET@127.0.0.1:24021/pw1?sslmode=disable",
                false,
            ),
            (
                "pg://gza:hunter2SECRET@127.0.0.1:24021/pw1?sslmode=disable",
                false,
            ),
            (
                "postgres://gza@127.0.0.1:24021/pw1 password=hunter2SECRET",
                false,
            ),
            (
                "postgres://gza@127.0.0.1:24021/pw1 PassWord = 'hunter2SECRET'",
                false,
            ),
            (
                "postgres://gza:hunter2SECRET@127.0.0.1:24021/pw1#frag",
                false,
            ),
            ("postgres://gza:hunter 2SECRET@127.0.0.1/pw1", false),
            ("postgres://gza:hunter2SECRET@127.0.0.1:port/pw1", false),
            (
                "postgres://gza:hunter2SECRET@127.0.0.1/pw1?sslmode=maybe",
                false,
            ),
            (
                "postgres://gza@db/pw1?password=hunter2SECRET&colour=blue",
                false,
            ),
            ("host=db password='hunter2SECRET x' colour=blue", false),
            (
                "host=db password=hunter2SECRET sslmode=hunter2SECRET",
                false,
            ),
            ("host=db password=hunter2SECRET", true),
            ("gza:hunter2SECRET@db sslmode=require", false),
        ];
        for &(text, valid) in table {
            let from_file = DatabaseSpec::parse(text, Some(file)).unwrap_err();
            assert!(
                from_file.contains("holds a password"),
                "{text}: {from_file}"
            );
            assert!(from_file.contains("gza.local.yaml"), "{text}: {from_file}");
            match DatabaseSpec::parse(text, None) {
                Ok(spec) => {
                    assert!(valid, "{text} was accepted");
                    assert!(spec.password.as_deref().unwrap().contains("hunter"));
                    assert!(!spec.display().contains(SECRET), "{text}");
                }
                Err(e) => {
                    assert!(!valid, "{text}: {e}");
                    assert!(!e.contains(SECRET) && !e.contains("2SECRET"), "{text}: {e}");
                }
            }
            assert!(!mask(text).contains("2SECRET"), "{text}: {}", mask(text));
        }
        assert_eq!(
            mask("postgres://gza:p@ss@db/team"),
            "postgres://gza:***@db/team"
        );
        assert_eq!(
            mask("host=db password = 'a \\' b' dbname=x"),
            "host=db password = *** dbname=x"
        );
        // Nothing to hide is shown as it is; words' values may hold `:` and `@`.
        for plain in [
            "postgres://gza@db:5432/team?sslmode=require",
            "host=db application_name=a:b@c",
        ] {
            assert_eq!(mask(plain), plain);
            assert!(DatabaseSpec::parse(plain, Some(file)).is_ok(), "{plain}");
        }
    }

    #[test]
    fn unknown_parameters_and_modes_are_named() {
        let err = DatabaseSpec::parse("postgres://db/team?sslmode=maybe", None).unwrap_err();
        assert!(err.contains("sslmode=maybe"), "{err}");
        let err = DatabaseSpec::parse("host=db colour=blue", None).unwrap_err();
        assert!(err.starts_with("colour is not"), "{err}");
        assert!(DatabaseSpec::parse("db.internal", None).is_err());
    }
}
