//! `gza watch`: run the queue and carry each code task's branch through review, improvement,
//! the verify gate and the merge, one line per event, until nothing can progress.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

use super::work::Teacher;
use super::work_ui::Ui;
use super::{Context, output, usage};
use crate::process;
use crate::runner::watch::{self, Event, Landed, Scope, WatchObserver, WatchOptions};
use crate::runner::{Finished, Observer, Status};
use crate::task::{Task, TaskId, TaskStatus};

/// Attention lines printed in the summary; the rest are counted.
const SHOWN_ATTENTION: usize = 20;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Only tasks in this group (the reviews and improve tasks watch queues join their task's
    /// group).
    #[arg(long, short = 'g', value_name = "GROUP")]
    group: Option<String>,
    #[command(flatten)]
    tags: super::tags::TagFilter,
    /// Run this many agents at once, each in its own worktree.
    #[arg(long, short = 'p', default_value_t = 1)]
    parallel: usize,
}

/// The runner's task lines and watch's events, on stdout.
struct WatchUi(Ui);

impl Observer for WatchUi {
    fn warn(&self, message: &str) {
        self.0.warn(message);
    }
    fn started(&self, task: &Task, provider: crate::config::ProviderKind) {
        self.0.started(task, provider);
    }
    fn progress(&self, id: TaskId, status: Status) {
        self.0.progress(id, status);
    }
    fn finished(&self, finished: &Finished) {
        self.0.finished(finished);
    }
}

impl WatchObserver for WatchUi {
    fn event(&self, event: &Event) {
        self.0.line(&event_line(event));
    }
}

/// One event as one line.
fn event_line(event: &Event) -> String {
    let ok = output::paint(output::GREEN, "✓");
    let arrow = output::paint(output::CYAN, "→");
    let bad = output::paint(output::RED, "✗");
    let attention = output::paint(output::YELLOW, "!");
    match event {
        Event::Start { branches, ready } => format!(
            "watching {} and {} ready to run (Ctrl-C stops; the next gza watch resumes)",
            plural(*branches as i64, "open branch", "open branches"),
            plural(*ready, "task", "tasks"),
        ),
        Event::QueuedReview { id, of, branch } => {
            format!("{arrow} queued review task {id} of task {of} ({branch})")
        }
        Event::QueuedImprove {
            id,
            owner,
            review,
            round,
            max,
            after_verify,
        } => {
            let why = if *after_verify {
                format!("review {review} approved but the verify failed")
            } else {
                format!("review {review} requested changes")
            };
            format!(
                "{arrow} queued improve task {id} for task {owner}: {why} (round {round} of {max})"
            )
        }
        Event::Retrying {
            failed,
            new,
            reason,
            resume,
        } => {
            let how = if *resume {
                "resumes its session"
            } else {
                "runs it again"
            };
            format!("{arrow} task {failed} failed with {reason}: task {new} {how}")
        }
        Event::Interrupted { id, continued_by } => format!(
            "{attention} task {id} was stopped; task {continued_by} continues it at the next gza watch"
        ),
        Event::Verifying { owner, branch } => {
            format!(
                "{} verifying task {owner}'s branch {branch}",
                output::paint(output::CYAN, "▶")
            )
        }
        Event::Verified {
            branch,
            verification: v,
            ..
        } => {
            let took = output::duration(v.duration_seconds);
            if v.outcome.passed() {
                format!(
                    "{ok} verify passed on {branch} at {} in {took}",
                    v.short_commit()
                )
            } else {
                let last = v
                    .output_tail
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| format!(": {}", output::one_line(l.trim(), 80)))
                    .unwrap_or_default();
                format!(
                    "{bad} verify {} on {branch} at {} after {took}{last}",
                    v.outcome.describe(),
                    v.short_commit()
                )
            }
        }
        Event::Rebased {
            owner,
            branch,
            onto,
        } => format!("{ok} rebased task {owner}'s branch {branch} onto {onto}, which moved"),
        Event::Merged { owner, merged } => {
            let deleted = match &merged.deletion {
                crate::branch::Deletion::Deleted(crate::branch::OnOrigin::Kept(why)) => {
                    format!("; branch deleted here, kept on origin: {why}")
                }
                crate::branch::Deletion::Deleted(_) => "; branch deleted".to_string(),
                crate::branch::Deletion::Kept(why) => format!("; branch kept: {why}"),
                crate::branch::Deletion::NotAsked => String::new(),
            };
            let hooks = if merged.hooks_skipped.is_empty() {
                String::new()
            } else {
                format!(
                    "; your git hooks did not run ({}): a hook may run what the branch changed",
                    merged.hooks_skipped.join(", ")
                )
            };
            format!(
                "{ok} merged {} into {} (task {owner}){deleted}{hooks}",
                merged.branch, merged.into
            )
        }
        Event::FoundMerged {
            owner,
            branch,
            into,
        } => format!(
            "{ok} {branch} (task {owner}) is already in {into}: merged outside gza; recorded"
        ),
        Event::PullRequest { owner, url } => {
            format!("{ok} opened a pull request for task {owner}: {url}")
        }
        Event::BackingOff {
            provider,
            seconds,
            why,
        } => format!(
            "{attention} pausing {} tasks for {seconds} s: {why}",
            provider.as_str()
        ),
        Event::Waiting { provider, seconds } => format!(
            "… waiting {seconds} s for {} (its tasks are paused; nothing else can run)",
            provider.as_str()
        ),
        Event::Attention { id, why } => {
            format!("{attention} needs you: task {id}: {why}")
        }
        Event::ProviderBroken { provider, why } => format!(
            "{attention} needs you: {}'s agent cannot start ({why}); its tasks stay pending",
            provider.as_str()
        ),
    }
}

fn plural(n: i64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

pub fn cmd_watch(ctx: &Context, args: WatchArgs) -> anyhow::Result<ExitCode> {
    let project = ctx.project()?;
    let limit = crate::config::MAX_CONCURRENT_LIMIT as usize;
    if args.parallel == 0 || args.parallel > limit {
        return Err(usage(format!(
            "--parallel must be between 1 and {limit} (max_concurrent in gza.yaml caps the agents running at once)"
        )));
    }
    if let Some(group) = &args.group {
        let (_, store) = ctx.open_for_reading()?;
        super::require_group(&store, group)?;
    }
    if !args.tags.tags.is_empty() {
        let (_, store) = ctx.open_for_reading()?;
        args.tags.require_known(&store)?;
    }
    // Batch work, as gza work's: before any thread starts, so every thread and process inherits it.
    gza_core::priority::lower(project.config.work_priority);
    process::install_stop_handler();
    super::logging::log_work_to(&project.logs_dir().join("work.log"));
    let options = WatchOptions {
        scope: Scope {
            group: args.group.clone(),
            tags: args.tags.tags.clone(),
            all_tags: args.tags.all_tags,
        },
        parallel: args.parallel,
        teacher: std::sync::Arc::new(Teacher),
    };
    let ui = WatchUi(Ui::for_watch());
    let summary = watch::watch(&project, &options, &ui)?;

    let mut out = output::stdout();
    let completed = summary
        .finished
        .iter()
        .filter(|f| f.state.status() == TaskStatus::Completed)
        .count();
    let failed = summary.finished.len() - completed;
    let passed = summary.verified.iter().filter(|(_, p)| *p).count();
    let merged = summary
        .landed
        .iter()
        .filter(|l| matches!(l, Landed::Merged { .. }))
        .count();
    let prs = summary.landed.len() - merged;
    let mut parts = vec![format!(
        "{} run ({completed} completed, {failed} failed)",
        plural(summary.finished.len() as i64, "task", "tasks")
    )];
    if !summary.verified.is_empty() {
        parts.push(format!(
            "{} ({passed} passed)",
            plural(summary.verified.len() as i64, "verify run", "verify runs")
        ));
    }
    parts.push(format!(
        "{} merged",
        plural(merged as i64, "branch", "branches")
    ));
    if prs > 0 {
        parts.push(plural(
            prs as i64,
            "pull request opened",
            "pull requests opened",
        ));
    }
    let cost: f64 = summary
        .finished
        .iter()
        .filter_map(|f| f.usage.cost_usd)
        .sum();
    if summary.finished.iter().any(|f| f.usage.cost_usd.is_some()) {
        parts.push(format!("{} spent", output::cost(Some(cost))));
    }
    let ending = if summary.interrupted {
        "stopped; `gza watch` resumes"
    } else if summary.attention.is_empty() && summary.broken_providers.is_empty() {
        "nothing left to do"
    } else {
        "nothing else can progress without you"
    };
    writeln!(out, "watch: {}; {ending}", parts.join(", "))?;
    for (id, why) in summary.attention.iter().take(SHOWN_ATTENTION) {
        writeln!(out, "  needs you: task {id}: {why}")?;
    }
    if summary.attention.len() > SHOWN_ATTENTION {
        writeln!(
            out,
            "  … and {} more (listed above as they were found)",
            summary.attention.len() - SHOWN_ATTENTION
        )?;
    }
    for (provider, why) in &summary.broken_providers {
        writeln!(
            out,
            "  needs you: {}'s agent cannot start ({why}); fix it, or `gza edit ID --provider …`",
            provider.as_str()
        )?;
    }
    let left = summary.left;
    if left.ready + left.blocked > 0 && !summary.interrupted {
        let mut line = format!(
            "  left pending: {}",
            plural(left.ready + left.blocked, "task", "tasks")
        );
        if left.blocked > 0 {
            line.push_str(&format!(
                " ({} on a task that did not complete; `gza next --all` shows them)",
                plural(left.blocked, "waits", "wait")
            ));
        }
        writeln!(out, "{line}")?;
    }
    Ok(if summary.interrupted {
        ExitCode::from(130)
    } else if !summary.attention.is_empty() || !summary.broken_providers.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
