//! The learnings PreToolUse and SessionStart give, kept in `.gza/hook-snapshot-v1.json` and
//! trusted while the database's hook counter (migration V23) stands at the version it was read
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

use std::path::PathBuf;

use gza_core::project::Project;
use gza_store::{HookSnapshot, Store};

/// The file's name in `.gza/`; the name carries its format, so an older gza keeps its own.
pub const FILE: &str = "hook-snapshot-v1.json";
/// A bigger file is not read (the snapshot is read from the database instead).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

fn path(project: &Project) -> PathBuf {
    project.state_dir().join(FILE)
}

/// The snapshot as of the database's current counter: from the file when it holds that
/// version, else read from the database and written to the file for the next hook.
pub fn current(project: &Project, store: &Store) -> Result<HookSnapshot, String> {
    let (version, nonce) = store.hook_version().map_err(|e| e.to_string())?;
    // A database without its counter row (removed by hand) trusts no file.
    if !nonce.is_empty()
        && let Some(kept) = read(project)
        && kept.version == version
        && kept.nonce == nonce
    {
        return Ok(kept);
    }
    let fresh = store.hook_snapshot().map_err(|e| e.to_string())?;
    write(project, &fresh);
    Ok(fresh)
}

/// The kept snapshot, if the file is there, regular, whole and of this format.
fn read(project: &Project) -> Option<HookSnapshot> {
    let bytes = gza_core::fsutil::read_regular_file(&path(project), MAX_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Write the file under a name of its own and rename it into place, so a reader sees the old
/// file or the new one, never part of one. Not synced: a file a crash damaged fails to parse
/// and is read again from the database.
fn write(project: &Project, snapshot: &HookSnapshot) {
    if let Ok(json) = serde_json::to_vec(snapshot) {
        let _ = gza_core::fsutil::write_replacing(&path(project), &json, false);
    }
}
