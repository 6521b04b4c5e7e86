//! The query layer under [`crate::Store`]: one small API over SQLite (rusqlite) and PostgreSQL
//! (the synchronous `postgres` client), so every query is written once.
//!
//! How a query is written (docs/architecture.md, "Adding a query"):
//!
//! - **One SQL text** where the dialects agree, which is nearly everywhere: parameters are
//!   SQLite's numbered `?1`, `?2` (rewritten to `$1`, `$2` for PostgreSQL, outside quotes);
//!   SQLite's index hints `INDEXED BY name` and `NOT INDEXED` are dropped for PostgreSQL.
//!   Write `ON CONFLICT … DO NOTHING` rather than `INSERT OR IGNORE`, `RETURNING id` rather than
//!   `last_insert_rowid()`, `COALESCE` rather than `IFNULL`, `IS NOT DISTINCT FROM` rather than
//!   `IS` between values, and `CAST(SUM(x) AS BIGINT)` where PostgreSQL would answer `numeric`.
//! - **A fragment per backend** where they differ inside one statement: [`Db::backend`] and the
//!   helpers on [`Backend`] (`now_epoch`, `greatest`, `json_ids`…).
//! - **A whole text per backend** only where the statement must differ in shape
//!   (`match db.backend() { … }`).
//!
//! Values cross in one of six shapes ([`Param`] in, [`Val`] out). Each PostgreSQL parameter
//! takes whatever type the server infers for it (an integer bound where the server wants
//! `boolean` is sent as one), as SQLite would take it; a parameter whose type the server cannot
//! infer (`?3 IS NULL` alone) is an error on PostgreSQL: write `CAST(?3 AS TEXT) IS NULL`.
//! Every query runs on both backends in the tests (`tests/it` runs twice; this crate's unit
//! tests run each store query on both when a test cluster is given).

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

use postgres::types::{IsNull, ToSql, Type, to_sql_checked};

/// Which database engine a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }

    /// The database's clock now, in seconds since the epoch (fractions included): leases and
    /// their staleness are measured on it, never on a worker's clock.
    pub(crate) fn now_epoch(self) -> &'static str {
        match self {
            Backend::Sqlite => "(unixepoch('subsec'))",
            Backend::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)",
        }
    }

    /// The larger of two values (SQLite's two-argument `MAX`, PostgreSQL's `GREATEST`).
    pub(crate) fn greatest(self, a: &str, b: &str) -> String {
        match self {
            Backend::Sqlite => format!("MAX({a}, {b})"),
            Backend::Postgres => format!("GREATEST({a}, {b})"),
        }
    }

    /// The integers of the JSON array in parameter `param` (`?1`), as a subquery's rows.
    pub(crate) fn json_ids(self, param: &str) -> String {
        match self {
            Backend::Sqlite => format!("SELECT value FROM json_each({param})"),
            Backend::Postgres => format!(
                "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST({param} AS JSON))"
            ),
        }
    }

    /// The strings of the JSON array in parameter `param` (`?1`), as a subquery's rows.
    pub(crate) fn json_texts(self, param: &str) -> String {
        match self {
            Backend::Sqlite => format!("SELECT value FROM json_each({param})"),
            Backend::Postgres => {
                format!("SELECT value FROM json_array_elements_text(CAST({param} AS JSON))")
            }
        }
    }

    /// The length of the JSON array in parameter `param`.
    pub(crate) fn json_len(self, param: &str) -> String {
        match self {
            Backend::Sqlite => format!("json_array_length({param})"),
            Backend::Postgres => format!("json_array_length(CAST({param} AS JSON))"),
        }
    }
}

/// Text as both backends store it: every NUL (U+0000) becomes U+FFFD, the replacement
/// character.
///
/// PostgreSQL's `text` cannot hold a NUL at all (`22021 invalid byte sequence`), while SQLite
/// stores it as is; an agent that printed one made its task's outcome unrecordable on one
/// backend only. Applied where every text parameter is bound, on both backends, so a project
/// reads the same in `gza show`, `gza log` and JSON whichever holds it, and `gza db copy`
/// carries it over. U+FFFD rather than a visible escape such as `\0`: it is what lossy UTF-8
/// decoding already puts where output held bytes text cannot, it cannot be confused with the
/// two characters `\0` an agent may print itself, and it is one character, so cuts and lengths
/// stay what they were. Blobs (`BYTEA`) are bytes and are never touched.
pub fn storable_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// A value bound to a statement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
    Bool(bool),
}

/// What can be bound to a statement.
pub trait ToParam {
    fn param(&self) -> Param<'_>;
}

/// Bind values in order: `params![id, name]`.
#[macro_export]
#[doc(hidden)]
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::db::ToParam]
    };
    ($($p:expr),+ $(,)?) => {
        &[$(&$p as &dyn $crate::db::ToParam),+] as &[&dyn $crate::db::ToParam]
    };
}

macro_rules! int_param {
    ($($t:ty),*) => {$(
        impl ToParam for $t {
            fn param(&self) -> Param<'_> {
                Param::Int(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
    )*};
}
int_param!(i64, i32, i16, u8, u16, u32, u64, usize);

impl ToParam for f64 {
    fn param(&self) -> Param<'_> {
        Param::Real(*self)
    }
}
impl ToParam for bool {
    fn param(&self) -> Param<'_> {
        Param::Bool(*self)
    }
}
impl ToParam for str {
    fn param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl ToParam for String {
    fn param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl ToParam for std::borrow::Cow<'_, str> {
    fn param(&self) -> Param<'_> {
        Param::Text(self)
    }
}
impl ToParam for [u8] {
    fn param(&self) -> Param<'_> {
        Param::Blob(self)
    }
}
impl ToParam for Vec<u8> {
    fn param(&self) -> Param<'_> {
        Param::Blob(self)
    }
}
impl<T: ToParam + ?Sized> ToParam for &T {
    fn param(&self) -> Param<'_> {
        (**self).param()
    }
}
impl<T: ToParam> ToParam for Option<T> {
    fn param(&self) -> Param<'_> {
        match self {
            Some(v) => v.param(),
            None => Param::Null,
        }
    }
}
impl ToParam for gza_core::task::TaskId {
    fn param(&self) -> Param<'_> {
        Param::Int(self.0)
    }
}
impl ToParam for gza_core::task::FailureReason {
    fn param(&self) -> Param<'_> {
        Param::Text(self.as_str())
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        if let Param::Text(s) = *self
            && let std::borrow::Cow::Owned(text) = storable_text(s)
        {
            return Ok(ToSqlOutput::Owned(rusqlite::types::Value::Text(text)));
        }
        Ok(ToSqlOutput::Borrowed(match *self {
            Param::Null => ValueRef::Null,
            Param::Int(i) => ValueRef::Integer(i),
            Param::Real(f) => ValueRef::Real(f),
            Param::Text(s) => ValueRef::Text(s.as_bytes()),
            Param::Blob(b) => ValueRef::Blob(b),
            Param::Bool(b) => ValueRef::Integer(i64::from(b)),
        }))
    }
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

fn mismatch(what: &str, ty: &Type) -> BoxError {
    format!("cannot bind {what} where PostgreSQL expects {ty}").into()
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, BoxError> {
        match *self {
            Param::Null => Ok(IsNull::Yes),
            Param::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
                Type::FLOAT8 => (i as f64).to_sql(ty, out),
                Type::FLOAT4 => (i as f32).to_sql(ty, out),
                Type::BOOL => (i != 0).to_sql(ty, out),
                Type::OID => u32::try_from(i)?.to_sql(ty, out),
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    i.to_string().as_str().to_sql(ty, out)
                }
                _ => Err(mismatch("an integer", ty)),
            },
            Param::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                Type::FLOAT4 => (f as f32).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR | Type::UNKNOWN => {
                    f.to_string().as_str().to_sql(ty, out)
                }
                _ => Err(mismatch("a real number", ty)),
            },
            Param::Text(s) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    storable_text(s).as_ref().to_sql(ty, out)
                }
                Type::JSON | Type::JSONB => {
                    // The text is JSON already: sent as it is, after JSONB's version byte.
                    if *ty == Type::JSONB {
                        out.extend_from_slice(&[1]);
                    }
                    out.extend_from_slice(storable_text(s).as_bytes());
                    Ok(IsNull::No)
                }
                _ => Err(mismatch("text", ty)),
            },
            Param::Blob(b) => match *ty {
                Type::BYTEA => b.to_sql(ty, out),
                _ => Err(mismatch("bytes", ty)),
            },
            Param::Bool(b) => match *ty {
                Type::BOOL => b.to_sql(ty, out),
                Type::INT8 => i64::from(b).to_sql(ty, out),
                Type::INT4 => i32::from(b).to_sql(ty, out),
                Type::INT2 => i16::from(b).to_sql(ty, out),
                _ => Err(mismatch("a boolean", ty)),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A value read from a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
    Bool(bool),
}

impl Val<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Val::Null => "NULL",
            Val::Int(_) => "an integer",
            Val::Real(_) => "a real number",
            Val::Text(_) => "text",
            Val::Blob(_) => "bytes",
            Val::Bool(_) => "a boolean",
        }
    }
}

/// What a column can be read as.
pub trait FromVal: Sized {
    fn from_val(v: Val<'_>) -> Result<Self, String>;
}

fn wrong(v: Val<'_>, want: &str) -> String {
    format!("{} where {want} was expected", v.kind())
}

impl FromVal for i64 {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        match v {
            Val::Int(i) => Ok(i),
            Val::Bool(b) => Ok(i64::from(b)),
            other => Err(wrong(other, "an integer")),
        }
    }
}
macro_rules! narrow_int {
    ($($t:ty),*) => {$(
        impl FromVal for $t {
            fn from_val(v: Val<'_>) -> Result<Self, String> {
                let i = i64::from_val(v)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range"))
            }
        }
    )*};
}
narrow_int!(i32, u8, u16, u32, u64, usize);

impl FromVal for f64 {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        match v {
            Val::Real(f) => Ok(f),
            Val::Int(i) => Ok(i as f64),
            other => Err(wrong(other, "a number")),
        }
    }
}
impl FromVal for bool {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        match v {
            Val::Bool(b) => Ok(b),
            Val::Int(i) => Ok(i != 0),
            other => Err(wrong(other, "a boolean")),
        }
    }
}
impl FromVal for String {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        match v {
            Val::Text(s) => Ok(s.to_string()),
            // SQLite keeps what it is given: a number in a text column reads as its text.
            Val::Int(i) => Ok(i.to_string()),
            Val::Real(f) => Ok(f.to_string()),
            other => Err(wrong(other, "text")),
        }
    }
}
impl FromVal for Vec<u8> {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        match v {
            Val::Blob(b) => Ok(b.to_vec()),
            Val::Text(s) => Ok(s.as_bytes().to_vec()),
            other => Err(wrong(other, "bytes")),
        }
    }
}
impl<T: FromVal> FromVal for Option<T> {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        match v {
            Val::Null => Ok(None),
            other => T::from_val(other).map(Some),
        }
    }
}
impl FromVal for gza_core::task::TaskId {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        i64::from_val(v).map(gza_core::task::TaskId)
    }
}
impl FromVal for gza_core::task::FailureReason {
    fn from_val(v: Val<'_>) -> Result<Self, String> {
        match v {
            Val::Text(s) => Ok(gza_core::task::FailureReason::parse(s)),
            other => Err(wrong(other, "text")),
        }
    }
}

/// A failure of the query layer, classified into gza's errors by the store.
#[derive(Debug)]
pub enum DbError {
    Sqlite(rusqlite::Error),
    Postgres(postgres::Error),
    /// `query_row` found no row.
    NoRow,
    /// A column holds a value of another shape than the code reads.
    Column {
        index: usize,
        name: String,
        message: String,
    },
    /// A value gza cannot read (a time or status a person wrote): named by its row.
    Bad(String),
    /// The PostgreSQL connection was lost and could not be replaced (the server stayed down
    /// past the reconnect budget, or a session lock held on it went with it), in words.
    Lost(String),
    /// No answer to a statement within its deadline on a connection that is open
    /// ([`crate::deadline`]): how long was waited. The connection is shut and replaced by the
    /// next statement.
    Silent(Duration),
    /// Anything else, in words.
    Other(String),
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Sqlite(e) => e.fmt(f),
            DbError::Postgres(e) => match e.as_db_error() {
                Some(db) => write!(f, "{}: {}", db.severity(), db.message()),
                None => e.fmt(f),
            },
            DbError::NoRow => f.write_str("the query returned no row"),
            DbError::Column {
                index,
                name,
                message,
            } => write!(f, "column {index} ({name}): {message}"),
            DbError::Bad(b) => b.fmt(f),
            DbError::Silent(waited) => write!(
                f,
                "PostgreSQL did not answer within {} s",
                waited.as_secs_f64()
            ),
            DbError::Lost(m) | DbError::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for DbError {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}
impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> Self {
        DbError::Postgres(e)
    }
}

pub type DbResult<T> = std::result::Result<T, DbError>;

/// One row of a result.
pub struct Row<'a> {
    inner: RowInner<'a>,
}

enum RowInner<'a> {
    Sqlite(&'a rusqlite::Row<'a>),
    Postgres(&'a postgres::Row),
}

impl Row<'_> {
    /// Column `idx` as it is stored.
    pub fn value(&self, idx: usize) -> DbResult<Val<'_>> {
        match &self.inner {
            RowInner::Sqlite(row) => {
                use rusqlite::types::ValueRef;
                Ok(match row.get_ref(idx)? {
                    ValueRef::Null => Val::Null,
                    ValueRef::Integer(i) => Val::Int(i),
                    ValueRef::Real(f) => Val::Real(f),
                    ValueRef::Text(t) => Val::Text(std::str::from_utf8(t).map_err(|e| {
                        self.column_error(idx, format!("text that is not UTF-8: {e}"))
                    })?),
                    ValueRef::Blob(b) => Val::Blob(b),
                })
            }
            RowInner::Postgres(row) => pg_value(row, idx).map_err(|m| self.column_error(idx, m)),
        }
    }

    /// Column `idx` read as `T`.
    pub fn get<T: FromVal>(&self, idx: usize) -> DbResult<T> {
        let v = self.value(idx)?;
        T::from_val(v).map_err(|m| self.column_error(idx, m))
    }

    /// How many columns the row has.
    pub fn column_count(&self) -> usize {
        match &self.inner {
            RowInner::Sqlite(row) => row.as_ref().column_count(),
            RowInner::Postgres(row) => row.columns().len(),
        }
    }

    /// The name of column `idx`.
    pub fn column_name(&self, idx: usize) -> String {
        match &self.inner {
            RowInner::Sqlite(row) => row
                .as_ref()
                .column_name(idx)
                .map_or_else(|_| format!("column {idx}"), str::to_string),
            RowInner::Postgres(row) => row
                .columns()
                .get(idx)
                .map_or_else(|| format!("column {idx}"), |c| c.name().to_string()),
        }
    }

    fn column_error(&self, index: usize, message: String) -> DbError {
        DbError::Column {
            index,
            name: self.column_name(index),
            message,
        }
    }
}

fn pg_value(row: &postgres::Row, idx: usize) -> Result<Val<'_>, String> {
    let column = row
        .columns()
        .get(idx)
        .ok_or_else(|| format!("there is no column {idx}"))?;
    let e = |e: postgres::Error| e.to_string();
    let ty = column.type_();
    Ok(match *ty {
        Type::INT8 => row
            .try_get::<_, Option<i64>>(idx)
            .map_err(e)?
            .map_or(Val::Null, Val::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(idx)
            .map_err(e)?
            .map_or(Val::Null, |i| Val::Int(i.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(idx)
            .map_err(e)?
            .map_or(Val::Null, |i| Val::Int(i.into())),
        Type::OID => row
            .try_get::<_, Option<u32>>(idx)
            .map_err(e)?
            .map_or(Val::Null, |i| Val::Int(i.into())),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(idx)
            .map_err(e)?
            .map_or(Val::Null, Val::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(idx)
            .map_err(e)?
            .map_or(Val::Null, |f| Val::Real(f.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(idx)
            .map_err(e)?
            .map_or(Val::Null, Val::Bool),
        Type::BYTEA => row
            .try_get::<_, Option<&[u8]>>(idx)
            .map_err(e)?
            .map_or(Val::Null, Val::Blob),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => row
            .try_get::<_, Option<&str>>(idx)
            .map_err(e)?
            .map_or(Val::Null, Val::Text),
        _ => {
            return Err(format!(
                "PostgreSQL answered with type {ty}, which gza does not read: cast it in the query"
            ));
        }
    })
}

/// A lock held across every machine of a project for as long as it lives: on PostgreSQL a
/// session advisory lock (released when dropped, or by the server when the connection ends, so
/// a killed process leaves none behind); on SQLite nothing, where one file is one machine's and
/// a file lock beside it does the work.
pub struct SharedLock<'a> {
    db: Option<&'a Db>,
    key: i64,
}

impl Drop for SharedLock<'_> {
    fn drop(&mut self) {
        if let Some(db) = self.db {
            let key = self.key;
            let _ = db.with_pg(|pg| {
                pg.session_locks = pg.session_locks.saturating_sub(1);
                if !pg.broken {
                    // Under the statement deadline as every other statement: a server that
                    // stopped answering after the lock was taken would otherwise hold the
                    // process here forever (the lock goes with the connection anyway).
                    let _ = db.bounded(pg, &mut |pg: &mut Pg| {
                        Ok(pg
                            .client
                            .execute("SELECT pg_advisory_unlock($1)", &[&key])?)
                    });
                }
            });
        }
    }
}

impl Db {
    /// Take the shared lock `key` if nobody holds it (`None` when another connection does).
    pub fn try_shared_lock(&self, key: i64) -> DbResult<Option<SharedLock<'_>>> {
        match &self.inner {
            Inner::Sqlite(_) => Ok(Some(SharedLock { db: None, key })),
            Inner::Postgres(cell) => {
                let sql = "SELECT pg_try_advisory_lock($1)";
                let got: bool = self.pg_run(cell, Some(sql), |pg| {
                    Ok(pg.client.query_one(sql, &[&key])?.get(0))
                })?;
                if !got {
                    return Ok(None);
                }
                // The lock lives as long as this connection: while it is held, a lost
                // connection is not replaced behind its holder's back (see `Db::pg_run`).
                cell.borrow_mut().session_locks += 1;
                Ok(Some(SharedLock {
                    db: Some(self),
                    key,
                }))
            }
        }
    }
}

impl Db {
    /// Wait until another connection may have made a task claimable, for at most `limit`,
    /// returning early (false) when `stop` says so; true when woken by a change, false on the
    /// time limit. PostgreSQL: `LISTEN` on the project's channel (its `gza_work_notify`
    /// trigger, PG V12), so an idle worker costs the server nothing. SQLite: the file's
    /// `data_version`, read every quarter second (a read of the open connection's pager, no
    /// lock), which moves when another connection commits.
    pub fn wait_for_change(
        &self,
        limit: std::time::Duration,
        stop: &dyn Fn() -> bool,
    ) -> DbResult<bool> {
        let started = std::time::Instant::now();
        let tick = std::time::Duration::from_millis(250);
        match &self.inner {
            Inner::Sqlite(conn) => {
                let version = |c: &rusqlite::Connection| -> DbResult<i64> {
                    Ok(c.query_row("PRAGMA data_version", [], |r| r.get(0))?)
                };
                let before = version(conn)?;
                while started.elapsed() < limit && !stop() {
                    std::thread::sleep(tick);
                    if version(conn)? != before {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Inner::Postgres(cell) => {
                use postgres::fallible_iterator::FallibleIterator;
                let listen = |pg: &mut Pg| -> DbResult<()> {
                    if !pg.listening {
                        let channel: String = pg
                            .client
                            .query_one("SELECT 'gza_work_' || md5(current_schema())", &[])?
                            .get(0);
                        pg.client.batch_execute(&format!("LISTEN \"{channel}\""))?;
                        pg.listening = true;
                    }
                    Ok(())
                };
                self.pg_run(cell, Some("LISTEN"), listen)?;
                let waited = (|| -> DbResult<bool> {
                    let mut pg = cell.borrow_mut();
                    while started.elapsed() < limit && !stop() {
                        let mut notes = pg.client.notifications();
                        if notes.timeout_iter(tick).next()?.is_some() {
                            // Whatever else arrived with it is the same news.
                            while notes.iter().next()?.is_some() {}
                            return Ok(true);
                        }
                    }
                    Ok(false)
                })();
                match waited {
                    // The connection went while waiting (the server restarted): whatever was
                    // notified meanwhile is lost with it, so the caller looks again, on a new
                    // connection that listens again.
                    Err(e) if lost(&e).is_some() => {
                        cell.borrow_mut().broken = true;
                        self.pg_run(cell, Some("LISTEN"), listen)?;
                        Ok(true)
                    }
                    other => other,
                }
            }
        }
    }
}

/// A PostgreSQL connection and what it keeps between queries.
pub(crate) struct Pg {
    pub client: PgClient,
    /// Prepared statements by the SQL text gza wrote (before translation).
    statements: HashMap<String, postgres::Statement>,
    /// `LISTEN` was sent for the project's work channel ([`Db::wait_for_change`]).
    listening: bool,
    /// The key of the project's write lock (a transaction-scoped advisory lock): what SQLite's
    /// `BEGIN IMMEDIATE` is to one file, this is to a project's schema, so every write path
    /// written against SQLite's one-writer rule stays correct across machines.
    pub write_lock: i64,
    /// Opens the connection again when it is lost; `None` never does.
    connector: Option<Connector>,
    /// The lock wait set on this connection ([`Db::set_lock_wait`]), set again on a new one.
    lock_wait: Option<Duration>,
    /// Session advisory locks held on this connection ([`SharedLock`]). They go with it, so
    /// while one is held a lost connection is not replaced: its holder is told instead.
    session_locks: usize,
    /// The connection was found lost and is not yet replaced.
    broken: bool,
    /// The connection's socket, to shut down when a statement gets no answer within its
    /// deadline ([`crate::deadline`]); `None` when it could not be told (no deadline then).
    socket: Option<crate::deadline::Socket>,
}

/// Opens a new connection to the same database and schema, waiting at most the given time.
pub(crate) type Connector =
    Box<dyn Fn(Duration) -> std::result::Result<crate::pg::Connected, String> + Send>;

/// Statements never sent again on a new connection: they end or step inside a transaction.
const ENDS_OR_STEPS: [&str; 5] = ["COMMIT", "ROLLBACK", "RELEASE", "SAVEPOINT", "END"];

/// The first word of a statement.
fn first_word(sql: &str) -> &str {
    let sql = sql.trim_start();
    let end = sql
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(sql.len());
    &sql[..end]
}

fn lock_wait_sql(wait: Duration) -> String {
    format!("SET lock_timeout = {}", wait.as_millis().max(1))
}

/// How a lost connection left the statement that found it lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lost {
    /// The server said it ended the session (shut down, crashed, not yet accepting): the
    /// statement's transaction was rolled back with it.
    Aborted,
    /// The connection closed or broke under the statement: it may have run or not.
    Unknown,
}

/// Whether `e` says the connection is gone, and what that left of the statement.
fn lost(e: &DbError) -> Option<Lost> {
    let DbError::Postgres(e) = e else {
        return None;
    };
    lost_how(e)
}

/// Whether `e` says the connection was lost, or ended by a server shutting down or restarting.
pub(crate) fn lost_pg(e: &postgres::Error) -> bool {
    lost_how(e).is_some()
}

fn lost_how(e: &postgres::Error) -> Option<Lost> {
    if crate::pg::passing_state(e) {
        return Some(Lost::Aborted);
    }
    if let Some(code) = e.code() {
        // Class 08, connection exceptions.
        return code.code().starts_with("08").then_some(Lost::Unknown);
    }
    let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    (e.is_closed() || io).then_some(Lost::Unknown)
}

/// How long a lost connection is tried again, in all, before the statement fails: 60 s, or
/// `GZA_RECONNECT_SECONDS` (0 never tries). Long enough for a server restart or a failover,
/// short enough that a worker cut off for good keeps its outcome on disk and says so.
pub fn reconnect_budget() -> Duration {
    std::env::var("GZA_RECONNECT_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map_or(Duration::from_secs(60), Duration::from_secs_f64)
}

/// The pause before reconnect attempt `attempt` (from 0): doubling from 100 ms up to 2 s,
/// each jittered to between half and all of it, so workers cut off together do not come back
/// together.
pub(crate) fn backoff(attempt: u32) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let full = Duration::from_millis(100)
        .saturating_mul(1u32 << attempt.min(5))
        .min(Duration::from_secs(2));
    // A random number from the standard library's randomly seeded hasher.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    let fraction = 0.5 + (h.finish() % 1000) as f64 / 2000.0;
    full.mul_f64(fraction)
}

impl Pg {
    /// Replace the lost connection: attempts with [`backoff`] between them until one opens or
    /// `budget` is spent (a stop request ends the wait); then what the old connection had set
    /// up (its lock wait) is set again. Prepared statements and `LISTEN` go with the old one.
    fn reconnect(&mut self, budget: Duration) -> DbResult<()> {
        let Some(connector) = &self.connector else {
            return Err(DbError::Lost(
                "the connection to PostgreSQL was lost".into(),
            ));
        };
        let started = std::time::Instant::now();
        let mut attempt = 0;
        let mut last;
        loop {
            let left = budget.saturating_sub(started.elapsed());
            match connector(left.clamp(Duration::from_secs(1), Duration::from_secs(10))) {
                Ok((client, socket)) => {
                    self.client = PgClient(Some(client));
                    self.socket = socket;
                    self.statements.clear();
                    self.listening = false;
                    self.broken = false;
                    if let Some(wait) = self.lock_wait {
                        self.client.batch_execute(&lock_wait_sql(wait))?;
                    }
                    tracing::warn!(
                        attempts = attempt + 1,
                        ms = started.elapsed().as_millis() as u64,
                        "reconnected to PostgreSQL"
                    );
                    return Ok(());
                }
                Err(e) => last = e,
            }
            let pause = backoff(attempt);
            attempt += 1;
            if started.elapsed() + pause >= budget || gza_core::process::stop_requested() {
                break;
            }
            std::thread::sleep(pause);
        }
        Err(DbError::Lost(format!(
            "lost the connection to PostgreSQL and could not connect again in {} s ({attempt} attempts): {last}",
            started.elapsed().as_secs()
        )))
    }
}

impl Db {
    /// Run `op` on the PostgreSQL connection, replacing a lost one. A connection already found
    /// lost (or closed since) is replaced first. When `op` finds it lost outside a transaction,
    /// it is replaced (with backoff, within [`reconnect_budget`]) and `op` runs once more if
    /// `repeat` allows: when the server said it aborted the statement, or when the statement
    /// (`repeat` names its text) is not an `INSERT`, since every other statement gza sends
    /// outside a transaction sets values or reads and so means the same run twice. Inside a
    /// transaction or a preview the error is returned and the connection replaced by the next
    /// statement outside one: the caller decides whether the whole transaction may run again
    /// (`Store::immediate_retrying`). While a session lock is held nothing is replaced.
    fn pg_run<T>(
        &self,
        cell: &RefCell<Pg>,
        repeat: Option<&str>,
        mut op: impl FnMut(&mut Pg) -> DbResult<T>,
    ) -> DbResult<T> {
        let mut pg = cell.borrow_mut();
        let free = !self.in_tx.get() && !self.previewing.get();
        let may_replace = |pg: &Pg| free && pg.session_locks == 0 && pg.connector.is_some();
        if (pg.broken || pg.client.is_closed()) && may_replace(&pg) {
            let budget = self.reconnect_budget();
            pg.reconnect(budget)?;
        } else if pg.broken && pg.session_locks > 0 {
            return Err(DbError::Lost(
                "lost the connection to PostgreSQL, and the lock held on it with it".into(),
            ));
        }
        let e = match self.bounded(&mut pg, &mut op) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let Some(how) = lost(&e) else {
            return Err(e);
        };
        pg.broken = true;
        if !may_replace(&pg) {
            return Err(e);
        }
        tracing::warn!(error = %e, "the connection to PostgreSQL was lost; connecting again");
        let budget = self.reconnect_budget();
        pg.reconnect(budget)?;
        let again = match (how, repeat) {
            (_, None) => false,
            (Lost::Aborted, Some(_)) => true,
            (Lost::Unknown, Some(sql)) => !first_word(sql).eq_ignore_ascii_case("INSERT"),
        };
        if !again {
            return Err(e);
        }
        self.bounded(&mut pg, &mut op)
    }

    /// Run `op` under the statement deadline ([`crate::deadline`]), unless inside
    /// [`Db::without_deadline`] or the connection's socket is not known. Past the deadline the
    /// socket is shut down, the connection marked lost (the next statement opens another), and
    /// [`DbError::Silent`] returned: never sent again here, since a server that stopped
    /// answering is no restart to wait out.
    fn bounded<T>(&self, pg: &mut Pg, op: &mut impl FnMut(&mut Pg) -> DbResult<T>) -> DbResult<T> {
        let within = if self.unbounded.get() {
            None
        } else {
            crate::deadline::statement_deadline()
        };
        let Some((socket, within)) = pg.socket.zip(within) else {
            return op(pg);
        };
        let guard = crate::deadline::arm(socket, within);
        let result = op(pg);
        if guard.disarm() {
            pg.broken = true;
            pg.socket = None;
            return Err(DbError::Silent(within));
        }
        result
    }

    /// Run `f` with no statement deadline: for what legitimately runs long on a live server
    /// (`gza db copy`'s bulk statements). Migrations need none: they run on the connection
    /// directly.
    pub fn without_deadline<T>(&self, f: impl FnOnce() -> T) -> T {
        let was = self.unbounded.replace(true);
        let value = f();
        self.unbounded.set(was);
        value
    }

    /// How long a lost connection is tried again now: [`reconnect_budget`], or a single quick
    /// attempt inside [`Db::quickly`].
    fn reconnect_budget(&self) -> Duration {
        if self.quick.get() {
            Duration::ZERO
        } else {
            reconnect_budget()
        }
    }

    /// Run `f` without waiting for a lost connection: one attempt to connect again, then the
    /// error. For what a worker checks while its agent runs (whether the task is still its
    /// own, its progress), which must not hold up watching the agent.
    pub fn quickly<T>(&self, f: impl FnOnce() -> T) -> T {
        let was = self.quick.replace(true);
        let value = f();
        self.quick.set(was);
        value
    }

    /// Whether the connection is known to be lost and not yet replaced (PostgreSQL).
    pub fn is_broken(&self) -> bool {
        self.with_pg(|pg| pg.broken).unwrap_or(false)
    }

    /// Whether `e` says the connection was lost (PostgreSQL).
    pub(crate) fn is_lost(e: &DbError) -> bool {
        lost(e).is_some()
    }

    /// Run `f` holding a session lock taken by a statement of its own (the migration lock):
    /// counted as a [`SharedLock`] is, so a connection lost meanwhile is not replaced under it.
    pub(crate) fn with_session_lock<T>(&self, f: impl FnOnce() -> T) -> T {
        let _ = self.with_pg(|pg| pg.session_locks += 1);
        let value = f();
        let _ = self.with_pg(|pg| pg.session_locks = pg.session_locks.saturating_sub(1));
        value
    }

    /// Inside [`Db::preview`].
    pub(crate) fn in_preview(&self) -> bool {
        self.previewing.get()
    }
}

/// Prepared statements kept per connection, at most.
const STATEMENT_CACHE: usize = 256;

/// The `postgres` client, closed where closing it cannot panic. The client drives its
/// connection on a runtime of its own, which it blocks on, closing too; blocking on a runtime
/// from a thread that drives another (the dashboard's, the MCP server's) panics. A store used
/// there runs its queries off the async threads, but may still be dropped on one (a task
/// cancelled at shutdown, the last handle to a pool let go in an async block): it is then
/// closed on a thread of its own.
pub(crate) struct PgClient(Option<postgres::Client>);

impl std::ops::Deref for PgClient {
    type Target = postgres::Client;
    fn deref(&self) -> &postgres::Client {
        self.0
            .as_ref()
            .expect("the client is taken only when dropped")
    }
}

impl std::ops::DerefMut for PgClient {
    fn deref_mut(&mut self) -> &mut postgres::Client {
        self.0
            .as_mut()
            .expect("the client is taken only when dropped")
    }
}

impl Drop for PgClient {
    fn drop(&mut self) {
        let Some(client) = self.0.take() else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return drop(client);
        }
        let (give, take) = std::sync::mpsc::channel::<postgres::Client>();
        match std::thread::Builder::new()
            .name("gza pg close".into())
            .spawn(move || drop(take.recv()))
        {
            Ok(closer) => {
                let _ = give.send(client);
                let _ = closer.join();
            }
            // No thread to close it on: the socket is let go unclosed (the server sees the
            // client leave), never closed here, where it would panic.
            Err(_) => std::mem::forget(client),
        }
    }
}

enum Inner {
    Sqlite(rusqlite::Connection),
    Postgres(Box<RefCell<Pg>>),
}

/// An open database connection.
pub struct Db {
    inner: Inner,
    in_tx: std::cell::Cell<bool>,
    /// Inside [`Db::preview`]: transactions are savepoints of the preview's.
    previewing: std::cell::Cell<bool>,
    /// Inside [`Db::quickly`]: a lost connection gets one attempt, no waiting.
    quick: std::cell::Cell<bool>,
    /// Inside [`Db::without_deadline`]: statements wait for their answer however long.
    unbounded: std::cell::Cell<bool>,
}

impl Db {
    pub(crate) fn sqlite(conn: rusqlite::Connection) -> Db {
        conn.set_prepared_statement_cache_capacity(64);
        Db {
            inner: Inner::Sqlite(conn),
            in_tx: std::cell::Cell::new(false),
            previewing: std::cell::Cell::new(false),
            quick: std::cell::Cell::new(false),
            unbounded: std::cell::Cell::new(false),
        }
    }

    /// A PostgreSQL connection; `connector` opens it again when it is lost.
    pub(crate) fn postgres(
        client: postgres::Client,
        socket: Option<crate::deadline::Socket>,
        write_lock: i64,
        connector: Option<Connector>,
    ) -> Db {
        Db {
            inner: Inner::Postgres(Box::new(RefCell::new(Pg {
                client: PgClient(Some(client)),
                statements: HashMap::new(),
                write_lock,
                listening: false,
                connector,
                lock_wait: None,
                session_locks: 0,
                broken: false,
                socket,
            }))),
            in_tx: std::cell::Cell::new(false),
            previewing: std::cell::Cell::new(false),
            quick: std::cell::Cell::new(false),
            unbounded: std::cell::Cell::new(false),
        }
    }

    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Sqlite(_) => Backend::Sqlite,
            Inner::Postgres(_) => Backend::Postgres,
        }
    }

    /// The SQLite connection, for what only SQLite has (pragmas, the refinery runner).
    pub(crate) fn sqlite_conn(&self) -> Option<&rusqlite::Connection> {
        match &self.inner {
            Inner::Sqlite(c) => Some(c),
            Inner::Postgres(_) => None,
        }
    }

    pub(crate) fn sqlite_conn_mut(&mut self) -> Option<&mut rusqlite::Connection> {
        match &mut self.inner {
            Inner::Sqlite(c) => Some(c),
            Inner::Postgres(_) => None,
        }
    }

    /// The PostgreSQL connection, for what only PostgreSQL has (the refinery runner, LISTEN).
    pub(crate) fn with_pg<T>(&self, f: impl FnOnce(&mut Pg) -> T) -> Option<T> {
        match &self.inner {
            Inner::Sqlite(_) => None,
            Inner::Postgres(pg) => Some(f(&mut pg.borrow_mut())),
        }
    }

    /// Run a statement; returns how many rows it changed.
    pub fn execute(&self, sql: &str, params: &[&dyn ToParam]) -> DbResult<usize> {
        let values: Vec<Param<'_>> = params.iter().map(|p| p.param()).collect();
        match &self.inner {
            Inner::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(values.iter()))?)
            }
            Inner::Postgres(pg) => self.pg_run(pg, Some(sql), |pg| {
                let stmt = pg.statement(sql)?;
                let refs: Vec<&(dyn ToSql + Sync)> =
                    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                Ok(usize::try_from(pg.client.execute(&stmt, &refs)?).unwrap_or(usize::MAX))
            }),
        }
    }

    /// Every row of a query, each read by `f`.
    pub fn query_map<T>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        mut f: impl FnMut(&Row) -> DbResult<T>,
    ) -> DbResult<Vec<T>> {
        let values: Vec<Param<'_>> = params.iter().map(|p| p.param()).collect();
        match &self.inner {
            Inner::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows = stmt.query(rusqlite::params_from_iter(values.iter()))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    out.push(f(&Row {
                        inner: RowInner::Sqlite(row),
                    })?);
                }
                Ok(out)
            }
            Inner::Postgres(pg) => {
                // The rows are fetched whole and the connection let go before `f` reads them,
                // so `f` may query again.
                let rows = self.pg_run(pg, Some(sql), |pg| {
                    let stmt = pg.statement(sql)?;
                    let refs: Vec<&(dyn ToSql + Sync)> =
                        values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                    Ok(pg.client.query(&stmt, &refs)?)
                })?;
                rows.iter()
                    .map(|row| {
                        f(&Row {
                            inner: RowInner::Postgres(row),
                        })
                    })
                    .collect()
            }
        }
    }

    /// The first row of a query read by `f`, or `None` when there is none.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        f: impl FnOnce(&Row) -> DbResult<T>,
    ) -> DbResult<Option<T>> {
        let values: Vec<Param<'_>> = params.iter().map(|p| p.param()).collect();
        match &self.inner {
            Inner::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows = stmt.query(rusqlite::params_from_iter(values.iter()))?;
                match rows.next()? {
                    Some(row) => f(&Row {
                        inner: RowInner::Sqlite(row),
                    })
                    .map(Some),
                    None => Ok(None),
                }
            }
            Inner::Postgres(pg) => {
                let rows = self.pg_run(pg, Some(sql), |pg| {
                    let stmt = pg.statement(sql)?;
                    let refs: Vec<&(dyn ToSql + Sync)> =
                        values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                    Ok(pg.client.query(&stmt, &refs)?)
                })?;
                match rows.first() {
                    Some(row) => f(&Row {
                        inner: RowInner::Postgres(row),
                    })
                    .map(Some),
                    None => Ok(None),
                }
            }
        }
    }

    /// The first row of a query read by `f`; no row is [`DbError::NoRow`].
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        f: impl FnOnce(&Row) -> DbResult<T>,
    ) -> DbResult<T> {
        self.query_opt(sql, params, f)?.ok_or(DbError::NoRow)
    }

    /// One value of the first row.
    pub fn one<T: FromVal>(&self, sql: &str, params: &[&dyn ToParam]) -> DbResult<T> {
        self.query_row(sql, params, |r| r.get(0))
    }

    /// Statements without parameters, separated by semicolons.
    pub fn batch(&self, sql: &str) -> DbResult<()> {
        match &self.inner {
            Inner::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Inner::Postgres(pg) => {
                let repeatable = !ENDS_OR_STEPS
                    .iter()
                    .any(|w| first_word(sql).eq_ignore_ascii_case(w));
                self.pg_run(pg, repeatable.then_some(sql), |pg| {
                    Ok(pg.client.batch_execute(sql)?)
                })
            }
        }
    }

    /// A statement that ends or steps inside a transaction (`COMMIT`, `ROLLBACK`, savepoints),
    /// run on the connection as it is: never on a new one, where it would mean nothing (a
    /// `COMMIT` there commits nothing and succeeds).
    fn batch_once(&self, sql: &str) -> DbResult<()> {
        match &self.inner {
            Inner::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Inner::Postgres(pg) => {
                let mut pg = pg.borrow_mut();
                let result = self.bounded(&mut pg, &mut |pg: &mut Pg| {
                    Ok(pg.client.batch_execute(sql)?)
                });
                if let Err(e) = &result
                    && lost(e).is_some()
                {
                    pg.broken = true;
                }
                result
            }
        }
    }

    /// Begin a transaction that holds the project's write lock from its start (SQLite's
    /// `BEGIN IMMEDIATE`; on PostgreSQL a transaction-scoped advisory lock of the project's
    /// schema, so what one writer reads no other writer changes before it commits, the guarantee
    /// every write path was written against). It commits with [`Tx::commit`] and rolls back
    /// when dropped uncommitted. Transactions do not nest.
    pub fn transaction(&self) -> DbResult<Tx<'_>> {
        if self.in_tx.get() {
            return Err(DbError::Other(
                "a transaction was begun inside another".into(),
            ));
        }
        if let Some(step) = self.preview_step()? {
            return Ok(step);
        }
        self.begin()?;
        self.in_tx.set(true);
        Ok(Tx {
            db: self,
            done: false,
            step: false,
        })
    }

    /// Run `f` inside one transaction that holds the write lock, as [`Db::transaction`]'s does,
    /// and roll it back whatever `f` returns (a panic included): every transaction begun while
    /// `f` runs is a savepoint of it, committed into it and undone with it. What `f` reads is
    /// what its writes would have made; nothing it writes is ever seen by another connection.
    pub fn preview<T>(&self, f: impl FnOnce() -> T) -> DbResult<T> {
        if self.in_tx.get() || self.previewing.get() {
            return Err(DbError::Other(
                "a preview was begun inside a transaction".into(),
            ));
        }
        self.begin()?;
        /// Ends the preview however `f` ends.
        struct End<'a> {
            db: &'a Db,
            sequences: Vec<(String, i64, bool)>,
        }
        impl Drop for End<'_> {
            fn drop(&mut self) {
                self.db.previewing.set(false);
                // PostgreSQL's sequences do not roll back: each is set back to where it was,
                // under the write lock still held, so the ids the preview showed are the ids the
                // real run takes (as SQLite's rowids, which roll back with the rest).
                for (name, value, called) in &self.sequences {
                    if let Err(e) = self.db.execute(
                        "SELECT setval(CAST(CAST(?1 AS TEXT) AS regclass), ?2, ?3)",
                        params![name, value, called],
                    ) {
                        tracing::warn!(sequence = %name, error = %e, "a preview's sequence was not set back");
                    }
                }
                let _ = self.db.batch_once("ROLLBACK");
            }
        }
        self.previewing.set(true);
        let mut end = End {
            db: self,
            sequences: Vec::new(),
        };
        if self.backend() == Backend::Postgres {
            let names: Vec<String> = self.query_map(
                "SELECT CAST(CAST(c.oid AS regclass) AS TEXT) FROM pg_class c \
                 WHERE c.relkind = 'S' AND c.relnamespace = CAST(current_schema() AS regnamespace) \
                 ORDER BY c.oid",
                params![],
                |r| r.get(0),
            )?;
            for name in names {
                let (value, called) = self.query_row(
                    &format!("SELECT last_value, is_called FROM {name}"),
                    params![],
                    |r| Ok((r.get::<i64>(0)?, r.get::<bool>(1)?)),
                )?;
                end.sequences.push((name, value, called));
            }
        }
        let value = f();
        drop(end);
        Ok(value)
    }

    /// `BEGIN` and take the project's write lock.
    fn begin(&self) -> DbResult<()> {
        match &self.inner {
            Inner::Sqlite(conn) => conn.execute_batch("BEGIN IMMEDIATE")?,
            Inner::Postgres(pg) => {
                // `BEGIN` on a lost connection is sent again on a new one (nothing began).
                self.pg_run(pg, Some("BEGIN"), |pg| {
                    Ok(pg.client.batch_execute("BEGIN")?)
                })?;
                let mut pg = pg.borrow_mut();
                let key = pg.write_lock;
                if let Err(e) = self.bounded(&mut pg, &mut |pg: &mut Pg| {
                    Ok(pg
                        .client
                        .execute("SELECT pg_advisory_xact_lock($1)", &[&key])?)
                }) {
                    if lost(&e).is_some() || matches!(e, DbError::Silent(_)) {
                        pg.broken = true;
                    } else {
                        let _ = self.bounded(&mut pg, &mut |pg: &mut Pg| {
                            Ok(pg.client.batch_execute("ROLLBACK")?)
                        });
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Inside a [`Db::preview`], a transaction (reading or writing) is a step of the preview's
    /// own: a savepoint, which sees what the preview wrote so far and is rolled back with it.
    /// `None` outside a preview.
    fn preview_step(&self) -> DbResult<Option<Tx<'_>>> {
        if !self.previewing.get() {
            return Ok(None);
        }
        self.batch("SAVEPOINT gza_preview_step")?;
        self.in_tx.set(true);
        Ok(Some(Tx {
            db: self,
            done: false,
            step: true,
        }))
    }

    /// Begin a transaction that only reads, every statement in it seeing the database as it was
    /// at its first read (SQLite's deferred `BEGIN`, which holds one read snapshot in WAL mode;
    /// PostgreSQL's `REPEATABLE READ`, where the default `READ COMMITTED` gives each statement a
    /// snapshot of its own). No write lock is taken: writers go on. Ends with [`Tx::commit`] or
    /// rolls back when dropped.
    pub fn read_transaction(&self) -> DbResult<Tx<'_>> {
        if self.in_tx.get() {
            return Err(DbError::Other(
                "a transaction was begun inside another".into(),
            ));
        }
        if let Some(step) = self.preview_step()? {
            return Ok(step);
        }
        match &self.inner {
            Inner::Sqlite(conn) => conn.execute_batch("BEGIN DEFERRED")?,
            Inner::Postgres(pg) => {
                let begin = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
                self.pg_run(pg, Some(begin), |pg| Ok(pg.client.batch_execute(begin)?))?
            }
        }
        self.in_tx.set(true);
        Ok(Tx {
            db: self,
            done: false,
            step: false,
        })
    }

    /// On PostgreSQL, the statement that takes the project's write lock inside a transaction
    /// (what [`Db::transaction`] runs after `BEGIN`), for tools and tests that hold the lock
    /// as a writer would; `None` on SQLite, where `BEGIN IMMEDIATE` is the lock.
    pub fn write_lock_sql(&self) -> Option<String> {
        self.with_pg(|pg| format!("SELECT pg_advisory_xact_lock({})", pg.write_lock))
    }

    /// How long a statement waits for a lock another connection holds (SQLite's busy timeout,
    /// PostgreSQL's `lock_timeout`).
    pub(crate) fn set_lock_wait(&self, wait: Duration) -> DbResult<()> {
        match &self.inner {
            Inner::Sqlite(conn) => Ok(conn.busy_timeout(wait)?),
            Inner::Postgres(pg) => {
                pg.borrow_mut().lock_wait = Some(wait);
                let set = lock_wait_sql(wait);
                self.pg_run(pg, Some(&set), |pg| Ok(pg.client.batch_execute(&set)?))
            }
        }
    }
}

impl Pg {
    /// The prepared statement for `sql`, translated and prepared once per connection.
    fn statement(&mut self, sql: &str) -> DbResult<postgres::Statement> {
        if let Some(stmt) = self.statements.get(sql) {
            return Ok(stmt.clone());
        }
        let translated = translate(sql);
        let stmt = self.client.prepare(&translated).inspect_err(|e| {
            tracing::debug!(sql = %translated, error = %e, "PostgreSQL refused a statement");
        })?;
        if self.statements.len() >= STATEMENT_CACHE {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }
}

/// An open transaction. Queries run through it as through the [`Db`] it derefs to.
pub struct Tx<'a> {
    db: &'a Db,
    done: bool,
    /// A step of a [`Db::preview`]: a savepoint, released or rolled back to.
    step: bool,
}

impl std::ops::Deref for Tx<'_> {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.db
    }
}

impl Tx<'_> {
    pub fn commit(mut self) -> DbResult<()> {
        self.done = true;
        self.db.in_tx.set(false);
        if self.step {
            return self.db.batch_once("RELEASE gza_preview_step");
        }
        match self.db.batch_once("COMMIT") {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = self.db.batch_once("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Run `f` inside a savepoint: its error rolls back only its own writes.
    pub fn savepoint<T, E>(
        &self,
        name: &str,
        f: impl FnOnce(&Tx) -> std::result::Result<T, E>,
    ) -> DbResult<std::result::Result<T, E>> {
        self.db.batch(&format!("SAVEPOINT {name}"))?;
        let result = f(self);
        match &result {
            Ok(_) => self.db.batch(&format!("RELEASE {name}"))?,
            Err(_) => self
                .db
                .batch(&format!("ROLLBACK TO {name}; RELEASE {name}"))?,
        }
        Ok(result)
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.db.in_tx.set(false);
            let _ = self.db.batch_once(if self.step {
                "ROLLBACK TO gza_preview_step; RELEASE gza_preview_step"
            } else {
                "ROLLBACK"
            });
        }
    }
}

/// SQLite's SQL as PostgreSQL reads it: `?N` becomes `$N` (a bare `?` the next number), and
/// SQLite's index hints (`INDEXED BY name`, `NOT INDEXED`) are dropped. Quoted text, quoted
/// names and comments are left as they are.
pub(crate) fn translate(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut i = 0;
    let mut next = 0u32;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'?' => {
                out.push_str(&sql[copied..i]);
                let start = i + 1;
                let mut end = start;
                while end < b.len() && b[end].is_ascii_digit() {
                    end += 1;
                }
                if end > start {
                    out.push('$');
                    out.push_str(&sql[start..end]);
                    next = next.max(sql[start..end].parse().unwrap_or(0));
                } else {
                    next += 1;
                    out.push_str(&format!("${next}"));
                }
                i = end;
                copied = i;
            }
            c if c.is_ascii_alphabetic() && (i == 0 || !is_word(b[i - 1])) => {
                let hint = ["INDEXED BY ", "NOT INDEXED"].into_iter().find(|h| {
                    b.len() >= i + h.len() && b[i..i + h.len()].eq_ignore_ascii_case(h.as_bytes())
                });
                match hint {
                    Some(h) => {
                        out.push_str(&sql[copied..i]);
                        let mut end = i + h.len();
                        if h.starts_with("INDEXED") {
                            while end < b.len() && b[end] == b' ' {
                                end += 1;
                            }
                            while end < b.len() && is_word(b[end]) {
                                end += 1;
                            }
                        }
                        i = end;
                        copied = i;
                    }
                    None => {
                        while i < b.len() && is_word(b[i]) {
                            i += 1;
                        }
                    }
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied..]);
    out
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars_outside_quotes() {
        assert_eq!(
            translate("SELECT a FROM t WHERE a = ?1 AND b = '?2' AND \"c?\" = ?12"),
            "SELECT a FROM t WHERE a = $1 AND b = '?2' AND \"c?\" = $12"
        );
        assert_eq!(translate("VALUES (?, ?)"), "VALUES ($1, $2)");
        assert_eq!(translate("SELECT 'it''s ?' , ?3"), "SELECT 'it''s ?' , $3");
    }

    #[test]
    fn reconnect_pauses_double_to_two_seconds_jittered_and_repeats_are_told_apart() {
        for attempt in 0..20 {
            let full =
                Duration::from_millis(100 * (1u64 << attempt.min(5))).min(Duration::from_secs(2));
            let pause = backoff(attempt);
            assert!(pause >= full / 2 && pause <= full, "{attempt}: {pause:?}");
        }
        // Jittered: not every worker waits the same.
        let pauses: std::collections::HashSet<_> = (0..20).map(|_| backoff(5)).collect();
        assert!(pauses.len() > 1);
        assert_eq!(first_word("  INSERT INTO t VALUES (1)"), "INSERT");
        assert_eq!(first_word("UPDATE t SET a = 1"), "UPDATE");
        assert_eq!(first_word("COMMIT"), "COMMIT");
        assert!(lost(&DbError::NoRow).is_none());
    }

    #[test]
    fn sqlite_index_hints_are_dropped() {
        assert_eq!(
            translate("SELECT 1 FROM tasks t INDEXED BY tasks_pending_deps WHERE x"),
            "SELECT 1 FROM tasks t  WHERE x"
        );
        assert_eq!(
            translate("SELECT id FROM learnings NOT INDEXED WHERE s = ?1"),
            "SELECT id FROM learnings  WHERE s = $1"
        );
        // Words that only contain the hint are left alone.
        assert_eq!(
            translate("SELECT reindexed_by FROM t"),
            "SELECT reindexed_by FROM t"
        );
    }
}
