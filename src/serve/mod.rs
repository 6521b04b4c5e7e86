//! `gza serve`: the dashboard. An axum server on a tokio runtime, in the binary, rendering HTML
//! on the server with maud (which escapes every interpolated value), with one small embedded
//! script for live updates over Server-Sent Events and the few confirmations, and one embedded
//! stylesheet. Nothing is built with Node and nothing is fetched from elsewhere.
//!
//! Rooms: `security` (the bind rules, the access token, the Host check, CSRF, the response
//! headers), `hub` (one poller that watches the database and the logs and fans what changed out
//! to every open page), `db` (the store connections, used off the async threads), `pages` (the
//! handlers and their HTML), `charts` (server-side SVG), `assets` (the embedded files).
//!
//! Every action a page offers calls the same function the command line calls
//! ([`crate::actions`]), so a page and a command can never disagree.

mod assets;
mod charts;
mod db;
mod hub;
mod pages;
mod security;

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use clap::Args;

use crate::cli::{Context, output, usage};
use crate::project::Project;

pub use security::{TOKEN_FILE_NAME, token_path};

/// The address `gza serve` binds when none is given: loopback only, a fixed port.
pub const DEFAULT_BIND: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 4920);

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on, HOST:PORT (default 127.0.0.1:4920; port 0 picks a free one).
    /// An address other than loopback needs the access token (`--new-token`).
    #[arg(long, value_name = "HOST:PORT")]
    bind: Option<String>,
    /// Show everything, change nothing: no page can add, retry, kill, delete or curate.
    #[arg(long)]
    read_only: bool,
    /// Ask for the kept access token (`gza serve --new-token`) on loopback too, instead of
    /// this run's sign-in code.
    #[arg(long)]
    token: bool,
    /// On loopback, ask nobody to sign in. Any process of this machine can then act as you on
    /// 127.0.0.1, a sandboxed agent among them (it shares the network to reach its model).
    #[arg(long, conflicts_with = "token")]
    no_token: bool,
    /// A host name (besides the bound address) the dashboard answers to, when it is reached
    /// through a name (repeatable). Requests naming any other host are refused.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// Make a new access token for binding beyond loopback: it is printed once and only its
    /// hash is kept (in ~/.gza/serve-token, mode 0600). Any earlier token stops working.
    #[arg(long, conflicts_with_all = ["bind", "read_only", "allow_hosts", "token", "no_token"])]
    new_token: bool,
}

/// What the server is, once its settings are checked.
pub(crate) struct App {
    pub project: Project,
    pub read_only: bool,
    pub security: security::Security,
    pub db: db::Db,
    pub hub: hub::Hub,
    /// Set when the server stops: open event streams end, so the graceful shutdown need not
    /// wait for pages that would keep listening for ever.
    pub closing: tokio::sync::watch::Sender<bool>,
}

pub fn cmd_serve(ctx: &Context, args: ServeArgs) -> anyhow::Result<()> {
    if args.new_token {
        let token = security::new_token()?;
        let mut out = output::stdout();
        writeln!(out, "{token}")?;
        writeln!(
            output::stderr(),
            "{} this is the only time the token is shown; keep it (a password manager). Only its hash is kept in {}. `gza serve --bind ADDRESS:PORT` needs it in the browser.",
            output::paint(output::YELLOW, "note:"),
            security::token_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "~/.gza/serve-token".into())
        )?;
        return Ok(());
    }
    let bind = match &args.bind {
        Some(text) => parse_bind(text)?,
        None => DEFAULT_BIND,
    };
    // An address beyond loopback is refused unless a token exists, before anything listens.
    // On loopback a browser signs in with a code made for this run, printed once: a sandboxed
    // agent shares this machine's network, and must not act as the person who runs gza serve.
    let access = if !bind.ip().is_loopback() || args.token {
        security::Access::Kept(security::load_token_hash(bind)?)
    } else if args.no_token {
        security::Access::Open
    } else {
        security::Access::new_run_code()?
    };
    let project = ctx.project()?;
    // Fail now, in one line, on a missing or broken database rather than on the first page.
    let db = db::Db::open(&project, args.read_only)?;
    let listener = std::net::TcpListener::bind(bind).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => usage(format!(
            "{bind} is in use (another gza serve?); pass --bind {}:0 for a free port",
            bind.ip()
        )),
        std::io::ErrorKind::AddrNotAvailable => usage(format!(
            "{} is not an address of this machine; pass --bind with one that is, e.g. 127.0.0.1:{}",
            bind.ip(),
            bind.port()
        )),
        std::io::ErrorKind::PermissionDenied => usage(format!(
            "listening on {bind} is not permitted; ports below 1024 need privileges: pick another"
        )),
        _ => anyhow::Error::new(e).context(format!("cannot listen on {bind}")),
    })?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let security = security::Security::new(local, &args.allow_hosts, &access)?;
    let url = security.url();
    // The first line is the address really served (port 0 resolved), for people and scripts;
    // the second, with this run's code, the address that signs a browser in.
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{url}")?;
        if let security::Access::Run(code) = &access {
            writeln!(out, "{url}login?token={code}")?;
        }
        out.flush()?;
    }
    let mut notes = Vec::new();
    if args.read_only {
        notes.push("read-only: pages show everything and change nothing".to_string());
    }
    match &access {
        security::Access::Run(_) => notes.push(
            "open the second address to sign in (its code holds until gza serve stops; scripts send it as `Authorization: Bearer CODE`): other processes of this machine, agents among them, cannot act as you without it"
                .into(),
        ),
        security::Access::Kept(_) => notes.push(format!(
            "the access token is required: a browser signs in once at {url}login with the token from `gza serve --new-token`"
        )),
        security::Access::Open => notes.push(
            "--no-token: any process of this machine, an agent among them, can act as you here"
                .into(),
        ),
    }
    notes.push("Ctrl-C stops it".into());
    for note in notes {
        let _ = writeln!(
            output::stderr(),
            "{} {note}",
            output::paint(output::DIM, "note:")
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_all()
        .thread_name("gza-serve")
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let app = Arc::new(App {
            hub: hub::Hub::new(),
            project,
            read_only: args.read_only,
            security,
            db,
            closing: tokio::sync::watch::Sender::new(false),
        });
        let poller = tokio::spawn(hub::run_poller(app.clone()));
        let router = pages::router(app.clone());
        let closing = app.clone();
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                shutdown_signal().await;
                closing.closing.send_replace(true);
            })
            .await;
        poller.abort();
        served
    })?;
    Ok(())
}

/// `HOST:PORT`, where HOST is an IP address or `localhost` (loopback); `[::1]:PORT` for IPv6.
fn parse_bind(text: &str) -> anyhow::Result<SocketAddr> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(usage(format!(
        "--bind {:?} is not HOST:PORT with an IP address (127.0.0.1:4920, 0.0.0.0:8080, [::1]:4920; port 0 picks a free one)",
        output::one_line(text, 60)
    )))
}

/// Ctrl-C or SIGTERM: stop taking requests, let the ones under way finish.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bind_is_an_ip_and_a_port() {
        assert_eq!(
            parse_bind("127.0.0.1:0").unwrap(),
            "127.0.0.1:0".parse().unwrap()
        );
        assert_eq!(
            parse_bind("localhost:4920").unwrap(),
            "127.0.0.1:4920".parse().unwrap()
        );
        assert_eq!(parse_bind("[::1]:80").unwrap(), "[::1]:80".parse().unwrap());
        for bad in ["example.com:80", "127.0.0.1", ":80", "127.0.0.1:99999", ""] {
            assert!(parse_bind(bad).is_err(), "{bad}");
        }
    }
}
