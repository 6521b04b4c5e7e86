//! Regeneration: take in the person's edits, extract what is missing, and write learnings.md
//! as a view of the records.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::backoff::{self, CallsMade};
use super::extract::{self, Extraction};
use super::items;
use super::rank::Ranker;
use super::view::{self, ParsedView};
use crate::error::{Error, Result};
use crate::learning::Learning;
use crate::llm::{ExtractionClient, LlmError};
use crate::project::Project;
use crate::store::{ExtractionBackoff, FileEdits, Store, Taught, VersionRecord, WindowTask};

/// Files larger than this are not a learnings file a person wrote; they are backed up and replaced.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// How many times a regeneration takes in edits made while it ran before it gives up writing.
const MAX_SYNC_ROUNDS: usize = 5;

/// How to regenerate.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub window: u32,
    pub dry_run: bool,
    /// Extract the window's tasks that are not yet (false: only take in edits and rewrite the
    /// file, as after `gza learnings add`; the regeneration counter is left alone).
    pub extract: bool,
    /// Make no extraction call while the endpoint is backing off (automatic regenerations);
    /// false when a person asked for this one.
    pub respect_backoff: bool,
}

impl Options {
    /// Rewrite the file from the records after a change made on the command line.
    pub fn rewrite(window: u32) -> Options {
        Options {
            window,
            dry_run: false,
            extract: false,
            respect_backoff: true,
        }
    }
}

/// What a regeneration did (or, with dry_run, would do).
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub content: String,
    pub record: VersionRecord,
    /// Tasks that needed an extraction call (made, or planned in a dry run).
    pub calls: Vec<i64>,
    /// Extraction failures (the task is tried again next time).
    pub failures: Vec<(i64, ExtractionError)>,
    /// Tasks no call was started for before the extraction deadline; still counted towards the
    /// next regeneration, which extracts them.
    pub deferred: Vec<i64>,
    /// The extraction deadline this regeneration had.
    pub deadline: Duration,
    /// Set when no call was made because the endpoint is backing off (as recorded).
    pub backing_off: Option<ExtractionBackoff>,
    /// Set when this regeneration's calls all failed: the back-off now recorded.
    pub backoff_started: Option<ExtractionBackoff>,
    /// The person's edits taken from the file.
    pub edits: FileEdits,
    /// Learnings re-confirmed by a newly extracted one instead of being added twice.
    pub confirmed: usize,
    pub backup: Option<String>,
}

/// Why one task's extraction call gave no answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExtractionError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("the extraction call panicked")]
    Panicked,
}

/// What became of one task's extraction.
enum Outcome {
    Extracted(Extraction),
    Failed(ExtractionError),
    /// Not started: the deadline passed (or gza was asked to stop) first.
    Deferred,
}

/// An exclusive lock on `.gza/learnings.lock`, held (by keeping the file open) while the
/// records and the file are being brought together.
pub struct RegenLock(#[allow(dead_code)] std::fs::File);

impl RegenLock {
    /// Take the lock, or `None` when another process holds it.
    pub fn try_acquire(project: &Project) -> Result<Option<RegenLock>> {
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

    /// Take the lock, waiting up to `patience` for a regeneration that holds it to finish;
    /// `waiting` is called once if it has to wait. [`Error::Busy`] when it is still held.
    pub fn wait(
        project: &Project,
        patience: std::time::Duration,
        waiting: impl FnOnce(),
    ) -> Result<RegenLock> {
        let started = Instant::now();
        let mut waiting = Some(waiting);
        loop {
            if let Some(lock) = Self::try_acquire(project)? {
                return Ok(lock);
            }
            if let Some(w) = waiting.take() {
                w();
            }
            if started.elapsed() >= patience {
                return Err(Error::Busy(format!(
                    "a learnings regeneration has held .gza/learnings.lock for over {} s; nothing was changed, try again when it ends",
                    patience.as_secs()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Take the lock, failing with [`Error::Busy`] when another process holds it.
    pub fn acquire(project: &Project) -> Result<RegenLock> {
        Self::try_acquire(project)?.ok_or_else(|| {
            Error::Busy("another learnings regeneration is running; try again when it ends".into())
        })
    }
}

/// The file as found on disk.
enum OnDisk {
    Missing,
    /// Not usable as learnings (not UTF-8, NUL bytes, too large): backed up, never imported.
    Unreadable,
    Text(String),
}

fn read_file(path: &Path) -> OnDisk {
    // Never std::fs::read: a FIFO in its place would block, a symlink to a huge file be read whole.
    match crate::fsutil::read_regular_file(path, MAX_FILE_BYTES).map(String::from_utf8) {
        Ok(Ok(text)) if !text.contains('\0') => OnDisk::Text(text),
        Ok(_) => OnDisk::Unreadable,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => OnDisk::Missing,
        Err(_) => OnDisk::Unreadable,
    }
}

/// Find the person's edits in the file: compared with the version the file names (or, when it
/// names none, the newest version gza wrote).
fn edits_in(project: &Project, store: &Store, text: &str) -> Result<FileEdits> {
    let file = view::parse(text);
    let base_text = match file.version {
        Some(v) => store.learnings_version(v)?,
        None => None,
    };
    let base_text = match base_text {
        Some(t) => Some(t),
        None => store.last_learnings_version()?.map(|(_, c)| c),
    };
    let base: Option<ParsedView> = base_text.as_deref().map(view::parse);
    let records: HashMap<i64, Learning> = store
        .learnings(true)?
        .into_iter()
        .map(|l| (l.id, l))
        .collect();
    let sections = &project.config.learnings.sections;
    Ok(view::diff(
        &file,
        base.as_ref(),
        &records,
        items::clean_item,
        |s| items::section_named(s, sections),
    ))
}

/// Bring the person's edits in the file into the records (unless `dry_run`). Returns the edits
/// and the file's bytes as read, or `None` for the text when the file is missing or unreadable.
fn take_in_edits(
    project: &Project,
    store: &Store,
    dry_run: bool,
) -> Result<(FileEdits, Option<String>, bool)> {
    match read_file(&project.learnings_path()) {
        OnDisk::Missing => Ok((FileEdits::default(), None, false)),
        OnDisk::Unreadable => Ok((FileEdits::default(), None, true)),
        OnDisk::Text(text) => {
            let edits = edits_in(project, store, &text)?;
            if !dry_run && !edits.is_empty() {
                store.apply_file_edits(&edits)?;
            }
            Ok((edits, Some(text), false))
        }
    }
}

/// Take in the person's edits to learnings.md now, under the lock; used before a task reads the
/// file so that what it is given maps to records. Skipped when a regeneration holds the lock (it
/// takes them in itself).
pub fn sync_edits(project: &Project, store: &Store) -> Result<()> {
    let Some(_lock) = RegenLock::try_acquire(project)? else {
        return Ok(());
    };
    take_in_edits(project, store, false).map(|_| ())
}

/// Regenerate learnings.md from the last `options.window` completed tasks.
///
/// Only one regeneration runs at a time; another finds the lock taken and returns
/// [`Error::Usage`]. Edits the person makes while it runs are taken in before the file is
/// written; the file is recorded as a version before it is renamed into place.
pub fn regenerate(
    project: &Project,
    store: &Store,
    client: Option<&dyn ExtractionClient>,
    ranker: Option<&Ranker>,
    options: Options,
) -> Result<Report> {
    let started = Instant::now();
    let _lock = if options.dry_run {
        None
    } else {
        Some(RegenLock::acquire(project)?)
    };
    let consumed = if options.extract {
        store.learnings_metadata()?.tasks_since_regen
    } else {
        0
    };
    let sections = &project.config.learnings.sections;
    let path = project.learnings_path();
    let mut report = Report::default();

    // 1. The person's edits since gza last wrote the file.
    let (edits, mut seen, unreadable) = take_in_edits(project, store, options.dry_run)?;
    report.edits = edits;

    // 2. Extract the tasks in the window that have not been extracted yet, and every task
    // counted since the last regeneration even when more completed than the window holds
    // (a slow regeneration under `--parallel`), so no counted task falls out unextracted.
    let owed = consumed.clamp(0, i64::from(u32::MAX)) as u32;
    let scope = store.learnings_scope(options.window, owed)?;
    let window = &scope[..scope.len().min(options.window as usize)];
    // Oldest first, so the first wording of a lesson stands and later ones confirm it.
    let missing: Vec<&WindowTask> = scope
        .iter()
        .rev()
        .filter(|t| options.extract && !t.extracted)
        .collect();
    report.record = VersionRecord {
        from_task_id: window.first().map(|t| t.id),
        window_tasks: window.len() as i64,
        ..VersionRecord::default()
    };
    // A failing endpoint is left alone for a while by automatic regenerations.
    let now = chrono::Utc::now();
    let backoff_state = match client {
        Some(_) if options.extract && !missing.is_empty() => store.extraction_backoff()?,
        _ => ExtractionBackoff::default(),
    };
    report.backing_off = backoff::active_until(&backoff_state, now)
        .filter(|_| options.respect_backoff)
        .map(|_| backoff_state.clone());
    let calling = client.filter(|_| report.backing_off.is_none());
    report.deadline = Duration::from_secs(project.config.learnings.extraction_deadline_seconds);
    let results = match calling.filter(|_| !options.dry_run) {
        Some(calling) => extract_all(
            calling,
            &missing,
            sections,
            project.config.learnings.concurrency,
            started + report.deadline,
        ),
        None => missing
            .iter()
            .map(|t| Outcome::Extracted(extract::from_agent(t, sections)))
            .collect(),
    };
    let mut calls = CallsMade::default();
    let mut known = store.learnings(true)?;
    let mut preview: Vec<Learning> = Vec::new();
    for (task, result) in missing.iter().zip(results) {
        if calling.is_some() && !matches!(result, Outcome::Deferred) {
            report.calls.push(task.id);
        }
        let (ex, extracted) = match result {
            // Backing off: the agent's own list stands in until a call is made again.
            Outcome::Extracted(ex) if client.is_some() && calling.is_none() => (ex, false),
            Outcome::Extracted(ex) => {
                calls.succeeded += usize::from(ex.llm_call);
                (ex, true)
            }
            Outcome::Failed(error) => {
                calls.failed += 1;
                calls.last_error = Some(error.to_string());
                report.record.llm_calls += 1;
                report.failures.push((task.id, error));
                // Not marked extracted, so the call is tried again next time; meanwhile the
                // agent's own list stands in (the retry re-confirms rather than repeats it).
                (extract::from_agent(task, sections), false)
            }
            Outcome::Deferred => {
                report.deferred.push(task.id);
                continue;
            }
        };
        report.record.llm_calls += i64::from(ex.llm_call);
        report.record.input_tokens += ex.tokens.0;
        report.record.output_tokens += ex.tokens.1;
        let mut taught = super::dedupe::decide(&ex.items, ex.origin, &known, ranker, store);
        if project.config.learnings.review == crate::config::ReviewMode::Manual {
            // With manual review, what a task taught waits for a person as a draft.
            for t in &mut taught {
                if let Taught::New(n) = t {
                    n.status = crate::learning::Status::Draft;
                }
            }
        }
        report.confirmed += taught
            .iter()
            .filter(|t| matches!(t, Taught::Confirms(_)))
            .count();
        if options.dry_run {
            for t in &taught {
                if let Taught::New(n) = t {
                    let placeholder = -(preview.len() as i64) - 1;
                    preview.push(super::dedupe::preview(n, placeholder));
                }
            }
            continue;
        }
        let provider = client.map(|c| c.provider()).unwrap_or("none");
        let new_ids = store.record_extraction(
            task.id,
            extracted.then(|| (provider, client.map(|c| c.model()), ex.tokens)),
            &taught,
        )?;
        for id in new_ids {
            if let Some(l) = store.learning(id)? {
                known.push(l);
            }
        }
    }
    if !options.dry_run
        && let Some(next) = backoff::after(&backoff_state, &calls, now)
    {
        store.set_extraction_backoff(&next)?;
        report.backoff_started = next.until.is_some().then_some(next);
    }
    // Tasks left by the deadline stay counted, so the next regeneration comes for them.
    let consumed = (consumed - report.deferred.len() as i64).max(0);
    if let Some(ranker) = ranker
        && !options.dry_run
    {
        // New learnings are embedded now, so a search never pays for it.
        if let Err(e) = ranker.embed_missing(store) {
            super::log(project, &format!("embedding new learnings failed: {e}"));
        }
    }

    // 3. Render the view; take in edits made meanwhile; record the version; write the file.
    let window_ids: Vec<i64> = window.iter().map(|t| t.id).collect();
    let before: Vec<i64> = match store.last_learnings_version()? {
        Some((_, c)) => view::ids_in(&c),
        None => Vec::new(),
    };
    let date = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let budget = project.config.learnings.max_tokens as usize * crate::prompt::CHARS_PER_TOKEN;
    let latest = store.latest_sources()?;
    let render = |version: i64| -> Result<(String, Vec<i64>)> {
        let now = chrono::Utc::now();
        let mut items = store.learnings_in_window(&window_ids)?;
        // Seed 000: what nobody re-confirmed decays out of the file.
        items.retain(|l| !l.is_decayed(now));
        items.extend(preview.iter().cloned());
        view::rank_for_file(&mut items, &latest);
        let header = view::Header {
            date: &date,
            window_tasks: window.len(),
            version,
        };
        Ok(view::render(&items, sections, &header, budget))
    };
    if options.dry_run {
        let (content, ids) = render(0)?;
        fill_counts(&mut report.record, &before, &ids);
        report.record.duration_ms = started.elapsed().as_millis() as i64;
        report.content = content;
        return Ok(report);
    }
    for _ in 0..MAX_SYNC_ROUNDS {
        let now = match read_file(&path) {
            OnDisk::Text(t) => Some(t),
            _ => None,
        };
        if now != seen {
            // The person saved the file while this ran: take those edits in first.
            let (more, text, _) = take_in_edits(project, store, false)?;
            merge_edits(&mut report.edits, more);
            seen = text;
            continue;
        }
        let (_, ids) = render(0)?;
        fill_counts(&mut report.record, &before, &ids);
        report.record.duration_ms = started.elapsed().as_millis() as i64;
        let mut rendered = Ok(String::new());
        let (_, content) = store.record_learnings_version(&report.record, consumed, |v| {
            rendered = render(v).map(|(c, _)| c);
            rendered.as_ref().cloned().unwrap_or_default()
        })?;
        rendered?;
        if unreadable && path.exists() {
            let bak = path.with_extension("md.bak");
            std::fs::copy(&path, &bak).map_err(|e| Error::io(&bak, "back up learnings to", e))?;
            report.backup = Some(bak.to_string_lossy().into_owned());
        }
        crate::fsutil::write_atomically(&path, content.as_bytes())?;
        report.content = content;
        return Ok(report);
    }
    Err(Error::Usage(format!(
        "{} kept changing while gza tried to rewrite it; your edits are saved in the database, run `gza learnings update` again",
        path.display()
    )))
}

/// What a person should know about the extraction calls of `report`: tasks left by the
/// deadline, calls skipped while the endpoint backs off, a back-off that starts now.
pub fn extraction_notes(report: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    if !report.deferred.is_empty() {
        let ids: Vec<String> = report.deferred.iter().map(|i| i.to_string()).collect();
        notes.push(format!(
            "extraction stopped at its {} s deadline (learnings.extraction_deadline_seconds); tasks {} are left for the next regeneration",
            report.deadline.as_secs(),
            ids.join(", ")
        ));
    }
    if let Some(b) = &report.backing_off {
        notes.push(format!(
            "no extraction calls: the endpoint failed in {} regeneration(s) in a row ({}); automatic regenerations leave it alone until {}, `gza learnings update` tries now",
            b.failures,
            b.last_error.as_deref().unwrap_or("no answer"),
            b.until.as_deref().unwrap_or("-")
        ));
    }
    if let Some(b) = &report.backoff_started {
        notes.push(format!(
            "every extraction call failed; automatic regenerations make no call until {} ({} failed regeneration(s) in a row)",
            b.until.as_deref().unwrap_or("-"),
            b.failures
        ));
    }
    notes
}

fn fill_counts(record: &mut VersionRecord, before: &[i64], after: &[i64]) {
    record.items = after.len() as i64;
    record.added = after.iter().filter(|i| !before.contains(i)).count() as i64;
    record.removed = before.iter().filter(|i| !after.contains(i)).count() as i64;
    record.kept = after.iter().filter(|i| before.contains(i)).count() as i64;
}

fn merge_edits(into: &mut FileEdits, more: FileEdits) {
    into.added.extend(more.added);
    into.edited.extend(more.edited);
    into.deleted.extend(more.deleted);
    into.restored.extend(more.restored);
}

/// Run the extractions, at most `concurrency` at once, starting none after `deadline` (or once
/// gza is asked to stop): those are [`Outcome::Deferred`]. A call under way when the deadline
/// passes runs to its own bound (twice `learnings.timeout_seconds`).
fn extract_all(
    client: &dyn ExtractionClient,
    tasks: &[&WindowTask],
    sections: &[String],
    concurrency: u32,
    deadline: Instant,
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Outcome>>> = tasks.iter().map(|_| Mutex::new(None)).collect();
    let workers = (concurrency.max(1) as usize).min(tasks.len());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while Instant::now() < deadline && !crate::process::stop_requested() {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(task) = tasks.get(i) else { break };
                    let call =
                        std::panic::AssertUnwindSafe(|| extract::with_llm(client, task, sections));
                    let outcome = match std::panic::catch_unwind(call) {
                        Ok(Ok(ex)) => Outcome::Extracted(ex),
                        Ok(Err(e)) => Outcome::Failed(e.into()),
                        Err(_) => Outcome::Failed(ExtractionError::Panicked),
                    };
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or(Outcome::Deferred)
        })
        .collect()
}
