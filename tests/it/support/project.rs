//! A hermetic gza project in a temp directory, and running the real binary in it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A temp project that gza has been initialized in.
pub struct TestProject {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    env: Vec<(String, String)>,
    /// Whether runs get `GZA_WORK_PRIORITY=normal` (see [`TestProject::command`]).
    normal_work: bool,
    /// Its database in the test cluster, when the suite runs on PostgreSQL.
    pg_database: Option<String>,
}

/// Whether this run of the suite keeps projects in PostgreSQL (`GZA_TEST_BACKEND=postgres`,
/// set by scripts/test for its second pass) rather than SQLite.
pub fn on_postgres() -> bool {
    std::env::var("GZA_TEST_BACKEND").as_deref() == Ok("postgres")
}

impl Drop for TestProject {
    fn drop(&mut self) {
        if let Some(name) = &self.pg_database {
            super::postgres::cluster().drop_database(name);
        }
    }
}

/// What one run of gza did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    root: PathBuf,
}

impl TestProject {
    /// A fresh directory, not yet initialized.
    pub fn empty() -> TestProject {
        let tmp = tempfile::Builder::new()
            .prefix("gza-test")
            .tempdir()
            .unwrap();
        let root = tmp.path().join("proj");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let mut p = TestProject {
            root: root.canonicalize().unwrap(),
            home,
            _tmp: tmp,
            env: Vec::new(),
            normal_work: true,
            pg_database: None,
        };
        if on_postgres() {
            let cluster = super::postgres::cluster();
            let name = cluster.new_database();
            p.set_env("GZA_DATABASE_URL", &cluster.url(&name));
            p.pg_database = Some(name);
        }
        p
    }

    /// A fresh directory whose project keeps its records in SQLite whatever the suite's
    /// backend: for tests of the SQLite file itself (its journal, corruption, locks).
    pub fn empty_sqlite() -> TestProject {
        let mut p = TestProject::empty();
        p.env.retain(|(k, _)| k != "GZA_DATABASE_URL");
        if let Some(name) = p.pg_database.take() {
            super::postgres::cluster().drop_database(&name);
        }
        p
    }

    /// A fresh directory whose project keeps its records in a new database of the test
    /// PostgreSQL cluster, whatever the suite's backend (dropped with the project).
    pub fn empty_postgres() -> TestProject {
        let mut p = TestProject::empty_sqlite();
        let cluster = super::postgres::cluster();
        let name = cluster.new_database();
        p.set_env("GZA_DATABASE_URL", &cluster.url(&name));
        p.pg_database = Some(name);
        p
    }

    /// The name of this project's own PostgreSQL database, when it has one.
    pub fn pg_database(&self) -> Option<&str> {
        self.pg_database.as_deref()
    }

    /// A fresh directory (another clone, another repository) whose project keeps its records in
    /// the same database as `other`'s.
    pub fn empty_sharing(other: &TestProject) -> TestProject {
        let mut p = TestProject::empty_sqlite();
        for (k, v) in &other.env {
            if k == "GZA_DATABASE_URL" {
                p.set_env(k, v);
            }
        }
        p
    }

    /// A project after `gza init`, on SQLite whatever the suite's backend.
    pub fn new_sqlite() -> TestProject {
        let p = TestProject::empty_sqlite();
        p.ok(&["init"]);
        p
    }

    /// The variables that name the project's database (none on SQLite), for programs a test
    /// starts itself: an agent CLI run as a person would, whose hooks start gza.
    pub fn database_env(&self) -> Vec<(String, String)> {
        self.env
            .iter()
            .filter(|(k, _)| k == "GZA_DATABASE_URL")
            .cloned()
            .collect()
    }

    /// The database the project's records are in.
    pub fn database(&self) -> gza::database::Database {
        self.database_at(&self.root)
    }

    /// The database of the project at `root` (this one, or one nested in it).
    fn database_at(&self, root: &Path) -> gza::database::Database {
        match self.env.iter().find(|(k, _)| k == "GZA_DATABASE_URL") {
            Some((_, url)) => gza::database::Database::Postgres {
                spec: Box::new(gza::database::DatabaseSpec::parse(url, None).unwrap()),
                project: std::fs::read_to_string(root.join(".gza/project"))
                    .map(|n| n.trim().to_string())
                    .unwrap_or_else(|_| gza::database::default_project_name(root)),
            },
            None => gza::database::Database::Sqlite(root.join(".gza/gza.db")),
        }
    }

    /// The oracle of the project nested at `rel` in this one.
    pub fn db_at(&self, rel: &str) -> TestDb {
        TestDb {
            store: gza::store::Store::open_database(&self.database_at(&self.path(rel)))
                .unwrap_or_else(|e| panic!("open the nested project's database: {e}")),
        }
    }

    /// Remove the project's database as a person might: the SQLite file, or the project's
    /// schema in PostgreSQL (and its name in the registry).
    pub fn remove_database(&self) {
        if self.database_env().is_empty() {
            std::fs::remove_file(self.path(".gza/gza.db")).unwrap();
            return;
        }
        let db = self.db();
        let schema = db.store.status().unwrap().schema.unwrap();
        db.execute_batch(&format!(
            "DROP SCHEMA {schema} CASCADE; DELETE FROM gza.projects WHERE schema_name = '{schema}'"
        ))
        .unwrap();
    }

    /// Whether the project's database exists (the SQLite file, or its schema).
    pub fn database_exists(&self) -> bool {
        if self.database_env().is_empty() {
            self.path(".gza/gza.db").exists()
        } else {
            gza::store::Store::open_database(&self.database()).is_ok()
        }
    }

    /// Every text value in every table of the project's database (whichever backend), for
    /// "nothing of this is stored" checks.
    pub fn database_text(&self) -> String {
        let db = self.db();
        let list = if db.is_postgres() {
            "SELECT CAST(table_name AS TEXT) FROM information_schema.tables \
             WHERE table_schema = current_schema()"
        } else {
            "SELECT name FROM sqlite_master WHERE type = 'table'"
        };
        let tables: Vec<String> = db
            .prepare(list)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut all = String::new();
        for table in tables {
            // PostgreSQL's search index (V7) is a tsvector, which the query layer reads as text.
            let columns = if db.is_postgres() {
                let names: Vec<String> = db
                    .prepare(
                        "SELECT CASE WHEN data_type = 'tsvector' \
                           THEN 'CAST(\"' || column_name || '\" AS TEXT)' \
                           ELSE '\"' || column_name || '\"' END \
                         FROM information_schema.columns \
                         WHERE table_schema = current_schema() AND table_name = ?1 \
                         ORDER BY ordinal_position",
                    )
                    .unwrap()
                    .query_map([&table], |r| r.get(0))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                names.join(", ")
            } else {
                "*".to_string()
            };
            let rows: Vec<Vec<String>> = db
                .prepare(&format!("SELECT {columns} FROM \"{table}\""))
                .unwrap()
                .query_map([], |r| {
                    let mut texts = Vec::new();
                    for i in 0..r.column_count() {
                        match r.value(i)? {
                            gza::store::db::Val::Text(t) => texts.push(t.to_string()),
                            gza::store::db::Val::Blob(b) => {
                                texts.push(String::from_utf8_lossy(b).into_owned())
                            }
                            _ => {}
                        }
                    }
                    Ok(texts)
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for text in rows.into_iter().flatten() {
                all.push_str(&text);
                all.push('\n');
            }
        }
        all
    }

    /// A project after `gza init`.
    pub fn new() -> TestProject {
        let p = TestProject::empty();
        p.ok(&["init"]);
        p
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Wait until no background job of this project runs ([`wait_for_background_jobs`]).
    pub fn settle(&self) {
        wait_for_background_jobs(&self.root, 180);
    }

    /// What no machine may leak into a test: its git configuration (the global and system
    /// files) and its temporary directory.
    fn hermetic(&self, cmd: &mut std::process::Command) {
        let tmp = self.home.with_file_name("tmp");
        let _ = std::fs::create_dir_all(&tmp);
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TMPDIR", tmp);
    }

    /// The HOME every run gets.
    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Set an environment variable for every later run.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.push((key.into(), value.into()));
    }

    /// Run without `key` in the environment gza is given.
    pub fn unset_env(&mut self, key: &str) {
        self.env.retain(|(k, _)| k != key);
    }

    /// Leave `work_priority` to gza's default (`background`: gza work in a session of its own,
    /// lowered) instead of the suite's `normal`.
    pub fn keep_default_work_priority(&mut self) {
        self.normal_work = false;
    }

    /// A command for the gza binary with a cleared, fixed environment, run in the project.
    ///
    /// `gza work` runs with `work_priority: normal` unless the test asks for the default: the
    /// suite's other threads (Claude Code and Codex CLIs, builds) are exactly the kind of work a
    /// `background` gza work yields to, and its agents' start-up would then race the tests'
    /// timeouts. The tests in `work.rs` that are about the priority keep the default.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gza"));
        cmd.args(args)
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .env("TZ", "UTC")
            .env("LANG", "C.UTF-8")
            .stdin(std::process::Stdio::null());
        self.hermetic(&mut cmd);
        if self.normal_work {
            cmd.env("GZA_WORK_PRIORITY", "normal");
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Run the hook handler `name` with `input` on stdin, as an agent CLI would; it must exit
    /// 0 (a hook never breaks a session). Returns its stdout.
    pub fn hook(&self, name: &str, input: &serde_json::Value) -> String {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .command(&["hook", name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "hook {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run `gza args` to its end and return its exit code, stdout, stderr and its own peak
    /// resident memory in KiB. It is started by a small Python parent, not by the test binary:
    /// Linux keeps the high-water mark of the memory a process had before `exec` in its
    /// `ru_maxrss`, so a child of the suite's binary (hundreds of MB while tests run in
    /// parallel) would report the binary's size instead of gza's.
    pub fn run_measuring_rss(&self, args: &[&str]) -> (Option<i32>, String, String, u64) {
        const PARENT: &str = "import resource, subprocess, sys\n\
r = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, capture_output=True)\n\
sys.stdout.buffer.write(r.stdout)\n\
sys.stderr.buffer.write(r.stderr)\n\
sys.stderr.write('\\nGZA-PEAK-KIB %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n\
sys.exit(r.returncode if r.returncode >= 0 else 128 - r.returncode)\n";
        let gza = self.command(args);
        let mut cmd = std::process::Command::new("python3");
        cmd.arg("-c")
            .arg(PARENT)
            .arg(gza.get_program())
            .args(gza.get_args());
        cmd.env_clear();
        for (k, v) in gza.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        if let Some(dir) = gza.get_current_dir() {
            cmd.current_dir(dir);
        }
        let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let (stderr, peak) = match stderr.rsplit_once("\nGZA-PEAK-KIB ") {
            Some((text, peak)) => (text.to_string(), peak.trim().parse().unwrap()),
            None => panic!("the measuring parent did not report: {stderr}"),
        };
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr,
            peak,
        )
    }

    /// Let every worker's lease lapse, on the database's clock (its heartbeat 1000 s back), as
    /// when a worker is cut off from the database or its machine sleeps: another worker may now
    /// reap its tasks, and the worker itself finds its lease gone when it comes back.
    pub fn lapse_worker_leases(&self) {
        self.db()
            .execute(
                "UPDATE worker_leases SET heartbeat_at = heartbeat_at - 1000",
                [],
            )
            .unwrap();
    }

    /// Start `gza args` without waiting, its stdout and stderr piped.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.command(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().expect("gza runs");
        self.finish(out)
    }

    pub fn finish(&self, out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            root: self.root.clone(),
        }
    }

    /// Run and insist on success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let run = self.run(args);
        assert_eq!(run.code, 0, "gza {args:?} failed:\n{run}");
        run.stdout
    }

    /// Run gza under `timeout -s KILL secs`, so a hang fails the test in `secs` instead of
    /// stalling the suite; its stdin is `stdin` (a file, a device) or nothing. Fails the test
    /// when it was still running then; returns the run and how long it took.
    pub fn run_within(
        &self,
        secs: u64,
        args: &[&str],
        stdin: Option<&Path>,
    ) -> (Run, std::time::Duration) {
        let gza = self.command(args);
        let mut cmd = std::process::Command::new("timeout");
        cmd.arg("-s")
            .arg("KILL")
            .arg(secs.to_string())
            .arg(gza.get_program())
            .args(gza.get_args());
        cmd.env_clear();
        for (k, v) in gza.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        if let Some(dir) = gza.get_current_dir() {
            cmd.current_dir(dir);
        }
        cmd.stdin(match stdin {
            Some(path) => std::process::Stdio::from(std::fs::File::open(path).unwrap()),
            None => std::process::Stdio::null(),
        });
        let started = std::time::Instant::now();
        let run = self.finish(cmd.output().unwrap());
        let took = started.elapsed();
        assert!(
            ![-1, 137].contains(&run.code),
            "gza {args:?} was still running after {secs} s:\n{run}"
        );
        (run, took)
    }

    /// [`Self::user_error`] for input that once made gza block (a FIFO, a device, stdin with no
    /// end): gza runs under `timeout` ([`Self::run_within`]).
    pub fn user_error_within(&self, secs: u64, args: &[&str], stdin: Option<&Path>) -> String {
        let (run, _) = self.run_within(secs, args, stdin);
        assert_eq!(run.code, 1, "gza {args:?} should fail with 1:\n{run}");
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "one-line error expected:\n{run}"
        );
        assert!(run.stderr.starts_with("Error: "), "{run}");
        run.normalized_stderr()
    }

    /// Run and insist on the user-error exit code 1 with a one-line message; returns it.
    pub fn user_error(&self, args: &[&str]) -> String {
        let run = self.run(args);
        assert_eq!(run.code, 1, "gza {args:?} should fail with 1:\n{run}");
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "one-line error expected:\n{run}"
        );
        assert!(run.stderr.starts_with("Error: "), "{run}");
        run.normalized_stderr()
    }

    /// Add a task and return its id.
    pub fn add(&self, args: &[&str]) -> i64 {
        let mut all = vec!["add", "-q"];
        all.extend_from_slice(args);
        self.ok(&all).trim().parse().expect("add -q prints the id")
    }

    /// Give gza the sentence-embedding model (tests otherwise run without one).
    pub fn use_model(&mut self) {
        let dir = super::model::model_dir();
        self.set_env("GZA_MODEL_DIR", &dir.to_string_lossy());
    }

    /// Open the project's database directly, as a test oracle: the same SQL on either
    /// backend (`?1` parameters, as in gza's own queries).
    pub fn db(&self) -> TestDb {
        TestDb {
            store: gza::store::Store::open_database(&self.database())
                .unwrap_or_else(|e| panic!("open the project's database: {e}")),
        }
    }

    /// Everything stored about every task, for "nothing changed" checks.
    pub fn dump(&self) -> String {
        self.ok(&["history", "-n", "0", "--json"])
    }

    /// The JSON gza prints for `args`.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.ok(args)).expect("valid JSON")
    }
}

impl Run {
    fn normalize(&self, text: &str) -> String {
        let root = self.root.display().to_string();
        let text = text.replace(&root, "[PROJECT]");
        normalize_times(&text)
    }

    pub fn normalized_stderr(&self) -> String {
        self.normalize(&self.stderr)
    }
}

/// Replace `2026-11-22T07:50:09Z` and `2026-11-22 07:50` with `[TIME]`, so snapshots are stable.
pub fn normalize_times(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let digit = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
    while i < b.len() {
        let date = (0..4).all(|k| digit(i + k))
            && b.get(i + 4) == Some(&b'-')
            && digit(i + 5)
            && digit(i + 6)
            && b.get(i + 7) == Some(&b'-')
            && digit(i + 8)
            && digit(i + 9);
        let time = date
            && matches!(b.get(i + 10), Some(b'T' | b' '))
            && digit(i + 11)
            && digit(i + 12)
            && b.get(i + 13) == Some(&b':')
            && digit(i + 14)
            && digit(i + 15);
        if time {
            let mut end = i + 16;
            if b.get(end) == Some(&b':') && digit(end + 1) && digit(end + 2) {
                end += 3;
            }
            if b.get(end) == Some(&b'Z') {
                end += 1;
            }
            out.push_str("[TIME]");
            i = end;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.code,
            self.normalize(&self.stdout),
            self.normalize(&self.stderr)
        )
    }
}

impl TestProject {
    /// A project inside a git repository with one commit.
    pub fn in_git_repo() -> TestProject {
        let p = TestProject::empty();
        p.git(&["init", "--quiet", "--initial-branch=main"]);
        std::fs::write(p.path("README.md"), "# test repo\n").unwrap();
        p.ok(&["init"]);
        p.git(&["add", "--all"]);
        p.git(&["commit", "--quiet", "-m", "initial"]);
        p
    }

    /// Run git in the project; returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let mut cmd = std::process::Command::new("git");
        cmd.arg("-C")
            .arg(&self.root)
            .args(["-c", "user.name=Test", "-c", "user.email=test@localhost"])
            .args(args);
        self.hermetic(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Whether git succeeds in the project (for checks whose answer is the exit status).
    pub fn git_ok(&self, args: &[&str]) -> bool {
        let mut cmd = std::process::Command::new("git");
        cmd.arg("-C").arg(&self.root).args(args);
        self.hermetic(&mut cmd);
        cmd.output().unwrap().status.success()
    }

    /// Write gza.yaml as the person who owns the project would: and trust what it sets (an
    /// agent command, say), as they would with `gza trust --yes`. A file gza cannot read is left
    /// untrusted: the next command reports it.
    pub fn config(&self, yaml: &str) {
        self.config_untrusted(yaml);
        let _ = self.command(&["trust", "--yes"]).output();
    }

    /// Write gza.yaml as a repository the person cloned would bring it: not trusted.
    pub fn config_untrusted(&self, yaml: &str) {
        std::fs::write(self.path("gza.yaml"), yaml).unwrap();
    }

    /// Use a shell script (kept outside the project) as the `command` agent, plus `extra` YAML.
    pub fn command_agent(&self, script: &str, extra: &str) {
        let path = self.agent_script(script);
        self.config(&format!(
            "provider: command\nproviders:\n  command:\n    command: [sh, {path}]\n{extra}"
        ));
    }

    /// Save a shell script outside the project; returns its path quoted for YAML.
    pub fn agent_script(&self, script: &str) -> String {
        let n = self.home.read_dir().unwrap().count();
        let path = self.home.join(format!("agent-{n}.sh"));
        std::fs::write(&path, script).unwrap();
        serde_json::to_string(&path.to_string_lossy()).unwrap()
    }

    /// A directory outside the project for test files.
    pub fn scratch(&self) -> &Path {
        &self.home
    }

    /// One column of a task row.
    pub fn task_field<T: gza::store::db::FromVal>(&self, id: i64, column: &str) -> T {
        self.db()
            .query_row(
                &format!("SELECT {column} FROM tasks WHERE id = ?1"),
                [id],
                |r| r.get(0),
            )
            .unwrap()
    }
}

/// Wait (up to `secs`) until no background job of this project (`gza -C ROOT hook embed`, which
/// commands and hooks start detached) is running. `spawn` returns only after the job's exec, so
/// a job a command started is seen here even before it takes its lock: a test that changes
/// the files a job rewrites (the snapshot, the index) waits here first, or the job may undo
/// the change at any later instant.
pub fn wait_for_background_jobs(root: &Path, secs: u64) {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let running = || {
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return false;
        };
        procs.flatten().any(|e| {
            let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
                return false;
            };
            let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            let is_job = args.windows(2).any(|w| w == [&b"hook"[..], &b"embed"[..]]);
            is_job
                && args.windows(2).any(|w| {
                    w[0] == b"-C"
                        && std::fs::canonicalize(
                            <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(w[1]),
                        )
                        .is_ok_and(|r| r == root)
                })
        })
    };
    wait_until(secs, "the project's background job to end", || !running());
}

/// Poll `cond` every 50 ms until it holds or `secs` pass.
pub fn wait_until(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// True if process `pid` exists (and is not a zombie).
pub fn process_alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s[s.rfind(')').unwrap() + 2..].chars().next().unwrap();
            state != 'Z'
        })
        .unwrap_or(false)
}

/// A project's database as a test oracle: a few of rusqlite's calls (so a test reads the same
/// whichever backend it runs on), through gza's own query layer. Parameters are rusqlite's
/// (`rusqlite::params![…]`, `[a, b]`); rows are read with `r.get(i)`.
pub struct TestDb {
    store: gza::store::Store,
}

/// A value bound to an oracle query, taken from a rusqlite parameter.
pub enum Owned {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl gza::store::db::ToParam for Owned {
    fn param(&self) -> gza::store::db::Param<'_> {
        use gza::store::db::Param;
        match self {
            Owned::Null => Param::Null,
            Owned::Int(i) => Param::Int(*i),
            Owned::Real(f) => Param::Real(*f),
            Owned::Text(t) => Param::Text(t),
            Owned::Blob(b) => Param::Blob(b),
        }
    }
}

fn owned(p: &dyn rusqlite::ToSql) -> Owned {
    use rusqlite::types::{ToSqlOutput, Value, ValueRef};
    let value = match p.to_sql().expect("a parameter") {
        ToSqlOutput::Borrowed(v) => v.into(),
        ToSqlOutput::Owned(v) => v,
        other => panic!("an oracle parameter of an unexpected kind: {other:?}"),
    };
    let _: Option<ValueRef> = None;
    match value {
        Value::Null => Owned::Null,
        Value::Integer(i) => Owned::Int(i),
        Value::Real(f) => Owned::Real(f),
        Value::Text(t) => Owned::Text(t),
        Value::Blob(b) => Owned::Blob(b),
    }
}

/// Parameters of an oracle query, as rusqlite takes them.
pub trait TestParams {
    fn owned(&self) -> Vec<Owned>;
}

impl TestParams for &[&dyn rusqlite::ToSql] {
    fn owned(&self) -> Vec<Owned> {
        self.iter().map(|p| owned(*p)).collect()
    }
}

impl TestParams for [&(dyn rusqlite::ToSql + Send + Sync); 0] {
    fn owned(&self) -> Vec<Owned> {
        Vec::new()
    }
}

macro_rules! array_params {
    ($($n:literal),*) => {$(
        impl<T: rusqlite::ToSql> TestParams for [T; $n] {
            fn owned(&self) -> Vec<Owned> {
                self.iter().map(|p| owned(p)).collect()
            }
        }
        impl<T: rusqlite::ToSql> TestParams for &[T; $n] {
            fn owned(&self) -> Vec<Owned> {
                self.iter().map(|p| owned(p)).collect()
            }
        }
    )*};
}
array_params!(1, 2, 3, 4, 5, 6);

fn refs(values: &[Owned]) -> Vec<&dyn gza::store::db::ToParam> {
    values
        .iter()
        .map(|v| v as &dyn gza::store::db::ToParam)
        .collect()
}

pub type DbResult<T> = gza::store::db::DbResult<T>;
pub use gza::store::db::Row;

impl TestDb {
    pub fn execute(&self, sql: &str, params: impl TestParams) -> DbResult<usize> {
        let values = params.owned();
        self.store.db().execute(sql, &refs(&values))
    }

    pub fn query_row<T>(
        &self,
        sql: &str,
        params: impl TestParams,
        f: impl FnOnce(&Row) -> DbResult<T>,
    ) -> DbResult<T> {
        let values = params.owned();
        self.store.db().query_row(sql, &refs(&values), f)
    }

    /// Statements without parameters. `BEGIN IMMEDIATE` (a writer holding the lock) is, on
    /// PostgreSQL, `BEGIN` and the project's write lock, as gza's own writers take it.
    pub fn execute_batch(&self, sql: &str) -> DbResult<()> {
        match self.store.db().write_lock_sql() {
            Some(lock) if sql.trim() == "BEGIN IMMEDIATE" => {
                self.store.db().batch(&format!("BEGIN; {lock}"))
            }
            _ => self.store.db().batch(sql),
        }
    }

    pub fn prepare(&self, sql: &str) -> DbResult<TestStatement<'_>> {
        Ok(TestStatement {
            db: self,
            sql: sql.to_string(),
        })
    }

    /// Which backend the project is on.
    pub fn is_postgres(&self) -> bool {
        self.store.backend() == gza::store::Backend::Postgres
    }
}

/// A statement of an oracle query, run as rusqlite's are.
pub struct TestStatement<'a> {
    db: &'a TestDb,
    sql: String,
}

impl TestStatement<'_> {
    pub fn query_map<T>(
        &mut self,
        params: impl TestParams,
        f: impl FnMut(&Row) -> DbResult<T>,
    ) -> DbResult<std::vec::IntoIter<DbResult<T>>> {
        let values = params.owned();
        let rows = self.db.store.db().query_map(&self.sql, &refs(&values), f)?;
        Ok(rows.into_iter().map(Ok).collect::<Vec<_>>().into_iter())
    }

    pub fn execute(&mut self, params: impl TestParams) -> DbResult<usize> {
        self.db.execute(&self.sql, params)
    }
}
