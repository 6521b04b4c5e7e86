//! `gza demo`: gza's main job, offline, in a few seconds.
//!
//! In a temporary git repository, a built-in scripted agent (`gza demo-agent`, run through the
//! ordinary `command` provider) works through six tasks. Each code task gets its own worktree,
//! branch and commit; everything is recorded in the task database. No network, no keys.

use std::io::{Read, Write};
use std::process::Command;

use clap::Args;

use super::{Context, output};
use crate::error::Error;
use crate::runner::{self, WorkOptions};
use crate::store::{NewTask, Store};
use crate::task::TaskType;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the demo project and print where it is.
    #[arg(long)]
    keep: bool,
}

#[derive(Debug, Args)]
pub struct DemoAgentArgs {}

/// The demo's tasks, and what the scripted agent answers to each: (type, prompt, file, learnings).
const SCRIPT: [(TaskType, &str, &str, &[&str]); 6] = [
    (
        TaskType::Implement,
        "Add a health-check endpoint to the API",
        "api/health.py",
        &[
            "[Testing Patterns] Run `pytest -q tests/` before finishing the task",
            "[Code Style] Handlers live in api/, one module per resource",
        ],
    ),
    (
        TaskType::Implement,
        "Validate user emails on signup",
        "api/signup.py",
        &[
            "[Common Pitfalls] Email validation must reject trailing whitespace; the old regex let it through",
            "[Testing Patterns] Run `pytest -q tests/` before finishing",
        ],
    ),
    (
        TaskType::Explore,
        "Find out why the nightly export job is slow",
        "",
        &[
            "[Architecture Decisions] Exports stream rows in batches of 500; never load a whole table",
        ],
    ),
    (
        TaskType::Implement,
        "Add pagination to the /users endpoint",
        "api/users.py",
        &[
            "[Code Style] Handlers live in api/, one module per resource",
            "[Git Workflow] Leave commits to gza; never run git commit in a task",
        ],
    ),
    (
        TaskType::Implement,
        "Log slow database queries",
        "api/db_log.py",
        &[
            "[Common Pitfalls] Settings come from config.toml; environment variables only override it",
        ],
    ),
    (
        TaskType::Implement,
        "Add a /version endpoint",
        "api/version.py",
        &[],
    ),
];

pub fn cmd_demo(_ctx: &Context, args: DemoArgs) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let tmp = tempfile::Builder::new().prefix("gza-demo").tempdir()?;
    let root = tmp.path().join("demo-project");
    std::fs::create_dir_all(root.join("api"))?;
    std::fs::write(root.join("README.md"), "# demo project\n")?;
    std::fs::write(root.join("api/__init__.py"), "")?;
    let git = |args: &[&str]| -> anyhow::Result<()> {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args([
                "-c",
                "user.name=gza demo",
                "-c",
                "user.email=demo@localhost",
            ])
            .args(args)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ok {
            Ok(())
        } else {
            Err(Error::Usage(format!(
                "the demo needs git: `git {}` failed",
                args.join(" ")
            ))
            .into())
        }
    };
    git(&["init", "--quiet", "--initial-branch=main"])?;

    let exe = std::env::current_exe()?;
    let yaml = crate::config::EXAMPLE_YAML
        .replacen("project_name: null", "project_name: demo-project", 1)
        .replacen("provider: claude", "provider: command", 1)
        .replacen(
            "  extraction_provider: auto",
            "  extraction_provider: none",
            1,
        );
    std::fs::write(root.join("gza.yaml"), yaml)?;
    // The agent's command is a setting that runs a program: it lives in the person's own,
    // uncommitted layer, as a repository's gza.yaml may not set it until trusted.
    std::fs::write(
        root.join(crate::settings::LOCAL_FILE),
        format!(
            "providers:\n  command:\n    command: [{}, demo-agent]\n",
            serde_json::to_string(&exe.to_string_lossy())?
        ),
    )?;
    super::init::ensure_gitignore(&root.join(".gitignore"))?;
    git(&["add", "--all"])?;
    git(&["commit", "--quiet", "-m", "Start the demo project"])?;

    let ctx = Context { dir: root.clone() };
    let project = ctx.project()?;
    let store = Store::create_project(&project)?;
    for (task_type, prompt, _, _) in SCRIPT {
        store.insert_task(&NewTask {
            prompt: prompt.into(),
            task_type: Some(task_type),
            ..NewTask::default()
        })?;
    }
    drop(store);

    let mut out = output::stdout();
    writeln!(
        out,
        "{}",
        output::paint(
            output::BOLD,
            "gza demo: six tasks, a scripted agent, no network"
        )
    )?;
    writeln!(out, "Project: {}\n", root.display())?;
    out.flush()?;
    let ui = super::work_ui::Ui::new();
    let options = WorkOptions {
        ids: Vec::new(),
        count: None,
        parallel: 1,
        group: None,
        tags: Vec::new(),
        all_tags: false,
        teacher: std::sync::Arc::new(super::work::Teacher),
        watch: false,
    };
    runner::work(&project, &options, &ui)?;

    writeln!(out, "\n{}", output::paint(output::BOLD, "$ gza history"))?;
    out.flush()?;
    super::history::cmd_history(&ctx, super::history::HistoryArgs::default_view())?;
    writeln!(out, "\n{}", output::paint(output::BOLD, "$ git branch"))?;
    let branches = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["branch", "--list", "gza/*"])
        .output()?;
    out.write_all(&branches.stdout)?;
    writeln!(
        out,
        "\n{}",
        output::paint(
            output::BOLD,
            "$ cat .gza/learnings.md   # rebuilt after the fifth task"
        )
    )?;
    out.write_all(&std::fs::read(project.learnings_path()).unwrap_or_default())?;
    writeln!(
        out,
        "\n{}",
        output::paint(
            output::BOLD,
            "$ gza show 6 --prompt   # the sixth task was given them"
        )
    )?;
    out.flush()?;
    super::show::cmd_show(
        &ctx,
        super::show::ShowArgs::prompt_of(crate::task::TaskId(6)),
    )?;
    writeln!(out, "\nDone in {:.1}s.", started.elapsed().as_secs_f64())?;
    if args.keep {
        let kept = tmp.keep();
        writeln!(
            out,
            "The demo project is kept in {}",
            kept.join("demo-project").display()
        )?;
    }
    Ok(())
}

/// The scripted agent: reads a prompt on stdin, makes the change the script says, and answers
/// with a summary that ends in a `## Learnings` list, as real agents are asked to.
pub fn cmd_demo_agent(_args: DemoAgentArgs) -> anyhow::Result<()> {
    let mut prompt = String::new();
    std::io::stdin().read_to_string(&mut prompt)?;
    let entry = SCRIPT
        .iter()
        .find(|(_, p, _, _)| prompt.contains(p))
        .ok_or_else(|| Error::Usage("demo-agent only knows the demo's tasks".into()))?;
    let (_, task, file, learnings) = entry;
    let mut answer = String::new();
    if !file.is_empty() {
        let body = format!("# {task}\n\ndef handler(request):\n    return {{\"ok\": True}}\n");
        std::fs::write(file, body)?;
        answer.push_str(&format!(
            "Done: {task}. I added `{file}` with a handler and kept to the existing layout.\n"
        ));
    } else {
        answer.push_str(&format!("Findings for \"{task}\": the export loads whole tables into memory; batching fixes it.\n"));
    }
    if !learnings.is_empty() {
        answer.push_str("\n## Learnings\n");
        for l in learnings.iter() {
            answer.push_str(&format!("- {l}\n"));
        }
    }
    print!("{answer}");
    Ok(())
}
