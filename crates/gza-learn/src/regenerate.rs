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
use gza_core::error::{Error, Result};
use gza_core::learning::Learning;
use gza_core::project::Project;
use gza_core::task::TaskId;
use gza_llm::{ExtractionClient, LlmError};
use gza_store::{ExtractionBackoff, FileEdits, Store, Taught, VersionRecord, WindowTask};

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
    pub calls: Vec<TaskId>,
    /// In a dry run: every task the plan extracts (by a call, or from the agent's own list).
    pub planned: Vec<TaskId>,
    /// Extraction failures (the task is tried again next time).
    pub failures: Vec<(TaskId, ExtractionError)>,
    /// Tasks no call was started for before the extraction deadline; still counted towards the
    /// next regeneration, which extracts them.
    pub deferred: Vec<TaskId>,
    /// The extraction deadline this regeneration had.
    pub deadline: Duration,
    /// Set when no call was made because the endpoint is backing off (as recorded).
    pub backing_off: Option<ExtractionBackoff>,
    /// Set when this regeneration's calls all failed: the back-off now recorded.
    pub backoff_started: Option<ExtractionBackoff>,
    /// A dry run: nothing was kept (see [`Store::preview`]).
    pub dry_run: bool,
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
        let path = project.state_dir().join("learnings.lock");
        let file = gza_core::fsutil::try_lock_file(&path)
            .map_err(|e| gza_core::fsutil::read_refused(&path, e))?;
        Ok(file.map(RegenLock))
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

fn read_file(root: &Path, path: &Path) -> OnDisk {
    // Never std::fs::read: a FIFO in its place would block, a symlink to a huge file be read
    // whole, a symlink out of the project be read into the records (and so into prompts).
    match gza_core::fsutil::read_project_file(root, path, MAX_FILE_BYTES).map(String::from_utf8) {
        // An empty file is read as a missing one, never as "every line deleted": a truncated
        // file (a full disk, a crashed editor) archived every learning, people's own too. To
        // archive them all on purpose: `gza learnings clear`, or delete the lines and keep
        // the header.
        Ok(Ok(text)) if text.trim().is_empty() => OnDisk::Missing,
        Ok(Ok(text)) if !text.contains('\0') => OnDisk::Text(text),
        Ok(_) => OnDisk::Unreadable,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => OnDisk::Missing,
        Err(_) => OnDisk::Unreadable,
    }
}

/// Whose learnings.md is: what its lines say is a person's only when it is the file gza wrote
/// for this database (issue 18: a repository's text is data, never the person's word).
enum Provenance {
    /// The file gza wrote for this database, perhaps edited by the person: its edits are
    /// found against `base`, the version it started from (None: nothing to compare with).
    Ours(Option<String>),
    /// Not a file gza wrote for this database (a cloned repository's committed file, another
    /// person's or another database's pulled in by git, one whose header was changed): why.
    Foreign(String),
}

/// Decide whose the file is. It is this database's own when it names a version this database
/// holds and its header (up to and including the marker line, with its date and the version's
/// mark, which only this database can make) is that version's byte for byte (carriage returns
/// aside); a version
/// written before marks existed counts only when it is the newest. A file naming no version is
/// one a person wrote by hand, unless git tracks it: then it came with the repository (a
/// clone, a pull) and is not theirs.
fn provenance(
    project: &Project,
    store: &Store,
    text: &str,
    named: Option<(i64, String)>,
) -> Result<Provenance> {
    let version = view::parse(text).version;
    let Some(v) = version else {
        if tracked_by_git(project) {
            return Ok(Provenance::Foreign(
                "it names no version gza wrote, and git tracks it: it came with the repository"
                    .into(),
            ));
        }
        return Ok(Provenance::Ours(
            store.last_learnings_version()?.map(|v| v.content),
        ));
    };
    let Some((_, content)) = named else {
        return Ok(Provenance::Foreign(format!(
            "it names version {v}, which this database does not hold"
        )));
    };
    let header = view::header_of(text);
    let stored = view::header_of(&content);
    let marked_or_newest = match stored {
        Some(h) if view::has_mark(h) => true,
        _ => store
            .last_learnings_version()?
            .is_some_and(|last| last.id == v),
    };
    let same = matches!((header, stored), (Some(a), Some(b)) if view::same_header(a, b));
    if !same || !marked_or_newest {
        return Ok(Provenance::Foreign(format!(
            "its header is not the one gza wrote for version {v} here"
        )));
    }
    Ok(Provenance::Ours(Some(content)))
}

/// Whether git tracks learnings.md in the repository that holds it (asked from its own
/// folder, so a `.gza` that is a submodule answers for itself). No git, or no repository: no.
fn tracked_by_git(project: &Project) -> bool {
    let path = project.learnings_path();
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return false;
    };
    gza_core::git::succeeds(dir, &["ls-files", "--error-unmatch", "--", name])
}

/// Find the edits in the file: a person's, compared with the version the file names, when the
/// file is this database's own ([`provenance`]); otherwise only its new lines, as nobody's
/// ([`FileEdits::foreign`]).
fn edits_in(project: &Project, store: &Store, text: &str) -> Result<FileEdits> {
    let file = view::parse(text);
    let named = match file.version {
        Some(v) => store.learnings_version(v)?.map(|c| (v, c)),
        None => None,
    };
    if named.as_ref().is_some_and(|(_, c)| c == text) {
        // The file is the version gza wrote, byte for byte: nobody edited it. (Every search
        // and task start asks; reading every record to diff an unedited file grew with the
        // history.)
        return Ok(FileEdits::default());
    }
    let records: HashMap<i64, Learning> = store
        .learnings(true)?
        .into_iter()
        .map(|l| (l.id, l))
        .collect();
    let sections = &project.config.learnings.sections;
    let base_text = match provenance(project, store, text, named)? {
        Provenance::Ours(base) => base,
        Provenance::Foreign(why) => {
            let (edits, refused) =
                view::foreign_lines(&file, &records, items::clean_person_item, |s| {
                    items::section_named(s, sections)
                });
            return Ok(FileEdits {
                foreign: Some(foreign_note(&why, edits.added.len(), refused)),
                ..edits
            });
        }
    };
    let base: Option<ParsedView> = base_text.as_deref().map(view::parse);
    Ok(view::diff(
        &file,
        base.as_ref(),
        &records,
        items::clean_person_item,
        |s| items::section_named(s, sections),
    ))
}

/// The line logged when a foreign file is taken in.
fn foreign_note(why: &str, added: usize, refused: usize) -> String {
    format!(
        "learnings.md is not a file gza wrote for this database ({why}): its {added} new line(s) are taken in as agent learnings, not yours; what it changes of this database's learnings ({refused} line(s) naming one with other text or section, and any line missing) is not taken in, and the file is rewritten from the records"
    )
}

/// Bring the person's edits in the file into the records. Returns the edits and the file's
/// bytes as read, or `None` for the text when the file is missing or unreadable.
fn take_in_edits(project: &Project, store: &Store) -> Result<(FileEdits, Option<String>)> {
    let (edits, file) = read_edits(project, store)?;
    take_in(project, store, &edits, false)?;
    Ok((edits, file.text()))
}

/// Store `edits`; a file gza did not write for this database is said once in
/// `.gza/logs/learnings.log` (when it is taken in, which rewrites it), never in a dry run.
fn take_in(project: &Project, store: &Store, edits: &FileEdits, dry_run: bool) -> Result<()> {
    if !edits.is_empty() {
        store.apply_file_edits(edits)?;
    }
    if let Some(note) = edits.foreign.as_deref().filter(|_| !dry_run) {
        super::log(project, note);
    }
    Ok(())
}

/// The file as found on disk and the person's edits in it (nothing is written).
fn read_edits(project: &Project, store: &Store) -> Result<(FileEdits, OnDisk)> {
    let file = read_file(&project.root, &project.learnings_path());
    let edits = match &file {
        OnDisk::Text(text) => edits_in(project, store, text)?,
        OnDisk::Missing | OnDisk::Unreadable => FileEdits::default(),
    };
    Ok((edits, file))
}

impl OnDisk {
    fn text(self) -> Option<String> {
        match self {
            OnDisk::Text(t) => Some(t),
            OnDisk::Missing | OnDisk::Unreadable => None,
        }
    }
}

/// Take in the person's edits to learnings.md now, under the lock; used before a task reads the
/// file so that what it is given maps to records. Skipped when a regeneration holds the lock (it
/// takes them in itself).
pub fn sync_edits(project: &Project, store: &Store) -> Result<()> {
    let edited = {
        let Some(_lock) = RegenLock::try_acquire(project)? else {
            return Ok(());
        };
        let edits = read_edits(project, store)?.0;
        // A file gza did not write for this database is rewritten from the records even when
        // it adds nothing: until then, what it says (a line missing, another text under an id)
        // would be shown and given as if it were this database's view.
        !edits.is_empty() || edits.foreign.is_some()
    };
    // A rewrite takes the edits in and writes the file back at once (a line added by hand gets
    // its id, the marker names the new version), so the next reader finds no edit to take in
    // again: taking in is idempotent, however many commands read the file before the next
    // regeneration. (Taking edits in without recording a new version took them in again.)
    if edited {
        let options = Options::rewrite(project.config.learnings.window_size);
        match regenerate(project, store, None, None, options) {
            Ok(_) | Err(Error::Busy(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What a regeneration starts from, as read from the file and the database.
struct Inputs {
    file: OnDisk,
    edits: FileEdits,
    /// The window and the tasks owed an extraction, newest first (see `Store::learnings_scope`).
    scope: Vec<WindowTask>,
    /// Completions counted since the last regeneration.
    counted: i64,
    backoff: ExtractionBackoff,
}

impl Inputs {
    fn read(project: &Project, store: &Store, options: &Options) -> Result<Inputs> {
        let counted = if options.extract {
            store.learnings_metadata()?.tasks_since_regen
        } else {
            0
        };
        let (edits, file) = read_edits(project, store)?;
        let owed = counted.clamp(0, i64::from(u32::MAX)) as u32;
        let scope = store.learnings_scope(options.window, owed)?;
        let backoff = if options.extract {
            store.extraction_backoff()?
        } else {
            ExtractionBackoff::default()
        };
        Ok(Inputs {
            file,
            edits,
            scope,
            counted,
            backoff,
        })
    }
}

/// How the planned extractions are made.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// One call to the model per task.
    Model,
    /// No model is configured: the agent's own list is the extraction.
    AgentLists,
    /// The endpoint is backing off: the agent's list stands in, the task stays owed.
    BackingOff(ExtractionBackoff),
}

/// What a regeneration will do, decided before anything is written.
struct Plan {
    /// The person's edits to take into the records.
    edits: FileEdits,
    /// The file's text as read, to notice edits saved while the regeneration runs.
    seen: Option<String>,
    /// The file was not usable as learnings: back it up before replacing it.
    back_up_file: bool,
    /// Tasks to extract, oldest first (the first wording of a lesson stands, later ones confirm).
    extract: Vec<WindowTask>,
    source: Source,
    /// The endpoint's back-off as read, which the calls' outcome updates.
    backoff: ExtractionBackoff,
    /// The tasks the file is rendered from.
    window: Vec<TaskId>,
    /// The version's record so far (its counts are filled in when it is rendered).
    record: VersionRecord,
    /// Completions this regeneration takes off the counter (less those the deadline defers).
    consumed: i64,
}

/// Decide what a regeneration does: pure, from what was read.
///
/// - Edits in a readable file are taken in; an unreadable one is backed up and replaced.
/// - With `extract`, every task in scope not yet extracted is extracted, oldest first.
/// - Calls go to the model when there is one, unless it is backing off at `now` and `options`
///   respects that; the file is rendered from the newest `options.window` tasks.
fn plan(
    inputs: Inputs,
    options: &Options,
    has_model: bool,
    now: chrono::DateTime<chrono::Utc>,
) -> Plan {
    let window: Vec<TaskId> = inputs
        .scope
        .iter()
        .take(options.window as usize)
        .map(|t| t.id)
        .collect();
    let record = VersionRecord {
        from_task_id: window.first().copied(),
        window_tasks: window.len() as i64,
        ..VersionRecord::default()
    };
    let extract: Vec<WindowTask> = if options.extract {
        inputs
            .scope
            .into_iter()
            .rev()
            .filter(|t| !t.extracted)
            .collect()
    } else {
        Vec::new()
    };
    let backing_off = backoff::active_until(&inputs.backoff, now).is_some()
        && options.respect_backoff
        && !extract.is_empty();
    let source = match (has_model, backing_off) {
        (false, _) => Source::AgentLists,
        (true, true) => Source::BackingOff(inputs.backoff.clone()),
        (true, false) => Source::Model,
    };
    let back_up_file = matches!(inputs.file, OnDisk::Unreadable);
    Plan {
        edits: inputs.edits,
        seen: inputs.file.text(),
        back_up_file,
        extract,
        source,
        backoff: inputs.backoff,
        window,
        record,
        consumed: inputs.counted,
    }
}

/// Regenerate learnings.md from the last `options.window` completed tasks.
///
/// Only one regeneration runs at a time; another finds the lock taken and returns
/// [`Error::Busy`]. Edits the person makes while it runs are taken in before the file is
/// written; the file is recorded as a version before it is renamed into place. With `dry_run`
/// nothing is written and no call is made: the plan is previewed with the agents' own lists.
pub fn regenerate(
    project: &Project,
    store: &Store,
    client: Option<&dyn ExtractionClient>,
    ranker: Option<&Ranker>,
    options: Options,
) -> Result<Report> {
    let _span = tracing::info_span!("regenerate", window = options.window).entered();
    let started = Instant::now();
    let _lock = if options.dry_run {
        None
    } else {
        Some(RegenLock::acquire(project)?)
    };
    // In team mode, one extracting regeneration at a time across machines (a rewrite of this
    // clone's file from the records needs no more than its own lock).
    let _shared = if options.dry_run || !options.extract {
        None
    } else {
        Some(store.try_regeneration_lock()?.ok_or_else(|| {
            Error::Busy(
                "another machine is regenerating this project's learnings; its tasks are taken in there, and this clone's file is rewritten at its next update".into(),
            )
        })?)
    };
    let inputs = Inputs::read(project, store, &options)?;
    let plan = plan(inputs, &options, client.is_some(), chrono::Utc::now());
    tracing::info!(
        extract = plan.extract.len(),
        by_model = matches!(plan.source, Source::Model),
        edits = plan.edits.added.len() + plan.edits.edited.len() + plan.edits.deleted.len(),
        dry_run = options.dry_run,
        "regenerating"
    );
    let deadline = Duration::from_secs(project.config.learnings.extraction_deadline_seconds);
    let mut report = Report {
        edits: plan.edits.clone(),
        record: plan.record.clone(),
        deadline,
        backing_off: match &plan.source {
            Source::BackingOff(b) => Some(b.clone()),
            Source::Model | Source::AgentLists => None,
        },
        ..Report::default()
    };
    if options.dry_run {
        // The real run's own steps, on the database, all undone at the end: what the preview
        // shows is what the run writes (ids, sections, duplicates across tasks, the person's
        // edits), but for what extraction calls would teach, which it cannot know.
        report.planned = plan.extract.iter().map(|t| t.id).collect();
        report.dry_run = true;
        store.preview(|| apply(project, store, client, ranker, plan, started, &mut report))?;
    } else {
        apply(project, store, client, ranker, plan, started, &mut report)?;
    }
    let r = &report.record;
    tracing::info!(
        tasks = r.window_tasks,
        items = r.items,
        added = r.added,
        removed = r.removed,
        llm_calls = r.llm_calls,
        failed = report.failures.len(),
        ms = started.elapsed().as_millis() as u64,
        "regenerated"
    );
    Ok(report)
}

/// Carry out `plan`: take in the edits, make the calls, record what they taught, back off a
/// failing endpoint, then record and write the file. Inside [`Store::preview`] (a dry run) no
/// call is made (the agents' own lists stand in, and the calls that would be made are listed),
/// nothing is handed to the embedding job and no file is written.
fn apply(
    project: &Project,
    store: &Store,
    client: Option<&dyn ExtractionClient>,
    ranker: Option<&Ranker>,
    plan: Plan,
    started: Instant,
    report: &mut Report,
) -> Result<()> {
    let dry_run = report.dry_run;
    let sections = &project.config.learnings.sections;
    take_in(project, store, &plan.edits, dry_run)?;
    let tasks: Vec<&WindowTask> = plan.extract.iter().collect();
    let calling = client.filter(|_| plan.source == Source::Model && !dry_run);
    if dry_run && client.is_some() && plan.source == Source::Model {
        report.calls = tasks.iter().map(|t| t.id).collect();
    }
    let results = match calling {
        Some(calling) => extract_all(
            calling,
            &tasks,
            sections,
            project.config.learnings.concurrency,
            started + report.deadline,
        ),
        None => tasks
            .iter()
            .map(|t| Outcome::Extracted(extract::from_agent(t, sections)))
            .collect(),
    };
    let now = chrono::Utc::now();
    let mut calls = CallsMade::default();
    // The known learnings near what was taught (`Known::around`), read and prepared (each
    // text stemmed) once per regeneration and kept up to date with what each extraction
    // teaches: preparing them again for every task extracted made a regeneration's cost the
    // learnings times the tasks. A rewrite (nothing to extract) never reads them.
    let mut known = if tasks.is_empty() {
        super::dedupe::Known::new(Vec::new())
    } else {
        // What each task teaches: its extraction, or (a failed call) the agent's own list,
        // which stands in below.
        let stand_ins: Vec<Extraction> = tasks
            .iter()
            .zip(&results)
            .filter(|(_, r)| matches!(r, Outcome::Failed(_)))
            .map(|(t, _)| extract::from_agent(t, sections))
            .collect();
        let taught: Vec<&str> = results
            .iter()
            .filter_map(|r| match r {
                Outcome::Extracted(ex) => Some(ex),
                _ => None,
            })
            .chain(&stand_ins)
            .flat_map(|ex| ex.items.iter().map(|i| i.content.as_str()))
            .collect();
        super::dedupe::Known::around(project, store, &taught)?
    };
    for (task, result) in tasks.iter().zip(results) {
        if calling.is_some() && !matches!(result, Outcome::Deferred) {
            report.calls.push(task.id);
        }
        let (ex, extracted) = match result {
            // Backing off: the agent's own list stands in until a call is made again.
            Outcome::Extracted(ex) if matches!(plan.source, Source::BackingOff(_)) => (ex, false),
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
        let taught = teach(project, store, ranker, &mut known, &ex);
        report.confirmed += confirmations(&taught);
        let provider = client.map(|c| c.provider()).unwrap_or("none");
        let new_ids = store.record_extraction(
            task.id,
            extracted.then(|| (provider, client.map(|c| c.model()), ex.tokens)),
            &taught,
        )?;
        for id in new_ids {
            if let Some(l) = store.learning(id)? {
                known.take_in(l);
            }
        }
    }
    if let Some(next) = backoff::after(&plan.backoff, &calls, now).filter(|_| !dry_run) {
        store.set_extraction_backoff(&next)?;
        report.backoff_started = next.until.is_some().then_some(next);
    }
    // Tasks left by the deadline stay counted, so the next regeneration comes for them.
    let consumed = (plan.consumed - report.deferred.len() as i64).max(0);
    if let Some(ranker) =
        ranker.filter(|_| !dry_run && (!tasks.is_empty() || !plan.edits.is_empty()))
    {
        // New learnings are embedded by the background job, so neither a regeneration (inside
        // `gza work`) nor a search pays for it. (With nothing taught or edited there is
        // nothing new, and the model is not loaded to look.)
        if let Err(e) = ranker.hand_off(store) {
            super::log(project, &format!("embedding new learnings failed: {e}"));
        }
    }
    write_view(project, store, &plan, consumed, started, report, dry_run)
}

/// Render the view, take in edits saved meanwhile, record the version (taking `consumed` off the
/// counter) and write the file.
fn write_view(
    project: &Project,
    store: &Store,
    plan: &Plan,
    consumed: i64,
    started: Instant,
    report: &mut Report,
    dry_run: bool,
) -> Result<()> {
    let path = project.learnings_path();
    let before = last_ids(store)?;
    let mut seen = plan.seen.clone();
    for _ in 0..MAX_SYNC_ROUNDS {
        let now = read_file(&project.root, &path).text();
        if now != seen && !dry_run {
            // The person saved the file while this ran: take those edits in first.
            let (more, text) = take_in_edits(project, store)?;
            merge_edits(&mut report.edits, more);
            seen = text;
            continue;
        }
        let (_, ids) = render(project, store, &plan.window, &[], 0)?;
        fill_counts(&mut report.record, &before, &ids);
        report.record.duration_ms = started.elapsed().as_millis() as i64;
        let mut rendered = Ok(String::new());
        let content = store
            .record_learnings_version(&report.record, consumed, |v| {
                rendered = render(project, store, &plan.window, &[], v).map(|(c, _)| c);
                rendered.as_ref().cloned().unwrap_or_default()
            })?
            .content;
        rendered?;
        if dry_run {
            report.content = content;
            return Ok(());
        }
        if plan.back_up_file && path.symlink_metadata().is_ok() {
            // Only a regular file in the project is backed up (of any size): a FIFO in its
            // place, or a link leading out of the project (to `~/.netrc`, say), is replaced and
            // never read, so nothing outside is copied in.
            let bak = path.with_extension("md.bak");
            match gza_core::fsutil::copy_project_file(&project.root, &path, &bak) {
                Ok(()) => report.backup = Some(bak.to_string_lossy().into_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::Other && e.raw_os_error().is_none() => {}
                Err(e) => return Err(Error::io(&bak, "back up learnings to", e)),
            }
        }
        gza_core::fsutil::write_atomically(&path, content.as_bytes())?;
        report.content = content;
        return Ok(());
    }
    Err(Error::Usage(format!(
        "{} kept changing while gza tried to rewrite it; your edits are saved in the database, run `gza learnings update` again",
        path.display()
    )))
}

/// What one extraction teaches given the learnings known: new ones (drafts under manual
/// review) and confirmations of known ones.
fn teach(
    project: &Project,
    store: &Store,
    ranker: Option<&Ranker>,
    known: &mut super::dedupe::Known,
    ex: &Extraction,
) -> Vec<Taught> {
    let mut taught = known.decide(&ex.items, ex.origin, ranker, store);
    super::neighbours::screen_taught(project, ranker, &mut taught);
    if project.config.learnings.review == gza_core::config::ReviewMode::Manual {
        // With manual review, what a task taught waits for a person as a draft.
        for t in &mut taught {
            if let Taught::New(n) = t {
                n.status = gza_core::learning::Status::Draft;
            }
        }
    }
    taught
}

fn confirmations(taught: &[Taught]) -> usize {
    taught
        .iter()
        .filter(|t| matches!(t, Taught::Confirms(_)))
        .count()
}

/// The learning ids in the newest version gza wrote.
fn last_ids(store: &Store) -> Result<Vec<i64>> {
    Ok(match store.last_learnings_version()? {
        Some(version) => view::ids_in(&version.content),
        None => Vec::new(),
    })
}

/// The file as version `version` renders it from the learnings of the `window` tasks (plus
/// `preview`, learnings a dry run would add), and the ids it shows.
fn render(
    project: &Project,
    store: &Store,
    window: &[TaskId],
    preview: &[Learning],
    version: i64,
) -> Result<(String, Vec<i64>)> {
    let config = &project.config.learnings;
    let now = chrono::Utc::now();
    let mut items = store.learnings_in_window(window)?;
    // Seed 000: what nobody re-confirmed decays out of the file.
    items.retain(|l| !l.is_decayed(now));
    items.extend(preview.iter().cloned());
    let ids: Vec<i64> = items.iter().map(|l| l.id).collect();
    view::rank_for_file(&mut items, &store.latest_sources_of(&ids)?);
    let date = now.format("%Y-%m-%d").to_string();
    let mark = if version > 0 {
        version_mark(&store.hook_version()?.1, version)
    } else {
        String::new()
    };
    let header = view::Header {
        date: &date,
        window_tasks: window.len(),
        version,
        mark: &mark,
    };
    let budget = config.max_tokens as usize * gza_core::prompt::CHARS_PER_TOKEN;
    Ok(view::render(&items, &config.sections, &header, budget))
}

/// The mark of version `version` of this database's file: 128 bits of SHA-256 over the
/// database's nonce (random, never written outside the database) and the version. The date
/// and the version number a header also carries can be guessed; this cannot, by a repository
/// that has not seen the person's file, so a committed file never passes for theirs. The same
/// for a version's every rendering (a dry run previews the file the run writes). Empty when
/// the database has no nonce.
fn version_mark(nonce: &str, version: i64) -> String {
    use sha2::{Digest, Sha256};
    if nonce.is_empty() {
        return String::new();
    }
    let digest = Sha256::new()
        .chain_update(b"gza learnings.md version mark\0")
        .chain_update(nonce.as_bytes())
        .chain_update(b"\0")
        .chain_update(version.to_string().as_bytes())
        .finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
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
    into.foreign = into.foreign.take().or(more.foreign);
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
                while Instant::now() < deadline && !gza_core::process::stop_requested() {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(task) = tasks.get(i) else { break };
                    let call =
                        std::panic::AssertUnwindSafe(|| extract::with_llm(client, task, sections));
                    let asked = Instant::now();
                    let outcome = match std::panic::catch_unwind(call) {
                        Ok(Ok(ex)) => Outcome::Extracted(ex),
                        Ok(Err(e)) => Outcome::Failed(e.into()),
                        Err(_) => Outcome::Failed(ExtractionError::Panicked),
                    };
                    tracing::debug!(
                        task = %task.id,
                        ok = matches!(outcome, Outcome::Extracted(_)),
                        ms = asked.elapsed().as_millis() as u64,
                        "extraction call"
                    );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: i64, extracted: bool) -> WindowTask {
        WindowTask {
            id: TaskId(id),
            prompt: format!("task {id}"),
            task_type: gza_core::task::TaskType::Explore,
            output: None,
            extracted,
        }
    }

    /// Tasks 1..=n, newest first as the store gives them; those in `done` are extracted.
    fn inputs(n: i64, done: &[i64], counted: i64) -> Inputs {
        Inputs {
            file: OnDisk::Missing,
            edits: FileEdits::default(),
            scope: (1..=n)
                .rev()
                .map(|id| task(id, done.contains(&id)))
                .collect(),
            counted,
            backoff: ExtractionBackoff::default(),
        }
    }

    fn options(window: u32) -> Options {
        Options {
            window,
            dry_run: false,
            extract: true,
            respect_backoff: true,
        }
    }

    fn ids(plan: &Plan) -> Vec<i64> {
        plan.extract.iter().map(|t| t.id.0).collect()
    }

    fn tasks(ids: &[i64]) -> Vec<TaskId> {
        ids.iter().copied().map(TaskId).collect()
    }

    fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    const NOW: &str = "2026-11-23T03:00:00Z";

    #[test]
    fn every_task_not_yet_extracted_is_planned_oldest_first_and_the_file_shows_the_window() {
        // Twenty tasks owed (more than the window of 3): all are extracted, the file shows 3.
        let plan = plan(inputs(20, &[2, 5], 18), &options(3), true, at(NOW));
        let mut expected: Vec<i64> = (1..=20).filter(|i| ![2, 5].contains(i)).collect();
        expected.sort();
        assert_eq!(ids(&plan), expected);
        assert_eq!(plan.window, tasks(&[20, 19, 18]));
        assert_eq!(plan.record.from_task_id, Some(TaskId(20)));
        assert_eq!(plan.record.window_tasks, 3);
        assert_eq!(plan.consumed, 18);
        assert_eq!(plan.source, Source::Model);
    }

    #[test]
    fn a_rewrite_extracts_nothing_and_consumes_nothing() {
        let options = Options::rewrite(15);
        let plan = plan(inputs(4, &[], 0), &options, true, at(NOW));
        assert!(plan.extract.is_empty());
        assert_eq!(plan.consumed, 0);
        assert_eq!(plan.window, tasks(&[4, 3, 2, 1]));
    }

    #[test]
    fn without_a_model_the_agents_lists_are_the_extraction() {
        let plan = plan(inputs(2, &[], 2), &options(15), false, at(NOW));
        assert_eq!(plan.source, Source::AgentLists);
        assert_eq!(ids(&plan), vec![1, 2]);
    }

    #[test]
    fn a_backing_off_endpoint_gets_no_call_unless_a_person_asks() {
        let backoff = ExtractionBackoff {
            failures: 2,
            until: Some("2026-11-23T03:02:00Z".into()),
            last_error: Some("timed out".into()),
        };
        let mut backing_off = inputs(3, &[], 3);
        backing_off.backoff = backoff.clone();
        let automatic = plan(backing_off, &options(15), true, at(NOW));
        assert_eq!(automatic.source, Source::BackingOff(backoff.clone()));
        assert_eq!(ids(&automatic), vec![1, 2, 3], "the agents' lists stand in");

        let mut asked = inputs(3, &[], 3);
        asked.backoff = backoff.clone();
        let person = Options {
            respect_backoff: false,
            ..options(15)
        };
        assert_eq!(plan(asked, &person, true, at(NOW)).source, Source::Model);

        let mut over = inputs(3, &[], 3);
        over.backoff = backoff;
        let later = plan(over, &options(15), true, at("2026-11-23T03:02:00Z"));
        assert_eq!(later.source, Source::Model, "the back-off ended");
    }

    #[test]
    fn an_unreadable_file_is_backed_up_and_a_readable_ones_edits_taken_in() {
        let mut unreadable = inputs(1, &[1], 0);
        unreadable.file = OnDisk::Unreadable;
        let plan_a = plan(unreadable, &options(15), true, at(NOW));
        assert!(plan_a.back_up_file);
        assert_eq!(plan_a.seen, None);

        let mut edited = inputs(1, &[1], 0);
        edited.file = OnDisk::Text("- mine\n".into());
        edited.edits.added.push(("General".into(), "mine".into()));
        let plan_b = plan(edited, &options(15), true, at(NOW));
        assert!(!plan_b.back_up_file);
        assert_eq!(plan_b.seen.as_deref(), Some("- mine\n"));
        assert_eq!(plan_b.edits.added.len(), 1);
        assert!(plan_b.extract.is_empty());
    }
}
