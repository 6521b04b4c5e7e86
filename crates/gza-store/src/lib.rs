//! SQLite persistence: opening the database, migrations, and the queries behind every command.
//!
//! Nothing in here knows about the command line.

mod comments;
mod extraction_backoff;
mod imports;
mod learnings;
mod leases;
mod lifecycle;
mod lineage;
mod review_loop;
mod runs;
mod search;
mod tags;
mod tasks;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use gza_core::error::{Error, Result};

pub use comments::{Addressed, Comment, MAX_COMMENT_BYTES};
pub use extraction_backoff::ExtractionBackoff;
pub use imports::{BatchOutcome, BatchTask, TaskRef};
pub use learnings::{
    FileEdits, Injection, InjectionCount, LearningEdit, LearningEvent, LearningsMetadata,
    LearningsTotals, LearningsVersion, RankRow, Source, Tally, Taught, VersionRecord, WindowTask,
    count_towards_regeneration,
};
pub use leases::{LEASE_RENEW_SECS, LEASE_STALE_SECS, Lease};
pub use lifecycle::{
    EvolutionEntry, FailingLearning, InjectionOutcome, LifecycleCounts, TierChange,
};
pub use lineage::{LineageNode, UnmergedTask};
pub use runs::{Claim, FinishReport, Leftover, Outcome, WorkerId};
pub use search::{SearchFilter, SearchHit, SearchOrder};
pub use tags::Scope;
pub use tasks::{
    Figure, HistoryFilter, LinkedTask, NewTask, PendingCounts, QueueEntry, Stats, StatusCounts,
    TaskEdit, TaskSummary, Tokens,
};

mod embedded {
    refinery::embed_migrations!("../../migrations");
}

/// How long a statement waits for another process's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open gza database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Device and inode of the file at `path` when it was opened, to notice a replaced database.
    identity: Option<(u64, u64)>,
    /// How long a statement waits for another process's write lock.
    busy: std::cell::Cell<Duration>,
}

/// Device and inode of the file at `path`, if there is one.
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Store {
    /// Open the existing database at `path` and bring its schema up to date. A missing or
    /// zero-byte file is an error: only [`Store::create`] (`gza init`) makes a database.
    pub fn open(path: &Path) -> Result<Store> {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::MissingDatabase {
                    path: path.to_path_buf(),
                    empty: false,
                });
            }
            Ok(m) if m.is_file() && m.len() == 0 => {
                return Err(Error::MissingDatabase {
                    path: path.to_path_buf(),
                    empty: true,
                });
            }
            _ => {}
        }
        // Without SQLITE_OPEN_CREATE: a database deleted between the check above and this
        // open (by a person, while a background job starts) is reported missing, never made
        // again empty behind the person's back.
        Store::connect(path, false)
    }

    /// Open (creating if needed) the database at `path` and bring its schema up to date.
    pub fn create(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create directory", e))?;
        }
        Store::connect(path, true)
    }

    fn connect(path: &Path, create: bool) -> Result<Store> {
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(|e| {
            if !create && !path.exists() {
                Error::MissingDatabase {
                    path: path.to_path_buf(),
                    empty: false,
                }
            } else {
                classify(path, e)
            }
        })?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            identity: file_identity(path),
            busy: std::cell::Cell::new(BUSY_TIMEOUT),
        };
        store.configure().map_err(|e| classify(path, e))?;
        store.migrate()?;
        Ok(store)
    }

    /// Open an existing database for a Claude Code hook: never creates one (`None` when there is
    /// none), and gives up on a lock after `busy`, since a hook must not hold up a session.
    pub fn open_existing(path: &Path, busy: Duration) -> Result<Option<Store>> {
        if std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
            return Ok(None);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            identity: file_identity(path),
            busy: std::cell::Cell::new(BUSY_TIMEOUT),
        };
        store.configure().map_err(|e| classify(path, e))?;
        store.set_busy_timeout(busy)?;
        // A hook reads thousands of rows and vectors once: through a mapping, not a read(2)
        // and a copy per page.
        let _ = store.conn.execute_batch("PRAGMA mmap_size = 268435456");
        // A hook is often the last connection to close; the checkpoint SQLite then runs (with
        // its fsyncs) would double its latency. The next ordinary command checkpoints instead.
        store
            .conn
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )
            .map_err(|e| classify(path, e))?;
        store.migrate()?;
        Ok(Some(store))
    }

    /// Open for reading only. Used by commands that never write, so they still work when
    /// `.gza/` is on a read-only file system (where SQLite cannot create its WAL index).
    pub fn open_for_reading(path: &Path) -> Result<Store> {
        match Store::open(path) {
            Err(Error::ReadOnly(_)) if path.is_file() => {}
            other => return other,
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        // Read-only with the WAL (it holds commits not yet checkpointed) when its index exists;
        // else the file as it is on disk.
        let read_only = Connection::open_with_flags(path, flags).and_then(|c| {
            c.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|_| c)
        });
        let conn = match read_only {
            Ok(c) => c,
            Err(_) => {
                let uri = format!("file:{}?immutable=1", path.display());
                Connection::open_with_flags(uri, flags).map_err(|e| classify(path, e))?
            }
        };
        let store = Store {
            conn,
            path: path.to_path_buf(),
            identity: file_identity(path),
            busy: std::cell::Cell::new(BUSY_TIMEOUT),
        };
        let (found, known) = store.schema_versions()?;
        if found != known {
            // Migrations would be needed, and they cannot be written here.
            return Err(Error::ReadOnly(path.to_path_buf()));
        }
        Ok(store)
    }

    /// Fail when the file at this store's path is no longer the file this connection has open
    /// (deleted, or replaced by another file): what is written now would be lost with it.
    pub fn ensure_still_at_path(&self) -> Result<()> {
        let open = self.open_identity();
        let at_path = file_identity(&self.path);
        match (open, at_path) {
            (Some(open), Some(now)) if open == now => Ok(()),
            // Unknown (an in-memory or odd database): nothing to compare.
            (None, _) => Ok(()),
            (Some(_), None) => Err(Error::DatabaseReplaced(format!(
                "{} was deleted while gza had it open",
                self.path.display()
            ))),
            (Some(_), Some(_)) => Err(Error::DatabaseReplaced(format!(
                "{} was replaced by another file while gza had it open",
                self.path.display()
            ))),
        }
    }

    fn open_identity(&self) -> Option<(u64, u64)> {
        self.identity
    }

    /// The schema version stored in the database and the newest this gza knows.
    fn schema_versions(&self) -> Result<(i64, i64)> {
        let known = embedded::migrations::runner()
            .get_migrations()
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0);
        let found = self
            .conn
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM refinery_schema_history",
                [],
                |r| r.get(0),
            )
            .map_err(|e| classify(&self.path, e))?;
        Ok((found, known))
    }

    fn configure(&self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        // journal_mode answers with a row, so it is queried rather than executed.
        let _mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        self.conn.execute_batch(
            "PRAGMA foreign_keys = ON;
             PRAGMA synchronous = NORMAL;",
        )
    }

    /// Bring the schema up to date. Two processes that start at once after an upgrade never
    /// both apply a migration: the one that migrates holds an exclusive lock on
    /// `<database>.migrate-lock`, and the other, once it gets the lock, finds nothing to do.
    fn migrate(&mut self) -> Result<()> {
        if !self.needs_migration()? {
            return Ok(());
        }
        let asked = std::time::Instant::now();
        let _lock = migration_lock(&self.path)?;
        tracing::debug!(
            ms = asked.elapsed().as_millis() as u64,
            "took the migration lock"
        );
        if !self.needs_migration()? {
            return Ok(());
        }
        let runner = embedded::migrations::runner();
        tracing::info!(database = %self.path.display(), "migrating the database");
        runner.run(&mut self.conn).map_err(|e| {
            std::error::Error::source(&e)
                .and_then(|s| s.downcast_ref::<rusqlite::Error>())
                .and_then(|s| s.sqlite_error_code())
                .and_then(|code| classify_code(&self.path, code))
                .unwrap_or_else(|| Error::Migration(e.to_string()))
        })?;
        tracing::info!(ms = asked.elapsed().as_millis() as u64, "migrated");
        Ok(())
    }

    /// Whether migrations are pending; an error for a database of a newer gza or another program.
    fn needs_migration(&self) -> Result<bool> {
        let has_history: bool = self
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'refinery_schema_history')",
                [],
                |r| r.get(0),
            )
            .map_err(|e| classify(&self.path, e))?;
        if has_history {
            let (found, known) = self.schema_versions()?;
            if found > known {
                return Err(Error::NewerDatabase {
                    path: self.path.clone(),
                    found,
                    known,
                });
            }
            if found == known {
                return Ok(false);
            }
        } else {
            let tables: i64 = self
                .conn
                .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(|e| classify(&self.path, e))?;
            if tables > 0 {
                return Err(Error::BadDatabase {
                    path: self.path.clone(),
                    reason: "it is an SQLite database of another program".into(),
                });
            }
        }
        Ok(true)
    }

    /// Map a rusqlite error from this store into a user-facing one.
    /// How long statements wait for another process's write lock from now on.
    pub fn set_busy_timeout(&self, busy: Duration) -> Result<()> {
        self.conn.busy_timeout(busy).map_err(|e| self.err(e))?;
        self.busy.set(busy);
        Ok(())
    }

    /// How long statements wait for another process's write lock.
    pub fn busy_timeout(&self) -> Duration {
        self.busy.get()
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> Error {
        classify(&self.path, e)
    }
}

/// Hold an exclusive lock on `<db>.migrate-lock` until the returned file is dropped; wait for it
/// at most a minute.
fn migration_lock(db: &Path) -> Result<std::fs::File> {
    let mut name = db.as_os_str().to_owned();
    name.push(".migrate-lock");
    let path = std::path::PathBuf::from(name);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let locked = gza_core::fsutil::try_lock_file(&path)
            .map_err(|e| gza_core::fsutil::read_refused(&path, e))?;
        if let Some(file) = locked {
            return Ok(file);
        }
        if std::time::Instant::now() > deadline {
            return Err(Error::Usage(format!(
                "another gza process has been upgrading {} for a minute; wait for it, or remove {} if no gza is running",
                db.display(),
                path.display()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Turn SQLite failures a user can act on into clear errors; keep the rest as they are.
fn classify(path: &Path, e: rusqlite::Error) -> Error {
    if let rusqlite::Error::FromSqlConversionFailure(_, _, inner) = &e
        && let Some(bad) = inner.downcast_ref::<tasks::BadValue>()
    {
        return Error::BadRow {
            path: path.to_path_buf(),
            what: bad.to_string(),
        };
    }
    e.sqlite_error_code()
        .and_then(|code| classify_code(path, code))
        .unwrap_or(Error::Sqlite(e))
}

fn classify_code(path: &Path, code: ErrorCode) -> Option<Error> {
    let path = path.to_path_buf();
    Some(match code {
        ErrorCode::NotADatabase => Error::BadDatabase {
            path,
            reason: "the file is not an SQLite database".into(),
        },
        ErrorCode::DatabaseCorrupt => Error::BadDatabase {
            path,
            reason: "the database file is corrupt".into(),
        },
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Error::Locked(path),
        ErrorCode::DiskFull => Error::DiskFull(path),
        ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
            Error::ReadOnly(path)
        }
        _ => return None,
    })
}
