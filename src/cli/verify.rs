//! `gza verify`: run the project's check command on a task's branch and record what it said.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

use super::{Context, output};
use crate::process;
use crate::runner::verify::{self, Verified};
use crate::task::TaskId;
use crate::verify::Verification;

/// Lines of a failed run's output printed (the stored end of it holds more: `gza show`).
const SHOWN_TAIL_LINES: usize = 20;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The task whose branch to check: an implement or improve task, or a review of one.
    id: TaskId,
}

pub fn cmd_verify(ctx: &Context, args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    // Refused before anything is shown as starting.
    let (branch, command) = verify::target(&project, &store, &task)?;
    process::install_stop_handler();
    writeln!(
        output::stderr(),
        "{} verifying {} at {} (task {}): {}",
        output::paint(output::CYAN, "▶"),
        branch.name,
        branch.tip.get(..10).unwrap_or(&branch.tip),
        branch.owner.id,
        crate::redact::redact(&command)
    )?;
    match verify::verify(&project, &store, &task)? {
        Verified::Interrupted => {
            writeln!(
                output::stderr(),
                "interrupted; the verify command was ended and nothing was recorded"
            )?;
            Ok(ExitCode::from(130))
        }
        Verified::Recorded {
            verification,
            branch,
        } => {
            let mut out = output::stdout();
            print_result(&mut out, &verification, &branch, &project.root)?;
            Ok(if verification.outcome.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}

/// The line a verify run ends with, and for a failed one the end of its output.
pub(crate) fn print_result(
    out: &mut impl Write,
    v: &Verification,
    branch: &str,
    root: &std::path::Path,
) -> std::io::Result<()> {
    let took = output::duration(v.duration_seconds);
    if v.outcome.passed() {
        writeln!(
            out,
            "{} verify passed on {branch} at {} in {took}",
            output::paint(output::GREEN, "✓"),
            v.short_commit()
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{} verify {} on {branch} at {} after {took}; the end of its output:",
        output::paint(output::RED, "✗"),
        v.outcome.describe(),
        v.short_commit()
    )?;
    let lines: Vec<&str> = v.output_tail.lines().collect();
    for line in &lines[lines.len().saturating_sub(SHOWN_TAIL_LINES)..] {
        writeln!(out, "  {line}")?;
    }
    if let Some(log) = &v.log_file {
        let log = std::path::Path::new(log);
        writeln!(
            out,
            "All of it: {}",
            log.strip_prefix(root).unwrap_or(log).display()
        )?;
    }
    Ok(())
}
