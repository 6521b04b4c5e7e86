//! `gza show`: one task in full.

use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::prompt::build_prompt;
use crate::store::Injection;
use crate::task::{ReviewVerdict, Task, TaskId, TaskStatus, TaskType};
use crate::time;

/// Output lines shown before cutting, unless --full.
const OUTPUT_PREVIEW_LINES: usize = 40;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The task to show.
    id: TaskId,
    /// Print JSON for scripts.
    #[arg(long, conflicts_with = "prompt")]
    json: bool,
    /// Print the prompt `gza work` would send (or sent), secrets redacted.
    #[arg(long)]
    prompt: bool,
    /// Show all of the output, however long.
    #[arg(long)]
    full: bool,
}

impl ShowArgs {
    /// `gza show ID --prompt`.
    pub fn prompt_of(id: TaskId) -> Self {
        ShowArgs {
            id,
            json: false,
            prompt: true,
            full: false,
        }
    }
}

pub fn cmd_show(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let task = store.get_task(args.id)?;
    let mut out = output::stdout();
    // What is shown is redacted, whatever is stored: a prompt is the person's own text, and a
    // record written by an older gza may hold what this one would redact.
    if args.json {
        let mut value = serde_json::to_value(&task)?;
        // Tags and comments only where there are some, so the record of a task without them is
        // what it always was.
        if let serde_json::Value::Object(map) = &mut value {
            let tags = store.tags_of(task.id)?;
            if !tags.is_empty() {
                map.insert("tags".into(), serde_json::to_value(&tags)?);
            }
            let comments = store.comments_on(task.id)?;
            if !comments.is_empty() {
                map.insert("comments".into(), serde_json::to_value(&comments)?);
            }
            if let Some(push) = branch_push(&store, &task) {
                map.insert("push".into(), serde_json::to_value(&push)?);
            }
        }
        crate::redact::redact_json_value(&mut value);
        serde_json::to_writer_pretty(&mut out, &value)?;
        writeln!(out)?;
        return Ok(());
    }
    if args.prompt {
        // What was sent, when the task has run; otherwise what `gza work` would send now.
        let text = match store.prompt_sent(task.id)? {
            Some(sent) => sent,
            None => {
                let learnings = crate::learn::learnings_for_prompt(
                    &project,
                    &store,
                    &task,
                    crate::learn::Selection::Preview,
                );
                let shown = crate::review::task_for_prompt(&project, &store, &task)?;
                build_prompt(&project, &shown, learnings.as_ref())?
            }
        };
        writeln!(out, "{}", crate::redact::redact(&text))?;
        return Ok(());
    }
    let reviews = if task.task_type.changes_code() {
        let owner = crate::review::branch_owner(&store, &task)?;
        store.reviews_of_branch(owner.id)?
    } else {
        Vec::new()
    };
    let given = store.task_injections(task.id)?;
    let provider = crate::runner::provider_of(&project, &task);
    let notes = Notes {
        tags: store.tags_of(task.id)?,
        comments: store.comments_on(task.id)?,
        checks: verify_shown(&project, &store, &task)?,
        push: branch_push(&store, &task),
        rerank: store.task_rerank(task.id)?,
    };
    print_task(
        &mut out,
        &task,
        provider.as_str(),
        args.full,
        &given,
        &reviews,
        &notes,
    )?;
    Ok(())
}

/// What the rerank did: `chose L3, L1 of 10 candidates (412 ms)`, `chose none of 10
/// candidates`, `fell back to the ranker's choice: WHY`.
fn rerank_line(r: &crate::store::Rerank) -> String {
    use crate::store::RerankOutcome;
    let of = format!(
        "{} candidate{}",
        r.candidates,
        if r.candidates == 1 { "" } else { "s" }
    );
    match &r.outcome {
        RerankOutcome::Chosen(chosen) => {
            let ids: Vec<String> = chosen
                .iter()
                .map(|id| crate::learning::label(*id))
                .collect();
            format!("chose {} of {of} ({} ms)", ids.join(", "), r.ms)
        }
        RerankOutcome::None => format!("chose none of {of} ({} ms)", r.ms),
        RerankOutcome::Fallback(why) => format!(
            "fell back to the ranker's choice after {} ms: {}",
            r.ms,
            crate::redact::one_clean_line(if why.is_empty() { "unknown" } else { why })
        ),
    }
}

/// What people noted on a task (its tags and comments), and what its verify says.
struct Notes {
    tags: Vec<crate::task::Tag>,
    comments: Vec<crate::store::Comment>,
    checks: Option<VerifyShown>,
    /// How the last push of its branch to origin went (team mode), if gza pushed it.
    push: Option<crate::store::BranchPush>,
    /// What the rerank (`learnings.rerank: extraction`) did for it, if it ran.
    rerank: Option<crate::store::Rerank>,
}

/// How the last push of `task`'s branch went, when gza pushed it (team mode).
fn branch_push(store: &crate::store::Store, task: &Task) -> Option<crate::store::BranchPush> {
    store.branch_push(task.branch.as_deref()?).ok().flatten()
}

/// What `show` says of a code task's verify: the line, and a failed run's end of output.
struct VerifyShown {
    line: String,
    tail: Option<String>,
}

/// The latest verify run of `task`'s branch as it stands now (passed, failed, or stale when the
/// branch moved since), or that none ran when the project has a verify command.
fn verify_shown(
    project: &crate::project::Project,
    store: &crate::store::Store,
    task: &Task,
) -> anyhow::Result<Option<VerifyShown>> {
    use crate::verify::VerifyState;
    if !task.task_type.changes_code() || task.branch.is_none() {
        return Ok(None);
    }
    let owner = crate::review::branch_owner(store, task)?;
    let Some(v) = store.latest_verification(owner.id)? else {
        let configured = project
            .config
            .verify
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty());
        return Ok(
            (configured && task.status() == TaskStatus::Completed && task.merged.is_none()).then(
                || VerifyShown {
                    line: format!("not run (`gza verify {}` runs it)", task.id),
                    tail: None,
                },
            ),
        );
    };
    let tip = owner
        .branch
        .as_deref()
        .and_then(|b| crate::worktree::resolve(&project.root, b));
    let took = output::duration(v.duration_seconds);
    let at = format!("at {} in {took}, {}", v.short_commit(), time::to_db(&v.at));
    let shown = match v.state(tip.as_deref()) {
        VerifyState::Passed => VerifyShown {
            line: format!("{} {at}", output::paint(output::GREEN, "passed")),
            tail: None,
        },
        VerifyState::Failed => VerifyShown {
            line: format!("{} {at}", output::paint(output::RED, v.outcome.describe())),
            tail: Some(v.output_tail.clone()),
        },
        VerifyState::Stale => VerifyShown {
            line: format!(
                "{}: {} {at}; the branch moved since (`gza verify {}` checks its tip)",
                output::paint(output::YELLOW, "stale"),
                v.outcome.describe(),
                task.id
            ),
            tail: None,
        },
    };
    Ok(Some(shown))
}

fn print_task(
    out: &mut impl Write,
    t: &Task,
    provider: &str,
    full: bool,
    given: &[Injection],
    reviews: &[Task],
    notes: &Notes,
) -> std::io::Result<()> {
    let checks = notes.checks.as_ref();
    let rule = "-".repeat(50);
    writeln!(
        out,
        "{}",
        output::paint(output::BOLD, format!("Task {}", t.id))
    )?;
    writeln!(out, "{}", "=".repeat(50))?;
    let status = output::paint(output::status_style(t.status()), t.status());
    field(out, "Status", Some(status))?;
    if t.status() == TaskStatus::Failed {
        field(
            out,
            "Failure reason",
            Some(
                t.failure_reason()
                    .map_or("UNKNOWN".into(), |r| r.to_string()),
            ),
        )?;
    }
    field(out, "Type", Some(t.task_type.to_string()))?;
    field(
        out,
        "Provider",
        // The provider it runs (or ran) with: its own, or the settings' default then.
        Some(match &t.provider {
            Some(own) => own.clone(),
            None => format!("{provider} (the default in the settings)"),
        }),
    )?;
    field(
        out,
        "Model",
        Some(t.model.clone().unwrap_or("- (gza.yaml)".into())),
    )?;
    field(out, "Based on", t.based_on.map(|id| format!("task {id}")))?;
    field(
        out,
        "Depends on",
        t.depends_on.map(|id| format!("task {id}")),
    )?;
    field(out, "Group", t.group.clone())?;
    let tags: Vec<&str> = notes.tags.iter().map(|t| t.as_str()).collect();
    field(out, "Tags", (!tags.is_empty()).then(|| tags.join(", ")))?;
    field(out, "Spec", t.spec.clone())?;
    field(out, "Urgent", t.urgent.then(|| "yes".to_string()))?;
    let ids: Vec<String> = given
        .iter()
        .map(|given| crate::learning::label(given.learning))
        .collect();
    let ids = if ids.is_empty() {
        String::new()
    } else {
        format!(" ({})", ids.join(", "))
    };
    let learnings = match (t.skip_learnings, t.learnings_version) {
        (true, _) => "skipped (--no-learnings)".to_string(),
        (false, Some(v)) => format!("given version {v}{ids}; learned from"),
        (false, None) if !ids.is_empty() => format!("given{ids}; learned from"),
        (false, None) => "injected and learned from".to_string(),
    };
    field(out, "Learnings", Some(learnings))?;
    field(out, "Rerank", notes.rerank.as_ref().map(rerank_line))?;
    field(out, "Branch", t.branch.clone())?;
    let base = match (t.base_branch(), t.base_commit()) {
        (Some(b), Some(c)) => Some(format!("{b} at {}", c.get(..10).unwrap_or(c))),
        (None, Some(c)) => Some(c.get(..10).unwrap_or(c).to_string()),
        _ => None,
    };
    field(out, "Base", base)?;
    // Written by whichever machine pushed: shown as one line of plain text.
    let push = notes.push.as_ref().map(|p| {
        let clean = crate::redact::one_clean_line;
        let tip = clean(p.tip.get(..10).unwrap_or(&p.tip));
        let host = clean(&p.host);
        match &p.error {
            None => format!("on origin at {tip} (pushed from {host})"),
            Some(e) => output::paint(
                output::YELLOW,
                format!(
                    "failed from {host} at {tip}: {}; run `git push origin {}` there",
                    clean(e),
                    clean(&p.branch)
                ),
            ),
        }
    });
    field(out, "Push", push)?;
    if t.task_type == TaskType::Review && t.status() == TaskStatus::Completed {
        let verdict = t
            .review_verdict()
            .map(|v| output::paint(verdict_style(v), v))
            .unwrap_or_else(|| "none found in the review's output".into());
        field(out, "Verdict", Some(verdict))?;
    }
    if !reviews.is_empty() {
        let list: Vec<String> = reviews
            .iter()
            .map(|r| match r.review_verdict() {
                Some(v) => format!("task {} {}", r.id, output::paint(verdict_style(v), v)),
                None => format!("task {} ({})", r.id, r.status()),
            })
            .collect();
        field(out, "Reviews", Some(list.join(", ")))?;
    }
    field(out, "Verify", checks.map(|c| c.line.clone()))?;
    field(
        out,
        "Merged",
        t.merged
            .as_ref()
            .map(|m| format!("into {} at {}", m.into, time::to_db(&m.at))),
    )?;
    field(out, "Pull request", t.pr_url.clone())?;
    field(out, "Changes", t.diff_stats.clone())?;
    field(out, "Worktree", t.worktree.clone())?;
    field(out, "Report", t.report_file.clone())?;
    field(out, "Log", t.log_file.clone())?;
    field(out, "Session ID", t.session_id.clone())?;
    field(out, "Created", Some(time::to_db(&t.created_at)))?;
    field(
        out,
        "Started",
        t.state.started_at().as_ref().map(time::to_db),
    )?;
    field(
        out,
        "Completed",
        t.state.completed_at().as_ref().map(time::to_db),
    )?;
    field(out, "PID", t.state.worker().map(|w| w.pid.to_string()))?;
    let usage = &t.usage;
    if usage.duration_seconds.is_some() || usage.cost_usd.is_some() || usage.num_turns.is_some() {
        let stats = format!(
            "{} | {} turns | {} | {} in / {} out tokens",
            output::duration(usage.duration_seconds),
            usage.num_turns.map(|n| n.to_string()).unwrap_or("-".into()),
            output::cost(usage.cost_usd),
            usage
                .input_tokens
                .map(|n| n.to_string())
                .unwrap_or("-".into()),
            usage
                .output_tokens
                .map(|n| n.to_string())
                .unwrap_or("-".into()),
        );
        field(out, "Stats", Some(stats))?;
    }
    writeln!(
        out,
        "\nPrompt:\n{rule}\n{}\n{rule}",
        crate::redact::redact(t.prompt.trim_end())
    )?;
    if let Some(tail) = checks
        .and_then(|c| c.tail.as_deref())
        .filter(|t| !t.trim().is_empty())
    {
        writeln!(
            out,
            "\nVerify output (the end):\n{rule}\n{}\n{rule}",
            crate::redact::redact(tail.trim_end())
        )?;
    }
    let output = t.output.as_deref().map(crate::redact::redact);
    if let Some(text) = output.as_deref().filter(|o| !o.trim().is_empty()) {
        writeln!(out, "\nOutput:\n{rule}")?;
        let lines: Vec<&str> = text.trim_end().lines().collect();
        if full || lines.len() <= OUTPUT_PREVIEW_LINES {
            writeln!(out, "{}", lines.join("\n"))?;
        } else {
            writeln!(out, "{}", lines[..OUTPUT_PREVIEW_LINES].join("\n"))?;
            let more = lines.len() - OUTPUT_PREVIEW_LINES;
            writeln!(
                out,
                "{}",
                output::paint(
                    output::DIM,
                    format!("(… {more} more lines: gza show {} --full)", t.id)
                )
            )?;
        }
        writeln!(out, "{rule}")?;
    }
    if !notes.comments.is_empty() {
        writeln!(out, "\nComments:\n{rule}")?;
        for c in &notes.comments {
            let by = c
                .author
                .as_deref()
                .map(|a| format!("  {a}"))
                .unwrap_or_default();
            let state = match c.addressed_by {
                None => output::paint(output::YELLOW, "open"),
                Some(a) if c.is_open() => output::paint(
                    output::YELLOW,
                    format!(
                        "open; given to task {}, which {}",
                        a.task,
                        a.status.as_phrase()
                    ),
                ),
                Some(a) => output::paint(output::GREEN, format!("addressed by task {}", a.task)),
            };
            writeln!(
                out,
                "{}  {}{by}  ({state})\n{}",
                output::paint(output::BOLD, format!("Comment {}", c.id)),
                output::short_time(&time::to_db(&c.created_at)),
                crate::redact::redact(c.text.trim_end())
            )?;
        }
        writeln!(out, "{rule}")?;
    }
    Ok(())
}

/// The colour of a verdict.
pub(crate) fn verdict_style(v: ReviewVerdict) -> anstyle::Style {
    match v {
        ReviewVerdict::Approved => output::GREEN,
        ReviewVerdict::ApprovedWithFollowups => output::CYAN,
        ReviewVerdict::ChangesRequested => output::YELLOW,
    }
}

fn field(out: &mut impl Write, name: &str, value: Option<String>) -> std::io::Result<()> {
    match value {
        Some(v) => writeln!(out, "{:<16}{v}", format!("{name}:")),
        None => Ok(()),
    }
}
