//! `gza ab`: run a list of tasks twice from the same base commit, with learnings and without,
//! each run in its own worktree, judge each run by how its task ended and by the project's
//! verify command, and print per arm the success and verify-pass rates, turns, tokens, cost and
//! time with 95 % intervals, and the learnings given to the runs whose arms differed.
//!
//! Each run is a real task in the group `ab-<experiment>` (history, logs and cost work as for
//! any task) recorded in `ab_runs` (`gza_store::ab`), which keeps it out of the queue, the
//! credit and extraction, and makes the runner start it from the experiment's base commit.
//! Nothing is merged. A Ctrl-C ends the running agent and leaves every run stored:
//! `gza ab --resume ID` runs what is left (the interrupted runs again) and judges the rest.

mod stats;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::work_ui::Ui;
use super::{Context, output, usage};
use crate::learn;
use crate::process;
use crate::project::Project;
use crate::runner::{self, WorkOptions, verify};
use crate::store::{AbExperiment, AbItem, AbRun, AbVerified, Arm, Store};
use crate::task::{FailureReason, Task, TaskId, TaskStatus, TaskType};

#[derive(Debug, Args)]
pub struct AbArgs {
    /// The tasks to run: ids of existing implement tasks (their prompt, spec, model and agent
    /// are copied), or one YAML task file in `gza import`'s format (implement entries only).
    tasks: Vec<String>,
    /// Run each task this many times in each arm.
    #[arg(long, short = 'r', default_value_t = 1, value_name = "N")]
    repeat: u32,
    /// The commit every run starts from (default: HEAD).
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// Judge runs by their task's outcome alone, without the project's verify command.
    #[arg(long)]
    no_verify: bool,
    /// Run this many tasks at once, each in its own worktree.
    #[arg(long, short = 'p', default_value_t = 1)]
    parallel: usize,
    /// Continue experiment ID: run what is left (interrupted runs again), judge the rest.
    #[arg(long, value_name = "ID", conflicts_with_all = ["tasks", "repeat", "base", "no_verify", "show"])]
    resume: Option<i64>,
    /// Print the report of experiment ID as it stands; run nothing.
    #[arg(long, value_name = "ID", conflicts_with_all = ["tasks", "repeat", "base", "no_verify", "parallel"])]
    show: Option<i64>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Most runs an experiment may have (tasks × rounds × 2): a typo in --repeat should not queue
/// a month of agent time.
const MAX_RUNS: usize = 2_000;

/// Runs stopped for a reason that says nothing about the agent (a person or the machine
/// stopped them, or a person dropped the task): not a measurement; `--resume` runs them again.
fn interrupted(task: &Task) -> bool {
    task.status() == TaskStatus::Dropped
        || matches!(
            task.failure_reason(),
            Some(FailureReason::Killed | FailureReason::WorkerDied)
        )
}

pub fn cmd_ab(ctx: &Context, args: AbArgs) -> anyhow::Result<ExitCode> {
    if let Some(id) = args.show {
        let (_, store) = ctx.open_for_reading()?;
        let experiment = find_experiment(&store, id)?;
        let report = Report::read(&store, &experiment)?;
        report.print(args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (project, store) = ctx.open()?;
    let limit = crate::config::MAX_CONCURRENT_LIMIT as usize;
    if args.parallel == 0 || args.parallel > limit {
        return Err(usage(format!(
            "--parallel must be between 1 and {limit} (max_concurrent in gza.yaml caps the agents running at once)"
        )));
    }
    if !project.config.learnings.enabled {
        return Err(usage(
            "learnings are off in this project (learnings.enabled: false), so both arms would run without them; turn them on to measure them",
        ));
    }
    let experiment = match args.resume {
        Some(id) => {
            let experiment = find_experiment(&store, id)?;
            if experiment.verify {
                // The experiment was started with verify: it is judged the same way to the end.
                verify::command(&project)?;
            }
            experiment
        }
        None => create(ctx, &project, &store, &args)?,
    };
    let verify_text = if experiment.verify {
        format!(
            "judged by verify: {}",
            crate::redact::redact(&verify::command(&project)?)
        )
    } else {
        "judged by the tasks' outcomes (--no-verify)".to_string()
    };
    let runs = store.ab_runs(experiment.id)?;
    let items = runs.iter().map(|r| r.item).max().map_or(0, |m| m + 1);
    writeln!(
        output::stderr(),
        "{} A/B experiment {}: {} × {} × 2 arms from {} ({}), in group {}; {verify_text}",
        output::paint(output::CYAN, "▶"),
        experiment.id,
        plural(items as usize, "task"),
        plural(experiment.repeats as usize, "round"),
        short(&experiment.base_commit),
        experiment.base_name,
        experiment.group()
    )?;
    let to_run = prepare_runs(&store, &experiment, runs)?;
    check_agents(&project, &store, &to_run)?;

    gza_core::priority::lower(project.config.work_priority);
    process::install_stop_handler();
    super::logging::log_work_to(&project.logs_dir().join("work.log"));
    if !to_run.is_empty() {
        let options = WorkOptions {
            ids: to_run.clone(),
            count: Some(to_run.len()),
            parallel: args.parallel,
            group: None,
            tags: Vec::new(),
            all_tags: false,
            teacher: Arc::new(AbTeacher),
            watch: false,
        };
        runner::work(&project, &options, &Ui::new())?;
    }
    let judged = if process::stop_requested() {
        false
    } else {
        judge(&project, &store, &experiment)?
    };
    let report = Report::read(&store, &experiment)?;
    report.print(args.json)?;
    let stopped = !judged || process::stop_requested();
    if stopped || report.left > 0 {
        writeln!(
            output::stderr(),
            "{}: {} of experiment {} not finished or not judged; `gza ab --resume {}` runs and judges them",
            if stopped { "interrupted" } else { "incomplete" },
            plural(report.left, "run"),
            experiment.id,
            experiment.id
        )?;
        return Ok(ExitCode::from(if stopped { 130 } else { 1 }));
    }
    Ok(ExitCode::SUCCESS)
}

fn find_experiment(store: &Store, id: i64) -> anyhow::Result<AbExperiment> {
    if let Some(experiment) = store.ab_experiment(id)? {
        return Ok(experiment);
    }
    Err(usage(match store.latest_ab_experiment()? {
        Some(latest) => format!("no A/B experiment {id}; the latest is {latest}"),
        None => format!("no A/B experiment {id}; none has been run yet (`gza ab --help`)"),
    }))
}

/// The verify command, or a one-line error saying how to set one or to go without.
fn verify_command(project: &Project) -> anyhow::Result<String> {
    verify::command(project).map_err(|e| {
        usage(format!(
            "{e}; or judge the runs by their outcome alone with `gza ab --no-verify`"
        ))
    })
}

/// Check everything, then store a new experiment and all its runs' tasks.
fn create(
    ctx: &Context,
    project: &Project,
    store: &Store,
    args: &AbArgs,
) -> anyhow::Result<AbExperiment> {
    if args.tasks.is_empty() {
        return Err(usage(
            "give the tasks to run: ids of implement tasks, or a YAML task file (`gza ab --help`)",
        ));
    }
    if args.repeat == 0 {
        return Err(usage("--repeat must be 1 or more"));
    }
    if !args.no_verify {
        verify_command(project)?;
    }
    let items = read_items(ctx, project, store, &args.tasks)?;
    // Refused before anything is stored when an agent the runs need cannot be started.
    let mut kinds = Vec::new();
    for item in &items {
        let kind = item
            .provider
            .as_deref()
            .and_then(crate::config::ProviderKind::parse)
            .unwrap_or(project.config.provider);
        if !kinds.contains(&kind) {
            kinds.push(kind);
            if project.config.sandbox_for(kind) != crate::config::SandboxKind::Docker {
                process::check_binary(
                    &runner::providers::binary(kind, &project.config),
                    runner::providers::config_key(kind),
                )?;
            }
        }
    }
    let runs = items.len() * args.repeat as usize * 2;
    if runs > MAX_RUNS {
        return Err(usage(format!(
            "{} tasks × {} rounds × 2 arms is {runs} runs, over the {MAX_RUNS} one experiment may have; give fewer tasks or a smaller --repeat",
            items.len(),
            args.repeat
        )));
    }
    let Some((head, head_branch)) = crate::worktree::head(&project.root) else {
        return Err(usage(format!(
            "{} is not a git repository with a commit; gza ab runs tasks in worktrees from a commit",
            project.root.display()
        )));
    };
    let (base_commit, base_name) = match &args.base {
        Some(rev) => match crate::worktree::resolve(&project.root, rev) {
            Some(commit) => (commit, rev.clone()),
            None => {
                return Err(usage(format!(
                    "--base {rev} names no commit here; give a branch, tag or commit (`git log` lists them)"
                )));
            }
        },
        None => (head, head_branch.unwrap_or_else(|| "HEAD".into())),
    };
    if args.base.is_none() && crate::worktree::is_dirty(&project.root) {
        writeln!(
            output::stderr(),
            "{} the main worktree has uncommitted changes; every run starts from {} without them",
            output::paint(output::YELLOW, "warning:"),
            short(&base_commit)
        )?;
    }
    Ok(store.create_ab_experiment(
        &base_commit,
        &base_name,
        args.repeat,
        !args.no_verify,
        &items,
    )?)
}

/// The experiment's task list from the command line: task ids, or one task file.
fn read_items(
    ctx: &Context,
    project: &Project,
    store: &Store,
    given: &[String],
) -> anyhow::Result<Vec<AbItem>> {
    let ids: Vec<Option<TaskId>> = given.iter().map(|g| g.parse().ok()).collect();
    if ids.iter().all(Option::is_some) {
        let mut items = Vec::with_capacity(ids.len());
        let ids: Vec<TaskId> = ids.into_iter().flatten().collect();
        if let Some(twice) = ids
            .iter()
            .enumerate()
            .find_map(|(i, id)| ids[..i].contains(id).then_some(id))
        {
            return Err(usage(format!(
                "task {twice} is given twice; each task is run once per arm and round (--repeat N runs it N times, as independent pairs)"
            )));
        }
        for id in ids {
            let task = store.get_task(id)?;
            if task.task_type != TaskType::Implement {
                return Err(usage(format!(
                    "task {id} is of type {}; gza ab runs implement tasks, which start from a commit (copy its prompt into a new one with `gza add`)",
                    task.task_type
                )));
            }
            items.push(AbItem {
                prompt: task.prompt.clone(),
                spec: task.spec.clone(),
                model: task.model.clone(),
                provider: task.provider.clone(),
                source_task: Some(id),
            });
        }
        return Ok(items);
    }
    let [file] = given else {
        return Err(usage(
            "give task ids, or one task file: not both, nor several files",
        ));
    };
    let path = crate::import::resolve(ctx.dir(), &PathBuf::from(file));
    if !path.exists() && !file.contains(['/', '.']) {
        return Err(usage(format!(
            "`{file}` is neither a task id nor a file; give task ids (`gza history` lists them) or a YAML task file"
        )));
    }
    let plan = crate::import::plan(project, &path, file)?;
    if let Some(problem) = plan.problems.first() {
        let more = match plan.problems.len() {
            1 => String::new(),
            n => format!(
                " (and {} more: `gza import --dry-run {file}` lists them)",
                n - 1
            ),
        };
        return Err(usage(format!("{file}: {problem}{more}")));
    }
    if let Some(skipped) = plan.skipped.first() {
        return Err(usage(format!(
            "{file}: entry {}: {}; gza ab runs implement entries only",
            skipped.position, skipped.reason
        )));
    }
    let mut items = Vec::with_capacity(plan.entries.len());
    for entry in plan.entries {
        let problem = if entry.task_type != TaskType::Implement {
            Some(format!("is of type {}", entry.task_type))
        } else if entry.depends_on.is_some() {
            Some("depends on another entry".to_string())
        } else if entry.review {
            Some("asks for a review".to_string())
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(usage(format!(
                "{file}: entry {} {problem}; gza ab runs each task alone from the base commit, so entries are implement tasks without depends_on or review",
                entry.position
            )));
        }
        items.push(AbItem {
            prompt: entry.prompt,
            spec: entry.spec,
            model: None,
            provider: None,
            source_task: None,
        });
    }
    if items.is_empty() {
        return Err(usage(format!("{file}: the file has no tasks to run")));
    }
    if let Some(twice) = (0..items.len()).find(|&i| {
        items[..i]
            .iter()
            .any(|e| e.prompt == items[i].prompt && e.spec == items[i].spec)
    }) {
        return Err(usage(format!(
            "{file}: entry {} repeats an earlier entry's prompt; each task is run once per arm and round (--repeat N runs it N times, as independent pairs)",
            twice + 1
        )));
    }
    Ok(items)
}

/// The item a run was made from, to make its replacement.
fn item_of(
    store: &Store,
    runs: &[AbRun],
    run: &AbRun,
    task: Option<&Task>,
) -> anyhow::Result<AbItem> {
    let from = match task {
        Some(t) => t.clone(),
        // Its task was deleted: another run of the same item says what it was.
        None => runs
            .iter()
            .filter(|r| r.item == run.item)
            .find_map(|r| store.get_task(r.task).ok())
            .ok_or_else(|| {
                usage(format!(
                    "every run of task {} of the experiment was deleted; start a new experiment",
                    run.item + 1
                ))
            })?,
    };
    Ok(AbItem {
        prompt: from.prompt,
        spec: from.spec,
        model: from.model,
        provider: from.provider,
        source_task: run.source_task,
    })
}

/// The tasks of `runs` still to run, in the experiment's order: pending ones, and new ones in
/// place of runs that were interrupted or whose task was deleted. A run whose task is running
/// elsewhere is refused.
fn prepare_runs(
    store: &Store,
    experiment: &AbExperiment,
    runs: Vec<AbRun>,
) -> anyhow::Result<Vec<TaskId>> {
    let mut to_run = Vec::new();
    // The runner takes them in id order, the order they were created in (`create_ab_experiment`
    // alternates the arms round by round); replacements come last.
    for run in &runs {
        let task = match store.get_task(run.task) {
            Ok(task) => Some(task),
            Err(crate::error::Error::TaskNotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        match &task {
            Some(t) if t.status() == TaskStatus::Pending => to_run.push(t.id),
            Some(t) if t.status() == TaskStatus::InProgress => {
                return Err(usage(format!(
                    "task {} of experiment {} is running; wait for it (`gza ps`) or stop it with `gza kill {}`, then resume",
                    t.id, experiment.id, t.id
                )));
            }
            Some(t) if !interrupted(t) => {}
            _ => {
                let item = item_of(store, &runs, run, task.as_ref())?;
                to_run.push(store.replace_ab_run(experiment, run, &item)?);
            }
        }
    }
    Ok(to_run)
}

/// Refuse before anything runs when an agent the runs need cannot be started.
fn check_agents(project: &Project, store: &Store, ids: &[TaskId]) -> anyhow::Result<()> {
    let mut seen = Vec::new();
    for &id in ids {
        let task = store.get_task(id)?;
        let kind = runner::provider_of(project, &task);
        if !seen.contains(&kind) {
            seen.push(kind);
            runner::check_agent(project, &task)?;
        }
    }
    Ok(())
}

/// Judge every finished run not judged yet: verify its branch (when the experiment asks for
/// it). Returns false when a Ctrl-C stopped it (what was judged is kept).
fn judge(project: &Project, store: &Store, experiment: &AbExperiment) -> anyhow::Result<bool> {
    for run in store.ab_runs(experiment.id)? {
        if run.verified.is_some() {
            continue;
        }
        let Ok(task) = store.get_task(run.task) else {
            continue;
        };
        if !matches!(task.status(), TaskStatus::Completed | TaskStatus::Failed)
            || interrupted(&task)
        {
            continue;
        }
        if !experiment.verify {
            store.set_ab_verified(task.id, AbVerified::NotRun)?;
            continue;
        }
        if process::stop_requested() {
            return Ok(false);
        }
        let verified = if task.branch.is_none() {
            AbVerified::NotRun
        } else {
            match verify::verify(project, store, &task) {
                Ok(verify::Verified::Interrupted) => return Ok(false),
                Ok(verify::Verified::Recorded { verification, .. }) => {
                    if verification.outcome.passed() {
                        AbVerified::Passed
                    } else {
                        AbVerified::Failed
                    }
                }
                Err(e) => {
                    writeln!(
                        output::stderr(),
                        "{} task {}: not verified: {e}",
                        output::paint(output::YELLOW, "warning:"),
                        task.id
                    )?;
                    AbVerified::NotRun
                }
            }
        };
        writeln!(
            output::stderr(),
            "{} verify of task {} ({}, task {} round {}): {}",
            match verified {
                AbVerified::Passed => output::paint(output::GREEN, "✓"),
                _ => output::paint(output::RED, "✗"),
            },
            task.id,
            run.arm.as_str(),
            run.item + 1,
            run.round,
            describe_verified(verified)
        )?;
        store.set_ab_verified(task.id, verified)?;
    }
    Ok(true)
}

fn describe_verified(v: AbVerified) -> &'static str {
    match v {
        AbVerified::Passed => "passed",
        AbVerified::Failed => "failed",
        AbVerified::NotRun => "not run (no branch)",
    }
}

/// The learnings room for an experiment: the "with" arm's tasks get learnings chosen and
/// recorded as `gza work` gives them (the "without" arm's skip learnings, so get none), and no
/// regeneration runs between runs, so every run of the experiment sees the same learnings.
#[derive(Debug)]
struct AbTeacher;

impl runner::Teacher for AbTeacher {
    fn for_prompt(
        &self,
        project: &Project,
        store: &Store,
        task: &Task,
    ) -> Option<crate::prompt::InjectedLearnings> {
        learn::learnings_for_prompt(project, store, task, learn::Selection::Record)
    }

    fn after_task(&self, _: &Project, _: &Store) -> Option<std::thread::JoinHandle<()>> {
        None
    }
}

/// One run as the report sees it.
#[derive(Debug, Clone, serde::Serialize)]
struct RunView {
    task: TaskId,
    status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure_reason: Option<FailureReason>,
    verified: Option<AbVerified>,
    turns: Option<f64>,
    tokens: Option<f64>,
    #[serde(rename = "cost_usd")]
    cost: Option<f64>,
    seconds: Option<f64>,
}

/// One judged run in the JSON report, for a person's own analysis.
#[derive(Debug, Clone, serde::Serialize)]
struct RunEntry {
    /// 1-based position in the experiment's list.
    item: i64,
    round: i64,
    arm: Arm,
    #[serde(flatten)]
    run: RunView,
}

impl RunView {
    fn succeeded(&self) -> bool {
        self.status == TaskStatus::Completed
    }

    fn passed(&self) -> bool {
        self.verified == Some(AbVerified::Passed)
    }

    fn describe(&self, verify: bool) -> String {
        let mut text = match &self.failure_reason {
            Some(reason) => format!("failed {reason}"),
            None => self.status.to_string(),
        };
        if verify {
            text.push_str(", verify ");
            text.push_str(match self.verified {
                Some(v) => describe_verified(v),
                None => "not judged",
            });
        }
        format!("{text} (task {})", self.task)
    }
}

/// A learning given to a run.
#[derive(Debug, Clone, serde::Serialize)]
struct Given {
    id: String,
    text: String,
}

/// A task and round whose two runs ended differently.
#[derive(Debug, Clone, serde::Serialize)]
struct Differed {
    /// 1-based position in the experiment's list.
    task: i64,
    round: i64,
    prompt: String,
    with: RunView,
    without: RunView,
    /// The learnings the "with" run was given.
    learnings: Vec<Given>,
}

/// One arm's measures.
#[derive(Debug, Clone, serde::Serialize)]
struct ArmSummary {
    runs: usize,
    success: Option<stats::Rate>,
    verify_passed: Option<stats::Rate>,
    turns: Option<stats::Mean>,
    tokens: Option<stats::Mean>,
    cost_usd: Option<stats::Mean>,
    seconds: Option<stats::Mean>,
}

impl ArmSummary {
    fn of(runs: &[&RunView], verify: bool) -> ArmSummary {
        let values = |f: fn(&RunView) -> Option<f64>| -> Vec<f64> {
            runs.iter().filter_map(|r| f(r)).collect()
        };
        ArmSummary {
            runs: runs.len(),
            success: stats::wilson(runs.iter().filter(|r| r.succeeded()).count(), runs.len()),
            verify_passed: if verify {
                stats::wilson(runs.iter().filter(|r| r.passed()).count(), runs.len())
            } else {
                None
            },
            turns: stats::mean(&values(|r| r.turns)),
            tokens: stats::mean(&values(|r| r.tokens)),
            cost_usd: stats::mean(&values(|r| r.cost)),
            seconds: stats::mean(&values(|r| r.seconds)),
        }
    }
}

/// The paired differences, with learnings minus without, over the pairs (a task in a round)
/// where both runs were judged and reported the measure: the question the per-arm intervals
/// do not answer, since a pair shares its task and base and most of its variance cancels.
/// Rates are differences of paired proportions (fractions of one) with Newcombe's interval;
/// the rest are mean differences with Student's t, without an interval under 2 pairs or when
/// every pair differed by the same amount.
#[derive(Debug, Clone, Default, serde::Serialize)]
struct Difference {
    success: Option<stats::PairedRate>,
    verify_passed: Option<stats::PairedRate>,
    turns: Option<stats::Mean>,
    tokens: Option<stats::Mean>,
    cost_usd: Option<stats::Mean>,
    seconds: Option<stats::Mean>,
}

impl Difference {
    fn of(pairs: &[(&RunView, &RunView)], verify: bool) -> Difference {
        let diffs = |f: &dyn Fn(&RunView) -> Option<f64>| -> Vec<f64> {
            pairs
                .iter()
                .filter_map(|(w, wo)| Some(f(w)? - f(wo)?))
                .collect()
        };
        let rates = |f: fn(&RunView) -> bool| {
            let count =
                |want: (bool, bool)| pairs.iter().filter(|(w, wo)| (f(w), f(wo)) == want).count();
            stats::paired_rates(
                count((true, true)),
                count((true, false)),
                count((false, true)),
                count((false, false)),
            )
        };
        Difference {
            success: rates(RunView::succeeded),
            verify_passed: if verify { rates(RunView::passed) } else { None },
            turns: stats::mean(&diffs(&|r| r.turns)),
            tokens: stats::mean(&diffs(&|r| r.tokens)),
            cost_usd: stats::mean(&diffs(&|r| r.cost)),
            seconds: stats::mean(&diffs(&|r| r.seconds)),
        }
    }
}

/// What `gza ab` reports about an experiment.
#[derive(Debug, serde::Serialize)]
struct Report {
    experiment: AbExperiment,
    group: String,
    tasks: usize,
    with: ArmSummary,
    without: ArmSummary,
    /// With minus without, pair by pair, with 95 % intervals.
    difference: Difference,
    /// Pairs (a task in a round) where "with" ended better, worse, or alike.
    pairs_with_better: usize,
    pairs_without_better: usize,
    pairs_alike: usize,
    /// The exact two-sided sign test on the pairs that ended differently (1: none did).
    sign_test_p: f64,
    differed: Vec<Differed>,
    /// Runs not finished or not judged yet (pending, running, interrupted, not verified).
    left: usize,
    /// Of the judged runs with learnings, how many were given at least one.
    with_runs_given_learnings: usize,
    /// Every judged run (JSON only).
    runs: Vec<RunEntry>,
}

impl Report {
    fn read(store: &Store, experiment: &AbExperiment) -> anyhow::Result<Report> {
        let runs = store.ab_runs(experiment.id)?;
        let mut views: HashMap<(i64, i64, Arm), RunView> = HashMap::new();
        let mut prompts: HashMap<i64, String> = HashMap::new();
        let mut left = 0;
        for run in &runs {
            let Ok(task) = store.get_task(run.task) else {
                left += 1;
                continue;
            };
            prompts
                .entry(run.item)
                .or_insert_with(|| task.prompt.clone());
            let finished = matches!(task.status(), TaskStatus::Completed | TaskStatus::Failed);
            if !finished || interrupted(&task) || run.verified.is_none() {
                left += 1;
                continue;
            }
            let u = task.usage;
            let tokens = match (u.input_tokens, u.output_tokens) {
                (None, None) => None,
                (i, o) => Some((i.unwrap_or(0) + o.unwrap_or(0)) as f64),
            };
            views.insert(
                (run.item, run.round, run.arm),
                RunView {
                    task: task.id,
                    status: task.status(),
                    failure_reason: task.failure_reason().cloned(),
                    verified: run.verified,
                    turns: u.num_turns.map(|t| t as f64),
                    tokens,
                    cost: u.cost_usd,
                    seconds: u.duration_seconds,
                },
            );
        }
        let arm = |arm: Arm| -> Vec<&RunView> {
            let mut keys: Vec<&(i64, i64, Arm)> =
                views.keys().filter(|(_, _, a)| *a == arm).collect();
            keys.sort();
            keys.into_iter().map(|k| &views[k]).collect()
        };
        let with = ArmSummary::of(&arm(Arm::With), experiment.verify);
        let without = ArmSummary::of(&arm(Arm::Without), experiment.verify);
        let (mut better, mut worse, mut alike) = (0, 0, 0);
        let mut differed = Vec::new();
        let mut both: Vec<(&RunView, &RunView)> = Vec::new();
        let mut pairs: Vec<(i64, i64)> = views.keys().map(|(i, r, _)| (*i, *r)).collect();
        pairs.sort();
        pairs.dedup();
        for (item, round) in pairs {
            let (Some(w), Some(wo)) = (
                views.get(&(item, round, Arm::With)),
                views.get(&(item, round, Arm::Without)),
            ) else {
                continue;
            };
            both.push((w, wo));
            let score = |r: &RunView| u8::from(r.succeeded()) + u8::from(r.passed());
            match score(w).cmp(&score(wo)) {
                std::cmp::Ordering::Greater => better += 1,
                std::cmp::Ordering::Less => worse += 1,
                std::cmp::Ordering::Equal => alike += 1,
            }
            if w.succeeded() == wo.succeeded() && w.passed() == wo.passed() {
                continue;
            }
            let mut learnings = Vec::new();
            let mut seen = Vec::new();
            for injection in store.task_injections(w.task)? {
                if seen.contains(&injection.learning) {
                    continue;
                }
                seen.push(injection.learning);
                let text = store
                    .learning(injection.learning)?
                    .map_or_else(|| "(deleted since)".to_string(), |l| l.text);
                learnings.push(Given {
                    id: format!("L{}", injection.learning),
                    text,
                });
            }
            differed.push(Differed {
                task: item + 1,
                round,
                prompt: prompts.get(&item).cloned().unwrap_or_default(),
                with: w.clone(),
                without: wo.clone(),
                learnings,
            });
        }
        let difference = Difference::of(&both, experiment.verify);
        let mut keys: Vec<&(i64, i64, Arm)> = views.keys().collect();
        keys.sort();
        let mut given = 0;
        for key in keys.iter().filter(|(_, _, arm)| *arm == Arm::With) {
            if !store.task_injections(views[*key].task)?.is_empty() {
                given += 1;
            }
        }
        let all = keys
            .into_iter()
            .map(|&(item, round, arm)| RunEntry {
                item: item + 1,
                round,
                arm,
                run: views[&(item, round, arm)].clone(),
            })
            .collect();
        Ok(Report {
            with_runs_given_learnings: given,
            runs: all,
            group: experiment.group(),
            tasks: runs.iter().map(|r| r.item + 1).max().unwrap_or(0) as usize,
            experiment: experiment.clone(),
            with,
            without,
            difference,
            pairs_with_better: better,
            pairs_without_better: worse,
            pairs_alike: alike,
            sign_test_p: stats::sign_test(better, worse),
            differed,
            left,
        })
    }

    fn print(&self, json: bool) -> anyhow::Result<()> {
        let mut out = output::stdout();
        if json {
            writeln!(out, "{}", serde_json::to_string_pretty(self)?)?;
            return Ok(());
        }
        let e = &self.experiment;
        writeln!(
            out,
            "A/B experiment {}: {} × {} from {} ({}), group {}",
            e.id,
            plural(self.tasks, "task"),
            plural(e.repeats as usize, "round"),
            short(&e.base_commit),
            e.base_name,
            self.group
        )?;
        let mut table =
            output::Table::new(vec!["", "with learnings", "without", "difference (paired)"]);
        let d = &self.difference;
        let row = |name: &str, f: &dyn Fn(&ArmSummary) -> String, diff: String| {
            vec![name.to_string(), f(&self.with), f(&self.without), diff]
        };
        let signed = |v: f64, show: &dyn Fn(f64) -> String| {
            let sign = if v < 0.0 { "−" } else { "+" };
            format!("{sign}{}", show(v.abs()))
        };
        // Percentage points, the unit said once after the difference: "+50 pts (+10 to +90)".
        let points = |d: Option<stats::PairedRate>| -> String {
            let pts = |v: f64| signed(v * 100.0, &|x| format!("{x:.0}"));
            match d {
                None => "-".into(),
                Some(d) => format!("{} pts ({} to {})", pts(d.mean), pts(d.low), pts(d.high)),
            }
        };
        table.row(row("runs", &|a| a.runs.to_string(), pairs(d)));
        table.row(row("success", &|a| rate(a.success), points(d.success)));
        if e.verify {
            table.row(row(
                "verify passed",
                &|a| rate(a.verify_passed),
                points(d.verify_passed),
            ));
        }
        table.row(row(
            "turns",
            &|a| mean(a.turns, &|v| format!("{v:.1}")),
            diff(d.turns, &|v| signed(v, &|x| format!("{x:.1}"))),
        ));
        table.row(row(
            "tokens",
            &|a| mean(a.tokens, &|v| format!("{v:.0}")),
            diff(d.tokens, &|v| signed(v, &|x| format!("{x:.0}"))),
        ));
        table.row(row(
            "cost",
            &|a| mean(a.cost_usd, &|v| output::cost(Some(v))),
            diff(d.cost_usd, &|v| signed(v, &|x| output::cost(Some(x)))),
        ));
        table.row(row(
            "time",
            &|a| mean(a.seconds, &seconds),
            diff(d.seconds, &|v| signed(v, &seconds)),
        ));
        table.print(&mut out)?;
        writeln!(
            out,
            "95 % intervals: rates by Wilson's score, their paired differences by Newcombe's score method, means and their paired differences by Student's t; - where no run reported it."
        )?;
        if !e.verify {
            writeln!(out, "Judged by the tasks' outcomes only (--no-verify).")?;
        }
        if self.with.runs > 0 {
            write!(
                out,
                "Learnings were given to {} of the {} runs with learnings",
                self.with_runs_given_learnings, self.with.runs
            )?;
            if self.with_runs_given_learnings == 0 {
                write!(
                    out,
                    ": both arms ran alike, so this measures nothing (`gza learnings search \"…\"` shows what a prompt finds)"
                )?;
            }
            writeln!(out, ".")?;
        }
        writeln!(
            out,
            "Pairs (a task in a round): with learnings better in {}, worse in {}, alike in {}.",
            self.pairs_with_better, self.pairs_without_better, self.pairs_alike
        )?;
        let differing = self.pairs_with_better + self.pairs_without_better;
        if differing > 0 {
            write!(
                out,
                "Sign test on the {differing} pair(s) that ended differently: p = {:.3} (exact, two-sided)",
                self.sign_test_p
            )?;
            if differing < 6 {
                // 2 / 2^n is the smallest p n pairs can give.
                write!(
                    out,
                    "; with fewer than 6 such pairs no split reaches p < 0.05"
                )?;
            }
            writeln!(out, ".")?;
        }
        if self.differed.is_empty() {
            writeln!(out, "No pair's runs ended differently.")?;
        } else {
            writeln!(
                out,
                "Pairs whose runs ended differently, and the learnings the run with learnings was given:"
            )?;
            for d in &self.differed {
                writeln!(
                    out,
                    "  task {} round {}: {}",
                    d.task,
                    d.round,
                    output::one_line(&d.prompt, 60)
                )?;
                writeln!(out, "    with:    {}", d.with.describe(e.verify))?;
                writeln!(out, "    without: {}", d.without.describe(e.verify))?;
                if d.learnings.is_empty() {
                    writeln!(out, "    given no learnings")?;
                }
                for l in &d.learnings {
                    writeln!(out, "    {} {}", l.id, output::one_line(&l.text, 80))?;
                }
            }
        }
        if self.left > 0 {
            writeln!(
                out,
                "{} not finished or not judged yet (`gza ab --resume {}`).",
                plural(self.left, "run"),
                e.id
            )?;
        }
        Ok(())
    }
}

/// "83% (44–97%)", or "-" with no runs.
fn rate(r: Option<stats::Rate>) -> String {
    match r {
        None => "-".into(),
        Some(r) => format!(
            "{:.0}% ({:.0}–{:.0}%)",
            r.rate * 100.0,
            r.low * 100.0,
            r.high * 100.0
        ),
    }
}

/// "3.0 (2.1–3.9)" for a mean and its interval (its low end never under 0: every measure here
/// is a count, money or time), "3.0 (1 run)" or "3.0 (all alike)" where there is no interval,
/// "-" for none.
fn mean(m: Option<stats::Mean>, show: &dyn Fn(f64) -> String) -> String {
    match m {
        None => "-".into(),
        Some(stats::Mean {
            mean,
            low: Some(low),
            high: Some(high),
            ..
        }) => format!("{} ({}–{})", show(mean), show(low.max(0.0)), show(high)),
        Some(m) if m.n < 2 => format!("{} (1 run)", show(m.mean)),
        Some(m) => format!("{} (all alike)", show(m.mean)),
    }
}

/// "+1.2 (−0.3 to +2.7)": a paired difference and its interval, which may straddle zero (then
/// the runs do not tell the arms apart on this measure); "+1.2 (1 pair, no interval)" or
/// "+1.2 (every pair alike, no interval)" where there is none; "-" with no pair.
fn diff(m: Option<stats::Mean>, show: &dyn Fn(f64) -> String) -> String {
    match m {
        None => "-".into(),
        Some(stats::Mean {
            mean,
            low: Some(low),
            high: Some(high),
            ..
        }) => format!("{} ({} to {})", show(mean), show(low), show(high)),
        Some(m) if m.n < 2 => format!("{} (1 pair, no interval)", show(m.mean)),
        Some(m) => format!("{} (every pair alike, no interval)", show(m.mean)),
    }
}

/// A time, to a tenth of a second under ten seconds: whole seconds printed short runs and
/// their differences as "−0s (−0s to +0s)", an interval that looked like none.
fn seconds(v: f64) -> String {
    if v < 9.95 {
        format!("{v:.1}s")
    } else {
        output::duration(Some(v))
    }
}

/// "4 pairs" in the difference column's first row: how many pairs it is computed over.
fn pairs(d: &Difference) -> String {
    let n = d.success.map_or(0, |m| m.n);
    plural(n, "pair")
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// "1 task", "3 tasks".
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
