//! `gza work` and `gza clean`: run queued tasks, and tidy up after them.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ExitCode, Stdio};

use clap::Args;

use super::work_ui::Ui;
use super::{Context, output, usage};
use crate::error::Error;
use crate::runner::{self, WorkOptions, process, worktree};
use crate::task::TaskStatus;

#[derive(Debug, Args)]
pub struct WorkArgs {
    /// Run these tasks (default: the next ready ones, in pickup order).
    ids: Vec<i64>,
    /// Run only tasks in this group.
    #[arg(long, short = 'g', value_name = "GROUP", conflicts_with = "ids")]
    group: Option<String>,
    /// How many tasks to run (default: one per worker, or all the given IDs).
    #[arg(long, short = 'n', conflicts_with = "all")]
    count: Option<usize>,
    /// Run until no task is ready.
    #[arg(long)]
    all: bool,
    /// Run this many tasks at once, each in its own worktree.
    #[arg(long, short = 'p', default_value_t = 1)]
    parallel: usize,
    /// Detach and run in the background; `gza ps` shows progress.
    #[arg(long)]
    background: bool,
    /// Print only warnings and the summary.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Only list what would be removed.
    #[arg(long)]
    dry_run: bool,
}

pub fn cmd_work(ctx: &Context, args: WorkArgs) -> anyhow::Result<ExitCode> {
    // runner::work opens the database (and sweeps orphans) itself.
    let project = ctx.project()?;
    if args.parallel == 0 {
        return Err(usage("--parallel must be at least 1"));
    }
    if args.background {
        return start_background(&project);
    }
    process::install_stop_handler();
    let count = if args.all {
        None
    } else {
        Some(args.count.unwrap_or(if args.ids.is_empty() {
            args.parallel
        } else {
            args.ids.len()
        }))
    };
    if let Some(group) = &args.group {
        let (_, store) = ctx.open_for_reading()?;
        super::require_group(&store, group)?;
    }
    let options = WorkOptions {
        ids: args.ids,
        count,
        parallel: args.parallel,
        group: args.group,
    };
    let ui = if args.quiet { Ui::quiet() } else { Ui::new() };
    let finished = runner::work(&project, &options, &ui)?;
    let mut out = output::stdout();
    if finished.is_empty() {
        match &options.group {
            Some(group) => writeln!(out, "No tasks ready to run in group {group}")?,
            None => writeln!(out, "No tasks ready to run. Add one with: gza add \"…\"")?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let completed = finished
        .iter()
        .filter(|f| f.status == TaskStatus::Completed)
        .count();
    let failed = finished.len() - completed;
    let cost: f64 = finished.iter().filter_map(|f| f.cost_usd).sum();
    let mut summary = format!("{completed} completed, {failed} failed");
    if finished.iter().any(|f| f.cost_usd.is_some()) {
        summary.push_str(&format!(", {} spent", output::cost(Some(cost))));
    }
    writeln!(out, "{summary}")?;
    if process::stop_requested() {
        return Ok(ExitCode::from(130));
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Re-run this command detached from the terminal, its output in `.gza/logs/worker-PID.log`.
fn start_background(project: &crate::project::Project) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    // args_os: a path that is not UTF-8 is a valid argument, and std::env::args() panics on it.
    let args: Vec<std::ffi::OsString> = std::env::args_os()
        .skip(1)
        .filter(|a| a != "--background")
        .collect();
    let logs = project.logs_dir();
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, "create directory", e))?;
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let log_path = logs.join(format!("worker-{stamp}.log"));
    let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, "create", e))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(&args)
        .arg("--quiet")
        .current_dir(&project.root)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    // SAFETY: setsid is async-signal-safe and only detaches the child from our session.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    writeln!(
        output::stdout(),
        "{} Started a background worker (PID {}); `gza ps` shows its tasks, its output goes to {}",
        output::paint(output::GREEN, "✓"),
        child.id(),
        log_path
            .strip_prefix(&project.root)
            .unwrap_or(&log_path)
            .display()
    )?;
    Ok(ExitCode::SUCCESS)
}

pub fn cmd_clean(ctx: &Context, args: CleanArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let mut out = output::stdout();
    let candidates = store.finished_with_worktrees()?;
    if candidates.is_empty() {
        writeln!(out, "Worktrees: nothing to clean")?;
        return Ok(());
    }
    let mut removed = 0;
    for (id, path) in &candidates {
        if args.dry_run {
            writeln!(out, "would remove {path} (task {id})")?;
            continue;
        }
        match worktree::remove(&project.root, std::path::Path::new(path)) {
            Ok(()) => {
                store.clear_worktree(*id)?;
                removed += 1;
            }
            Err(e) => writeln!(
                output::stderr(),
                "{} task {id}: {e}",
                output::paint(output::YELLOW, "warning:")
            )?,
        }
    }
    if !args.dry_run {
        writeln!(
            out,
            "Worktrees cleaned: {removed} (their branches are kept)"
        )?;
    }
    Ok(())
}
