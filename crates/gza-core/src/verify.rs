//! The verify gate's record: one run of the project's check command (`verify:` in the settings)
//! on a task's branch at one commit, and what it says about the branch now.
//!
//! A run is stored against the task that made the branch (its owner) and the commit it checked.
//! Whether it still speaks for the branch is decided when it is read: once the branch has moved
//! (an improve task committed, a rebase), the run is stale.

use chrono::{DateTime, Utc};

use crate::task::TaskId;

/// How one verify run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyOutcome {
    /// The command exited 0.
    Passed,
    /// The command exited non-zero (or was ended by a signal: no code), or it left tracked
    /// files changed, so what passed was not the commit.
    Failed { exit_code: Option<i32> },
    /// gza ended it after `verify_timeout_minutes`.
    TimedOut,
}

impl VerifyOutcome {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyOutcome::Passed => "passed",
            VerifyOutcome::Failed { .. } => "failed",
            VerifyOutcome::TimedOut => "timed_out",
        }
    }

    /// The outcome stored as `status` with `exit_code`; `None` for a name this gza does not know.
    pub fn from_stored(status: &str, exit_code: Option<i32>) -> Option<VerifyOutcome> {
        match status {
            "passed" => Some(VerifyOutcome::Passed),
            "failed" => Some(VerifyOutcome::Failed { exit_code }),
            "timed_out" => Some(VerifyOutcome::TimedOut),
            _ => None,
        }
    }

    pub fn exit_code(self) -> Option<i32> {
        match self {
            VerifyOutcome::Failed { exit_code } => exit_code,
            VerifyOutcome::Passed => Some(0),
            VerifyOutcome::TimedOut => None,
        }
    }

    pub fn passed(self) -> bool {
        self == VerifyOutcome::Passed
    }

    /// "passed", "failed (exit 1)", "timed out".
    pub fn describe(self) -> String {
        match self {
            VerifyOutcome::Passed => "passed".into(),
            VerifyOutcome::Failed {
                exit_code: Some(code),
            } => format!("failed (exit {code})"),
            VerifyOutcome::Failed { exit_code: None } => "failed".into(),
            VerifyOutcome::TimedOut => "timed out".into(),
        }
    }
}

/// One verify run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    pub id: i64,
    /// The task that made the branch.
    pub task_id: TaskId,
    /// The commit that was checked (the branch's tip then).
    pub commit: String,
    /// The command as it ran.
    pub command: String,
    pub outcome: VerifyOutcome,
    /// The end of what the command printed (stdout and stderr together), redacted.
    pub output_tail: String,
    pub duration_seconds: Option<f64>,
    /// The whole output, under `.gza/logs/`.
    pub log_file: Option<String>,
    pub at: DateTime<Utc>,
}

/// What a verify run says about a branch whose tip is now `tip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyState {
    Passed,
    /// Failed or timed out at the branch's tip.
    Failed,
    /// The branch moved since the run: it checked another commit.
    Stale,
}

impl Verification {
    /// The run's standing for a branch now at `tip` (`None`: the branch is gone, and the run is
    /// taken as it was recorded).
    pub fn state(&self, tip: Option<&str>) -> VerifyState {
        if tip.is_some_and(|tip| tip != self.commit) {
            return VerifyState::Stale;
        }
        if self.outcome.passed() {
            VerifyState::Passed
        } else {
            VerifyState::Failed
        }
    }

    /// The checked commit, short.
    pub fn short_commit(&self) -> &str {
        self.commit.get(..10).unwrap_or(&self.commit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(outcome: VerifyOutcome) -> Verification {
        Verification {
            id: 1,
            task_id: TaskId(1),
            commit: "abc".into(),
            command: "true".into(),
            outcome,
            output_tail: String::new(),
            duration_seconds: None,
            log_file: None,
            at: Utc::now(),
        }
    }

    #[test]
    fn a_run_speaks_only_for_the_commit_it_checked() {
        let passed = run(VerifyOutcome::Passed);
        assert_eq!(passed.state(Some("abc")), VerifyState::Passed);
        assert_eq!(passed.state(Some("def")), VerifyState::Stale);
        assert_eq!(passed.state(None), VerifyState::Passed);
        let failed = run(VerifyOutcome::Failed { exit_code: Some(2) });
        assert_eq!(failed.state(Some("abc")), VerifyState::Failed);
        assert_eq!(failed.state(Some("def")), VerifyState::Stale);
        assert_eq!(
            run(VerifyOutcome::TimedOut).state(None),
            VerifyState::Failed
        );
    }

    #[test]
    fn stored_names_round_trip() {
        for outcome in [
            VerifyOutcome::Passed,
            VerifyOutcome::Failed { exit_code: Some(1) },
            VerifyOutcome::Failed { exit_code: None },
            VerifyOutcome::TimedOut,
        ] {
            assert_eq!(
                VerifyOutcome::from_stored(outcome.as_str(), outcome.exit_code()),
                Some(outcome)
            );
        }
        assert_eq!(VerifyOutcome::from_stored("maybe", None), None);
        assert_eq!(
            VerifyOutcome::Failed { exit_code: Some(3) }.describe(),
            "failed (exit 3)"
        );
    }
}
