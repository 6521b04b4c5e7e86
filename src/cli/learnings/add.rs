//! `gza learnings add`: a learning of a person's own.

use std::io::Write;

use clap::Args;

use super::{
    TriggerArgs, learning_text, new_section_arg, note_if_held, parse_priority, rewrite_file,
    wait_for_regeneration,
};
use crate::cli::{Context, output};
use crate::learn::items;
use crate::learn::rank::Ranker;
use crate::learning::{NewLearning, Origin, Priority, label};

#[derive(Debug, Args)]
pub(super) struct AddArgs {
    /// The learning (2 to 80 words).
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

pub(super) fn add(ctx: &Context, args: AddArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let section = match &args.section {
        Some(s) => new_section_arg(&project, s)?,
        None => items::section_named("", &project.config.learnings.sections),
    };
    let text = learning_text(&args.text)?;
    super::not_empty("--when", &args.applies_when)?;
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
    // Layer (g), when set: the learning's nearest labelled examples, by meaning. The model is
    // loaded here anyway (to embed the learning for ranking below).
    let ranker = Ranker::load(&project);
    if project.config.learnings.quarantine_neighbours
        && let Some(why) = crate::learn::neighbours::screen(&ranker, &mut learning)
    {
        writeln!(
            output::stderr(),
            "note: learnings.quarantine_neighbours is on but cannot run: {why}; the rules alone checked this learning"
        )?;
    }
    // A person's learning is added as written, but a learning in use that already says the
    // same (in the same or other words, by the test that merges extracted and agents' items)
    // is named, so the person can keep one rather than have both take a slot in every prompt.
    let twin = same_as_known(&store, &ranker, &learning);
    // During a regeneration, wait for it: the learning is stored only once the change can be
    // made whole (item 20: never stored behind an error).
    let lock = wait_for_regeneration(&project)?;
    let id = store.add_learning(&learning)?;
    drop(lock);
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
    if let Some(twin) = twin {
        writeln!(
            output::stderr(),
            "note: {} already says this ({}); keep one: `gza learnings archive {}` (or {})",
            label(twin.id),
            crate::redact::one_clean_line(&twin.text),
            label(id),
            label(twin.id),
        )?;
    }
    Ok(())
}

/// The learning in use that says what `new` says, as regeneration decides it
/// ([`crate::learn::dedupe::decide`]: the same words, or the same meaning by the model).
fn same_as_known(
    store: &crate::store::Store,
    ranker: &Ranker,
    new: &NewLearning,
) -> Option<crate::learning::Learning> {
    let known = store.learnings(false).ok()?;
    let item = items::Item {
        section: new.section.clone(),
        content: new.text.clone(),
        keywords: Vec::new(),
        applies_when: Vec::new(),
        priority: None,
        confidence: None,
        risk: None,
    };
    let taught = crate::learn::dedupe::decide(&[item], Origin::User, &known, Some(ranker), store);
    match taught.first() {
        Some(crate::store::Taught::Confirms(id)) => known.into_iter().find(|l| l.id == *id),
        _ => None,
    }
}
