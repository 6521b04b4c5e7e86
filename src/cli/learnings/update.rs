//! `gza learnings update`: rebuild .gza/learnings.md now from recent completed tasks.

use std::io::{IsTerminal, Write};

use clap::Args;

use crate::cli::{Context, output, usage};
use crate::error::Error;
use crate::learn::rank::Ranker;
use crate::learn::regenerate;
use crate::learning::label;

#[derive(Debug, Args)]
pub(super) struct UpdateArgs {
    /// Learn from this many recent completed tasks (default: learnings.window_size).
    #[arg(long)]
    window: Option<u32>,
    /// Print the file that would be written and the calls that would be made; change nothing.
    #[arg(long)]
    dry_run: bool,
}

pub(super) fn update(ctx: &Context, args: UpdateArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let config = &project.config.learnings;
    let window = args.window.unwrap_or(config.window_size);
    if window == 0 {
        return Err(usage("--window must be at least 1"));
    }
    let client = crate::llm::client_for(config, &project.config.providers.claude.path)
        .map_err(Error::from)?;
    let provider = client.as_ref().map(|c| c.provider()).unwrap_or("none");
    let mut err = output::stderr();
    if std::io::stderr().is_terminal() && !args.dry_run {
        write!(
            err,
            "{}",
            output::paint(
                output::DIM,
                format!("Regenerating from up to {window} tasks ({provider})…")
            )
        )?;
        err.flush()?;
    }
    if !args.dry_run {
        // Work reverted since the last look is credited before the learnings are ranked.
        crate::learn::credit::scan_reverts(&project, &store);
    }
    let ranker = Ranker::deferred(&project);
    let report = regenerate::regenerate(
        &project,
        &store,
        client.as_deref(),
        Some(&ranker),
        regenerate::Options {
            window,
            dry_run: args.dry_run,
            extract: true,
            // A person asked: try the endpoint now, even while it is backing off.
            respect_backoff: false,
        },
    )?;
    if std::io::stderr().is_terminal() && !args.dry_run {
        write!(err, "\r\x1b[2K")?;
    }
    let mut out = output::stdout();
    let e = &report.edits;
    if args.dry_run {
        writeln!(
            out,
            "{}",
            output::paint(output::BOLD, "Dry run: nothing was written.")
        )?;
        if report.calls.is_empty() {
            writeln!(out, "Extraction calls: none needed")?;
            if !report.planned.is_empty() {
                let ids: Vec<String> = report.planned.iter().map(|i| i.to_string()).collect();
                writeln!(
                    out,
                    "Would take in the agents' own learnings from tasks {}",
                    ids.join(", ")
                )?;
            }
        } else {
            let ids: Vec<String> = report.calls.iter().map(|i| i.to_string()).collect();
            writeln!(
                out,
                "Extraction calls it would make ({provider}, {}): tasks {}",
                config.extraction_model,
                ids.join(", ")
            )?;
            writeln!(
                out,
                "The file below takes the agents' own lists in their place: what the calls teach is known only once they are made."
            )?;
        }
        if e.foreign.is_some() {
            writeln!(
                out,
                "{} is not a file gza wrote for this database: its new lines would be taken in as an agent's, and its changes to known learnings not at all",
                project.learnings_path().display()
            )?;
        }
        for (_, line) in &e.added {
            if e.foreign.is_some() {
                writeln!(out, "Would add its line: {line}")?;
            } else {
                writeln!(out, "Would add your line: {line}")?;
            }
        }
        for id in &e.deleted {
            writeln!(out, "Would archive {} (you deleted its line)", label(*id))?;
        }
        for (id, _) in &e.edited {
            writeln!(out, "Would take your edit of {}", label(*id))?;
        }
        writeln!(out, "--- {} would be:", project.learnings_path().display())?;
        write!(out, "{}", report.content)?;
        return Ok(());
    }
    crate::learn::validate_and_log(&project, &store);
    let r = &report.record;
    // Every call failed (not logged in, a dead endpoint): the file was still rebuilt, from the
    // agents' own lists, but the update did not do what was asked of it.
    let all_failed = !report.calls.is_empty() && report.failures.len() >= report.calls.len();
    writeln!(
        out,
        "{} Updated {}{}",
        if all_failed {
            output::paint(output::YELLOW, "!")
        } else {
            output::paint(output::GREEN, "✓")
        },
        project
            .learnings_path()
            .strip_prefix(&project.root)
            .unwrap_or(&project.learnings_path())
            .display(),
        if all_failed {
            " from the agents' own lists only: every extraction call failed"
        } else {
            ""
        }
    )?;
    writeln!(out, "  Tasks used:   {}", r.window_tasks)?;
    writeln!(
        out,
        "  Learnings:    {} (+{} / -{} / ={})",
        r.items, r.added, r.removed, r.kept
    )?;
    if report.confirmed > 0 {
        writeln!(
            out,
            "  Confirmed:    {} known learning(s) taught again",
            report.confirmed
        )?;
    }
    writeln!(
        out,
        "  LLM calls:    {} ({provider}; {} in / {} out tokens)",
        r.llm_calls, r.input_tokens, r.output_tokens
    )?;
    if e.foreign.is_some() {
        writeln!(
            out,
            "  Not yours:    the file was not one gza wrote for this database (a repository's, another person's or database's); {} new line(s) taken in as an agent's, its changes to known learnings not at all (see .gza/logs/learnings.log)",
            e.added.len()
        )?;
    } else if !e.added.is_empty() {
        writeln!(out, "  Yours:        {} added line(s) kept", e.added.len())?;
    }
    if !e.edited.is_empty() {
        writeln!(
            out,
            "  Edited:       {} line(s) you changed",
            e.edited.len()
        )?;
    }
    if !e.deleted.is_empty() {
        let ids: Vec<String> = e.deleted.iter().map(|i| label(*i)).collect();
        writeln!(
            out,
            "  Archived:     {} (you deleted their lines; `gza learnings restore` brings them back)",
            ids.join(", ")
        )?;
    }
    if let Some(bak) = &report.backup {
        writeln!(
            out,
            "  The old file could not be read as learnings; it was backed up to {bak}"
        )?;
    }
    for (id, e) in &report.failures {
        writeln!(
            output::stderr(),
            "{} task {id}: extraction failed ({e}); it is tried again next time",
            output::paint(output::YELLOW, "warning:")
        )?;
    }
    for note in regenerate::extraction_notes(&report) {
        writeln!(
            output::stderr(),
            "{} {note}",
            output::paint(output::YELLOW, "warning:")
        )?;
    }
    if all_failed {
        let first = report
            .failures
            .first()
            .map(|(_, e)| e.to_string())
            .unwrap_or_default();
        return Err(usage(format!(
            "every extraction call failed ({} of {}; the first: {first}); check learnings.extraction_provider and its login, key or endpoint (`gza learnings stats` shows which), then run `gza learnings update` again",
            report.failures.len(),
            report.calls.len()
        )));
    }
    Ok(())
}
