//! `gza learnings`: see, rebuild, curate and clear what finished tasks taught.

use std::io::{IsTerminal, Write};

use clap::{Args, Subcommand};

use super::{Context, output, usage};
use crate::error::Error;
use crate::learn::{items, regenerate};

#[derive(Debug, Args)]
pub struct LearningsArgs {
    #[command(subcommand)]
    command: LearningsCommand,
}

#[derive(Debug, Subcommand)]
enum LearningsCommand {
    /// Rebuild .gza/learnings.md now from recent completed tasks.
    Update(UpdateArgs),
    /// Print .gza/learnings.md.
    Show(ShowArgs),
    /// Pin a learning: it stays in every regeneration until you delete its line from the file.
    Add(AddArgs),
    /// Delete the file, every stored learning and the regeneration history.
    Clear(ClearArgs),
    /// Counts, extraction provider, last regeneration, and calls and tokens spent.
    Stats(StatsArgs),
}

#[derive(Debug, Args)]
struct UpdateArgs {
    /// Learn from this many recent completed tasks (default: learnings.window_size).
    #[arg(long)]
    window: Option<u32>,
    /// Print the file that would be written and the calls that would be made; change nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// Page through the file with $PAGER (on a terminal).
    #[arg(long)]
    pager: bool,
}

#[derive(Debug, Args)]
struct AddArgs {
    /// The learning (at most 20 words).
    text: String,
    /// Its section (default: the last configured section).
    #[arg(long, short = 's')]
    section: Option<String>,
}

#[derive(Debug, Args)]
struct ClearArgs {
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    yes: bool,
}

#[derive(Debug, Args)]
struct StatsArgs {
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn cmd_learnings(ctx: &Context, args: LearningsArgs) -> anyhow::Result<()> {
    match args.command {
        LearningsCommand::Update(a) => update(ctx, a),
        LearningsCommand::Show(a) => show(ctx, a),
        LearningsCommand::Add(a) => add(ctx, a),
        LearningsCommand::Clear(a) => clear(ctx, a),
        LearningsCommand::Stats(a) => stats(ctx, a),
    }
}

fn update(ctx: &Context, args: UpdateArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let config = &project.config.learnings;
    let window = args.window.unwrap_or(config.window_size);
    if window == 0 {
        return Err(usage("--window must be at least 1"));
    }
    let client = crate::llm::client_for(config, &project.config.providers.claude.path)
        .map_err(Error::Usage)?;
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
    let report = regenerate::regenerate(
        &project,
        &store,
        client.as_deref(),
        regenerate::Options {
            window,
            dry_run: args.dry_run,
        },
    )?;
    if std::io::stderr().is_terminal() && !args.dry_run {
        write!(err, "\r\x1b[2K")?;
    }
    let mut out = output::stdout();
    if args.dry_run {
        writeln!(
            out,
            "{}",
            output::paint(output::BOLD, "Dry run: nothing was written.")
        )?;
        if report.calls.is_empty() {
            writeln!(out, "Extraction calls: none needed")?;
        } else {
            let ids: Vec<String> = report.calls.iter().map(|i| i.to_string()).collect();
            writeln!(
                out,
                "Extraction calls it would make ({provider}, {}): tasks {}",
                config.extraction_model,
                ids.join(", ")
            )?;
        }
        for line in &report.pinned {
            writeln!(out, "Would pin your line: {line}")?;
        }
        for line in &report.suppressed {
            writeln!(out, "Would keep out your deleted line: {line}")?;
        }
        writeln!(out, "--- {} would be:", project.learnings_path().display())?;
        write!(out, "{}", report.content)?;
        return Ok(());
    }
    let r = &report.record;
    writeln!(
        out,
        "{} Updated {}",
        output::paint(output::GREEN, "✓"),
        project
            .learnings_path()
            .strip_prefix(&project.root)
            .unwrap_or(&project.learnings_path())
            .display()
    )?;
    writeln!(out, "  Tasks used:   {}", r.window_tasks)?;
    writeln!(
        out,
        "  Learnings:    {} (+{} / -{} / ={})",
        r.items, r.added, r.removed, r.kept
    )?;
    writeln!(
        out,
        "  LLM calls:    {} ({provider}; {} in / {} out tokens)",
        r.llm_calls, r.input_tokens, r.output_tokens
    )?;
    if !report.pinned.is_empty() {
        writeln!(out, "  Pinned your:  {} added line(s)", report.pinned.len())?;
    }
    if !report.suppressed.is_empty() {
        writeln!(
            out,
            "  Kept out:     {} line(s) you deleted",
            report.suppressed.len()
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
    Ok(())
}

fn show(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let project = ctx.project()?;
    let path = project.learnings_path();
    let text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            writeln!(
                output::stdout(),
                "No learnings yet: {} appears after `gza learnings update` or every {} completed tasks",
                path.display(),
                project.config.learnings.regenerate_every
            )?;
            return Ok(());
        }
        Err(e) => return Err(Error::io(&path, "read", e).into()),
    };
    if args.pager && std::io::stdout().is_terminal() {
        let pager = std::env::var("PAGER").unwrap_or_else(|_| "less".into());
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(&pager)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| usage(format!("cannot start pager `{pager}`: {e}")))?;
        let _ = child
            .stdin
            .take()
            .expect("piped")
            .write_all(text.as_bytes());
        child.wait()?;
        return Ok(());
    }
    write!(output::stdout(), "{text}")?;
    Ok(())
}

fn add(ctx: &Context, args: AddArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let sections = &project.config.learnings.sections;
    let section = items::section_named(args.section.as_deref().unwrap_or(""), sections);
    if let Some(s) = &args.section
        && !sections.iter().any(|c| c.eq_ignore_ascii_case(s))
    {
        return Err(usage(format!(
            "unknown section {s:?}; learnings.sections lists: {}",
            sections.join(", ")
        )));
    }
    let Some(content) = items::clean_item(&args.text) else {
        return Err(usage(format!(
            "a learning is 2 to {} words of plain text",
            items::MAX_WORDS
        )));
    };
    store.pin_learning(&section, &content)?;
    // Rebuild the file so the pin shows at once, without extracting anything new.
    let options = regenerate::Options {
        window: project.config.learnings.window_size,
        dry_run: false,
    };
    regenerate::regenerate(&project, &store, None, options)?;
    writeln!(
        output::stdout(),
        "{} Pinned under {section}: {content}",
        output::paint(output::GREEN, "✓")
    )?;
    Ok(())
}

fn clear(ctx: &Context, args: ClearArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(usage("clearing learnings needs confirmation; pass --yes"));
        }
        write!(
            output::stderr(),
            "Delete .gza/learnings.md and every stored learning? [y/N] "
        )?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            writeln!(output::stdout(), "Cancelled")?;
            return Ok(());
        }
    }
    store.clear_learnings()?;
    let path = project.learnings_path();
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&path, "delete", e).into()),
    }
    writeln!(
        output::stdout(),
        "{} Cleared learnings",
        output::paint(output::GREEN, "✓")
    )?;
    Ok(())
}

fn stats(ctx: &Context, args: StatsArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let totals = store.learnings_totals()?;
    let meta = store.learnings_metadata()?;
    let config = &project.config.learnings;
    let provider = match crate::llm::client_for(config, &project.config.providers.claude.path) {
        Ok(Some(c)) => format!("{} ({})", c.provider(), c.model()),
        Ok(None) => "none (agent-listed learnings only)".into(),
        Err(e) => format!("unavailable: {e}"),
    };
    let mut out = output::stdout();
    if args.json {
        let json = serde_json::json!({
            "enabled": config.enabled,
            "provider": provider,
            "totals": totals,
            "metadata": meta,
            "regenerate_every": config.regenerate_every,
            "window_size": config.window_size,
        });
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "Enabled:            {}", config.enabled)?;
    writeln!(out, "Extraction:         {provider}")?;
    writeln!(
        out,
        "Stored learnings:   {} from {} extracted tasks",
        totals.stored, totals.tasks_extracted
    )?;
    writeln!(out, "Pinned by you:      {}", totals.pinned)?;
    writeln!(out, "Deleted by you:     {}", totals.suppressed)?;
    writeln!(out, "Regenerations:      {}", totals.regenerations)?;
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
