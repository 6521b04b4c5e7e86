//! `gza learnings hint`: "applies when" hints, written by the extraction model, for learnings
//! that have none (`gza_learn::hints`).

use std::io::Write;

use clap::Args;

use super::{rewrite_file, wait_for_regeneration};
use crate::cli::{Context, output, usage};
use crate::error::Error;
use crate::learn::hints;
use crate::learn::rank::Ranker;
use crate::learning::{Learning, Status, label};

#[derive(Debug, Args)]
pub(super) struct HintArgs {
    /// The learnings to give hints (e.g. L3 L12); default: every active learning without any.
    ids: Vec<String>,
    /// Drafts too, not only active learnings.
    #[arg(long, conflicts_with = "ids")]
    all: bool,
    /// Ask the model and print the hints it gives; store nothing.
    #[arg(long)]
    dry_run: bool,
}

pub(super) fn hint(ctx: &Context, args: HintArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let config = &project.config.learnings;
    let client = crate::llm::client_for(config, &project.config.providers.claude.path)
        .map_err(Error::from)?
        .ok_or_else(|| {
            usage(
                "no extraction model is configured to write hints: set learnings.extraction_provider \
                 to anthropic (with ANTHROPIC_API_KEY), openai or claude-cli, or give hints yourself \
                 with `gza learnings edit ID --when PHRASE`",
            )
        })?;
    let mut err = output::stderr();
    // The learnings as they are, a person's saved edits to learnings.md taken in first.
    let mut wanted: Vec<Learning> = if args.ids.is_empty() {
        drop(wait_for_regeneration(&project)?);
        rewrite_file(&project, &store, None)?;
        store
            .learnings_in_use(args.all)?
            .into_iter()
            .filter(|l| l.applies_when.is_empty())
            .collect()
    } else {
        let named = args
            .ids
            .iter()
            .map(|id| super::learning_by_id(&store, id))
            .collect::<anyhow::Result<Vec<_>>>()?;
        drop(wait_for_regeneration(&project)?);
        rewrite_file(&project, &store, None)?;
        let mut wanted = Vec::new();
        for l in named {
            let Some(l) = store.learning(l.id)? else {
                continue;
            };
            let skip = if l.status == Status::Archived {
                Some(format!(
                    "is archived (`gza learnings restore {}` first)",
                    l.label()
                ))
            } else if l.lifecycle.quarantine_reason.is_some() {
                Some(
                    "is held for review (`gza learnings review`); it gets no hints until a person accepts it"
                        .to_string(),
                )
            } else if !l.applies_when.is_empty() {
                Some(format!(
                    "has hints already (`gza learnings edit {} --no-when` clears them)",
                    l.label()
                ))
            } else {
                None
            };
            match skip {
                Some(why) => writeln!(
                    err,
                    "{} {} {why}; skipped",
                    output::paint(output::YELLOW, "note:"),
                    l.label()
                )?,
                None if !wanted.iter().any(|w: &Learning| w.id == l.id) => wanted.push(l),
                None => {}
            }
        }
        wanted
    };
    wanted.sort_by_key(|l| l.id);
    let mut out = output::stdout();
    if wanted.is_empty() {
        writeln!(
            out,
            "No learning without hints to ask about; nothing was sent."
        )?;
        return Ok(());
    }
    let batches: Vec<&[Learning]> = wanted.chunks(hints::BATCH).collect();
    // Each failed batch's size and one line saying why.
    let mut failed: Vec<(usize, String)> = Vec::new();
    let mut total = hints::Done::default();
    for (n, batch) in batches.iter().enumerate() {
        let refs: Vec<&Learning> = batch.iter().collect();
        let ids = span(batch);
        match hints::hint_batch(&store, client.as_ref(), &refs, args.dry_run) {
            Ok(done) => {
                for (id, list) in &done.written {
                    writeln!(
                        out,
                        "{} {}  {}",
                        output::paint(output::GREEN, "✓"),
                        label(*id),
                        list.join("; ")
                    )?;
                }
                for (id, hint, why) in &done.held {
                    writeln!(
                        out,
                        "{} {}  {hint:?} not stored: {why}",
                        output::paint(output::YELLOW, "held"),
                        label(*id)
                    )?;
                }
                for id in &done.changed {
                    writeln!(
                        out,
                        "{} {}  changed meanwhile (hints, archived or held); left as it is",
                        output::paint(output::DIM, "–"),
                        label(*id)
                    )?;
                }
                total.written.extend(done.written);
                total.held.extend(done.held);
                total.none.extend(done.none);
                total.changed.extend(done.changed);
                total.input_tokens += done.input_tokens;
                total.output_tokens += done.output_tokens;
            }
            Err(f) => {
                total.input_tokens += f.input_tokens;
                total.output_tokens += f.output_tokens;
                let line = format!("hints for {ids} were not written: {}", f.why);
                if batches.len() > 1 {
                    writeln!(
                        err,
                        "{} batch {} of {}: {line}",
                        output::paint(output::RED, "failed:"),
                        n + 1,
                        batches.len()
                    )?;
                }
                failed.push((batch.len(), line));
            }
        }
    }
    if !args.dry_run && !total.written.is_empty() {
        // Their vectors were dropped with the write; the background job embeds them again
        // (meanwhile they rank by words, hints included).
        let ranker = Ranker::deferred(&project);
        if let Err(e) = ranker.hand_off(&store) {
            crate::learn::log(&project, &format!("embedding hinted learnings: {e}"));
        }
    }
    let tried = wanted.len() - failed.iter().map(|(n, _)| n).sum::<usize>();
    if tried > 0 {
        let mut summary = format!(
            "{} {} of {} learning(s) given hints ({} hints)",
            if args.dry_run {
                "Dry run: nothing was written;"
            } else {
                ""
            },
            total.written.len(),
            tried,
            total.written.iter().map(|(_, h)| h.len()).sum::<usize>(),
        );
        if !total.held.is_empty() {
            summary.push_str(&format!(
                "; {} held by the quarantine and not stored",
                total.held.len()
            ));
        }
        if !total.none.is_empty() {
            summary.push_str(&format!("; {} given none", total.none.len()));
        }
        if !total.changed.is_empty() {
            summary.push_str(&format!("; {} changed meanwhile", total.changed.len()));
        }
        summary.push_str(&format!(
            "; {} in, {} out tokens ({} {})",
            total.input_tokens,
            total.output_tokens,
            client.provider(),
            client.model()
        ));
        writeln!(out, "{}", summary.trim_start())?;
    }
    match failed.len() {
        0 => Ok(()),
        1 if batches.len() == 1 => Err(Error::Unreachable(failed.remove(0).1).into()),
        n => Err(Error::Unreachable(format!(
            "{n} of {} batches failed and nothing was written for their learnings; run the command again to retry them",
            batches.len()
        ))
        .into()),
    }
}

/// `L1, L2, L3` for up to three learnings, `L1-L40 (20 learnings)` beyond.
fn span(batch: &[Learning]) -> String {
    if batch.len() <= 3 {
        batch
            .iter()
            .map(|l| l.label())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        format!(
            "{}-{} ({} learnings)",
            batch[0].label(),
            batch[batch.len() - 1].label(),
            batch.len()
        )
    }
}
