//! `gza learnings review | promote | validate | export | import`: the lifecycle from draft to
//! validated expertise.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use super::learnings::{learning_by_id, learning_text, rewrite_file, wait_for_regeneration};
use super::{Context, output, usage};
use crate::learn::rank::{self, Ranker};
use crate::learn::{expertise, validate};
use crate::learning::{Learning, Status, label};
use crate::store::{LearningEdit, Store};

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// List the drafts and quarantined learnings as JSON (works without a terminal).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// Ids of the learnings (e.g. L12 L13).
    #[arg(required = true)]
    ids: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Only these learnings (default: every one not archived).
    ids: Vec<String>,
    /// Show what would change; record nothing, write no expertise.yaml.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Where to write (default: learnings.expertise_path).
    path: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// An expertise.yaml in seed 002's schema.
    path: PathBuf,
}

/// A learning as the review lists it.
fn review_json(store: &Store, l: &Learning) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(l)?;
    v["id"] = serde_json::Value::String(l.label());
    v["sources"] = serde_json::to_value(store.learning_sources(l.id)?)?;
    Ok(v)
}

/// What a person can do with one learning under review, in the order the question lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Accept,
    Edit,
    Skip,
    Archive,
    Quit,
}

impl Choice {
    const ALL: [Choice; 5] = [
        Choice::Accept,
        Choice::Edit,
        Choice::Skip,
        Choice::Archive,
        Choice::Quit,
    ];

    fn describe(self) -> &'static str {
        match self {
            Choice::Accept => "accept: make it active",
            Choice::Edit => "edit its text, then accept it",
            Choice::Skip => "skip: leave it as it is",
            Choice::Archive => "archive: never inject it",
            Choice::Quit => "quit: leave this and the rest as they are",
        }
    }
}

pub fn review(ctx: &Context, args: ReviewArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    // Lines saved in learnings.md since gza wrote it become records first.
    crate::learn::regenerate::sync_edits(&project, &store)?;
    let queue = store.review_queue()?;
    if args.json {
        let list = queue
            .iter()
            .map(|l| review_json(&store, l))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut out = output::stdout();
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    // The questions are asked on standard error, so standard output keeps only what was done.
    let term = dialoguer::console::Term::stderr();
    if !std::io::stdin().is_terminal() || !term.is_term() {
        return Err(usage(
            "review asks one question per draft and needs a terminal; `gza learnings review --json` lists them, `gza learnings promote ID…` accepts them",
        ));
    }
    if queue.is_empty() {
        writeln!(
            output::stdout(),
            "Nothing to review: no drafts or quarantined learnings"
        )?;
        return Ok(());
    }
    // Ctrl-C ends the question it interrupts instead of the process: the answers given so far
    // are then written to learnings.md before gza exits with 130.
    crate::process::install_stop_handler();
    let ranker = Ranker::load(&project);
    let mut changed = false;
    let mut outcome = Ok(());
    for (n, l) in queue.iter().enumerate() {
        present(&store, &ranker, l, n + 1, queue.len())?;
        match ask(&term, l) {
            Ok(Some((Choice::Quit, _))) => break,
            Ok(Some((choice, text))) => changed |= answer(&store, l, choice, text)?,
            Ok(None) => break,
            Err(e) => {
                // A question cut short leaves the cursor hidden.
                let _ = term.show_cursor();
                let _ = term.write_line("");
                outcome = Err(e);
                break;
            }
        }
    }
    if changed {
        rewrite_file(&project, &store, None)?;
    }
    outcome.map_err(|e| match e {
        dialoguer::Error::IO(io) if io.kind() == std::io::ErrorKind::Interrupted => {
            super::Interrupted("the answers given before it are kept").into()
        }
        other => anyhow::Error::from(other),
    })
}

/// Show learning number `n` of `total`: its text, where it came from, and up to three similar ones.
fn present(
    store: &Store,
    ranker: &Ranker,
    l: &Learning,
    n: usize,
    total: usize,
) -> anyhow::Result<()> {
    let mut out = output::stdout();
    writeln!(
        out,
        "\n{} {} {}",
        output::paint(output::BOLD, format!("[{n}/{total}] {}", l.label())),
        l.text,
        output::paint(
            output::DIM,
            format!("[{} · {}]", l.section, l.origin.as_str())
        )
    )?;
    describe(&mut out, store, l, true)?;
    let query = rank::Query {
        text: &l.text,
        k: 4,
        calibrated: true,
        drafts: true,
    };
    let similar = ranker.search(store, query)?;
    for (_, s) in rank::hits_with_records(store, &similar)?
        .into_iter()
        .filter(|(_, s)| s.id != l.id)
        .take(3)
    {
        writeln!(out, "  similar     {} {}", s.label(), s.text)?;
    }
    out.flush()?;
    Ok(())
}

/// Ask what to do with `l` (arrow keys or j/k, Enter; Esc or q quits); for an edit, also the
/// new text, starting from the old. `None` when the person quit with Esc or q.
fn ask(
    term: &dialoguer::console::Term,
    l: &Learning,
) -> dialoguer::Result<Option<(Choice, Option<String>)>> {
    let picked = dialoguer::Select::new()
        .with_prompt(format!("{}?", l.label()))
        .items(Choice::ALL.map(Choice::describe))
        .default(2)
        .interact_on_opt(term)?;
    let Some(choice) = picked.map(|i| Choice::ALL[i]) else {
        return Ok(None);
    };
    if choice != Choice::Edit {
        return Ok(Some((choice, None)));
    }
    let text: String = dialoguer::Input::new()
        .with_prompt("New text")
        .with_initial_text(l.text.clone())
        .validate_with(|t: &String| learning_text(t).map(|_| ()).map_err(|e| e.to_string()))
        .interact_text_on(term)?;
    Ok(Some((choice, Some(text))))
}

/// Carry out `choice` for `l`; true when it changed the learning. A skip changes nothing.
fn answer(
    store: &Store,
    l: &Learning,
    choice: Choice,
    text: Option<String>,
) -> anyhow::Result<bool> {
    let mut out = output::stdout();
    let done = |out: &mut dyn Write, what: &str| {
        writeln!(
            out,
            "{} {what} {}",
            output::paint(output::GREEN, "✓"),
            l.label()
        )
    };
    match choice {
        Choice::Skip | Choice::Quit => return Ok(false),
        Choice::Accept => {
            store.promote_learnings(&[l.id], "accepted in `gza learnings review`")?;
            done(&mut out, "Accepted")?;
        }
        Choice::Edit => {
            let text = learning_text(text.as_deref().unwrap_or(&l.text))?;
            if text != l.text {
                let edit = LearningEdit {
                    text: Some(text),
                    ..LearningEdit::default()
                };
                store.edit_learning(l.id, &edit)?;
            }
            store.promote_learnings(&[l.id], "edited and accepted in `gza learnings review`")?;
            done(&mut out, "Edited and accepted")?;
        }
        Choice::Archive => {
            store.set_learning_status(
                l.id,
                Status::Archived,
                Some("archived in `gza learnings review`"),
            )?;
            done(&mut out, "Archived")?;
        }
    }
    Ok(true)
}

/// Source, evidence, staleness and quarantine of a learning, one field a line.
pub fn describe(
    out: &mut impl Write,
    store: &Store,
    l: &Learning,
    with_sources: bool,
) -> anyhow::Result<()> {
    let lc = &l.lifecycle;
    if let Some(q) = &lc.quarantine_reason {
        writeln!(
            out,
            "  Quarantined  {q}; never injected until a person accepts it (`gza learnings promote {}`)",
            l.label()
        )?;
    }
    let sources: Vec<String> = store
        .learning_sources(l.id)?
        .iter()
        .map(|s| match (&s.task, &s.session) {
            (Some(t), _) => format!("task {t}"),
            (None, Some(session)) => format!("session {}", output::one_line(session, 12)),
            _ => "?".into(),
        })
        .collect();
    if with_sources && !sources.is_empty() {
        writeln!(out, "  Source       {}", sources.join(", "))?;
    }
    writeln!(out, "  Tier         {}", tier_text(l))?;
    if let Some(e) = &lc.evidence {
        if !e.terms.is_empty() {
            writeln!(out, "  Terms        {}", e.terms.join(", "))?;
        }
        if !e.files.is_empty() {
            writeln!(out, "  Evidence     {}", e.files.join(", "))?;
        }
    }
    if let Some(s) = &lc.stale_reason {
        writeln!(out, "  Stale        {s}")?;
    }
    Ok(())
}

/// `tier 2 (high, 7 files)`, `tier 1 (1 file)`, `tier 1 (not validated)`.
pub fn tier_text(l: &Learning) -> String {
    let lc = &l.lifecycle;
    match (&lc.evidence, lc.tier) {
        (None, _) if lc.validated_at.is_some() => "1 (no distinctive terms to search for)".into(),
        (None, t) => format!("{t} (not validated)"),
        (Some(e), 2) => format!(
            "2 ({}, {} files)",
            lc.tier_level.as_deref().unwrap_or("medium"),
            e.count
        ),
        (Some(e), t) => format!(
            "{t} ({} file{})",
            e.count,
            if e.count == 1 { "" } else { "s" }
        ),
    }
}

pub fn promote(ctx: &Context, args: PromoteArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    // Every id is checked before anything changes.
    let learnings = args
        .ids
        .iter()
        .map(|id| learning_by_id(&store, id))
        .collect::<anyhow::Result<Vec<_>>>()?;
    drop(wait_for_regeneration(&project)?);
    rewrite_file(&project, &store, None)?;
    let ids: Vec<i64> = learnings.iter().map(|l| l.id).collect();
    let changed = store.promote_learnings(&ids, "promoted with `gza learnings promote`")?;
    let mut out = output::stdout();
    for (l, changed) in learnings.iter().zip(changed) {
        if changed {
            writeln!(
                out,
                "{} Promoted {}: {}",
                output::paint(output::GREEN, "✓"),
                l.label(),
                l.text
            )?;
        } else {
            writeln!(out, "  {} was already active", l.label())?;
        }
    }
    let ranker = Ranker::load(&project);
    let _ = ranker.embed_missing(&store);
    rewrite_file(&project, &store, Some(&ranker))?;
    Ok(())
}

pub fn validate_cmd(ctx: &Context, args: ValidateArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let ids = args
        .ids
        .iter()
        .map(|id| learning_by_id(&store, id).map(|l| l.id))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let report = validate::validate(
        &project,
        &store,
        (!ids.is_empty()).then_some(ids.as_slice()),
        args.dry_run,
    )?;
    if !args.dry_run {
        // Tier 2 goes first in the file: rewrite it with the new tiers.
        rewrite_file(&project, &store, None)?;
    }
    let mut out = output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    if args.dry_run {
        writeln!(
            out,
            "{}",
            output::paint(output::BOLD, "Dry run: nothing was recorded.")
        )?;
    }
    writeln!(
        out,
        "Searched {} files for {} learnings{}",
        report.files_searched,
        report.checked.len(),
        if report.unreadable > 0 {
            format!(" ({} could not be read)", report.unreadable)
        } else {
            String::new()
        }
    )?;
    for c in &report.checked {
        let tier = match (&c.level, c.terms.is_empty()) {
            (_, true) => "no distinctive terms".to_string(),
            (Some(level), _) => format!("tier 2 ({level}, {} files)", c.files),
            (None, _) => format!(
                "tier 1 ({} file{})",
                c.files,
                if c.files == 1 { "" } else { "s" }
            ),
        };
        let padded = format!("{:<9}", c.change);
        let change = match c.change {
            "promoted" => output::paint(output::GREEN, padded),
            "stale" => output::paint(output::YELLOW, padded),
            _ => padded,
        };
        writeln!(
            out,
            "  {:<5} {tier:<24} {change} {}",
            c.id,
            output::one_line(&c.text, 60)
        )?;
        if let Some(reason) = c.stale_reason.as_ref().filter(|_| c.change == "stale") {
            writeln!(out, "        {reason}")?;
        }
    }
    if let Some(path) = &report.exported {
        let shown = std::path::Path::new(path)
            .strip_prefix(&project.root)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| path.clone());
        writeln!(out, "Wrote {shown}")?;
    }
    if let Some(e) = report.export_error {
        return Err(usage(e));
    }
    Ok(())
}

pub fn export(ctx: &Context, args: ExportArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let path = args
        .path
        .map(|p| if p.is_absolute() { p } else { ctx_relative(&p) });
    let written = expertise::export(&project, &store, path.as_deref())?;
    let n = store.tier2_learnings()?.len();
    writeln!(
        output::stdout(),
        "{} Wrote {n} validated learning{} to {written}",
        output::paint(output::GREEN, "✓"),
        if n == 1 { "" } else { "s" }
    )?;
    Ok(())
}

fn ctx_relative(p: &std::path::Path) -> PathBuf {
    std::env::current_dir()
        .map(|d| d.join(p))
        .unwrap_or_else(|_| p.to_path_buf())
}

pub fn import(ctx: &Context, args: ImportArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let path = if args.path.is_absolute() {
        args.path.clone()
    } else {
        ctx_relative(&args.path)
    };
    let result = expertise::import(&project, &store, &path)?;
    let mut out = output::stdout();
    for (id, text, tier) in &result.added {
        let tier = if *tier == 2 {
            "tier 2: its evidence is in this project"
        } else {
            "tier 1: no evidence in this project yet"
        };
        writeln!(
            out,
            "{} Imported {}: {text} ({tier})",
            output::paint(output::GREEN, "✓"),
            label(*id)
        )?;
        crate::cli::learnings::note_if_held(&store, *id)?;
    }
    writeln!(
        out,
        "{} imported, {} skipped (already known or not a learning)",
        result.added.len(),
        result.skipped
    )?;
    if !result.added.is_empty() {
        let ranker = Ranker::load(&project);
        let _ = ranker.embed_missing(&store);
        rewrite_file(&project, &store, Some(&ranker))?;
    }
    Ok(())
}
