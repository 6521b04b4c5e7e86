//! The learnings PreToolUse and SessionStart give, kept in `.gza/hook-snapshot-v1.json` and
//! trusted while the database's hook counter (migration V27; PostgreSQL V3) stands at the version it was read
//! at. The file also names the database's random nonce, so a file this database did not write
//! (a repository can commit files under `.gza/`) is never taken for its snapshot.
//!
//! Those hooks run before every tool call and at every session's start. What they read (the
//! learnings with triggers, the CRITICAL ones, the number of drafts) changes when learnings
//! change, which is rare beside everything else written to the database (`gza work` writes
//! tasks, injections and validations many times a second). So a hook reads one indexed row,
//! the counter, and the file; only the first hook after a change queries the learnings (through
//! partial indexes, never a scan of all of them) and writes the file again. The database stays
//! the truth: a file that is missing, damaged, too big or of another version is read again
//! from it.
//!
//! The file's first line is a small header (the version, the nonce and the tools some trigger
//! names); the snapshot follows. A tool call no trigger names, most of them, reads the header
//! only, however many learnings have triggers.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use gza_core::learning::Status;
use gza_core::project::Project;
use gza_store::{HookSnapshot, Store};

/// The file's name in `.gza/`; the name carries its format, so an older gza keeps its own.
pub const FILE: &str = "hook-snapshot-v1.json";
/// A bigger file is not read (the snapshot is read from the database instead).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The file's first line.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    version: i64,
    nonce: String,
    /// The tools some active learning's trigger names (`*`: any tool).
    tools: Vec<String>,
    /// The same, drafts' triggers included (`learnings.inject_drafts`).
    tools_with_drafts: Vec<String>,
}

impl Header {
    fn of(snapshot: &HookSnapshot) -> Header {
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

/// The snapshot as of the database's current counter: from the file when it holds that
/// version and the database's nonce, else read from the database and written to the file for
/// the next hook.
pub fn current(project: &Project, store: &Store) -> Result<Current, String> {
    let (version, nonce) = store.hook_version().map_err(|e| e.to_string())?;
    // A database without its counter row (removed by hand) trusts no file.
    if !nonce.is_empty()
        && let Some((header, body)) = read(project)
        && header.version == version
        && header.nonce == nonce
    {
        return Ok(Current {
            header,
            body: Body::Kept(body),
        });
    }
    fresh(project, store)
}

fn fresh(project: &Project, store: &Store) -> Result<Current, String> {
    let snapshot = store.hook_snapshot().map_err(|e| e.to_string())?;
    let header = Header::of(&snapshot);
    write(project, &header, &snapshot);
    Ok(Current {
        header,
        body: Body::Read(snapshot),
    })
}

/// The kept header and the bytes after it, if the file is there, regular and not too big.
fn read(project: &Project) -> Option<(Header, Vec<u8>)> {
    let mut bytes = gza_core::fsutil::read_regular_file(&path(project), MAX_BYTES).ok()?;
    let end = bytes.iter().position(|&b| b == b'\n')?;
    let header = serde_json::from_slice(&bytes[..end]).ok()?;
    bytes.drain(..=end);
    Some((header, bytes))
}

/// Write the file under a name of its own and rename it into place, so a reader sees the old
/// file or the new one, never part of one. Not synced: a file a crash damaged fails to parse
/// and is read again from the database.
fn write(project: &Project, header: &Header, snapshot: &HookSnapshot) {
    let (Ok(mut bytes), Ok(body)) = (serde_json::to_vec(header), serde_json::to_vec(snapshot))
    else {
        return;
    };
    bytes.push(b'\n');
    bytes.extend_from_slice(&body);
    let _ = gza_core::fsutil::write_replacing(&path(project), &bytes, false);
}

/// Whether `tools` (the tools the triggers of the learnings in use name; `*` for any) holds
/// `tool`: what lets PreToolUse answer most calls without reading a learning.
pub(crate) fn names_tool(tools: &[String], tool: &str) -> bool {
    tools
        .iter()
        .any(|t| t == "*" || t.eq_ignore_ascii_case(tool))
}
