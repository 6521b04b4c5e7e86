//! `gza learnings rate ID up|down [--why TEXT]`: a person's word on a learning. A rating weighs
//! as several tasks' outcomes in ranking (`learn::credit`), and a down rating puts the learning
//! under review with the reason beside it.

use std::io::Write;

use clap::{Args, ValueEnum};

use super::learning_by_id;
use crate::cli::{Context, output, usage};
use crate::learn::credit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Rating {
    /// It helps: rank it higher.
    Up,
    /// It is wrong, stale or unhelpful: rank it lower and list it for review.
    Down,
}

#[derive(Debug, Args)]
pub(super) struct RateArgs {
    /// The learning's id (e.g. L12).
    id: String,
    /// up: it helps; down: it is wrong, stale or unhelpful.
    #[arg(value_enum)]
    rating: Rating,
    /// Why, in a few words (kept with the rating and shown in stats and review).
    #[arg(long, value_name = "TEXT")]
    why: Option<String>,
}

/// Longest reason kept, in characters.
const MAX_WHY: usize = 500;

pub(super) fn rate(ctx: &Context, args: RateArgs) -> anyhow::Result<()> {
    let (_project, store) = ctx.open()?;
    let learning = learning_by_id(&store, &args.id)?;
    let why = match args.why.as_deref().map(crate::redact::one_clean_line) {
        Some(w) if w.is_empty() => {
            return Err(usage(
                "--why is empty; say why in a few words, or leave it out",
            ));
        }
        Some(w) if w.chars().count() > MAX_WHY => {
            return Err(usage(format!(
                "--why is {} characters; keep it under {MAX_WHY}",
                w.chars().count()
            )));
        }
        Some(w) => Some(crate::redact::redact_secrets(&w)),
        None => None,
    };
    let up = args.rating == Rating::Up;
    let counts = store.rate_learning(learning.id, up, why.as_deref())?;
    let base = credit::base_rate(&store.base_rate()?);
    let factor = credit::outcome_factor(&counts, base);
    writeln!(
        output::stdout(),
        "{} Rated {} {}: {} ({} up, {} down; {} helpful and {} harmful tasks); it ranks ×{factor:.2}",
        output::paint(output::GREEN, "✓"),
        learning.label(),
        if up { "up" } else { "down" },
        output::one_line(&learning.text, 60),
        counts.rated_up,
        counts.rated_down,
        counts.helpful,
        counts.harmful,
    )?;
    Ok(())
}
