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
    outcomes: OutcomesJson<'a>,
    rerank: RerankJson<'a>,
}

/// `learnings.rerank` and what it did for the newest tasks it ran for.
#[derive(Serialize)]
struct RerankJson<'a> {
    mode: crate::config::RerankMode,
    /// The newest reranked tasks counted.
    window_tasks: u32,
    #[serde(flatten)]
    summary: &'a crate::store::RerankSummary,
}

/// The measures seed 000 names, and what outcomes taught.
#[derive(Serialize)]
struct OutcomesJson<'a> {
    /// Every credited task: the prior each learning's record is measured against.
    base_rate: BaseRateJson,
    /// The newest finished tasks the measures are taken over.
    window_tasks: u32,
    /// Injection rate and usage over that window.
    measures: &'a crate::store::Measures,
    /// Agent sessions (outside `gza work`) that hooks gave learnings to, all time, counted up
    /// to `store::SESSIONS_COUNTED`.
    sessions_given: i64,
    /// There are more sessions than `sessions_given` (counting stops there).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    sessions_given_capped: bool,
    /// Learnings created in each of the last four weeks, oldest first.
    growth_per_week: &'a [i64],
    ratings: RatingsJson<'a>,
    /// Learnings whose tasks keep going wrong (outcomes and ratings), each with its record
    /// and evidence: which tasks, how they ended, what people said.
    flagged: &'a [crate::learn::credit::Flag],
}

#[derive(Serialize)]
struct BaseRateJson {
    helpful: i64,
    harmful: i64,
    rate: f64,
}

#[derive(Serialize)]
struct RatingsJson<'a> {
    up: i64,
    down: i64,
    latest: Vec<RatingJson<'a>>,
}

#[derive(Serialize)]
struct RatingJson<'a> {
    id: String,
    rating: &'a str,
    why: Option<&'a str>,
    at: &'a str,
}

#[derive(Serialize)]
struct Injected<'a> {
    id: String,
    text: &'a str,
    /// Outside A/B runs, as `learnings show` counts.
    injected: i64,
    /// In A/B runs: experiments, counted apart.
    injected_in_ab_runs: i64,
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

/// A learning given to 3 or more finished tasks that all failed the same way, as this list has
/// always printed it (the flags by outcome, with their evidence, are `outcomes.flagged`).
#[derive(Serialize)]
struct FlaggedJson<'a> {
    id: String,
    text: &'a str,
    failure_reason: &'a str,
    tasks: i64,
}

/// The newest finished tasks `learnings stats` measures injection rate and usage over.
const MEASURE_WINDOW: u32 = 200;
/// Weeks of growth shown.
const GROWTH_WEEKS: u32 = 4;

pub(super) fn stats(ctx: &Context, args: StatsArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let _snapshot = super::SnapshotAfter::new(&project, &store);
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
    // Read once for the stale and the decayed (each read counts every learning's injections).
    let all = store.learnings(false)?;
    let stale: Vec<Learning> = all
        .iter()
        .filter(|l| l.lifecycle.stale_reason.is_some())
        .cloned()
        .collect();
    let flags = crate::learn::credit::flagged_learnings(&store)?;
    // Tasks whose agent's provider failed (an expired key, an outage) all fail alike whatever
    // they were given: with `inject: file` every learning in the file would be listed with the
    // same evidence. They say nothing about the learnings (outcomes credit none with them).
    let failing: Vec<_> = store
        .failing_learnings()?
        .into_iter()
        .filter(|f| {
            !f.failure_reason
                .as_ref()
                .is_some_and(|r| r.is_provider_failure())
        })
        .collect();
    let now = chrono::Utc::now();
    let base = store.base_rate()?;
    let measures = store.outcome_measures(MEASURE_WINDOW)?;
    let growth = store.learnings_per_week(now, GROWTH_WEEKS)?;
    let (rated_up, rated_down) = store.rating_totals()?;
    let ratings = store.ratings(None, 3)?;
    let reranks = store.rerank_summary(MEASURE_WINDOW)?;
    let backoff = store.extraction_backoff()?;
    let backing_off = crate::learn::backoff::active_until(&backoff, now);
    let decayed: Vec<Learning> = all
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
                    injected_in_ab_runs: m.in_ab_runs,
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
            outcomes: OutcomesJson {
                base_rate: BaseRateJson {
                    helpful: base.helpful,
                    harmful: base.harmful,
                    rate: crate::learn::credit::base_rate(&base),
                },
                window_tasks: MEASURE_WINDOW,
                measures: &measures,
                sessions_given: totals.sessions,
                sessions_given_capped: totals.more_sessions,
                growth_per_week: &growth,
                ratings: RatingsJson {
                    up: rated_up,
                    down: rated_down,
                    latest: ratings
                        .iter()
                        .map(|r| RatingJson {
                            id: label(r.learning),
                            rating: &r.rating,
                            why: r.why.as_deref(),
                            at: &r.at,
                        })
                        .collect(),
                },
                flagged: &flags,
            },
            rerank: RerankJson {
                mode: config.rerank,
                window_tasks: MEASURE_WINDOW,
                summary: &reranks,
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
    for f in &flags {
        write_flag(&mut out, f)?;
    }
    // All failed alike, and outcomes have not judged it (its failures were a person's or the
    // machine's, KILLED say): listed as it always was. A learning outcomes have judged is
    // flagged above or, its record or people's ratings outweighing the failures, not at all.
    let judged: std::collections::HashSet<i64> = store
        .credit_counts(&failing.iter().map(|f| f.id).collect::<Vec<_>>())?
        .into_iter()
        .filter(|(_, c)| c.harmful > 0 || c.rated_up + c.rated_down > 0)
        .map(|(id, _)| id)
        .collect();
    for f in failing.iter().filter(|f| !judged.contains(&f.id)) {
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
        sessions_counted(&totals)
    )?;
    if totals.injections_in_ab_runs > 0 {
        writeln!(
            out,
            "  {} of them in A/B runs (`gza ab`): experiments, counted apart in every count below and in `learnings show`",
            totals.injections_in_ab_runs
        )?;
    }
    for m in &most {
        let ab = if m.in_ab_runs > 0 {
            format!(" (and {} in A/B runs)", m.in_ab_runs)
        } else {
            String::new()
        };
        writeln!(
            out,
            "  {:<5} {:>4}×  {}{ab}",
            label(m.id),
            m.injected,
            output::one_line(&m.text, 60)
        )?;
    }
    if config.rerank != crate::config::RerankMode::Off || reranks.tasks > 0 {
        write_reranks(&mut out, config, &reranks)?;
    }
    write_outcomes(
        &mut out,
        &base,
        &measures,
        &sessions_counted(&totals),
        &growth,
        (rated_up, rated_down),
        &ratings,
    )?;
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

/// What the rerank did for the newest tasks it ran for.
fn write_reranks(
    out: &mut impl Write,
    config: &crate::config::LearningsConfig,
    r: &crate::store::RerankSummary,
) -> anyhow::Result<()> {
    let mode = match config.rerank {
        crate::config::RerankMode::Off => "off",
        crate::config::RerankMode::Extraction => "extraction",
    };
    writeln!(
        out,
        "Rerank:             {mode}; the newest {} reranked tasks: {} given the model's choice, {} given none by it, {} the ranker's (fell back); {} ms a call on average, {} in / {} out tokens",
        r.tasks, r.chosen, r.none, r.fallback, r.mean_ms, r.input_tokens, r.output_tokens
    )?;
    if let Some(why) = &r.last_fallback {
        writeln!(out, "  last fallback:    {}", output::one_line(why, 100))?;
    }
    Ok(())
}

/// A flagged learning and its evidence: which tasks, how they ended, what people said.
fn write_flag(out: &mut impl Write, f: &crate::learn::credit::Flag) -> anyhow::Result<()> {
    let c = &f.counts;
    match f.common_failure() {
        Some(reason) => writeln!(
            out,
            "    review {:<5} {} (given to {} tasks that all failed: {reason}); ranks ×{:.2}",
            label(f.id),
            output::one_line(&f.text, 40),
            c.harmful,
            f.factor
        )?,
        None => {
            let mut record = format!("{} harmful, {} helpful tasks", c.harmful, c.helpful);
            if c.rated_up + c.rated_down > 0 {
                record.push_str(&format!("; rated {} up, {} down", c.rated_up, c.rated_down));
            }
            writeln!(
                out,
                "    review {:<5} {} ({record}); ranks ×{:.2}",
                label(f.id),
                output::one_line(&f.text, 40),
                f.factor
            )?
        }
    }
    write_flag_evidence(out, f, "      ", Some(60))?;
    Ok(())
}

/// A flag's evidence, a line each, after `indent`: the tasks and how they ended, then the
/// ratings with their reasons (cut to `why_width` columns when given).
pub(super) fn write_flag_evidence(
    out: &mut impl Write,
    f: &crate::learn::credit::Flag,
    indent: &str,
    why_width: Option<usize>,
) -> std::io::Result<()> {
    for t in &f.evidence {
        writeln!(
            out,
            "{indent}task {}: {}",
            t.ending.task,
            t.ending.describe()
        )?;
    }
    for r in &f.ratings {
        let why = match (r.why.as_deref(), why_width) {
            (Some(w), Some(width)) => format!(": {}", output::one_line(w, width)),
            (Some(w), None) => format!(": {w}"),
            (None, _) => String::new(),
        };
        let by = if r.by.is_empty() {
            String::new()
        } else {
            format!(" by {}", r.by)
        };
        writeln!(out, "{indent}rated {}{by}{why} ({})", r.rating, r.at)?;
    }
    Ok(())
}

/// The sessions given learnings, as counted: "over N" past the count's cap (counting every
/// session would cost a step per session, growing with the history).
fn sessions_counted(totals: &crate::store::LearningsTotals) -> String {
    if totals.more_sessions {
        format!("over {}", totals.sessions)
    } else {
        totals.sessions.to_string()
    }
}

/// The measures seed 000 names: injection rate, usage, growth and feedback.
fn write_outcomes(
    out: &mut impl Write,
    base: &crate::store::BaseRate,
    m: &crate::store::Measures,
    sessions: &str,
    growth: &[i64],
    (up, down): (i64, i64),
    latest: &[crate::store::Rating],
) -> anyhow::Result<()> {
    let percent = |part: i64, whole: i64| {
        if whole == 0 {
            "-".to_string()
        } else {
            format!("{:.0}%", 100.0 * part as f64 / whole as f64)
        }
    };
    writeln!(
        out,
        "Outcomes:           base rate {:.0}% from the finished tasks counted for it, with learnings or without ({} helpful, {} harmful)",
        100.0 * crate::learn::credit::base_rate(base),
        base.helpful,
        base.harmful,
    )?;
    writeln!(
        out,
        "  injection rate:   {} of the last {} finished tasks given learnings ({}); {sessions} agent sessions given learnings by hooks",
        m.given,
        m.tasks,
        percent(m.given, m.tasks)
    )?;
    let given = m.given_helpful + m.given_harmful;
    let not_given = m.not_given_helpful + m.not_given_harmful;
    if given == 0 {
        // Nothing was credited to any learning: no helpful or harmful figure for them to show.
        writeln!(
            out,
            "  usage:            no finished task was given learnings, so none has credit yet; helpful {} of tasks without ({} of {not_given})",
            percent(m.not_given_helpful, not_given),
            m.not_given_helpful,
        )?;
    } else {
        writeln!(
            out,
            "  usage:            helpful {} of tasks given learnings ({} of {given}), {} of tasks without ({} of {not_given}); observed, not controlled: the tasks given learnings are not the tasks without",
            percent(m.given_helpful, given),
            m.given_helpful,
            percent(m.not_given_helpful, not_given),
            m.not_given_helpful,
        )?;
    }
    let weeks: Vec<String> = growth.iter().map(|n| format!("+{n}")).collect();
    writeln!(
        out,
        "  growth:           {} learnings a week (the last {} weeks, oldest first)",
        weeks.join(" "),
        growth.len()
    )?;
    let mut feedback = format!("{up} up, {down} down");
    if let Some(r) = latest.first() {
        let why = r
            .why
            .as_deref()
            .map(|w| format!(" \"{}\"", output::one_line(w, 50)))
            .unwrap_or_default();
        feedback.push_str(&format!(
            "; latest {} {}{why} ({})",
            label(r.learning),
            r.rating,
            r.at
        ));
    }
    writeln!(
        out,
        "  feedback:         {feedback} (`gza learnings rate ID up|down --why …`)"
    )?;
    Ok(())
}
