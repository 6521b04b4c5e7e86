//! `gza add` and `gza edit`: define a task.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use super::{Context, output, usage};
use crate::config::ProviderKind;
use crate::error::Error;
use crate::store::TaskEdit;
use crate::task::{Tag, TaskId, TaskStatus, TaskType};

/// Where the prompt comes from, shared by add and edit.
#[derive(Debug, Args)]
struct PromptSource {
    /// Read the prompt from a UTF-8 text file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["prompt", "edit"])]
    prompt_file: Option<PathBuf>,
    /// Write the prompt in $VISUAL or $EDITOR.
    #[arg(long, conflicts_with = "prompt")]
    edit: bool,
}

/// Task options shared by add and edit.
#[derive(Debug, Args)]
struct TaskOptions {
    /// Task type: implement, explore, plan, review or improve.
    #[arg(long = "type", short = 't', value_name = "TYPE", value_parser = super::parse_type)]
    task_type: Option<TaskType>,
    /// Build on this task's branch and results.
    #[arg(long, value_name = "ID")]
    based_on: Option<TaskId>,
    /// Run only after this task has completed.
    #[arg(long, value_name = "ID")]
    depends_on: Option<TaskId>,
    /// Put the task in a group (`gza work --group GROUP` runs only that group).
    #[arg(long, short = 'g', value_name = "GROUP", value_parser = parse_group)]
    group: Option<String>,
    /// Include this spec file in the prompt.
    #[arg(long, value_name = "FILE")]
    spec: Option<PathBuf>,
    /// Model for this task (overrides gza.yaml).
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Agent provider for this task: claude, codex, gemini or command.
    #[arg(long, value_name = "PROVIDER", value_parser = parse_provider)]
    provider: Option<ProviderKind>,
    /// Do not inject learnings into this task's prompt, nor learn from it.
    #[arg(long)]
    no_learnings: bool,
    /// Label the task (repeatable); its reviews, improve tasks and retries carry the label.
    #[arg(long = "tag", value_name = "TAG", value_parser = super::tags::parse_tag)]
    tags: Vec<Tag>,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// What the agent should do.
    prompt: Option<String>,
    #[command(flatten)]
    source: PromptSource,
    #[command(flatten)]
    options: TaskOptions,
    /// Run this task before every other pending task.
    #[arg(long)]
    next: bool,
    /// Print only the new task's id.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// The task to change.
    id: TaskId,
    /// The new prompt.
    prompt: Option<String>,
    #[command(flatten)]
    source: PromptSource,
    #[command(flatten)]
    options: TaskOptions,
    /// Undo --no-learnings: inject learnings and learn from this task again.
    #[arg(long, conflicts_with = "no_learnings")]
    learnings: bool,
    /// Make the task urgent (run before other pending tasks).
    #[arg(long)]
    next: bool,
    /// Take a tag off the task (repeatable). Tags can be changed whatever the task's status.
    #[arg(long = "untag", value_name = "TAG", value_parser = super::tags::parse_tag)]
    untag: Vec<Tag>,
}

pub(crate) fn parse_group(text: &str) -> Result<String, String> {
    crate::actions::parse_group(text)
}

pub(crate) fn parse_provider(text: &str) -> Result<ProviderKind, String> {
    ProviderKind::parse(text).ok_or_else(|| "expected one of claude, codex, gemini, command".into())
}

pub fn cmd_add(ctx: &Context, args: AddArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let prompt = match resolve_prompt(args.prompt, &args.source, "")? {
        Some(p) => p,
        None => {
            return Err(usage(
                "no prompt given; pass it as an argument, with --prompt-file FILE, or use --edit",
            ));
        }
    };
    let o = &args.options;
    let add = crate::actions::AddTask {
        prompt,
        task_type: o.task_type,
        based_on: o.based_on,
        depends_on: o.depends_on,
        group: o.group.clone(),
        spec: o.spec.clone(),
        model: o.model.clone(),
        provider: o.provider,
        no_learnings: o.no_learnings,
        urgent: args.next,
        tags: o.tags.clone(),
    };
    let id = crate::actions::add_task(&project, &store, &add)?;
    let mut out = output::stdout();
    if args.quiet {
        writeln!(out, "{id}")?;
    } else {
        writeln!(out, "{} Added task {id}", output::paint(output::GREEN, "✓"))?;
    }
    Ok(())
}

pub fn cmd_edit(ctx: &Context, args: EditArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let o = &args.options;
    let mut edit = TaskEdit {
        skip_learnings: match (o.no_learnings, args.learnings) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        ..TaskEdit::default()
    };
    let mut use_editor = args.source.edit;
    let changes_definition = args.prompt.is_some()
        || args.source.prompt_file.is_some()
        || use_editor
        || o.task_type.is_some()
        || o.based_on.is_some()
        || o.depends_on.is_some()
        || o.group.is_some()
        || o.spec.is_some()
        || o.model.is_some()
        || o.provider.is_some()
        || args.next;
    let retags = !o.tags.is_empty() || !args.untag.is_empty();
    if !changes_definition && edit.skip_learnings.is_none() && !retags {
        // `gza edit ID` alone opens the prompt in the editor.
        if !std::io::stdin().is_terminal() {
            return Err(usage(format!(
                "nothing to change; pass a new prompt or options (`gza edit {} --help`)",
                args.id
            )));
        }
        use_editor = true;
    }
    if changes_definition || use_editor {
        // Learnings can be switched on or off at any time; the rest is fixed once a task has run.
        if task.status() != TaskStatus::Pending {
            return Err(usage(format!(
                "task {} is {}; only pending tasks can be changed (`gza retry {}` queues it again)",
                task.id,
                task.status(),
                task.id
            )));
        }
        let source = PromptSource {
            prompt_file: args.source.prompt_file.clone(),
            edit: use_editor,
        };
        edit.prompt = resolve_prompt(args.prompt, &source, &task.prompt)?;
        edit.task_type = o.task_type;
        edit.based_on = o.based_on.map(Some);
        edit.depends_on = o.depends_on.map(Some);
        edit.group = o.group.clone().map(Some);
        edit.spec = o
            .spec
            .as_deref()
            .map(|s| crate::actions::resolve_spec(&project, s).map(Some))
            .transpose()?;
        edit.model = o.model.clone().map(Some);
        edit.provider = o.provider.map(|p| Some(p.as_str().to_string()));
        edit.urgent = args.next.then_some(true);
    }
    store.edit_task(args.id, &edit)?;
    if retags {
        store.retag(args.id, &o.tags, &args.untag)?;
    }
    writeln!(
        output::stdout(),
        "{} Updated task {}",
        output::paint(output::GREEN, "✓"),
        args.id
    )?;
    Ok(())
}

/// The prompt from the argument, a file, or the editor (seeded with `current`); `None` if none was given.
fn resolve_prompt(
    arg: Option<String>,
    source: &PromptSource,
    current: &str,
) -> anyhow::Result<Option<String>> {
    let prompt = if let Some(text) = arg {
        text
    } else if let Some(path) = &source.prompt_file {
        read_prompt_file(path)?
    } else if source.edit {
        edit_in_editor(current)?
    } else {
        return Ok(None);
    };
    crate::actions::validate_prompt(&prompt)?;
    Ok(Some(prompt))
}

/// Only a regular file, opened non-blocking (a FIFO never stalls), and at most one byte more
/// than a prompt may hold: `/dev/urandom` or a huge file is refused, never read into memory.
fn read_prompt_file(path: &Path) -> Result<String, Error> {
    let limit = crate::actions::MAX_PROMPT_BYTES as u64;
    // The person named it, so what is wrong with it is theirs to fix, not a fault of gza's.
    let refuse = |what: String| Error::Usage(format!("prompt file {} {what}", path.display()));
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            return Err(refuse(format!(
                "is {}, not a regular file; give a file of text",
                gza_core::fsutil::describe_file_type(&meta.file_type())
            )));
        }
        Ok(meta) if meta.len() > limit => {
            return Err(refuse(format!(
                "is {} bytes; the limit is {limit}: put large material in a --spec file",
                meta.len()
            )));
        }
        _ => {}
    }
    // Checked again on the opened file (it may have been swapped since); one byte past the
    // limit is read so a file grown since is refused by the prompt's own check, not cut short.
    let bytes =
        gza_core::fsutil::read_regular_file(path, limit + 1).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => refuse("does not exist".into()),
            _ => refuse(format!("cannot be read: {e}")),
        })?;
    String::from_utf8(bytes).map_err(|e| {
        Error::Usage(format!(
            "prompt file {} is not UTF-8 text (invalid byte at offset {}); convert it to UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Open $VISUAL or $EDITOR on a temporary file holding `current`, and return what the user saved.
fn edit_in_editor(current: &str) -> anyhow::Result<String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let dir = tempfile::Builder::new().prefix("gza-edit").tempdir()?;
    let path = dir.path().join("PROMPT.md");
    std::fs::write(&path, current)?;
    // The editor setting may carry arguments ("code --wait"), so let the shell split it.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status()
        .map_err(|e| usage(format!("cannot start editor `{editor}`: {e}; set $EDITOR")))?;
    if !status.success() {
        return Err(usage(format!(
            "editor `{editor}` exited with {status}; nothing was changed"
        )));
    }
    Ok(read_prompt_file(&path)?)
}
