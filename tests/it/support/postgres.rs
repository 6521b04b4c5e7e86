//! A throwaway PostgreSQL cluster for one test run, and a database of its own for each test.
//!
//! The first test that asks starts the cluster: `initdb` into a temporary directory (as
//! `nobody` when the tests run as root, since PostgreSQL refuses to run as root), then the
//! server on a free loopback port with its socket in that directory, tuned for throwaway data
//! (no fsync). A watchdog process holds a pipe from this process: when the test process ends,
//! however it ends, the pipe closes and the watchdog stops the server and removes the directory.
//! Each test gets a database of its own (dropped with its project).
//!
//! The binaries come from `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`,
//! else PATH; scripts/test installs the distribution's `postgresql` when they are missing. A
//! machine without them fails the PostgreSQL tests with a line saying so; nothing is skipped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The running cluster.
pub struct Cluster {
    pub port: u16,
    _watchdog: Mutex<Child>,
    /// Its data directory, server binaries, and whether it runs as `nobody`: to restart it.
    data: PathBuf,
    bin: PathBuf,
    as_nobody: bool,
    /// The server's options (port, socket directory, tuning), for starting it again.
    options: String,
    /// A cluster of one test's own ([`Cluster::private`]): stopped and removed when dropped.
    private: Option<PathBuf>,
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();

/// The cluster of this test run, started on first use.
pub fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(|| start(None))
}

/// The directory of PostgreSQL's server binaries.
fn bindir() -> PathBuf {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return dir;
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .collect()
        })
        .unwrap_or_default();
    versions.retain(|d| d.join("initdb").exists());
    versions.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(dir) = versions.pop() {
        return dir;
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists());
    on_path.unwrap_or_else(|| {
        panic!(
            "PostgreSQL's server binaries (initdb, pg_ctl) are not installed: scripts/test installs the distribution's postgresql package"
        )
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `program args…`, as `nobody` when the tests run as root.
fn command(as_nobody: bool, program: &Path, args: &[&str]) -> Command {
    let mut cmd = if as_nobody {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args).env("LC_ALL", "C.UTF-8").env_remove("PGDATA");
    cmd
}

fn run(as_nobody: bool, program: &Path, args: &[&str]) {
    let out = command(as_nobody, program, args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// What a cluster that speaks TLS is given: its certificate and key, and the CA whose client
/// certificates it accepts (PEM), and `pg_hba.conf` rules put before all others.
pub struct ServerTls {
    pub cert_pem: String,
    pub key_pem: String,
    pub ca_pem: String,
    pub hba_rules: String,
}

fn start(tls: Option<&ServerTls>) -> Cluster {
    let bin = bindir();
    let as_nobody = is_root();
    // nobody must reach the directory: under /tmp, whatever TMPDIR says, when run as root.
    let base = if as_nobody {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    };
    let dir = tempfile::Builder::new()
        .prefix("gza-pg")
        .tempdir_in(base)
        .expect("a temporary directory")
        .keep();
    if as_nobody {
        // nobody owns the directory (and so may remove it, in a sticky /tmp, when done).
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).expect("chown to nobody");
    }
    let data = dir.join("data");
    run(
        as_nobody,
        &bin.join("initdb"),
        &[
            "-D",
            data.to_str().unwrap(),
            "-U",
            "gza",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ],
    );
    // A role with a password, for the tests of where passwords come from: it may log in over TCP
    // only with it (the rule comes before initdb's `trust` ones).
    let hba = data.join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
    let tls_rules = tls.map_or("", |t| t.hba_rules.as_str());
    std::fs::write(
        &hba,
        format!("{tls_rules}host all gza_secret 127.0.0.1/32 scram-sha-256\nlocal all gza_secret scram-sha-256\n{rules}"),
    )
    .expect("pg_hba.conf");
    let mut tls_options = String::new();
    if let Some(t) = tls {
        use std::os::unix::fs::PermissionsExt;
        for (name, pem) in [
            ("server.crt", &t.cert_pem),
            ("server.key", &t.key_pem),
            ("root.crt", &t.ca_pem),
        ] {
            let file = data.join(name);
            std::fs::write(&file, pem).expect("a TLS file of the server");
            // The server refuses a key others can read, and must own what it reads.
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
            if as_nobody {
                std::os::unix::fs::chown(&file, Some(65534), Some(65534)).expect("chown");
            }
        }
        tls_options = " -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key \
                       -c ssl_ca_file=root.crt"
            .to_string();
    }
    let mut last = String::new();
    for _ in 0..5 {
        let port = free_port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=500 -c shared_buffers=32MB{tls_options}",
            dir.display()
        );
        let out = command(
            as_nobody,
            &bin.join("pg_ctl"),
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                dir.join("server.log").to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .expect("pg_ctl runs");
        if !out.status.success() {
            last = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            continue;
        }
        // The watchdog: when this process ends, its end of the pipe closes; the server is
        // stopped and its directory removed.
        let script = format!(
            "read _; {} -D '{}' -m immediate stop >/dev/null 2>&1; rm -rf '{}'",
            bin.join("pg_ctl").display(),
            data.display(),
            dir.display()
        );
        let watchdog = command(as_nobody, Path::new("sh"), &["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the watchdog starts");
        let cluster = Cluster {
            port,
            _watchdog: Mutex::new(watchdog),
            data: data.clone(),
            bin: bin.clone(),
            as_nobody,
            options: options.clone(),
            private: None,
        };
        cluster
            .admin()
            .batch_execute("CREATE ROLE gza_secret LOGIN PASSWORD 'hunter2-for-tests' CREATEDB")
            .expect("the password role");
        return cluster;
    }
    panic!("the test PostgreSQL did not start: {last}");
}

impl Cluster {
    /// A cluster of the calling test's own, started as the shared one is (and stopped by the
    /// same watchdog should the test process end first): for a test that restarts its server,
    /// which would cut off every other test's connections on the shared one. Stopped and
    /// removed when dropped.
    pub fn private() -> Cluster {
        let mut cluster = start(None);
        cluster.private = cluster.data.parent().map(Path::to_path_buf);
        cluster
    }

    /// A cluster of the calling test's own that also speaks TLS ([`ServerTls`]).
    pub fn private_with_tls(tls: &ServerTls) -> Cluster {
        let mut cluster = start(Some(tls));
        cluster.private = cluster.data.parent().map(Path::to_path_buf);
        cluster
    }

    /// Restart the server (`pg_ctl restart`, fast shutdown: every session is ended, as in a
    /// failover or an upgrade), on the same port; returns once it accepts connections again.
    pub fn restart(&self) {
        run(
            self.as_nobody,
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                self.data.to_str().unwrap(),
                "-l",
                self.data
                    .parent()
                    .unwrap()
                    .join("server.log")
                    .to_str()
                    .unwrap(),
                "-w",
                "-t",
                "60",
                "-m",
                "fast",
                "restart",
            ],
        );
    }

    /// `pg_ctl` with `args` after this cluster's data directory and log.
    fn pg_ctl(&self, args: &[&str]) {
        let data = self.data.to_str().unwrap();
        let log = self.data.parent().unwrap().join("server.log");
        let mut all = vec!["-D", data, "-l", log.to_str().unwrap()];
        all.extend_from_slice(args);
        run(self.as_nobody, &self.bin.join("pg_ctl"), &all);
    }

    /// Begin a smart shutdown and return at once: the server refuses new connections ("the
    /// database system is shutting down") until the last open session ends, then stops.
    pub fn begin_smart_stop(&self) {
        self.pg_ctl(&["-W", "-m", "smart", "stop"]);
    }

    /// Wait for the server to have stopped, then start it again; returns once it accepts
    /// connections.
    pub fn start_again(&self) {
        let pid = self.data.join("postmaster.pid");
        let t = std::time::Instant::now();
        while pid.exists() {
            assert!(t.elapsed().as_secs() < 60, "the server did not stop");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self.pg_ctl(&["-w", "-t", "60", "-o", &self.options, "start"]);
    }

    /// A connection as the superuser to the `postgres` database.
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(
            &format!("host=127.0.0.1 port={} user=gza dbname=postgres", self.port),
            postgres::NoTls,
        )
        .expect("connect to the test cluster")
    }

    /// A new, empty database; returns its name.
    pub fn new_database(&self) -> String {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        self.admin()
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create a test database");
        name
    }

    /// A new, empty database owned by `role` (it may create the project's schema there).
    pub fn new_database_owned_by(&self, role: &str) -> String {
        let name = self.new_database();
        self.admin()
            .batch_execute(&format!("ALTER DATABASE {name} OWNER TO {role}"))
            .expect("give the test database to its role");
        name
    }

    /// The URL of database `name`, as the superuser (no password: trust on loopback).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://gza@127.0.0.1:{}/{name}", self.port)
    }

    /// Drop database `name`, disconnecting whoever is still connected.
    pub fn drop_database(&self, name: &str) {
        let _ = self
            .admin()
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(dir) = &self.private {
            let _ = command(
                self.as_nobody,
                &self.bin.join("pg_ctl"),
                &["-D", self.data.to_str().unwrap(), "-m", "immediate", "stop"],
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
