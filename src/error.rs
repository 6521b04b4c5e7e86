//! The library's error type. Each variant a user can cause carries what they need to fix it.

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
    #[error("{path}{}: {message}; fix the file or compare it with gza.example.yaml",
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
    TaskNotFound(i64),

    /// A request a user made that cannot be carried out as asked.
    #[error("{0}")]
    Usage(String),

    /// Something else holds a lock the request needs; trying again later works.
    #[error("{0}")]
    Busy(String),

    /// A file-system operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// Any other database error (a bug or a broken disk, not user input).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),

    /// Applying the schema migrations failed.
    #[error("cannot migrate the database: {0}")]
    Migration(String),
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
    pub fn is_user_error(&self) -> bool {
        !matches!(self, Error::Sqlite(_) | Error::Migration(_))
    }
}

/// ENOSPC or EDQUOT.
pub fn is_enospc(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}
