//! Tier 2 by evidence (seed 002): search the tree for each learning's terms, promote those the
//! code shows in 3+ files, and flag as stale those whose evidence went away.

use std::time::Instant;

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
    pub files_searched: usize,
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
/// evidence (its terms, count and files; not the time it was found), no event to log, and `l`
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
    let mut report = search(project, store, ids, !dry_run)?;
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
    let started = Instant::now();
    let learnings: Vec<Learning> = store
        .learnings_uncounted(false)?
        .into_iter()
        .filter(|l| l.status != Status::Archived)
        .filter(|l| ids.is_none_or(|ids| ids.contains(&l.id)))
        .collect();
    let exclude = evidence::exclude_set(&project.config.learnings.evidence_exclude)
        .map_err(|e| Error::Usage(format!("learnings.evidence_exclude: {e}")))?;
    let wanted: Vec<Wanted> = learnings
        .iter()
        .map(|l| Wanted {
            id: l.id,
            terms: evidence::derive_terms(&l.text, &l.keywords),
        })
        .collect();
    let scan = evidence::scan(&project.root, &exclude, &wanted, THREADS);
    let mut changes = Vec::with_capacity(learnings.len());
    let mut report = Report {
        files_searched: scan.files_searched,
        unreadable: scan.unreadable,
        dry_run: !record,
        ..Report::default()
    };
    for ((l, w), found) in learnings.iter().zip(&wanted).zip(scan.found) {
        let terms = w.terms.iter().map(|t| t.text.clone()).collect();
        let (change, checked) = decide(l, terms, found.count, found.files);
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
