//! `gza learnings edit`: change a learning's text, section, priority, keywords, "applies when"
//! hints or triggers.

use std::io::Write;

use clap::Args;

use super::{TriggerArgs, note_if_held, parse_priority, say_waiting};
use crate::actions::EditLearning;
use crate::cli::{Context, output};
use crate::learning::Priority;

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
    /// A kind of task it applies to, in words (repeatable; replaces the old ones): helps the
    /// ranker find it for tasks that never use its words.
    #[arg(long = "when", value_name = "PHRASE")]
    applies_when: Vec<String>,
    /// Remove its "applies when" hints.
    #[arg(long, conflicts_with = "applies_when")]
    no_when: bool,
    /// Replace its trigger conditions and checklist with these.
    #[command(flatten)]
    triggers: TriggerArgs,
    /// Remove its trigger conditions and checklist.
    #[arg(long, conflicts_with_all = ["tools", "files", "actions", "contexts", "checklist"])]
    no_triggers: bool,
}

pub(super) fn edit(ctx: &Context, args: EditArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    super::not_empty("--when", &args.applies_when)?;
    let triggers = if args.no_triggers {
        Some((Default::default(), Vec::new()))
    } else if args.triggers.is_empty() {
        None
    } else {
        Some((args.triggers.triggers()?, args.triggers.checklist.clone()))
    };
    let change = EditLearning {
        text: args.text,
        section: args.section,
        priority: args.priority,
        keywords: args.keywords,
        applies_when: if args.no_when {
            Some(Vec::new())
        } else if args.applies_when.is_empty() {
            None
        } else {
            Some(args.applies_when)
        },
        triggers,
    };
    let edited = crate::actions::edit_learning(&project, &store, &args.id, &change, say_waiting)?;
    for note in &edited.notes {
        writeln!(
            output::stderr(),
            "{} {note}",
            output::paint(output::YELLOW, "note:")
        )?;
    }
    writeln!(
        output::stdout(),
        "{} Updated {}",
        output::paint(output::GREEN, "✓"),
        edited.learning.label()
    )?;
    if edited.held.is_some() {
        note_if_held(&store, edited.learning.id)?;
    }
    Ok(())
}
