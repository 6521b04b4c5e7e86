//! `gza learnings edit`: change a learning's text, section, priority, keywords or triggers.

use std::io::Write;

use clap::Args;

use super::{
    TriggerArgs, learning_by_id, learning_text, new_section_arg, note_if_held, parse_priority,
    rewrite_file, wait_for_regeneration,
};
use crate::cli::{Context, output, usage};
use crate::learn::rank::Ranker;
use crate::learning::Priority;
use crate::store::LearningEdit;

#[derive(Debug, Args)]
pub(super) struct EditArgs {
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

pub(super) fn edit(ctx: &Context, args: EditArgs) -> anyhow::Result<()> {
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
