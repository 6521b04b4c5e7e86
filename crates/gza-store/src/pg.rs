//! Connecting to PostgreSQL as libpq would: the connection the settings give, then a service
//! file, then the `PG*` environment, then the defaults; the password from the environment or
//! `~/.pgpass`; TLS through rustls with the system's roots (or `sslrootcert`). And where a
//! project lives in a shared database: its own schema.
//!
//! Written here rather than taken from libpq (a C library and its system package on every
//! machine) because the `postgres` crate reads none of these files or variables itself; the
//! formats are small and documented (PostgreSQL's "The Password File", "The Connection Service
//! File", "Environment Variables").

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use gza_core::database::DatabaseSpec;
use gza_core::error::{Error, Result};

/// A connection with everything filled in.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub dbname: String,
    pub password: Option<String>,
    pub sslmode: String,
    pub sslrootcert: Option<PathBuf>,
    /// The client certificate and key: the setting's, `PGSSLCERT`/`PGSSLKEY`, else
    /// `~/.postgresql/postgresql.crt` and `.key` when both are there (as libpq).
    pub sslcert: Option<PathBuf>,
    pub sslkey: Option<PathBuf>,
    pub connect_timeout: u64,
    pub application_name: String,
    /// A password file that was not read because others can read it (as libpq), to name
    /// when the server then asks for a password.
    pub pgpass_ignored: Option<PathBuf>,
}

impl Resolved {
    /// The connection as a person may see it: never the password.
    pub fn display(&self) -> String {
        let host = if self.host.starts_with('/') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!(
            "postgres://{}@{host}:{}/{}",
            self.user, self.port, self.dbname
        )
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn home() -> Option<PathBuf> {
    env("HOME").map(PathBuf::from)
}

/// Fill in what `spec` leaves out, in libpq's order: a service file, the environment, then the
/// defaults; the password last, from `PGPASSWORD` or the password file.
pub(crate) fn resolve(spec: &DatabaseSpec) -> Result<Resolved> {
    let mut s = spec.clone();
    if let Some(service) = s.service.clone().or_else(|| env("PGSERVICE")) {
        let found = service_entries(&service)?;
        for (key, value) in found {
            let unset = match key.as_str() {
                "host" | "hostaddr" => s.host.is_none(),
                "port" => s.port.is_none(),
                "user" => s.user.is_none(),
                "dbname" => s.dbname.is_none(),
                "password" => s.password.is_none(),
                "sslmode" => s.sslmode.is_none(),
                "sslrootcert" => s.sslrootcert.is_none(),
                "sslcert" => s.sslcert.is_none(),
                "sslkey" => s.sslkey.is_none(),
                "connect_timeout" => s.connect_timeout.is_none(),
                "application_name" => s.application_name.is_none(),
                // Other libpq keys a shared service file may hold are not gza's to refuse.
                _ => false,
            };
            if unset {
                let words = format!(
                    "{key}='{}'",
                    value.replace('\\', "\\\\").replace('\'', "\\'")
                );
                let one = DatabaseSpec::parse(&words, None)
                    .map_err(|e| Error::Usage(format!("service {service}: {e}")))?;
                merge(&mut s, one);
            }
        }
    }
    let host = s
        .host
        .or_else(|| env("PGHOST"))
        .or_else(|| env("PGHOSTADDR"))
        .unwrap_or_else(default_host);
    let port = match s.port {
        Some(p) => p,
        None => match env("PGPORT") {
            Some(p) => p
                .parse()
                .map_err(|_| Error::Usage(format!("PGPORT={p} is not a port number")))?,
            None => 5432,
        },
    };
    let user = s
        .user
        .or_else(|| env("PGUSER"))
        .or_else(|| env("USER"))
        .or_else(|| env("LOGNAME"))
        .unwrap_or_else(|| "postgres".into());
    let dbname = s
        .dbname
        .or_else(|| env("PGDATABASE"))
        .unwrap_or_else(|| user.clone());
    let sslmode = s
        .sslmode
        .or_else(|| env("PGSSLMODE"))
        .unwrap_or_else(|| "prefer".into());
    if !gza_core::database::SSL_MODES.contains(&sslmode.as_str()) {
        return Err(Error::Usage(format!(
            "sslmode {sslmode} is not one gza knows; use one of {}",
            gza_core::database::SSL_MODES.join(", ")
        )));
    }
    let sslrootcert = s
        .sslrootcert
        .or_else(|| env("PGSSLROOTCERT").map(PathBuf::from));
    let sslcert = s.sslcert.or_else(|| env("PGSSLCERT").map(PathBuf::from));
    let sslkey = s.sslkey.or_else(|| env("PGSSLKEY").map(PathBuf::from));
    let (sslcert, sslkey) = match (sslcert, sslkey) {
        (None, None) => {
            let dir = home().map(|h| h.join(".postgresql"));
            let cert = dir.as_ref().map(|d| d.join("postgresql.crt"));
            let key = dir.as_ref().map(|d| d.join("postgresql.key"));
            match (cert, key) {
                (Some(c), Some(k)) if c.is_file() && k.is_file() => (Some(c), Some(k)),
                _ => (None, None),
            }
        }
        pair => pair,
    };
    let connect_timeout = match s.connect_timeout {
        Some(t) => t,
        None => env("PGCONNECT_TIMEOUT")
            .and_then(|t| t.parse().ok())
            .unwrap_or(10),
    };
    let application_name = s
        .application_name
        .or_else(|| env("PGAPPNAME"))
        .unwrap_or_else(|| "gza".into());
    let mut resolved = Resolved {
        host,
        port,
        user,
        dbname,
        password: None,
        sslmode,
        sslrootcert,
        sslcert,
        sslkey,
        connect_timeout,
        application_name,
        pgpass_ignored: None,
    };
    resolved.password = match s.password.or_else(|| env("PGPASSWORD")) {
        Some(p) => Some(p),
        None => {
            let (found, ignored) = pgpass_password(&resolved);
            resolved.pgpass_ignored = ignored;
            found
        }
    };
    Ok(resolved)
}

fn merge(into: &mut DatabaseSpec, one: DatabaseSpec) {
    into.host = into.host.take().or(one.host);
    into.port = into.port.or(one.port);
    into.user = into.user.take().or(one.user);
    into.dbname = into.dbname.take().or(one.dbname);
    into.password = into.password.take().or(one.password);
    into.sslmode = into.sslmode.take().or(one.sslmode);
    into.sslrootcert = into.sslrootcert.take().or(one.sslrootcert);
    into.sslcert = into.sslcert.take().or(one.sslcert);
    into.sslkey = into.sslkey.take().or(one.sslkey);
    into.connect_timeout = into.connect_timeout.or(one.connect_timeout);
    into.application_name = into.application_name.take().or(one.application_name);
}

/// libpq's default: the server's socket directory where there is one, else TCP on localhost.
fn default_host() -> String {
    ["/var/run/postgresql", "/run/postgresql", "/tmp"]
        .into_iter()
        .find(|dir| Path::new(dir).join(".s.PGSQL.5432").exists())
        .map_or_else(|| "localhost".into(), str::to_string)
}

/// The service files libpq reads, the person's first.
fn service_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    match env("PGSERVICEFILE") {
        Some(f) => files.push(PathBuf::from(f)),
        None => files.extend(home().map(|h| h.join(".pg_service.conf"))),
    }
    match env("PGSYSCONFDIR") {
        Some(dir) => files.push(Path::new(&dir).join("pg_service.conf")),
        None => files.push(PathBuf::from("/etc/postgresql-common/pg_service.conf")),
    }
    files
}

/// The `key=value` lines of `[service]` in the first service file that has it.
fn service_entries(service: &str) -> Result<Vec<(String, String)>> {
    let files = service_files();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if let Some(entries) = parse_service(&text, service) {
            return Ok(entries);
        }
    }
    Err(Error::Usage(format!(
        "service {service:?} is in none of the service files ({}); add a [{service}] section or fix the name",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

fn parse_service(text: &str, service: &str) -> Option<Vec<(String, String)>> {
    let mut in_section = false;
    let mut found = None::<Vec<(String, String)>>;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if found.is_some() && in_section {
                break;
            }
            in_section = name.trim() == service;
            if in_section {
                found = Some(Vec::new());
            }
            continue;
        }
        if in_section && let Some((k, v)) = line.split_once('=') {
            found
                .get_or_insert_with(Vec::new)
                .push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    found
}

/// The password file libpq reads: `PGPASSFILE`, else `~/.pgpass`.
fn pgpass_file() -> Option<PathBuf> {
    env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".pgpass")))
}

/// The password for this connection in the password file, if one line matches. As libpq, a
/// file that others can read is not used: it is returned second, to be named if the server
/// asks for a password.
fn pgpass_password(r: &Resolved) -> (Option<String>, Option<PathBuf>) {
    use std::os::unix::fs::PermissionsExt;
    let Some(file) = pgpass_file() else {
        return (None, None);
    };
    let Ok(meta) = std::fs::metadata(&file) else {
        return (None, None);
    };
    if !meta.is_file() {
        return (None, None);
    }
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(
            file = %file.display(),
            "the password file can be read by others; it is not used (chmod 600 it)"
        );
        return (None, Some(file));
    }
    (pgpass_lines(r, &file), None)
}

fn pgpass_lines(r: &Resolved, file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    // A socket connection matches `localhost` lines, as in libpq.
    let host = if r.host.starts_with('/') {
        "localhost"
    } else {
        r.host.as_str()
    };
    let port = r.port.to_string();
    let wanted = [host, port.as_str(), r.dbname.as_str(), r.user.as_str()];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .find_map(|line| {
            let fields = pgpass_fields(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(f, w)| f == "*" || f == w);
            matches.then(|| fields[4..].join(":"))
        })
}

/// The colon-separated fields of a password file line, `\:` and `\\` unescaped.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one").extend(chars.next()),
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one").push(c),
        }
    }
    fields
}

/// The schema a new project's tables are made in: its name made into an identifier, with a
/// 64-bit hash of the whole name (`gza_p_github_com_acme_app_1f2e3d4c5b6a7980`). `attempt`
/// (from 0) goes into the hash when an earlier attempt's name is taken. The name is chosen
/// once, when the project is registered in `gza.projects`; every open reads it from there by
/// the project's full name ([`registered`]), never derives it again, so two names that hash
/// alike can never share a schema. Projects registered before this (a 32-bit hash,
/// `gza_p_…_1f2e3d4c`) keep the names they have.
pub(crate) fn new_schema_name(project: &str, attempt: u32) -> String {
    let mut slug: String = project
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    while slug.contains("__") {
        slug = slug.replace("__", "_");
    }
    let slug: String = slug.trim_matches('_').chars().take(40).collect();
    let mut hashed = project.as_bytes().to_vec();
    if attempt > 0 {
        hashed.push(0);
        hashed.extend_from_slice(attempt.to_string().as_bytes());
    }
    format!("gza_p_{slug}_{:016x}", fnv1a(&hashed))
}

/// A project's entry in the database's register of projects (`gza.projects`).
#[derive(Debug, Clone)]
pub(crate) struct Registered {
    /// The schema its tables are in.
    pub schema: String,
    /// Whether that schema exists.
    pub exists: bool,
    /// Whether this connection's role may use it.
    pub usable: bool,
}

/// Look `project` up in the register by its full name and, when it is there, set the
/// connection's `search_path` to its schema (one round trip). `None` when the project, the
/// register or its schema `gza` is not there yet.
pub(crate) fn registered(
    client: &mut postgres::Client,
    project: &str,
) -> std::result::Result<Option<Registered>, postgres::Error> {
    use postgres::error::SqlState;
    let found = client.query_opt(
        "SELECT set_config('search_path', quote_ident(p.schema_name), false), p.schema_name, \
                n.oid IS NOT NULL, COALESCE(has_schema_privilege(n.oid, 'USAGE'), false) \
         FROM gza.projects p LEFT JOIN pg_namespace n ON n.nspname = p.schema_name \
         WHERE p.name = $1",
        &[&project],
    );
    match found {
        Ok(row) => Ok(row.map(|r| Registered {
            schema: r.get(1),
            exists: r.get(2),
            usable: r.get(3),
        })),
        Err(e)
            if e.code() == Some(&SqlState::UNDEFINED_TABLE)
                || e.code() == Some(&SqlState::INVALID_SCHEMA_NAME) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Register `project` in the database (making the register when it is the first) and make its
/// schema, under the database's migration lock so two machines registering at once agree;
/// returns its schema, and leaves the connection's `search_path` on it. A name already
/// registered (by another process meanwhile) keeps its schema. A new one gets
/// [`new_schema_name`], or the next attempt's name while that one is registered to another
/// project or exists without being registered: never a schema someone else has.
/// `None` when another gza held the lock for a minute.
pub(crate) fn register(
    client: &mut postgres::Client,
    project: &str,
) -> std::result::Result<Option<String>, postgres::Error> {
    let key = lock_key("gza:migrate");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&key])?
        .get::<_, bool>(0)
    {
        if std::time::Instant::now() > deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let result = (|| {
        let first: bool = client
            .query_one("SELECT to_regclass('gza.projects') IS NULL", &[])?
            .get(0);
        if first {
            // Every role of the database reads the register (each open looks its project up
            // there): it holds the projects' names and schema names, which every role sees in
            // `pg_namespace` anyway. What is in a project's schema stays its owner's to grant.
            client.batch_execute(
                "CREATE SCHEMA IF NOT EXISTS gza; \
                 CREATE TABLE IF NOT EXISTS gza.projects (\
                    name TEXT COLLATE \"C\" PRIMARY KEY, \
                    schema_name TEXT COLLATE \"C\" NOT NULL UNIQUE, \
                    created_at TEXT NOT NULL); \
                 GRANT USAGE ON SCHEMA gza TO PUBLIC; \
                 GRANT SELECT ON gza.projects TO PUBLIC",
            )?;
        }
        if let Some(found) = registered(client, project)? {
            client.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {}", found.schema))?;
            return Ok(Some(found.schema));
        }
        let mut attempt = 0;
        let schema = loop {
            let candidate = new_schema_name(project, attempt);
            let taken: bool = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM gza.projects WHERE schema_name = $1) \
                         OR EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
                    &[&candidate],
                )?
                .get(0);
            if !taken {
                break candidate;
            }
            attempt += 1;
        };
        client.execute(
            "INSERT INTO gza.projects (name, schema_name, created_at) VALUES ($1, $2, $3)",
            &[&project, &schema, &gza_core::task::now_timestamp()],
        )?;
        client.batch_execute(&format!(
            "CREATE SCHEMA {schema}; SET search_path TO {schema}"
        ))?;
        Ok(Some(schema))
    })();
    let _ = client.execute("SELECT pg_advisory_unlock($1)", &[&key]);
    result
}

/// FNV-1a, 64 bits: advisory lock keys and the schema's hash, stable across machines and builds.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A key for `pg_advisory_lock`.
pub(crate) fn lock_key(what: &str) -> i64 {
    fnv1a(what.as_bytes()) as i64
}

/// TLS for the connection, as its `sslmode` asks.
fn tls(r: &Resolved) -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let mut roots = rustls::RootCertStore::empty();
    match &r.sslrootcert {
        Some(file) => {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            let certs = CertificateDer::pem_file_iter(file)
                .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|e| {
                    Error::Usage(format!(
                        "sslrootcert {}: cannot read certificates from it ({e})",
                        file.display()
                    ))
                })?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(Error::Usage(format!(
                    "sslrootcert {} holds no certificate gza can use",
                    file.display()
                )));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| Error::Usage(format!("TLS for PostgreSQL: {e}")))?
    .with_root_certificates(roots);
    let config = match client_identity(r)? {
        Some((certs, key)) => config.with_client_auth_cert(certs, key).map_err(|e| {
            Error::Usage(format!(
                "sslcert and sslkey ({}, {}) do not make a client identity: {e}",
                r.sslcert.as_deref().unwrap_or(Path::new("")).display(),
                r.sslkey.as_deref().unwrap_or(Path::new("")).display()
            ))
        })?,
        None => config.with_no_client_auth(),
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

type Identity = (
    Vec<rustls::pki_types::CertificateDer<'static>>,
    rustls::pki_types::PrivateKeyDer<'static>,
);

/// The client certificate chain and key the connection names, read (PEM) and checked as libpq
/// does: both or neither, and a key others cannot read.
fn client_identity(r: &Resolved) -> Result<Option<Identity>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::os::unix::fs::PermissionsExt;
    let (cert, key) = match (&r.sslcert, &r.sslkey) {
        (None, None) => return Ok(None),
        (Some(c), Some(k)) => (c, k),
        (Some(_), None) => {
            return Err(Error::Usage(
                "sslcert is given without sslkey; give both (or PGSSLCERT and PGSSLKEY)".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(Error::Usage(
                "sslkey is given without sslcert; give both (or PGSSLCERT and PGSSLKEY)".into(),
            ));
        }
    };
    match std::fs::metadata(key) {
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => {
            return Err(Error::Usage(format!(
                "sslkey {} can be read by others, so it is not used (as libpq): chmod 600 {}",
                key.display(),
                key.display()
            )));
        }
        _ => {}
    }
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| {
            Error::Usage(format!(
                "sslcert {}: cannot read a certificate from it ({e})",
                cert.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(Error::Usage(format!(
            "sslcert {} holds no certificate",
            cert.display()
        )));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        Error::Usage(format!(
            "sslkey {}: cannot read a private key from it ({e})",
            key.display()
        ))
    })?;
    Ok(Some((certs, private)))
}

/// TLS for `sslmode=prefer` whose configuration is made only when the server answers the TLS
/// request with yes. Making it reads the system's roots (on Debian the bundle and then every
/// file of `/etc/ssl/certs`, ~150 files: about 5 ms of CPU, half of a short command's), which a
/// server without TLS (a loopback or socket connection, most often) never needs.
struct LazyTls(Resolved);

/// [`LazyTls`] for one server, until the server has answered.
struct LazyTlsConnect {
    resolved: Resolved,
    domain: String,
}

type RustlsConnect = <tokio_postgres_rustls::MakeRustlsConnect as postgres::tls::MakeTlsConnect<
    postgres::Socket,
>>::TlsConnect;
type RustlsStream = <RustlsConnect as postgres::tls::TlsConnect<postgres::Socket>>::Stream;
type TlsError = Box<dyn std::error::Error + Send + Sync>;

impl postgres::tls::MakeTlsConnect<postgres::Socket> for LazyTls {
    type Stream = RustlsStream;
    type TlsConnect = LazyTlsConnect;
    type Error = std::convert::Infallible;

    fn make_tls_connect(
        &mut self,
        domain: &str,
    ) -> std::result::Result<LazyTlsConnect, Self::Error> {
        Ok(LazyTlsConnect {
            resolved: self.0.clone(),
            domain: domain.to_string(),
        })
    }
}

impl postgres::tls::TlsConnect<postgres::Socket> for LazyTlsConnect {
    type Stream = RustlsStream;
    type Error = TlsError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = std::result::Result<RustlsStream, TlsError>> + Send>,
    >;

    fn connect(self, stream: postgres::Socket) -> Self::Future {
        use postgres::tls::MakeTlsConnect;
        let connect = tls(&self.resolved)
            .map_err(TlsError::from)
            .and_then(|mut make| {
                MakeTlsConnect::<postgres::Socket>::make_tls_connect(&mut make, &self.domain)
                    .map_err(TlsError::from)
            });
        Box::pin(async move { connect?.connect(stream).await.map_err(TlsError::from) })
    }
}

/// Open a connection, with `search_path` (when given) set as it starts. A server that says it
/// is shutting down, starting up or recovering (a restart or a failover under way) is asked
/// again, with a pause that doubles up to 1 s, for as long as `patience` allows; once it has
/// said so, a server that stops answering is the same restart, and waited for too. A server
/// that is simply not there is said at once.
pub(crate) fn connect(
    r: &Resolved,
    search_path: Option<&str>,
    patience: Duration,
) -> Result<Connected> {
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(50);
    let mut restarting = false;
    loop {
        let (retry, failed) = match connect_once(r, search_path) {
            Ok(client) => return Ok(client),
            Err(ConnectFailure::Pg(e)) => (
                passing_state(&e) || (restarting && e.as_db_error().is_none()),
                connect_error(r, &e, started.elapsed()),
            ),
            // Silence after a restart began is the restart still under way.
            Err(ConnectFailure::Silent(after)) => (restarting, silent_error(r, after)),
            Err(ConnectFailure::Setup(e)) => return Err(e),
        };
        if !retry {
            return Err(failed);
        }
        restarting = true;
        let left = patience.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(failed);
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

/// Whether the server refused a connection, or ended a session, for a state that passes:
/// shutting down, starting up, recovering after a crash.
pub(crate) fn passing_state(e: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    e.code().is_some_and(|code| {
        *code == SqlState::CANNOT_CONNECT_NOW
            || *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
    })
}

/// An open connection and its socket, when it could be told ([`crate::deadline`]).
pub(crate) type Connected = (postgres::Client, Option<crate::deadline::Socket>);

enum ConnectFailure {
    /// Setting the connection up failed before any server was asked (TLS configuration).
    Setup(Error),
    Pg(postgres::Error),
    /// Nothing came back within the connection's deadline (the time given): a server behind a
    /// dead link, or an address that takes connections and never answers.
    Silent(Duration),
}

/// One attempt at a connection, the whole of it (TCP connect, TLS, startup, authentication)
/// under one deadline: the URL's `connect_timeout` (else `PGCONNECT_TIMEOUT`, else 10 s).
/// tokio-postgres's own `connect_timeout` bounds only the TCP connect, so an address that takes
/// the connection and never answers (a black hole, a dead link behind a proxy) held every
/// command forever. The attempt runs on its own thread; past the deadline it is left behind
/// (blocked on a socket nobody answers, it ends with the process) and the caller is told.
fn connect_once(
    r: &Resolved,
    search_path: Option<&str>,
) -> std::result::Result<Connected, ConnectFailure> {
    let deadline = Duration::from_secs(r.connect_timeout.max(1));
    let (tx, rx) = std::sync::mpsc::channel();
    let (resolved, search_path) = (r.clone(), search_path.map(str::to_string));
    std::thread::Builder::new()
        .name("gza-pg-connect".into())
        .spawn(move || {
            let _ = tx.send(connect_now(&resolved, search_path.as_deref()));
        })
        .map_err(|e| {
            ConnectFailure::Setup(Error::Unreachable(format!(
                "cannot start a connection to PostgreSQL at {}: {e}",
                r.display()
            )))
        })?;
    match rx.recv_timeout(deadline) {
        Ok(result) => result,
        Err(_) => Err(ConnectFailure::Silent(deadline)),
    }
}

fn connect_now(
    r: &Resolved,
    search_path: Option<&str>,
) -> std::result::Result<Connected, ConnectFailure> {
    let mut config = postgres::Config::new();
    if r.host.starts_with('/') {
        config.host_path(&r.host);
    } else {
        config.host(&r.host);
    }
    config
        .port(r.port)
        .user(&r.user)
        .dbname(&r.dbname)
        .application_name(&r.application_name)
        .connect_timeout(Duration::from_secs(r.connect_timeout.max(1)))
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(30))
        // A link that dies under an established connection (the peer gone, nothing
        // acknowledged) ends it in about a minute instead of the kernel's hours, so a
        // statement waiting on it fails, and the reconnect budget takes over. Neither bounds
        // how long a live server takes (a migration under the advisory lock, `db copy`).
        .keepalives_interval(Duration::from_secs(10))
        .keepalives_retries(3)
        .tcp_user_timeout(Duration::from_secs(60));
    if let Some(p) = &r.password {
        config.password(p);
    }
    if let Some(schema) = search_path {
        config.options(&format!("-c search_path={schema}"));
    }
    let before = crate::deadline::before_connecting();
    let result = match r.sslmode.as_str() {
        "disable" => {
            config.ssl_mode(postgres::config::SslMode::Disable);
            config.connect(postgres::NoTls)
        }
        // `prefer` with the system's roots: read them only once the server agrees to TLS.
        "prefer" if r.sslrootcert.is_none() && r.sslcert.is_none() => {
            config.ssl_mode(postgres::config::SslMode::Prefer);
            config.connect(LazyTls(r.clone()))
        }
        mode => {
            config.ssl_mode(if mode == "prefer" {
                postgres::config::SslMode::Prefer
            } else {
                postgres::config::SslMode::Require
            });
            config.connect(tls(r).map_err(ConnectFailure::Setup)?)
        }
    };
    let client = result.map_err(ConnectFailure::Pg)?;
    let socket = crate::deadline::opened_socket(&before, r.port, !r.host.starts_with('/'));
    Ok((client, socket))
}

/// Where to give a password the server asked for and gza had none: the password file that was
/// there and not read, named, when that is why.
fn no_password_hint(r: &Resolved) -> String {
    match &r.pgpass_ignored {
        Some(file) => format!(
            "{} holds passwords but others can read it, so it is not used (as libpq): chmod 600 {}",
            file.display(),
            file.display()
        ),
        None => "give it in ~/.pgpass, a service file (service=…) or PGPASSWORD".into(),
    }
}

/// A connection that was taken and never answered, in one line: where, how long, what to do.
fn silent_error(r: &Resolved, after: Duration) -> Error {
    Error::Unreachable(format!(
        "cannot reach PostgreSQL at {}: no answer within {} s (the address takes connections but nothing answers: a dead link, a firewall, a wrong port); check that it runs and the network to it, and that the database setting (or GZA_DATABASE_URL) names it (connect_timeout= sets how long gza waits)",
        r.display(),
        after.as_secs()
    ))
}

/// A failed connection in one line: what was tried and what to do. `waited` is how long a
/// passing state of the server was waited out.
fn connect_error(r: &Resolved, e: &postgres::Error, waited: Duration) -> Error {
    use postgres::error::SqlState;
    let at = r.display();
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if passing_state(e) {
            return Error::Unreachable(format!(
                "PostgreSQL at {at} is not taking connections: {} (still after {} s); try again once it is up (GZA_RECONNECT_SECONDS sets how long gza waits)",
                db.message(),
                waited.as_secs()
            ));
        }
        if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            && db.message().contains("does not exist")
        {
            return Error::Unreachable(format!(
                "PostgreSQL at {at} has no user {:?}; fix the user in the database setting (or GZA_DATABASE_URL, PGUSER), or have the server's owner create it (CREATE ROLE {} LOGIN)",
                r.user, r.user
            ));
        }
        if let Some(hint) = tls_refusal_hint(r, db.message()) {
            return Error::Unreachable(format!(
                "PostgreSQL at {at} refused user {}: {}; {hint}",
                r.user,
                db.message()
            ));
        }
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            let hint = if r.password.is_some() {
                "check the password in ~/.pgpass, the service file, PGPASSWORD or GZA_DATABASE_URL"
                    .to_string()
            } else {
                no_password_hint(r)
            };
            return Error::Unreachable(format!(
                "PostgreSQL at {at} refused user {}: {}; {hint}",
                r.user,
                db.message()
            ));
        }
        if *code == SqlState::INVALID_CATALOG_NAME {
            return Error::Unreachable(format!(
                "PostgreSQL at {at} has no database {:?}; create it (createdb {}) or fix dbname",
                r.dbname, r.dbname
            ));
        }
        return Error::Unreachable(format!(
            "PostgreSQL at {at} refused the connection: {}",
            db.message()
        ));
    }
    let mut cause = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    if cause.contains("password missing") {
        return Error::Unreachable(format!(
            "PostgreSQL at {at} refused user {}: it asks for a password and none was given; {}",
            r.user,
            no_password_hint(r)
        ));
    }
    if cause.contains("server does not support TLS") {
        return Error::Unreachable(format!(
            "PostgreSQL at {at} does not offer TLS, and sslmode={} asks for it; turn on ssl in the server's postgresql.conf, or (on a network you trust) use sslmode=prefer or sslmode=disable",
            r.sslmode
        ));
    }
    if let Some(hint) = certificate_hint(r, &cause) {
        return Error::Unreachable(format!("PostgreSQL at {at}: {cause}; {hint}"));
    }
    Error::Unreachable(format!(
        "cannot reach PostgreSQL at {at}: {cause}; check that it runs and the database setting (or GZA_DATABASE_URL) names it"
    ))
}

/// What to do when the server refused the login for want of TLS or of a client certificate
/// (its `pg_hba.conf` said so): the password hints would send a person the wrong way.
fn tls_refusal_hint(r: &Resolved, message: &str) -> Option<String> {
    // PostgreSQL says "no encryption" of every connection its rules turned away without TLS:
    // a rule that asks for TLS, or none for this user, database and host at all.
    if message.contains("no encryption") || message.contains("SSL off") {
        return Some(if r.sslmode == "disable" {
            "no rule of the server's pg_hba.conf admits this user, database and host without TLS: if it asks for TLS, use sslmode=verify-full (with sslrootcert=FILE for a CA of your own) or sslmode=require; else have the server's owner add a rule for them".into()
        } else {
            "no rule of the server's pg_hba.conf admits this user, database and host (the server offered no TLS, so the connection was not encrypted): have the server's owner add a rule for them, or turn ssl on if its rules ask for TLS".into()
        });
    }
    if message.contains("requires a valid client certificate") {
        return Some(
            "the server takes this user only with a client certificate: give it and its key as sslcert=FILE&sslkey=FILE (or PGSSLCERT and PGSSLKEY)".into(),
        );
    }
    if message.contains("certificate authentication failed") {
        return Some(format!(
            "the client certificate {} is not this user's: its common name must be {} (or the server's pg_ident.conf must map it)",
            r.sslcert.as_deref().unwrap_or(Path::new("")).display(),
            r.user
        ));
    }
    None
}

/// What to do when TLS failed on a certificate (`cause`, the deepest error rustls gave).
fn certificate_hint(r: &Resolved, cause: &str) -> Option<String> {
    let roots = match &r.sslrootcert {
        Some(file) => format!("the CA in sslrootcert {}", file.display()),
        None => "the system's CAs".to_string(),
    };
    // rustls names the fault by its variant (`UnknownIssuer`) or, for some, in words
    // ("certificate not valid for name …", "certificate expired: …").
    if cause.contains("invalid peer certificate") {
        return Some(
            if cause.contains("UnknownIssuer") || cause.contains("BadSignature") {
                format!(
                    "the server's certificate is not signed by {roots}; give the CA that signed it as sslrootcert=FILE (or PGSSLROOTCERT)"
                )
            } else if cause.contains("NotValidForName") || cause.contains("not valid for name") {
                format!(
                    "the server's certificate does not name the host {}; connect by a name or address it holds",
                    r.host
                )
            } else if ["Expired", "expired", "NotValidYet", "not valid yet"]
                .iter()
                .any(|w| cause.contains(w))
            {
                "the server's certificate is out of its validity period; have its owner renew it (and check this machine's clock)".into()
            } else {
                format!(
                    "the server's certificate was refused when checked against {roots}; have its owner check it"
                )
            },
        );
    }
    // The alerts a server sends about the certificate it was given (not about protocols or
    // ciphers).
    let about_the_certificate = [
        "UnknownCA",
        "BadCertificate",
        "CertificateRequired",
        "CertificateUnknown",
        "DecryptError",
        "AccessDenied",
    ];
    if cause.contains("received fatal alert")
        && about_the_certificate.iter().any(|a| cause.contains(a))
        && r.sslcert.is_some()
    {
        return Some(format!(
            "the server refused the client certificate {}: it must be signed by a CA the server trusts (its ssl_ca_file)",
            r.sslcert.as_deref().unwrap_or(Path::new("")).display()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hints are matched on rustls's words as the locked version writes them (its
    /// variants for some faults, sentences for others), and an alert about a protocol is never
    /// blamed on the client certificate.
    #[test]
    fn certificate_faults_get_the_hint_that_fits_them() {
        let spec = DatabaseSpec::parse(
            "postgres://gza@db.internal:5432/gza?sslmode=verify-full&sslcert=/c.crt&sslkey=/c.key",
            None,
        )
        .unwrap();
        let r = resolve(&spec).unwrap();
        let hint = |cause: &str| certificate_hint(&r, cause).unwrap_or_default();
        let name = rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName);
        let named =
            rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext {
                expected: rustls::pki_types::ServerName::try_from("db.internal").unwrap(),
                presented: vec!["other.example".into()],
            });
        for e in [name, named] {
            assert!(
                hint(&e.to_string()).contains("does not name the host db.internal"),
                "{e}"
            );
        }
        let expired = rustls::Error::InvalidCertificate(rustls::CertificateError::Expired);
        assert!(
            hint(&expired.to_string()).contains("validity period"),
            "{expired}"
        );
        let issuer = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        assert!(hint(&issuer.to_string()).contains("not signed by the system's CAs"));
        let ca = rustls::Error::AlertReceived(rustls::AlertDescription::UnknownCA);
        assert!(hint(&ca.to_string()).contains("refused the client certificate /c.crt"));
        let protocol = rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion);
        assert_eq!(hint(&protocol.to_string()), "", "{protocol}");
    }

    #[test]
    fn password_file_fields_unescape_and_wildcards_match() {
        assert_eq!(
            pgpass_fields(r"db\:1:5432:*:gza:pa\:ss\\word"),
            ["db:1", "5432", "*", "gza", r"pa:ss\word"]
        );
    }

    #[test]
    fn a_service_section_is_read_until_the_next() {
        let text =
            "# team\n[other]\nhost=x\n[team]\nhost = db.internal\nport=5433\n\n[later]\nhost=y\n";
        assert_eq!(
            parse_service(text, "team").unwrap(),
            [
                ("host".to_string(), "db.internal".to_string()),
                ("port".to_string(), "5433".to_string())
            ]
        );
        assert!(parse_service(text, "missing").is_none());
    }

    #[test]
    fn new_schemas_are_identifiers_with_a_64_bit_hash_and_differ_per_name_and_attempt() {
        let a = new_schema_name("github.com/acme/app", 0);
        assert!(a.starts_with("gza_p_github_com_acme_app_"), "{a}");
        assert_eq!(a.rsplit('_').next().unwrap().len(), 16, "{a}");
        assert_ne!(a, new_schema_name("github.com/acme/App", 0));
        assert_ne!(a, new_schema_name("github.com/acme-app", 0));
        assert_ne!(a, new_schema_name("github.com/acme/app", 1));
        let long = new_schema_name(&"x".repeat(500), 7);
        assert!(long.len() <= 63, "{long}");
        assert!(long.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    }
}
