//! `gza comment`: a note on a task, shown by `gza show` and given to the improve tasks of its
//! branch.

use std::io::Write;

use clap::Args;

use super::{Context, output, usage};
use crate::store::MAX_COMMENT_BYTES;
use crate::task::{TaskId, TaskType};

#[derive(Debug, Args)]
pub struct CommentArgs {
    /// The task to comment on.
    id: TaskId,
    /// What to say (several words are joined with spaces).
    #[arg(required = true, value_name = "TEXT")]
    text: Vec<String>,
    /// Who says it (shown with the comment, and to the agent).
    #[arg(long, value_name = "NAME")]
    author: Option<String>,
}

pub fn cmd_comment(ctx: &Context, args: CommentArgs) -> anyhow::Result<()> {
    let text = args.text.join(" ");
    let text = text.trim();
    if text.is_empty() {
        return Err(usage("the comment is empty; say what you want to note"));
    }
    if text.contains('\0') {
        return Err(usage(
            "the comment contains a NUL byte; comments are plain text",
        ));
    }
    if text.len() > MAX_COMMENT_BYTES {
        return Err(usage(format!(
            "the comment is {} bytes; the limit is {MAX_COMMENT_BYTES}: put long material in a spec file",
            text.len()
        )));
    }
    let author = args
        .author
        .as_deref()
        .map(crate::redact::one_clean_line)
        .filter(|a| !a.is_empty());
    let (_, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let id = store.add_comment(task.id, text, author.as_deref())?;
    let mut out = output::stdout();
    let then = match task.task_type {
        TaskType::Implement | TaskType::Improve | TaskType::Review => {
            "; the next improve task of its branch is given it"
        }
        TaskType::Explore | TaskType::Plan => "",
    };
    writeln!(
        out,
        "{} Added comment {id} to task {}{then}",
        output::paint(output::GREEN, "✓"),
        task.id
    )?;
    Ok(())
}
