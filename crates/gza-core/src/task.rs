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
    /// The branch a code task's branch was cut from (`None`: detached HEAD or not recorded).
    pub base_branch: Option<String>,
    /// The commit the task started from; its changes are the branch since this commit.
    pub base_commit: Option<String>,
    /// A completed review's verdict.
    pub review_verdict: Option<ReviewVerdict>,
    /// When `gza merge` merged the task's branch, and into which branch.
    pub merged_at: Option<String>,
    pub merged_into: Option<String>,
    /// The pull request `gza pr` opened.
    pub pr_url: Option<String>,
}

/// The current time as stored in the database: RFC 3339, UTC, whole seconds.
pub fn now_timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
