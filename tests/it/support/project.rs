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
        TestProject {
            root: root.canonicalize().unwrap(),
            home,
            _tmp: tmp,
            env: Vec::new(),
            normal_work: true,
        }
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

    /// Open the project's database directly, as a test oracle.
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path(".gza/gza.db")).unwrap()
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
    pub fn task_field<T: rusqlite::types::FromSql>(&self, id: i64, column: &str) -> T {
        self.db()
            .query_row(
                &format!("SELECT {column} FROM tasks WHERE id = ?1"),
                [id],
                |r| r.get(0),
            )
            .unwrap()
    }
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
