//! The task: what a user queued and what happened when it ran.

use serde::Serialize;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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

impl TaskType {
    /// Code tasks change the repository and run in their own worktree and branch.
    pub fn changes_code(self) -> bool {
        matches!(self, TaskType::Implement | TaskType::Improve)
    }
}

/// One row of the `tasks` table.
#[derive(Debug, Clone, Serialize)]
pub struct Task {
    pub id: i64,
    pub prompt: String,
    pub task_type: TaskType,
    pub status: TaskStatus,
    pub based_on: Option<i64>,
    pub depends_on: Option<i64>,
    pub group: Option<String>,
    pub spec: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub skip_learnings: bool,
    pub urgent: bool,
    pub created_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub running_pid: Option<i64>,
    pub branch: Option<String>,
    pub log_file: Option<String>,
    pub output: Option<String>,
    pub failure_reason: Option<String>,
    pub cost_usd: Option<f64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub num_turns: Option<i64>,
    pub duration_seconds: Option<f64>,
    pub session_id: Option<String>,
    /// Start time (clock ticks since boot) of the worker in `running_pid`.
    pub running_pid_start: Option<i64>,
    /// The agent process (leader of its own process group) and its start time.
    pub agent_pid: Option<i64>,
    pub agent_start: Option<i64>,
    pub worktree: Option<String>,
    /// `git diff --shortstat` of the task's branch against where it started.
    pub diff_stats: Option<String>,
    /// Where an explore, plan or review task's report was written.
    pub report_file: Option<String>,
    /// The agent session this task continues (`gza resume`).
    pub resume_session_id: Option<String>,
    /// The learnings version (`learnings_versions.id`) this task's prompt was given.
    pub learnings_version: Option<i64>,
}

/// The current time as stored in the database: RFC 3339, UTC, whole seconds.
pub fn now_timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
