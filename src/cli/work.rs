//! `gza work` and `gza clean`: run queued tasks, and tidy up after them.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ExitCode, Stdio};

use clap::Args;

use super::work_ui::Ui;
use super::{Context, output, usage};
use crate::error::Error;
use crate::learn;
use crate::process;
use crate::runner::{self, WorkOptions, cleanup};
use crate::task::{TaskId, TaskStatus};

#[derive(Debug, Args)]
pub struct WorkArgs {
    /// Run these tasks (default: the next ready ones, in pickup order).
    ids: Vec<TaskId>,
    /// Run only tasks in this group.
    #[arg(long, short = 'g', value_name = "GROUP", conflicts_with = "ids")]
    group: Option<String>,
    #[command(flatten)]
    tags: super::tags::TagFilter,
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

impl WorkArgs {
    /// Whether this process only starts a worker in the background (and so runs no task).
    pub(crate) fn background(&self) -> bool {
        self.background
    }
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Only list what would be removed, and what would be kept and why.
    #[arg(long)]
    dry_run: bool,
    /// Every finished task's worktree and log, however recent (not only those older than
    /// cleanup_days).
    #[arg(long)]
    all: bool,
}

/// How much `gza work` lowers its CPU priority (and so its agents', git's and the
/// regeneration's, which inherit it): it is batch work, and a person's interactive agent
/// sessions, whose hooks have budgets of milliseconds, should not wait behind it for a core.
pub const WORK_NICENESS: i32 = 10;

/// Lower this process's priority by [`WORK_NICENESS`] (capped at the lowest); a failure leaves it.
fn lower_priority() {
    // SAFETY: nice(2) on this process only; it cannot fail in a way that matters (a result of -1
    // with errno set leaves the priority as it was).
    unsafe {
        libc::nice(WORK_NICENESS);
    }
}

pub fn cmd_work(ctx: &Context, args: WorkArgs) -> anyhow::Result<ExitCode> {
    // runner::work opens the database (and sweeps orphans) itself.
    let project = ctx.project()?;
    let limit = crate::config::MAX_CONCURRENT_LIMIT as usize;
    if args.parallel == 0 || args.parallel > limit {
        return Err(usage(format!(
            "--parallel must be between 1 and {limit} (max_concurrent in gza.yaml caps the agents running at once)"
        )));
    }
    if args.background {
        return start_background(&project, &args);
    }
    process::install_stop_handler();
    lower_priority();
    super::logging::log_work_to(&project.logs_dir().join("work.log"));
    let count = if args.all {
        None
    } else {
        Some(args.count.unwrap_or(if args.ids.is_empty() {
            args.parallel
        } else {
            args.ids.len()
        }))
    };
    if args.group.is_some() || !args.tags.tags.is_empty() {
        if !args.ids.is_empty() {
            return Err(usage(
                "give task ids or --tag, not both: the ids name the tasks to run",
            ));
        }
        let (_, store) = ctx.open_for_reading()?;
        if let Some(group) = &args.group {
            super::require_group(&store, group)?;
        }
        args.tags.require_known(&store)?;
    }
    let scope_text = match &args.group {
        Some(group) => format!(" in group {group}"),
        None => String::new(),
    } + &super::tags::describe(&args.tags);
    let options = WorkOptions {
        ids: args.ids,
        count,
        parallel: args.parallel,
        group: args.group,
        tags: args.tags.tags.clone(),
        all_tags: args.tags.all_tags,
        teacher: std::sync::Arc::new(Teacher),
    };
    let ui = if args.quiet { Ui::quiet() } else { Ui::new() };
    let finished = runner::work(&project, &options, &ui)?;
    let mut out = output::stdout();
    if finished.is_empty() {
        if scope_text.is_empty() {
            writeln!(out, "No tasks ready to run. Add one with: gza add \"…\"")?;
        } else {
            writeln!(out, "No tasks ready to run{scope_text}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let completed = finished
        .iter()
        .filter(|f| f.state.status() == TaskStatus::Completed)
        .count();
    let failed = finished.len() - completed;
    let cost: f64 = finished.iter().filter_map(|f| f.usage.cost_usd).sum();
    let mut summary = format!("{completed} completed, {failed} failed");
    if finished.iter().any(|f| f.usage.cost_usd.is_some()) {
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

/// "1 worktree", "2 worktrees".
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The learnings room as the runner sees it: what each task is given, and regeneration after
/// each task. Handed to the runner here, so the runner never calls into `learn` itself.
#[derive(Debug, Default)]
pub(crate) struct Teacher;

impl runner::Teacher for Teacher {
    fn for_prompt(
        &self,
        project: &crate::project::Project,
        store: &crate::store::Store,
        task: &crate::task::Task,
    ) -> Option<crate::prompt::InjectedLearnings> {
        learn::learnings_for_prompt(project, store, task, learn::Selection::Record)
    }

    fn after_task(
        &self,
        project: &crate::project::Project,
        store: &crate::store::Store,
    ) -> Option<std::thread::JoinHandle<()>> {
        learn::after_task(project, store)
    }
}

/// Re-run this command detached from the terminal, its output in `.gza/logs/worker-PID.log`.
///
/// The worker's command line is built from the parsed arguments, not replayed: it names the
/// project by its absolute root (a relative `-C` would resolve again from the root), and passes
/// `--quiet` once whatever the user typed.
fn start_background(
    project: &crate::project::Project,
    args: &WorkArgs,
) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let mut argv: Vec<std::ffi::OsString> =
        vec!["-C".into(), project.root.clone().into(), "work".into()];
    argv.extend(args.ids.iter().map(|id| id.to_string().into()));
    if let Some(group) = &args.group {
        argv.extend(["--group".into(), group.into()]);
    }
    for tag in &args.tags.tags {
        argv.extend(["--tag".into(), tag.as_str().into()]);
    }
    if args.tags.all_tags {
        argv.push("--all-tags".into());
    }
    if let Some(count) = args.count {
        argv.extend(["--count".into(), count.to_string().into()]);
    }
    if args.all {
        argv.push("--all".into());
    }
    argv.extend([
        "--parallel".into(),
        args.parallel.to_string().into(),
        "--quiet".into(),
    ]);
    let logs = project.logs_dir();
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, "create directory", e))?;
    // A name no other worker has: two started in the same second each get their own file.
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let (log_path, log) = (0u32..)
        .map(|n| {
            let name = match n {
                0 => format!("worker-{stamp}.log"),
                n => format!("worker-{stamp}-{n}.log"),
            };
            logs.join(name)
        })
        .find_map(|path| {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => Some(Ok((path, file))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(Error::io(&path, "create", e))),
            }
        })
        .expect("some worker log name is free")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(&argv)
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
    let days = project.config.cleanup_days;
    let older_than_days = if args.all {
        None
    } else if days == 0 {
        writeln!(
            output::stdout(),
            "Nothing to clean: cleanup_days is 0 in gza.yaml (gza clean --all removes every finished task's worktree)"
        )?;
        return Ok(());
    } else {
        Some(days)
    };
    let scope = cleanup::Scope {
        older_than_days,
        limit: usize::MAX,
        dry_run: args.dry_run,
    };
    let report = cleanup::clean(&project, &store, scope)?;
    let mut out = output::stdout();
    let age = match older_than_days {
        Some(d) => format!(" of tasks finished over {d} days ago"),
        None => String::new(),
    };
    for (leftover, why) in &report.kept {
        writeln!(
            output::stderr(),
            "{} kept {} (task {}): {why}",
            output::paint(output::YELLOW, "warning:"),
            leftover.path,
            leftover.id
        )?;
    }
    if args.dry_run {
        for leftover in &report.removed {
            writeln!(out, "would remove {} (task {})", leftover.path, leftover.id)?;
        }
        writeln!(
            out,
            "Would remove {} and {}{age}; {} kept",
            count(report.removed.len(), "worktree"),
            count(report.logs, "log"),
            report.kept.len()
        )?;
    } else if report.removed.is_empty() && report.logs == 0 && report.kept.is_empty() {
        writeln!(out, "Nothing to clean{age}")?;
    } else {
        writeln!(
            out,
            "Removed {} (their branches are kept) and {}{age}; {} kept",
            count(report.removed.len(), "worktree"),
            count(report.logs, "log"),
            report.kept.len()
        )?;
    }
    Ok(())
}
