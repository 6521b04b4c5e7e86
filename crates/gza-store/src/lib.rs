//! Persistence: opening the database (the SQLite file in `.gza/`, or a project's schema in a
//! shared PostgreSQL database), migrations, and the queries behind every command.
//!
//! Nothing in here knows about the command line. Every query goes through [`db`], which runs one
//! SQL text on either backend (see its docs for how to write one).

#[macro_use]
pub mod db;
mod ab;
mod comments;
mod copy;
mod dashboard;
mod deadline;
mod extraction_backoff;
mod hooks;
mod imports;
mod learnings;
mod leases;
mod lifecycle;
mod lineage;
mod origin;
mod outcomes;
mod pg;
mod pool;
mod pushes;
mod reranks;
mod review_loop;
mod runs;
mod search;
mod tags;
mod tasks;
mod verify;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use gza_core::database::Database;
use gza_core::error::{Error, Result};
use gza_core::project::Project;

pub use ab::{
    AbExperiment, AbItem, AbRun, Arm, Verified as AbVerified, group_of as ab_group, is_ab_run,
};
pub use comments::{Addressed, Comment, MAX_COMMENT_BYTES};
pub use copy::{COPIED as COPIED_TABLES, CopiedTable, DERIVED as DERIVED_TABLES};
pub use dashboard::{DayTally, PendingTask, TaskFilter, WeekTally};
pub use db::{Backend, Db, DbError, SharedLock, Tx};
pub use deadline::statement_deadline;
pub use extraction_backoff::ExtractionBackoff;
pub use hooks::{FarSnapshot, HookLearning, HookSnapshot};
pub use imports::{BatchOutcome, BatchTask, TaskRef};
pub use learnings::{
    FROM_REPOSITORY_FILE, FileEdits, HintsOutcome, Injection, InjectionCount, LearningEdit,
    LearningEvent, LearningsMetadata, LearningsTotals, LearningsVersion, RankChanges, RankRow,
    RankSnapshot, Source, Tally, Taught, VersionRecord, WindowTask, count_towards_regeneration,
};
pub use leases::{LEASE_RENEW_SECS, LEASE_STALE_SECS, Lease, TaskLease};
pub use lifecycle::{
    EvolutionEntry, FailingLearning, InjectionOutcome, LifecycleCounts, OutcomeCounts, TierChange,
};
pub use lineage::{LineageNode, UnmergedTask};
pub use outcomes::{
    BaseRate, Credit, CreditCounts, CreditedTask, Debited, Ending, Measures, Rating,
    credit_finished, credit_task,
};
pub use pool::{Pool, Pooled};
pub use pushes::BranchPush;
pub use reranks::{Rerank, RerankOutcome, RerankSummary};
pub use runs::{Claim, FinishReport, Leftover, Outcome, WorkerId};
pub use search::{SearchFilter, SearchHit, SearchOrder};
pub use tags::Scope;
pub use tasks::{
    AbTotals, Figure, HistoryFilter, LinkedTask, NewTask, PendingCounts, QueueEntry, Stats,
    StatusCounts, TaskEdit, TaskSummary, Tokens,
};
pub use verify::NewVerification;

mod embedded {
    refinery::embed_migrations!("../../migrations");
}

/// PostgreSQL's migrations: the SQLite schema in PostgreSQL's words, one schema per project.
mod embedded_pg {
    refinery::embed_migrations!("../../migrations-postgres");
}

/// The newest migration this gza knows for a backend (from build.rs, which reads the same
/// folders refinery embeds; `the_latest_migration_is_refinerys` checks they agree).
fn latest_migration(backend: Backend) -> i64 {
    match backend {
        Backend::Sqlite => env!("GZA_LATEST_MIGRATION"),
        Backend::Postgres => env!("GZA_LATEST_PG_MIGRATION"),
    }
    .parse()
    .expect("build.rs gives a number")
}

/// SQLite's memory statistics off for this process; to be called first thing in `main`, before
/// any connection. They cost a global mutex and counters on every allocation SQLite makes, 0.8 M
/// of the 5.5 M instructions a hook spends opening the database and parsing its schema, and
/// nothing in gza reads them (no heap limit is set). Once SQLite is initialised it refuses the
/// setting and nothing changes.
pub fn without_memory_statistics() {
    // SAFETY: `sqlite3_config` takes, for this option, one `int`, which is what is passed; it
    // must not run beside other SQLite calls, and is called from `main` before any other thread
    // exists or any connection is opened.
    let _ = unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int)
    };
}

/// How long a statement waits for another process's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where an open store's records are.
#[derive(Debug, Clone)]
enum Target {
    Sqlite,
    Postgres {
        project: String,
        schema: String,
        /// The connection, without the password.
        display: String,
    },
}

/// What `gza db status` shows.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DbStatus {
    pub backend: &'static str,
    /// The file, or the connection without its password.
    pub location: String,
    /// The project's name in a shared database.
    pub project: Option<String>,
    /// Its schema there.
    pub schema: Option<String>,
    pub schema_version: i64,
    /// The newest schema version this gza knows.
    pub known_version: i64,
    /// The server's version (PostgreSQL) or the library's (SQLite).
    pub server: String,
    /// How this connection is encrypted, as the server sees it (`pg_stat_ssl`): the protocol
    /// and cipher, `none` (in the clear), `socket` (a local socket file); `None` when unknown
    /// (and for SQLite). gza verifies the certificate of every TLS connection it makes
    /// (docs/security.md); a pooler or proxy between may see another connection than gza's.
    pub tls: Option<String>,
}

/// An open gza database.
pub struct Store {
    db: Db,
    /// The SQLite file; for PostgreSQL, the connection without its password (named in errors).
    path: PathBuf,
    /// Device and inode of the file at `path` when it was opened, to notice a replaced database.
    identity: Option<(u64, u64)>,
    /// How long a statement waits for another process's write lock.
    busy: std::cell::Cell<Duration>,
    target: Target,
    /// Set by SQLite (an update hook) when a statement on this connection moved V27's hook
    /// counter, a trigger's doing included: what the hooks read changed, and the process
    /// registered with [`after_hook_change`] brings their snapshot up to date before the store
    /// is closed or given back to its pool ([`Store::announce_hook_change`]).
    hook_changed: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Drop for Store {
    /// A command's store moved the hooks' counter: their snapshot follows before it closes.
    fn drop(&mut self) {
        self.announce_hook_change();
    }
}

/// What the process does once a store moved the hooks' counter (registered once, by the
/// binary: the hooks' snapshot lives above the store, in gza-hooks).
static AFTER_HOOK_CHANGE: std::sync::OnceLock<fn(&Store)> = std::sync::OnceLock::new();

/// Register what brings the hooks' snapshot up to date after a store changed what they read:
/// every writer of learnings then refreshes it at write time, so a hook rarely has to (and
/// the hooks' change marker follows every write gza makes, whatever path made it).
pub fn after_hook_change(refresh: fn(&Store)) {
    let _ = AFTER_HOOK_CHANGE.set(refresh);
}

/// Refuse a SQLite database that came with the repository (see `origin.rs`).
fn ensure_own(project: &Project, database: &Database, store: &Store) -> Result<()> {
    match database {
        Database::Sqlite(path) => origin::ensure_own(&project.root, path, store),
        Database::Postgres { .. } => Ok(()),
    }
}

/// `.gza/` holds this clone's logs, locks, worktrees and learnings.md whichever database keeps
/// the records: a clone whose records are in a shared database (where the SQLite file would
/// have made it) gets it when it first opens them.
/// The name the project has there is kept in `.gza/project` the first time (unless the
/// `project` setting names it), so a remote added later does not move it.
fn ensure_state_dir(project: &Project, database: &Database) -> Result<()> {
    if let Database::Postgres { project: name, .. } = database {
        let dir = project.state_dir();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create directory", e))?;
        // (A committed file is not replaced: what git tracks is the person's to change.)
        if project.config.project.is_none()
            && project.recorded_project_name().is_none()
            && !project.committed(&project.project_name_file())
        {
            let _ = gza_core::fsutil::write_atomically(
                &project.project_name_file(),
                format!("{name}\n").as_bytes(),
            );
        }
    }
    Ok(())
}

/// Device and inode of the file at `path`, if there is one.
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Store {
    /// Open the project's database (SQLite or its schema in a shared PostgreSQL) and bring its
    /// schema up to date; never creates one: only [`Store::create_project`] (`gza init`) does.
    pub fn open_project(project: &Project) -> Result<Store> {
        let database = project.database()?;
        let store = Store::open_database(&database)?;
        ensure_own(project, &database, &store)?;
        ensure_state_dir(project, &database)?;
        Ok(store)
    }

    /// Open (creating if needed) the project's database.
    pub fn create_project(project: &Project) -> Result<Store> {
        let database = project.database()?;
        let store = Store::create_database(&database)?;
        ensure_own(project, &database, &store)?;
        ensure_state_dir(project, &database)?;
        Ok(store)
    }

    /// Open the project's database for a hook: `None` when there is none; locks are waited on
    /// for at most `busy`.
    pub fn open_existing_project(project: &Project, busy: Duration) -> Result<Option<Store>> {
        match project.database()? {
            Database::Sqlite(path) => match Store::open_existing(&path, busy)? {
                Some(store) => {
                    origin::ensure_own(&project.root, &path, &store)?;
                    Ok(Some(store))
                }
                None => Ok(None),
            },
            Database::Postgres { spec, project } => {
                match Store::connect_pg(&spec, &project, false, Some(busy)) {
                    Ok(store) => Ok(Some(store)),
                    Err(Error::MissingProject { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Open the project's database for commands that only read.
    pub fn open_project_for_reading(project: &Project) -> Result<Store> {
        match project.database()? {
            Database::Sqlite(path) => {
                let store = Store::open_for_reading(&path)?;
                origin::ensure_own(&project.root, &path, &store)?;
                Ok(store)
            }
            database @ Database::Postgres { .. } => {
                let store = Store::open_database(&database)?;
                // Reading still needs the clone's state folder (learnings.md, logs).
                let _ = ensure_state_dir(project, &database);
                Ok(store)
            }
        }
    }

    /// Open the project's SQLite file (`.gza/gza.db`) whatever its `database` setting says:
    /// what `gza db copy` copies from. It must exist and be the project's own (not one that
    /// came with the repository).
    pub fn open_project_sqlite(project: &Project) -> Result<Store> {
        let path = project.db_path();
        let store = Store::open(&path)?;
        origin::ensure_own(&project.root, &path, &store)?;
        Ok(store)
    }

    /// Open the database at `database`; never creates one.
    pub fn open_database(database: &Database) -> Result<Store> {
        match database {
            Database::Sqlite(path) => Store::open(path),
            Database::Postgres { spec, project } => Store::connect_pg(spec, project, false, None),
        }
    }

    /// Open (creating if needed) the database at `database`.
    pub fn create_database(database: &Database) -> Result<Store> {
        match database {
            Database::Sqlite(path) => Store::create(path),
            Database::Postgres { spec, project } => Store::connect_pg(spec, project, true, None),
        }
    }

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

    fn sqlite_store(conn: Connection, path: &Path) -> Store {
        let changed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = changed.clone();
        // Fires for rows a trigger changes too, which is how the counter moves.
        conn.update_hook(Some(
            move |_: rusqlite::hooks::Action, _: &str, table: &str, _: i64| {
                if table == "hook_state" {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            },
        ));
        Store {
            db: Db::sqlite(conn),
            path: path.to_path_buf(),
            identity: file_identity(path),
            busy: std::cell::Cell::new(BUSY_TIMEOUT),
            target: Target::Sqlite,
            hook_changed: Some(changed),
        }
    }

    /// The SQLite file this store is of (`None` on PostgreSQL).
    pub fn sqlite_path(&self) -> Option<&Path> {
        matches!(self.target, Target::Sqlite).then_some(self.path.as_path())
    }

    /// Whether a statement on this connection moved the hooks' counter since the last
    /// [`Store::announce_hook_change`] (or since it was opened).
    pub fn hook_changed(&self) -> bool {
        self.hook_changed
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// When this connection moved the hooks' counter and no transaction is open: run what the
    /// process registered ([`after_hook_change`]) once. Called when a store is closed or given
    /// back to its pool; a long-lived caller may call it after a write. A rolled-back change
    /// only costs a refresh that finds nothing new.
    pub fn announce_hook_change(&self) {
        let Some(changed) = &self.hook_changed else {
            return;
        };
        let open_transaction = self.db.sqlite_conn().is_some_and(|c| !c.is_autocommit());
        if open_transaction || !changed.swap(false, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        if let Some(refresh) = AFTER_HOOK_CHANGE.get() {
            refresh(self);
        }
    }

    fn connect(path: &Path, create: bool) -> Result<Store> {
        refuse_non_regular(path)?;
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
                classify_sqlite(path, e)
            }
        })?;
        let mut store = Store::sqlite_store(conn, path);
        store.configure().map_err(|e| classify_sqlite(path, e))?;
        store.migrate()?;
        Ok(store)
    }

    /// Connect to the project's schema in a shared PostgreSQL database, migrating it (and, with
    /// `create`, making it) first.
    ///
    /// A restart under way is waited out within the reconnect budget, but never by a hook
    /// (`busy` given), which must not hold up a session: not only the connection itself but
    /// what follows it (the register's lookup, the busy timeout, the schema's version), since a
    /// server that goes down between them ends the new connection as it ends any other.
    fn connect_pg(
        spec: &gza_core::database::DatabaseSpec,
        project: &str,
        create: bool,
        busy: Option<Duration>,
    ) -> Result<Store> {
        let resolved = pg::resolve(spec)?;
        let patience = if busy.is_some() {
            Duration::ZERO
        } else {
            db::reconnect_budget()
        };
        let started = std::time::Instant::now();
        let mut attempt = 0;
        loop {
            let left = patience.saturating_sub(started.elapsed());
            match Store::open_pg_once(&resolved, project, create, busy, left) {
                Ok(store) => return Ok(store),
                Err(Opening::Lost(e))
                    if !left.is_zero() && !gza_core::process::stop_requested() =>
                {
                    tracing::warn!(error = %e, "PostgreSQL went away while the project was being opened; opening it again");
                    std::thread::sleep(db::backoff(attempt).min(left));
                    attempt += 1;
                }
                Err(Opening::Lost(e) | Opening::Failed(e)) => return Err(e),
            }
        }
    }

    /// One attempt of [`Store::connect_pg`], waiting at most `patience` for the connection.
    fn open_pg_once(
        resolved: &pg::Resolved,
        project: &str,
        create: bool,
        busy: Option<Duration>,
        patience: Duration,
    ) -> std::result::Result<Store, Opening> {
        let (mut client, socket) =
            pg::connect(resolved, None, patience).map_err(Opening::Failed)?;
        let resolved = resolved.clone();
        // What failed on the new connection because the server went away is tried again whole.
        let refused = |client: &postgres::Client, e: postgres::Error, registering: bool| {
            if client.is_closed() || db::lost_pg(&e) {
                Opening::Lost(register_refused(&resolved, e, registering))
            } else {
                Opening::Failed(register_refused(&resolved, e, registering))
            }
        };
        let display = resolved.display();
        // The schema is the one the register gives this project's full name, never one derived
        // from the name and trusted: a name made to hash as another's (the 40-character slug
        // and 32-bit hash of earlier schema names) must not open that project's tables.
        let looked_up = {
            let armed = socket
                .zip(deadline::statement_deadline())
                .map(|(socket, within)| deadline::arm(socket, within));
            let found = pg::registered(&mut client, project);
            if armed.is_some_and(deadline::Guard::disarm) {
                return Err(Opening::Failed(classify(
                    Path::new(&format!("{display} (project {project})")),
                    DbError::Silent(deadline::statement_deadline().unwrap_or_default()),
                )));
            }
            found
        };
        let looked_up = match looked_up {
            Ok(found) => found,
            Err(e) => return Err(refused(&client, e, false)),
        };
        let schema = match looked_up {
            Some(found) if found.exists && !found.usable => {
                return Err(Opening::Failed(Error::Unreachable(format!(
                    "PostgreSQL at {display} does not let user {user} use schema {schema} of project {project:?}; its owner grants it (GRANT USAGE ON SCHEMA {schema} TO {user}; GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO {user}; the same ON ALL SEQUENCES), or connect as the user that made it",
                    user = resolved.user,
                    schema = found.schema,
                ))));
            }
            Some(found) if found.exists || create => found.schema,
            _ if !create => {
                return Err(Opening::Failed(Error::MissingProject {
                    project: project.to_string(),
                    database: display,
                }));
            }
            _ => match pg::register(&mut client, project) {
                Ok(Some(schema)) => schema,
                Ok(None) => {
                    return Err(Opening::Failed(Error::Busy(format!(
                        "another gza has been migrating {display} for a minute; wait for it and try again"
                    ))));
                }
                Err(e) => return Err(refused(&client, e, true)),
            },
        };
        let write_lock = pg::lock_key(&format!("{schema}:write"));
        // A connection lost later (the server restarted, the network went) is opened again
        // the same way, each attempt waiting at most what is left of the reconnect budget.
        let again = (resolved.clone(), schema.clone());
        let connector: db::Connector = Box::new(move |wait: Duration| {
            let mut resolved = again.0.clone();
            resolved.connect_timeout = resolved.connect_timeout.min(wait.as_secs().max(1));
            // Its caller asks again, with its own pauses, until its budget is spent.
            pg::connect(&resolved, Some(&again.1), Duration::ZERO).map_err(|e| e.to_string())
        });
        let mut store = Store {
            db: Db::postgres(client, socket, write_lock, Some(connector)),
            path: PathBuf::from(format!("{display} (project {project})")),
            identity: None,
            busy: std::cell::Cell::new(BUSY_TIMEOUT),
            target: Target::Postgres {
                project: project.to_string(),
                schema,
                display,
            },
            hook_changed: None,
        };
        // Statements on the store replace a lost connection themselves, but not under the
        // migration lock, which goes with it: a connection found lost is an attempt to repeat
        // (migrations are transactional).
        let settled = store
            .set_busy_timeout(busy.unwrap_or(BUSY_TIMEOUT))
            .and_then(|()| store.migrate_pg(create));
        match settled {
            Ok(()) => Ok(store),
            Err(e) if store.db.is_broken() => Err(Opening::Lost(e)),
            Err(e) => Err(Opening::Failed(e)),
        }
    }

    /// The project's regeneration lock across machines, if nobody holds it: in team mode one
    /// regeneration at a time per project, whichever clone runs it, so two machines never
    /// extract the same tasks (each clone's `.gza/learnings.lock` is only its own). Always
    /// taken on SQLite, where the file lock is the whole of it.
    pub fn try_regeneration_lock(&self) -> Result<Option<SharedLock<'_>>> {
        let key = match &self.target {
            Target::Sqlite => 0,
            Target::Postgres { schema, .. } => pg::lock_key(&format!("{schema}:regenerate")),
        };
        self.db.try_shared_lock(key).map_err(|e| self.err(e))
    }

    /// Open an existing database for a Claude Code hook: never creates one (`None` when there is
    /// none), and gives up on a lock after `busy`, since a hook must not hold up a session.
    pub fn open_existing(path: &Path, busy: Duration) -> Result<Option<Store>> {
        refuse_non_regular(path)?;
        if std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
            return Ok(None);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| classify_sqlite(path, e))?;
        let mut store = Store::sqlite_store(conn, path);
        store.configure().map_err(|e| classify_sqlite(path, e))?;
        store.set_busy_timeout(busy)?;
        let conn = store.db.sqlite_conn().expect("sqlite");
        // A hook reads thousands of rows and vectors once: through a mapping, not a read(2)
        // and a copy per page.
        let _ = conn.execute_batch("PRAGMA mmap_size = 268435456");
        // A hook is often the last connection to close; the checkpoint SQLite then runs (with
        // its fsyncs) would double its latency. The next ordinary command checkpoints instead.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .map_err(|e| classify_sqlite(path, e))?;
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
                Connection::open_with_flags(uri, flags).map_err(|e| classify_sqlite(path, e))?
            }
        };
        let store = Store::sqlite_store(conn, path);
        let (found, known) = store.schema_versions()?;
        if found != known {
            // Migrations would be needed, and they cannot be written here.
            return Err(Error::ReadOnly(path.to_path_buf()));
        }
        Ok(store)
    }

    /// Which engine this store runs on.
    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// The connection, for queries of other crates' tests and tools (`gza db`).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Run `f` without waiting out a lost connection (one attempt to open it again, then the
    /// error): see [`Db::quickly`].
    pub fn quickly<T>(&self, f: impl FnOnce() -> T) -> T {
        self.db.quickly(f)
    }

    /// Backend, location (never a password), project, schema versions and server.
    pub fn status(&self) -> Result<DbStatus> {
        let (found, known) = self.schema_versions()?;
        Ok(match &self.target {
            Target::Sqlite => DbStatus {
                backend: "sqlite",
                location: self.path.display().to_string(),
                project: None,
                schema: None,
                schema_version: found,
                known_version: known,
                server: format!("SQLite {}", rusqlite::version()),
                tls: None,
            },
            Target::Postgres {
                project,
                schema,
                display,
            } => DbStatus {
                backend: "postgres",
                location: display.clone(),
                project: Some(project.clone()),
                schema: Some(schema.clone()),
                schema_version: found,
                known_version: known,
                server: self
                    .db
                    .one::<String>("SELECT version()", params![])
                    .map_err(|e| self.err(e))?,
                // Never a reason for status to fail: a server or pooler without the view (or
                // without this session in it) leaves it unknown.
                tls: self
                    .db
                    .one::<Option<String>>(
                        "SELECT CASE WHEN inet_client_addr() IS NULL THEN 'socket' \
                                     WHEN ssl THEN version || ' (' || cipher || ')' \
                                     ELSE 'none' END \
                         FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                        params![],
                    )
                    .ok()
                    .flatten(),
            },
        })
    }

    /// Fail when the file at this store's path is no longer the file this connection has open
    /// (deleted, or replaced by another file): what is written now would be lost with it.
    pub fn ensure_still_at_path(&self) -> Result<()> {
        let open = self.open_identity();
        let at_path = file_identity(&self.path);
        match (open, at_path) {
            (Some(open), Some(now)) if open == now => Ok(()),
            // Unknown (a shared database, an in-memory or odd one): nothing to compare.
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

    /// The newest schema version this gza knows for this store's backend.
    fn known_version(&self) -> i64 {
        latest_migration(self.backend())
    }

    /// The schema version stored in the database and the newest this gza knows.
    fn schema_versions(&self) -> Result<(i64, i64)> {
        let found = self
            .db
            .one(
                "SELECT COALESCE(MAX(version), 0) FROM refinery_schema_history",
                params![],
            )
            .map_err(|e| self.err(e))?;
        Ok((found, self.known_version()))
    }

    fn configure(&self) -> rusqlite::Result<()> {
        let conn = self.db.sqlite_conn().expect("sqlite");
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // journal_mode answers with a row, so it is queried rather than executed.
        let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        conn.execute_batch(
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
        let (found, known) = self.schema_versions().unwrap_or((0, self.known_version()));
        // Grouped: every pending migration and its history row commit in one transaction, so
        // a kill or a failure at any instant leaves the schema as it was. Refinery's default
        // commits a migration's SQL and its history row separately; a kill between the two
        // left a schema whose migration would run again, fail, and never let gza open it.
        let runner = embedded::migrations::runner().set_grouped(true);
        tracing::info!(database = %self.path.display(), "migrating the database");
        let path = self.path.clone();
        let conn = self.db.sqlite_conn_mut().expect("sqlite");
        runner.run(conn).map_err(|e| {
            std::error::Error::source(&e)
                .and_then(|s| s.downcast_ref::<rusqlite::Error>())
                .and_then(|s| s.sqlite_error_code())
                .and_then(|code| classify_code(&path, code))
                .unwrap_or_else(|| migration_failed(&path, found, known, &e))
        })?;
        tracing::info!(ms = asked.elapsed().as_millis() as u64, "migrated");
        Ok(())
    }

    /// Whether migrations are pending; an error for a database of a newer gza or another program.
    fn needs_migration(&self) -> Result<bool> {
        let has_history: bool = self
            .db
            .one(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'refinery_schema_history')",
                params![],
            )
            .map_err(|e| self.err(e))?;
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
                .db
                .one("SELECT COUNT(*) FROM sqlite_master", params![])
                .map_err(|e| self.err(e))?;
            if tables > 0 {
                return Err(Error::BadDatabase {
                    path: self.path.clone(),
                    reason: "it is an SQLite database of another program".into(),
                });
            }
        }
        Ok(true)
    }

    /// The project schema's version in a shared database; `None` when it has none yet.
    fn pg_version(&self) -> Result<Option<i64>> {
        let has_history: bool = self
            .db
            .one(
                "SELECT to_regclass('refinery_schema_history') IS NOT NULL",
                params![],
            )
            .map_err(|e| self.err(e))?;
        if !has_history {
            return Ok(None);
        }
        self.schema_versions().map(|(found, _)| Some(found))
    }

    /// Bring the project's schema in a shared database up to date (making it, with `create`).
    /// Machines that start at once after an upgrade migrate one at a time: the one that
    /// migrates holds an advisory lock of the database, and the others find nothing to do.
    fn migrate_pg(&mut self, create: bool) -> Result<()> {
        // The project is registered (`gza.projects`) and its schema chosen before this, by
        // `connect_pg`.
        let Target::Postgres {
            project, schema, ..
        } = self.target.clone()
        else {
            return Ok(());
        };
        let known = self.known_version();
        let check = |store: &Store| -> Result<bool> {
            match store.pg_version()? {
                None if !create => Err(Error::MissingProject {
                    project: project.clone(),
                    database: match &store.target {
                        Target::Postgres { display, .. } => display.clone(),
                        Target::Sqlite => String::new(),
                    },
                }),
                None => Ok(true),
                Some(found) if found > known => Err(Error::NewerDatabase {
                    path: store.path.clone(),
                    found,
                    known,
                }),
                Some(found) => Ok(found < known),
            }
        };
        if !check(self)? {
            return Ok(());
        }
        let key = pg::lock_key("gza:migrate");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let got: bool = self
                .db
                .one("SELECT pg_try_advisory_lock(?1)", params![key])
                .map_err(|e| self.err(e))?;
            if got {
                break;
            }
            if std::time::Instant::now() > deadline {
                return Err(Error::Busy(format!(
                    "another gza has been migrating {} for a minute; wait for it and try again",
                    self.path.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The lock is the connection's: lost with it, so nothing here reconnects.
        let result = self.db.with_session_lock(|| -> Result<()> {
            if !check(self)? {
                return Ok(());
            }
            tracing::info!(database = %self.path.display(), "migrating the database");
            self.db
                .batch(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .map_err(|e| self.err(e))?;
            let found = self.pg_version()?.unwrap_or(0);
            // Grouped, as on SQLite: all pending migrations and their history rows in one
            // transaction (PostgreSQL's DDL is transactional; no migration here needs to run
            // outside one). The session advisory lock above is unaffected by it.
            let runner = embedded_pg::migrations::runner().set_grouped(true);
            let path = self.path.clone();
            self.db
                .with_pg(|pg| runner.run(&mut *pg.client).map(|_| ()))
                .expect("postgres")
                .map_err(|e| migration_failed(&path, found, known, &e))?;
            Ok(())
        });
        let _ = self
            .db
            .execute("SELECT pg_advisory_unlock(?1)", params![key]);
        result
    }

    /// How long statements wait for another process's write lock from now on.
    pub fn set_busy_timeout(&self, busy: Duration) -> Result<()> {
        self.db.set_lock_wait(busy).map_err(|e| self.err(e))?;
        self.busy.set(busy);
        Ok(())
    }

    /// How long statements wait for another process's write lock.
    pub fn busy_timeout(&self) -> Duration {
        self.busy.get()
    }

    /// Map a query-layer error from this store into a user-facing one.
    pub(crate) fn err(&self, e: DbError) -> Error {
        classify(&self.path, e)
    }
}

/// How an attempt to open a project in PostgreSQL failed ([`Store::connect_pg`]).
enum Opening {
    /// The server went away under it (restarting, or the connection dropped): worth another
    /// attempt while the reconnect budget lasts.
    Lost(Error),
    Failed(Error),
}

/// The register of projects (`gza.projects`) could not be read or written, in one line: a role
/// refused there is told what to grant, never to run `gza init` (which it could not do either).
fn register_refused(r: &pg::Resolved, e: postgres::Error, registering: bool) -> Error {
    use postgres::error::SqlState;
    let at = r.display();
    match e.as_db_error() {
        Some(db) if *db.code() == SqlState::INSUFFICIENT_PRIVILEGE => {
            Error::Unreachable(if registering {
                format!(
                    "PostgreSQL at {at} does not let user {user} register a project ({}); the first `gza init` in a database needs CREATE on it (GRANT CREATE ON DATABASE {db} TO {user}), later ones that and INSERT on gza.projects",
                    db.message(),
                    user = r.user,
                    db = r.dbname,
                )
            } else {
                format!(
                    "PostgreSQL at {at} does not let user {user} read the register of projects ({}); its owner grants it (GRANT USAGE ON SCHEMA gza TO {user}; GRANT SELECT ON gza.projects TO {user})",
                    db.message(),
                    user = r.user,
                )
            })
        }
        _ => classify_pg(Path::new(&at), e),
    }
}

/// Refuse a database path that exists but is not a regular file (a symbolic link to one is
/// followed) before SQLite opens it: SQLite blocks on a FIFO or reports "disk I/O error", and
/// calls a directory unwritable, none of which says what is wrong.
fn refuse_non_regular(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(Error::Usage(format!(
            "{} is {}, not a regular file; move it aside, then restore the database from a backup or run `gza init` to start an empty one",
            path.display(),
            gza_core::fsutil::describe_file_type(&meta.file_type())
        ))),
        _ => Ok(()),
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

/// One line for a migration that failed. Refinery's own message carries the migration's whole
/// SQL (rusqlite's `SqlInputError` quotes it), hundreds of lines that tell the person nothing;
/// the cause is the database's message alone. Migrations are grouped, so the database is as
/// it was: the line says so, and to keep the file.
fn migration_failed(path: &Path, found: i64, known: i64, e: &refinery::Error) -> Error {
    let mut cause = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<rusqlite::Error>() {
            cause = match r {
                rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
                other => other.to_string(),
            };
            break;
        }
        if let Some(p) = s.downcast_ref::<postgres::Error>() {
            cause = p
                .as_db_error()
                .map_or_else(|| p.to_string(), |d| d.message().to_string());
            break;
        }
        source = s.source();
    }
    Error::Migration(format!(
        "cannot upgrade {} from schema version {found} to {known}: {}; nothing was changed (an upgrade is all or nothing): keep a copy of the database and report this to gza's maintainers with `gza --version`",
        path.display(),
        one_line(&cause, 200)
    ))
}

/// The first line of `text`, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    match first.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &first[..at]),
        None => first.to_string(),
    }
}

/// Turn failures a user can act on into clear errors; keep the rest as they are.
fn classify(path: &Path, e: DbError) -> Error {
    match e {
        DbError::Sqlite(e) => classify_sqlite(path, e),
        DbError::Postgres(e) => classify_pg(path, e),
        DbError::Bad(what) if path.starts_with("postgres:") => Error::Usage(format!(
            "{what} in {}; gza cannot read that row: correct the value there (psql)",
            path.display()
        )),
        DbError::Bad(what) => Error::BadRow {
            path: path.to_path_buf(),
            what,
        },
        DbError::Silent(waited) => Error::Unreachable(format!(
            "PostgreSQL at {} did not answer a statement within {} s (the connection is open but nothing comes back: a hung server, a dead link or proxy); check the server and the network to it, then try again (GZA_STATEMENT_SECONDS sets how long gza waits)",
            path.display(),
            waited.as_secs_f64()
        )),
        DbError::Lost(what) => Error::Unreachable(format!(
            "{what} ({}); check that PostgreSQL runs and try again",
            path.display()
        )),
        other => Error::Store(other.to_string()),
    }
}

fn classify_sqlite(path: &Path, e: rusqlite::Error) -> Error {
    e.sqlite_error_code()
        .and_then(|code| classify_code(path, code))
        .unwrap_or(Error::Sqlite(e))
}

fn classify_pg(path: &Path, e: postgres::Error) -> Error {
    use postgres::error::SqlState;
    let Some(db) = e.as_db_error() else {
        // The connection broke (the server restarted, the network went): one line.
        return Error::Unreachable(format!(
            "lost the connection to {}: {e}; check that PostgreSQL runs and try again",
            path.display()
        ));
    };
    let code = db.code();
    if *code == SqlState::DISK_FULL {
        Error::DiskFull(path.to_path_buf())
    } else if *code == SqlState::LOCK_NOT_AVAILABLE || *code == SqlState::QUERY_CANCELED {
        Error::Locked(path.to_path_buf())
    } else if *code == SqlState::ADMIN_SHUTDOWN
        || *code == SqlState::CRASH_SHUTDOWN
        || *code == SqlState::CANNOT_CONNECT_NOW
    {
        Error::Unreachable(format!(
            "PostgreSQL at {} is shutting down or restarting ({}); try again in a moment",
            path.display(),
            db.message()
        ))
    } else if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        Error::Unreachable(format!(
            "PostgreSQL at {} refused: {}; the database user needs rights on the project's schema and tables: their owner grants them (GRANT USAGE ON SCHEMA …; GRANT ALL ON ALL TABLES IN SCHEMA …; the same ON ALL SEQUENCES), or connect as the user that made them (`gza db status` shows the schema)",
            path.display(),
            db.message()
        ))
    } else {
        Error::Store(format!("{}: {}", db.code().code(), db.message()))
    }
}

fn classify_code(path: &Path, code: ErrorCode) -> Option<Error> {
    let path = path.to_path_buf();
    Some(match code {
        ErrorCode::NotADatabase => Error::BadDatabase {
            path,
            reason: "the file is not an SQLite database".into(),
        },
        // Damaged, not foreign: what it holds can be recovered, so it is never called discardable.
        ErrorCode::DatabaseCorrupt => Error::DamagedDatabase(path),
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Error::Locked(path),
        ErrorCode::DiskFull => Error::DiskFull(path),
        ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
            Error::ReadOnly(path)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod latest_migration_tests {
    use super::Backend;

    fn highest(migrations: &[refinery::Migration]) -> i64 {
        migrations
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn the_latest_migration_is_refinerys() {
        let sqlite = highest(
            &super::embedded::migrations::runner()
                .get_migrations()
                .to_vec(),
        );
        assert_eq!(super::latest_migration(Backend::Sqlite), sqlite);
        let pg = highest(
            &super::embedded_pg::migrations::runner()
                .get_migrations()
                .to_vec(),
        );
        assert_eq!(super::latest_migration(Backend::Postgres), pg);
    }
}
