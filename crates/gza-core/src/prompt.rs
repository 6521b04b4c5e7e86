//! Building the prompt an agent is sent.
//!
//! Order: the task, its spec file, the project's learnings (as data, under their own heading),
//! then the instructions for the task's type. `gza show ID --prompt` prints exactly this.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::project::Project;
use crate::task::{Task, TaskType};

/// Heading under which learnings are injected; tests and the hooks look for it.
pub const LEARNINGS_HEADING: &str = "## Project learnings";

/// Characters per token used to estimate token counts (the usual rule of thumb for English).
pub const CHARS_PER_TOKEN: usize = 4;

/// The learnings text a task is given, already bounded and cleaned, and which learnings it holds.
#[derive(Debug, Clone, Default)]
pub struct InjectedLearnings {
    pub text: String,
    /// Learnings given through learnings.md.
    pub file_ids: Vec<i64>,
    /// Learnings the ranker picked for this task.
    pub relevant_ids: Vec<i64>,
    /// Learnings the rerank (`learnings.rerank: extraction`) chose for this task.
    pub rerank_ids: Vec<i64>,
    /// The learnings.md version given, if any.
    pub version: Option<i64>,
}

impl InjectedLearnings {
    /// The ids given, by how they were chosen: (event, ids).
    pub fn events(&self) -> [(&'static str, Vec<i64>); 3] {
        [
            ("task:file", self.file_ids.clone()),
            ("task:rerank", self.rerank_ids.clone()),
            ("task:relevant", self.relevant_ids.clone()),
        ]
    }
}

/// The largest spec file gza puts into a prompt (a larger one would not fit an agent's context).
pub const MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// A task's spec file, as the model may see it: a regular file inside the project (through `..`
/// and symbolic links, whoever named it), at most [`MAX_SPEC_BYTES`], secrets redacted.
fn read_spec(project: &Project, id: crate::task::TaskId, spec: &str) -> Result<String> {
    let path = crate::confine::inside(&project.root, Path::new(spec)).map_err(|outside| {
        Error::Usage(format!(
            "spec file {spec} of task {id} leads outside the project (to {}); gza sends only files inside the project to the agent: `gza edit {id} --spec FILE` with one inside it",
            outside.resolved.display()
        ))
    })?;
    let bytes = crate::fsutil::read_regular_file(&path, MAX_SPEC_BYTES).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Usage(format!(
                "spec file {} of task {id} no longer exists; restore it or `gza edit {id} --spec FILE`",
                path.display()
            ))
        } else {
            crate::fsutil::read_refused(&path, e)
        }
    })?;
    Ok(crate::redact::redact_secrets(&String::from_utf8_lossy(
        &bytes,
    )))
}

/// The full prompt for `task`, with `learnings` injected unless the task or config opts out.
pub fn build_prompt(
    project: &Project,
    task: &Task,
    learnings: Option<&InjectedLearnings>,
) -> Result<String> {
    let mut prompt = String::with_capacity(task.prompt.len() + 2048);
    let _ = write!(prompt, "Complete this task: {}", task.prompt.trim_end());

    if let Some(spec) = &task.spec {
        let content = read_spec(project, task.id, spec)?;
        let _ = write!(
            prompt,
            "\n\n## Specification\n\nThe following specification file ({spec}) provides context for this task:\n\n{}",
            content.trim_end()
        );
    }

    let wants_learnings = !task.skip_learnings && project.config.learnings.enabled;
    if let Some(learnings) = learnings.filter(|l| wants_learnings && !l.text.trim().is_empty()) {
        let _ = write!(
            prompt,
            "\n\n{LEARNINGS_HEADING}\n\n{}\n\n{}",
            crate::fence::FRAMING,
            crate::fence::fenced(crate::fence::Fence::Learnings, &learnings.text)
        );
    }

    prompt.push_str("\n\n");
    prompt.push_str(type_instructions(task.task_type));
    Ok(prompt)
}

/// What an agent is asked to do besides the task itself, by task type.
fn type_instructions(task_type: TaskType) -> &'static str {
    match task_type {
        TaskType::Implement | TaskType::Improve => {
            "When you are done, report what you accomplished: what changed, the files you changed, \
             and any notable decisions or trade-offs. Leave your changes in the working tree; gza \
             commits them to the task's branch, so do not commit or switch branches yourself.\n\n\
             End your final message with a `## Learnings` section: 0-3 short lessons (at most 20 \
             words each, one per line starting with `- `, optionally ending with `(applies when: <kind of task or file glob>)`) that would help future tasks in this \
             project, such as conventions, commands that work, or pitfalls. Omit the section if \
             there is nothing worth keeping."
        }
        TaskType::Explore => {
            "This is an exploration/research task: investigate, do not change files. Your final \
             message is saved as the task's report, so structure it with clear sections and \
             actionable recommendations.\n\n\
             End your final message with a `## Learnings` section: 0-3 short lessons (at most 20 \
             words each, one per line starting with `- `, optionally ending with `(applies when: <kind of task or file glob>)`) that would help future tasks in this \
             project. Omit the section if there is nothing worth keeping."
        }
        TaskType::Plan => {
            "This is a planning task: do not edit files. Your final message is saved as the plan, \
             with the sections Overview, Key design decisions, Implementation steps, and Risks.\n\n\
             End your final message with a `## Learnings` section: 0-3 short lessons (at most 20 \
             words each, one per line starting with `- `, optionally ending with `(applies when: <kind of task or file glob>)`) that would help future tasks in this \
             project. Omit the section if there is nothing worth keeping."
        }
        TaskType::Review => {
            "This is a review task: do not edit files. Your final message is the review, with the \
             sections Summary, Blockers (or `None.`), Follow-Ups, and Verdict (APPROVED, \
             APPROVED_WITH_FOLLOWUPS or CHANGES_REQUESTED).\n\n\
             End your final message with a `## Learnings` section: 0-3 short lessons (at most 20 \
             words each, one per line starting with `- `, optionally ending with `(applies when: <kind of task or file glob>)`) that would help future tasks in this \
             project. Omit the section if there is nothing worth keeping."
        }
    }
}

/// Largest learnings.md gza reads; gza writes a few kilobytes, so more is not a learnings file.
pub const MAX_LEARNINGS_FILE_BYTES: u64 = 1024 * 1024;

/// The learnings file as it is injected: cleaned of control characters and cut to
/// `learnings.max_tokens` (estimated at [`CHARS_PER_TOKEN`] characters a token), whole lines only.
pub fn read_learnings_file(project: &Project) -> Result<Option<InjectedLearnings>> {
    let path = project.learnings_path();
    let bytes =
        match crate::fsutil::read_project_file(&project.root, &path, MAX_LEARNINGS_FILE_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(crate::fsutil::read_refused(&path, e)),
        };
    let text = String::from_utf8_lossy(&bytes);
    let budget = project.config.learnings.max_tokens as usize * CHARS_PER_TOKEN;
    let mut kept = String::new();
    for line in text.lines() {
        let clean: String = line
            .chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .collect();
        if kept.len() + clean.len() + 1 > budget {
            break;
        }
        kept.push_str(&clean);
        kept.push('\n');
    }
    Ok(Some(InjectedLearnings {
        text: kept,
        ..InjectedLearnings::default()
    }))
}
