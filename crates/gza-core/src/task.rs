//! The task: what a user queued and what happened when it ran.

use chrono::{DateTime, Utc};
use serde::Serialize;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parse the stored or typed name.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }

            /// Every valid name, comma-separated, for error messages.
            pub fn names() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

string_enum! {
    /// What kind of work a task asks for; it decides isolation and the prompt's closing instructions.
    TaskType {
        Implement => "implement",
        Explore => "explore",
        Plan => "plan",
        Review => "review",
        Improve => "improve",
    }
}

string_enum! {
    /// Where a task is in its life.
    TaskStatus {
        Pending => "pending",
        InProgress => "in_progress",
        Completed => "completed",
        Failed => "failed",
        Dropped => "dropped",
    }
}

/// What a review concluded, from the Verdict section of its final output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewVerdict {
    Approved,
    ApprovedWithFollowups,
    ChangesRequested,
}

impl ReviewVerdict {
    pub const ALL: [ReviewVerdict; 3] = [
        ReviewVerdict::Approved,
        ReviewVerdict::ApprovedWithFollowups,
        ReviewVerdict::ChangesRequested,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerdict::Approved => "APPROVED",
            ReviewVerdict::ApprovedWithFollowups => "APPROVED_WITH_FOLLOWUPS",
            ReviewVerdict::ChangesRequested => "CHANGES_REQUESTED",
        }
    }

    /// Parse the stored name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == text)
    }
}

impl std::fmt::Display for ReviewVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl TaskStatus {
    /// The status as the rest of a sentence about a task: "is pending", "failed".
    pub fn as_phrase(self) -> &'static str {
        match self {
            TaskStatus::Pending => "is pending",
            TaskStatus::InProgress => "is running",
            TaskStatus::Completed => "is completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Dropped => "was dropped",
        }
    }
}

impl TaskType {
    /// The type with its article, for sentences: "an implement task", "a plan task".
    pub fn with_article(self) -> String {
        let article = match self {
            TaskType::Implement | TaskType::Explore | TaskType::Improve => "an",
            TaskType::Plan | TaskType::Review => "a",
        };
        format!("{article} {self} task")
    }

    /// Code tasks change the repository and run in their own worktree and branch.
    pub fn changes_code(self) -> bool {
        matches!(self, TaskType::Implement | TaskType::Improve)
    }
}

/// A task's id: its row in the `tasks` table, shown and typed as a plain number.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct TaskId(pub i64);

impl std::fmt::Display for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for TaskId {
    type Err = std::num::ParseIntError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse().map(TaskId)
    }
}

impl rusqlite::ToSql for TaskId {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl rusqlite::types::FromSql for TaskId {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        i64::column_result(value).map(TaskId)
    }
}

/// A label on tasks (`gza add --tag`): lower-case letters, digits and `-_.:/`, starting with a
/// letter or digit, at most [`Tag::MAX_CHARS`] characters. What a person types is trimmed and
/// put in lower case, so `Auth` and `auth` are one tag.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Tag(String);

impl Tag {
    pub const MAX_CHARS: usize = 40;

    /// The tag `text` names, or why it is none.
    pub fn parse(text: &str) -> Result<Tag, String> {
        let tag = text.trim().to_lowercase();
        let Some(first) = tag.chars().next() else {
            return Err("a tag cannot be empty".into());
        };
        if !first.is_alphanumeric() {
            return Err(format!("tag {tag:?} must start with a letter or digit"));
        }
        if let Some(bad) = tag
            .chars()
            .find(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/')))
        {
            return Err(format!(
                "tag {tag:?} holds {bad:?}; a tag is one word of letters, digits and - _ . : /"
            ));
        }
        if tag.chars().count() > Tag::MAX_CHARS {
            return Err(format!("a tag has at most {} characters", Tag::MAX_CHARS));
        }
        Ok(Tag(tag))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Tag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl rusqlite::ToSql for Tag {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl rusqlite::types::FromSql for Tag {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        Tag::parse(text).map_err(|e| rusqlite::types::FromSqlError::Other(e.into()))
    }
}

impl std::str::FromStr for Tag {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Tag::parse(text)
    }
}

/// Why a task failed, as gza records it in `failure_reason`.
///
/// A reason this gza does not know (written by a newer one) is kept as it was stored, so it is
/// shown and written back unchanged rather than refused.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FailureReason {
    /// gza stopped the agent after `timeout_minutes`.
    Timeout,
    /// The agent reached `max_turns`.
    MaxTurns,
    /// `gza kill` or a stop request ended it.
    Killed,
    /// Its worker died before recording how it ended.
    WorkerDied,
    /// The agent reported a failure of its own.
    AgentError,
    /// The agent exited with an error and no final result.
    AgentExit,
    /// The agent exited cleanly without a final result.
    NoResult,
    /// The agent could not be started.
    AgentStart,
    /// The sandbox could not be set up.
    SandboxError,
    /// The prompt could not be built.
    PromptError,
    /// A git step (the worktree, the commit) failed.
    GitError,
    /// The agent replaced its worktree's `.git`; nothing was run or committed there.
    UnsafeWorktree,
    /// A reason this gza does not know.
    Other(UnknownReason),
}

/// A stored failure reason that is none of those this gza knows; made only by
/// [`FailureReason::parse`], so a known reason is never one of these.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownReason(String);

impl FailureReason {
    /// Every reason this gza records.
    pub const KNOWN: [FailureReason; 12] = [
        FailureReason::Timeout,
        FailureReason::MaxTurns,
        FailureReason::Killed,
        FailureReason::WorkerDied,
        FailureReason::AgentError,
        FailureReason::AgentExit,
        FailureReason::NoResult,
        FailureReason::AgentStart,
        FailureReason::SandboxError,
        FailureReason::PromptError,
        FailureReason::GitError,
        FailureReason::UnsafeWorktree,
    ];

    /// The stored name: `TIMEOUT`, `AGENT_EXIT`, …
    pub fn as_str(&self) -> &str {
        match self {
            FailureReason::Timeout => "TIMEOUT",
            FailureReason::MaxTurns => "MAX_TURNS",
            FailureReason::Killed => "KILLED",
            FailureReason::WorkerDied => "WORKER_DIED",
            FailureReason::AgentError => "AGENT_ERROR",
            FailureReason::AgentExit => "AGENT_EXIT",
            FailureReason::NoResult => "NO_RESULT",
            FailureReason::AgentStart => "AGENT_START",
            FailureReason::SandboxError => "SANDBOX_ERROR",
            FailureReason::PromptError => "PROMPT_ERROR",
            FailureReason::GitError => "GIT_ERROR",
            FailureReason::UnsafeWorktree => "UNSAFE_WORKTREE",
            FailureReason::Other(UnknownReason(text)) => text,
        }
    }

    /// Failures that point at the agent's provider rather than the task: its CLI cannot start
    /// or be sandboxed, exits with an error and no result (an expired key, an outage, a crash),
    /// or reports an error (an API error, a dropped stream). `gza watch` pauses the provider on
    /// them; outcomes credit no learning with them.
    pub fn is_provider_failure(&self) -> bool {
        matches!(
            self,
            FailureReason::AgentStart
                | FailureReason::AgentExit
                | FailureReason::AgentError
                | FailureReason::SandboxError
        )
    }

    /// The reason stored as `text`; one this gza does not know is kept as it is.
    pub fn parse(text: &str) -> FailureReason {
        Self::KNOWN
            .into_iter()
            .find(|r| r.as_str() == text)
            .unwrap_or_else(|| FailureReason::Other(UnknownReason(text.to_string())))
    }
}

impl std::fmt::Display for FailureReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for FailureReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for FailureReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(FailureReason::parse(&text))
    }
}

impl rusqlite::ToSql for FailureReason {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::Borrowed(
            rusqlite::types::ValueRef::Text(self.as_str().as_bytes()),
        ))
    }
}

impl rusqlite::types::FromSql for FailureReason {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        value.as_str().map(FailureReason::parse)
    }
}

/// A process, told apart from a later one that reuses its pid by its start time (clock ticks
/// since boot, when known).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessId {
    pub pid: i64,
    pub start: Option<i64>,
}

/// How a finished task ended (pueue's `TaskResult`).
#[derive(Debug, Clone, PartialEq)]
pub enum TaskResult {
    /// The agent finished the task; a review's verdict, when one was found in its output.
    Completed {
        review_verdict: Option<ReviewVerdict>,
    },
    /// The run failed. `None`: no reason was recorded (a row an older tool or a person wrote);
    /// gza itself always records one.
    Failed { reason: Option<FailureReason> },
    /// Taken out of the queue without running to an end.
    Dropped,
}

impl TaskResult {
    /// A failure for `reason`.
    pub fn failed(reason: FailureReason) -> TaskResult {
        TaskResult::Failed {
            reason: Some(reason),
        }
    }

    /// The status this result is stored as.
    pub fn status(&self) -> TaskStatus {
        match self {
            TaskResult::Completed { .. } => TaskStatus::Completed,
            TaskResult::Failed { .. } => TaskStatus::Failed,
            TaskResult::Dropped => TaskStatus::Dropped,
        }
    }

    pub fn failure_reason(&self) -> Option<&FailureReason> {
        match self {
            TaskResult::Failed { reason } => reason.as_ref(),
            _ => None,
        }
    }

    pub fn review_verdict(&self) -> Option<ReviewVerdict> {
        match self {
            TaskResult::Completed { review_verdict } => *review_verdict,
            _ => None,
        }
    }
}

/// Where a task is in its life, with what only that stage has (pueue's `TaskStatus`): a pending
/// task has no times or processes, a running one has its worker and agent, a finished one its
/// result. The times are optional because the database allows rows without them (every column
/// may be NULL so old rows never need back-filling); gza writes them at every step.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskState {
    /// Queued; not claimed yet.
    Pending,
    /// Claimed by a worker; its agent runs (or is about to).
    InProgress {
        started_at: Option<DateTime<Utc>>,
        /// The `gza work` process that owns the task.
        worker: Option<ProcessId>,
        /// The agent process, leader of its own process group, once started.
        agent: Option<ProcessId>,
    },
    /// Ended and recorded.
    Done {
        started_at: Option<DateTime<Utc>>,
        completed_at: Option<DateTime<Utc>>,
        result: TaskResult,
    },
}

impl TaskState {
    /// The status as stored and filtered on.
    pub fn status(&self) -> TaskStatus {
        match self {
            TaskState::Pending => TaskStatus::Pending,
            TaskState::InProgress { .. } => TaskStatus::InProgress,
            TaskState::Done { result, .. } => result.status(),
        }
    }

    pub fn started_at(&self) -> Option<DateTime<Utc>> {
        match self {
            TaskState::Pending => None,
            TaskState::InProgress { started_at, .. } | TaskState::Done { started_at, .. } => {
                *started_at
            }
        }
    }

    pub fn completed_at(&self) -> Option<DateTime<Utc>> {
        match self {
            TaskState::Done { completed_at, .. } => *completed_at,
            _ => None,
        }
    }

    /// The worker that owns a running task.
    pub fn worker(&self) -> Option<ProcessId> {
        match self {
            TaskState::InProgress { worker, .. } => *worker,
            _ => None,
        }
    }

    /// The agent process of a running task.
    pub fn agent(&self) -> Option<ProcessId> {
        match self {
            TaskState::InProgress { agent, .. } => *agent,
            _ => None,
        }
    }

    pub fn result(&self) -> Option<&TaskResult> {
        match self {
            TaskState::Done { result, .. } => Some(result),
            _ => None,
        }
    }

    /// Why a failed task failed, when that was recorded.
    pub fn failure_reason(&self) -> Option<&FailureReason> {
        self.result().and_then(TaskResult::failure_reason)
    }

    /// A completed review's verdict.
    pub fn review_verdict(&self) -> Option<ReviewVerdict> {
        self.result().and_then(TaskResult::review_verdict)
    }

    /// The state stored in `columns`. Columns that do not belong to the status (a failure
    /// reason on a completed task, a worker on a finished one) are not carried: gza never
    /// writes them together.
    pub fn from_columns(columns: StateColumns) -> TaskState {
        let process = |pid: Option<i64>, start| pid.map(|pid| ProcessId { pid, start });
        let done = |result| TaskState::Done {
            started_at: columns.started_at,
            completed_at: columns.completed_at,
            result,
        };
        match columns.status {
            TaskStatus::Pending => TaskState::Pending,
            TaskStatus::InProgress => TaskState::InProgress {
                started_at: columns.started_at,
                worker: process(columns.running_pid, columns.running_pid_start),
                agent: process(columns.agent_pid, columns.agent_start),
            },
            TaskStatus::Completed => done(TaskResult::Completed {
                review_verdict: columns.review_verdict,
            }),
            TaskStatus::Failed => done(TaskResult::Failed {
                reason: columns.failure_reason.clone(),
            }),
            TaskStatus::Dropped => done(TaskResult::Dropped),
        }
    }

    /// The state as the columns that store it.
    pub fn columns(&self) -> StateColumns {
        let worker = self.worker();
        let agent = self.agent();
        StateColumns {
            status: self.status(),
            started_at: self.started_at(),
            completed_at: self.completed_at(),
            running_pid: worker.map(|w| w.pid),
            running_pid_start: worker.and_then(|w| w.start),
            agent_pid: agent.map(|a| a.pid),
            agent_start: agent.and_then(|a| a.start),
            failure_reason: self.failure_reason().cloned(),
            review_verdict: self.review_verdict(),
        }
    }
}

/// The columns of a `tasks` row that hold its state, as they are stored: the shape of the
/// database and of the JSON gza prints, not one to program against ([`TaskState`] is).
#[derive(Debug, Clone, PartialEq)]
pub struct StateColumns {
    pub status: TaskStatus,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub running_pid: Option<i64>,
    pub running_pid_start: Option<i64>,
    pub agent_pid: Option<i64>,
    pub agent_start: Option<i64>,
    pub failure_reason: Option<FailureReason>,
    pub review_verdict: Option<ReviewVerdict>,
}

/// What a run cost and took, as far as it is known: an agent may report some figures and not
/// others, and a running task's are filled in as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    pub cost_usd: Option<f64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub num_turns: Option<i64>,
    pub duration_seconds: Option<f64>,
}

/// Where a code task's branch started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The branch it was cut from; `None`: HEAD was detached.
    pub branch: Option<String>,
    /// That branch's commit at the time: the task's changes are the branch since this commit.
    pub commit: String,
}

/// When `gza merge` merged a task's branch, and into which branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merge {
    pub at: DateTime<Utc>,
    pub into: String,
}

/// One task: what a user queued, where it is in its life, and what its run left.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: TaskId,
    pub prompt: String,
    pub task_type: TaskType,
    pub created_at: DateTime<Utc>,
    /// The task this one continues or repeats (`gza retry`, `gza improve`, `gza resume`).
    pub based_on: Option<TaskId>,
    /// The task that must complete before this one runs.
    pub depends_on: Option<TaskId>,
    pub group: Option<String>,
    pub spec: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub skip_learnings: bool,
    pub urgent: bool,
    /// The agent session this task continues (`gza resume`).
    pub resume_session_id: Option<String>,
    pub state: TaskState,
    pub branch: Option<String>,
    pub worktree: Option<String>,
    pub log_file: Option<String>,
    /// Where a code task's branch started.
    pub base: Option<Base>,
    /// The agent's session, once it reported one.
    pub session_id: Option<String>,
    pub output: Option<String>,
    pub usage: Usage,
    /// `git diff --shortstat` of the task's branch against where it started.
    pub diff_stats: Option<String>,
    /// Where an explore, plan or review task's report was written.
    pub report_file: Option<String>,
    /// The learnings version (`learnings_versions.id`) this task's prompt was given.
    pub learnings_version: Option<i64>,
    pub merged: Option<Merge>,
    /// The pull request `gza pr` opened.
    pub pr_url: Option<String>,
}

impl Task {
    /// The status as stored and filtered on.
    pub fn status(&self) -> TaskStatus {
        self.state.status()
    }

    /// Why it failed, when it failed and that was recorded.
    pub fn failure_reason(&self) -> Option<&FailureReason> {
        self.state.failure_reason()
    }

    /// A completed review's verdict.
    pub fn review_verdict(&self) -> Option<ReviewVerdict> {
        self.state.review_verdict()
    }

    /// The branch a code task's branch was cut from, when known.
    pub fn base_branch(&self) -> Option<&str> {
        self.base.as_ref().and_then(|b| b.branch.as_deref())
    }

    /// The commit a code task started from, when recorded.
    pub fn base_commit(&self) -> Option<&str> {
        self.base.as_ref().map(|b| b.commit.as_str())
    }
}

/// A task as `gza show --json` and `gza ps --json` print it: every column of its row, by the
/// column's name, in the order scripts have always read.
#[derive(Serialize)]
struct TaskRecord<'a> {
    id: TaskId,
    prompt: &'a str,
    task_type: TaskType,
    status: TaskStatus,
    based_on: Option<TaskId>,
    depends_on: Option<TaskId>,
    group: Option<&'a str>,
    spec: Option<&'a str>,
    model: Option<&'a str>,
    provider: Option<&'a str>,
    skip_learnings: bool,
    urgent: bool,
    #[serde(serialize_with = "crate::time::serialize")]
    created_at: DateTime<Utc>,
    #[serde(serialize_with = "crate::time::serialize_opt")]
    started_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "crate::time::serialize_opt")]
    completed_at: Option<DateTime<Utc>>,
    running_pid: Option<i64>,
    branch: Option<&'a str>,
    log_file: Option<&'a str>,
    output: Option<&'a str>,
    failure_reason: Option<FailureReason>,
    cost_usd: Option<f64>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    num_turns: Option<i64>,
    duration_seconds: Option<f64>,
    session_id: Option<&'a str>,
    running_pid_start: Option<i64>,
    agent_pid: Option<i64>,
    agent_start: Option<i64>,
    worktree: Option<&'a str>,
    diff_stats: Option<&'a str>,
    report_file: Option<&'a str>,
    resume_session_id: Option<&'a str>,
    learnings_version: Option<i64>,
    base_branch: Option<&'a str>,
    base_commit: Option<&'a str>,
    review_verdict: Option<ReviewVerdict>,
    #[serde(serialize_with = "crate::time::serialize_opt")]
    merged_at: Option<DateTime<Utc>>,
    merged_into: Option<&'a str>,
    pr_url: Option<&'a str>,
}

impl Serialize for Task {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let state = self.state.columns();
        TaskRecord {
            id: self.id,
            prompt: &self.prompt,
            task_type: self.task_type,
            status: state.status,
            based_on: self.based_on,
            depends_on: self.depends_on,
            group: self.group.as_deref(),
            spec: self.spec.as_deref(),
            model: self.model.as_deref(),
            provider: self.provider.as_deref(),
            skip_learnings: self.skip_learnings,
            urgent: self.urgent,
            created_at: self.created_at,
            started_at: state.started_at,
            completed_at: state.completed_at,
            running_pid: state.running_pid,
            branch: self.branch.as_deref(),
            log_file: self.log_file.as_deref(),
            output: self.output.as_deref(),
            failure_reason: state.failure_reason,
            cost_usd: self.usage.cost_usd,
            input_tokens: self.usage.input_tokens,
            output_tokens: self.usage.output_tokens,
            num_turns: self.usage.num_turns,
            duration_seconds: self.usage.duration_seconds,
            session_id: self.session_id.as_deref(),
            running_pid_start: state.running_pid_start,
            agent_pid: state.agent_pid,
            agent_start: state.agent_start,
            worktree: self.worktree.as_deref(),
            diff_stats: self.diff_stats.as_deref(),
            report_file: self.report_file.as_deref(),
            resume_session_id: self.resume_session_id.as_deref(),
            learnings_version: self.learnings_version,
            base_branch: self.base.as_ref().and_then(|b| b.branch.as_deref()),
            base_commit: self.base.as_ref().map(|b| b.commit.as_str()),
            review_verdict: state.review_verdict,
            merged_at: self.merged.as_ref().map(|m| m.at),
            merged_into: self.merged.as_ref().map(|m| m.into.as_str()),
            pr_url: self.pr_url.as_deref(),
        }
        .serialize(s)
    }
}

/// The current time as stored in the database: RFC 3339, UTC, whole seconds.
pub fn now_timestamp() -> String {
    crate::time::to_db(&crate::time::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_reasons_round_trip_and_unknown_ones_are_kept() {
        for reason in FailureReason::KNOWN {
            assert_eq!(FailureReason::parse(reason.as_str()), reason);
            assert!(!matches!(reason, FailureReason::Other(_)));
        }
        let newer = FailureReason::parse("QUOTA_EXCEEDED");
        assert!(matches!(newer, FailureReason::Other(_)));
        assert_eq!(newer.to_string(), "QUOTA_EXCEEDED");
        assert_eq!(serde_json::to_string(&newer).unwrap(), "\"QUOTA_EXCEEDED\"");
        // Stored names are exact: another spelling is another (unknown) reason.
        assert!(matches!(
            FailureReason::parse("timeout"),
            FailureReason::Other(_)
        ));
    }

    fn columns(status: TaskStatus) -> StateColumns {
        StateColumns {
            status,
            started_at: crate::time::parse_db("2026-01-01T10:00:00Z"),
            completed_at: crate::time::parse_db("2026-01-01T10:05:00Z"),
            running_pid: Some(10),
            running_pid_start: Some(11),
            agent_pid: Some(12),
            agent_start: None,
            failure_reason: Some(FailureReason::Timeout),
            review_verdict: Some(ReviewVerdict::Approved),
        }
    }

    #[test]
    fn a_state_keeps_only_what_belongs_to_its_status() {
        assert_eq!(
            TaskState::from_columns(columns(TaskStatus::Pending)),
            TaskState::Pending
        );
        let running = TaskState::from_columns(columns(TaskStatus::InProgress));
        assert_eq!(
            running.worker(),
            Some(ProcessId {
                pid: 10,
                start: Some(11)
            })
        );
        assert_eq!(
            running.agent(),
            Some(ProcessId {
                pid: 12,
                start: None
            })
        );
        assert_eq!(running.completed_at(), None);
        assert_eq!(running.failure_reason(), None);
        let failed = TaskState::from_columns(columns(TaskStatus::Failed));
        assert_eq!(failed.failure_reason(), Some(&FailureReason::Timeout));
        assert_eq!((failed.worker(), failed.review_verdict()), (None, None));
        let completed = TaskState::from_columns(columns(TaskStatus::Completed));
        assert_eq!(completed.review_verdict(), Some(ReviewVerdict::Approved));
        assert_eq!(completed.failure_reason(), None);
        assert!(completed.started_at().is_some() && completed.completed_at().is_some());
        for status in TaskStatus::ALL {
            let state = TaskState::from_columns(columns(*status));
            assert_eq!(state.status(), *status);
            // What a state keeps, its columns give back.
            assert_eq!(TaskState::from_columns(state.columns()), state);
        }
    }
}
