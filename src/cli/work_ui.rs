//! What `gza work` shows while it runs: a live status line on a terminal, plain lines otherwise.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::output;
use crate::config::ProviderKind;
use crate::runner::providers::Progress;
use crate::runner::{Finished, Observer, Status};
use crate::task::{Task, TaskId, TaskStatus};

/// Progress reporting for `gza work`, shared by its worker threads.
pub struct Ui {
    live: bool,
    quiet: bool,
    /// Event lines go to stdout (`gza watch`, whose events are its output); the live status
    /// line stays on stderr.
    lines_to_stdout: bool,
    state: Mutex<UiState>,
}

#[derive(Default)]
struct UiState {
    running: BTreeMap<TaskId, Status>,
    drawn_at: Option<Instant>,
    line_shown: bool,
}

impl Ui {
    /// A live status line when stderr is a terminal; plain lines otherwise.
    pub fn new() -> Ui {
        Ui {
            live: std::io::stderr().is_terminal(),
            quiet: false,
            lines_to_stdout: false,
            state: Mutex::default(),
        }
    }

    /// `gza watch`'s: task lines on stdout with its own events, the live line on stderr.
    pub fn for_watch() -> Ui {
        Ui {
            lines_to_stdout: true,
            ..Ui::new()
        }
    }

    /// Print one line where this Ui prints its task lines.
    pub fn line(&self, line: &str) {
        let mut state = self.state.lock().expect("ui lock");
        self.print(&mut state, line);
    }

    /// No progress output at all (warnings still print).
    pub fn quiet() -> Ui {
        Ui {
            live: false,
            quiet: true,
            lines_to_stdout: false,
            state: Mutex::default(),
        }
    }

    fn print(&self, state: &mut UiState, line: &str) {
        let mut err = output::stderr();
        if state.line_shown {
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            state.line_shown = false;
        }
        if self.lines_to_stdout {
            let mut out = output::stdout();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        } else {
            let _ = writeln!(err, "{line}");
        }
    }
}

impl Observer for Ui {
    fn warn(&self, message: &str) {
        let mut state = self.state.lock().expect("ui lock");
        self.print(
            &mut state,
            &format!("{} {message}", output::paint(output::YELLOW, "warning:")),
        );
    }

    fn started(&self, task: &Task, provider: ProviderKind) {
        let mut state = self.state.lock().expect("ui lock");
        state.running.insert(
            task.id,
            Status {
                elapsed: Duration::ZERO,
                progress: Progress::default(),
            },
        );
        if !self.quiet {
            let line = format!(
                "{} task {} ({}, {}): {}",
                output::paint(output::CYAN, "▶"),
                task.id,
                task.task_type,
                provider.as_str(),
                output::one_line(&crate::redact::redact(&task.prompt), 60)
            );
            self.print(&mut state, &line);
        }
    }

    fn progress(&self, id: TaskId, status: Status) {
        let mut state = self.state.lock().expect("ui lock");
        state.running.insert(id, status);
        if !self.live
            || state
                .drawn_at
                .is_some_and(|t| t.elapsed() < Duration::from_millis(250))
        {
            return;
        }
        let parts: Vec<String> = state
            .running
            .iter()
            .map(|(id, s)| {
                let secs = s.elapsed.as_secs();
                let mut part = format!("task {id} {}:{:02}", secs / 60, secs % 60);
                if s.progress.turns > 0 {
                    part.push_str(&format!(" · {} turns", s.progress.turns));
                }
                if let Some(c) = s.progress.cost_usd {
                    part.push_str(&format!(" · ${c:.4}"));
                }
                if let Some(r) = &s.progress.retry {
                    let of = r.max.map(|m| format!("/{m}")).unwrap_or_default();
                    part.push_str(&format!(
                        " · retrying the API ({}{of}: {})",
                        r.attempt, r.error
                    ));
                }
                part
            })
            .collect();
        let mut err = output::stderr();
        let _ = write!(
            err,
            "\r\x1b[2K{}",
            output::paint(output::DIM, parts.join("  |  "))
        );
        let _ = err.flush();
        state.line_shown = true;
        state.drawn_at = Some(Instant::now());
    }

    fn finished(&self, f: &Finished) {
        let mut state = self.state.lock().expect("ui lock");
        state.running.remove(&f.id);
        if self.quiet {
            return;
        }
        let status = f.state.status();
        let (mark, style) = match status {
            TaskStatus::Completed => ("✓", output::GREEN),
            _ => ("✗", output::RED),
        };
        let mut line = format!("{} task {} {}", output::paint(style, mark), f.id, status);
        if let Some(reason) = f.state.failure_reason() {
            line.push_str(&format!(" ({reason})"));
        }
        line.push_str(&format!(
            " in {}",
            output::duration(Some(f.duration.as_secs_f64()))
        ));
        if let Some(turns) = f.usage.num_turns {
            line.push_str(&format!(", {turns} turns"));
        }
        if let Some(cost) = f.usage.cost_usd {
            line.push_str(&format!(", {}", output::cost(Some(cost))));
        }
        if let Some(verdict) = f.state.review_verdict() {
            line.push_str(&format!("; verdict {verdict}"));
        }
        if let Some(branch) = &f.branch {
            line.push_str(&format!("; branch {branch}"));
            if let Some(stats) = &f.diff_stats {
                line.push_str(&format!(" ({stats})"));
            }
        }
        self.print(&mut state, &line);
    }
}

impl Default for Ui {
    fn default() -> Self {
        Ui::new()
    }
}
