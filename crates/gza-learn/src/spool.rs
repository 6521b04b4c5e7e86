//! What a Claude Code hook could not write because the database was busy (a big import, a
//! regeneration holding the write lock): kept in `.gza/spool/` as one small JSON file per write,
//! and taken in by the next command that opens the database (and by the next hook that can
//! write), so nothing is lost and no hook waits.
//!
//! A file is written whole under a name of its own and renamed into place, so a reader never
//! sees half of one; it is not synced, since a hook has milliseconds (a crash may lose it, never
//! tear it). A taker claims a file by renaming it, so two takers never take one file twice; a
//! claim whose taker died is taken over.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use gza_core::learning::{NewLearning, Origin, Priority, Status, Triggers};
use gza_core::project::Project;
use gza_store::Store;

/// The folder under `.gza/`.
const DIR: &str = "spool";
/// A spooled file larger than this is not read (a hook writes a few kilobytes).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One write a hook could not make.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// Drafts a session taught (`Store::add_session_learnings`).
    Drafts {
        session: String,
        learnings: Vec<Spooled>,
    },
    /// Learnings given to a session or task (`Store::record_injections`).
    Injections {
        task: Option<gza_core::task::TaskId>,
        session: Option<String>,
        event: String,
        ids: Vec<i64>,
    },
}

impl Record {
    /// The record with its session id redacted: the id comes from a hook's input as is, and the
    /// spool is stored like the database, which keeps it redacted too.
    fn with_session_redacted(&self) -> Record {
        let redact = |s: &String| gza_core::redact::redact_secrets(s);
        match self {
            Record::Drafts { session, learnings } => Record::Drafts {
                session: redact(session),
                learnings: learnings.clone(),
            },
            Record::Injections {
                task,
                session,
                event,
                ids,
            } => Record::Injections {
                task: *task,
                session: session.as_ref().map(redact),
                event: event.clone(),
                ids: ids.clone(),
            },
        }
    }
}

/// A learning as spooled.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spooled {
    section: String,
    text: String,
    insight: Option<String>,
    example: Option<String>,
    keywords: Vec<String>,
    applies_when: Vec<String>,
    kind: String,
    triggers: Triggers,
    checklist: Vec<String>,
    confidence: f64,
    priority: String,
    origin: String,
    status: String,
}

impl From<&NewLearning> for Spooled {
    fn from(l: &NewLearning) -> Spooled {
        Spooled {
            section: l.section.clone(),
            text: l.text.clone(),
            insight: l.insight.clone(),
            example: l.example.clone(),
            keywords: l.keywords.clone(),
            applies_when: l.applies_when.clone(),
            kind: l.kind.clone(),
            triggers: l.triggers.clone(),
            checklist: l.checklist.clone(),
            confidence: l.confidence,
            priority: l.priority.as_str().to_string(),
            origin: l.origin.as_str().to_string(),
            status: l.status.as_str().to_string(),
        }
    }
}

impl Spooled {
    fn learning(&self) -> NewLearning {
        let mut l = NewLearning::new(
            &self.section,
            &self.text,
            // A spool file is a file under `.gza/`, which a repository or an agent can write:
            // what it claims about who wrote a learning is not believed. A person's learnings
            // never pass through the spool (hooks and the MCP server spool agents' drafts).
            match Origin::parse(&self.origin) {
                Some(Origin::Llm) => Origin::Llm,
                _ => Origin::Agent,
            },
        );
        l.insight = self.insight.clone();
        l.example = self.example.clone();
        l.keywords = self.keywords.clone();
        l.applies_when = self.applies_when.clone();
        l.kind = self.kind.clone();
        l.triggers = self.triggers.clone();
        l.checklist = self.checklist.clone();
        l.confidence = self.confidence;
        l.priority = Priority::parse(&self.priority).unwrap_or_default();
        // Whatever the file says, a spooled learning waits for review (and the quarantine).
        l.status = Status::Draft;
        l
    }
}

fn dir(project: &Project) -> PathBuf {
    project.state_dir().join(DIR)
}

/// Keep `record` for the next command; returns the file it is in.
pub fn spool(project: &Project, record: &Record) -> gza_core::Result<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = dir(project);
    std::fs::create_dir_all(&dir).map_err(|e| gza_core::Error::io(&dir, "create directory", e))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{nanos}-{}-{n}.json", std::process::id()));
    let bytes = serde_json::to_vec(&record.with_session_redacted())
        .map_err(|e| gza_core::Error::Usage(e.to_string()))?;
    gza_core::fsutil::write_replacing(&path, &bytes, false)?;
    Ok(path)
}

/// Whether anything is waiting to be taken in (one directory read; nothing when there is none).
pub fn pending(project: &Project) -> bool {
    !waiting(&dir(project)).is_empty()
}

/// The files waiting, oldest first: new ones (`*.json`) and claims whose taker died.
fn waiting(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        // Only regular files gza wrote: never a link (whose target a rename or a read would
        // reach), never a name with control characters (which would be written into logs).
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let Some(name) = name else { return false };
            if name.chars().any(char::is_control) {
                return false;
            }
            if name.ends_with(".json") {
                return true;
            }
            // A claim (`X.json.taking-PID`) whose taker is gone.
            name.rsplit_once(".taking-")
                .and_then(|(_, pid)| pid.parse::<i64>().ok())
                .is_some_and(|pid| !gza_core::process::is_same_process_alive(pid, None))
        })
        .collect();
    files.sort();
    files
}

/// Take in every spooled write: drafts are stored (texts already known are skipped, so taking
/// one in twice stores nothing twice) and injections recorded. A file the database is still
/// too busy for goes back for the next command. Returns how many files were taken in. Never
/// fails: what cannot be taken in is logged to learnings.log.
pub fn take_in(project: &Project, store: &Store) -> usize {
    let files = waiting(&dir(project));
    if files.is_empty() {
        return 0;
    }
    // A command never waits long for this: what the lock keeps out now waits for the next.
    let before = store.busy_timeout();
    let _ = store.set_busy_timeout(TAKE_IN_BUSY.min(before));
    let taken = take_in_files(project, store, files);
    let _ = store.set_busy_timeout(before);
    taken
}

/// How long taking the spool in waits for the write lock.
const TAKE_IN_BUSY: std::time::Duration = std::time::Duration::from_millis(200);

fn take_in_files(project: &Project, store: &Store, files: Vec<PathBuf>) -> usize {
    let mut taken = 0;
    for path in files {
        let name = path.to_string_lossy().into_owned();
        let original = match name.rsplit_once(".taking-") {
            Some((base, _)) => PathBuf::from(base),
            None => path.clone(),
        };
        let claim = PathBuf::from(format!(
            "{}.taking-{}",
            original.display(),
            std::process::id()
        ));
        if std::fs::rename(&path, &claim).is_err() {
            // Another taker got there first.
            continue;
        }
        let record = gza_core::fsutil::read_regular_file(&claim, MAX_FILE_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Record>(&b).map_err(|e| e.to_string()));
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                super::log(
                    project,
                    &format!(
                        "spooled {} is unreadable ({e}); kept as .bad",
                        original.display()
                    ),
                );
                let _ = std::fs::rename(&claim, format!("{}.bad", original.display()));
                continue;
            }
        };
        match apply(project, store, &record) {
            Ok(note) => {
                let _ = std::fs::remove_file(&claim);
                taken += 1;
                if let Some(note) = note {
                    super::log(project, &note);
                }
            }
            Err(e) => {
                let _ = std::fs::rename(&claim, &original);
                super::log(
                    project,
                    &format!("spooled {} not taken in yet: {e}", original.display()),
                );
                break;
            }
        }
    }
    taken
}

fn apply(project: &Project, store: &Store, record: &Record) -> gza_core::Result<Option<String>> {
    match record {
        Record::Drafts { session, learnings } => {
            let learnings: Vec<NewLearning> = learnings.iter().map(Spooled::learning).collect();
            let ids = store.add_session_learnings(session, &learnings)?;
            // By words, as the hook that spooled them would have (by meaning when embedded).
            let merged = crate::dedupe::settle(project, store, &ids)?;
            let ids: Vec<i64> = ids
                .into_iter()
                .filter(|id| !merged.iter().any(|(d, _)| d == id))
                .collect();
            Ok((!ids.is_empty()).then(|| {
                let labels: Vec<String> =
                    ids.iter().map(|i| gza_core::learning::label(*i)).collect();
                format!(
                    "session {session}: drafts {} taken in from the spool",
                    labels.join(", ")
                )
            }))
        }
        Record::Injections {
            task,
            session,
            event,
            ids,
        } => {
            // A learning deleted meanwhile is not recorded.
            let mut known = Vec::with_capacity(ids.len());
            for id in ids {
                if store.learning(*id)?.is_some() {
                    known.push(*id);
                }
            }
            store.record_injections(*task, session.as_deref(), event, &known)?;
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spooled_session_id_is_redacted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gza.yaml"), "").unwrap();
        let project = Project::discover(dir.path()).unwrap();
        let session = "s1 GITHUB_TOKEN=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
        for record in [
            Record::Drafts {
                session: session.into(),
                learnings: Vec::new(),
            },
            Record::Injections {
                task: None,
                session: Some(session.into()),
                event: "SessionStart".into(),
                ids: vec![1],
            },
        ] {
            let path = spool(&project, &record).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(!text.contains("AbCdEfGh"), "{text}");
            assert!(text.contains("s1 GITHUB_TOKEN=[REDACTED]"), "{text}");
        }
    }
}
