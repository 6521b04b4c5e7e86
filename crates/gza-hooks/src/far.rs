//! What the hooks read when the project's database is PostgreSQL (team mode), kept under
//! `.gza/` so that no hook waits on the network: the database may be 20 ms or a continent away,
//! or unreachable, and a hook has 10 ms (PreToolUse) to 80 ms (UserPromptSubmit).
//!
//! Two files, written by the background job (`gza hook embed`, each round) and by the commands
//! that change learnings (`gza learnings …`, `work`, `import`, `review`), never by a hook:
//!
//! - `hook-far-v1`: a MAC line, a header line (the database it came from, the hash of that
//!   database's nonce, the hook counter and ranking generation it is of, when it was taken, the
//!   name and SHA-256 of the prompt file, the tools some trigger names) and the learnings
//!   SessionStart and PreToolUse give (with triggers, CRITICAL, the count of drafts). Small:
//!   PreToolUse reads it whole, and a tool no trigger names ends after the header.
//! - `hook-far-prompt-<digest>.jsonl`: every learning in use (active, or a draft the quarantine
//!   did not hold), one line each, as UserPromptSubmit renders and ranks it. Named by its digest,
//!   so the header names exactly one version of it and a reader never pairs a header with
//!   another version's lines.
//!
//! **Trust.** A repository can commit files under `.gza/`, and a file it brought must never pass
//! for the database's (security.md §9). The MAC is HMAC-SHA256 under a key of 256 random bits
//! kept in the person's home (`~/.gza/hook-key`, mode 0600), which no repository can read or
//! write: a file not made by this person's gza fails it and is not used. The prompt file is
//! bound by its SHA-256 in the MAC'd header. The header names the database (its name and the
//! project's), so a snapshot of another database (the person re-pointed `GZA_DATABASE_URL`) is
//! not used either. Only learnings in use are written, so only they can become text, whatever
//! the ranking index (checked by its nonce hash against the header's) says.
//!
//! **Age.** A snapshot older than [`REFRESH_AFTER`] is still used, and the hook starts the
//! background job (detached, never waited for) to take a new one; one older than [`MAX_AGE`]
//! (the database unreachable for a day), or missing, gives nothing, and starts the job.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use gza_core::database::Database;
use gza_core::learning::Status;
use gza_core::project::Project;
use gza_store::{HookLearning, HookSnapshot, RankRow, Store};

/// The snapshot's file in `.gza/`; the name carries the format.
pub const FILE: &str = "hook-far-v1";
/// The prompt file's name before its digest.
const PROMPT_PREFIX: &str = "hook-far-prompt-";
/// A snapshot this old is used, and a new one is taken in the background.
pub const REFRESH_AFTER: Duration = Duration::from_secs(30);
/// A snapshot older than this is not used: the session gets nothing rather than learnings a
/// day out of date (a learning removed from the database as hostile is gone from hooks at most
/// this long after, even if this clone never reaches the database again).
pub const MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// The snapshot file is small (learnings with triggers and CRITICAL ones); bigger is refused.
const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// The prompt file holds every learning in use: at 10,000 about 3 MB.
const MAX_PROMPT_BYTES: u64 = 256 * 1024 * 1024;
/// The key's file under `~/.gza/`.
const KEY_FILE: &str = "hook-key";
/// A prompt file replaced this long ago is removed (a hook that read the header before may
/// still be reading it).
const OLD_PROMPT_KEPT: Duration = Duration::from_secs(120);

/// The header: what the snapshot is of.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    /// The database it came from: its name and the project's ([`identity`]).
    database: String,
    /// [`gza_learn::index::nonce_hash`] of the database's nonce.
    nonce_hash: u64,
    /// The hook counter (V27) and the ranking generation (V38) it is of.
    version: i64,
    generation: i64,
    /// When it was taken (or found still current), in seconds since the epoch.
    taken_at: u64,
    /// The prompt file's name and SHA-256 (hex).
    prompt_file: String,
    prompt_sha256: String,
    /// The generation of the ranking index under `.gza/` the prompt file was written against
    /// (lines marked `fresh` are the learnings it does not answer for), if there was one.
    index_generation: Option<i64>,
    /// The model fingerprint of the vectors in the prompt file.
    vectors_model: Option<String>,
    /// The tools some active learning's trigger names (`*`: any tool).
    tools: Vec<String>,
    /// The same, drafts' triggers included (`learnings.inject_drafts`).
    tools_with_drafts: Vec<String>,
}

/// What SessionStart and PreToolUse give.
#[derive(Debug, Serialize, Deserialize)]
struct Small {
    triggered: Vec<HookLearning>,
    critical: Vec<HookLearning>,
    drafts: i64,
}

/// One line of the prompt file: a learning in use as the prompt hook renders it, with what
/// ranking reads of it besides.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptLearning {
    #[serde(flatten)]
    pub learning: HookLearning,
    pub section: String,
    pub keywords: Vec<String>,
    pub applies_when: Vec<String>,
    /// Changed since the ranking index was built (or not in it): ranked from this line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
    /// Its stored vector, for a fresh line (at most a bounded number of them carry one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
}

impl PromptLearning {
    pub fn local_row(&self) -> gza_learn::rank::LocalRow {
        gza_learn::rank::LocalRow {
            row: self.rank_row(),
            fresh: self.fresh,
            vector: self.vector.clone(),
        }
    }

    fn rank_row(&self) -> RankRow {
        let l = &self.learning;
        RankRow {
            id: l.id,
            section: self.section.clone(),
            text: l.text.clone(),
            keywords: self.keywords.clone(),
            applies_when: self.applies_when.clone(),
            priority: l.priority,
            confidence: l.confidence,
            draft: l.status == Status::Draft,
        }
    }
}

/// Whether the project's database is PostgreSQL: then hooks read only this snapshot.
pub fn applies(project: &Project) -> bool {
    project.database().is_ok_and(|d| d.is_postgres())
}

/// The database a snapshot is of, as its header names it: the database's name and the
/// project's (not the host or port: one database reached through another address, a tunnel
/// or a proxy, is the same database).
fn identity(project: &Project) -> Option<String> {
    match project.database().ok()? {
        Database::Postgres { spec, project } => Some(format!(
            "postgres database {:?}, project {project:?}",
            spec.dbname.as_deref().unwrap_or("")
        )),
        Database::Sqlite(_) => None,
    }
}

fn path(project: &Project) -> PathBuf {
    project.state_dir().join(FILE)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The person's key, from `~/.gza/hook-key` (64 hex digits), made when `create` and missing.
fn key(create: bool) -> Option<[u8; 32]> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let file = PathBuf::from(home).join(".gza").join(KEY_FILE);
    if let Ok(bytes) = gza_core::fsutil::read_regular_file(&file, 256) {
        return parse_key(&bytes);
    }
    if !create {
        return None;
    }
    let mut key = [0u8; 32];
    getrandom::getrandom(&mut key).ok()?;
    let dir = file.parent()?;
    std::fs::create_dir_all(dir).ok()?;
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
    {
        Ok(mut f) => {
            f.write_all(format!("{}\n", hex(&key)).as_bytes()).ok()?;
            Some(key)
        }
        // Another process made it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            parse_key(&gza_core::fsutil::read_regular_file(&file, 256).ok()?)
        }
        Err(_) => None,
    }
}

fn parse_key(bytes: &[u8]) -> Option<[u8; 32]> {
    let text = std::str::from_utf8(bytes).ok()?.trim();
    if text.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<hmac_sha2::Sha256>::new_from_slice(key)
        .expect("HMAC takes a key of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// Whether two MACs are equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The snapshot as read by a hook: its header checked, its learnings parsed when asked for.
pub struct Far {
    header: Header,
    /// The third line's bytes (the learnings SessionStart and PreToolUse give).
    small: Vec<u8>,
    state: PathBuf,
}

/// Why there is no snapshot to use, for the hook's log.
#[derive(Debug)]
pub enum Missing {
    /// No file (never taken in this clone yet).
    Absent,
    /// A file this person's gza did not write, of another database, or damaged.
    Refused(&'static str),
    /// Older than [`MAX_AGE`].
    TooOld(u64),
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::Absent => write!(f, "no hook snapshot yet; the background job takes one"),
            Missing::Refused(why) => write!(
                f,
                "the hook snapshot {FILE} was not used ({why}); the background job takes a new one"
            ),
            Missing::TooOld(secs) => write!(
                f,
                "the hook snapshot is {}h old (the database has not been reached since); not used",
                secs / 3600
            ),
        }
    }
}

/// The project's snapshot for a hook: checked, and young enough. Never touches the network: a
/// refresh, when one is due (stale, missing, refused), is started detached.
pub fn load(project: &Project) -> Result<Far, Missing> {
    let result = load_checked(project);
    let due = match &result {
        Ok(far) => now().saturating_sub(far.header.taken_at) >= REFRESH_AFTER.as_secs(),
        Err(_) => true,
    };
    if due {
        gza_learn::rank::start_embed_job(&project.root);
    }
    result
}

fn load_checked(project: &Project) -> Result<Far, Missing> {
    let bytes = match gza_core::fsutil::read_regular_file(&path(project), MAX_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Missing::Absent),
        Err(_) => return Err(Missing::Refused("not a regular file, or too big")),
    };
    let key = key(false).ok_or(Missing::Refused("no key in ~/.gza/hook-key"))?;
    let (header, small) = verify(&key, &bytes)?;
    if Some(&header.database) != identity(project).as_ref() {
        return Err(Missing::Refused("it is of another database"));
    }
    let age = now().saturating_sub(header.taken_at);
    if age > MAX_AGE.as_secs() {
        return Err(Missing::TooOld(age));
    }
    Ok(Far {
        header,
        small,
        state: project.state_dir(),
    })
}

/// The header and the learnings' bytes of a file whose MAC holds under `key`.
fn verify(key: &[u8; 32], bytes: &[u8]) -> Result<(Header, Vec<u8>), Missing> {
    let damaged = Missing::Refused("damaged");
    let end = bytes.iter().position(|&b| b == b'\n').ok_or(damaged)?;
    let (mac, body) = (&bytes[..end], &bytes[end + 1..]);
    if !same(mac, hex(&hmac(key, body)).as_bytes()) {
        return Err(Missing::Refused(
            "its MAC does not hold: gza did not write it for this person",
        ));
    }
    let end = body
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(Missing::Refused("damaged"))?;
    let header: Header =
        serde_json::from_slice(&body[..end]).map_err(|_| Missing::Refused("damaged"))?;
    Ok((header, body[end + 1..].to_vec()))
}

impl Far {
    /// Whether some learning in use has a trigger that names `tool` (or any tool).
    pub fn names_tool(&self, tool: &str, drafts: bool) -> bool {
        let tools = if drafts {
            &self.header.tools_with_drafts
        } else {
            &self.header.tools
        };
        crate::snapshot::names_tool(tools, tool)
    }

    /// What SessionStart and PreToolUse give, as the database's snapshot would.
    pub fn snapshot(&self) -> Result<HookSnapshot, String> {
        let small: Small = serde_json::from_slice(&self.small)
            .map_err(|e| format!("the hook snapshot is damaged ({e})"))?;
        Ok(HookSnapshot {
            version: self.header.version,
            nonce: String::new(),
            triggered: small.triggered,
            critical: small.critical,
            drafts: small.drafts,
        })
    }

    /// The hash of the database's nonce: a ranking index with another is not used.
    pub fn nonce_hash(&self) -> u64 {
        self.header.nonce_hash
    }

    /// The fingerprint of the model the prompt file's vectors were made by.
    pub fn vectors_model(&self) -> Option<&str> {
        self.header.vectors_model.as_deref()
    }

    /// Every learning in use, from the prompt file the header names (checked by its SHA-256).
    pub fn prompt_learnings(&self) -> Result<Vec<PromptLearning>, String> {
        let file = self.state.join(&self.header.prompt_file);
        let bytes = gza_core::fsutil::read_regular_file(&file, MAX_PROMPT_BYTES)
            .map_err(|e| format!("the hook snapshot's prompt file: {e}"))?;
        if hex(&Sha256::digest(&bytes)) != self.header.prompt_sha256 {
            return Err("the hook snapshot's prompt file is not the one its header names".into());
        }
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                serde_json::from_slice(l)
                    .map_err(|e| format!("the hook snapshot's prompt file is damaged ({e})"))
            })
            .collect()
    }
}

/// Take a new snapshot from `store` when what it reads changed since the kept one, else mark
/// the kept one current (a new time under a new MAC, no learning read). A problem is logged
/// and left: the hooks keep the old snapshot until its age runs out.
pub fn refresh(project: &Project, store: &Store) {
    if let Err(e) = try_refresh(project, store) {
        gza_learn::log(
            project,
            &format!("the hook snapshot was not refreshed: {e}"),
        );
    }
}

fn try_refresh(project: &Project, store: &Store) -> Result<(), String> {
    let Some(database) = identity(project) else {
        return Ok(());
    };
    let key = key(true).ok_or("no key could be read or made in ~/.gza/hook-key")?;
    let (version, generation, nonce) = store.far_stamp().map_err(|e| e.to_string())?;
    let nonce_hash = gza_learn::index::nonce_hash(&nonce);
    if nonce_hash == 0 {
        return Err("the database has no nonce (hook_state was emptied by hand)".into());
    }
    // Still current: a new time and MAC over the same learnings.
    if let Ok(bytes) = gza_core::fsutil::read_regular_file(&path(project), MAX_BYTES)
        && let Ok((mut header, small)) = verify(&key, &bytes)
        && header.database == database
        && header.nonce_hash == nonce_hash
        && header.version == version
        && header.generation == generation
        && header.index_generation == index_generation(project)
        && project.state_dir().join(&header.prompt_file).is_file()
    {
        header.taken_at = now();
        return write(project, &key, &header, &small);
    }
    let index_generation = index_generation(project);
    let far = store.far_snapshot().map_err(|e| e.to_string())?;
    let ids: Vec<i64> = far.in_use.iter().map(|l| l.id).collect();
    let gza_learn::rank::LocalFreshness {
        model: vectors_model,
        fresh,
        mut vectors,
    } = gza_learn::rank::local_freshness(project, store, &ids).map_err(|e| e.to_string())?;
    let mut extra: std::collections::HashMap<i64, RankRow> =
        far.rows.into_iter().map(|r| (r.id, r)).collect();
    let mut prompt = Vec::new();
    for l in far.in_use {
        let Some(row) = extra.remove(&l.id) else {
            continue;
        };
        let id = l.id;
        let line = PromptLearning {
            learning: l,
            section: row.section,
            keywords: row.keywords,
            applies_when: row.applies_when,
            fresh: fresh.contains(&id),
            vector: vectors.remove(&id),
        };
        serde_json::to_writer(&mut prompt, &line).map_err(|e| e.to_string())?;
        prompt.push(b'\n');
    }
    let digest = hex(&Sha256::digest(&prompt));
    let prompt_file = format!("{PROMPT_PREFIX}{}.jsonl", &digest[..32]);
    let state = project.state_dir();
    let prompt_path = state.join(&prompt_file);
    if !prompt_path.is_file() {
        gza_core::fsutil::write_replacing(&prompt_path, &prompt, false)
            .map_err(|e| e.to_string())?;
    }
    let active: Vec<&HookLearning> = far
        .hooks
        .triggered
        .iter()
        .filter(|l| l.status == Status::Active)
        .collect();
    let header = Header {
        database,
        nonce_hash,
        version: far.hooks.version,
        generation: far.generation,
        taken_at: now(),
        prompt_file: prompt_file.clone(),
        prompt_sha256: digest,
        index_generation,
        vectors_model,
        tools: crate::triggers::tools_named(&active),
        tools_with_drafts: crate::triggers::tools_named(&far.hooks.triggered),
    };
    let small = serde_json::to_vec(&Small {
        triggered: far.hooks.triggered,
        critical: far.hooks.critical,
        drafts: far.hooks.drafts,
    })
    .map_err(|e| e.to_string())?;
    write(project, &key, &header, &small)?;
    remove_old_prompt_files(&state, &prompt_file);
    remove_old_sessions(&state);
    Ok(())
}

/// What sessions were given is kept a week (a session resumed later may be given a learning
/// again, as a new one would).
fn remove_old_sessions(state: &Path) {
    let Ok(dir) = std::fs::read_dir(state.join("hook-sessions")) else {
        return;
    };
    for entry in dir.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(7 * 24 * 3600));
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Write the snapshot under a name of its own and rename it into place (a reader sees the old
/// file or the new one; a link in its place is replaced, not followed).
fn write(project: &Project, key: &[u8; 32], header: &Header, small: &[u8]) -> Result<(), String> {
    let mut body = serde_json::to_vec(header).map_err(|e| e.to_string())?;
    body.push(b'\n');
    body.extend_from_slice(small);
    let mut bytes = hex(&hmac(key, &body)).into_bytes();
    bytes.push(b'\n');
    bytes.extend_from_slice(&body);
    gza_core::fsutil::write_replacing(&path(project), &bytes, false).map_err(|e| e.to_string())
}

/// The generation of the ranking index kept under `.gza/`, if there is one.
fn index_generation(project: &Project) -> Option<i64> {
    gza_learn::index::Index::load(&gza_learn::index::path(&project.state_dir()))
        .map(|ix| ix.generation())
}

fn remove_old_prompt_files(state: &Path, keep: &str) {
    let Ok(dir) = std::fs::read_dir(state) else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.starts_with(PROMPT_PREFIX) || name == keep {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > OLD_PROMPT_KEPT);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// After a command that may have changed learnings (team mode): the snapshot follows at once,
/// so this clone's next session sees what the person just did.
pub fn after_command(project: &Project) {
    if !applies(project) {
        return;
    }
    if let Ok(store) = Store::open_project_for_reading(project) {
        refresh(project, &store);
    }
}

/// The learnings already given in `session` in this clone (team mode keeps this beside the
/// snapshot: the database is not asked). One small file per session, named by a hash of its id.
pub fn given_in_session(project: &Project, session: &str) -> std::collections::HashSet<i64> {
    let Ok(bytes) = gza_core::fsutil::read_regular_file(&given_path(project, session), 1 << 20)
    else {
        return Default::default();
    };
    String::from_utf8_lossy(&bytes)
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// Note `ids` as given in `session`.
pub fn note_given(project: &Project, session: &str, ids: &[i64]) -> Result<(), String> {
    if ids.is_empty() {
        return Ok(());
    }
    let path = given_path(project, session);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let mut line = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(" ");
    line.push('\n');
    use std::io::Write;
    let mut f = gza_core::fsutil::open_regular(
        &path,
        std::fs::OpenOptions::new().append(true).create(true),
    )
    .map_err(|e| e.to_string())?;
    f.write_all(line.as_bytes()).map_err(|e| e.to_string())
}

fn given_path(project: &Project, session: &str) -> PathBuf {
    let name = hex(&Sha256::digest(session.as_bytes())[..16]);
    project.state_dir().join("hook-sessions").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2_and_differs_under_another_key() {
        // RFC 4231 test case 2 uses a short key; ours are always 32 bytes, so check the
        // construction against a key padded as HMAC pads it (zeros): "Jefe".
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        assert_eq!(
            hex(&hmac(&key, b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let mut other = key;
        other[31] = 1;
        assert_ne!(hmac(&key, b"x"), hmac(&other, b"x"));
    }

    #[test]
    fn a_file_whose_body_was_changed_fails_its_mac() {
        let key = [7u8; 32];
        let body = b"{\"a\":1}\n{}";
        let mut file = hex(&hmac(&key, body)).into_bytes();
        file.push(b'\n');
        file.extend_from_slice(body);
        assert!(matches!(
            verify(&key, &file),
            Err(Missing::Refused("damaged"))
        ));
        let mut forged = file.clone();
        let n = forged.len();
        forged[n - 1] = b' ';
        assert!(matches!(verify(&key, &forged), Err(Missing::Refused(m)) if m.contains("MAC")));
        assert!(matches!(verify(&[8u8; 32], &file), Err(Missing::Refused(m)) if m.contains("MAC")));
    }
}
