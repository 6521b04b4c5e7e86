//! The learnings PreToolUse and SessionStart give, kept in `.gza/hook-snapshot-v2.json` and
//! trusted while the database's hook counter (migration V27; PostgreSQL V3) stands at the version it was read
//! at. The file also names the database's random nonce, so a file this database did not write
//! (a repository can commit files under `.gza/`) is never taken for its snapshot.
//!
//! Those hooks run before every tool call and at every session's start. What they read (the
//! learnings with triggers, the CRITICAL ones, the number of drafts) changes when learnings
//! change, which is rare beside everything else written to the database (`gza work` writes
//! tasks, injections and validations many times a second). Every gza that changes them brings
//! the file up to date at once ([`refresh`], run when a store that moved the counter is closed
//! or given back to its pool: `gza_store::after_hook_change`), so a hook rarely has to query
//! the learnings itself. The database stays the truth: a file that is missing, damaged, too
//! big or of another version is read again from it.
//!
//! **A hook that never opens the database.** Opening SQLite costs a PreToolUse more than half
//! of its CPU (the schema's parse), only to read the counter. So whoever reads the counter
//! (every writer as it closes its store, and any hook that had to read the database) leaves
//! it in `.gza/hook-snapshot-v2.version`, the change marker: the version, the nonce and when
//! it was read, under a MAC. A tool call no trigger names, most of them, is answered from the
//! files alone ([`kept`]) when:
//!
//! - the snapshot's header and the marker each carry a MAC (HMAC-SHA256 under the person's
//!   key, `~/.gza/hook-key`, which no repository and no file under `.gza/` can supply:
//!   `far.rs`), and both name this project's database;
//! - the marker names the header's version and nonce (a writer that moved the counter since
//!   has left its own version there, so the hook reads the database instead);
//! - the marker was written less than [`MAX_AGE`] ago.
//!
//! So a marker or header an agent writes is never used (no MAC), and one gza wrote earlier,
//! put back, answers for at most [`MAX_AGE`] after the database last said it was current: the
//! previous snapshot, briefly, at worst. A change gza did not make (the database edited with
//! `sqlite3`, a writer killed between its commit and its refresh) reaches the hooks the same
//! way, within [`MAX_AGE`]. A hook that has to give something (a trigger names the tool;
//! SessionStart) reads the database as before: it records what it gave there.
//!
//! The file's first line is the header's MAC (`-` without a key), its second a small header
//! (the version, the nonce, the tools some trigger names, the database); the snapshot follows.
//! A tool call no trigger names reads the header only, however many learnings have triggers.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use gza_core::learning::Status;
use gza_core::project::Project;
use gza_store::{HookSnapshot, Store};

/// The file's name in `.gza/`; the name carries its format, so an older gza keeps its own.
pub const FILE: &str = "hook-snapshot-v2.json";
/// The change marker: the hook counter's version and nonce, when they were read, and a MAC.
pub const MARKER: &str = "hook-snapshot-v2.version";
/// A bigger file is not read (the snapshot is read from the database instead).
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// How long a marker answers for the database: the most a change gza did not make (or a
/// marker put back) goes unseen by PreToolUse. A hook that reads the database writes it again
/// once it is half this old.
pub const MAX_AGE: u64 = 30;

/// The file's second line.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    version: i64,
    nonce: String,
    /// The tools some active learning's trigger names (`*`: any tool).
    tools: Vec<String>,
    /// The same, drafts' triggers included (`learnings.inject_drafts`).
    tools_with_drafts: Vec<String>,
    /// The database file the snapshot is of, so one of another project never passes.
    #[serde(default)]
    database: String,
}

impl Header {
    fn of(project: &Project, snapshot: &HookSnapshot) -> Header {
        let active: Vec<_> = snapshot
            .triggered
            .iter()
            .filter(|l| l.status == Status::Active)
            .collect();
        Header {
            version: snapshot.version,
            nonce: snapshot.nonce.clone(),
            tools: crate::triggers::tools_named(&active),
            tools_with_drafts: crate::triggers::tools_named(&snapshot.triggered),
            database: database(project),
        }
    }
}

/// The snapshot as of the database's current counter, its body read only when asked for.
pub struct Current {
    header: Header,
    body: Body,
}

enum Body {
    /// Read from the database just now.
    Read(HookSnapshot),
    /// The file's bytes after the header line, not parsed yet.
    Kept(Vec<u8>),
}

impl Current {
    /// Whether some learning in use has a trigger that names `tool` (or any tool).
    pub fn names_tool(&self, tool: &str, drafts: bool) -> bool {
        let tools = if drafts {
            &self.header.tools_with_drafts
        } else {
            &self.header.tools
        };
        names_tool(tools, tool)
    }

    /// The whole snapshot.
    pub fn snapshot(self, project: &Project, store: &Store) -> Result<HookSnapshot, String> {
        match self.body {
            Body::Read(snapshot) => Ok(snapshot),
            Body::Kept(bytes) => match serde_json::from_slice::<HookSnapshot>(&bytes) {
                Ok(s) if s.version == self.header.version && s.nonce == self.header.nonce => Ok(s),
                // A body that does not match its header: read it all again.
                _ => fresh(project, store).map(|c| match c.body {
                    Body::Read(s) => s,
                    Body::Kept(_) => unreachable!("fresh reads the database"),
                }),
            },
        }
    }
}

fn path(project: &Project) -> PathBuf {
    project.state_dir().join(FILE)
}

fn marker_path(project: &Project) -> PathBuf {
    project.state_dir().join(MARKER)
}

fn database(project: &Project) -> String {
    project.db_path().to_string_lossy().into_owned()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The snapshot the file holds, without opening the database: `Some` only when the header and
/// the change marker are signed under the person's key and name this project's database, the
/// marker names the header's version and nonce, and it was written less than [`MAX_AGE`] ago.
/// Otherwise the caller reads the database ([`current`]).
pub fn kept(project: &Project) -> Option<Current> {
    let key = crate::far::key(false)?;
    let marker = read_marker(project, &key)?;
    let age = now().checked_sub(marker.at)?;
    let (mac, header_line, body) = read(project)?;
    if age > MAX_AGE || !signed(&key, &header_line, &mac) {
        return None;
    }
    let header: Header = serde_json::from_slice(&header_line).ok()?;
    let database = database(project);
    (marker.version == header.version
        && marker.nonce == header.nonce
        && marker.database == database
        && header.database == database)
        .then_some(Current {
            header,
            body: Body::Kept(body),
        })
}

fn signed(key: &[u8; 32], message: &[u8], mac: &[u8]) -> bool {
    crate::far::same(
        mac,
        gza_core::text::hex(&crate::far::hmac(key, message)).as_bytes(),
    )
}

/// The snapshot as of the database's current counter: from the file when it holds that
/// version and the database's nonce, else read from the database and written to the file for
/// the next hook. Either way the marker is left saying so (see [`kept`]).
pub fn current(project: &Project, store: &Store) -> Result<Current, String> {
    let (version, nonce) = store.hook_version().map_err(|e| e.to_string())?;
    let key = crate::far::key(false);
    // A database without its counter row (removed by hand) trusts no file; with the person's
    // key, a header not signed under it (a gza without the key wrote it, or someone else did)
    // is written again too.
    if !nonce.is_empty()
        && let Some((mac, header_line, body)) = read(project)
        && let Ok(header) = serde_json::from_slice::<Header>(&header_line)
        && header.version == version
        && header.nonce == nonce
        && key
            .as_ref()
            .is_none_or(|k| signed(k, &header_line, &mac) && header.database == database(project))
    {
        if let Some(key) = &key {
            mark(project, key, version, &nonce);
        }
        return Ok(Current {
            header,
            body: Body::Kept(body),
        });
    }
    let current = fresh(project, store)?;
    if let Some(key) = &key {
        mark(project, key, current.header.version, &current.header.nonce);
    }
    Ok(current)
}

/// Bring the file and the marker up to date with `store` (a gza that changed learnings, as it
/// closes its store): what the next hook would otherwise do itself.
pub fn refresh(project: &Project, store: &Store) {
    if crate::far::applies(project) {
        return;
    }
    // The person's key is made here if they have none yet: hooks can then skip the database.
    let _ = crate::far::key(true);
    let _ = current(project, store);
}

fn fresh(project: &Project, store: &Store) -> Result<Current, String> {
    let snapshot = store.hook_snapshot().map_err(|e| e.to_string())?;
    let header = Header::of(project, &snapshot);
    write(project, &header, &snapshot);
    Ok(Current {
        header,
        body: Body::Read(snapshot),
    })
}

/// What the marker says, once its MAC holds.
#[derive(Debug, PartialEq)]
struct Marker {
    version: i64,
    nonce: String,
    /// When the counter was read (Unix seconds).
    at: u64,
    database: String,
}

impl Marker {
    fn line(&self) -> String {
        format!(
            "{} {} {} {}",
            self.version, self.nonce, self.at, self.database
        )
    }
}

/// The marker, if its MAC holds under `key`: a line `MAC VERSION NONCE AT DATABASE`.
fn read_marker(project: &Project, key: &[u8; 32]) -> Option<Marker> {
    let bytes = gza_core::fsutil::read_regular_file(&marker_path(project), 8192).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?.strip_suffix('\n')?;
    let (mac, line) = text.split_once(' ')?;
    if !signed(key, line.as_bytes(), mac.as_bytes()) {
        return None;
    }
    let mut words = line.splitn(4, ' ');
    Some(Marker {
        version: words.next()?.parse().ok()?,
        nonce: words.next()?.to_string(),
        at: words.next()?.parse().ok()?,
        database: words.next()?.to_string(),
    })
}

/// Say in the marker that the database's counter stands at `version`, now, unless it already
/// says so (or a later version, a writer's) and is less than half [`MAX_AGE`] old: a hook that
/// read the counter just before a writer moved it does not put the marker back behind it.
fn mark(project: &Project, key: &[u8; 32], version: i64, nonce: &str) {
    let database = database(project);
    let now = now();
    if let Some(m) = read_marker(project, key)
        && m.nonce == nonce
        && m.database == database
        && m.version >= version
        && now.checked_sub(m.at).is_some_and(|age| age <= MAX_AGE / 2)
    {
        return;
    }
    let line = Marker {
        version,
        nonce: nonce.to_string(),
        at: now,
        database,
    }
    .line();
    let mac = gza_core::text::hex(&crate::far::hmac(key, line.as_bytes()));
    let _ = gza_core::fsutil::write_replacing(
        &marker_path(project),
        format!("{mac} {line}\n").as_bytes(),
        false,
    );
}

/// The MAC line, the header line and the bytes after them, if the file is there, regular and
/// not too big.
fn read(project: &Project) -> Option<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let mut bytes = gza_core::fsutil::read_regular_file(&path(project), MAX_BYTES).ok()?;
    let first = bytes.iter().position(|&b| b == b'\n')?;
    let second = first + 1 + bytes[first + 1..].iter().position(|&b| b == b'\n')?;
    let mac = bytes[..first].to_vec();
    let header = bytes[first + 1..second].to_vec();
    bytes.drain(..=second);
    Some((mac, header, bytes))
}

/// Write the file under a name of its own and rename it into place, so a reader sees the old
/// file or the new one, never part of one. Not synced: a file a crash damaged fails to parse
/// and is read again from the database.
fn write(project: &Project, header: &Header, snapshot: &HookSnapshot) {
    let Ok(body) = serde_json::to_vec(snapshot) else {
        return;
    };
    write_parts(project, crate::far::key(false).as_ref(), header, &body);
}

fn write_parts(project: &Project, key: Option<&[u8; 32]>, header: &Header, body: &[u8]) {
    let Ok(header) = serde_json::to_vec(header) else {
        return;
    };
    let mut bytes = match key {
        Some(key) => gza_core::text::hex(&crate::far::hmac(key, &header)).into_bytes(),
        None => b"-".to_vec(),
    };
    bytes.push(b'\n');
    bytes.extend_from_slice(&header);
    bytes.push(b'\n');
    bytes.extend_from_slice(body);
    let _ = gza_core::fsutil::write_replacing(&path(project), &bytes, false);
}

/// Whether `tools` (the tools the triggers of the learnings in use name; `*` for any) holds
/// `tool`: what lets PreToolUse answer most calls without reading a learning.
pub(crate) fn names_tool(tools: &[String], tool: &str) -> bool {
    tools
        .iter()
        .any(|t| t == "*" || t.eq_ignore_ascii_case(tool))
}

/// What a store that moved the hooks' counter runs as it is closed or given back
/// (`gza_store::after_hook_change`, registered by the binary): [`refresh`] for the project
/// whose `.gza/gza.db` it is. Stores of other files (a copy's target) are left alone.
pub fn after_write(store: &Store) {
    let Some(db) = store.sqlite_path() else {
        return;
    };
    let Some(root) = db
        .parent()
        .filter(|d| d.file_name() == Some(std::ffi::OsStr::new(gza_core::project::STATE_DIR)))
        .and_then(std::path::Path::parent)
    else {
        return;
    };
    let Ok(project) = Project::discover(root) else {
        return;
    };
    if project.db_path() == db {
        refresh(&project, store);
    }
}
