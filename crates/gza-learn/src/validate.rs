//! Tier 2 by evidence (seed 002): search the tree for each learning's terms, promote those the
//! code shows in 3+ files, and flag as stale those whose evidence went away.

use std::time::Instant;

use super::evidence::kept::Kept;
use super::evidence::{self, Wanted};
use gza_core::error::{Error, Result};
use gza_core::learning::{Evidence, Learning, Status, TIER2_HIGH_FILES, TIER2_MEDIUM_FILES};
use gza_core::project::Project;
use gza_store::{Store, TierChange};

/// Threads the walk uses: the benchmark's machine has two cores.
const THREADS: usize = 2;

/// What validation found for one learning.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    pub id: String,
    pub text: String,
    pub terms: Vec<String>,
    pub files: usize,
    pub evidence: Vec<String>,
    pub tier: u8,
    pub level: Option<String>,
    /// `promoted`, `stale`, `kept`, `tier 1` or `no terms`.
    pub change: &'static str,
    pub stale_reason: Option<String>,
}

/// A validation run.
#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub checked: Vec<Checked>,
    /// The commit checked out in the tree searched; none outside git.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub files_searched: usize,
    /// Of those, the files whose text was read (the others were unchanged since the last
    /// search, [`Reading::Changed`]).
    #[serde(skip)]
    pub files_read: usize,
    pub unreadable: usize,
    pub duration_ms: u64,
    pub dry_run: bool,
    /// Where expertise.yaml was written.
    pub exported: Option<String>,
    /// Why it was not written, when it could not be (a path leading outside the project).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export_error: Option<String>,
}

/// The tier and level a number of evidence files earns.
pub fn tier_for(count: usize) -> (u8, Option<&'static str>) {
    if count >= TIER2_HIGH_FILES {
        (2, Some("high"))
    } else if count >= TIER2_MEDIUM_FILES {
        (2, Some("medium"))
    } else {
        (1, None)
    }
}

/// Decide what a learning's new evidence means for its tier.
fn decide(
    l: &Learning,
    terms: Vec<String>,
    count: usize,
    files: Vec<String>,
    commit: Option<&str>,
) -> (TierChange, Checked) {
    let now = gza_core::task::now_timestamp();
    let (tier, level) = if terms.is_empty() {
        (1, None)
    } else {
        tier_for(count)
    };
    let before = l.lifecycle.tier;
    let before_count = l.lifecycle.evidence.as_ref().map_or(0, |e| e.count);
    let before_level = l.lifecycle.tier_level.as_deref();
    let mut stale = l.lifecycle.stale_reason.clone();
    let mut event = None;
    let change = if tier == 2 && before < 2 {
        stale = None;
        event = Some((
            "tier 2".to_string(),
            format!("{}: {count} files", level.unwrap_or("medium")),
        ));
        "promoted"
    } else if tier < before {
        let reason = if terms.is_empty() {
            "no distinctive terms left in its text".to_string()
        } else {
            format!("evidence gone: {count} file(s) now, {before_count} when it was validated")
        };
        event = Some(("stale".to_string(), reason.clone()));
        stale = Some(reason);
        "stale"
    } else if tier == 2 && before_level == Some("high") && level == Some("medium") {
        let reason = format!("evidence shrank: {count} files now, {before_count} before");
        event = Some(("stale".to_string(), reason.clone()));
        stale = Some(reason);
        "stale"
    } else if tier == 2 {
        stale = None;
        "kept"
    } else if terms.is_empty() {
        "no terms"
    } else {
        "tier 1"
    };
    let evidence = (!terms.is_empty()).then(|| Evidence {
        terms: terms.clone(),
        count,
        files: files.clone(),
        at: now,
        commit: commit.map(str::to_string),
    });
    let record = TierChange {
        id: l.id,
        tier,
        level: level.map(str::to_string),
        evidence,
        stale_reason: stale.clone(),
        event,
    };
    let checked = Checked {
        id: l.label(),
        text: l.text.clone(),
        terms,
        files: count,
        evidence: files,
        tier,
        level: level.map(str::to_string),
        change,
        stale_reason: stale,
    };
    (record, checked)
}

/// Whether `change` records what `l` already holds: the same tier, level, staleness and
/// evidence (its terms, count and files; not the time or commit it was found at), no event to
/// log, and `l`
/// validated before. Such a row is not written again: a regeneration validates every learning
/// in use, and rewriting each one's row (and its `validated_at`) was a third of a
/// regeneration's cost at 10,000 learnings, growing with them, to record nothing new. So a
/// learning's `validated_at`, and its evidence's `at`, say when its outcome last changed.
fn unchanged(l: &Learning, change: &TierChange) -> bool {
    let lc = &l.lifecycle;
    let same_evidence = match (&lc.evidence, &change.evidence) {
        (None, None) => true,
        (Some(a), Some(b)) => a.terms == b.terms && a.count == b.count && a.files == b.files,
        _ => false,
    };
    change.event.is_none()
        && lc.validated_at.is_some()
        && lc.tier == change.tier
        && lc.tier_level == change.level
        && lc.stale_reason == change.stale_reason
        && same_evidence
}

/// Validate the learnings in use (or only `ids`) against the project tree; unless `dry_run`,
/// record the result and rewrite expertise.yaml.
pub fn validate(
    project: &Project,
    store: &Store,
    ids: Option<&[i64]>,
    dry_run: bool,
) -> Result<Report> {
    validate_reading(project, store, ids, dry_run, Reading::Whole)
}

/// How much of the tree a validation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Every file, for every term (what `gza learnings validate` does); what it finds is kept
    /// for the next [`Reading::Changed`].
    Whole,
    /// Only what changed since the last search kept what it found ([`evidence::kept`]): files
    /// whose stamp changed, terms no kept search looked for, learnings whose text changed. The
    /// outcome is [`Reading::Whole`]'s; after a regeneration, at 10,000 learnings, a fraction of
    /// its cost.
    Changed,
}

/// [`validate`], reading the tree as `reading` says.
pub fn validate_reading(
    project: &Project,
    store: &Store,
    ids: Option<&[i64]>,
    dry_run: bool,
    reading: Reading,
) -> Result<Report> {
    let mut report = search_reading(project, store, ids, !dry_run, reading)?;
    if !dry_run && exports_on_validate(project) {
        // The tiers are recorded whatever happens to the export.
        match super::expertise::export(project, store, None) {
            Ok(path) => report.exported = Some(path),
            Err(e) if e.is_user_error() => report.export_error = Some(e.to_string()),
            Err(e) => return Err(e),
        }
    }
    Ok(report)
}

/// Whether `validate` rewrites expertise.yaml by itself: when Claude Code is in use here (the
/// default provider is claude, or the project has a `.claude/` folder) or the file is already
/// there (someone exported it, or committed it). A project that never uses Claude gets no
/// `.claude/` written into it unasked; `gza learnings export` writes it whenever asked. An
/// empty `learnings.expertise_path` turns the automatic export off.
pub fn exports_on_validate(project: &Project) -> bool {
    let configured = &project.config.learnings.expertise_path;
    if configured.as_os_str().is_empty() {
        return false;
    }
    project.config.provider == gza_core::config::ProviderKind::Claude
        || project.root.join(".claude").is_dir()
        || super::expertise::default_path(project).is_ok_and(|p| p.exists())
}

/// Search the tree for the evidence of the learnings in use (or only `ids`) and, with
/// `record`, store the tiers it earns; expertise.yaml is left alone.
pub fn search(
    project: &Project,
    store: &Store,
    ids: Option<&[i64]>,
    record: bool,
) -> Result<Report> {
    search_reading(project, store, ids, record, Reading::Changed)
}

/// [`search`], reading the tree as `reading` says. What a search of every learning in use
/// found is kept for the next; a search of some (`ids`) reads what was kept and keeps nothing
/// (it would forget the others' terms).
fn search_reading(
    project: &Project,
    store: &Store,
    ids: Option<&[i64]>,
    record: bool,
    reading: Reading,
) -> Result<Report> {
    let started = Instant::now();
    // The commit the tree is of, named in the evidence found (issue 21: each clone validates
    // its own tree).
    let commit = gza_core::git::run(
        &project.root,
        &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
    )
    .ok()
    .map(|s| s.trim().to_string())
    .filter(|s| !s.is_empty());
    let learnings: Vec<Learning> = store
        .learnings_uncounted(false)?
        .into_iter()
        .filter(|l| l.status != Status::Archived)
        .filter(|l| ids.is_none_or(|ids| ids.contains(&l.id)))
        .collect();
    let exclude = evidence::exclude_set(&project.config.learnings.evidence_exclude)
        .map_err(|e| Error::Usage(format!("learnings.evidence_exclude: {e}")))?;
    let kept_at = evidence::kept::path_for(&project.root);
    let mut kept = kept_at.as_deref().map(|at| match reading {
        Reading::Changed => Kept::load(at, &project.root),
        Reading::Whole => Kept::fresh(&project.root),
    });
    let wanted: Vec<Wanted> = learnings
        .iter()
        .map(|l| Wanted {
            id: l.id,
            terms: match kept.as_mut() {
                Some(k) => k.terms_of(l.id, &l.text, &l.keywords),
                None => evidence::derive_terms(&l.text, &l.keywords),
            },
        })
        .collect();
    let scan = evidence::scan_with(&project.root, &exclude, &wanted, THREADS, kept.as_mut());
    if ids.is_none()
        && let (Some(k), Some(at)) = (&kept, &kept_at)
    {
        k.save(at);
    }
    let mut changes = Vec::with_capacity(learnings.len());
    let mut report = Report {
        commit: commit.clone(),
        files_searched: scan.files_searched,
        files_read: scan.files_read,
        unreadable: scan.unreadable,
        dry_run: !record,
        ..Report::default()
    };
    for ((l, w), found) in learnings.iter().zip(&wanted).zip(scan.found) {
        let terms = w.terms.iter().map(|t| t.text.clone()).collect();
        let (change, checked) = decide(l, terms, found.count, found.files, commit.as_deref());
        if !unchanged(l, &change) {
            changes.push(change);
        }
        report.checked.push(checked);
    }
    if record {
        store.record_validation(&changes)?;
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_by_file_count() {
        assert_eq!(tier_for(0), (1, None));
        assert_eq!(tier_for(2), (1, None));
        assert_eq!(tier_for(3), (2, Some("medium")));
        assert_eq!(tier_for(4), (2, Some("medium")));
        assert_eq!(tier_for(5), (2, Some("high")));
    }
}
