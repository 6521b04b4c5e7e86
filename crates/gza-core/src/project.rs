//! Where a gza project lives on disk, and the paths of its runtime files.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::error::{Error, Result};

/// File name of the project configuration, at the project root.
pub const CONFIG_FILE: &str = "gza.yaml";
/// Directory holding gza's runtime state, at the project root.
pub const STATE_DIR: &str = ".gza";

/// A located gza project: its root directory and loaded configuration.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub config: Config,
    /// Settings of gza.yaml left out until the person trusts them (see [`crate::trust`]).
    pub ignored_settings: Vec<String>,
    /// Path settings from an untrusted gza.yaml, confined to the project where they are used.
    pub confined_settings: std::collections::BTreeSet<String>,
    /// One line per `GZA_*` variable of the environment gza does not read (a misspelling).
    pub unknown_env: Vec<String>,
    /// [`Project::recorded_project_name`], read once per process (it may ask git).
    recorded_name: std::sync::OnceLock<Option<String>>,
}

/// The one entry of `.gza/` that may be a link: learnings.md, which is committed, may link
/// inside the project (its readers confine it, and gza replaces it rather than writing through
/// it). Every other entry is gza's state, which no link a repository committed may send
/// elsewhere: a list of the entries gza writes missed one (`sandbox`, whose sweep deleted
/// through a committed link), so none is listed.
const LINK_ALLOWED: &str = "learnings.md";

impl Project {
    /// A project at `root` with `config`, nothing in it ignored or confined for want of trust.
    pub fn new(root: PathBuf, config: Config) -> Project {
        Project {
            root,
            config,
            ignored_settings: Vec::new(),
            confined_settings: Default::default(),
            unknown_env: Vec::new(),
            recorded_name: Default::default(),
        }
    }

    /// Find the project containing `start` (the nearest ancestor holding gza.yaml) and load its config.
    pub fn discover(start: &Path) -> Result<Project> {
        let start = std::path::absolute(start).map_err(|e| Error::io(start, "resolve", e))?;
        // The nearest gza.yaml entry of any kind decides: one that is not a usable file (a FIFO,
        // a directory, a dangling link) is an error, never a reason to climb on and act on a
        // parent project instead.
        let root = start
            .ancestors()
            .find(|dir| std::fs::symlink_metadata(dir.join(CONFIG_FILE)).is_ok())
            .ok_or_else(|| Error::NotInitialized(start.clone()))?
            .to_path_buf();
        check_config_entry(&root)?;
        check_state_dir(&root)?;
        let effective = crate::settings::load(&root)?;
        Ok(Project {
            root,
            config: effective.config,
            ignored_settings: effective.ignored,
            confined_settings: effective.confined,
            unknown_env: effective.unknown_env,
            recorded_name: Default::default(),
        })
    }

    /// The path a path setting (`key`, whose value is `value`) names, relative to the project
    /// root. A value from an untrusted gza.yaml must lead inside the project: otherwise the
    /// error names the key and the file, and the caller reads and writes nothing.
    pub fn setting_path(&self, key: &str, value: &Path) -> Result<PathBuf> {
        if self.confined_settings.contains(key) {
            crate::confine::inside_or_error(
                &self.root,
                value,
                key,
                &self.root.join(CONFIG_FILE),
                "Set it in gza.local.yaml or ~/.gza/config.yaml if it should lead there, or run \
                 `gza trust` to accept the repository's value.",
            )
        } else {
            Ok(self.root.join(value))
        }
    }

    /// The `.gza/` directory.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    /// The SQLite database.
    pub fn db_path(&self) -> PathBuf {
        self.state_dir().join("gza.db")
    }

    /// Where the project's records are: `GZA_DATABASE_URL`, else the `database` setting, else
    /// the SQLite file; in a shared database, under the `project` setting's name or the
    /// normalised URL of `origin`.
    pub fn database(&self) -> Result<crate::database::Database> {
        use crate::database::{Database, DatabaseSpec, URL_ENV};
        let from_env = std::env::var(URL_ENV).ok().filter(|v| !v.trim().is_empty());
        let value = from_env.clone().or_else(|| self.config.database.clone());
        let Some(value) = value.filter(|v| !crate::config::is_sqlite(v)) else {
            return Ok(Database::Sqlite(self.db_path()));
        };
        let spec = DatabaseSpec::parse(&value, None).map_err(|e| match from_env {
            Some(_) => Error::Usage(format!("{URL_ENV}: {e}")),
            None => Error::Config {
                path: self.root.join(CONFIG_FILE),
                location: None,
                message: format!("database: {e}"),
            },
        })?;
        Ok(Database::Postgres {
            spec: Box::new(spec),
            project: self.shared_name(),
        })
    }

    /// The project's name in a shared database: the `project` setting, else the name this
    /// clone recorded when it first used one, else `origin`'s URL normalised.
    pub fn shared_name(&self) -> String {
        use crate::database::default_project_name;
        match &self.config.project {
            Some(name) => name.trim().to_string(),
            None => self
                .recorded_project_name()
                .unwrap_or_else(|| default_project_name(&self.root)),
        }
    }

    /// The name `origin` gives the project, when this clone is still under the name a
    /// repository without `origin` gets (`file://<host><path>`, recorded in `.gza/project` when
    /// it first used the shared database) and `origin` has been added since: the other clones
    /// use that name, this one does not. The recorded name is kept (what was made under it is
    /// there), so `gza db status` says so instead. Asks git only for such a clone.
    pub fn origin_name_not_used(&self) -> Option<String> {
        use crate::database::{normalise_remote, resolve_ssh_alias};
        if self.config.project.is_some() {
            return None;
        }
        let recorded = self.recorded_project_name()?;
        if !recorded.starts_with("file://") {
            return None;
        }
        let url = crate::git::run(&self.root, &["remote", "get-url", "origin"]).ok()?;
        if url.trim().is_empty() {
            return None;
        }
        let name = normalise_remote(&resolve_ssh_alias(&url), &self.root);
        (name != recorded).then_some(name)
    }

    /// Whether a task's branch is pushed to `origin` after its commit (and fetched from it by
    /// the commands that need it): the `push` setting, else on exactly when the project's
    /// records are in a shared (PostgreSQL) database, where other machines work its queue.
    pub fn push_enabled(&self) -> bool {
        match self.config.push {
            Some(on) => on,
            None => matches!(
                self.database(),
                Ok(crate::database::Database::Postgres { .. })
            ),
        }
    }

    /// The file where a clone keeps the name its project had when the clone first used a
    /// shared database, so adding or changing `origin` later does not move it to another
    /// project (the `project` setting still overrides it).
    pub fn project_name_file(&self) -> PathBuf {
        self.state_dir().join("project")
    }

    /// The name kept in [`Project::project_name_file`], if any, unless the repository committed
    /// that file. gza writes it in `.gza/`, which its `.gitignore` keeps out of git; a
    /// repository that commits one anyway (`git add -f`) would put every clone's tasks,
    /// learnings, hooks and queue into the project it names, another repository's, with no
    /// `gza trust` asked (unlike the `project` setting of a committed gza.yaml). So a name git
    /// tracks is never used: the clone is named by its `origin`, as if the file were absent.
    pub fn recorded_project_name(&self) -> Option<String> {
        self.recorded_name
            .get_or_init(|| {
                let file = self.project_name_file();
                let bytes = crate::fsutil::read_regular_file(&file, 4096).ok()?;
                let name = String::from_utf8(bytes).ok()?;
                let name = name.trim();
                if name.is_empty() || self.committed(&file) {
                    return None;
                }
                Some(name.to_string())
            })
            .clone()
    }

    /// Whether git's index of the repository holds `path` (a file of this project), asked of
    /// git once per version of the file and of the index ([`crate::settings`]' cache): every
    /// far hook reads the project's name, and a git process is 2-5 ms of PreToolUse's 10.
    pub fn committed(&self, path: &Path) -> bool {
        let Some(rel) = path.strip_prefix(&self.root).ok().and_then(Path::to_str) else {
            return false;
        };
        crate::settings::is_tracked(&self.root, rel)
    }

    /// Raw agent streams, one file per task, and learning-machinery logs.
    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir().join("logs")
    }

    /// The files under `.gza/` that a change to the learnings writes: the learnings file and the
    /// lock its regeneration holds.
    pub fn learnings_files(&self) -> [PathBuf; 2] {
        [
            self.learnings_path(),
            self.state_dir().join("learnings.lock"),
        ]
    }

    /// Refuse, before anything is stored, a change whose files under `.gza/` are damaged (a
    /// directory, a FIFO or a device where gza's file goes): one line naming it and what to do,
    /// exit 1, instead of a record stored and the file left behind with an internal fault.
    pub fn check_learnings_files(&self) -> Result<()> {
        for path in self.learnings_files() {
            crate::fsutil::refuse_unusable(&path).map_err(|e| {
                crate::Error::Usage(format!(
                    "{} cannot be used: {e}; nothing was changed",
                    path.display()
                ))
            })?;
        }
        Ok(())
    }

    /// The learnings file users read and edit.
    pub fn learnings_path(&self) -> PathBuf {
        self.state_dir().join("learnings.md")
    }

    /// Reports written by explore and plan tasks.
    pub fn reports_dir(&self) -> PathBuf {
        self.state_dir().join("reports")
    }

    /// Git worktrees of code tasks.
    pub fn worktrees_dir(&self) -> PathBuf {
        self.state_dir().join("worktrees")
    }

    /// A human name for the project: the configured one, else the directory name.
    pub fn name(&self) -> String {
        self.config.project_name.clone().unwrap_or_else(|| {
            self.root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "project".into())
        })
    }
}

/// Refuse a `.gza/` that is, or holds in place of gza's own files, a symbolic link: a repository
/// could commit one to make gza write its database, logs, reports or worktrees, or read its
/// learnings, somewhere outside the project. (Other wrong kinds of file are reported where they
/// are used.)
fn check_state_dir(root: &Path) -> Result<()> {
    let state = root.join(STATE_DIR);
    let linked =
        |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    // The entries' types come with the directory's listing (no stat per entry): a hook pays
    // for one short read_dir.
    let entries = || {
        std::fs::read_dir(&state)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                (e.file_name() != LINK_ALLOWED && e.file_type().is_ok_and(|t| t.is_symlink()))
                    .then(|| e.path())
            })
    };
    let found = std::iter::once(state.clone())
        .filter(|p| linked(p))
        .chain(entries())
        .next();
    match found {
        Some(path) => Err(Error::Usage(format!(
            "{} is a symbolic link; gza keeps its state in real files inside the project, so a \
             cloned repository cannot redirect it: remove the link (and commit the removal), then \
             run `gza init`",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// Refuse a gza.yaml at `root` that exists but is not a regular file (a symbolic link to one
/// is fine), in one line that says what it is and what to do.
fn check_config_entry(root: &Path) -> Result<()> {
    let path = root.join(CONFIG_FILE);
    let what = match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => return Ok(()),
        Ok(meta) => crate::fsutil::describe_file_type(&meta.file_type()).to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::read_link(&path) {
            Ok(target) => format!(
                "a symbolic link to {}, which does not exist",
                target.display()
            ),
            Err(_) => "gone".to_string(),
        },
        Err(e) => format!("unreadable ({e})"),
    };
    Err(Error::Usage(format!(
        "{CONFIG_FILE} in {} is {what}, not a regular file; replace it with the project's settings file (or remove it and run `gza init`)",
        root.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No entry of `.gza/` but learnings.md may be a link, whatever its name: a repository
    /// that commits `.gza/sandbox -> ../../elsewhere` had gza create and sweep (delete)
    /// directories outside the project through it.
    #[test]
    fn a_link_among_the_state_entries_is_refused_whatever_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join(STATE_DIR)).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink("../p-notes.md", root.join(STATE_DIR).join("learnings.md"))
            .unwrap();
        assert!(check_state_dir(&root).is_ok(), "learnings.md may link");
        for name in ["sandbox", "hook-sessions", "gza.db", "anything-new"] {
            let link = root.join(STATE_DIR).join(name);
            std::os::unix::fs::symlink(&outside, &link).unwrap();
            let err = check_state_dir(&root).unwrap_err().to_string();
            assert!(
                err.contains(&format!("{name} is a symbolic link")),
                "{name}: {err}"
            );
            std::fs::remove_file(&link).unwrap();
        }
        assert!(check_state_dir(&root).is_ok());
        std::fs::remove_dir_all(root.join(STATE_DIR)).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(STATE_DIR)).unwrap();
        assert!(check_state_dir(&root).is_err(), ".gza itself");
    }

    #[test]
    fn git_knows_where_task_worktrees_are() {
        let p = Project::new("/p".into(), Config::default());
        let (state, worktrees) = crate::git::TASK_WORKTREES;
        assert_eq!(
            p.worktrees_dir(),
            Path::new("/p").join(state).join(worktrees)
        );
    }
}
