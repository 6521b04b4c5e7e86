//! `gza learnings`: see, search, curate, rebuild and clear what finished tasks taught.

use std::io::Write;

use clap::{Args, Subcommand};

use super::{Context, output, usage};
use crate::learn::rank::Ranker;
use crate::learn::regenerate;
use crate::learning::{Learning, Priority, label};
use crate::project::Project;
use crate::store::Store;

mod add;
mod archive;
mod clear;
mod edit;
mod export;
mod hint;
mod import;
mod promote;
mod rate;
mod restore;
mod review;
mod search;
mod show;
mod stats;
mod update;
mod validate;

#[derive(Debug, Args)]
pub struct LearningsArgs {
    #[command(subcommand)]
    command: LearningsCommand,
}

#[derive(Debug, Subcommand)]
enum LearningsCommand {
    /// List learnings by section (or one learning in full: `show L12`).
    Show(show::ShowArgs),
    /// Find the learnings that matter for a text, by meaning and by words.
    Search(search::SearchArgs),
    /// Add a learning of your own; it stays until you remove it. Prints its id.
    Add(add::AddArgs),
    /// Change a learning's text, section, priority, keywords or "applies when" hints.
    Edit(edit::EditArgs),
    /// Have the extraction model write "applies when" hints for learnings that have none.
    ///
    /// For each learning, 2-3 phrases naming the kinds of tasks and the parts of the project
    /// where it applies, in the words a person asking for such a task would use: they let the
    /// ranker find it for tasks that never use its words. One request per 20 learnings; every
    /// hint passes the quarantine; `--dry-run` prints them and stores nothing.
    Hint(hint::HintArgs),
    /// Retire learnings: they are no longer injected or shown in learnings.md.
    Archive(archive::ArchiveArgs),
    /// Bring archived learnings back.
    Restore(restore::RestoreArgs),
    /// Go through drafts and quarantined learnings one at a time (--json: list them).
    Review(review::ReviewArgs),
    /// Accept drafts or quarantined learnings: they become active and may be injected.
    Promote(promote::PromoteArgs),
    /// Say whether a learning helps (up) or not (down), and why; it ranks by it.
    Rate(rate::RateArgs),
    /// Search the project tree for evidence: a learning the code shows in 3+ files is validated
    /// (tier 2; unchecked ones are tier 1).
    Validate(validate::ValidateArgs),
    /// Write validated learnings to expertise.yaml (patterns, evidence files, an evolution log).
    Export(export::ExportArgs),
    /// Read an expertise.yaml back; learnings already known are skipped.
    Import(import::ImportArgs),
    /// Rebuild .gza/learnings.md now from recent completed tasks.
    Update(update::UpdateArgs),
    /// Counts by section, status and priority; injections; extraction calls and tokens.
    Stats(stats::StatsArgs),
    /// Delete the file, every learning and the regeneration history.
    Clear(clear::ClearArgs),
}

/// Trigger conditions: before which tool calls the Claude Code PreToolUse hook injects it.
#[derive(Debug, Args, Default)]
struct TriggerArgs {
    /// A tool it applies to (repeatable), e.g. Write, Edit, Bash.
    #[arg(long = "tool", value_name = "TOOL")]
    tools: Vec<String>,
    /// A glob of files it applies to (repeatable), e.g. '**/plugin.json'.
    #[arg(long = "file", value_name = "GLOB")]
    files: Vec<String>,
    /// Words in what the tool is asked to do (repeatable), e.g. "version bump".
    #[arg(long = "keyword", value_name = "WORDS")]
    actions: Vec<String>,
    /// Words anywhere in the call's context (repeatable).
    #[arg(long = "context", value_name = "WORDS")]
    contexts: Vec<String>,
    /// A checklist item shown with it (repeatable).
    #[arg(long = "check", value_name = "ITEM")]
    checklist: Vec<String>,
}

impl TriggerArgs {
    fn is_empty(&self) -> bool {
        self.tools.is_empty()
            && self.files.is_empty()
            && self.actions.is_empty()
            && self.contexts.is_empty()
            && self.checklist.is_empty()
    }

    /// The triggers, checked: no value may be empty (an empty `--tool ''` was stored as a
    /// trigger that can never fire, and an empty `--check ''` as a blank checklist item), and
    /// every glob must compile.
    fn triggers(&self) -> anyhow::Result<crate::learning::Triggers> {
        for (flag, list) in [
            ("--tool", &self.tools),
            ("--file", &self.files),
            ("--keyword", &self.actions),
            ("--context", &self.contexts),
            ("--check", &self.checklist),
        ] {
            not_empty(flag, list)?;
        }
        let clean = |list: &[String]| -> Vec<String> {
            list.iter()
                .map(|s| crate::redact::one_clean_line(s))
                .filter(|s| !s.is_empty())
                .collect()
        };
        for g in &self.files {
            globset::Glob::new(g).map_err(|e| usage(format!("--file {g:?} is not a glob: {e}")))?;
        }
        Ok(crate::learning::Triggers {
            tools: clean(&self.tools),
            files: clean(&self.files),
            actions: clean(&self.actions),
            contexts: clean(&self.contexts),
        })
    }
}

/// Refuse an empty or blank value of a repeatable option in one line, as `--why ''` is.
fn not_empty(flag: &str, values: &[String]) -> anyhow::Result<()> {
    if values
        .iter()
        .any(|v| crate::redact::one_clean_line(v).is_empty())
    {
        return Err(usage(format!(
            "{flag} is empty; give it a value, or leave it out"
        )));
    }
    Ok(())
}

fn parse_priority(text: &str) -> Result<Priority, String> {
    Priority::parse(text).ok_or_else(|| "expected CRITICAL, HIGH, MEDIUM or LOW".to_string())
}

pub fn cmd_learnings(ctx: &Context, args: LearningsArgs) -> anyhow::Result<()> {
    if args.changes_learnings() {
        // Decided before anything is stored: a damaged learnings.md or lock refuses the change
        // whole, rather than storing it and failing on the file.
        ctx.project()?.check_learnings_files()?;
    }
    match args.command {
        LearningsCommand::Show(a) => show::show(ctx, a),
        LearningsCommand::Search(a) => search::search(ctx, a),
        LearningsCommand::Add(a) => add::add(ctx, a),
        LearningsCommand::Edit(a) => edit::edit(ctx, a),
        LearningsCommand::Hint(a) => hint::hint(ctx, a),
        LearningsCommand::Archive(a) => archive::archive(ctx, a),
        LearningsCommand::Restore(a) => restore::restore(ctx, a),
        LearningsCommand::Review(a) => review::review(ctx, a),
        LearningsCommand::Promote(a) => promote::promote(ctx, a),
        LearningsCommand::Rate(a) => rate::rate(ctx, a),
        LearningsCommand::Validate(a) => validate::validate_cmd(ctx, a),
        LearningsCommand::Export(a) => export::export(ctx, a),
        LearningsCommand::Import(a) => import::import(ctx, a),
        LearningsCommand::Update(a) => update::update(ctx, a),
        LearningsCommand::Stats(a) => stats::stats(ctx, a),
        LearningsCommand::Clear(a) => clear::clear(ctx, a),
    }
}

impl LearningsArgs {
    /// The subcommands that change learnings, and so write learnings.md under its lock.
    fn changes_learnings(&self) -> bool {
        !matches!(
            self.command,
            LearningsCommand::Show(_)
                | LearningsCommand::Search(_)
                | LearningsCommand::Stats(_)
                | LearningsCommand::Export(_)
                | LearningsCommand::Validate(_)
        )
    }

    /// The subcommands that bring the hooks' snapshot up to date themselves, on their own
    /// connection ([`SnapshotAfter`]); after the others `cli::run` does, on a new one.
    pub(super) fn refreshes_snapshot_itself(&self) -> bool {
        matches!(
            self.command,
            LearningsCommand::Show(_)
                | LearningsCommand::Search(_)
                | LearningsCommand::Stats(_)
                | LearningsCommand::Export(_)
        )
    }
}

/// Team mode: brings the hooks' snapshot up to date when dropped, whether the command
/// succeeded or not (a person's edits to learnings.md may have been taken in), on the
/// command's own store: a second connection to the shared database was a second server
/// process started for every `learnings show` (issue 21).
pub(super) struct SnapshotAfter<'a> {
    project: &'a Project,
    store: &'a Store,
}

impl<'a> SnapshotAfter<'a> {
    pub(super) fn new(project: &'a Project, store: &'a Store) -> SnapshotAfter<'a> {
        SnapshotAfter { project, store }
    }
}

impl Drop for SnapshotAfter<'_> {
    fn drop(&mut self) {
        if crate::hooks::far::applies(self.project) {
            crate::hooks::far::refresh(self.project, self.store);
        }
    }
}

/// The learning an id names, or a one-line error saying what to do.
/// The project and its store for reading learnings, with a person's saved edits to
/// learnings.md taken in first (when the database can be written), so that `show` and `search`
/// answer from what the file says now, not from the records before the edit. A failure to
/// take them in is said in one line; the stored learnings are read as they are.
pub(super) fn open_with_edits(ctx: &Context) -> anyhow::Result<(Project, Store)> {
    let project = ctx.project()?;
    if project.learnings_path().is_file()
        && let Ok(store) = Store::open_project(&project)
    {
        if let Err(e) = regenerate::sync_edits(&project, &store) {
            writeln!(
                output::stderr(),
                "{} your edits to learnings.md were not taken in ({e}); showing the stored learnings",
                output::paint(output::YELLOW, "warning:")
            )?;
        }
        // The store the edits went through answers the command too (as `open_for_reading`
        // would, what hooks spooled taken in first): one connection to a shared database, not
        // two, each a server process started.
        if crate::learn::spool::pending(&project) {
            crate::learn::take_in_spooled(&project, &store);
        }
        return Ok((project, store));
    }
    Ok(ctx.open_for_reading()?)
}

/// A learning as every `--json` output gives it: its record, with its id in the form people
/// type and every other output names it (`"L3"`), never the bare row number.
pub(super) fn learning_json(l: &Learning) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(l)?;
    v["id"] = serde_json::Value::String(l.label());
    Ok(v)
}

pub(super) fn learning_by_id(store: &Store, id: &str) -> anyhow::Result<Learning> {
    Ok(crate::actions::learning_by_id(store, id)?)
}

/// The section a new or edited learning goes to: a configured one (in any case), or a new one
/// after them, with a warning naming the configured ones (a typo shows at once).
fn new_section_arg(project: &Project, name: &str) -> anyhow::Result<String> {
    let (section, note) = crate::actions::new_section(project, name)?;
    if let Some(note) = note {
        let _ = writeln!(
            output::stderr(),
            "{} {note}",
            output::paint(output::YELLOW, "note:")
        );
    }
    Ok(section)
}

/// The section a name means: a configured one (in any case) or one some learning is in.
fn section_arg(project: &Project, name: &str, in_use: &[Learning]) -> anyhow::Result<String> {
    if let Some(l) = in_use
        .iter()
        .find(|l| l.section.eq_ignore_ascii_case(name.trim()))
    {
        return Ok(l.section.clone());
    }
    let sections = &project.config.learnings.sections;
    sections
        .iter()
        .find(|c| c.eq_ignore_ascii_case(name.trim()))
        .cloned()
        .ok_or_else(|| {
            usage(format!(
                "unknown section {name:?}; learnings.sections lists: {}",
                sections.join(", ")
            ))
        })
}

pub(super) fn learning_text(text: &str) -> anyhow::Result<String> {
    Ok(crate::actions::learning_text(text)?)
}

/// Wait (up to a minute, saying so) for a running regeneration to finish; the lock is returned.
pub(super) fn wait_for_regeneration(project: &Project) -> anyhow::Result<regenerate::RegenLock> {
    Ok(crate::actions::wait_for_regeneration(project, say_waiting)?)
}

/// What a command says while it waits for a regeneration.
pub(super) fn say_waiting() {
    let _ = writeln!(
        output::stderr(),
        "{} a learnings regeneration is running; waiting for it to finish…",
        output::paint(output::DIM, "note:")
    );
}

/// Rewrite learnings.md from the records after a change, taking in the person's edits first.
pub(super) fn rewrite_file(
    project: &Project,
    store: &Store,
    ranker: Option<&Ranker>,
) -> anyhow::Result<()> {
    Ok(crate::actions::rewrite_file(project, store, ranker)?)
}

/// Tell the person when what they wrote is held back, and how to release it. A person's own
/// text is held like an agent's (it may have been pasted from a README, an issue or a web page
/// without every line read): kept as a draft with the reason, never refused, so a false alarm
/// costs one `promote`, a deliberate and logged decision.
pub(super) fn note_if_held(store: &Store, id: i64) -> anyhow::Result<()> {
    if let Some(reason) = store
        .learning(id)?
        .and_then(|l| l.lifecycle.quarantine_reason)
    {
        writeln!(
            output::stderr(),
            "{} {} is quarantined ({reason}); it is kept as a draft and never injected until you accept it with `gza learnings promote {}`",
            output::paint(output::YELLOW, "note:"),
            label(id),
            label(id)
        )?;
    }
    Ok(())
}
