//! `gza learnings`: see, search, curate, rebuild and clear what finished tasks taught.

use std::io::{IsTerminal, Write};

use clap::{Args, Subcommand};
use serde::Serialize;

use super::learnings_lifecycle as lc;
use super::{Context, output, usage};
use crate::error::Error;
use crate::learn::rank::{self, Ranker};
use crate::learn::{items, regenerate};
use crate::learning::{Learning, NewLearning, Origin, Priority, Status, label, parse_label};
use crate::project::Project;
use crate::store::{LearningEdit, Store};
use crate::task::TaskStatus;

#[derive(Debug, Args)]
pub struct LearningsArgs {
    #[command(subcommand)]
    command: LearningsCommand,
}

#[derive(Debug, Subcommand)]
enum LearningsCommand {
    /// List learnings by section (or one learning in full: `show L12`).
    Show(ShowArgs),
    /// Find the learnings that matter for a text, by meaning and by words.
    Search(SearchArgs),
    /// Add a learning of your own; it stays until you remove it. Prints its id.
    Add(AddArgs),
    /// Change a learning's text, section, priority or keywords.
    Edit(EditArgs),
    /// Retire learnings: they are no longer injected or shown in learnings.md.
    Archive(ArchiveArgs),
    /// Bring archived learnings back.
    Restore(RestoreArgs),
    /// Go through drafts and quarantined learnings one at a time (--json: list them).
    Review(lc::ReviewArgs),
    /// Accept drafts or quarantined learnings: they become active and may be injected.
    Promote(lc::PromoteArgs),
    /// Search the project tree for evidence: 3+ files make a learning validated (tier 2).
    Validate(lc::ValidateArgs),
    /// Write validated learnings to expertise.yaml (seed 002's schema).
    Export(lc::ExportArgs),
    /// Read an expertise.yaml back; learnings already known are skipped.
    Import(lc::ImportArgs),
    /// Rebuild .gza/learnings.md now from recent completed tasks.
    Update(UpdateArgs),
    /// Counts by section, status and priority; injections; extraction calls and tokens.
    Stats(StatsArgs),
    /// Delete the file, every learning and the regeneration history.
    Clear(ClearArgs),
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// Only this section, or one learning by id (e.g. L12).
    section: Option<String>,
    /// Include archived learnings (drafts are always listed, marked).
    #[arg(long)]
    all: bool,
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
    /// Print .gza/learnings.md as it is on disk.
    #[arg(long, conflicts_with_all = ["json", "all", "section"])]
    file: bool,
    /// Page through the output with $PAGER (on a terminal).
    #[arg(long)]
    pager: bool,
}

#[derive(Debug, Args)]
struct SearchArgs {
    /// What to find learnings for: a task, a question, some words (`-` reads standard input).
    query: String,
    /// Return at most this many.
    #[arg(short = 'k', long, default_value_t = 3)]
    k: usize,
    /// Print JSON for scripts: a list of {id, text, section, score, …}, best first.
    #[arg(long)]
    json: bool,
    /// Show how each score was made, including the best items below the cut.
    #[arg(long)]
    explain: bool,
    /// Skip the floor and the relative cut: always the best k (for tuning the ranker).
    #[arg(long, hide = true)]
    raw: bool,
}

#[derive(Debug, Args)]
struct AddArgs {
    /// The learning (2 to 20 words).
    text: String,
    /// Its section (default: the last configured section).
    #[arg(long, short = 's')]
    section: Option<String>,
    /// Searchable terms, comma-separated.
    #[arg(long, value_delimiter = ',')]
    keywords: Vec<String>,
    /// CRITICAL, HIGH, MEDIUM (default) or LOW.
    #[arg(long, value_parser = parse_priority)]
    priority: Option<Priority>,
    /// A kind of task it applies to, in words (repeatable): helps the ranker find it.
    #[arg(long = "when", value_name = "PHRASE")]
    applies_when: Vec<String>,
    #[command(flatten)]
    triggers: TriggerArgs,
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

    /// The triggers, checked: every glob must compile.
    fn triggers(&self) -> anyhow::Result<crate::learning::Triggers> {
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

#[derive(Debug, Args)]
struct EditArgs {
    /// The learning's id (e.g. L12).
    id: String,
    #[arg(long)]
    text: Option<String>,
    #[arg(long, short = 's')]
    section: Option<String>,
    #[arg(long, value_parser = parse_priority)]
    priority: Option<Priority>,
    /// Searchable terms, comma-separated (replaces the old ones).
    #[arg(long, value_delimiter = ',')]
    keywords: Option<Vec<String>>,
    /// Replace its trigger conditions and checklist with these.
    #[command(flatten)]
    triggers: TriggerArgs,
    /// Remove its trigger conditions and checklist.
    #[arg(long, conflicts_with_all = ["tools", "files", "actions", "contexts", "checklist"])]
    no_triggers: bool,
}

#[derive(Debug, Args)]
struct ArchiveArgs {
    /// Ids of the learnings (e.g. L12 L13).
    #[arg(required = true)]
    ids: Vec<String>,
    /// Why, kept with the learning.
    #[arg(long)]
    reason: Option<String>,
}

#[derive(Debug, Args)]
struct RestoreArgs {
    /// Ids of the learnings (e.g. L12).
    #[arg(required = true)]
    ids: Vec<String>,
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

fn parse_priority(text: &str) -> Result<Priority, String> {
    Priority::parse(text).ok_or_else(|| "expected CRITICAL, HIGH, MEDIUM or LOW".to_string())
}

pub fn cmd_learnings(ctx: &Context, args: LearningsArgs) -> anyhow::Result<()> {
    match args.command {
        LearningsCommand::Show(a) => show(ctx, a),
        LearningsCommand::Search(a) => search(ctx, a),
        LearningsCommand::Add(a) => add(ctx, a),
        LearningsCommand::Edit(a) => edit(ctx, a),
        LearningsCommand::Archive(a) => archive(ctx, a),
        LearningsCommand::Restore(a) => restore(ctx, a),
        LearningsCommand::Review(a) => lc::review(ctx, a),
        LearningsCommand::Promote(a) => lc::promote(ctx, a),
        LearningsCommand::Validate(a) => lc::validate_cmd(ctx, a),
        LearningsCommand::Export(a) => lc::export(ctx, a),
        LearningsCommand::Import(a) => lc::import(ctx, a),
        LearningsCommand::Update(a) => update(ctx, a),
        LearningsCommand::Stats(a) => stats(ctx, a),
        LearningsCommand::Clear(a) => clear(ctx, a),
    }
}

/// The learning an id names, or a one-line error saying what to do.
pub(super) fn learning_by_id(store: &Store, id: &str) -> anyhow::Result<Learning> {
    let Some(n) = parse_label(id) else {
        return Err(usage(format!(
            "{:?} is not a learning id; ids look like L12 (`gza learnings show` lists them)",
            output::one_line(id, 40)
        )));
    };
    store.learning(n)?.ok_or_else(|| {
        usage(format!(
            "no learning {}; `gza learnings show --all` lists them",
            label(n)
        ))
    })
}

/// The section a new or edited learning goes to: a configured one (in any case), or a new one
/// after them, with a warning naming the configured ones (a typo shows at once).
fn new_section_arg(project: &Project, name: &str) -> anyhow::Result<String> {
    if let Ok(s) = section_arg(project, name, &[]) {
        return Ok(s);
    }
    let clean = crate::redact::one_clean_line(name);
    if clean.is_empty() || clean.chars().count() > 60 {
        return Err(usage(format!(
            "a section is a name of 1 to 60 characters; learnings.sections lists: {}",
            project.config.learnings.sections.join(", ")
        )));
    }
    let _ = writeln!(
        output::stderr(),
        "{} section {clean:?} is not in learnings.sections ({}); it is kept after them",
        output::paint(output::YELLOW, "note:"),
        project.config.learnings.sections.join(", ")
    );
    Ok(clean)
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
    items::clean_item(text).ok_or_else(|| {
        usage(format!(
            "a learning is 2 to {} words of plain text",
            items::MAX_WORDS
        ))
    })
}

/// Wait (up to a minute, saying so) for a running regeneration to finish; the lock is returned.
pub(super) fn wait_for_regeneration(project: &Project) -> anyhow::Result<regenerate::RegenLock> {
    Ok(regenerate::RegenLock::wait(
        project,
        std::time::Duration::from_secs(60),
        || {
            let _ = writeln!(
                output::stderr(),
                "{} a learnings regeneration is running; waiting for it to finish…",
                output::paint(output::DIM, "note:")
            );
        },
    )?)
}

/// Rewrite learnings.md from the records after a change, taking in the person's edits first.
/// While a regeneration runs, the file is left to it: it takes in the person's edits and renders
/// the records (this change included) when it finishes.
pub(super) fn rewrite_file(
    project: &Project,
    store: &Store,
    ranker: Option<&Ranker>,
) -> anyhow::Result<()> {
    let options = regenerate::Options::rewrite(project.config.learnings.window_size);
    match regenerate::regenerate(project, store, None, ranker, options) {
        Err(Error::Busy(_)) => Ok(()),
        other => other.map(|_| ()).map_err(Into::into),
    }
}

fn show(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    if args.file {
        return show_file(&project, args.pager);
    }
    if let Some(id) = args.section.as_deref().filter(|s| parse_label(s).is_some()) {
        let learning = learning_by_id(&store, id)?;
        return show_one(&store, &learning, args.json);
    }
    let mut list = store.learnings(args.all)?;
    let section = match &args.section {
        Some(s) => Some(section_arg(&project, s, &list)?),
        None => None,
    };
    list.retain(|l| section.as_ref().is_none_or(|s| &l.section == s));
    let mut out = output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    if list.is_empty() {
        writeln!(
            out,
            "No learnings yet: they come from completed tasks, or `gza learnings add TEXT`"
        )?;
        return Ok(());
    }
    let mut text = String::new();
    let mut order: Vec<String> = project.config.learnings.sections.clone();
    for l in &list {
        if !order.contains(&l.section) {
            order.push(l.section.clone());
        }
    }
    for section in order {
        let in_section: Vec<&Learning> = list.iter().filter(|l| l.section == section).collect();
        if in_section.is_empty() {
            continue;
        }
        text.push_str(&format!("{}\n", output::paint(output::BOLD, &section)));
        for l in in_section {
            let mut facts = vec![l.origin.as_str().to_string()];
            if l.priority != Priority::Medium {
                facts.insert(0, l.priority.as_str().to_string());
            }
            if l.support > 1 {
                facts.push(format!("{} tasks", l.support));
            }
            if l.status != Status::Active {
                facts.push(l.status.as_str().into());
            }
            if l.lifecycle.tier == 2 {
                facts.push(format!(
                    "tier 2 {}",
                    l.lifecycle.tier_level.as_deref().unwrap_or("medium")
                ));
            }
            if l.lifecycle.stale_reason.is_some() {
                facts.push("stale".into());
            }
            if l.lifecycle.quarantine_reason.is_some() {
                facts.push("quarantined".into());
            }
            text.push_str(&format!(
                "  {:<5} {} {}\n",
                label(l.id),
                l.text,
                output::paint(output::DIM, format!("[{}]", facts.join(" · ")))
            ));
        }
    }
    page(&text, args.pager)
}

/// A learning as `gza learnings show --json` prints it: its record, then where it came from and
/// how the tasks it was given ended.
#[derive(Serialize)]
struct ShownLearning<'a> {
    #[serde(flatten)]
    learning: &'a Learning,
    sources: &'a [crate::store::Source],
    outcomes: &'a [crate::store::InjectionOutcome],
}

fn show_one(store: &Store, l: &Learning, json: bool) -> anyhow::Result<()> {
    let sources = store.learning_sources(l.id)?;
    let mut out = output::stdout();
    let outcomes = store.injection_outcomes(l.id)?;
    if json {
        let record = ShownLearning {
            learning: l,
            sources: &sources,
            outcomes: &outcomes,
        };
        serde_json::to_writer_pretty(&mut out, &record)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "{} {}", output::paint(output::BOLD, l.label()), l.text)?;
    let field =
        |out: &mut dyn Write, name: &str, value: String| writeln!(out, "  {name:<12} {value}");
    field(&mut out, "Section", l.section.clone())?;
    field(&mut out, "Priority", l.priority.to_string())?;
    field(&mut out, "Confidence", format!("{:.2}", l.confidence))?;
    let status = match (&l.status_reason, &l.status_changed_at) {
        (Some(r), Some(at)) => format!("{} ({r}, {at})", l.status.as_str()),
        _ => l.status.as_str().to_string(),
    };
    field(&mut out, "Status", status)?;
    field(&mut out, "Origin", l.origin.as_str().to_string())?;
    lc::describe(&mut out, store, l, false)?;
    if !l.keywords.is_empty() {
        field(&mut out, "Keywords", l.keywords.join(", "))?;
    }
    if !l.applies_when.is_empty() {
        field(&mut out, "Applies when", l.applies_when.join("; "))?;
    }
    if l.kind != "learning" {
        field(&mut out, "Kind", l.kind.clone())?;
    }
    let t = &l.triggers;
    for (name, list) in [
        ("Tools", &t.tools),
        ("Files", &t.files),
        ("Keywords on", &t.actions),
        ("Context", &t.contexts),
    ] {
        if !list.is_empty() {
            field(&mut out, name, list.join(", "))?;
        }
    }
    for item in &l.checklist {
        field(&mut out, "Checklist", format!("[ ] {item}"))?;
    }
    if let Some(i) = &l.insight {
        field(&mut out, "Insight", i.clone())?;
    }
    if let Some(e) = &l.example {
        field(&mut out, "Example", e.clone())?;
    }
    let from: Vec<String> = sources
        .iter()
        .map(|s| {
            let what = match (&s.task, &s.session) {
                (Some(t), _) => format!("task {t}"),
                (None, Some(session)) => format!("session {}", output::one_line(session, 12)),
                (None, None) => "?".into(),
            };
            if s.kind == "taught" {
                what
            } else {
                format!("{what} (confirmed)")
            }
        })
        .collect();
    if !from.is_empty() {
        field(&mut out, "Sources", from.join(", "))?;
    }
    field(&mut out, "Injected", format!("{} times", l.injected))?;
    if !outcomes.is_empty() {
        let completed = outcomes
            .iter()
            .filter(|o| o.status == TaskStatus::Completed)
            .count();
        let failed: Vec<String> = outcomes
            .iter()
            .filter(|o| o.status != TaskStatus::Completed)
            .map(|o| {
                format!(
                    "task {} {}",
                    o.task,
                    o.failure_reason.as_ref().map_or("failed", |r| r.as_str())
                )
            })
            .collect();
        let mut text = format!("{completed} completed, {} failed", failed.len());
        if !failed.is_empty() {
            text.push_str(&format!(" ({})", failed.join(", ")));
        }
        field(&mut out, "Outcomes", text)?;
    }
    field(&mut out, "Created", l.created_at.clone())?;
    field(&mut out, "Updated", l.updated_at.clone())?;
    field(&mut out, "Confirmed", l.confirmed_at.clone())?;
    let events = store.learning_events(l.id)?;
    if !events.is_empty() {
        writeln!(out, "  History")?;
        for e in events {
            let detail = e.detail.map(|d| format!(" ({d})")).unwrap_or_default();
            writeln!(out, "    {}  {}{detail}", e.at, e.event)?;
        }
    }
    Ok(())
}

fn show_file(project: &Project, pager: bool) -> anyhow::Result<()> {
    let path = project.learnings_path();
    let read = crate::fsutil::read_project_file(
        &project.root,
        &path,
        crate::prompt::MAX_LEARNINGS_FILE_BYTES,
    );
    let text = match read {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            writeln!(
                output::stdout(),
                "No learnings file yet: {} appears after `gza learnings update` or every {} completed tasks",
                path.display(),
                project.config.learnings.regenerate_every
            )?;
            return Ok(());
        }
        Err(e) => return Err(crate::fsutil::read_refused(&path, e).into()),
    };
    page(&text, pager)
}

fn page(text: &str, pager: bool) -> anyhow::Result<()> {
    if pager && std::io::stdout().is_terminal() {
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

fn search(ctx: &Context, args: SearchArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    if args.k == 0 {
        return Err(usage("-k must be at least 1"));
    }
    let query = if args.query == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)?;
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        args.query.clone()
    };
    if query.trim().is_empty() {
        return Err(usage(
            "nothing to search for; give some words, or `-` to read them from standard input",
        ));
    }
    let ranker = Ranker::load(&project);
    if let Some(notice) = &ranker.model_notice {
        writeln!(
            output::stderr(),
            "{} {notice}",
            output::paint(output::YELLOW, "warning:")
        )?;
    }
    if let Some(problem) = &ranker.model_problem {
        writeln!(
            output::stderr(),
            "{} {problem}; ranking by words only",
            output::paint(output::YELLOW, "warning:")
        )?;
    }
    let hits = ranker.search(
        &store,
        rank::Query {
            text: &query,
            k: args.k,
            calibrated: !args.raw,
            drafts: true,
        },
    )?;
    let found = rank::hits_with_records(&store, &hits)?;
    let mut out = output::stdout();
    if args.json {
        let list: Vec<serde_json::Value> = found
            .iter()
            .map(|(h, l)| {
                serde_json::json!({
                    "id": l.label(),
                    "text": l.text,
                    "section": l.section,
                    "score": (h.score * 1000.0).round() / 1000.0,
                    "semantic": h.semantic.map(|s| (s * 1000.0).round() / 1000.0),
                    "lexical": (h.lexical * 1000.0).round() / 1000.0,
                    "priority": l.priority,
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    if found.is_empty() {
        writeln!(out, "No learning matches.")?;
    }
    for (h, l) in &found {
        writeln!(
            out,
            "{:<5} {:.2}  {} {}",
            l.label(),
            h.score,
            l.text,
            output::paint(output::DIM, format!("[{}]", l.section))
        )?;
        if args.explain {
            explain(&mut out, h)?;
        }
    }
    if args.explain {
        let all = ranker.search(
            &store,
            rank::Query {
                text: &query,
                k: args.k + found.len(),
                calibrated: false,
                drafts: true,
            },
        )?;
        let below: Vec<rank::Hit> = all
            .into_iter()
            .filter(|h| !found.iter().any(|(f, _)| f.id == h.id))
            .take(args.k)
            .collect();
        if !below.is_empty() {
            writeln!(out, "Below the cut:")?;
            for (h, l) in rank::hits_with_records(&store, &below)? {
                writeln!(out, "{:<5} {:.2}  {}", l.label(), h.score, l.text)?;
                explain(&mut out, &h)?;
            }
        }
    }
    Ok(())
}

fn explain(out: &mut impl Write, h: &rank::Hit) -> std::io::Result<()> {
    let semantic = h
        .semantic
        .map_or("no model".to_string(), |s| format!("{s:.3}"));
    let matched = if h.matched.is_empty() {
        "none".to_string()
    } else {
        h.matched.join(", ")
    };
    writeln!(
        out,
        "      meaning {semantic} · words {:.3} (matched: {matched})",
        h.lexical
    )
}

fn add(ctx: &Context, args: AddArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let section = match &args.section {
        Some(s) => new_section_arg(&project, s)?,
        None => items::section_named("", &project.config.learnings.sections),
    };
    let text = learning_text(&args.text)?;
    let mut learning = NewLearning::new(&section, &text, Origin::User);
    learning.keywords = args
        .keywords
        .iter()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect();
    learning.priority = args.priority.unwrap_or_default();
    learning.applies_when = args
        .applies_when
        .iter()
        .map(|w| crate::redact::one_clean_line(w))
        .filter(|w| !w.is_empty())
        .collect();
    learning.triggers = args.triggers.triggers()?;
    learning.checklist = args.triggers.checklist.clone();
    // During a regeneration, wait for it: the learning is stored only once the change can be
    // made whole (item 20: never stored behind an error).
    let lock = wait_for_regeneration(&project)?;
    let id = store.add_learning(&learning)?;
    drop(lock);
    let ranker = Ranker::load(&project);
    if let Err(e) = ranker.embed_missing(&store) {
        crate::learn::log(&project, &format!("embedding {} failed: {e}", label(id)));
    }
    rewrite_file(&project, &store, Some(&ranker))?;
    writeln!(
        output::stdout(),
        "{} Added {} under {section}: {text}",
        output::paint(output::GREEN, "✓"),
        label(id)
    )?;
    note_if_held(&store, id)?;
    Ok(())
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

fn edit(ctx: &Context, args: EditArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let learning = learning_by_id(&store, &args.id)?;
    let triggers = if args.no_triggers {
        Some((Default::default(), Vec::new()))
    } else if args.triggers.is_empty() {
        None
    } else {
        Some((args.triggers.triggers()?, args.triggers.checklist.clone()))
    };
    let edit = LearningEdit {
        triggers,
        text: args.text.as_deref().map(learning_text).transpose()?,
        section: args
            .section
            .as_deref()
            .map(|s| new_section_arg(&project, s))
            .transpose()?,
        priority: args.priority,
        keywords: args.keywords.map(|k| {
            k.into_iter()
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .collect()
        }),
    };
    if edit.text.is_none()
        && edit.section.is_none()
        && edit.priority.is_none()
        && edit.keywords.is_none()
        && edit.triggers.is_none()
    {
        return Err(usage(
            "nothing to change; pass --text, --section, --priority, --keywords or triggers (--tool, --file, …)",
        ));
    }
    // Take in the file's pending edits first, so this change is made on top of them.
    drop(wait_for_regeneration(&project)?);
    rewrite_file(&project, &store, None)?;
    store.edit_learning(learning.id, &edit)?;
    let ranker = Ranker::load(&project);
    let _ = ranker.embed_missing(&store);
    rewrite_file(&project, &store, Some(&ranker))?;
    writeln!(
        output::stdout(),
        "{} Updated {}",
        output::paint(output::GREEN, "✓"),
        learning.label()
    )?;
    if learning.lifecycle.quarantine_reason.is_none() {
        note_if_held(&store, learning.id)?;
    }
    Ok(())
}

fn archive(ctx: &Context, args: ArchiveArgs) -> anyhow::Result<()> {
    set_status(ctx, &args.ids, Status::Archived, args.reason.as_deref())
}

fn restore(ctx: &Context, args: RestoreArgs) -> anyhow::Result<()> {
    set_status(ctx, &args.ids, Status::Active, None)
}

fn set_status(
    ctx: &Context,
    ids: &[String],
    status: Status,
    reason: Option<&str>,
) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    // Every id is checked before anything changes.
    let learnings = ids
        .iter()
        .map(|id| learning_by_id(&store, id))
        .collect::<anyhow::Result<Vec<_>>>()?;
    drop(wait_for_regeneration(&project)?);
    rewrite_file(&project, &store, None)?;
    let reason = reason.map(crate::redact::one_clean_line);
    let mut out = output::stdout();
    for l in &learnings {
        let (default_reason, verb) = if status == Status::Archived {
            ("archived with `gza learnings archive`", "Archived")
        } else {
            ("restored with `gza learnings restore`", "Restored")
        };
        let changed = store.set_learning_status(
            l.id,
            status,
            Some(reason.as_deref().unwrap_or(default_reason)),
        )?;
        if changed {
            writeln!(
                out,
                "{} {verb} {}: {}",
                output::paint(output::GREEN, "✓"),
                l.label(),
                l.text
            )?;
        } else {
            writeln!(out, "  {} was already {}", l.label(), status.as_str())?;
        }
    }
    let ranker = Ranker::load(&project);
    let _ = ranker.embed_missing(&store);
    rewrite_file(&project, &store, Some(&ranker))?;
    Ok(())
}

fn update(ctx: &Context, args: UpdateArgs) -> anyhow::Result<()> {
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
    let ranker = Ranker::load(&project);
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
        }
        for (_, line) in &e.added {
            writeln!(out, "Would add your line: {line}")?;
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
    if !e.added.is_empty() {
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
    let _lock = wait_for_regeneration(&project)?;
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

/// What `gza learnings stats --json` prints, in this order.
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

fn stats(ctx: &Context, args: StatsArgs) -> anyhow::Result<()> {
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
