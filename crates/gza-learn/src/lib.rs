//! Learning accumulation: every completed task teaches the next ones.
//!
//! Each completed task is extracted once (0-3 learnings, kept in the database with their
//! source); a regeneration merges the learnings of the window of recent tasks with the user's
//! pinned lines and renders `.gza/learnings.md` deterministically.

pub mod backoff;
pub mod credit;
pub mod dedupe;
pub mod evidence;

pub use gza_embed as embed;
pub mod expertise;
pub mod extract;
pub mod hints;
pub mod index;
pub mod items;
pub mod neighbours;
pub mod rank;
pub mod regenerate;
mod reply;
pub mod rerank;
pub mod session;
pub mod spool;
pub mod validate;
pub mod view;

use std::collections::HashSet;
use std::fmt::Write as _;

use gza_core::config::{InjectMode, RerankMode};
use gza_core::learning::{Priority, Status};
use gza_core::project::Project;
use gza_core::prompt::InjectedLearnings;
use gza_core::task::Task;
use gza_store::Store;

/// Below this similarity a CRITICAL learning does not "match at all" and stays out.
const CRITICAL_FLOOR: f64 = 0.3;

/// Whether to record what is selected (a run) or only show it (a preview).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    Record,
    Preview,
}

/// The learnings a task is given, chosen by `learnings.inject`, or `None` when there are none or
/// the task opts out. With [`Selection::Record`] the ids given are recorded against the task.
/// A failure anywhere here is logged and the task runs without learnings: it never stops a task.
pub fn learnings_for_prompt(
    project: &Project,
    store: &Store,
    task: &Task,
    selection: Selection,
) -> Option<InjectedLearnings> {
    if task.skip_learnings || !project.config.learnings.enabled {
        return None;
    }
    match select(project, store, task, selection) {
        Ok(learnings) => {
            if selection == Selection::Record
                && let Some(l) = &learnings
            {
                // The version and every event's injections in one transaction.
                if let Err(e) = store.record_task_learnings(task.id, l.version, &l.events()) {
                    log(
                        project,
                        &format!("task {}: injections not recorded: {e}", task.id),
                    );
                }
            }
            learnings
        }
        Err(e) => {
            log(
                project,
                &format!("task {}: learnings not injected: {e}", task.id),
            );
            None
        }
    }
}

fn select(
    project: &Project,
    store: &Store,
    task: &Task,
    selection: Selection,
) -> gza_core::Result<Option<InjectedLearnings>> {
    let mode = project.config.learnings.inject;
    let mut injected = InjectedLearnings::default();
    if matches!(mode, InjectMode::File | InjectMode::Both) {
        if selection == Selection::Record {
            // The person's latest edits become records first, so every line maps to an id.
            regenerate::sync_edits(project, store)?;
        }
        if let Some(file) = gza_core::prompt::read_learnings_file(project)? {
            let held = held_back(store)?;
            let text = without_held_back(&file.text, &held);
            let in_file: Vec<i64> = ids_of_lines(store, &text)?
                .into_iter()
                .filter(|id| !held.iter().any(|(h, _)| h == id))
                .collect();
            injected.text = view::strip_ids(&text);
            injected.file_ids = in_file;
            injected.version = view::parse(&file.text)
                .version
                .or(store.last_learnings_version()?.map(|v| v.id));
        }
    }
    if matches!(mode, InjectMode::File | InjectMode::Both) && project.config.learnings.inject_drafts
    {
        add_drafts(project, store, &mut injected)?;
    }
    if matches!(mode, InjectMode::Relevant | InjectMode::Both) {
        let query = task_query(project, task);
        let ranker = rank::Ranker::load(project);
        let recall = project.config.learnings.recall as usize;
        let skip: HashSet<i64> = injected.file_ids.iter().copied().collect();
        let ranking = ranker.rank_all(store, &query, project.config.learnings.inject_drafts)?;
        let all = ranking.hits.clone();
        let vectors = ranking.vectors.clone();
        let cut: Vec<rank::Hit> = rank::calibrate(ranking)
            .into_iter()
            .filter(|h| !skip.contains(&h.id))
            .collect();
        // Every record this choice reads comes through one cache, read a window at a time
        // (a round trip per learning, and the chosen ones read again, were most of what
        // choosing cost a task on PostgreSQL).
        let mut records = Records::new(store);
        let order: Vec<i64> = cut.iter().map(|h| h.id).collect();
        let mut picked: Vec<i64> =
            rank::diversify_by(cut, &vectors, recall, Some(&ranker), |id| {
                Ok(records.get(id, &order, recall * 2)?.map(|l| l.text.clone()))
            })?
            .into_iter()
            .map(|h| h.id)
            .collect();
        // The rerank, when on, replaces the ranker's choice with the model's (only for a task
        // being run: a preview makes no call).
        let mut reranked = HashSet::new();
        if selection == Selection::Record
            && project.config.learnings.rerank == RerankMode::Extraction
        {
            match rerank_choice(
                project,
                store,
                &mut records,
                task,
                &query,
                &all,
                &skip,
                (&vectors, &ranker),
            ) {
                Ok(Some(chosen)) => {
                    picked = chosen;
                    picked.truncate(recall);
                    reranked = picked.iter().copied().collect();
                }
                Ok(None) => {}
                // Reading the candidates failed: the ranker's choice stands.
                Err(e) => log(
                    project,
                    &format!(
                        "task {}: rerank skipped, the ranker's choice is given: {e}",
                        task.id
                    ),
                ),
            }
        }
        if mode == InjectMode::Relevant {
            // Every CRITICAL learning that matches at all, even below the usual cut (the
            // ranking keeps every CRITICAL one).
            for h in &all {
                let matches = h.lexical > 0.0 || h.semantic.is_some_and(|s| s >= CRITICAL_FLOOR);
                if matches && h.priority == Priority::Critical && !picked.contains(&h.id) {
                    picked.push(h.id);
                }
            }
        }
        // The chosen ones from the records already read (a CRITICAL one added above may be
        // new: read with the rest in one statement).
        records.prefetch(&picked)?;
        let mut chosen = Vec::new();
        for id in &picked {
            if let Some(l) = records
                .get(*id, &[], 0)?
                .filter(|l| l.is_in_use() && !l.is_decayed(chrono::Utc::now()))
            {
                chosen.push(l.clone());
            }
        }
        let records = chosen;
        if !records.is_empty() {
            let mut text = String::new();
            if !injected.text.trim().is_empty() {
                text.push_str(injected.text.trim_end());
                text.push_str("\n\n## Also relevant to this task\n");
            }
            for l in &records {
                let draft = if l.status == Status::Draft {
                    " (draft: not yet reviewed)"
                } else {
                    ""
                };
                let _ = writeln!(text, "- [{}] {}{draft}", l.section, l.text);
            }
            injected.text = text;
            let (by_rerank, by_ranker): (Vec<i64>, Vec<i64>) = records
                .iter()
                .map(|l| l.id)
                .partition(|id| reranked.contains(id));
            injected.rerank_ids = by_rerank;
            injected.relevant_ids = by_ranker;
        }
    }
    Ok((!injected.text.trim().is_empty()).then_some(injected))
}

/// The learning records one choice of a task's learnings reads, each read once: a miss reads
/// the learning with the next ones the caller will ask for (`order`, up to `window` of them) in
/// one statement, and remembers those that do not exist.
struct Records<'a> {
    store: &'a Store,
    read: std::collections::HashMap<i64, Option<gza_core::learning::Learning>>,
}

impl<'a> Records<'a> {
    fn new(store: &'a Store) -> Records<'a> {
        Records {
            store,
            read: std::collections::HashMap::new(),
        }
    }

    /// Read those of `ids` not read yet, in one statement.
    fn prefetch(&mut self, ids: &[i64]) -> gza_core::Result<()> {
        let mut missing: Vec<i64> = Vec::new();
        for id in ids {
            if !self.read.contains_key(id) && !missing.contains(id) {
                missing.push(*id);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let mut found = self.store.learnings_by_ids(&missing)?;
        for id in missing {
            self.read.insert(id, found.remove(&id));
        }
        Ok(())
    }

    /// Learning `id`; on a miss, read with up to `window` of the ids after it in `order`.
    fn get(
        &mut self,
        id: i64,
        order: &[i64],
        window: usize,
    ) -> gza_core::Result<Option<&gza_core::learning::Learning>> {
        if !self.read.contains_key(&id) {
            let mut ids = vec![id];
            if let Some(at) = order.iter().position(|o| *o == id) {
                ids.extend(order[at + 1..].iter().take(window));
            }
            self.prefetch(&ids)?;
        }
        Ok(self.read.get(&id).and_then(Option::as_ref))
    }
}

/// Whether a learning may be given to an agent by the ranker now: in use (active, or a draft the
/// quarantine did not hold, when drafts are given at all) and not decayed.
fn injectable(l: &gza_core::learning::Learning, drafts: bool) -> bool {
    l.is_in_use()
        && l.lifecycle.quarantine_reason.is_none()
        && (l.status == Status::Active || drafts)
        && !l.is_decayed(chrono::Utc::now())
}

/// The rerank of a task being run (`learnings.rerank: extraction`): the ranker's best
/// `rerank_candidates` that may be given (never a quarantined learning, nor a draft unless
/// drafts are given; near-duplicates left out as the ranker's own choice leaves them), sent to
/// the extraction model with the task. `Some(ids)` is the model's choice, best first (empty:
/// give none of them); `None` means give the ranker's own choice: there was nothing to rerank,
/// or the rerank failed, which is logged in one line and recorded for `gza show`.
#[allow(clippy::too_many_arguments)]
fn rerank_choice(
    project: &Project,
    store: &Store,
    cache: &mut Records,
    task: &Task,
    query: &str,
    ranked: &[rank::Hit],
    skip: &HashSet<i64>,
    (vectors, ranker): (&std::collections::HashMap<i64, Vec<f32>>, &rank::Ranker),
) -> gza_core::Result<Option<Vec<i64>>> {
    let config = &project.config.learnings;
    let drafts = config.inject_drafts;
    let mut records = std::collections::HashMap::new();
    let eligible: Vec<rank::Hit> = ranked
        .iter()
        .filter(|h| !skip.contains(&h.id))
        .take(config.rerank_candidates as usize * 4)
        .cloned()
        .collect();
    let order: Vec<i64> = eligible.iter().map(|h| h.id).collect();
    let window = config.rerank_candidates as usize * 2;
    let candidates: Vec<i64> = rank::diversify_by(
        eligible,
        vectors,
        config.rerank_candidates as usize,
        Some(ranker),
        |id| {
            let l = cache
                .get(id, &order, window)?
                .filter(|l| injectable(l, drafts))
                .cloned();
            let text = l.as_ref().map(|l| l.text.clone());
            if let Some(l) = l {
                records.insert(id, l);
            }
            Ok(text)
        },
    )?
    .into_iter()
    .map(|h| h.id)
    .collect();
    if candidates.is_empty() {
        return Ok(None);
    }
    let shown: Vec<&gza_core::learning::Learning> =
        candidates.iter().filter_map(|id| records.get(id)).collect();
    let started = std::time::Instant::now();
    // An endpoint the regenerations found failing is left alone as they leave it: the call
    // would most likely fail too, after costing the task up to the deadline.
    let backing_off = store
        .extraction_backoff()
        .ok()
        .and_then(|b| backoff::active_until(&b, chrono::Utc::now()).map(|until| (until, b)));
    let result = match backing_off {
        Some((until, b)) => Err(rerank::Failed {
            why: format!(
                "no call: the extraction endpoint is left alone until {} after {} failed regeneration(s) ({})",
                until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                b.failures,
                b.last_error.as_deref().unwrap_or("no answer")
            ),
            input_tokens: 0,
            output_tokens: 0,
        }),
        None => rerank::choose(
            config,
            &project.config.providers.claude.path,
            query,
            &shown,
            config.recall as usize,
        ),
    };
    let ms = started.elapsed().as_millis() as i64;
    let (record, choice) = match result {
        Ok(chosen) => {
            let ids: Vec<i64> = chosen.indexes.iter().map(|&i| shown[i].id).collect();
            let outcome = if ids.is_empty() {
                gza_store::RerankOutcome::None
            } else {
                gza_store::RerankOutcome::Chosen(ids.clone())
            };
            let record = gza_store::Rerank {
                outcome,
                candidates: shown.len() as i64,
                ms,
                input_tokens: chosen.input_tokens,
                output_tokens: chosen.output_tokens,
            };
            (record, Some(ids))
        }
        Err(failed) => {
            let why =
                gza_core::redact::redact_secrets(&gza_core::redact::one_clean_line(&failed.why));
            log(
                project,
                &format!(
                    "task {}: rerank fell back to the ranker's choice after {ms} ms: {why}",
                    task.id
                ),
            );
            let record = gza_store::Rerank {
                outcome: gza_store::RerankOutcome::Fallback(why),
                candidates: shown.len() as i64,
                ms,
                input_tokens: failed.input_tokens,
                output_tokens: failed.output_tokens,
            };
            (record, None)
        }
    };
    if let Err(e) = store.record_rerank(task.id, &record) {
        log(
            project,
            &format!("task {}: the rerank was not recorded: {e}", task.id),
        );
    }
    Ok(choice)
}

/// Most drafts given with the file.
const MAX_FILE_DRAFTS: usize = 10;

/// Drafts are usable at once (seed 003): the newest ones go after the file, marked as drafts,
/// within what is left of `max_tokens`. learnings.md itself holds active learnings only.
fn add_drafts(
    project: &Project,
    store: &Store,
    injected: &mut InjectedLearnings,
) -> gza_core::Result<()> {
    let now = chrono::Utc::now();
    let mut drafts: Vec<_> = store
        .review_queue()?
        .into_iter()
        .filter(|l| l.status == Status::Draft && l.lifecycle.quarantine_reason.is_none())
        .filter(|l| !l.is_decayed(now))
        .collect();
    drafts.reverse();
    let budget = project.config.learnings.max_tokens as usize * gza_core::prompt::CHARS_PER_TOKEN;
    let mut section = String::new();
    let mut ids = Vec::new();
    for l in drafts.into_iter().take(MAX_FILE_DRAFTS) {
        let line = format!("- [{}] {} (draft: not yet reviewed)\n", l.section, l.text);
        if injected.text.len() + section.len() + line.len() + 40 > budget {
            break;
        }
        section.push_str(&line);
        ids.push(l.id);
    }
    if !ids.is_empty() {
        if !injected.text.trim().is_empty() {
            injected.text = format!("{}\n\n", injected.text.trim_end());
        }
        injected.text.push_str("## Drafts (not yet reviewed)\n");
        injected.text.push_str(&section);
        injected.file_ids.extend(ids);
    }
    Ok(())
}

/// Quarantined learnings: (id, text). Never given to an agent, even when their line is in the
/// file (an agent or a person may have just written it there).
fn held_back(store: &Store) -> gza_core::Result<Vec<(i64, String)>> {
    Ok(store
        .review_queue()?
        .into_iter()
        .filter(|l| l.lifecycle.quarantine_reason.is_some())
        .map(|l| (l.id, l.text))
        .collect())
}

/// The file's text without the lines of held-back learnings, and without any line that has no
/// id yet (not taken in as a record) and reads like an instruction.
fn without_held_back(text: &str, held: &[(i64, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let item = view::parse(line).lines.into_iter().next();
        let drop = item.is_some_and(|i| {
            held.iter().any(|(id, t)| i.id == Some(*id) || *t == i.text)
                || (i.id.is_none() && gza_core::quarantine::check(&i.text).is_some())
        });
        if !drop {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Take in what hooks spooled while the database was busy (see [`spool`]); never fails.
pub fn take_in_spooled(project: &Project, store: &Store) -> usize {
    spool::take_in(project, store)
}

/// What a task is about, for the ranker: its prompt and its spec file.
fn task_query(project: &Project, task: &Task) -> String {
    let mut query = task.prompt.clone();
    if let Some(spec) = &task.spec
        && let Ok(file) = gza_core::fsutil::open_regular(
            &project.root.join(spec),
            std::fs::OpenOptions::new().read(true),
        )
    {
        use std::io::Read;
        // The start says what the task is about; at most 4,000 characters of it are used.
        let mut bytes = Vec::new();
        let _ = file.take(16 * 1024).read_to_end(&mut bytes);
        query.push('\n');
        query.extend(String::from_utf8_lossy(&bytes).chars().take(4_000));
    }
    query
}

/// The learnings the lines of a file stand for: their ids, or, for a line without one, the
/// active learning with exactly its text.
fn ids_of_lines(store: &Store, text: &str) -> gza_core::Result<Vec<i64>> {
    let parsed = view::parse(text);
    let need_text = parsed.lines.iter().any(|l| l.id.is_none());
    let by_text: std::collections::HashMap<String, i64> = if need_text {
        store
            .learnings(false)?
            .into_iter()
            .map(|l| (l.text, l.id))
            .collect()
    } else {
        Default::default()
    };
    let mut seen = HashSet::new();
    Ok(parsed
        .lines
        .iter()
        .filter_map(|l| l.id.or_else(|| by_text.get(&l.text).copied()))
        .filter(|id| seen.insert(*id))
        .collect())
}

/// Append a line to `.gza/logs/learnings.log`.
pub fn log(project: &Project, line: &str) {
    tracing::info!("{line}");
    gza_core::fsutil::append_log(&project.logs_dir().join("learnings.log"), line);
}

/// After a task is recorded: credit work found reverted since the last task
/// ([`credit::scan_reverts`]), and regenerate when `regenerate_every` completed tasks have piled up.
/// Without an LLM this is as cheap as writing a file and runs at once; with one it runs on a
/// thread (returned, for the caller to wait on before exiting) so the next task is not delayed.
/// Never fails: a failure is logged and the regeneration simply happens again next time.
pub fn after_task(project: &Project, store: &Store) -> Option<std::thread::JoinHandle<()>> {
    let config = &project.config.learnings;
    if !config.enabled {
        return None;
    }
    credit::scan_reverts(project, store);
    let due = store
        .learnings_metadata()
        .is_ok_and(|m| m.tasks_since_regen >= i64::from(config.regenerate_every));
    if !due {
        return None;
    }
    let client = match gza_llm::client_for(config, &project.config.providers.claude.path) {
        Ok(c) => c,
        Err(e) => {
            log(project, &format!("regeneration skipped: {e}"));
            return None;
        }
    };
    if client.is_none() {
        regenerate_and_log(project, store, None);
        return None;
    }
    let project = project.clone();
    Some(std::thread::spawn(move || {
        match Store::open_project(&project) {
            Ok(store) => regenerate_and_log(&project, &store, client.as_deref()),
            Err(e) => log(&project, &format!("regeneration failed: {e}")),
        }
    }))
}

fn regenerate_and_log(
    project: &Project,
    store: &Store,
    client: Option<&dyn gza_llm::ExtractionClient>,
) {
    let options = regenerate::Options {
        window: project.config.learnings.window_size,
        dry_run: false,
        extract: true,
        respect_backoff: true,
    };
    let ranker = rank::Ranker::deferred(project);
    match regenerate::regenerate(project, store, client, Some(&ranker), options) {
        Ok(report) => {
            for (id, err) in &report.failures {
                log(
                    project,
                    &format!("task {id}: extraction failed ({err}); it is tried again next time"),
                );
            }
            for line in regenerate::extraction_notes(&report) {
                log(project, &line);
            }
            log(
                project,
                &format!(
                    "regenerated from {} tasks: {} items (+{} -{}), {} LLM calls",
                    report.record.window_tasks,
                    report.record.items,
                    report.record.added,
                    report.record.removed,
                    report.record.llm_calls
                ),
            );
        }
        Err(gza_core::error::Error::Busy(_)) => {
            // The running one counts these tasks too; validating beside it would race it.
            log(
                project,
                "regeneration skipped: another is running; the tasks stay counted for the next",
            );
            return;
        }
        Err(e) => log(project, &format!("regeneration failed: {e}")),
    }
    validate_and_log(project, store);
}

/// Check every learning against the tree after a regeneration (seed 002); logged, never fails.
pub fn validate_and_log(project: &Project, store: &Store) {
    match validate::validate_reading(project, store, None, false, validate::Reading::Changed) {
        Ok(r) => {
            if let Some(e) = &r.export_error {
                log(project, &format!("expertise export refused: {e}"));
            }
            let promoted = r.checked.iter().filter(|c| c.change == "promoted").count();
            let stale = r.checked.iter().filter(|c| c.change == "stale").count();
            if promoted + stale > 0 {
                // Tier 2 goes first in the file: rewrite it with the new tiers.
                let options = regenerate::Options::rewrite(project.config.learnings.window_size);
                if let Err(e) = regenerate::regenerate(project, store, None, None, options) {
                    log(project, &format!("rewrite after validation failed: {e}"));
                }
            }
            log(
                project,
                &format!(
                    "validated {} learnings against {} files ({} read) in {} ms: {promoted} promoted, {stale} stale",
                    r.checked.len(),
                    r.files_searched,
                    r.files_read,
                    r.duration_ms
                ),
            );
        }
        Err(e) => log(project, &format!("validation failed: {e}")),
    }
}
