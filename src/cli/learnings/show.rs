//! `gza learnings show`: the learnings by section, one in full, or the file as it is.

use std::io::{IsTerminal, Write};

use clap::Args;

use super::{learning_by_id, section_arg};
use crate::cli::{Context, output, usage};
use crate::learning::{Learning, Priority, Status, label, parse_label};
use crate::project::Project;
use crate::store::Store;

#[derive(Debug, Args)]
pub(super) struct ShowArgs {
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

/// Digits, `L` and digits, or a lone `L`: meant as a learning id even when no learning can have
/// it (`0`, `L0`, a number too large, an id cut short), so it is answered as one ("not a
/// learning id; ids look like L12") rather than as an unknown section.
fn id_shaped(s: &str) -> bool {
    let t = s.trim();
    let digits = t.strip_prefix(['L', 'l']).unwrap_or(t);
    (digits.is_empty() && !t.is_empty())
        || (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

pub(super) fn show(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let (project, store) = super::open_with_edits(ctx)?;
    let _snapshot = super::SnapshotAfter::new(&project, &store);
    if args.file {
        return show_file(&project, args.pager);
    }
    if let Some(id) = args.section.as_deref().filter(|s| parse_label(s).is_some()) {
        let learning = learning_by_id(&store, id)?;
        return show_one(&store, &learning, args.json);
    }
    let mut list = store.learnings(args.all)?;
    let section = match &args.section {
        Some(s) => match section_arg(&project, s, &list) {
            Ok(section) => Some(section),
            // `L0`, or an id past any learning's: the message archive and restore give for it.
            Err(e) if id_shaped(s) => {
                learning_by_id(&store, s)?;
                return Err(e);
            }
            Err(e) => return Err(e),
        },
        None => None,
    };
    list.retain(|l| section.as_ref().is_none_or(|s| &l.section == s));
    let mut out = output::stdout();
    if args.json {
        let list = list
            .iter()
            .map(super::learning_json)
            .collect::<anyhow::Result<Vec<_>>>()?;
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
#[derive(serde::Serialize)]
struct ShownLearning<'a> {
    /// Its record, its id as `L3` ([`super::learning_json`]).
    #[serde(flatten)]
    learning: serde_json::Value,
    sources: &'a [crate::store::Source],
    /// The newest finished tasks it was given to (at most [`OUTCOMES_SHOWN`]), with how each
    /// ended; `outcome_counts` counts them all.
    outcomes: &'a [crate::store::InjectionOutcome],
    outcome_counts: crate::store::OutcomeCounts,
    /// Its record: helpful and harmful tasks, ratings, and the factor ranking gives it.
    credit: CreditJson<'a>,
    /// Given to A/B runs (`gza ab`), which `injected` leaves out: experiments, counted apart.
    injected_in_ab_runs: i64,
}

#[derive(serde::Serialize)]
struct CreditJson<'a> {
    #[serde(flatten)]
    counts: crate::store::CreditCounts,
    factor: f64,
    /// The credited tasks it was given, newest first (at most 20), with how each ended.
    tasks: &'a [crate::store::CreditedTask],
    ratings: &'a [crate::store::Rating],
}

/// The finished tasks `learnings show ID` names, newest first (its counts count them all).
const OUTCOMES_SHOWN: u32 = 20;

fn show_one(store: &Store, l: &Learning, json: bool) -> anyhow::Result<()> {
    let sources = store.learning_sources(l.id)?;
    let mut out = output::stdout();
    let outcome_counts = store.injection_outcome_counts(l.id)?;
    let outcomes = store.injection_outcomes(l.id, !json, OUTCOMES_SHOWN)?;
    let counts = store
        .credit_counts(&[l.id])?
        .first()
        .map(|(_, c)| *c)
        .unwrap_or_default();
    let factor = crate::learn::credit::outcome_factor(
        &counts,
        crate::learn::credit::base_rate(&store.base_rate()?),
    );
    let credited = store.credited_tasks(l.id, false, 20)?;
    let ratings = store.ratings(Some(l.id), 20)?;
    let in_ab_runs = store.injections_in_ab_runs(l.id)?;
    if json {
        let record = ShownLearning {
            learning: super::learning_json(l)?,
            sources: &sources,
            outcomes: &outcomes,
            outcome_counts,
            credit: CreditJson {
                counts,
                factor,
                tasks: &credited,
                ratings: &ratings,
            },
            injected_in_ab_runs: in_ab_runs,
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
    describe(&mut out, store, l, false)?;
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
    let mut injected = format!("{} times", l.injected);
    if in_ab_runs > 0 {
        injected.push_str(&format!(
            " (and {in_ab_runs} in A/B runs, counted apart: experiments)"
        ));
    }
    field(&mut out, "Injected", injected)?;
    if outcome_counts.completed + outcome_counts.failed > 0 {
        let completed = outcome_counts.completed;
        // The newest failed ones (the query gave only those), and how many more.
        let failed: Vec<String> = outcomes
            .iter()
            .filter(|o| o.status != crate::task::TaskStatus::Completed)
            .map(|o| {
                format!(
                    "task {} {}",
                    o.task,
                    o.failure_reason.as_ref().map_or("failed", |r| r.as_str())
                )
            })
            .collect();
        let mut text = format!("{completed} completed, {} failed", outcome_counts.failed);
        if !failed.is_empty() {
            let more = outcome_counts.failed - failed.len() as i64;
            let more = if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            };
            text.push_str(&format!(" ({}{more})", failed.join(", ")));
        }
        field(&mut out, "Outcomes", text)?;
    }
    if counts != crate::store::CreditCounts::default() {
        let mut text = format!(
            "{} helpful, {} harmful tasks",
            counts.helpful, counts.harmful
        );
        if counts.rated_up + counts.rated_down > 0 {
            text.push_str(&format!(
                "; rated {} up, {} down",
                counts.rated_up, counts.rated_down
            ));
        }
        text.push_str(&format!("; ranks ×{factor:.2}"));
        field(&mut out, "Credit", text)?;
        for t in credited
            .iter()
            .filter(|t| t.credit != crate::store::Credit::Neutral)
            .take(5)
        {
            field(
                &mut out,
                "",
                format!(
                    "{} task {}: {}",
                    t.credit.as_str(),
                    t.ending.task,
                    t.ending.describe()
                ),
            )?;
        }
        for r in &ratings {
            let why = r
                .why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            field(&mut out, "", format!("rated {}{why} ({})", r.rating, r.at))?;
        }
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

/// Source, evidence, staleness and quarantine of a learning, one field a line.
pub(super) fn describe(
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
            if let Some(c) = &e.commit {
                writeln!(
                    out,
                    "               found at commit {} ({})",
                    &c[..c.len().min(12)],
                    e.at
                )?;
            }
        }
    }
    if let Some(s) = &lc.stale_reason {
        writeln!(out, "  Stale        {s}")?;
    }
    Ok(())
}

/// `tier 2 (high, 7 files)`, `tier 1 (1 file)`, `tier 1 (not validated)`.
pub(super) fn tier_text(l: &Learning) -> String {
    l.tier_text()
}
