//! What outcomes teach the ranker: a learning's helpful and harmful tasks and people's ratings,
//! turned into one bounded factor on its score, and the flag for learnings whose tasks keep
//! going wrong. The counts are kept by the store (`gza-store` `outcomes.rs`); reverted work is
//! found here, in the checkout's history.
//!
//! The factor compares a learning's record with the project's own base rate (the share of all
//! credited tasks that were helpful) through a Beta prior worth [`PRIOR_TASKS`] tasks at that
//! rate: a learning with no history scores exactly as it would without this module, one bad task
//! moves it by a few per cent, and no record moves it below [`FLOOR`] or above [`CEILING`], so
//! relevance still decides and a bad run of luck cannot bury a good learning.

use gza_core::project::Project;
use gza_core::task::{TaskId, TaskType};
use gza_store::{BaseRate, CreditCounts, Store};

use crate::rank::Hit;

/// How many tasks at the project's base rate the prior is worth.
pub const PRIOR_TASKS: f64 = 4.0;
/// The highest factor of a learning more people rated down than up.
pub const DOWN_RATED: f64 = 0.8;
/// How many tasks' worth one rating by a person is.
pub const RATING_WEIGHT: f64 = 3.0;
/// The lowest factor: a learning with the worst record keeps 70 % of its relevance.
pub const FLOOR: f64 = 0.7;
/// The highest factor: a record can add at most 10 % (relevance, not popularity, ranks).
pub const CEILING: f64 = 1.1;
/// The best hits whose records are read (by key): a factor cannot lift a hit from further down
/// past them, and reading a fixed number keeps ranking's cost the same however long the history.
const CREDITED: usize = 64;
/// A learning is flagged for review when at least this many tasks' worth went wrong...
const FLAG_HARM: f64 = 3.0;
/// ...and its record has pushed its factor to this or lower.
const FLAG_FACTOR: f64 = 0.92;

/// The project's base rate: the share of credited tasks that were helpful, smoothed towards
/// 0.75 (most tasks complete) while there are few, and kept within 0.05-0.95.
pub fn base_rate(base: &BaseRate) -> f64 {
    let (h, x) = (base.helpful as f64, base.harmful as f64);
    ((h + 3.0) / (h + x + 4.0)).clamp(0.05, 0.95)
}

/// The factor on a learning's score for its record (`counts`) in a project whose base rate is
/// `base` (see [`base_rate`]): the Beta posterior mean of its success rate, with a prior of
/// [`PRIOR_TASKS`] tasks at the base rate, measured against the base rate and scaled into
/// [`FLOOR`]..=[`CEILING`]. No history gives exactly 1.
pub fn outcome_factor(counts: &CreditCounts, base: f64) -> f64 {
    let helpful = counts.helpful.max(0) as f64 + RATING_WEIGHT * counts.rated_up.max(0) as f64;
    let harmful = counts.harmful.max(0) as f64 + RATING_WEIGHT * counts.rated_down.max(0) as f64;
    let p0 = base.clamp(0.05, 0.95);
    let mean = (PRIOR_TASKS * p0 + helpful) / (PRIOR_TASKS + helpful + harmful);
    let factor = if mean < p0 {
        1.0 - (1.0 - FLOOR) * (p0 - mean) / p0
    } else {
        1.0 + (CEILING - 1.0) * (mean - p0) / (1.0 - p0)
    };
    // People outweigh any record of tasks: a standing down rating (more people down than up)
    // keeps it at DOWN_RATED or lower however many tasks went well (one down after 6 helpful
    // tasks moved it ×0.95), and more up than down keeps it at 1 or higher.
    let factor = match counts.rated_down.cmp(&counts.rated_up) {
        std::cmp::Ordering::Greater => factor.min(DOWN_RATED),
        std::cmp::Ordering::Less => factor.max(1.0),
        std::cmp::Ordering::Equal => factor,
    };
    factor.clamp(FLOOR, CEILING)
}

/// Whether a learning needs review: more people rated it down than up (a person's word, with
/// their why, whatever its tasks did), or its tasks keep going wrong: enough harm (tasks, and
/// down ratings at [`RATING_WEIGHT`] each) and a factor at [`FLAG_FACTOR`] or below.
pub fn flagged(counts: &CreditCounts, base: f64) -> bool {
    if counts.rated_down > counts.rated_up {
        return true;
    }
    let harm = counts.harmful as f64 + RATING_WEIGHT * counts.rated_down as f64;
    harm >= FLAG_HARM && outcome_factor(counts, base) <= FLAG_FACTOR
}

/// Weigh the best hits of a ranking (sorted best first) by their records: each score is
/// multiplied by [`outcome_factor`]. Learnings with no record are untouched; a failure to read
/// the records leaves the ranking as it was (outcomes refine relevance, they never stop it).
/// The caller sorts again.
pub fn weigh(store: &Store, hits: &mut [Hit]) {
    let ids: Vec<i64> = hits.iter().take(CREDITED).map(|h| h.id).collect();
    let Ok(records) = store.credit_counts(&ids) else {
        return;
    };
    if records.is_empty() {
        return;
    }
    let Ok(base) = store.base_rate() else {
        return;
    };
    let base = base_rate(&base);
    for (id, counts) in records {
        if let Some(h) = hits.iter_mut().find(|h| h.id == id) {
            h.score *= outcome_factor(&counts, base);
        }
    }
}

/// Evidence shown for a flagged learning: its newest harmful tasks, at most this many.
const EVIDENCE: usize = 5;

/// A learning whose tasks keep going wrong, with the evidence: which tasks, how they ended, and
/// what people said.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Flag {
    #[serde(serialize_with = "serialize_label")]
    pub id: i64,
    pub text: String,
    #[serde(flatten)]
    pub counts: CreditCounts,
    /// Its factor in ranking now.
    pub factor: f64,
    /// Its newest harmful tasks (at most five), newest first.
    pub evidence: Vec<gza_store::CreditedTask>,
    /// Its newest ratings, newest first.
    pub ratings: Vec<gza_store::Rating>,
}

fn serialize_label<S: serde::Serializer>(id: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&gza_core::learning::label(*id))
}

impl Flag {
    /// The reason every harmful task failed with, when they all failed the same way and none
    /// helped (the evidence is the whole record).
    pub fn common_failure(&self) -> Option<&str> {
        if self.counts.helpful > 0
            || self.counts.rated_down > 0
            || self.evidence.len() as i64 != self.counts.harmful
        {
            return None;
        }
        let first = self.evidence.first()?;
        let same = self.evidence.iter().all(|t| {
            t.ending.status == gza_core::task::TaskStatus::Failed
                && t.ending.ending == first.ending.ending
        });
        same.then_some(first.ending.ending.as_str())
    }
}

/// The learnings in use (not archived) whose record [`flagged`] says keeps going wrong, by id,
/// each with its evidence. Reads only learnings with harm or a down rating.
pub fn flagged_learnings(store: &Store) -> gza_core::Result<Vec<Flag>> {
    let base = base_rate(&store.base_rate()?);
    let mut out = Vec::new();
    for d in store.debited_learnings()? {
        if !flagged(&d.counts, base) {
            continue;
        }
        out.push(Flag {
            id: d.id,
            factor: outcome_factor(&d.counts, base),
            evidence: store.credited_tasks(d.id, true, EVIDENCE)?,
            ratings: store.ratings(Some(d.id), EVIDENCE)?,
            text: d.text,
            counts: d.counts,
        });
    }
    Ok(out)
}

/// Commits scanned for reverts when there is no mark yet (or HEAD moved to another history).
const FIRST_SCAN: &str = "--since=90.days";

/// Find commits on the checkout's HEAD, since the last scan, that revert work gza's tasks
/// committed or merged (`git revert` writes "This reverts commit SHA"; every commit gza makes
/// carries a `Task-Id:` trailer), and credit those tasks as reverted. Returns the tasks newly
/// marked. Never fails: a project without git, or git failing, marks nothing.
pub fn scan_reverts(project: &Project, store: &Store) -> Vec<TaskId> {
    match try_scan_reverts(project, store) {
        Ok(marked) => marked,
        Err(e) => {
            super::log(project, &format!("scan for reverted tasks skipped: {e}"));
            Vec::new()
        }
    }
}

fn try_scan_reverts(project: &Project, store: &Store) -> gza_core::Result<Vec<TaskId>> {
    let root = &project.root;
    let Some(head) = gza_core::worktree::head_commit(root) else {
        return Ok(Vec::new());
    };
    // What this process last found scanned (or scanned itself): a worker checks after every
    // task, and HEAD seldom moves, so asking the database again each time is a round trip per
    // task for nothing (a far database pays it in full). A scan up to the same HEAD finds
    // nothing new, whoever recorded it since.
    static SCANNED: std::sync::Mutex<Option<(std::path::PathBuf, String)>> =
        std::sync::Mutex::new(None);
    let mut scanned = SCANNED.lock().unwrap_or_else(|e| e.into_inner());
    if scanned
        .as_ref()
        .is_some_and(|(r, h)| r.as_path() == root.as_path() && *h == head)
    {
        return Ok(Vec::new());
    }
    let from = store.reverts_scanned_to()?;
    if from.as_deref() == Some(head.as_str()) {
        *scanned = Some((root.clone(), head));
        return Ok(Vec::new());
    }
    let range = match &from {
        Some(f) if gza_core::git::succeeds(root, &["merge-base", "--is-ancestor", f, &head]) => {
            format!("{f}..{head}")
        }
        _ => head.clone(),
    };
    let mut args = vec![
        "log",
        "--format=%H%x1f%B%x1e",
        "--grep=This reverts commit",
        range.as_str(),
    ];
    if !range.contains("..") {
        args.push(FIRST_SCAN);
    }
    let log = gza_core::git::run(root, &args)?;
    let mut marked = Vec::new();
    for record in log.split('\u{1e}') {
        let Some((commit, body)) = record.trim().split_once('\u{1f}') else {
            continue;
        };
        for reverted in reverted_commits(body) {
            let Ok(message) = gza_core::git::run(root, &["show", "-s", "--format=%B", reverted])
            else {
                continue;
            };
            let tasks = tasks_of_commit(store, &message)?;
            // A `Task-Id:` trailer is text anyone can write: a repository cloned with forged
            // "gza task N" commits and their reverts in its history must not debit this
            // project's task N. Only a commit made after the task began, on top of the commit
            // it started from, can hold its work.
            let Some(first) = tasks.first() else {
                continue;
            };
            if !made_after_task_began(root, store, *first, reverted)? {
                continue;
            }
            if !tasks.is_empty() {
                marked.extend(store.record_reverts(&tasks, commit.trim())?);
            }
        }
    }
    store.set_reverts_scanned_to(&head)?;
    *scanned = Some((root.clone(), head.clone()));
    if !marked.is_empty() {
        let list: Vec<String> = marked.iter().map(|t| t.to_string()).collect();
        super::log(
            project,
            &format!(
                "reverted work found for task(s) {}; their learnings are credited with it",
                list.join(", ")
            ),
        );
    }
    Ok(marked)
}

/// The commits a revert's message names ("This reverts commit 0123abc…").
fn reverted_commits(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find("This reverts commit ") {
        rest = &rest[at + "This reverts commit ".len()..];
        let sha: &str = rest
            .split(|c: char| !c.is_ascii_hexdigit())
            .next()
            .unwrap_or("");
        if sha.len() >= 7 {
            out.push(sha);
        }
    }
    out
}

/// Whether `commit` descends, strictly, from the commit task `id` started from (its own, or the
/// task its branch was made by, for an improve task that recorded none). A task without a
/// recorded start holds no commit this can vouch for.
fn made_after_task_began(
    root: &std::path::Path,
    store: &Store,
    id: TaskId,
    commit: &str,
) -> gza_core::Result<bool> {
    let mut at = id;
    let mut base = None;
    for _ in 0..1000 {
        let Ok(task) = store.get_task(at) else {
            break;
        };
        if let Some(b) = task.base_commit() {
            base = Some(b.to_string());
            break;
        }
        match task.based_on {
            Some(up) => at = up,
            None => break,
        }
    }
    let Some(base) = base else {
        return Ok(false);
    };
    let full = |rev: &str| {
        gza_core::git::run(
            root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .ok()
        .map(|s| s.trim().to_string())
    };
    let (Some(base), Some(commit)) = (full(&base), full(commit)) else {
        return Ok(false);
    };
    Ok(base != commit
        && gza_core::git::succeeds(root, &["merge-base", "--is-ancestor", &base, &commit]))
}

/// The tasks whose work a commit gza made holds: a task's own commit ("gza task N: …") is that
/// task's; a merge ("Merge task N: …") or a squash ("… (gza task N)") is the whole branch's.
fn tasks_of_commit(store: &Store, message: &str) -> gza_core::Result<Vec<TaskId>> {
    let Some(id) = message.lines().rev().find_map(|l| {
        l.trim()
            .strip_prefix("Task-Id:")
            .and_then(|v| v.trim().parse::<i64>().ok())
    }) else {
        return Ok(Vec::new());
    };
    let id = TaskId(id);
    let first = message.lines().next().unwrap_or("");
    let whole_branch =
        first.starts_with("Merge task ") || first.contains(&format!("(gza task {id})"));
    if !whole_branch {
        return Ok(vec![id]);
    }
    // The branch's owner: up the improve tasks to the task that made it.
    let mut owner = id;
    for _ in 0..1000 {
        let Ok(task) = store.get_task(owner) else {
            return Ok(vec![id]);
        };
        match (task.task_type, task.based_on) {
            (TaskType::Improve, Some(up)) => owner = up,
            _ => break,
        }
    }
    store.branch_tasks(owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(helpful: i64, harmful: i64, up: i64, down: i64) -> CreditCounts {
        CreditCounts {
            helpful,
            harmful,
            rated_up: up,
            rated_down: down,
        }
    }

    #[test]
    fn no_history_is_neutral_and_one_bad_task_moves_little() {
        for base in [0.3, 0.75, 0.9] {
            assert_eq!(outcome_factor(&counts(0, 0, 0, 0), base), 1.0);
            let one_bad = outcome_factor(&counts(0, 1, 0, 0), base);
            assert!((0.93..1.0).contains(&one_bad), "{base}: {one_bad}");
            // A good record then one bad task: still at least even.
            assert!(outcome_factor(&counts(10, 1, 0, 0), base) >= 0.99);
        }
    }

    #[test]
    fn the_factor_is_bounded_and_monotone() {
        let base = 0.8;
        let mut last = f64::MAX;
        for harmful in 0..200 {
            let f = outcome_factor(&counts(0, harmful, 0, 0), base);
            assert!(f >= FLOOR && f <= last, "{harmful}: {f}");
            last = f;
        }
        let mut last = 0.0;
        for helpful in 0..200 {
            let f = outcome_factor(&counts(helpful, 0, 0, 0), base);
            assert!(f <= CEILING && f >= last, "{helpful}: {f}");
            last = f;
        }
        // At the base rate a record is even, however long.
        let even = outcome_factor(&counts(80, 20, 0, 0), base);
        assert!((even - 1.0).abs() < 1e-9, "{even}");
    }

    #[test]
    fn a_persons_rating_outweighs_the_tasks() {
        let base = 0.8;
        assert!(outcome_factor(&counts(0, 0, 0, 1), base) <= DOWN_RATED);
        // However many tasks went well.
        assert!(outcome_factor(&counts(6, 0, 0, 1), base) <= DOWN_RATED);
        assert!(outcome_factor(&counts(200, 0, 0, 1), base) <= DOWN_RATED);
        assert!(flagged(&counts(6, 0, 0, 1), base));
        // Up, however many went badly: never below even.
        assert!(outcome_factor(&counts(0, 0, 1, 0), base) > 1.0);
        assert!(outcome_factor(&counts(0, 30, 1, 0), base) >= 1.0);
        // One up and one down: the tasks decide.
        assert_eq!(
            outcome_factor(&counts(6, 0, 1, 1), base),
            outcome_factor(&counts(9, 3, 0, 0), base)
        );
    }

    #[test]
    fn flags_learnings_whose_tasks_keep_going_wrong() {
        let base = 0.8;
        assert!(!flagged(&counts(0, 2, 0, 0), base), "two is not a pattern");
        assert!(flagged(&counts(0, 3, 0, 0), base));
        assert!(flagged(&counts(1, 4, 0, 0), base));
        assert!(!flagged(&counts(12, 3, 0, 0), base), "mostly fine");
        assert!(flagged(&counts(0, 0, 0, 1), base), "a person said so");
        assert!(
            !flagged(&counts(0, 3, 2, 0), base),
            "and another said otherwise"
        );
    }

    #[test]
    fn base_rate_is_smoothed_and_bounded() {
        assert_eq!(base_rate(&BaseRate::default()), 0.75);
        assert!(
            base_rate(&BaseRate {
                helpful: 0,
                harmful: 1000
            }) >= 0.05
        );
        assert!(
            base_rate(&BaseRate {
                helpful: 1000,
                harmful: 0
            }) <= 0.95
        );
    }

    #[test]
    fn reverts_name_their_commits() {
        let body = "Revert \"gza task 3: x\"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.\n";
        assert_eq!(
            reverted_commits(body),
            ["0123456789abcdef0123456789abcdef01234567"]
        );
        assert!(reverted_commits("This reverts commit xyz").is_empty());
    }
}
