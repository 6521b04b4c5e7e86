//! Queries for learnings: records, sources, embeddings, injections, extractions, versions.

use serde::Serialize;

use super::Store;
use crate::db::{Backend, Db, DbError, DbResult, Row, ToParam, Tx};
use gza_core::error::Result;
use gza_core::learning::{Learning, NewLearning, Origin, Priority, Status, confirmed_confidence};
use gza_core::task::{TaskId, TaskType, now_timestamp};

/// A completed task in the learnings window.
#[derive(Debug, Clone)]
pub struct WindowTask {
    pub id: TaskId,
    pub prompt: String,
    pub task_type: TaskType,
    pub output: Option<String>,
    pub extracted: bool,
}

/// What one regeneration did, as recorded.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VersionRecord {
    pub from_task_id: Option<TaskId>,
    pub window_tasks: i64,
    pub items: i64,
    pub added: i64,
    pub removed: i64,
    pub kept: i64,
    pub llm_calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub duration_ms: i64,
}

/// The single learnings_metadata row.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LearningsMetadata {
    pub last_regenerated_at: Option<String>,
    pub last_regenerated_from_task_id: Option<TaskId>,
    pub tasks_since_regen: i64,
}

/// How many distinct sessions `gza learnings stats` counts before it says "over": the count
/// walks the session index one session at a time (a step per session, whatever its
/// injections), so capping the sessions bounds the whole count.
pub const SESSIONS_COUNTED: i64 = 1000;

/// Counts for `gza learnings stats`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LearningsTotals {
    pub active: i64,
    pub archived: i64,
    pub drafts: i64,
    /// Claude Code sessions that were given learnings, counted up to [`SESSIONS_COUNTED`].
    pub sessions: i64,
    /// There are more than [`SESSIONS_COUNTED`] of them (`sessions` is that many).
    pub more_sessions: bool,
    pub by_section: Vec<Tally>,
    pub by_priority: Vec<Tally>,
    pub by_origin: Vec<Tally>,
    pub injections: i64,
    pub injections_by_event: Vec<Tally>,
    /// Of `injections`, those given to A/B runs (experiments, counted apart: `never_injected`
    /// and every learning's count leave them out).
    pub injections_in_ab_runs: i64,
    /// Active learnings never given to a task or session outside A/B runs.
    pub never_injected: i64,
    pub tasks_extracted: i64,
    pub regenerations: i64,
    pub llm_calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub last: Option<VersionRecord>,
}

/// How many of something there are (a section's learnings, an event's injections); printed as
/// the `["name", count]` pair it always was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub name: String,
    pub count: i64,
}

impl Serialize for Tally {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        (&self.name, self.count).serialize(s)
    }
}

/// What to do with one item a task taught.
#[derive(Debug, Clone)]
pub enum Taught {
    /// A new learning.
    New(Box<NewLearning>),
    /// It says what this learning says: count the task as a confirmation.
    Confirms(i64),
}

/// A task or Claude Code session that taught or re-confirmed a learning.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub task: Option<TaskId>,
    pub session: Option<String>,
    /// `taught` or `confirmed`.
    pub kind: String,
    pub at: String,
}

/// One line of a learning's evolution log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearningEvent {
    pub at: String,
    /// `taught`, `confirmed`, `archived`, `tier 2`, …
    pub event: String,
    pub detail: Option<String>,
}

/// A learning given to a task, and how (`task:file`, `task:relevant`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    pub learning: i64,
    pub event: String,
}

/// A version of learnings.md gza wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearningsVersion {
    pub id: i64,
    pub content: String,
}

/// A learning with how many times it was given to an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectionCount {
    pub id: i64,
    pub text: String,
    /// Given to tasks and sessions outside A/B runs: the learning's use, as `learnings show`
    /// counts it.
    pub injected: i64,
    /// Given to A/B runs (`gza ab`): experiments, counted apart.
    pub in_ab_runs: i64,
}

/// How far past the window and what is owed a regeneration looks for tasks still owed an
/// extraction (see [`Store::learnings_scope`]).
pub const OWED_REACH: i64 = 100;

/// What the ranker reads of an active learning.
#[derive(Debug, Clone)]
pub struct RankRow {
    pub id: i64,
    pub section: String,
    pub text: String,
    pub keywords: Vec<String>,
    pub applies_when: Vec<String>,
    pub priority: Priority,
    pub confidence: f64,
    /// A draft (usable at once unless `learnings.inject_drafts` is off), not yet active.
    pub draft: bool,
}

/// What ranking reads in one read transaction: the generation the rows and vectors are of
/// (migration V38), every learning in use and its stored vector for one model.
#[derive(Debug, Default)]
pub struct RankSnapshot {
    pub generation: i64,
    /// The database's random nonce (`hook_state`, V27): what an index built from it names, so
    /// an index file this database did not build (one a repository brought) is never used.
    pub nonce: String,
    pub rows: Vec<RankRow>,
    pub vectors: std::collections::HashMap<i64, Vec<f32>>,
}

/// What changed for ranking since a generation: rows changed (those in use, and the ids of all
/// of them, in use or not) and learnings deleted.
#[derive(Debug, Default)]
pub struct RankChanges {
    pub generation: i64,
    /// The database's nonce, as in [`RankSnapshot::nonce`].
    pub nonce: String,
    /// Changed learnings still in use (drafts included: the caller filters).
    pub rows: Vec<RankRow>,
    /// Every learning changed or deleted since: what an older index holds of them is stale.
    pub stale: std::collections::HashSet<i64>,
}

const RANK_COLUMNS: &str =
    "id, section, text, keywords, applies_when, priority, confidence, status = 'draft'";

fn rank_row(r: &Row) -> DbResult<RankRow> {
    Ok(RankRow {
        id: r.get(0)?,
        section: r.get(1)?,
        text: r.get(2)?,
        keywords: json_list(r.get(3)?),
        applies_when: json_list(r.get(4)?),
        priority: Priority::parse(&r.get::<String>(5)?).unwrap_or_default(),
        confidence: r.get(6)?,
        draft: r.get(7)?,
    })
}

/// A change to a learning's content.
#[derive(Debug, Clone, Default)]
pub struct LearningEdit {
    /// New trigger conditions and checklist.
    pub triggers: Option<(gza_core::learning::Triggers, Vec<String>)>,
    pub text: Option<String>,
    pub section: Option<String>,
    pub priority: Option<Priority>,
    pub keywords: Option<Vec<String>>,
    /// New "applies when" hints (replacing the old ones; empty removes them). They are embedded
    /// with the text, so a change drops the stored vector, as a change of text does.
    pub applies_when: Option<Vec<String>>,
}

impl LearningEdit {
    /// The edit with the secrets of its text fields redacted (see [`NewLearning::redacted`]).
    fn redacted(&self) -> LearningEdit {
        let redact = |t: &String| gza_core::redact::redact_secrets(t);
        LearningEdit {
            triggers: self
                .triggers
                .as_ref()
                .map(|(t, list)| (t.redacted(), list.iter().map(redact).collect())),
            text: self.text.as_ref().map(redact),
            section: self.section.as_ref().map(redact),
            priority: self.priority,
            keywords: self
                .keywords
                .as_ref()
                .map(|k| k.iter().map(redact).collect()),
            applies_when: self
                .applies_when
                .as_ref()
                .map(|w| w.iter().map(redact).collect()),
        }
    }
}

pub(super) const LEARNING_COLUMNS: &str = "l.id, l.section, l.text, l.insight, l.example, l.keywords, l.applies_when, \
     l.confidence, l.priority, l.status, l.status_reason, l.status_changed_at, l.origin, l.created_at, \
     l.updated_at, l.confirmed_at, l.kind, l.triggers, l.checklist, \
     (SELECT COUNT(*) FROM learning_sources s WHERE s.learning_id = l.id), \
     COALESCE((SELECT c.injected FROM learning_injection_counts c WHERE c.learning_id = l.id), 0), \
     l.tier, l.tier_level, l.evidence, l.validated_at, l.stale_reason, l.quarantine_reason";

/// [`LEARNING_COLUMNS`] with 0 for the two counts (support, injected).
const LEARNING_COLUMNS_UNCOUNTED: &str = "l.id, l.section, l.text, l.insight, l.example, l.keywords, l.applies_when, \
     l.confidence, l.priority, l.status, l.status_reason, l.status_changed_at, l.origin, l.created_at, \
     l.updated_at, l.confirmed_at, l.kind, l.triggers, l.checklist, CAST(0 AS BIGINT), CAST(0 AS BIGINT), \
     l.tier, l.tier_level, l.evidence, l.validated_at, l.stale_reason, l.quarantine_reason";

/// Build the injection and outcome counters (V52/V22) from the injections, whatever they held: what the
/// migrations' backfill does, for a bulk load that kept the triggers off (`gza db copy`).
pub(crate) fn build_injection_counts(db: &Db) -> DbResult<()> {
    db.batch(
        "DELETE FROM learning_injection_counts; DELETE FROM injection_event_counts;
         INSERT INTO learning_injection_counts (learning_id, given, injected)
         SELECT i.learning_id, COUNT(*),
                COUNT(CASE WHEN NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = i.task_id) THEN 1 END)
         FROM learning_injections i GROUP BY i.learning_id;
         INSERT INTO injection_event_counts (event, n)
         SELECT event, COUNT(*) FROM learning_injections GROUP BY event;
         DELETE FROM learning_outcome_counts;
         INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
         SELECT g.learning_id, t.status, COALESCE(t.failure_reason, ''), COUNT(*)
         FROM (SELECT DISTINCT learning_id, task_id FROM learning_injections WHERE task_id IS NOT NULL) g
         JOIN tasks t ON t.id = g.task_id
         WHERE t.status IN ('completed', 'failed')
           AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id)
         GROUP BY g.learning_id, t.status, COALESCE(t.failure_reason, '');",
    )
}

/// Add injections of `ids` with `event`, in the order given, each kept when its learning still
/// exists: one statement for all of them (a round trip per learning was most of what a task's
/// injections cost on PostgreSQL), the ids as a JSON array.
fn insert_injections(
    tx: &Tx,
    task_id: Option<TaskId>,
    session_id: Option<&str>,
    event: &str,
    ids: &[i64],
    now: &str,
) -> DbResult<()> {
    let json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
    let session_id = session_id.map(stored_session);
    let session_id = session_id.as_deref();
    let given = match tx.backend() {
        Backend::Sqlite => "SELECT CAST(value AS INTEGER) AS learning, key AS n FROM json_each(?1)",
        Backend::Postgres => {
            "SELECT CAST(value AS BIGINT) AS learning, n \
             FROM json_array_elements_text(CAST(?1 AS JSON)) WITH ORDINALITY AS j(value, n)"
        }
    };
    let sql = format!(
        "INSERT INTO learning_injections (learning_id, task_id, session_id, event, injected_at) \
         SELECT g.learning, ?2, ?3, ?4, ?5 FROM ({given}) AS g \
         WHERE EXISTS (SELECT 1 FROM learnings WHERE id = g.learning) ORDER BY g.n"
    );
    tx.execute(&sql, params![json, task_id, session_id, event, now])
        .map(|_| ())
}

/// A session id as it is stored and looked up. It comes from a hook's (or an agent's) input as
/// is, so one that carries a secret would be stored and shown with it; redacted, it is kept and
/// matched the same way everywhere, and a real one (a UUID) is unchanged.
pub(crate) fn stored_session(session: &str) -> std::borrow::Cow<'_, str> {
    gza_core::redact::redact(session)
}

/// Learnings that may be given to an agent: not quarantined.
const NOT_QUARANTINED: &str = "l.quarantine_reason IS NULL";

fn json_list(text: String) -> Vec<String> {
    if text == "[]" {
        return Vec::new();
    }
    serde_json::from_str(&text).unwrap_or_default()
}

pub(super) fn learning_from_row(r: &Row) -> DbResult<Learning> {
    Ok(Learning {
        id: r.get(0)?,
        section: r.get(1)?,
        text: r.get(2)?,
        insight: r.get(3)?,
        example: r.get(4)?,
        keywords: json_list(r.get(5)?),
        applies_when: json_list(r.get(6)?),
        confidence: r.get(7)?,
        priority: Priority::parse(&r.get::<String>(8)?).unwrap_or_default(),
        status: Status::parse(&r.get::<String>(9)?).unwrap_or(Status::Active),
        status_reason: r.get(10)?,
        status_changed_at: r.get(11)?,
        origin: Origin::parse(&r.get::<String>(12)?).unwrap_or(Origin::User),
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
        confirmed_at: r.get(15)?,
        kind: r.get(16)?,
        triggers: serde_json::from_str(&r.get::<String>(17)?).unwrap_or_default(),
        checklist: json_list(r.get(18)?),
        support: r.get(19)?,
        injected: r.get(20)?,
        lifecycle: gza_core::learning::Lifecycle {
            tier: r.get(21)?,
            tier_level: r.get(22)?,
            evidence: r
                .get::<Option<String>>(23)?
                .and_then(|e| serde_json::from_str(&e).ok()),
            validated_at: r.get(24)?,
            stale_reason: r.get(25)?,
            quarantine_reason: r.get(26)?,
        },
    })
}

/// Add a line to a learning's evolution log.
pub(super) fn log_event(
    tx: &Tx,
    id: i64,
    event: &str,
    detail: Option<&str>,
    now: &str,
) -> DbResult<()> {
    tx.execute(
        "INSERT INTO learning_events (learning_id, at, event, detail) VALUES (?1, ?2, ?3, ?4)",
        params![id, now, event, detail],
    )
    .map(|_| ())
}

/// A task (`source.0`) or session (`source.1`) re-confirms learning `id`: its source is
/// recorded and, the first time, its confidence raised and its confirmation dated now.
fn confirm(tx: &Tx, id: i64, source: (Option<i64>, Option<&str>), now: &str) -> DbResult<()> {
    let added = tx.execute(
        "INSERT INTO learning_sources (learning_id, task_id, session_id, kind, created_at) \
         VALUES (?1, ?2, ?3, 'confirmed', ?4) ON CONFLICT DO NOTHING",
        params![id, source.0, source.1, now],
    )?;
    if added > 0 {
        let confidence: f64 = tx.query_row(
            "SELECT confidence FROM learnings WHERE id = ?1",
            params![id],
            |r| r.get(0),
        )?;
        tx.execute(
            "UPDATE learnings SET confidence = ?2, confirmed_at = ?3 WHERE id = ?1",
            params![id, confirmed_confidence(confidence), now],
        )?;
        let by = match source {
            (Some(task), _) => format!("task {task}"),
            (None, Some(session)) => format!("session {session}"),
            (None, None) => "unknown".to_string(),
        };
        log_event(tx, id, "confirmed", Some(&by), now)?;
    }
    Ok(())
}

pub(super) fn insert_learning(tx: &Tx, l: &NewLearning, now: &str) -> DbResult<i64> {
    insert_learning_from(tx, l, l.origin.as_str(), now)
}

/// [`insert_learning`], its `created` event saying where it came from (`created`).
fn insert_learning_from(tx: &Tx, l: &NewLearning, created: &str, now: &str) -> DbResult<i64> {
    let l = &l.redacted();
    let id: i64 = tx.one(
        "INSERT INTO learnings (section, text, insight, example, keywords, applies_when, confidence, \
         priority, origin, created_at, updated_at, confirmed_at, kind, triggers, checklist, status) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?10, ?11, ?12, ?13, ?14) RETURNING id",
        params![
            l.section,
            l.text,
            l.insight,
            l.example,
            serde_json::to_string(&l.keywords).unwrap_or_else(|_| "[]".into()),
            serde_json::to_string(&l.applies_when).unwrap_or_else(|_| "[]".into()),
            l.confidence.clamp(0.0, 1.0),
            l.priority.as_str(),
            l.origin.as_str(),
            now,
            l.kind,
            serde_json::to_string(&l.triggers).unwrap_or_else(|_| "{}".into()),
            serde_json::to_string(&l.checklist).unwrap_or_else(|_| "[]".into()),
            l.status.as_str(),
        ],)?;
    log_event(tx, id, "created", Some(created), now)?;
    let model = l
        .model_risk
        .as_deref()
        .map(gza_core::quarantine::model_reason)
        .or_else(|| l.neighbour_risk.clone());
    hold_if_hostile(tx, id, model, true, now)?;
    Ok(id)
}

/// The columns [`fields_from_row`] reads, after the id.
const PROMPT_FIELDS: &str = "text, insight, example, keywords, applies_when, triggers, checklist";

/// Every field of a stored learning that can reach a prompt, named as a person reads it.
fn prompt_fields(tx: &Tx, id: i64) -> DbResult<Vec<(&'static str, String)>> {
    tx.query_row(
        &format!("SELECT id, {PROMPT_FIELDS} FROM learnings WHERE id = ?1"),
        params![id],
        fields_from_row,
    )
}

/// The prompt fields of a row of `SELECT id, {PROMPT_FIELDS}`.
fn fields_from_row(r: &Row) -> DbResult<Vec<(&'static str, String)>> {
    let mut fields = vec![("text", r.get::<String>(1)?)];
    if let Some(insight) = r.get::<Option<String>>(2)? {
        fields.push(("description", insight));
    }
    if let Some(example) = r.get::<Option<String>>(3)? {
        fields.push(("example", example));
    }
    for k in json_list(r.get(4)?) {
        fields.push(("keywords", k));
    }
    for w in json_list(r.get(5)?) {
        fields.push(("applies-when hints", w));
    }
    let triggers: gza_core::learning::Triggers =
        serde_json::from_str(&r.get::<String>(6)?).unwrap_or_default();
    for t in triggers
        .tools
        .into_iter()
        .chain(triggers.files)
        .chain(triggers.actions)
        .chain(triggers.contexts)
    {
        fields.push(("triggers", t));
    }
    for c in json_list(r.get(7)?) {
        fields.push(("checklist", c));
    }
    Ok(fields)
}

/// Hold a learning back when any field that reaches a prompt reads like an instruction to the
/// agent, when the extraction model judged it risky (`model`), or when it combines with a
/// learning in use into one (both are held then). A new learning that is held becomes a draft
/// (`new`); an edited one keeps its status. A hold is never lifted here: only a person's
/// `promote` lifts it.
fn hold_if_hostile(tx: &Tx, id: i64, model: Option<String>, new: bool, now: &str) -> DbResult<()> {
    let fields = prompt_fields(tx, id)?;
    let (reason, partners) = findings(tx, id, &fields)?;
    for (other, what) in &partners {
        let theirs = format!("together with {}, it {what}", gza_core::learning::label(id));
        hold(tx, *other, &theirs, false, now)?;
    }
    if let Some(reason) = reason.or(model) {
        hold(tx, id, &reason, new, now)?;
    }
    Ok(())
}

/// The learnings in use another one combines with into an attack, each with what the two do.
type Partners = Vec<(i64, &'static str)>;

/// The combination facts of every learning in use (not archived) that has any, read once.
fn facts_in_use(tx: &Tx) -> DbResult<Vec<(i64, gza_core::quarantine::combine::Facts)>> {
    let rows = tx.query_map(
        &format!(
            "SELECT id, {PROMPT_FIELDS} FROM learnings WHERE status <> 'archived' ORDER BY id"
        ),
        params![],
        |r| Ok((r.get::<i64>(0)?, fields_from_row(r)?)),
    )?;
    Ok(rows
        .into_iter()
        .map(|(id, fields)| (id, facts_of(&fields)))
        .filter(|(_, f)| !f.is_empty())
        .collect())
}

fn facts_of(fields: &[(&'static str, String)]) -> gza_core::quarantine::combine::Facts {
    let values: Vec<&str> = fields.iter().map(|(_, v)| v.as_str()).collect();
    gza_core::quarantine::combine::facts(&values)
}

/// What would hold learning `id` back if its prompt fields were `fields`: the reason (from the
/// fields alone or, failing that, from a learning in use it combines with), and every such
/// partner. Reads only; the learnings in use are read only when the fields have facts to
/// combine.
fn findings(
    tx: &Tx,
    id: i64,
    fields: &[(&'static str, String)],
) -> DbResult<(Option<String>, Partners)> {
    findings_among(tx, id, fields, &mut FactsInUse::default())
}

/// The combination facts of the learnings in use, for several checks in one transaction: read
/// the first time one needs them ([`facts_in_use`]), with what the transaction changed since
/// (or, in a dry run, would have changed) laid over them.
#[derive(Default)]
struct FactsInUse {
    read: Option<Vec<(i64, gza_core::quarantine::combine::Facts)>>,
    changed: Vec<(i64, gza_core::quarantine::combine::Facts)>,
}

impl FactsInUse {
    fn get(&mut self, tx: &Tx) -> DbResult<&[(i64, gza_core::quarantine::combine::Facts)]> {
        if self.read.is_none() {
            let mut read = facts_in_use(tx)?;
            for (id, facts) in &self.changed {
                read.retain(|(o, _)| o != id);
                read.push((*id, facts.clone()));
            }
            self.read = Some(read);
        }
        Ok(self.read.as_deref().unwrap_or_default())
    }

    /// Learning `id`'s fields are now `fields`.
    fn set(&mut self, id: i64, fields: &[(&'static str, String)]) {
        let facts = facts_of(fields);
        for list in self.read.iter_mut().chain([&mut self.changed]) {
            list.retain(|(o, _)| *o != id);
            if !facts.is_empty() {
                list.push((id, facts.clone()));
            }
        }
    }
}

/// [`findings`], with the facts of the learnings in use taken from `others`.
fn findings_among(
    tx: &Tx,
    id: i64,
    fields: &[(&'static str, String)],
    others: &mut FactsInUse,
) -> DbResult<(Option<String>, Partners)> {
    let mut reason = gza_core::quarantine::assess(fields.iter().map(|(n, v)| (*n, v.as_str())));
    let facts = facts_of(fields);
    let mut partners = Vec::new();
    if !facts.is_empty() {
        if let Some(what) = gza_core::quarantine::combine::together(&facts, &facts) {
            reason.get_or_insert(format!("it {what}, across its fields"));
        }
        // Every other learning in use, in one query (not one per learning: over a network a
        // round trip each would cost more than the check).
        for (other, theirs) in others.get(tx)? {
            if *other == id {
                continue;
            }
            if let Some(what) = gza_core::quarantine::combine::together(&facts, theirs) {
                partners.push((*other, what));
            }
        }
    }
    for (other, what) in &partners {
        reason.get_or_insert(format!(
            "together with {}, it {what}",
            gza_core::learning::label(*other)
        ));
    }
    Ok((reason, partners))
}

/// What [`Store::write_hints`] did with one learning's hints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "why", rename_all = "snake_case")]
pub enum HintsOutcome {
    /// Stored (or, in a dry run, would be).
    Written,
    /// Not stored: the learning is gone, archived, held, or has hints by now.
    Changed,
    /// Not stored: with them the learning would be held back, for this reason.
    Held(String),
}

/// Hints as they are stored: secrets redacted, one line each, empty ones left out.
fn redacted_hints(list: &[String]) -> Vec<String> {
    list.iter()
        .map(|h| gza_core::redact::one_clean_line(&gza_core::redact::redact_secrets(h)))
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect()
}

/// Whether `hints` may be stored on learning `id` now ([`Store::write_hints`]); when they
/// may, also the learning's prompt fields with them.
fn hints_outcome(
    tx: &Tx,
    id: i64,
    hints: &[String],
    others: &mut FactsInUse,
) -> DbResult<(HintsOutcome, Vec<(&'static str, String)>)> {
    let now: Option<(String, Option<String>, String)> = tx.query_opt(
        "SELECT status, quarantine_reason, applies_when FROM learnings WHERE id = ?1",
        params![id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let Some((status, held, present)) = now else {
        return Ok((HintsOutcome::Changed, Vec::new()));
    };
    if status == Status::Archived.as_str() || held.is_some() || !json_list(present).is_empty() {
        return Ok((HintsOutcome::Changed, Vec::new()));
    }
    let mut fields = prompt_fields(tx, id)?;
    fields.extend(
        redacted_hints(hints)
            .into_iter()
            .map(|h| ("applies-when hints", h)),
    );
    let (reason, _) = findings_among(tx, id, &fields, others)?;
    Ok(match reason {
        Some(why) => (HintsOutcome::Held(why), Vec::new()),
        None => (HintsOutcome::Written, fields),
    })
}

fn hold(tx: &Tx, id: i64, reason: &str, draft: bool, now: &str) -> DbResult<()> {
    // The learned layer's reason says least: a rule's or a partner's found later replaces it.
    let learned = gza_core::quarantine::learned_reason();
    let changed = tx.execute(
        "UPDATE learnings SET quarantine_reason = ?2 WHERE id = ?1 AND (quarantine_reason IS NULL \
         OR (substr(quarantine_reason, 1, length(?3)) = ?3 AND substr(?2, 1, length(?3)) <> ?3))",
        params![id, reason, learned],
    )?;
    if changed > 0 {
        log_event(tx, id, "quarantined", Some(reason), now)?;
    }
    if draft {
        tx.execute(
            "UPDATE learnings SET status = 'draft' WHERE id = ?1 AND status = 'active'",
            params![id],
        )?;
    }
    Ok(())
}

pub(super) fn set_status(
    tx: &Tx,
    id: i64,
    status: Status,
    reason: Option<&str>,
    now: &str,
) -> DbResult<bool> {
    let changed = tx.execute(
        "UPDATE learnings SET status = ?2, status_reason = ?3, status_changed_at = ?4 \
         WHERE id = ?1 AND status <> ?2",
        params![id, status.as_str(), reason, now],
    )?;
    if changed > 0 {
        log_event(tx, id, status.as_str(), reason, now)?;
        if status == Status::Active {
            // A person brought it back: that re-confirms it, so it has not decayed (seed 000).
            tx.execute(
                "UPDATE learnings SET confirmed_at = ?2 WHERE id = ?1",
                params![id, now],
            )?;
        }
    }
    Ok(changed > 0)
}

/// Set `column` of learning `id` to `value` when it differs, logging the change as an edit of
/// `what`. A column the embedding is made from (`embedded`: the text, the hints) drops the
/// embedding, which `rank::embed_learning` makes again.
fn edit_column(
    tx: &Tx,
    id: i64,
    column: &'static str,
    value: &str,
    what: &str,
    embedded: bool,
    now: &str,
) -> DbResult<()> {
    let changed = tx.execute(
        &format!(
            "UPDATE learnings SET {column} = ?2, updated_at = ?3 WHERE id = ?1 AND {column} <> ?2"
        ),
        params![id, value, now],
    )?;
    if changed > 0 {
        if embedded {
            tx.execute(
                "DELETE FROM learning_embeddings WHERE learning_id = ?1",
                params![id],
            )?;
        }
        log_event(tx, id, "edited", Some(what), now)?;
    }
    Ok(())
}

fn apply_edit(tx: &Tx, id: i64, edit: &LearningEdit, now: &str) -> DbResult<()> {
    let edit = &edit.redacted();
    if let Some(text) = &edit.text {
        edit_column(tx, id, "text", text, "text", true, now)?;
    }
    if let Some(section) = &edit.section {
        let what = format!("section: {section}");
        edit_column(tx, id, "section", section, &what, false, now)?;
    }
    if let Some(priority) = edit.priority {
        let what = format!("priority: {priority}");
        edit_column(tx, id, "priority", priority.as_str(), &what, false, now)?;
    }
    if let Some((triggers, checklist)) = &edit.triggers {
        tx.execute(
            "UPDATE learnings SET triggers = ?2, checklist = ?3, updated_at = ?4 WHERE id = ?1",
            params![
                id,
                serde_json::to_string(triggers).unwrap_or_else(|_| "{}".into()),
                serde_json::to_string(checklist).unwrap_or_else(|_| "[]".into()),
                now
            ],
        )?;
        log_event(tx, id, "edited", Some("triggers"), now)?;
    }
    if let Some(keywords) = &edit.keywords {
        tx.execute(
            "UPDATE learnings SET keywords = ?2, updated_at = ?3 WHERE id = ?1",
            params![
                id,
                serde_json::to_string(keywords).unwrap_or_else(|_| "[]".into()),
                now
            ],
        )?;
    }
    if let Some(hints) = &edit.applies_when {
        let hints = serde_json::to_string(hints).unwrap_or_else(|_| "[]".into());
        edit_column(tx, id, "applies_when", &hints, "applies when", true, now)?;
    }
    hold_if_hostile(tx, id, None, false, now)
}

/// The `created` event's detail of a learning taken from a learnings.md that gza did not write
/// for this database (see [`FileEdits::foreign`]): `learnings show ID` names where it came from.
pub const FROM_REPOSITORY_FILE: &str =
    "repository file: .gza/learnings.md, not one gza wrote for this database";

/// Edits found in learnings.md: a person's, when it is the file gza wrote for this database
/// (compared with that version); only new lines, and nobody's, when it is not.
#[derive(Debug, Clone, Default)]
pub struct FileEdits {
    /// Lines without a known id (section, text): new user learnings, or with `foreign` new
    /// agent learnings.
    pub added: Vec<(String, String)>,
    /// Lines whose text or section changed.
    pub edited: Vec<(i64, LearningEdit)>,
    /// Ids whose lines were deleted.
    pub deleted: Vec<i64>,
    /// Archived ids whose lines the person put back.
    pub restored: Vec<i64>,
    /// The file is not one gza wrote for this database (a cloned repository's committed file,
    /// another person's or another database's pulled in by git): what it says is the
    /// repository's, not the person's. Its new lines are stored with origin `agent` (the
    /// schema has no origin for a repository) and [`FROM_REPOSITORY_FILE`] in their `created`
    /// event, so they get none of a person's privileges; it edits, archives or restores
    /// nothing (the fields above are empty, and ignored if not). `Some`: it is such a file,
    /// and what to log about it when it is taken in.
    pub foreign: Option<String>,
}

impl FileEdits {
    /// Nothing to take in (a foreign file with no new line is still rewritten: see
    /// [`FileEdits::foreign`]).
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.edited.is_empty()
            && self.deleted.is_empty()
            && self.restored.is_empty()
    }
}

impl Store {
    /// One learning by id.
    pub fn learning(&self, id: i64) -> Result<Option<Learning>> {
        self.db
            .query_opt(
                &format!("SELECT {LEARNING_COLUMNS} FROM learnings l WHERE l.id = ?1"),
                params![id],
                learning_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// The learnings of `ids` that exist, by id, in one statement (for showing ranked hits
    /// without a round trip each).
    pub fn learnings_by_ids(
        &self,
        ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, Learning>> {
        if ids.is_empty() {
            return Ok(std::collections::HashMap::new());
        }
        let json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let sql = format!(
            "SELECT {LEARNING_COLUMNS} FROM learnings l WHERE l.id IN ({})",
            self.backend().json_ids("?1")
        );
        let found = self
            .db
            .query_map(&sql, params![json], learning_from_row)
            .map_err(|e| self.err(e))?;
        Ok(found.into_iter().map(|l| (l.id, l)).collect())
    }

    /// Learnings, oldest first: active ones and drafts, and archived ones too with `archived`.
    pub fn learnings(&self, archived: bool) -> Result<Vec<Learning>> {
        self.every_learning(LEARNING_COLUMNS, archived)
    }

    /// [`Store::learnings`] without the two counts that cost a look-up in other tables per
    /// learning: `support` and `injected` are 0 in what it returns. For the callers that read
    /// every learning for its text, status and tier alone (validation, and telling a new
    /// learning from the known ones at a regeneration), where those look-ups were most of the
    /// read at 10,000 learnings.
    pub fn learnings_uncounted(&self, archived: bool) -> Result<Vec<Learning>> {
        self.every_learning(LEARNING_COLUMNS_UNCOUNTED, archived)
    }

    /// The archived learnings (uncounted, as [`Store::learnings_uncounted`]), oldest first: a
    /// regeneration compares what it is taught with them too (an archived learning is
    /// confirmed, never taught again), though ranking never reads them.
    pub fn archived_learnings(&self) -> Result<Vec<Learning>> {
        let sql = format!(
            "SELECT {LEARNING_COLUMNS_UNCOUNTED} FROM learnings l WHERE l.status = 'archived' ORDER BY l.id"
        );
        self.db
            .query_map(&sql, params![], learning_from_row)
            .map_err(|e| self.err(e))
    }

    /// Every learning read with `columns` (one of the column lists `learning_from_row` reads),
    /// oldest first; archived ones only with `archived`.
    fn every_learning(&self, columns: &str, archived: bool) -> Result<Vec<Learning>> {
        let sql = format!(
            "SELECT {columns} FROM learnings l {} ORDER BY l.id",
            if archived {
                ""
            } else {
                "WHERE l.status <> 'archived'"
            }
        );
        self.db
            .query_map(&sql, params![], learning_from_row)
            .map_err(|e| self.err(e))
    }

    /// Learnings stored after learning `id` (any status), oldest first: what a caller that read
    /// every learning up to `id` lacks, read by the primary key alone.
    pub fn learnings_after(&self, id: i64) -> Result<Vec<Learning>> {
        let sql =
            format!("SELECT {LEARNING_COLUMNS} FROM learnings l WHERE l.id > ?1 ORDER BY l.id");
        self.db
            .query_map(&sql, params![id], learning_from_row)
            .map_err(|e| self.err(e))
    }

    /// [`Store::learnings_after`], at most `limit` of them (the oldest).
    pub fn learnings_after_at_most(&self, id: i64, limit: usize) -> Result<Vec<Learning>> {
        let sql = format!(
            "SELECT {LEARNING_COLUMNS} FROM learnings l WHERE l.id > ?1 ORDER BY l.id LIMIT ?2"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db
            .query_map(&sql, params![id, limit], learning_from_row)
            .map_err(|e| self.err(e))
    }

    /// Learnings in use, CRITICAL ones first: active, plus drafts when `drafts` is set.
    pub fn learnings_in_use(&self, drafts: bool) -> Result<Vec<Learning>> {
        let sql = format!(
            "SELECT {LEARNING_COLUMNS} FROM learnings l WHERE l.status IN ('active', ?1) AND {NOT_QUARANTINED} \
             ORDER BY CASE l.priority WHEN 'CRITICAL' THEN 0 WHEN 'HIGH' THEN 1 WHEN 'MEDIUM' THEN 2 ELSE 3 END, l.id"
        );
        self.db
            .query_map(
                &sql,
                params![if drafts { "draft" } else { "active" }],
                learning_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// How many drafts await review.
    pub fn draft_count(&self) -> Result<i64> {
        self.db
            .query_row(
                "SELECT COUNT(*) FROM learnings WHERE status = 'draft'",
                params![],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Which of `ids` were already given to the session.
    pub fn injected_in_session(&self, session: &str) -> Result<std::collections::HashSet<i64>> {
        self.db
            .query_map(
                "SELECT DISTINCT learning_id FROM learning_injections WHERE session_id = ?1 AND session_id IS NOT NULL",
                params![stored_session(session).as_ref()],
                |r| r.get(0),)
            .map(|ids: Vec<i64>| ids.into_iter().collect())
            .map_err(|e| self.err(e))
    }

    /// Store learnings a Claude Code session taught, skipping any whose text is already known
    /// (in any status); returns the new ids.
    pub fn add_session_learnings(
        &self,
        session: &str,
        learnings: &[NewLearning],
    ) -> Result<Vec<i64>> {
        let session = stored_session(session);
        self.add_unknown_learnings(
            learnings,
            "session_id",
            &session.as_ref(),
            &format!("session {session}"),
        )
    }

    /// Store each of `learnings` whose text is not known yet (in any status), taught by the
    /// source in `source_column` (`task_id` or `session_id`); returns the new ids.
    pub(super) fn add_unknown_learnings(
        &self,
        learnings: &[NewLearning],
        source_column: &str,
        source: &dyn ToParam,
        taught_by: &str,
    ) -> Result<Vec<i64>> {
        let add_source = format!(
            "INSERT INTO learning_sources (learning_id, {source_column}, kind, created_at) \
             VALUES (?1, ?2, 'taught', ?3) ON CONFLICT DO NOTHING"
        );
        self.immediate(|tx| {
            let now = now_timestamp();
            let mut ids = Vec::new();
            for l in learnings {
                let known: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM learnings WHERE text = ?1)",
                    params![&l.text],
                    |r| r.get(0),
                )?;
                if known {
                    continue;
                }
                let id = insert_learning(tx, l, &now)?;
                tx.execute(&add_source, params![id, source, now])?;
                log_event(tx, id, "taught", Some(taught_by), &now)?;
                ids.push(id);
            }
            Ok(ids)
        })
    }

    /// Whether an extraction model has read this session.
    pub fn session_extracted(&self, session: &str) -> Result<bool> {
        self.db
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM session_extractions WHERE session_id = ?1)",
                params![stored_session(session).as_ref()],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Mark a session as read by an extraction model (false: another process got there first).
    pub fn claim_session_extraction(
        &self,
        session: &str,
        provider: &str,
        model: &str,
    ) -> Result<bool> {
        self.immediate(|tx| {
            let n = tx.execute(
                "INSERT INTO session_extractions (session_id, provider, model, extracted_at) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                params![
                    stored_session(session).as_ref(),
                    provider,
                    model,
                    now_timestamp()
                ],
            )?;
            Ok(n > 0)
        })
    }

    /// Record what a session extraction spent.
    pub fn finish_session_extraction(&self, session: &str, tokens: (i64, i64)) -> Result<()> {
        self.db
            .execute(
                "UPDATE session_extractions SET input_tokens = ?2, output_tokens = ?3 WHERE session_id = ?1",
                params![stored_session(session).as_ref(), tokens.0, tokens.1],)
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Every active learning (and draft, with `drafts`), as the ranker reads it.
    /// (The table is scanned in id order: nearly every learning is in use, so a status index
    /// would only add a seek and a sort per row.)
    pub fn rank_rows(&self, drafts: bool) -> Result<Vec<RankRow>> {
        self.db
            .query_map(
                &format!(
                    "SELECT {RANK_COLUMNS} FROM learnings NOT INDEXED \
                     WHERE status IN ('active', ?1) AND quarantine_reason IS NULL ORDER BY id"
                ),
                params![if drafts { "draft" } else { "active" }],
                rank_row,
            )
            .map_err(|e| self.err(e))
    }

    /// The learnings `ids` that are in use (active or draft), as the ranker reads them, in id
    /// order, by primary-key lookups in one statement: what a ranker needs to embed learnings
    /// its index answers for without reading the whole table.
    pub fn rank_rows_of(&self, ids: &[i64]) -> Result<Vec<RankRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let sql = format!(
            "SELECT {RANK_COLUMNS} FROM learnings WHERE id IN ({}) \
             AND status IN ('active', 'draft') AND quarantine_reason IS NULL ORDER BY id",
            self.backend().json_ids("?1")
        );
        self.db
            .query_map(&sql, params![json], rank_row)
            .map_err(|e| self.err(e))
    }

    /// The ranking generation now (migration V38): it moves on with every change ranking sees.
    pub fn ranking_generation(&self) -> Result<i64> {
        self.db
            .one(
                "SELECT generation FROM learnings_generation WHERE id = 1",
                params![],
            )
            .map_err(|e| self.err(e))
    }

    /// The ranking generation and the database's nonce, in one read.
    fn ranking_stamp(&self) -> Result<(i64, String)> {
        self.db
            .query_row(
                "SELECT g.generation, COALESCE((SELECT nonce FROM hook_state WHERE id = 1), '') \
                 FROM learnings_generation g WHERE g.id = 1",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))
    }

    /// Every learning in use (drafts included) and, with `model`, its stored vector, with the
    /// generation they are of, read in one transaction (what the ranking index is built from).
    pub fn rank_snapshot(&self, model: Option<&str>) -> Result<RankSnapshot> {
        let tx = self.db.read_transaction().map_err(|e| self.err(e))?;
        let (generation, nonce) = self.ranking_stamp()?;
        let rows = self.rank_rows(true)?;
        let vectors = match model {
            Some(m) => self.learning_embeddings(m)?.into_iter().collect(),
            None => Default::default(),
        };
        tx.commit().map_err(|e| self.err(e))?;
        Ok(RankSnapshot {
            generation,
            nonce,
            rows,
            vectors,
        })
    }

    /// What changed for ranking after `generation`, in one transaction: the rows changed (those
    /// in use), and the ids of every learning changed or deleted since. Its cost follows the
    /// changes, not the table (an index on `rank_generation`).
    pub fn rank_changes_since(&self, generation: i64) -> Result<RankChanges> {
        let tx = self.db.read_transaction().map_err(|e| self.err(e))?;
        let (now, nonce) = self.ranking_stamp()?;
        let mut out = RankChanges {
            generation: now,
            nonce,
            ..RankChanges::default()
        };
        if now != generation {
            let rows = self
                .db
                .query_map(
                    &format!(
                        "SELECT {RANK_COLUMNS}, status IN ('active', 'draft') AND quarantine_reason IS NULL \
                         FROM learnings WHERE rank_generation > ?1 ORDER BY id"
                    ),
                    params![generation],
                    |r| Ok((rank_row(r)?, r.get::<bool>(8)?)),
                )
                .map_err(|e| self.err(e))?;
            for (row, in_use) in rows {
                out.stale.insert(row.id);
                if in_use {
                    out.rows.push(row);
                }
            }
            let removed: Vec<i64> = self
                .db
                .query_map(
                    "SELECT learning_id FROM learnings_removed WHERE generation > ?1",
                    params![generation],
                    |r| r.get(0),
                )
                .map_err(|e| self.err(e))?;
            out.stale.extend(removed);
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// Forget deletions at or before `generation` (an index of that generation has seen them).
    pub fn forget_removed(&self, generation: i64) -> Result<()> {
        self.db
            .execute(
                "DELETE FROM learnings_removed WHERE generation <= ?1",
                params![generation],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Active learnings that belong in the file: taught or confirmed by one of `task_ids`, by a
    /// Claude Code session since the oldest of those tasks was created (any session when there
    /// are none), written by a person, or taken from a learnings.md gza did not write for this
    /// database (no task taught those: left out, a teammate's line would vanish from the shared
    /// file at the next rewrite, though it is a record).
    pub fn learnings_in_window(&self, task_ids: &[TaskId]) -> Result<Vec<Learning>> {
        let ids = serde_json::to_string(task_ids).unwrap_or_else(|_| "[]".into());
        let in_ids = self.backend().json_ids("?1");
        let sql = format!(
            "SELECT {LEARNING_COLUMNS} FROM learnings l WHERE l.status = 'active' AND {NOT_QUARANTINED} AND (l.origin = 'user' \
             OR (l.origin = 'agent' AND EXISTS (SELECT 1 FROM learning_events e WHERE e.learning_id = l.id \
                 AND e.event = 'created' AND e.detail = ?2)) \
             OR EXISTS (SELECT 1 FROM learning_sources s WHERE s.learning_id = l.id \
                        AND (s.task_id IN ({in_ids}) \
                             OR (s.session_id IS NOT NULL AND s.created_at >= COALESCE( \
                                 (SELECT MIN(t.created_at) FROM tasks t WHERE t.id IN ({in_ids})), ''))))) \
             ORDER BY l.id"
        );
        self.db
            .query_map(&sql, params![ids, FROM_REPOSITORY_FILE], learning_from_row)
            .map_err(|e| self.err(e))
    }

    /// The newest task among each learning's sources, for ranking by recency. A learning taught
    /// only by Claude Code sessions has no task and is not listed.
    pub fn latest_sources(&self) -> Result<std::collections::HashMap<i64, TaskId>> {
        self.db
            .query_map(
                "SELECT learning_id, MAX(task_id) FROM learning_sources WHERE task_id IS NOT NULL \
                 GROUP BY learning_id",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map(|rows: Vec<(i64, TaskId)>| rows.into_iter().collect())
            .map_err(|e| self.err(e))
    }

    /// [`Store::latest_sources`] of the learnings `ids` alone: what a regeneration ranks the
    /// window's learnings by, read for those (a file shows a few dozen) rather than for every
    /// learning stored.
    pub fn latest_sources_of(&self, ids: &[i64]) -> Result<std::collections::HashMap<i64, TaskId>> {
        if ids.is_empty() {
            return Ok(std::collections::HashMap::new());
        }
        let json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let sql = format!(
            "SELECT learning_id, MAX(task_id) FROM learning_sources \
             WHERE task_id IS NOT NULL AND learning_id IN ({}) GROUP BY learning_id",
            self.backend().json_ids("?1")
        );
        self.db
            .query_map(&sql, params![json], |r| Ok((r.get(0)?, r.get(1)?)))
            .map(|rows: Vec<(i64, TaskId)>| rows.into_iter().collect())
            .map_err(|e| self.err(e))
    }

    /// The tasks and sessions a learning came from, oldest first.
    pub fn learning_sources(&self, id: i64) -> Result<Vec<Source>> {
        self.db
            .query_map(
                "SELECT task_id, session_id, kind, created_at FROM learning_sources WHERE learning_id = ?1 \
                 ORDER BY created_at, rowid",
                params![id],
                |r| {
                Ok(Source {
                    task: r.get(0)?,
                    session: r.get(1)?,
                    kind: r.get(2)?,
                    at: r.get(3)?,
                })
            },)
            .map_err(|e| self.err(e))
    }

    /// A learning's evolution log, oldest first.
    pub fn learning_events(&self, id: i64) -> Result<Vec<LearningEvent>> {
        self.db
            .query_map(
                "SELECT at, event, detail FROM learning_events WHERE learning_id = ?1 ORDER BY id",
                params![id],
                |r| {
                    Ok(LearningEvent {
                        at: r.get(0)?,
                        event: r.get(1)?,
                        detail: r.get(2)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// Store a new learning; returns its id.
    pub fn add_learning(&self, learning: &NewLearning) -> Result<i64> {
        self.immediate(|tx| insert_learning(tx, learning, &now_timestamp()))
    }

    /// Change a learning's content.
    pub fn edit_learning(&self, id: i64, edit: &LearningEdit) -> Result<()> {
        self.immediate(|tx| apply_edit(tx, id, edit, &now_timestamp()))
    }

    /// Give learnings that have no "applies when" hints the ones an extraction model wrote
    /// (`gza learnings hint`), all in one transaction: every learning's hints are stored, or
    /// none (an error rolls the whole back). Each learning is checked again inside it: one that
    /// meanwhile gained hints, was archived or was held is left as it is
    /// ([`HintsOutcome::Changed`]); hints that, with the learning's other fields or with a
    /// learning in use, would hold it back (the quarantine, every layer of rules and
    /// combinations) are not stored ([`HintsOutcome::Held`]) and nothing is held. Each write is
    /// an `edited` event whose detail says where the hints came from (`source`). With `dry_run`
    /// nothing is written and the outcomes are what would be.
    pub fn write_hints(
        &self,
        hints: &[(i64, Vec<String>)],
        source: &str,
        dry_run: bool,
    ) -> Result<Vec<(i64, HintsOutcome)>> {
        let detail = gza_core::redact::one_clean_line(&format!("applies when, {source}"));
        self.immediate(|tx| {
            let now = now_timestamp();
            let mut outcomes = Vec::with_capacity(hints.len());
            // The facts of the learnings in use, read once for the batch (not once for each of
            // its learnings), and kept current as its hints are stored: a pair split over two
            // learnings of one batch is seen too.
            let mut others = FactsInUse::default();
            for (id, list) in hints {
                let (outcome, fields) = hints_outcome(tx, *id, list, &mut others)?;
                if outcome == HintsOutcome::Written {
                    if !dry_run {
                        let json = serde_json::to_string(&redacted_hints(list))
                            .unwrap_or_else(|_| "[]".into());
                        edit_column(tx, *id, "applies_when", &json, &detail, true, &now)?;
                    }
                    others.set(*id, &fields);
                }
                outcomes.push((*id, outcome));
            }
            Ok(outcomes)
        })
    }

    /// Archive or restore a learning; false when it already had that status.
    pub fn set_learning_status(
        &self,
        id: i64,
        status: Status,
        reason: Option<&str>,
    ) -> Result<bool> {
        self.immediate(|tx| set_status(tx, id, status, reason, &now_timestamp()))
    }

    /// Apply a person's edits to learnings.md in one transaction; returns the ids of added lines.
    /// A file gza did not write for this database ([`FileEdits::foreign`]) only adds learnings,
    /// none of them a person's.
    pub fn apply_file_edits(&self, edits: &FileEdits) -> Result<Vec<i64>> {
        let foreign = edits.foreign.is_some();
        let (origin, created) = if foreign {
            (Origin::Agent, FROM_REPOSITORY_FILE)
        } else {
            (Origin::User, Origin::User.as_str())
        };
        self.immediate(|tx| {
            let now = now_timestamp();
            let none = FileEdits::default();
            // A foreign file changes no record, whatever the caller found in it.
            let changes = if foreign { &none } else { edits };
            for (id, edit) in &changes.edited {
                apply_edit(tx, *id, edit, &now)?;
            }
            for id in &changes.deleted {
                set_status(
                    tx,
                    *id,
                    Status::Archived,
                    Some("deleted from learnings.md"),
                    &now,
                )?;
            }
            for id in &changes.restored {
                set_status(
                    tx,
                    *id,
                    Status::Active,
                    Some("put back in learnings.md"),
                    &now,
                )?;
            }
            let mut added = Vec::with_capacity(edits.added.len());
            for (section, text) in &edits.added {
                added.push(insert_learning_from(
                    tx,
                    &NewLearning::new(section, text, origin),
                    created,
                    &now,
                )?);
            }
            Ok(added)
        })
    }

    /// The last `window` completed tasks, and with them the last `owed` completed tasks not
    /// extracted yet (those counted since the last regeneration), newest first. The first
    /// `window` rows are the window.
    ///
    /// Tasks owed an extraction are looked for only among the newest `window + owed +`
    /// [`OWED_REACH`] completed tasks (through the index of migration V39): a task still owed
    /// further back (its extraction failed again and again, or it was counted and then deleted)
    /// is retired, never extracted, so the cost follows the window and what is owed, not the
    /// history. Nothing is lost by retiring: its agent's own list was taken in when it failed.
    pub fn learnings_scope(&self, window: u32, owed: u32) -> Result<Vec<WindowTask>> {
        let reach = i64::from(window) + i64::from(owed) + OWED_REACH;
        let recent: Vec<(TaskId, bool)> = self
            .db
            .query_map(
                "SELECT t.id, e.task_id IS NOT NULL FROM tasks t INDEXED BY tasks_completed_for_learnings \
                 LEFT JOIN learning_extractions e ON e.task_id = t.id \
                 WHERE t.status = 'completed' AND t.skip_learnings = 0 \
                   AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id) \
                 ORDER BY t.completed_at DESC, t.id DESC LIMIT ?1",
                params![reach],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))?;
        let mut owed_left = owed as usize;
        let chosen: Vec<(TaskId, bool)> = recent
            .into_iter()
            .enumerate()
            .filter(|(i, (_, extracted))| {
                if *i < window as usize {
                    true
                } else if !extracted && owed_left > 0 {
                    owed_left -= 1;
                    true
                } else {
                    false
                }
            })
            .map(|(_, t)| t)
            .collect();
        // Their prompts and outputs in one statement (a round trip per task was most of a
        // regeneration's statements on PostgreSQL), in the order chosen.
        let json = serde_json::to_string(&chosen.iter().map(|(id, _)| id.0).collect::<Vec<_>>())
            .unwrap_or_else(|_| "[]".into());
        let mut found: std::collections::HashMap<TaskId, (String, TaskType, Option<String>)> = self
            .db
            .query_map(
                &format!(
                    "SELECT id, prompt, task_type, output FROM tasks WHERE id IN ({})",
                    self.backend().json_ids("?1")
                ),
                params![json],
                |r| {
                    let text: String = r.get(2)?;
                    let task_type = TaskType::parse(&text).ok_or_else(|| DbError::Column {
                        index: 2,
                        name: "task_type".into(),
                        message: format!("unexpected value {text:?}"),
                    })?;
                    Ok((TaskId(r.get(0)?), (r.get(1)?, task_type, r.get(3)?)))
                },
            )
            .map_err(|e| self.err(e))?
            .into_iter()
            .collect();
        let mut out = Vec::with_capacity(chosen.len());
        for (id, extracted) in chosen {
            // A task deleted since the first statement is left out.
            let Some((prompt, task_type, output)) = found.remove(&id) else {
                continue;
            };
            out.push(WindowTask {
                id,
                prompt,
                task_type,
                output,
                extracted,
            });
        }
        Ok(out)
    }

    /// Store what a task taught (new learnings, or confirmations of existing ones), in one
    /// transaction, and mark the task extracted unless `extracted` is None (a stand-in taken from
    /// the agent's own list while the model call is to be tried again). Returns the new ids.
    pub fn record_extraction(
        &self,
        task_id: TaskId,
        extracted: Option<(&str, Option<&str>, (i64, i64))>,
        taught: &[Taught],
    ) -> Result<Vec<i64>> {
        self.immediate(|tx| {
            let now = now_timestamp();
            let mut new_ids = Vec::new();
            for item in taught {
                match item {
                    Taught::New(learning) => {
                        let id = insert_learning(tx, learning, &now)?;
                        log_event(tx, id, "taught", Some(&format!("task {task_id}")), &now)?;
                        tx.execute(
                            "INSERT INTO learning_sources (learning_id, task_id, kind, created_at) \
                             VALUES (?1, ?2, 'taught', ?3) ON CONFLICT DO NOTHING",
                            params![id, task_id, now],)?;
                        new_ids.push(id);
                    }
                    Taught::Confirms(id) => {
                        confirm(tx, *id, (Some(task_id.0), None), &now)?;
                    }
                }
            }
            if let Some((provider, model, tokens)) = extracted {
                tx.execute(
                    "INSERT INTO learning_extractions (task_id, provider, model, extracted_at, input_tokens, output_tokens) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                     ON CONFLICT (task_id) DO UPDATE SET provider = excluded.provider, model = excluded.model, \
                     extracted_at = excluded.extracted_at, input_tokens = excluded.input_tokens, \
                     output_tokens = excluded.output_tokens",
                    params![task_id, provider, model, now, tokens.0, tokens.1],)?;
            }
            Ok(new_ids)
        })
    }

    /// Record that a Claude Code session (or an MCP client's) re-confirmed each of `ids`, as a
    /// task's extraction records it: a source, a raised confidence, an event.
    pub fn record_session_confirmations(&self, session: &str, ids: &[i64]) -> Result<()> {
        let session = stored_session(session).into_owned();
        self.immediate(|tx| {
            let now = now_timestamp();
            for id in ids {
                confirm(tx, *id, (None, Some(&session)), &now)?;
            }
            Ok(())
        })
    }

    /// Fold draft `draft` into `into`, a learning that says the same: every task or session
    /// that taught the draft confirms `into` instead (as an extraction confirms: a source, a
    /// raised confidence, an event), and the draft is removed, so one idea is one record.
    /// Nothing is done unless `draft` is still a draft (a person may have promoted it since)
    /// and `into` exists; returns whether it was folded.
    pub fn merge_draft(&self, draft: i64, into: i64) -> Result<bool> {
        self.immediate(|tx| {
            let statuses: Vec<(i64, String)> = tx.query_map(
                "SELECT id, status FROM learnings WHERE id IN (?1, ?2)",
                params![draft, into],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let is_draft = statuses.iter().any(|(id, s)| *id == draft && s == "draft");
            if draft == into || !is_draft || !statuses.iter().any(|(id, _)| *id == into) {
                return Ok(false);
            }
            let sources: Vec<(Option<i64>, Option<String>)> = tx.query_map(
                "SELECT task_id, session_id FROM learning_sources WHERE learning_id = ?1 ORDER BY created_at",
                params![draft],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let now = now_timestamp();
            for (task, session) in &sources {
                confirm(tx, into, (*task, session.as_deref()), &now)?;
            }
            log_event(tx, into, "merged", Some(&format!("draft L{draft} said the same")), &now)?;
            tx.execute("DELETE FROM learnings WHERE id = ?1", params![draft])?;
            Ok(true)
        })
    }

    /// Learnings in use (active, and drafts with `drafts`) that have no embedding made by
    /// `model`, oldest first, at most `limit`.
    pub fn rows_without_vectors(
        &self,
        drafts: bool,
        model: &str,
        limit: usize,
    ) -> Result<Vec<RankRow>> {
        self.db
            .query_map(
                "SELECT l.id, l.section, l.text, l.keywords, l.applies_when, l.priority, l.confidence, \
                 l.status = 'draft' FROM learnings l WHERE l.status IN ('active', ?1) AND l.quarantine_reason IS NULL \
                 AND NOT EXISTS (SELECT 1 FROM learning_embeddings e WHERE e.learning_id = l.id AND e.model = ?2) \
                 ORDER BY l.id LIMIT ?3",
                params![if drafts { "draft" } else { "active" }, model, limit as i64],
                rank_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Stored embeddings made by `model`, for learnings of any status.
    pub fn learning_embeddings(&self, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        self.db
            .query_map(
                "SELECT learning_id, vector FROM learning_embeddings WHERE model = ?1 ORDER BY learning_id",
                params![model],
                |r| {
                let bytes: Vec<u8> = r.get(1)?;
                Ok((r.get(0)?, decode_vector(&bytes)))
            },)
            .map_err(|e| self.err(e))
    }

    /// The stored embeddings made by `model` of the learnings `ids` (those that have one), by
    /// primary-key lookups: the cost follows `ids`, not the table. In the order of `ids`, in one
    /// statement (a round trip per learning was most of a search's wait on PostgreSQL).
    pub fn embeddings_of(&self, model: &str, ids: &[i64]) -> Result<Vec<(i64, Vec<f32>)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let sql = format!(
            "SELECT learning_id, vector FROM learning_embeddings \
             WHERE model = ?2 AND learning_id IN ({})",
            self.backend().json_ids("?1")
        );
        let found: std::collections::HashMap<i64, Vec<u8>> = self
            .db
            .query_map(&sql, params![json, model], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.err(e))?
            .into_iter()
            .collect();
        Ok(ids
            .iter()
            .filter_map(|id| found.get(id).map(|bytes| (*id, decode_vector(bytes))))
            .collect())
    }

    /// Keep embeddings made by `model` from `rows` (matched by id; replacing any older ones of
    /// those learnings), each kept only while its learning still says what it was made from (text and `applies_when`, what
    /// a learning's vector is made of). A process that read a learning before it was edited
    /// (the background job, another command) would otherwise write the old text's vector over
    /// the one the edit made, for good: the learning then ranked by what it no longer says.
    pub fn store_embeddings_if_current(
        &self,
        model: &str,
        rows: &[&RankRow],
        vectors: &[(i64, Vec<f32>)],
    ) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        // The only writer of vectors: an unguarded one would let the race below back in.
        self.immediate(|tx| {
            for (id, v) in vectors {
                let Some(row) = rows.iter().find(|r| r.id == *id) else {
                    continue;
                };
                let now: Vec<(String, String)> = tx.query_map(
                    "SELECT text, applies_when FROM learnings WHERE id = ?1",
                    params![id],
                    |r| Ok((r.get(0)?, r.get::<Option<String>>(1)?.unwrap_or_default())),
                )?;
                let current = now.first().is_some_and(|(text, when)| {
                    *text == row.text && json_list(when.clone()) == row.applies_when
                });
                if !current {
                    continue;
                }
                tx.execute(
                    "INSERT INTO learning_embeddings (learning_id, model, vector) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (learning_id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
                    params![id, model, encode_vector(v)],
                )?;
            }
            Ok(())
        })
    }

    /// Record that learnings were given to an agent.
    pub fn record_injections(
        &self,
        task_id: Option<TaskId>,
        session_id: Option<&str>,
        event: &str,
        ids: &[i64],
    ) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.immediate(|tx| {
            insert_injections(tx, task_id, session_id, event, ids, &now_timestamp())?;
            if let Some(task) = task_id {
                // Given after its task was credited (taken in from the spool): credited now.
                super::outcomes::credit_late_injections(tx, task, ids)?;
            }
            Ok(())
        })
    }

    /// What a task being run is given, in one transaction: the learnings.md version it was
    /// given (`None` clears it) and each event's injections in order, as
    /// [`Store::set_learnings_version`] and [`Store::record_injections`] per event would (one
    /// transaction instead of one each: a `gza work` task's round trips on PostgreSQL).
    pub fn record_task_learnings(
        &self,
        task_id: TaskId,
        version: Option<i64>,
        events: &[(&str, Vec<i64>)],
    ) -> Result<()> {
        self.immediate(|tx| {
            tx.execute(
                "UPDATE tasks SET learnings_version = ?2 WHERE id = ?1",
                params![task_id, version],
            )?;
            let now = now_timestamp();
            let mut credited = None;
            for (event, ids) in events {
                if ids.is_empty() {
                    continue;
                }
                insert_injections(tx, Some(task_id), None, event, ids, &now)?;
                // Only a task already credited (rare for one being run) credits them now.
                let credit = match credited {
                    Some(c) => c,
                    None => *credited.insert(super::outcomes::is_credited(tx, task_id)?),
                };
                if credit {
                    super::outcomes::credit_late_injections(tx, task_id, ids)?;
                }
            }
            Ok(())
        })
    }

    /// The learnings a task was given, in the order given, with how.
    pub fn task_injections(&self, task_id: TaskId) -> Result<Vec<Injection>> {
        self.db
            .query_map(
                "SELECT learning_id, event FROM learning_injections WHERE task_id = ?1 ORDER BY id",
                params![task_id],
                |r| {
                    Ok(Injection {
                        learning: r.get(0)?,
                        event: r.get(1)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// Remember which learnings.md version a task was given.
    pub fn set_learnings_version(&self, task_id: TaskId, version: Option<i64>) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET learnings_version = ?2 WHERE id = ?1",
                params![task_id, version],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Keep the prompt sent to a task's agent, secrets redacted (a record, shown by
    /// `gza show --prompt`; the agent was given the task's own prompt).
    pub fn set_prompt_sent(&self, task_id: TaskId, prompt: &str) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET prompt_sent = ?2 WHERE id = ?1",
                params![task_id, gza_core::redact::redact(prompt).as_ref()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The prompt sent to a task's agent (secrets redacted), if it was kept.
    pub fn prompt_sent(&self, task_id: TaskId) -> Result<Option<String>> {
        self.db
            .query_opt(
                "SELECT prompt_sent FROM tasks WHERE id = ?1",
                params![task_id],
                |r| r.get(0),
            )
            .map(Option::flatten)
            .map_err(|e| self.err(e))
    }

    /// A version of learnings.md gza wrote: its content.
    pub fn learnings_version(&self, id: i64) -> Result<Option<String>> {
        self.db
            .query_opt(
                "SELECT content FROM learnings_versions WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// The newest version gza wrote.
    pub fn last_learnings_version(&self) -> Result<Option<LearningsVersion>> {
        self.db
            .query_opt(
                "SELECT id, content FROM learnings_versions WHERE content <> '' ORDER BY id DESC LIMIT 1",
                params![],
                |r| {
                    Ok(LearningsVersion {
                        id: r.get(0)?,
                        content: r.get(1)?,
                    })
                },)
            .map_err(|e| self.err(e))
    }

    /// Record a version of learnings.md before it is written to disk: `render` gets the new
    /// version's id (the file names it, so a crash between this and the rename is told apart).
    /// `consumed` completions are taken off the regeneration counter; later ones still count.
    pub fn record_learnings_version(
        &self,
        record: &VersionRecord,
        consumed: i64,
        render: impl FnOnce(i64) -> String,
    ) -> Result<LearningsVersion> {
        let floor = self
            .backend()
            .greatest("0", "COALESCE(tasks_since_regen, 0) - ?3");
        self.immediate(|tx| {
            let now = now_timestamp();
            let id: i64 = tx.one(
                "INSERT INTO learnings_versions (created_at, from_task_id, window_tasks, items, added, removed, kept, \
                 llm_calls, input_tokens, output_tokens, duration_ms, content) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, '') RETURNING id",
                params![
                    now,
                    record.from_task_id,
                    record.window_tasks,
                    record.items,
                    record.added,
                    record.removed,
                    record.kept,
                    record.llm_calls,
                    record.input_tokens,
                    record.output_tokens,
                    record.duration_ms,
                ],)?;
            let content = render(id);
            tx.execute(
                "UPDATE learnings_versions SET content = ?2 WHERE id = ?1",
                params![id, content],)?;
            tx.execute(
                &format!(
                    "UPDATE learnings_metadata SET last_regenerated_at = ?1, last_regenerated_from_task_id = ?2, \
                     tasks_since_regen = {floor} WHERE id = 1"
                ),
                params![now, record.from_task_id, consumed],)?;
            Ok(LearningsVersion { id, content })
        })
    }

    /// The learnings_metadata row.
    pub fn learnings_metadata(&self) -> Result<LearningsMetadata> {
        self.db
            .query_opt(
                "SELECT last_regenerated_at, last_regenerated_from_task_id, COALESCE(tasks_since_regen, 0) \
                 FROM learnings_metadata WHERE id = 1",
                params![],
                |r| {
                    Ok(LearningsMetadata {
                        last_regenerated_at: r.get(0)?,
                        last_regenerated_from_task_id: r.get(1)?,
                        tasks_since_regen: r.get(2)?,
                    })
                },)
            .map_err(|e| self.err(e))
            .map(Option::unwrap_or_default)
    }

    /// Forget every learning, extraction, injection and version; reset the metadata.
    pub fn clear_learnings(&self) -> Result<()> {
        self.immediate(|tx| {
            tx.batch(
                "DELETE FROM learning_injections; DELETE FROM learning_embeddings; DELETE FROM learning_sources; \
                 DELETE FROM learning_events; DELETE FROM session_extractions; \
                 DELETE FROM learnings; DELETE FROM learning_extractions; \
                 DELETE FROM learnings_versions; UPDATE tasks SET learnings_version = NULL WHERE learnings_version IS NOT NULL; \
                 UPDATE learnings_metadata SET last_regenerated_at = NULL, last_regenerated_from_task_id = NULL, \
                 tasks_since_regen = 0 WHERE id = 1;",
            )
        })
    }

    /// Counts and spending for `gza learnings stats`.
    pub fn learnings_totals(&self) -> Result<LearningsTotals> {
        let q = |sql: &str| -> Result<i64> {
            self.db
                .query_row(sql, params![], |r| r.get(0))
                .map_err(|e| self.err(e))
        };
        let grouped = |sql: &str| -> Result<Vec<Tally>> {
            self.db
                .query_map(sql, params![], |r| {
                    Ok(Tally {
                        name: r.get(0)?,
                        count: r.get(1)?,
                    })
                })
                .map_err(|e| self.err(e))
        };
        // One statement per table where one serves: each is a round trip, and on PostgreSQL a
        // parse and a plan, at every call (`learnings stats` asked 38 statements).
        let (active, archived, drafts) = self
            .db
            .query_row(
                "SELECT COUNT(CASE WHEN status = 'active' THEN 1 END), \
                        COUNT(CASE WHEN status = 'archived' THEN 1 END), \
                        COUNT(CASE WHEN status = 'draft' THEN 1 END) FROM learnings",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| self.err(e))?;
        // From the counters the triggers keep (V52/V22), not the injections themselves.
        let events = grouped("SELECT event, n FROM injection_event_counts ORDER BY 2 DESC, 1")?;
        let (regenerations, llm_calls, input_tokens, output_tokens) = self
            .db
            .query_row(
                "SELECT COUNT(*), CAST(COALESCE(SUM(llm_calls), 0) AS BIGINT), \
                        CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT), \
                        CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT) FROM learnings_versions",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(|e| self.err(e))?;
        let mut t = LearningsTotals {
            active,
            archived,
            by_section: grouped(
                "SELECT section, COUNT(*) FROM learnings WHERE status = 'active' GROUP BY section ORDER BY 2 DESC, 1",
            )?,
            by_priority: grouped(
                "SELECT priority, COUNT(*) FROM learnings WHERE status = 'active' GROUP BY priority \
                 ORDER BY CASE priority WHEN 'CRITICAL' THEN 0 WHEN 'HIGH' THEN 1 WHEN 'MEDIUM' THEN 2 ELSE 3 END",
            )?,
            by_origin: grouped(
                "SELECT origin, COUNT(*) FROM learnings WHERE status = 'active' GROUP BY origin ORDER BY 1",
            )?,
            injections: events.iter().map(|e| e.count).sum(),
            injections_by_event: events.into_iter().filter(|e| e.count > 0).collect(),
            drafts,
            // Not COUNT(DISTINCT session_id): that reads every injection given to a session,
            // so it grew with the history (a session is given learnings at each prompt). This
            // skips from one session to the next through the index on session_id (each step is
            // one index seek) and stops past SESSIONS_COUNTED.
            sessions: q(&format!(
                "WITH RECURSIVE s(id, n) AS ( \
                   SELECT (SELECT MIN(session_id) FROM learning_injections WHERE session_id IS NOT NULL), 1 \
                   UNION ALL \
                   SELECT (SELECT MIN(session_id) FROM learning_injections \
                           WHERE session_id IS NOT NULL AND session_id > s.id), n + 1 \
                   FROM s WHERE s.id IS NOT NULL AND n <= {SESSIONS_COUNTED}) \
                 SELECT COUNT(id) FROM s"
            ))?,
            more_sessions: false,
            never_injected: q("SELECT COUNT(*) FROM learnings l WHERE status = 'active' \
                 AND NOT EXISTS (SELECT 1 FROM learning_injection_counts c WHERE c.learning_id = l.id AND c.injected > 0)")?,
            injections_in_ab_runs: q(
                "SELECT CAST(COALESCE(SUM(given - injected), 0) AS BIGINT) FROM learning_injection_counts",
            )?,
            tasks_extracted: q("SELECT COUNT(*) FROM learning_extractions")?,
            regenerations,
            llm_calls,
            input_tokens,
            output_tokens,
            last: None,
        };
        if t.sessions > SESSIONS_COUNTED {
            t.sessions = SESSIONS_COUNTED;
            t.more_sessions = true;
        }
        t.last = self
            .db
            .query_opt(
                "SELECT from_task_id, window_tasks, items, added, removed, kept, llm_calls, input_tokens, \
                 output_tokens, duration_ms FROM learnings_versions ORDER BY id DESC LIMIT 1",
                params![],
                |r| {
                    Ok(VersionRecord {
                        from_task_id: r.get(0)?,
                        window_tasks: r.get(1)?,
                        items: r.get(2)?,
                        added: r.get(3)?,
                        removed: r.get(4)?,
                        kept: r.get(5)?,
                        llm_calls: r.get(6)?,
                        input_tokens: r.get(7)?,
                        output_tokens: r.get(8)?,
                        duration_ms: r.get(9)?,
                    })
                },)
            .map_err(|e| self.err(e))?;
        Ok(t)
    }

    /// The most injected active learnings, most first: by their injections outside A/B runs,
    /// as `learnings show` counts them (an experiment's runs are counted apart; ranking by all
    /// of them put "L1 23×" beside `show`'s "Injected 0 times").
    pub fn most_injected(&self, limit: u32) -> Result<Vec<InjectionCount>> {
        self.db
            .query_map(
                "SELECT l.id, l.text, c.injected, c.given - c.injected \
                 FROM learning_injection_counts c JOIN learnings l ON l.id = c.learning_id \
                 WHERE l.status = 'active' AND c.given > 0 ORDER BY 3 DESC, 4 DESC, 1 LIMIT ?1",
                params![limit],
                |r| {
                    Ok(InjectionCount {
                        id: r.get(0)?,
                        text: r.get(1)?,
                        injected: r.get(2)?,
                        in_ab_runs: r.get(3)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// How many times learning `id` was given to A/B runs (`gza ab`), which its `injected`
    /// leaves out.
    pub fn injections_in_ab_runs(&self, id: i64) -> Result<i64> {
        self.db
            .query_opt(
                "SELECT given - injected FROM learning_injection_counts WHERE learning_id = ?1",
                params![id],
                |r| r.get::<i64>(0),
            )
            .map(Option::unwrap_or_default)
            .map_err(|e| self.err(e))
    }
}

/// Little-endian f32s.
fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode_vector(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Count a completed task towards the next regeneration, inside the transaction that records
/// its outcome (the completion hook's write).
pub fn count_towards_regeneration(tx: &Tx) -> DbResult<()> {
    tx.execute(
        "UPDATE learnings_metadata SET tasks_since_regen = COALESCE(tasks_since_regen, 0) + 1 WHERE id = 1",
        params![],)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gza_core::learning::NewLearning;

    /// A session id comes from a hook's input as is: one carrying a secret must not be stored,
    /// logged in an event or recorded with an injection with it, and is still found by its id.
    #[test]
    fn a_session_id_is_stored_redacted_and_still_matches() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(&dir.path().join("gza.db")).unwrap();
        let session = "s1 GITHUB_TOKEN=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
        let ids = store
            .add_session_learnings(
                session,
                &[NewLearning::new("General", "Run make check", Origin::Agent)],
            )
            .unwrap();
        store
            .record_injections(None, Some(session), "SessionStart", &ids)
            .unwrap();
        assert!(store.claim_session_extraction(session, "p", "m").unwrap());
        let stored: Vec<String> = store
            .db
            .query_map(
                "SELECT session_id FROM learning_sources UNION ALL \
                 SELECT detail FROM learning_events WHERE event = 'taught' UNION ALL \
                 SELECT session_id FROM learning_injections UNION ALL \
                 SELECT session_id FROM session_extractions",
                params![],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stored.len(), 4, "{stored:?}");
        for s in &stored {
            assert!(!s.contains("AbCdEfGh"), "{stored:?}");
            assert!(s.contains("s1 GITHUB_TOKEN=[REDACTED]"), "{stored:?}");
        }
        assert_eq!(
            store.injected_in_session(session).unwrap(),
            ids.iter().copied().collect()
        );
        assert!(store.session_extracted(session).unwrap());
    }

    /// `learnings_uncounted` reads what `learnings` reads, in the same order and with the same
    /// filter, but for the two counts (0).
    #[test]
    fn uncounted_learnings_are_the_learnings_without_their_counts() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(&dir.path().join("gza.db")).unwrap();
        let ids = store
            .add_session_learnings(
                "s1",
                &[
                    NewLearning::new("General", "Run make check", Origin::Agent),
                    NewLearning::new("General", "Use sqlx offline mode", Origin::Agent),
                ],
            )
            .unwrap();
        store
            .record_injections(None, Some("s1"), "SessionStart", &ids)
            .unwrap();
        store
            .db
            .execute(
                "UPDATE learnings SET status = 'archived' WHERE id = ?1",
                params![ids[1]],
            )
            .unwrap();
        for archived in [false, true] {
            let counted = store.learnings(archived).unwrap();
            assert!(counted.iter().all(|l| l.support == 1 && l.injected == 1));
            let uncounted: Vec<Learning> = counted
                .into_iter()
                .map(|l| Learning {
                    support: 0,
                    injected: 0,
                    ..l
                })
                .collect();
            assert_eq!(store.learnings_uncounted(archived).unwrap(), uncounted);
        }
    }
}
