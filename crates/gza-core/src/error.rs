//! The library's error type. Each variant a user can cause carries what they need to fix it.
//!
//! Exit codes follow from the variant ([`Error::is_user_error`]):
//! - **1, a user error**: something the person running gza can fix from the message alone: a
//!   project not initialised, bad configuration, an unknown task id, a request that cannot be
//!   carried out as asked, a database that is missing, foreign, newer, read-only or that failed
//!   to upgrade (left as it was), locks held
//!   by another process, and a full disk (an outcome that could not be recorded says where it
//!   is kept).
//! - **255, an internal fault**: gza's own machinery failed in a way nothing the person typed
//!   explains: a file-system operation on gza's files ([`Error::Io`]), git failing where it
//!   should not ([`Error::Git`]), SQLite errors, an HTTP client that cannot be
//!   built. A file the person named on the command line that cannot be read is theirs to fix,
//!   so it is reported as [`Error::Usage`] by the code that reads it.

use std::path::PathBuf;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong inside gza, by cause.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No gza.yaml in the project directory or any parent.
    #[error("no gza.yaml in {0} or any parent directory; run `gza init` to create one")]
    NotInitialized(PathBuf),

    /// gza.yaml exists but cannot be used.
    #[error("{path}{}: {message}; fix the file (`gza config --example` prints every key, documented)",
        location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Config {
        path: PathBuf,
        location: Option<(usize, usize)>,
        message: String,
    },

    /// The database file is not a usable gza database.
    #[error(
        "{path} is not a gza database ({reason}); move it aside and run `gza init` to start a new one"
    )]
    BadDatabase { path: PathBuf, reason: String },

    /// The database is an SQLite database with damaged pages: it still holds the project's
    /// tasks and learnings, so the way out is recovering them, never starting afresh.
    #[error(
        "{p} is damaged (SQLite found a corrupt page); gza changed nothing: first keep a copy (`cp {p} {p}.damaged`), then restore it from a backup; `sqlite3 {p}.damaged .dump` prints all that can still be read",
        p = .0.display()
    )]
    DamagedDatabase(PathBuf),

    /// The project's SQLite database is committed to the repository: its tasks and learnings
    /// were written by whoever wrote the repository, and would reach the person's agents.
    #[error(
        "{} is committed to the repository, so its tasks and learnings were written by whoever wrote the repository, not in this clone; move it aside (`git rm --cached .gza/gza.db && mv .gza/gza.db .gza/gza.db.from-repository`) and run `gza init` to start your own",
        path.display()
    )]
    RepositoryDatabase { path: PathBuf },

    /// The project has a gza.yaml but its database is gone or was emptied; only `gza init`
    /// creates one, so a deleted database is noticed rather than silently started afresh.
    #[error(
        "{} {}; restore it from a backup, or run `gza init` to start an empty one",
        path.display(),
        if *empty { "is empty (0 bytes)" } else { "does not exist (deleted, or never created in this checkout)" }
    )]
    MissingDatabase { path: PathBuf, empty: bool },

    /// The database file was deleted or replaced while this process had it open.
    #[error("{0}")]
    DatabaseReplaced(String),

    /// A finished task's outcome could not be written to the database (a full disk); the
    /// message says where it is kept and what records it.
    #[error("{0}")]
    NotRecorded(String),

    /// The disk holding the database is full.
    #[error("{0}: the disk is full; free some space and try again")]
    DiskFull(PathBuf),

    /// The database was written by a newer gza.
    #[error(
        "{path} was written by a newer gza (schema version {found}, this gza knows up to {known}); upgrade gza"
    )]
    NewerDatabase {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    /// Another process holds the database lock for too long.
    #[error("{0} is locked by another gza process; try again in a moment")]
    Locked(PathBuf),

    /// The database could not be written (read-only file system or permissions).
    #[error("cannot write to {0}; check that .gza/ is writable")]
    ReadOnly(PathBuf),

    /// An id that names no task.
    #[error("no task with id {0}; `gza history` lists the tasks")]
    TaskNotFound(crate::task::TaskId),

    /// A request a user made that cannot be carried out as asked.
    #[error("{0}")]
    Usage(String),

    /// Something else holds a lock the request needs; trying again later works.
    #[error("{0}")]
    Busy(String),

    /// A file-system operation failed (an internal fault: exit 255).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// git failed where it should not: a corrupt repository, a broken checkout (exit 255).
    /// Failures that answer a question (a merge conflict, a missing branch) never become this.
    #[error("`git {command}` failed in {}: {message}", dir.display())]
    Git {
        dir: PathBuf,
        command: String,
        message: String,
    },

    /// A task's worktree is no longer the checkout gza made: its `.git` was replaced, so git
    /// would read the agent's configuration and hooks. gza runs no git command there.
    #[error(
        "{} is not the worktree gza made ({why}); gza ran no git command there and committed \
         nothing. Inspect it, then remove it by hand and run `git worktree prune`",
        dir.display()
    )]
    UnsafeCheckout { dir: PathBuf, why: String },

    /// A path a repository's file gives leads outside the project; nothing was read or written.
    #[error(
        "{}: {key}: {} leads outside the project (to {}); nothing was read or written there. \
         {hint}",
        file.display(),
        path.display(),
        resolved.display()
    )]
    OutsideProject {
        key: String,
        file: PathBuf,
        path: PathBuf,
        resolved: PathBuf,
        /// What to do instead.
        hint: String,
    },

    /// The HTTP client for the extraction model could not be built (this machine's TLS setup).
    #[error("cannot set up HTTP for the extraction model: {0}")]
    HttpSetup(String),

    /// A row holding a value gza cannot read: a person or another tool wrote it.
    #[error("{what} in {}; gza cannot read that row: correct the value there (sqlite3)", path.display())]
    BadRow { path: PathBuf, what: String },

    /// Any other database error (a bug or a broken disk, not user input).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),

    /// Applying the schema migrations failed; nothing was changed (they are all or nothing).
    /// The message is one line saying so and what to do.
    #[error("{0}")]
    Migration(String),

    /// A database error that is no one's input (PostgreSQL's, or the query layer's on either
    /// backend): a bug or the server's own fault (exit 255).
    #[error("database error: {0}")]
    Store(String),

    /// The shared database cannot be reached, or refused this connection: the message says
    /// what to check. Nothing was read or changed.
    #[error("{0}")]
    Unreachable(String),

    /// The shared database has no tables for this project yet.
    #[error(
        "project {project:?} is not in {database} yet; run `gza init` to create it there (or set `project:` to the name the team uses)"
    )]
    MissingProject { project: String, database: String },
}

impl Error {
    /// Build an [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, action: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            action,
            source,
        }
    }

    /// True when the cause is a full disk (or quota): waiting for space can succeed where
    /// retrying at once cannot.
    pub fn is_out_of_space(&self) -> bool {
        match self {
            Error::DiskFull(_) => true,
            Error::Sqlite(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull),
            Error::Io { source, .. } => is_enospc(source),
            // git and other tools report it in their own words.
            other => {
                let text = other.to_string();
                text.contains("No space left on device") || text.contains("Disk quota exceeded")
            }
        }
    }

    /// True when the user can fix the cause (exit 1); false for internal faults (exit 255).
    /// Exhaustive on purpose: a new variant must be placed on one side.
    pub fn is_user_error(&self) -> bool {
        match self {
            Error::NotInitialized(_)
            | Error::Config { .. }
            | Error::BadDatabase { .. }
            | Error::DamagedDatabase(_)
            | Error::RepositoryDatabase { .. }
            | Error::BadRow { .. }
            | Error::MissingDatabase { .. }
            | Error::DatabaseReplaced(_)
            | Error::NewerDatabase { .. }
            | Error::Locked(_)
            | Error::ReadOnly(_)
            | Error::TaskNotFound(_)
            | Error::Usage(_)
            | Error::Busy(_)
            | Error::NotRecorded(_)
            | Error::UnsafeCheckout { .. }
            | Error::OutsideProject { .. }
            | Error::DiskFull(_)
            | Error::Unreachable(_)
            | Error::MissingProject { .. }
            // The database is as it was, and the message says what to do with it.
            | Error::Migration(_) => true,
            // A full disk is the person's to free, whichever operation ran into it.
            Error::Io { source, .. } => is_enospc(source),
            Error::Git { .. }
            | Error::HttpSetup(_)
            | Error::Sqlite(_)
            | Error::Store(_) => false,
        }
    }
}

/// ENOSPC or EDQUOT.
pub fn is_enospc(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_error() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory")
    }

    #[test]
    fn what_a_person_can_fix_is_a_user_error() {
        let user = [
            Error::NotInitialized("/p".into()),
            Error::Config {
                path: "gza.yaml".into(),
                location: Some((1, 2)),
                message: "bad".into(),
            },
            Error::BadDatabase {
                path: "db".into(),
                reason: "not SQLite".into(),
            },
            Error::MissingDatabase {
                path: "db".into(),
                empty: true,
            },
            Error::DatabaseReplaced("replaced".into()),
            Error::BadRow {
                path: "db".into(),
                what: "task 1's created_at is \"x\", not a time".into(),
            },
            Error::NewerDatabase {
                path: "db".into(),
                found: 9,
                known: 5,
            },
            Error::Locked("db".into()),
            Error::ReadOnly("db".into()),
            Error::TaskNotFound(crate::task::TaskId(7)),
            Error::Usage("no".into()),
            Error::Busy("later".into()),
            // Nothing was changed (migrations are all or nothing); the line says what to do.
            Error::Migration("cannot upgrade db: duplicate column".into()),
        ];
        for e in user {
            assert!(e.is_user_error(), "{e:?}");
        }
    }

    #[test]
    fn io_git_and_sqlite_failures_are_internal() {
        let internal = [
            Error::io("/p/.gza/logs", "create directory", io_error()),
            Error::Git {
                dir: "/p".into(),
                command: "diff a b".into(),
                message: "fatal: bad object".into(),
            },
            Error::HttpSetup("no TLS".into()),
            Error::Sqlite(rusqlite::Error::InvalidQuery),
        ];
        for e in internal {
            assert!(!e.is_user_error(), "{e:?}");
        }
    }

    #[test]
    fn a_git_failure_names_the_command_and_place_on_one_line() {
        let e = Error::Git {
            dir: "/p".into(),
            command: "diff a b --".into(),
            message: "fatal: bad object b".into(),
        };
        assert_eq!(
            e.to_string(),
            "`git diff a b --` failed in /p: fatal: bad object b"
        );
    }
}
