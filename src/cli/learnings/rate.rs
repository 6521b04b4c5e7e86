//! `gza learnings rate ID up|down|clear [--why TEXT]`: a person's word on a learning. Each
//! person (their git identity, else their OS user) has one standing rating per learning: the
//! latest replaces the earlier one, and `clear` takes it back. A standing down rating outweighs
//! any record of tasks in ranking (`learn::credit`) and puts the learning under review with the
//! reason beside it.

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
    /// Take back your rating.
    #[value(alias = "none")]
    Clear,
}

/// Who rates: the project's git identity (user.email, else user.name), else the OS user;
/// `None` when none is known. Each rater has one standing rating per learning, so ratings with
/// no name would all be one shared vote (one identity-less process could clear another's flag):
/// they are refused instead ([`no_rater`]).
pub(super) fn rater(root: &std::path::Path) -> Option<String> {
    for key in ["user.email", "user.name"] {
        if let Ok(v) = gza_core::git::run(root, &["config", key])
            && !v.trim().is_empty()
        {
            return Some(v.trim().to_string());
        }
    }
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// The one line for a rating with no one to rate as.
pub(super) const NO_RATER: &str = "no identity to rate as (each person has one rating per learning): set `git config user.email you@example.com` and rate again";

pub(super) fn no_rater() -> anyhow::Error {
    usage(NO_RATER)
}

#[derive(Debug, Args)]
pub(super) struct RateArgs {
    /// The learning's id (e.g. L12).
    id: String,
    /// up: it helps; down: it is wrong, stale or unhelpful; clear (or none): take yours back.
    #[arg(value_enum)]
    rating: Rating,
    /// Why, in a few words (kept with the rating and shown in stats and review).
    #[arg(long, value_name = "TEXT")]
    why: Option<String>,
}

/// Longest reason kept, in characters.
const MAX_WHY: usize = 500;

pub(super) fn rate(ctx: &Context, args: RateArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
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
    let rating = match args.rating {
        Rating::Up => Some(true),
        Rating::Down => Some(false),
        Rating::Clear => None,
    };
    let by = rater(&project.root).ok_or_else(no_rater)?;
    let counts = store.rate_learning(learning.id, &by, rating, why.as_deref())?;
    let base = credit::base_rate(&store.base_rate()?);
    let factor = credit::outcome_factor(&counts, base);
    let what = match rating {
        Some(true) => format!("Rated {} up", learning.label()),
        Some(false) => format!("Rated {} down", learning.label()),
        None => format!("Cleared your rating of {}", learning.label()),
    };
    let flag = if credit::flagged(&counts, base) {
        "; flagged for review"
    } else {
        ""
    };
    writeln!(
        output::stdout(),
        "{} {what}: {} ({} up, {} down, one per person; {} helpful and {} harmful tasks); it ranks ×{factor:.2}{flag}",
        output::paint(output::GREEN, "✓"),
        output::one_line(&learning.text, 60),
        counts.rated_up,
        counts.rated_down,
        counts.helpful,
        counts.harmful,
    )?;
    Ok(())
}
