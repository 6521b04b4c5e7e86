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
use gza_core::config::WorkPriority;

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
    /// Keep running: when no task is ready, wait for one to be added or unblocked (woken by the
    /// database, on any machine in team mode) until stopped (Ctrl-C, SIGTERM) or --count is done.
    #[arg(long, conflicts_with_all = ["ids", "all"])]
    watch: bool,
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

/// Run the rest of this `gza work` in a session of its own, when `work_priority` asks for one
/// and this process does not lead its session already (a person's terminal: the shell leads
/// it). The process the person started stays as a thin parent: it relays the signals a
/// terminal sends (Ctrl-C twice, Ctrl-Z and `fg`, a closed terminal, a resize) to the worker
/// and exits as the worker did; if it is killed outright, so is the worker
/// (`PR_SET_PDEATHSIG`), as `kill -9` of `gza work` always did. Returns the exit code when
/// this process was that parent, `None` when the work is to run here (also when the worker
/// could not be started, so lowering never costs a run). Why a session: see
/// `gza_core::priority`.
fn in_own_session(level: WorkPriority) -> Option<ExitCode> {
    use gza_core::priority;
    if priority::autogroup_nice(level).is_none()
        || priority::leads_session()
        || !priority::autogroups_enabled()
    {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    relay::install();
    let parent = std::process::id() as libc::pid_t;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(std::env::args_os().skip(1));
    // SAFETY: setsid, prctl, getppid and kill are async-signal-safe; nothing allocates.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The parent died before the line above: nobody waits for this worker.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            tracing::debug!(error = %e, "cannot start gza work in a session of its own; running here");
            relay::uninstall();
            return None;
        }
    };
    relay::follow(child.id() as libc::pid_t);
    let status = loop {
        match child.wait() {
            Ok(status) => break status,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Some(ExitCode::from(255)),
        }
    };
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return Some(ExitCode::from(code.clamp(0, 255) as u8));
    }
    if let Some(signal) = status.signal() {
        // Die as the worker died, so the shell sees the same.
        relay::uninstall();
        // SAFETY: resetting a signal to its default action and raising it on this process.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
        return Some(ExitCode::from((128 + signal).clamp(0, 255) as u8));
    }
    Some(ExitCode::from(255))
}

/// The thin parent's signal relay: what the terminal sends the process the person started
/// goes to the worker in its own session.
mod relay {
    use std::sync::atomic::{AtomicI32, Ordering};

    /// The worker's PID once started (0 before).
    static WORKER: AtomicI32 = AtomicI32::new(0);
    /// A signal that came before the worker was started.
    static EARLY: AtomicI32 = AtomicI32::new(0);

    const RELAYED: [libc::c_int; 7] = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGWINCH,
        libc::SIGUSR1,
        libc::SIGUSR2,
    ];

    extern "C" fn relay(signal: libc::c_int) {
        let worker = WORKER.load(Ordering::SeqCst);
        // SAFETY: kill and raise are async-signal-safe.
        unsafe {
            if worker <= 0 {
                EARLY.store(signal, Ordering::SeqCst);
                return;
            }
            match signal {
                // Ctrl-Z: the worker stops (SIGSTOP: a session leader ignores SIGTSTP), then
                // this process, as the shell expects.
                libc::SIGTSTP => {
                    libc::kill(worker, libc::SIGSTOP);
                    libc::raise(libc::SIGSTOP);
                }
                _ => {
                    libc::kill(worker, signal);
                }
            }
        }
    }

    extern "C" fn resume(_: libc::c_int) {
        let worker = WORKER.load(Ordering::SeqCst);
        if worker > 0 {
            // SAFETY: kill is async-signal-safe.
            unsafe {
                libc::kill(worker, libc::SIGCONT);
            }
        }
    }

    fn handle(signal: libc::c_int, handler: extern "C" fn(libc::c_int)) {
        // SAFETY: installing a handler that only calls async-signal-safe functions.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }

    /// Catch what the terminal sends, before the worker exists.
    pub fn install() {
        for signal in RELAYED.into_iter().chain([libc::SIGTSTP]) {
            handle(signal, relay);
        }
        handle(libc::SIGCONT, resume);
    }

    /// Put the signals back to their defaults (the worker could not be started).
    pub fn uninstall() {
        for signal in RELAYED.into_iter().chain([libc::SIGTSTP, libc::SIGCONT]) {
            // SAFETY: restoring the default action.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
    }

    /// From now on signals go to `worker`; one that came while it started goes now.
    pub fn follow(worker: libc::pid_t) {
        WORKER.store(worker, Ordering::SeqCst);
        let early = EARLY.swap(0, Ordering::SeqCst);
        if early > 0 {
            relay(early);
        }
    }
}

pub fn cmd_work(ctx: &Context, args: WorkArgs) -> anyhow::Result<ExitCode> {
    // The worker, in a session of its own, does everything (the settings' notes included):
    // this process only reads the level.
    if !args.background
        && let Ok(project) = crate::project::Project::discover(ctx.dir())
        && let Some(code) = in_own_session(project.config.work_priority)
    {
        return Ok(code);
    }
    // runner::work opens the database (and sweeps orphans) itself.
    let project = ctx.project()?;
    let limit = crate::config::MAX_CONCURRENT_LIMIT as usize;
    if args.parallel == 0 || args.parallel > limit {
        return Err(usage(format!(
            "--parallel must be between 1 and {limit} (max_concurrent in gza.yaml caps the agents running at once)"
        )));
    }
    warn_if_no_extraction(&project);
    if args.background {
        return start_background(&project, &args);
    }
    // One pool of stores for the whole run: the runner's threads, what is printed after, and
    // the hooks' snapshot share its connections (one when one task runs at a time) instead of
    // each step opening its own (issue 21).
    let pool = crate::store::Pool::new(&project);
    let result = work_on(&project, &pool, args);
    // Team mode: the hooks' snapshot follows what the run changed, whether it succeeded or
    // not (`run` does this for the other commands that change learnings).
    if crate::hooks::far::applies(&project)
        && let Ok(store) = pool.get()
    {
        crate::hooks::far::refresh(&project, &store);
    }
    tracing::debug!(connections = pool.opened(), "stores opened by this run");
    result
}

/// One warning line when the learnings settings make extraction impossible (an openai provider
/// without a model, a missing key): each task's failure to extract is otherwise written only
/// to .gza/logs/learnings.log, and the run would look as if learnings were being gathered.
fn warn_if_no_extraction(project: &crate::project::Project) {
    let config = &project.config.learnings;
    if let Err(e) = crate::llm::client_for(config, &project.config.providers.claude.path)
        && e.is_user_error()
    {
        let _ = writeln!(
            output::stderr(),
            "{} {e}; until then no learnings are extracted from this run's tasks",
            output::paint(output::YELLOW, "warning:")
        );
    }
}

/// `gza work` in this process, on `pool`'s stores.
fn work_on(
    project: &crate::project::Project,
    pool: &crate::store::Pool<'_>,
    args: WorkArgs,
) -> anyhow::Result<ExitCode> {
    let level = project.config.work_priority;
    // Before any thread starts, so every thread and process of the run inherits it.
    gza_core::priority::lower(level);
    process::install_stop_handler();
    super::logging::log_work_to(&project.logs_dir().join("work.log"));

    let count = if args.all || (args.watch && args.count.is_none()) {
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
        let store = pool.get()?;
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
        watch: args.watch,
    };
    let ui = if args.quiet { Ui::quiet() } else { Ui::new() };
    let finished = runner::work_in(pool, &options, &ui)?;
    // Stopped by Ctrl-C or SIGTERM: 130, whatever the worker was doing when the signal came
    // (running a task, idle waiting for work, waiting for a free agent slot), as the exit codes
    // in the README say; a script tells "stopped" from "done" by it.
    let interrupted = ExitCode::from(130);
    let stopped = process::stop_requested();
    let mut out = output::stdout();
    if args.watch && finished.is_empty() {
        writeln!(out, "Stopped watching; no task ran")?;
        return Ok(if stopped {
            interrupted
        } else {
            ExitCode::SUCCESS
        });
    }
    if finished.is_empty() {
        if stopped {
            writeln!(out, "Stopped; no task ran")?;
            return Ok(interrupted);
        }
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
    if stopped {
        return Ok(interrupted);
    }
    if !args.quiet
        && let Ok(store) = pool.get()
    {
        for line in next_steps(project, &store, &finished) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Tasks given "next step" hints after a run; the rest are counted.
const MAX_HINTED: usize = 10;

/// What to do next with each task a run finished, as Python gza prints it: review or merge a
/// code task's branch, improve or merge after a review, look at and retry a failure.
fn next_steps(
    project: &crate::project::Project,
    store: &crate::store::Store,
    finished: &[runner::Finished],
) -> Vec<String> {
    use crate::task::{ReviewVerdict, TaskType};
    let mut lines = Vec::new();
    for f in finished.iter().take(MAX_HINTED) {
        let Ok(task) = store.get_task(f.id) else {
            continue;
        };
        let id = task.id;
        let hint = match (task.status(), task.task_type) {
            (TaskStatus::Failed, _) => {
                let resumable = task.session_id.is_some()
                    && runner::providers::supports_resume(runner::provider_of(project, &task));
                if resumable {
                    format!(
                        "`gza log {id}` shows what happened; `gza resume {id}` continues its session, `gza retry {id}` starts again"
                    )
                } else {
                    format!("`gza log {id}` shows what happened; `gza retry {id}` runs it again")
                }
            }
            (TaskStatus::Completed, TaskType::Implement | TaskType::Improve) => {
                let Some(branch) = task.branch.clone() else {
                    continue;
                };
                let owner = crate::review::branch_owner(store, &task).map_or(id, |o| o.id);
                let reviewed = store
                    .reviews_of_branch(owner)
                    .ok()
                    .and_then(|r| r.last().and_then(|r| r.based_on))
                    == Some(id);
                let into = task.base_branch().unwrap_or("your branch").to_string();
                if reviewed {
                    format!("`gza merge {id}` merges {branch} into {into}")
                } else {
                    format!(
                        "`gza review {id}` queues a review of {branch}; `gza merge {id}` merges it into {into}"
                    )
                }
            }
            (TaskStatus::Completed, TaskType::Review) => match task.review_verdict() {
                Some(ReviewVerdict::ChangesRequested) => {
                    format!("`gza improve {id}` queues a fix for its findings")
                }
                Some(_) => match crate::review::reviewed_task(store, &task) {
                    Ok(Some(reviewed)) => {
                        format!("`gza merge {}` merges the approved branch", reviewed.id)
                    }
                    _ => continue,
                },
                None => format!("read it with `gza show {id}` (no verdict was found)"),
            },
            (TaskStatus::Completed, TaskType::Explore | TaskType::Plan) => {
                format!(
                    "`gza show {id}` shows its report; `gza add --based-on {id} \"…\"` builds on it"
                )
            }
            _ => continue,
        };
        lines.push(format!("next for task {id}: {hint}"));
    }
    if finished.len() > MAX_HINTED {
        lines.push(format!(
            "(and {} more tasks: `gza history` lists them)",
            finished.len() - MAX_HINTED
        ));
    }
    lines
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

    /// By words now; by meaning where they are first embedded (the next task's selection or
    /// the background job), as every draft that does not come from an extraction.
    fn took_drafts(
        &self,
        project: &crate::project::Project,
        store: &crate::store::Store,
        ids: &[i64],
    ) {
        if let Err(e) = learn::dedupe::settle(project, store, ids) {
            learn::log(
                project,
                &format!("drafts {ids:?} not compared with known learnings: {e}"),
            );
        }
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
    if args.watch {
        argv.push("--watch".into());
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
