//! `gza learnings review`: drafts and quarantined learnings, one question each on a terminal
//! (or listed as JSON).

use std::io::{IsTerminal, Write};

use clap::Args;

use super::show::describe;
use super::{learning_text, rewrite_file};
use crate::cli::{Context, output, usage};
use crate::learn::credit::{self, Flag};
use crate::learn::rank::{self, Ranker};
use crate::learning::{Learning, Status};
use crate::store::{LearningEdit, Store};

#[derive(Debug, Args)]
pub(super) struct ReviewArgs {
    /// List the drafts and quarantined learnings as JSON (works without a terminal).
    #[arg(long)]
    json: bool,
}

/// A learning as the review lists it; a flagged one with its record and evidence.
fn review_json(
    store: &Store,
    l: &Learning,
    flag: Option<&Flag>,
) -> anyhow::Result<serde_json::Value> {
    let mut v = super::learning_json(l)?;
    v["sources"] = serde_json::to_value(store.learning_sources(l.id)?)?;
    if let Some(f) = flag {
        v["flag"] = serde_json::to_value(f)?;
    }
    Ok(v)
}

/// What waits for a person: drafts and quarantined learnings, then active learnings whose
/// tasks keep going wrong (flagged by their outcomes and ratings), each with its flag.
fn queue(store: &Store) -> anyhow::Result<Vec<(Learning, Option<Flag>)>> {
    let mut queue: Vec<(Learning, Option<Flag>)> = store
        .review_queue()?
        .into_iter()
        .map(|l| (l, None))
        .collect();
    for f in credit::flagged_learnings(store)? {
        if let Some(entry) = queue.iter_mut().find(|(l, _)| l.id == f.id) {
            entry.1 = Some(f);
        } else if let Some(l) = store.learning(f.id)? {
            queue.push((l, Some(f)));
        }
    }
    Ok(queue)
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

pub(super) fn review(ctx: &Context, args: ReviewArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    // Lines saved in learnings.md since gza wrote it become records first.
    crate::learn::regenerate::sync_edits(&project, &store)?;
    let queue = queue(&store)?;
    if args.json {
        let list = queue
            .iter()
            .map(|(l, flag)| review_json(&store, l, flag.as_ref()))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut out = output::stdout();
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    // The questions are asked on standard error, so standard output keeps only what was done.
    let term = dialoguer::console::Term::stderr();
    // Nothing to ask needs no terminal: a script may run review to see whether anything waits.
    if queue.is_empty() {
        writeln!(
            output::stdout(),
            "Nothing to review: no drafts or quarantined learnings"
        )?;
        return Ok(());
    }
    if !std::io::stdin().is_terminal() || !term.is_term() {
        return Err(usage(format!(
            "{} waiting for review, and review asks one question each on a terminal; `gza learnings review --json` lists them, `gza learnings promote ID…` accepts them",
            match queue.len() {
                1 => "1 learning is".to_string(),
                n => format!("{n} learnings are"),
            }
        )));
    }
    // Ctrl-C ends the question it interrupts instead of the process: the answers given so far
    // are then written to learnings.md before gza exits with 130.
    crate::process::install_stop_handler();
    let ranker = Ranker::load(&project);
    let mut changed = false;
    let mut failed = None;
    let mut stopped = false;
    for (n, (l, flag)) in queue.iter().enumerate() {
        present(&store, &ranker, l, flag.as_ref(), n + 1, queue.len())?;
        // Ctrl-C while gza was busy rather than asking: stop before the next question.
        if crate::process::stop_requested() {
            break;
        }
        match ask(&term, l) {
            Ok(Some((Choice::Quit, _)) | None) => break,
            Ok(Some((choice, text))) => {
                changed |= answer(&project, &store, l, flag.is_some(), choice, text)?
            }
            Err(e) => {
                // A question cut short leaves the cursor hidden.
                let _ = term.show_cursor();
                let _ = term.write_line("");
                let ctrl_c = matches!(&e, dialoguer::Error::IO(io) if io.kind() == std::io::ErrorKind::Interrupted);
                if ctrl_c {
                    stopped = true;
                } else {
                    failed = Some(e);
                }
                break;
            }
        }
    }
    if changed {
        rewrite_file(&project, &store, None)?;
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    if stopped || crate::process::stop_requested() {
        return Err(crate::cli::Interrupted("the answers given before it are kept").into());
    }
    Ok(())
}

/// Show learning number `n` of `total`: its text, where it came from, and up to three similar ones.
fn present(
    store: &Store,
    ranker: &Ranker,
    l: &Learning,
    flag: Option<&Flag>,
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
    if let Some(f) = flag {
        let c = &f.counts;
        let why = if c.rated_down > c.rated_up {
            "rated down"
        } else {
            "its tasks keep going wrong"
        };
        writeln!(
            out,
            "  Flagged      {why}: {} harmful, {} helpful; rated {} up, {} down; ranks ×{:.2}",
            c.harmful, c.helpful, c.rated_up, c.rated_down, f.factor
        )?;
        super::stats::write_flag_evidence(&mut out, f, "    ", None)?;
    }
    // Near-duplicates are what a reviewer wants to see here: the cut, without diversity.
    let mut similar = rank::calibrate(ranker.rank_all(store, &l.text, true)?);
    similar.truncate(4);
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
    project: &crate::project::Project,
    store: &Store,
    l: &Learning,
    flagged: bool,
    choice: Choice,
    text: Option<String>,
) -> anyhow::Result<bool> {
    // Keeping a flagged learning (as it is, or edited) is a person's word for it: an up rating,
    // which lifts the flag until its tasks go wrong again.
    if flagged && matches!(choice, Choice::Accept | Choice::Edit) {
        let why = if choice == Choice::Accept {
            "kept in `gza learnings review`"
        } else {
            "edited in `gza learnings review`"
        };
        match super::rate::rater(&project.root) {
            Some(by) => {
                store.rate_learning(l.id, &by, Some(true), Some(why))?;
            }
            // Kept, but not as anyone's rating: a nameless one would be everyone's.
            None => writeln!(
                output::stderr(),
                "note: {} stays flagged: {}",
                l.label(),
                super::rate::NO_RATER
            )?,
        }
    }
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
