//! `gza learnings stats`: counts, injections, lifecycle and extraction, as text or JSON.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use crate::cli::{Context, output};
use crate::config::InjectMode;
use crate::learning::{Learning, Status, label};
use crate::store::{LearningsMetadata, LearningsTotals};

#[derive(Debug, Args)]
pub(super) struct StatsArgs {
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// `gza learnings stats --json`: what scripts read. The field names are a contract; the text
/// form says the same things for a person.
#[derive(Serialize)]
struct StatsJson<'a> {
    enabled: bool,
    /// The extraction provider and model, `none (…)`, or `unavailable: why`.
    provider: &'a str,
    inject: InjectMode,
    totals: &'a LearningsTotals,
    /// The learnings given most often (at most five), most first.
    most_injected: Vec<Injected<'a>>,
    metadata: &'a LearningsMetadata,
    extraction_backoff: Backoff<'a>,
    regenerate_every: u32,
    window_size: u32,
    lifecycle: Lifecycle<'a>,
}

#[derive(Serialize)]
struct Injected<'a> {
    id: String,
    text: &'a str,
    injected: i64,
}

/// Whether automatic extraction is pausing after failed calls, until when, and why.
#[derive(Serialize)]
struct Backoff<'a> {
    active: bool,
    failures: i64,
    until: Option<&'a str>,
    last_error: Option<&'a str>,
}

#[derive(Serialize)]
struct Lifecycle<'a> {
    tier2_high: i64,
    tier2_medium: i64,
    stale: Vec<Stale<'a>>,
    quarantined: i64,
    /// Active learnings not re-confirmed for months, no longer injected.
    decayed: Vec<Decayed<'a>>,
    /// Learnings given only to tasks that all failed the same way.
    flagged: Vec<Flagged<'a>>,
}

#[derive(Serialize)]
struct Stale<'a> {
    id: String,
    text: &'a str,
    reason: Option<&'a str>,
}

#[derive(Serialize)]
struct Decayed<'a> {
    id: String,
    text: &'a str,
    confidence: f64,
}

#[derive(Serialize)]
struct Flagged<'a> {
    id: String,
    text: &'a str,
    failure_reason: &'a str,
    tasks: i64,
}

pub(super) fn stats(ctx: &Context, args: StatsArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let totals = store.learnings_totals()?;
    let meta = store.learnings_metadata()?;
    let most = store.most_injected(5)?;
    let (high, medium, stale_n, quarantined) = store.lifecycle_counts()?;
    let stale: Vec<Learning> = store
        .learnings(false)?
        .into_iter()
        .filter(|l| l.lifecycle.stale_reason.is_some())
        .collect();
    let failing = store.failing_learnings()?;
    let now = chrono::Utc::now();
    let backoff = store.extraction_backoff()?;
    let backing_off = crate::learn::backoff::active_until(&backoff, now);
    let decayed: Vec<Learning> = store
        .learnings(false)?
        .into_iter()
        .filter(|l| l.status == Status::Active && l.is_decayed(now))
        .collect();
    let config = &project.config.learnings;
    let provider = match crate::llm::client_for(config, &project.config.providers.claude.path) {
        Ok(Some(c)) => format!("{} ({})", c.provider(), c.model()),
        Ok(None) => "none (agent-listed learnings only)".into(),
        Err(e) => format!("unavailable: {e}"),
    };
    let mut out = output::stdout();
    if args.json {
        let json = StatsJson {
            enabled: config.enabled,
            provider: &provider,
            inject: config.inject,
            totals: &totals,
            most_injected: most
                .iter()
                .map(|(id, text, n)| Injected {
                    id: label(*id),
                    text,
                    injected: *n,
                })
                .collect(),
            metadata: &meta,
            extraction_backoff: Backoff {
                active: backing_off.is_some(),
                failures: backoff.failures,
                until: backoff.until.as_deref(),
                last_error: backoff.last_error.as_deref(),
            },
            regenerate_every: config.regenerate_every,
            window_size: config.window_size,
            lifecycle: Lifecycle {
                tier2_high: high,
                tier2_medium: medium,
                stale: stale
                    .iter()
                    .map(|l| Stale {
                        id: l.label(),
                        text: &l.text,
                        reason: l.lifecycle.stale_reason.as_deref(),
                    })
                    .collect(),
                quarantined,
                decayed: decayed
                    .iter()
                    .map(|l| Decayed {
                        id: l.label(),
                        text: &l.text,
                        confidence: l.decayed_confidence(now),
                    })
                    .collect(),
                flagged: failing
                    .iter()
                    .map(|(id, text, reason, n)| Flagged {
                        id: label(*id),
                        text,
                        failure_reason: reason,
                        tasks: *n,
                    })
                    .collect(),
            },
        };
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(());
    }
    let pairs = |list: &[(String, i64)]| {
        if list.is_empty() {
            "-".to_string()
        } else {
            list.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    writeln!(out, "Enabled:            {}", config.enabled)?;
    writeln!(out, "Extraction:         {provider}")?;
    if backing_off.is_some() {
        writeln!(
            out,
            "  backing off:      no automatic extraction call until {} ({} failed regeneration(s) in a row: {}); `gza learnings update` tries now",
            backoff.until.as_deref().unwrap_or("-"),
            backoff.failures,
            output::one_line(backoff.last_error.as_deref().unwrap_or("no answer"), 80)
        )?;
    }
    writeln!(
        out,
        "Learnings:          {} active, {} drafts, {} archived",
        totals.active, totals.drafts, totals.archived
    )?;
    writeln!(
        out,
        "  validated:        {} tier 2 ({high} high, {medium} medium); {stale_n} stale; {quarantined} quarantined",
        high + medium
    )?;
    for l in &stale {
        writeln!(
            out,
            "    stale {:<5} {} ({})",
            l.label(),
            output::one_line(&l.text, 50),
            l.lifecycle.stale_reason.as_deref().unwrap_or("")
        )?;
    }
    if !decayed.is_empty() {
        writeln!(
            out,
            "  decayed:          {} (not re-confirmed for months; no longer injected)",
            decayed.len()
        )?;
        for l in &decayed {
            writeln!(
                out,
                "    decayed {:<5} {} (confidence {:.2} from {:.2}, last confirmed {})",
                l.label(),
                output::one_line(&l.text, 40),
                l.decayed_confidence(now),
                l.confidence,
                l.confirmed_at
            )?;
        }
    }
    for (id, text, reason, n) in &failing {
        writeln!(
            out,
            "    review {:<5} {} (given to {n} tasks that all failed: {})",
            label(*id),
            output::one_line(text, 40),
            if reason.is_empty() {
                "no reason"
            } else {
                reason
            }
        )?;
    }
    writeln!(out, "  by section:       {}", pairs(&totals.by_section))?;
    writeln!(out, "  by priority:      {}", pairs(&totals.by_priority))?;
    writeln!(out, "  by origin:        {}", pairs(&totals.by_origin))?;
    writeln!(
        out,
        "Injections:         {} ({}); {} active never injected; {} Claude Code sessions",
        totals.injections,
        pairs(&totals.injections_by_event),
        totals.never_injected,
        totals.sessions
    )?;
    for (id, text, n) in &most {
        writeln!(
            out,
            "  {:<5} {n:>4}×  {}",
            label(*id),
            output::one_line(text, 60)
        )?;
    }
    writeln!(out, "Tasks extracted:    {}", totals.tasks_extracted)?;
    writeln!(
        out,
        "File versions:      {} (regenerations and rewrites after a change)",
        totals.regenerations
    )?;
    writeln!(
        out,
        "Next regeneration:  after {} more completed tasks",
        (i64::from(config.regenerate_every) - meta.tasks_since_regen).max(0)
    )?;
    if let Some(at) = &meta.last_regenerated_at {
        writeln!(
            out,
            "Last regenerated:   {at} (newest task {})",
            meta.last_regenerated_from_task_id
                .map(|i| i.to_string())
                .unwrap_or("-".into())
        )?;
    }
    if let Some(last) = &totals.last {
        writeln!(
            out,
            "  from {} tasks: {} items (+{} / -{}), {} LLM calls, {} ms",
            last.window_tasks,
            last.items,
            last.added,
            last.removed,
            last.llm_calls,
            last.duration_ms
        )?;
    }
    writeln!(
        out,
        "LLM calls, all time: {} ({} in / {} out tokens)",
        totals.llm_calls, totals.input_tokens, totals.output_tokens
    )?;
    Ok(())
}
