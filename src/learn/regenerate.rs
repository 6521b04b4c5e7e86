//! Regeneration: extract what is missing, merge, rank, and write learnings.md deterministically.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use super::extract::{self, Extraction};
use super::items::{self, Candidate};
use crate::error::{Error, Result};
use crate::llm::ExtractionClient;
use crate::project::Project;
use crate::store::{Store, VersionRecord, WindowTask};

/// Files larger than this are not a learnings file a person wrote; they are backed up and replaced.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// How to regenerate.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub window: u32,
    pub dry_run: bool,
}

/// What a regeneration did (or, with dry_run, would do).
#[derive(Debug, Clone)]
pub struct Report {
    pub content: String,
    pub record: VersionRecord,
    /// Tasks that needed an extraction call (made, or planned in a dry run).
    pub calls: Vec<i64>,
    /// Extraction failures (the task is tried again next time).
    pub failures: Vec<(i64, String)>,
    /// The user's edits taken from the file: lines pinned and lines deleted.
    pub pinned: Vec<String>,
    pub suppressed: Vec<String>,
    pub backup: Option<String>,
}

/// An exclusive lock on `.gza/learnings.lock`, held (by keeping the file open) for one regeneration.
struct RegenLock(#[allow(dead_code)] std::fs::File);

impl RegenLock {
    fn try_acquire(project: &Project) -> Result<Option<RegenLock>> {
        use std::os::unix::io::AsRawFd;
        let path = project.state_dir().join("learnings.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, "open", e))?;
        // SAFETY: flock on a descriptor we own; released when the file is closed.
        let ok = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        Ok(ok.then_some(RegenLock(file)))
    }
}

/// Regenerate learnings.md from the last `options.window` completed tasks.
///
/// Only one regeneration runs at a time; another finds the lock taken and returns
/// [`Error::Usage`]. The user's edits to the file since gza last wrote it are kept: added lines
/// are pinned, deleted lines are suppressed for good.
pub fn regenerate(
    project: &Project,
    store: &Store,
    client: Option<&dyn ExtractionClient>,
    options: Options,
) -> Result<Report> {
    let started = Instant::now();
    let _lock = if options.dry_run {
        None
    } else {
        Some(RegenLock::try_acquire(project)?.ok_or_else(|| {
            Error::Usage("another learnings regeneration is running; try again when it ends".into())
        })?)
    };
    let sections = &project.config.learnings.sections;
    let path = project.learnings_path();

    // 1. The user's edits since gza last wrote the file.
    let last = store.last_learnings_version()?;
    let (edits, backup_needed) = read_user_edits(&path, last.as_ref().map(|(_, c)| c.as_str()));
    let mut backup = None;
    if !options.dry_run {
        for (section, content) in &edits.added {
            store.pin_learning(&items::section_named(section, sections), content)?;
        }
        for content in &edits.deleted {
            store.suppress_learning(content)?;
        }
    }

    // 2. Extract the tasks in the window that have not been extracted yet.
    let window = store.learnings_window(options.window)?;
    let missing: Vec<&WindowTask> = window.iter().filter(|t| !t.extracted).collect();
    let mut record = VersionRecord {
        from_task_id: window.first().map(|t| t.id),
        window_tasks: window.len() as i64,
        ..VersionRecord::default()
    };
    let mut calls = Vec::new();
    let mut failures = Vec::new();
    let mut preview: Vec<Candidate> = Vec::new();
    let results = extract_all(
        client,
        &missing,
        sections,
        project.config.learnings.concurrency,
        options.dry_run,
    );
    for (task, result) in missing.iter().zip(results) {
        if client.is_some() {
            calls.push(task.id);
        }
        match result {
            Ok(ex) => {
                record.llm_calls += i64::from(ex.llm_call);
                record.input_tokens += ex.tokens.0;
                record.output_tokens += ex.tokens.1;
                if options.dry_run {
                    preview.extend(ex.items.iter().map(|i| Candidate {
                        section: i.section.clone(),
                        content: i.content.clone(),
                        task_id: Some(task.id),
                    }));
                } else {
                    let rows: Vec<(String, String, &str)> = ex
                        .items
                        .iter()
                        .map(|i| (i.section.clone(), i.content.clone(), ex.origin))
                        .collect();
                    store.record_extraction(
                        task.id,
                        client.map(|c| c.provider()).unwrap_or("none"),
                        client.map(|c| c.model()),
                        &rows,
                        ex.tokens,
                    )?;
                }
            }
            Err(message) => {
                record.llm_calls += 1;
                // Not recorded as extracted: it is tried again next time. Meanwhile the agent's own
                // list stands in for it.
                let own = extract::from_agent(task, sections);
                preview.extend(own.items.iter().map(|i| Candidate {
                    section: i.section.clone(),
                    content: i.content.clone(),
                    task_id: Some(task.id),
                }));
                failures.push((task.id, message));
            }
        }
    }

    // 3. Merge, rank and render.
    let ids: Vec<i64> = window.iter().map(|t| t.id).collect();
    let mut candidates: Vec<Candidate> = store
        .learnings_of(&ids)?
        .into_iter()
        .map(|l| Candidate {
            section: l.section,
            content: l.content,
            task_id: l.task_id,
        })
        .collect();
    candidates.extend(preview);
    let mut suppressed = store.suppressed_learnings()?;
    if options.dry_run {
        suppressed.extend(edits.deleted.iter().cloned());
        candidates.extend(edits.added.iter().map(|(s, c)| Candidate {
            section: items::section_named(s, sections),
            content: c.clone(),
            task_id: None,
        }));
    }
    let merged = items::consolidate(&candidates, &suppressed);
    let date = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let (content, kept_items) = items::render(
        &merged,
        sections,
        &date,
        window.len(),
        project.config.learnings.max_tokens as usize,
    );

    let before: BTreeSet<String> = last
        .as_ref()
        .map(|(_, c)| {
            items::parse_file(c)
                .into_iter()
                .map(|i| i.content)
                .collect()
        })
        .unwrap_or_default();
    let after: BTreeSet<String> = items::parse_file(&content)
        .into_iter()
        .map(|i| i.content)
        .collect();
    record.items = kept_items as i64;
    record.added = after.difference(&before).count() as i64;
    record.removed = before.difference(&after).count() as i64;
    record.kept = after.intersection(&before).count() as i64;
    record.duration_ms = started.elapsed().as_millis() as i64;

    if !options.dry_run {
        if backup_needed && path.exists() {
            let bak = path.with_extension("md.bak");
            std::fs::copy(&path, &bak).map_err(|e| Error::io(&bak, "back up learnings to", e))?;
            backup = Some(bak.to_string_lossy().into_owned());
        }
        crate::fsutil::write_atomically(&path, content.as_bytes())?;
        store.record_learnings_version(&record, &content)?;
    }
    Ok(Report {
        content,
        record,
        calls,
        failures,
        pinned: edits.added.into_iter().map(|(_, c)| c).collect(),
        suppressed: edits.deleted,
        backup,
    })
}

/// Run the extractions, at most `concurrency` at once. In a dry run no call is made: the agent's
/// own list previews what would be learned.
fn extract_all(
    client: Option<&dyn ExtractionClient>,
    tasks: &[&WindowTask],
    sections: &[String],
    concurrency: u32,
    dry_run: bool,
) -> Vec<Result<Extraction, String>> {
    let Some(client) = client.filter(|_| !dry_run) else {
        return tasks
            .iter()
            .map(|t| Ok(extract::from_agent(t, sections)))
            .collect();
    };
    let mut results = Vec::with_capacity(tasks.len());
    for chunk in tasks.chunks(concurrency.max(1) as usize) {
        let chunk_results: Vec<Result<Extraction, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|t| {
                    scope.spawn(move || {
                        extract::with_llm(client, t, sections).map_err(|e| e.to_string())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("extraction panicked".into()))
                })
                .collect()
        });
        results.extend(chunk_results);
    }
    results
}

/// Lines the user added to (pinned) or deleted from the file since gza last wrote `last`.
#[derive(Debug, Default)]
struct UserEdits {
    added: Vec<(String, String)>,
    deleted: Vec<String>,
}

/// Compare the file with the last version gza wrote. A file that is not UTF-8 text, holds NUL
/// bytes or is huge is not diffed; it is backed up (the `bool`) before being replaced.
fn read_user_edits(path: &Path, last: Option<&str>) -> (UserEdits, bool) {
    let Ok(meta) = std::fs::metadata(path) else {
        return (UserEdits::default(), false);
    };
    if meta.len() > MAX_FILE_BYTES {
        return (UserEdits::default(), true);
    }
    let Ok(bytes) = std::fs::read(path) else {
        return (UserEdits::default(), true);
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return (UserEdits::default(), true);
    };
    if text.contains('\0') {
        return (UserEdits::default(), true);
    }
    let in_file = items::parse_file(&text);
    let in_last: Vec<String> = last
        .map(items::parse_file)
        .unwrap_or_default()
        .into_iter()
        .map(|i| i.content)
        .collect();
    let file_contents: BTreeSet<&str> = in_file.iter().map(|i| i.content.as_str()).collect();
    let mut edits = UserEdits::default();
    for item in &in_file {
        if !in_last.contains(&item.content)
            && let Some(clean) = items::clean_item(&item.content)
        {
            edits.added.push((item.section.clone(), clean));
        }
    }
    for content in &in_last {
        if !file_contents.contains(content.as_str()) {
            edits.deleted.push(content.clone());
        }
    }
    (edits, false)
}
