//! The command line: argument parsing and one thin module per command group.
//!
//! Commands parse their arguments, call into the library, and print. Exit codes: 0 success,
//! 1 an error the user can fix, 2 bad arguments (clap), 3 broken pipe, 255 internal error.

mod ab;
mod add;
mod branch;
mod checkout;
mod comment;
mod config;
mod db;
mod demo;
mod doctor;
mod history;
mod hook;
mod import;
mod init;
mod learnings;
mod lineage;
pub(crate) mod log;
mod logging;
mod manage;
mod mcp;
mod model;
mod next;
pub(crate) mod output;
mod ps;
mod review;
mod search;
mod select;
mod show;
mod stats;
mod tags;
mod trust;
mod unmerged;
mod verify;
mod watch;
mod work;
mod work_ui;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::Error;
use crate::project::Project;
use crate::store::Store;

/// gza: queue coding tasks for AI agents; every finished task teaches the next ones.
#[derive(Debug, Parser)]
#[command(name = "gza", version, about, max_term_width = 100)]
pub struct Cli {
    /// Run as if gza was started in DIR.
    #[arg(
        id = "directory",
        short = 'C',
        long = "directory",
        value_name = "DIR",
        global = true,
        display_order = 100
    )]
    pub project: Option<PathBuf>,

    /// Show on stderr what gza does (-vv: in detail; RUST_LOG overrides)
    #[arg(
        short = 'v',
        long = "verbose",
        action = clap::ArgAction::Count,
        global = true,
        display_order = 100
    )]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create gza.yaml, .gza/ and the task database in the project directory.
    Init(init::InitArgs),
    /// Queue a new task.
    Add(add::AddArgs),
    /// Change a task (its prompt and options while pending; --learnings/--no-learnings at any time).
    Edit(add::EditArgs),
    /// Show what `gza work` would run next, in pickup order.
    Next(next::NextArgs),
    /// List tasks, newest first.
    History(history::HistoryArgs),
    /// Show one task in full.
    Show(show::ShowArgs),
    /// Find tasks by words in their prompt or output, newest first, the words marked.
    Search(search::SearchArgs),
    /// Show a task and its reviews, improve tasks, retries and merge as a tree.
    Lineage(lineage::LineageArgs),
    /// Add a note to a task, given to the improve tasks of its branch until one completes.
    Comment(comment::CommentArgs),
    /// List completed code tasks whose branch is not merged, with their review's verdict.
    Unmerged(unmerged::UnmergedArgs),
    /// Check out a task's branch here (refused over uncommitted changes).
    Checkout(checkout::CheckoutArgs),
    /// Delete a task that is not running.
    Delete(manage::DeleteArgs),
    /// Queue a failed or finished task again, as a new task based on it.
    Retry(manage::RetryArgs),
    /// Counts by status, and cost, token and duration totals.
    Stats(stats::StatsArgs),
    /// Run queued tasks through their agent, each code task in its own worktree and branch.
    Work(work::WorkArgs),
    /// List running tasks.
    Ps(ps::PsArgs),
    /// Show what an agent did in a task.
    Log(log::LogArgs),
    /// Stop a running task (it fails with KILLED).
    Kill(ps::KillArgs),
    /// Queue a failed task again, continuing its agent session.
    Resume(manage::ResumeArgs),
    /// Queue a review of a completed implement or improve task's branch.
    Review(review::ReviewArgs),
    /// Queue an improve task that addresses a review's findings on the same branch.
    Improve(review::ImproveArgs),
    /// Show a task's changes: its branch since the task started.
    Diff(branch::DiffArgs),
    /// Merge a completed task's branch into the branch checked out here.
    Merge(branch::MergeArgs),
    /// Rebase a task's branch onto the current tip of the branch it started from.
    Rebase(branch::RebaseArgs),
    /// Push a completed task's branch and open a pull request for it with `gh`.
    Pr(branch::PrArgs),
    /// Run the project's check command on a task's branch and record whether it passed.
    ///
    /// The command is `verify:` in gza.yaml, run with `sh -c` in a checkout of the branch's tip,
    /// in the sandbox the task's agent gets. The result is kept for that commit: `gza show`,
    /// `gza history` and the review's prompt show it, and `gza merge` refuses a branch whose
    /// verify failed or ran on an older commit (--force merges anyway). Exit 1 when it fails.
    Verify(verify::VerifyArgs),
    /// Review, improve and merge finished work until nothing can progress.
    ///
    /// Runs the queue; for each finished code task runs the verify command and queues a review,
    /// then improve tasks while the verdict is CHANGES_REQUESTED (watch.max_rounds), and merges
    /// approved work into its base branch once the verify passed on the commit that lands (or
    /// opens a pull request: watch.land). One line per event and a summary at the end. Ctrl-C
    /// stops the running agent (its task is continued by the next `gza watch`). Exit 0 when
    /// everything in scope landed, 1 when something needs you (listed), 130 when stopped.
    Watch(watch::WatchArgs),
    /// Queue the tasks of a task file in Python gza's import format (YAML).
    ///
    /// The file has an optional default `group:` and `spec:`, and `tasks:`, a list of entries
    /// with `prompt` (required), `type` (implement, explore, plan or review; `improve` entries
    /// are skipped, since an improve task comes from a review), `group` and `spec` (null clears
    /// the default), `depends_on` (the 1-based position of another entry) and `review: true`
    /// (also queue a review that runs after the task). Importing a file again queues only the
    /// entries it has not queued before.
    Import(import::ImportArgs),
    /// Measure whether learnings help: run tasks with learnings and without, from one commit.
    ///
    /// Each task runs in both arms (with learnings as `gza work` gives them; without any), each
    /// run in its own worktree from the same base commit, --repeat times. Every run is a task in
    /// the group ab-ID (history, logs and cost as usual), kept out of the queue, never merged,
    /// never credited to learnings nor extracted. Each is judged by how its task ended and by
    /// the project's verify command on its branch (--no-verify: by the outcome alone). The
    /// report gives per arm the success and verify-pass rates (95 % Wilson intervals), mean
    /// turns, tokens, cost and time (95 % t intervals), and the learnings given to the runs
    /// whose arms ended differently. The numbers mean something only with real agents and
    /// enough runs. Ctrl-C leaves every run stored: `gza ab --resume ID` goes on.
    Ab(ab::AbArgs),
    /// Remove the worktrees and logs of tasks finished over cleanup_days ago (branches are kept).
    Clean(work::CleanArgs),
    /// Show the effective settings (user, project, local, environment) and where each came from.
    Config(config::ConfigArgs),
    /// See, rebuild, curate and clear what finished tasks taught (.gza/learnings.md).
    Learnings(learnings::LearningsArgs),
    /// Put learnings into every Claude Code session: install gza's hooks, and their handlers.
    Hook(hook::HookArgs),
    /// Serve learnings and tasks to agents over MCP (stdio); `gza mcp install` registers it.
    Mcp(mcp::McpArgs),
    /// Say which agent sandboxes (none, bwrap, docker) work on this machine, and what an agent
    /// of this project sees inside one.
    Doctor(doctor::DoctorArgs),
    /// Install the sentence-embedding model the ranker uses (checked against pinned hashes),
    /// or see whether the installed one is usable.
    Model(model::ModelArgs),
    /// Show the settings of this project's gza.yaml that run commands or reach beyond the
    /// project, and trust them (until then gza ignores them).
    ///
    /// A gza.yaml that came with a repository is its author's: its agent commands and paths,
    /// `sandbox_env`, a sandbox turned off, and the extraction endpoint and key variable take
    /// effect only once trusted. The trust is recorded in ~/.gza/trusted.json for this project's
    /// path and these values: a change to one of them (a pull, an edit) needs `gza trust` again.
    Trust(trust::TrustArgs),
    /// Where the project's tasks and learnings are kept (SQLite, or a PostgreSQL database a
    /// team shares) and whether gza can reach them.
    Db(db::DbArgs),
    /// Watch gza run six tasks offline with a scripted agent, in a temporary project.
    Demo(demo::DemoArgs),
    /// Serve the dashboard in a browser: the board, tasks and their live logs, learnings, stats.
    ///
    /// Listens on 127.0.0.1:4920 unless --bind says otherwise (port 0 picks a free one) and
    /// prints the URL it serves on its first line; it opens nothing by itself.
    Serve(crate::serve::ServeArgs),
    /// The demo's scripted agent (reads a prompt on stdin).
    #[command(hide = true, name = "demo-agent")]
    DemoAgent(demo::DemoAgentArgs),
}

/// Where commands find the project, from the global `-C` flag.
pub struct Context {
    dir: PathBuf,
}

impl Context {
    /// The directory the user pointed at (or the current one).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The project containing the directory, with its config loaded. Settings of gza.yaml left
    /// out for want of trust are said once per process, in one line.
    pub fn project(&self) -> Result<Project, Error> {
        let project = Project::discover(&self.dir)?;
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            let mut notes = project.unknown_env.clone();
            if !project.ignored_settings.is_empty() {
                notes.push(crate::settings::ignored_notice(&project.ignored_settings));
            }
            for note in notes {
                let _ = writeln!(
                    output::stderr(),
                    "{} {note}",
                    output::paint(output::YELLOW, "warning:"),
                );
            }
        }
        Ok(project)
    }

    /// The project and its open database.
    pub fn open(&self) -> Result<(Project, Store), Error> {
        let project = self.project()?;
        // Orphans reaped (each said) and what hooks spooled taken in.
        let store = crate::actions::open_store(&project, |note| {
            let _ = writeln!(output::stderr(), "{note}");
        })?;
        Ok((project, store))
    }

    /// The project and its database opened for commands that only read.
    pub fn open_for_reading(&self) -> Result<(Project, Store), Error> {
        let project = self.project()?;
        // What hooks spooled while the database was busy is taken in first, when the database
        // can be written (a read-only one is read as it is).
        if crate::learn::spool::pending(&project)
            && let Ok(store) = Store::open_project(&project)
        {
            crate::learn::take_in_spooled(&project, &store);
        }
        // Reading never reaps or signals: a worker this process cannot see may still run.
        let store = Store::open_project_for_reading(&project)?;
        Ok((project, store))
    }
}

/// Parse the command line, run the command, and turn its outcome into an exit code.
pub fn main() -> ExitCode {
    crate::store::without_memory_statistics();
    // Whatever changes learnings brings the hooks' snapshot and change marker up to date as
    // its store closes, hooks included (a Stop hook's drafts).
    crate::store::after_hook_change(crate::hooks::snapshot::after_write);
    // A hook handler must never fail on its arguments (exit 2 would block the tool), so it is
    // dispatched before they are parsed.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(name) = crate::hooks::handler_in_args(&args) {
        logging::init_for_hook();
        return crate::hooks::run_handler(&name);
    }
    let cli = Cli::parse_from(args);
    let work = matches!(&cli.command, Command::Work(w) if !w.background())
        || matches!(&cli.command, Command::Watch(_))
        || matches!(&cli.command, Command::Ab(_));
    logging::init(cli.verbose, work);
    let dir = cli.project.clone().unwrap_or_else(|| PathBuf::from("."));
    let ctx = Context { dir };
    match run(&ctx, cli.command) {
        Ok(code) => code,
        Err(err) => report(&err),
    }
}

fn run(ctx: &Context, command: Command) -> anyhow::Result<ExitCode> {
    // Team mode: after a command that may change learnings, the hooks' snapshot of the far
    // database follows (issue 21, hooks with a far database), whether the command succeeded or not.
    // (`gza work` refreshes it itself, on the run's own connection: see `work::cmd_work`.)
    let learnings_may_change = match &command {
        Command::Learnings(l) => !l.refreshes_snapshot_itself(),
        _ => false,
    } || matches!(
        &command,
        Command::Import(_) | Command::Review(_) | Command::Improve(_) | Command::Init(_)
    );
    let result = run_command(ctx, command);
    if learnings_may_change && let Ok(project) = Project::discover(ctx.dir()) {
        crate::hooks::far::after_command(&project);
    }
    result
}

fn run_command(ctx: &Context, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Work(args) => return work::cmd_work(ctx, args),
        Command::Watch(args) => return watch::cmd_watch(ctx, args),
        Command::Ab(args) => return ab::cmd_ab(ctx, args),
        Command::Verify(args) => return verify::cmd_verify(ctx, args),
        Command::Doctor(args) => return doctor::cmd_doctor(ctx, args),
        Command::Model(args) => return model::cmd_model(ctx, args),
        Command::Mcp(args) => return mcp::cmd_mcp(ctx, args),
        Command::Trust(args) => trust::cmd_trust(ctx, args),
        Command::Init(args) => init::cmd_init(ctx, args),
        Command::Add(args) => add::cmd_add(ctx, args),
        Command::Edit(args) => add::cmd_edit(ctx, args),
        Command::Next(args) => next::cmd_next(ctx, args),
        Command::History(args) => history::cmd_history(ctx, args),
        Command::Show(args) => show::cmd_show(ctx, args),
        Command::Search(args) => search::cmd_search(ctx, args),
        Command::Lineage(args) => lineage::cmd_lineage(ctx, args),
        Command::Comment(args) => comment::cmd_comment(ctx, args),
        Command::Unmerged(args) => unmerged::cmd_unmerged(ctx, args),
        Command::Checkout(args) => checkout::cmd_checkout(ctx, args),
        Command::Delete(args) => manage::cmd_delete(ctx, args),
        Command::Retry(args) => manage::cmd_retry(ctx, args),
        Command::Stats(args) => stats::cmd_stats(ctx, args),
        Command::Ps(args) => ps::cmd_ps(ctx, args),
        Command::Log(args) => log::cmd_log(ctx, args),
        Command::Kill(args) => ps::cmd_kill(ctx, args),
        Command::Resume(args) => manage::cmd_resume(ctx, args),
        Command::Review(args) => review::cmd_review(ctx, args),
        Command::Improve(args) => review::cmd_improve(ctx, args),
        Command::Diff(args) => branch::cmd_diff(ctx, args),
        Command::Merge(args) => branch::cmd_merge(ctx, args),
        Command::Rebase(args) => branch::cmd_rebase(ctx, args),
        Command::Pr(args) => branch::cmd_pr(ctx, args),
        Command::Import(args) => import::cmd_import(ctx, args),
        Command::Clean(args) => work::cmd_clean(ctx, args),
        Command::Config(args) => config::cmd_config(ctx, args),
        Command::Learnings(args) => learnings::cmd_learnings(ctx, args),
        Command::Hook(args) => hook::cmd_hook(ctx, args),
        Command::Db(args) => db::cmd_db(ctx, args),
        Command::Demo(args) => demo::cmd_demo(ctx, args),
        Command::Serve(args) => crate::serve::cmd_serve(ctx, args),
        Command::DemoAgent(args) => demo::cmd_demo_agent(args),
    }?;
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C in an interactive command, which stopped asking and kept what was done (exit 130).
#[derive(Debug, thiserror::Error)]
#[error("interrupted; {0}")]
pub(crate) struct Interrupted(pub &'static str);

/// Print `err` as one line and choose the exit code.
fn report(err: &anyhow::Error) -> ExitCode {
    let code = exit_code(err);
    if code != 3 {
        let mut stderr = output::stderr();
        let _ = writeln!(
            stderr,
            "{} {}",
            output::paint(output::RED, "Error:"),
            one_line(err)
        );
    }
    ExitCode::from(code)
}

/// 3 when stdout was closed under us (a pipe into `head`); 130 for [`Interrupted`]; 1 for a
/// [`Error`] the person can fix ([`Error::is_user_error`]); 255 for everything else, an internal
/// fault.
fn exit_code(err: &anyhow::Error) -> u8 {
    // serde_json's error names its io error's source, not the io error, as its cause: a
    // `--json` printer's broken pipe is found by asking it.
    let broken_pipe = err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        3
    } else if err.downcast_ref::<Interrupted>().is_some() {
        130
    } else if err
        .downcast_ref::<Error>()
        .is_some_and(Error::is_user_error)
    {
        1
    } else {
        255
    }
}

/// `err` and its chain of causes on one line, leaving out a cause the text before already says
/// (gza's own errors print their source themselves, so `{:#}` would say it twice).
fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// Refuse a group no task is in (a typo would otherwise look like an empty group).
pub(crate) fn require_group(store: &Store, group: &str) -> anyhow::Result<()> {
    if store.group_exists(group)? {
        return Ok(());
    }
    let names = store.group_names(11)?;
    let known = match names.len() {
        0 => "no task has a group yet (`gza add --group NAME` gives one a group)".to_string(),
        1..=10 => format!("groups in use: {}", names.join(", ")),
        _ => format!("groups in use: {}, …", names[..10].join(", ")),
    };
    Err(usage(format!("no task is in group `{group}`; {known}")))
}

/// A task type on the command line (`--type`).
pub(crate) fn parse_type(text: &str) -> Result<crate::task::TaskType, String> {
    use crate::task::TaskType;
    TaskType::parse(text).ok_or_else(|| format!("expected one of {}", TaskType::names()))
}

/// A task status on the command line (`--status`).
pub(crate) fn parse_status(text: &str) -> Result<crate::task::TaskStatus, String> {
    use crate::task::TaskStatus;
    TaskStatus::parse(text).ok_or_else(|| format!("expected one of {}", TaskStatus::names()))
}

/// A user error with a message saying what to do.
pub(crate) fn usage(message: impl Into<String>) -> anyhow::Error {
    Error::Usage(message.into()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(kind: std::io::ErrorKind) -> std::io::Error {
        std::io::Error::new(kind, "Is a directory (os error 21)")
    }

    #[test]
    fn user_errors_exit_1_internal_faults_255_and_a_closed_pipe_3() {
        let user = anyhow::Error::from(Error::TaskNotFound(crate::task::TaskId(9)));
        assert_eq!(exit_code(&user), 1);
        let git = anyhow::Error::from(Error::Git {
            dir: "/p".into(),
            command: "diff".into(),
            message: "fatal: bad object".into(),
        });
        assert_eq!(exit_code(&git), 255);
        let file = Error::io(
            "/p/.gza/logs",
            "create directory",
            io(std::io::ErrorKind::Other),
        );
        assert_eq!(exit_code(&file.into()), 255);
        // An error that is not gza's own (a failed write to stdout, say) is internal too.
        assert_eq!(exit_code(&io(std::io::ErrorKind::Other).into()), 255);
        assert_eq!(exit_code(&io(std::io::ErrorKind::BrokenPipe).into()), 3);
        let json = serde_json::Error::io(io(std::io::ErrorKind::BrokenPipe));
        assert_eq!(exit_code(&json.into()), 3, "a --json printer's broken pipe");
        let piped = Error::io("/p/out", "write", io(std::io::ErrorKind::BrokenPipe));
        assert_eq!(exit_code(&piped.into()), 3);
    }

    #[test]
    fn the_line_says_each_cause_once() {
        let file = Error::io(
            "/p/.gza/logs",
            "create directory",
            io(std::io::ErrorKind::Other),
        );
        assert_eq!(
            one_line(&file.into()),
            "cannot create directory /p/.gza/logs: Is a directory (os error 21)"
        );
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        assert_eq!(
            one_line(&Outer(io(std::io::ErrorKind::Other)).into()),
            "outer: Is a directory (os error 21)"
        );
    }
}
