//! `gza learnings stats`: counts, injections, lifecycle and extraction, as text or JSON.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use crate::cli::{Context, output};
use crate::learning::{Learning, Status, label};

#[derive(Debug, Args)]
pub(super) struct StatsArgs {
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct StatsJson<'a> {
    enabled: bool,
    provider: &'a str,
    inject: crate::config::InjectMode,
    totals: &'a crate::store::LearningsTotals,
    most_injected: Vec<Injected<'a>>,
    metadata: &'a crate::store::LearningsMetadata,
    extraction_backoff: BackoffJson<'a>,
    regenerate_every: u32,
    window_size: u32,
    lifecycle: LifecycleJson<'a>,
}

#[derive(Serialize)]
struct Injected<'a> {
    id: String,
    text: &'a str,
    injected: i64,
}

#[derive(Serialize)]
struct BackoffJson<'a> {
    active: bool,
    failures: i64,
    until: Option<&'a str>,
    last_error: Option<&'a str>,
}

#[derive(Serialize)]
struct LifecycleJson<'a> {
    tier2_high: i64,
    tier2_medium: i64,
    stale: Vec<StaleJson<'a>>,
    quarantined: i64,
    decayed: Vec<DecayedJson<'a>>,
    flagged: Vec<FlaggedJson<'a>>,
}

#[derive(Serialize)]
struct StaleJson<'a> {
    id: String,
    text: &'a str,
    reason: Option<&'a str>,
}

#[derive(Serialize)]
struct DecayedJson<'a> {
    id: String,
    text: &'a str,
    confidence: f64,
}

#[derive(Serialize)]
struct FlaggedJson<'a> {
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
    let counts = store.lifecycle_counts()?;
    let (high, medium, stale_n, quarantined) = (
        counts.tier2_high,
        counts.tier2_medium,
        counts.stale,
        counts.quarantined,
    );
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
                .map(|m| Injected {
                    id: label(m.id),
                    text: &m.text,
                    injected: m.injected,
                })
                .collect(),
            metadata: &meta,
            extraction_backoff: BackoffJson {
                active: backing_off.is_some(),
                failures: backoff.failures,
                until: backoff.until.as_deref(),
                last_error: backoff.last_error.as_deref(),
            },
            regenerate_every: config.regenerate_every,
            window_size: config.window_size,
            lifecycle: LifecycleJson {
                tier2_high: high,
                tier2_medium: medium,
                stale: stale
                    .iter()
                    .map(|l| StaleJson {
                        id: l.label(),
                        text: &l.text,
                        reason: l.lifecycle.stale_reason.as_deref(),
                    })
                    .collect(),
                quarantined,
                decayed: decayed
                    .iter()
                    .map(|l| DecayedJson {
                        id: l.label(),
                        text: &l.text,
                        confidence: l.decayed_confidence(now),
                    })
                    .collect(),
                flagged: failing
                    .iter()
                    .map(|f| FlaggedJson {
                        id: label(f.id),
                        text: &f.text,
                        // No recorded reason prints as "", as it always has.
                        failure_reason: f.failure_reason.as_ref().map_or("", |r| r.as_str()),
                        tasks: f.tasks,
                    })
                    .collect(),
            },
        };
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(());
    }
    let pairs = |list: &[crate::store::Tally]| {
        if list.is_empty() {
            "-".to_string()
        } else {
            list.iter()
                .map(|t| format!("{} {}", t.name, t.count))
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
    for f in &failing {
        writeln!(
            out,
            "    review {:<5} {} (given to {} tasks that all failed: {})",
            label(f.id),
            output::one_line(&f.text, 40),
            f.tasks,
            f.failure_reason
                .as_ref()
                .map_or("no reason", |r| r.as_str())
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
    for m in &most {
        writeln!(
            out,
            "  {:<5} {:>4}×  {}",
            label(m.id),
            m.injected,
            output::one_line(&m.text, 60)
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
