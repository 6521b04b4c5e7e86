//! `-v`, `RUST_LOG` and `.gza/logs/work.log`: what gza does, for a person who asks, and nothing
//! extra for one who does not.

use std::io::Write;
use std::process::Stdio;

use insta::assert_snapshot;
use serde_json::json;

use crate::support::project::TestProject;

/// The runner's steps, in the order a task goes through them.
const STEPS: [&str; 7] = [
    "claimed",
    "workspace ready",
    "agent started",
    "agent ended",
    "judged",
    "committed",
    "recorded",
];

/// A git project whose agent writes a file and says so (its gza.yaml committed).
fn project_with_an_agent() -> TestProject {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho done > out.txt\necho 'wrote out.txt'\n",
        "",
    );
    p.git(&["add", "gza.yaml"]);
    p.git(&["commit", "--quiet", "-m", "agent"]);
    p
}

/// Where each step first appears in `text`; fails naming a missing one.
fn positions(text: &str) -> Vec<usize> {
    STEPS
        .iter()
        .map(|step| {
            text.find(&format!(" {step}"))
                .unwrap_or_else(|| panic!("no {step:?} in:\n{text}"))
        })
        .collect()
}

#[test]
fn verbose_shows_the_runners_steps_on_stderr_and_by_default_nothing_extra_appears() {
    let p = project_with_an_agent();
    p.add(&["first"]);
    let run = p.run(&["-v", "work"]);
    assert_eq!(run.code, 0, "{run}");
    let at = positions(&run.stderr);
    assert!(at.is_sorted(), "steps out of order:\n{}", run.stderr);
    assert!(run.stderr.contains("task{id=1}"), "{}", run.stderr);
    assert!(
        !run.stdout.contains("INFO"),
        "logs never go to stdout:\n{run}"
    );

    p.add(&["second"]);
    let quiet = p.run(&["work"]);
    assert_eq!(quiet.code, 0, "{quiet}");
    let took = regex::Regex::new(r"completed in \d+s").unwrap();
    assert_snapshot!(took.replace_all(&quiet.to_string(), "completed in [SECS]"), @r"
    exit: 0
    --- stdout
    1 completed, 0 failed
    next for task 2: `gza review 2` queues a review of gza/2-second; `gza merge 2` merges it into main
    --- stderr
    ▶ task 2 (implement, command): second
    ✓ task 2 completed in [SECS]; branch gza/2-second (1 file changed, 1 insertion(+))
    ");

    // Both runs wrote their steps to the work log, with times and the worker's pid.
    let log = std::fs::read_to_string(p.path(".gza/logs/work.log")).unwrap();
    for id in [1, 2] {
        let lines: String = log
            .lines()
            .filter(|l| {
                l.contains(&format!("task{{id={id}}}")) || l.contains(&format!("task={id} "))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(positions(&lines).is_sorted(), "task {id}:\n{log}");
    }
    assert!(log.lines().all(|l| l.contains("work{pid=")), "{log}");
}

#[test]
fn rust_log_chooses_what_stderr_shows() {
    let mut p = project_with_an_agent();
    p.add(&["one"]);
    p.set_env("RUST_LOG", "gza_runner::run=info");
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    // The steps of gza_runner::run, and not the claim, which gza_runner itself traces.
    assert!(run.stderr.contains(" agent started"), "{run}");
    assert!(!run.stderr.contains(" claimed"), "{run}");
}

#[test]
fn a_hook_logs_to_stderr_only_when_rust_log_asks_and_its_answer_is_unchanged() {
    let mut p = TestProject::in_git_repo();
    p.use_model();
    p.ok(&["learnings", "add", "Run the linter before every commit"]);
    // Each call in a session of its own: a session is given a learning once.
    let hook = |p: &TestProject, session: &str| {
        let input = json!({"hook_event_name": "UserPromptSubmit", "session_id": session,
            "cwd": p.root(), "prompt": "run the linter before the commit"});
        let mut child = p
            .command(&["hook", "user-prompt-submit"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.to_string().as_bytes()).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (answer, stderr) = hook(&p, "s1");
    assert!(answer.contains("Run the linter"), "{answer}");
    assert_eq!(stderr, "", "nothing on stderr by default");
    p.set_env("RUST_LOG", "debug");
    let (traced_answer, traced) = hook(&p, "s2");
    assert!(traced.contains("hook handled"), "{traced}");
    assert!(traced.contains("answered=true"), "{traced}");
    assert_eq!(traced_answer, answer, "the answer on stdout is the same");
}

#[test]
fn double_verbose_adds_the_git_commands_and_their_exits() {
    let p = project_with_an_agent();
    p.add(&["first"]);
    let run = p.run(&["-v", "work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains(" git "), "-v shows steps only:\n{run}");
    p.add(&["second"]);
    let run = p.run(&["-vv", "work"]);
    assert_eq!(run.code, 0, "{run}");
    // With its target, and with the exit status and time of each command.
    let git =
        regex::Regex::new(r"DEBUG .*gza_core::git: git worktree add .*exit=0 ms=\d+").unwrap();
    assert!(git.is_match(&run.stderr), "{}", run.stderr);
    // -vv in the work log too.
    let log = std::fs::read_to_string(p.path(".gza/logs/work.log")).unwrap();
    assert!(log.contains("git worktree add"), "{log}");
}

#[test]
fn a_work_log_past_its_bound_is_moved_aside_and_a_new_one_started() {
    let p = project_with_an_agent();
    std::fs::create_dir_all(p.path(".gza/logs")).unwrap();
    let old = "an old line\n".repeat(800_000); // 9.6 MB, past the 8 MiB bound
    std::fs::write(p.path(".gza/logs/work.log"), &old).unwrap();
    p.add(&["first"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let kept = std::fs::read_to_string(p.path(".gza/logs/work.log.1")).unwrap();
    assert_eq!(kept, old, "the old log is kept whole, once");
    let log = std::fs::read_to_string(p.path(".gza/logs/work.log")).unwrap();
    assert!(!log.contains("an old line"), "{log}");
    assert!(log.contains(" recorded"), "{log}");
}
