//! `gza ab`: the same tasks run from one base commit with learnings and without, each run in its
//! own worktree, judged by the task's outcome and the verify command, reported per arm with 95 %
//! intervals and the learnings given to the runs that differed. The agent is scripted: it does
//! the task right only when its prompt carries a given learning, so the arms must differ.

use insta::assert_snapshot;

use crate::support::project::{Run, TestProject, wait_until};

/// The learning that makes the difference.
const LEARNING: &str = "Always leave a fixed.txt marker file at the repository root";

/// Succeeds (writes fixed.txt, which the verify checks) only when the prompt carries the
/// learning; otherwise it gives up and exits 1. Every prompt is kept in the scratch directory.
/// While `$SCRATCH/block` exists the first run waits there (for a Ctrl-C).
const AGENT: &str = r#"prompt=$(cat)
printf '%s' "$prompt" > "$SCRATCH/prompt-$GZA_TASK_ID.txt"
if [ -f "$SCRATCH/block" ]; then touch "$SCRATCH/started"; rm -f "$SCRATCH/block"; sleep 60; fi
case "$prompt" in
  *"fixed.txt marker file"*)
    echo fixed > fixed.txt
    echo 'Left the marker file' ;;
  *)
    echo 'I do not know what the checks want'
    exit 1 ;;
esac
"#;

/// The project's checks: fixed.txt must be there.
const CHECK: &str = r#"test -f fixed.txt || { echo 'FAIL: fixed.txt is missing'; exit 3; }"#;

fn project(verify: bool) -> TestProject {
    let p = TestProject::in_git_repo();
    let script = format!(
        "SCRATCH={}\n{AGENT}",
        serde_json::to_string(&p.scratch().to_string_lossy()).unwrap()
    );
    let extra = if verify {
        format!("verify: {}\n", serde_json::to_string(CHECK).unwrap())
    } else {
        String::new()
    };
    p.command_agent(&script, &extra);
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    p.ok(&["learnings", "add", LEARNING]);
    p
}

/// What a person sees, with commits, durations and times made stable.
fn shown(p: &TestProject, text: &str) -> String {
    let mut text = text.replace(&p.root().display().to_string(), "[PROJECT]");
    for line in p.git(&["rev-list", "--all"]).lines() {
        text = text
            .replace(line, "[COMMIT]")
            .replace(&line[..10], "[COMMIT]");
    }
    let secs = regex::Regex::new(r"\b\d+(\.\d)?(m \d+)?s\b").unwrap();
    let text = secs.replace_all(&text, "[SECS]").into_owned();
    // A paired difference of times goes either way.
    let text = text
        .replace("+[SECS]", "±[SECS]")
        .replace("−[SECS]", "±[SECS]");
    crate::support::project::normalize_times(&text)
}

fn credit(p: &TestProject) -> (i64, i64) {
    let c = p.json(&["learnings", "show", "L1", "--json"])["credit"].clone();
    (
        c["helpful"].as_i64().unwrap(),
        c["harmful"].as_i64().unwrap(),
    )
}

fn count(p: &TestProject, sql: &str) -> i64 {
    p.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn with_learnings_beats_without_and_the_differing_runs_name_the_learning() {
    let p = project(true);
    let source = p.add(&["Make the project's checks pass"]);
    let main_before = p.git(&["rev-parse", "main"]);
    let credit_before = credit(&p);
    let stats_before = p.json(&["stats", "--json"]);

    let run = p.run(&["ab", &source.to_string(), "--repeat", "2"]);
    assert_eq!(run.code, 0, "{run}");
    assert_snapshot!("ab_report", shown(&p, &run.stdout));
    assert!(
        run.stderr
            .contains("A/B experiment 1: 1 task × 2 rounds × 2 arms from ")
            && run
                .stderr
                .contains("in group ab-1; judged by verify: test -f fixed.txt"),
        "{run}"
    );

    // Four runs, each a task of its own in group ab-1, each in its own worktree and branch,
    // all from the commit HEAD was on; the "with" runs were given the learning, the others
    // nothing at all.
    let runs = p.json(&["history", "-g", "ab-1", "--json"]);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 4, "{runs:?}");
    let mut worktrees = Vec::new();
    for t in runs {
        let id = t["id"].as_i64().unwrap();
        let task = p.json(&["show", &id.to_string(), "--json"]);
        assert_eq!(task["base_commit"].as_str().unwrap(), main_before.trim());
        worktrees.push(task["worktree"].as_str().unwrap().to_string());
        let prompt = std::fs::read_to_string(p.scratch().join(format!("prompt-{id}.txt"))).unwrap();
        let with = !task["skip_learnings"].as_bool().unwrap();
        assert_eq!(prompt.contains(LEARNING), with, "task {id}: {prompt}");
        assert_eq!(
            task["status"].as_str().unwrap(),
            if with { "completed" } else { "failed" }
        );
    }
    worktrees.sort();
    worktrees.dedup();
    assert_eq!(worktrees.len(), 4, "{worktrees:?}");

    // An experiment trains nothing and merges nothing.
    assert_eq!(credit(&p), credit_before);
    assert_eq!(
        count(
            &p,
            "SELECT COUNT(*) FROM task_credits WHERE task_id IN (SELECT task_id FROM ab_runs)"
        ),
        0
    );
    let outcomes = p.json(&["learnings", "stats", "--json"])["outcomes"].clone();
    assert_eq!(outcomes["base_rate"]["helpful"], 0, "{outcomes}");
    assert_eq!(outcomes["base_rate"]["harmful"], 0, "{outcomes}");
    // Nor do its runs count as observed usage (the experiment measures them).
    assert_eq!(outcomes["measures"]["tasks"], 0, "{outcomes}");
    // Nor in `gza stats`' task counts and totals: they are shown apart, as what they cost.
    let stats = p.json(&["stats", "--json"]);
    assert_eq!(stats["total"], stats_before["total"], "{stats}");
    assert_eq!(stats["by_status"], stats_before["by_status"], "{stats}");
    assert_eq!(stats["ab_runs"]["runs"], 4, "{stats}");
    assert!(stats_before.get("ab_runs").is_none(), "{stats_before}");
    let text = p.ok(&["stats"]);
    assert!(text.contains("A/B runs (not counted above)"), "{text}");
    // Nor as the learning's injections in `learnings show`.
    let shown_l1 = p.json(&["learnings", "show", "L1", "--json"]);
    assert_eq!(shown_l1["injected"], 0, "{shown_l1}");
    assert_eq!(shown_l1["injected_in_ab_runs"], 2, "{shown_l1}");
    // And `learnings stats` counts as `show` does, the experiment's apart (on main its most
    // injected said "L1 2×" beside show's "Injected 0 times").
    let stats_l = p.json(&["learnings", "stats", "--json"]);
    let most = &stats_l["most_injected"][0];
    assert_eq!(
        (&most["id"], &most["injected"]),
        (&"L1".into(), &0.into()),
        "{stats_l}"
    );
    assert_eq!(most["injected_in_ab_runs"], 2, "{stats_l}");
    assert_eq!(stats_l["totals"]["never_injected"], 1, "{stats_l}");
    assert_eq!(stats_l["totals"]["injections_in_ab_runs"], 2, "{stats_l}");
    let text = p.ok(&["learnings", "stats"]);
    assert!(
        text.contains("2 of them in A/B runs (`gza ab`): experiments, counted apart")
            && text.contains("L1       0×  Always leave a fixed.txt marker file at the repository root (and 2 in A/B runs)"),
        "{text}"
    );
    assert!(
        p.ok(&["learnings", "show", "L1"])
            .contains("Injected     0 times (and 2 in A/B runs, counted apart: experiments)"),
        "show"
    );
    assert_eq!(p.git(&["rev-parse", "main"]), main_before);
    assert!(!p.path("fixed.txt").exists());
    assert_eq!(
        count(&p, "SELECT COUNT(*) FROM tasks WHERE merged_at IS NOT NULL"),
        0
    );
    // The experiment's branches are not work waiting to be merged.
    let unmerged = p.ok(&["unmerged"]);
    assert!(!unmerged.contains("Make the project"), "{unmerged}");

    // The report again, as it stands, and as JSON.
    assert_eq!(
        shown(&p, &p.ok(&["ab", "--show", "1"])),
        shown(&p, &run.stdout)
    );
    let json = p.json(&["ab", "--show", "1", "--json"]);
    assert_eq!(json["with"]["runs"], 2);
    assert_eq!(json["with"]["success"]["rate"], 1.0);
    assert_eq!(json["without"]["success"]["rate"], 0.0);
    assert_eq!(json["with"]["verify_passed"]["successes"], 2);
    assert_eq!(json["without"]["verify_passed"]["successes"], 0);
    assert_eq!(json["differed"].as_array().unwrap().len(), 2);
    assert_eq!(json["differed"][0]["learnings"][0]["id"], "L1");
    assert_eq!(json["differed"][0]["learnings"][0]["text"], LEARNING);
    assert_eq!(json["left"], 0);
    // Two pairs both won by "with": a difference of paired proportions that stays within
    // ±100 points and is wide with so few pairs (Newcombe: +100, +16 to +100), never the
    // "+100 (+100 to +100)" Student's t gave 0/1 differences.
    for rate in ["success", "verify_passed"] {
        let d = &json["difference"][rate];
        assert_eq!(d["mean"], 1.0, "{d}");
        assert_eq!(d["high"], 1.0, "{d}");
        let low = d["low"].as_f64().unwrap();
        assert!((0.0..0.5).contains(&low), "{d}");
        assert_eq!((&d["n"], &d["first_only"]), (&2.into(), &2.into()), "{d}");
    }
    let all = json["runs"].as_array().unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(
        (
            &all[0]["item"],
            &all[0]["round"],
            &all[0]["arm"],
            &all[0]["status"]
        ),
        (&1.into(), &1.into(), &"with".into(), &"completed".into())
    );
    assert_eq!(all[1]["failure_reason"], "AGENT_EXIT");
    assert_eq!(all[1]["verified"], "failed");
    // A run's change is its branch since the base, as for any task.
    let with_run = all[0]["task"].as_i64().unwrap().to_string();
    let diff = p.ok(&["diff", &with_run]);
    assert!(diff.contains("+++ b/fixed.txt"), "{diff}");
}

#[test]
fn a_task_file_runs_every_task_repeated_and_each_run_starts_from_the_base_commit() {
    let p = project(false);
    let base = p.git(&["rev-parse", "HEAD"]).trim().to_string();
    // A later commit: the runs must not see it.
    std::fs::write(p.path("later.txt"), "later\n").unwrap();
    p.git(&["add", "later.txt"]);
    p.git(&["commit", "--quiet", "-m", "later"]);
    std::fs::write(
        p.scratch().join("tasks.yaml"),
        "tasks:\n  - prompt: Make the project's checks pass\n  - prompt: Tidy the README\n",
    )
    .unwrap();
    let file = p.scratch().join("tasks.yaml");
    let run = p.run(&[
        "ab",
        &file.to_string_lossy(),
        "--repeat",
        "3",
        "--no-verify",
        "--base",
        &base,
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert_snapshot!("ab_report_no_verify", shown(&p, &run.stdout));
    let json = p.json(&["ab", "--show", "1", "--json"]);
    assert_eq!(json["tasks"], 2);
    assert_eq!(json["experiment"]["repeats"], 3);
    assert_eq!(json["with"]["runs"], 6);
    assert_eq!(json["without"]["runs"], 6);
    assert_eq!(json["with"]["verify_passed"], serde_json::Value::Null);
    assert_eq!(json["pairs_with_better"], 6);
    for id in 1..=12 {
        let task = p.json(&["show", &id.to_string(), "--json"]);
        assert_eq!(task["base_commit"], base.as_str(), "task {id}");
        let worktree = task["worktree"].as_str().unwrap();
        assert!(
            !std::path::Path::new(worktree).join("later.txt").exists(),
            "task {id} saw a commit after the base"
        );
    }
    // The arms alternate which runs first, round by round.
    let db = p.db();
    let arms: Vec<String> = db
        .prepare("SELECT arm FROM ab_runs WHERE item = 0 ORDER BY task_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        arms,
        ["with", "without", "without", "with", "with", "without"]
    );
}

#[test]
fn bad_input_gets_one_line_saying_what_to_do() {
    let p = project(true);
    p.add(&["Make the project's checks pass"]);
    let review = p.add(&["--type", "explore", "Look around"]);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![], "give the tasks to run"),
        (vec!["99".into()], "no task with id 99"),
        (vec!["nonsense".into()], "neither a task id nor a file"),
        (
            vec![review.to_string()],
            "is of type explore; gza ab runs implement tasks",
        ),
        (vec!["missing.yaml".into()], "does not exist"),
        (
            vec!["1".into(), "1".into()],
            "task 1 is given twice; each task is run once per arm and round",
        ),
        (vec!["--resume".into(), "5".into()], "no A/B experiment 5"),
        (vec!["--show".into(), "5".into()], "no A/B experiment 5"),
        (
            vec!["1".into(), "--repeat".into(), "0".into()],
            "--repeat must be 1 or more",
        ),
        (
            vec!["1".into(), "--base".into(), "no-such-branch".into()],
            "--base no-such-branch names no commit here",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["ab"];
        all.extend(args.iter().map(String::as_str));
        let error = p.user_error(&all);
        assert!(error.contains(expected), "gza {all:?}: {error}");
    }
    let malformed = p.scratch().join("bad.yaml");
    std::fs::write(&malformed, "tasks: [unclosed\n").unwrap();
    let error = p.user_error(&["ab", &malformed.to_string_lossy()]);
    assert!(error.contains("bad.yaml:"), "{error}");
    std::fs::write(&malformed, "tasks: []\n").unwrap();
    let error = p.user_error(&["ab", &malformed.to_string_lossy()]);
    assert!(error.contains("the file has no tasks"), "{error}");
    std::fs::write(&malformed, "tasks:\n  - prompt: one\n  - prompt: one\n").unwrap();
    let error = p.user_error(&["ab", &malformed.to_string_lossy()]);
    assert!(
        error.contains("entry 2 repeats an earlier entry's prompt"),
        "{error}"
    );
    std::fs::write(
        &malformed,
        "tasks:\n  - prompt: one\n  - prompt: two\n    depends_on: 1\n",
    )
    .unwrap();
    let error = p.user_error(&["ab", &malformed.to_string_lossy()]);
    assert!(
        error.contains("entry 2 depends on another entry"),
        "{error}"
    );
    // A task file that is a device or a FIFO is refused at once (it blocked forever).
    let error = p.user_error_within(20, &["ab", "/dev/zero", "--no-verify"], None);
    assert!(
        error.contains("/dev/zero is a device, not a regular file"),
        "{error}"
    );
    let fifo = p.scratch().join("fifo.yaml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let error = p.user_error_within(20, &["ab", &fifo.to_string_lossy()], None);
    assert!(error.contains("is a FIFO (named pipe)"), "{error}");
    // Nothing was stored by any of them.
    assert_eq!(count(&p, "SELECT COUNT(*) FROM ab_experiments"), 0);
    assert_eq!(count(&p, "SELECT COUNT(*) FROM tasks"), 2);

    // An agent that cannot be started: refused before anything is stored.
    let broken = TestProject::in_git_repo();
    broken.config(&format!(
        "provider: command\nproviders:\n  command:\n    command: [/nonexistent/agent]\nverify: {}\n",
        serde_json::to_string(CHECK).unwrap()
    ));
    broken.add(&["Make the project's checks pass"]);
    let error = broken.user_error(&["ab", "1"]);
    assert!(
        error.contains("agent binary `/nonexistent/agent` not found"),
        "{error}"
    );
    assert_eq!(count(&broken, "SELECT COUNT(*) FROM ab_experiments"), 0);

    // Without a verify command: say how to set one, or to go without.
    let p = project(false);
    p.add(&["Make the project's checks pass"]);
    let error = p.user_error(&["ab", "1"]);
    assert!(
        error.contains("no verify command: set `verify:` in gza.yaml")
            && error.contains("gza ab --no-verify"),
        "{error}"
    );
}

#[test]
fn ctrl_c_leaves_the_runs_stored_out_of_the_queue_and_resume_finishes_them() {
    let p = project(true);
    let file = p.scratch().join("tasks.yaml");
    std::fs::write(
        &file,
        "tasks:\n  - prompt: Make the project's checks pass\n",
    )
    .unwrap();
    std::fs::write(p.scratch().join("block"), "").unwrap();
    let child = p.spawn(&["ab", &file.to_string_lossy(), "--repeat", "2"]);
    wait_until(60, "the first run's agent to start", || {
        p.scratch().join("started").exists()
    });
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run: Run = p.finish(child.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run}");
    assert!(
        run.stderr.contains(
            "interrupted: 4 runs of experiment 1 not finished or not judged; `gza ab --resume 1` runs and judges them"
        ),
        "{run}"
    );
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "KILLED");
    // The runs left wait for the experiment: `gza next` and `gza work` do not take them.
    let next = p.ok(&["next"]);
    assert!(next.contains("No pending tasks"), "{next}");
    let work = p.ok(&["work"]);
    assert!(work.contains("No tasks ready to run"), "{work}");
    assert_eq!(p.task_field::<String>(2, "status"), "pending");

    let resumed = p.run(&["ab", "--resume", "1"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    let json = p.json(&["ab", "--show", "1", "--json"]);
    assert_eq!(json["left"], 0);
    assert_eq!(json["with"]["runs"], 2);
    assert_eq!(json["without"]["runs"], 2);
    assert_eq!(json["with"]["success"]["successes"], 2);
    assert_eq!(json["without"]["success"]["successes"], 0);
    // The interrupted run was replaced by a new task; the killed one stays in the history.
    let replaced: i64 = count(
        &p,
        "SELECT task_id FROM ab_runs WHERE item = 0 AND round = 1 AND arm = 'with'",
    );
    assert_eq!(replaced, 5);
    assert_eq!(
        p.json(&["history", "-g", "ab-1", "--json"])
            .as_array()
            .unwrap()
            .len(),
        5
    );
    // A second resume has nothing left to run.
    let again = p.run(&["ab", "--resume", "1"]);
    assert_eq!(again.code, 0, "{again}");
    assert_eq!(count(&p, "SELECT COUNT(*) FROM tasks"), 5);
}

/// With the real Claude Code CLI against a fake Anthropic API: the learning reaches the model's
/// request in the run with learnings and not in the other, and the report's turns, tokens and
/// cost are the agents' own figures.
#[test]
fn with_claude_code_the_learning_reaches_only_the_with_arms_requests() {
    use crate::support::claude::claude_bin;
    use crate::support::fake_anthropic::{FakeAnthropic, Reply};
    let claude = claude_bin().expect("claude_bin panics when the CLI is missing");
    let server = FakeAnthropic::start(Vec::new());
    let mut p = TestProject::in_git_repo();
    p.config(&format!(
        "providers:\n  claude:\n    path: {}\nverify: {}\n",
        claude.display(),
        serde_json::to_string(CHECK).unwrap()
    ));
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    for (k, v) in server.claude_env() {
        p.set_env(k, &v);
    }
    p.set_env("CLAUDE_CODE_MAX_RETRIES", "0");
    p.ok(&["learnings", "add", LEARNING]);
    // Run 1 has learnings (the first round starts with that arm) and leaves the marker; run 2
    // has none and only answers.
    server.push(Reply::write_file(
        p.path(".gza/worktrees/1-fix-the-checks/fixed.txt")
            .to_string_lossy(),
        "fixed\n",
    ));
    server.push(Reply::text("Left the marker file."));
    server.push(Reply::text("I looked; nothing seems needed."));
    let file = p.scratch().join("tasks.yaml");
    std::fs::write(&file, "tasks:\n  - prompt: Fix the checks\n").unwrap();
    let run = p.run(&["ab", &file.to_string_lossy()]);
    assert_eq!(run.code, 0, "{run}");

    let requests = server.message_requests();
    assert_eq!(requests.len(), 3, "{run}");
    assert!(requests[0].all_text().contains(LEARNING));
    assert!(requests[0].all_text().contains("Fix the checks"));
    assert!(!requests[2].all_text().contains(LEARNING));
    assert!(requests[2].all_text().contains("Fix the checks"));

    let json = p.json(&["ab", "--show", "1", "--json"]);
    for arm in ["with", "without"] {
        assert_eq!(json[arm]["success"]["successes"], 1, "{json}");
        let task = json["differed"][0][arm]["task"].as_i64().unwrap();
        let t = p.json(&["show", &task.to_string(), "--json"]);
        assert_eq!(json[arm]["turns"]["mean"], t["num_turns"].as_f64().unwrap());
        assert_eq!(json[arm]["cost_usd"]["mean"], t["cost_usd"]);
        assert!(t["cost_usd"].as_f64().unwrap() > 0.0);
        let tokens = t["input_tokens"].as_i64().unwrap() + t["output_tokens"].as_i64().unwrap();
        assert_eq!(json[arm]["tokens"]["mean"], tokens as f64);
    }
    assert_eq!(json["with"]["verify_passed"]["successes"], 1);
    assert_eq!(json["without"]["verify_passed"]["successes"], 0);
    assert_eq!(json["differed"][0]["learnings"][0]["text"], LEARNING);
    let report = p.ok(&["ab", "--show", "1"]);
    assert!(report.contains("\ncost "), "{report}");
    assert!(!report.contains("\ncost           -"), "{report}");
}

/// The verify command that judges the runs is the person's: a cloned gza.yaml's runs nothing,
/// and no experiment starts, until it is trusted.
#[test]
fn a_cloned_verify_command_judges_no_experiment_until_trusted() {
    let p = project(false);
    p.add(&["Make the project's checks pass"]);
    let marker = p.scratch().join("verify-ran");
    let yaml = format!(
        "{}verify: \"touch {}\"\n",
        std::fs::read_to_string(p.path("gza.yaml")).unwrap(),
        marker.display()
    );
    p.config_untrusted(&yaml);
    let run = p.run(&["ab", "1"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(
            "gza.yaml sets verify, which gza ignores until you trust it: `gza trust` shows it; or judge the runs by their outcome alone with `gza ab --no-verify`"
        ),
        "{run}"
    );
    assert!(!marker.exists(), "the untrusted command ran");
    assert_eq!(count(&p, "SELECT COUNT(*) FROM ab_experiments"), 0);
    p.ok(&["trust", "--yes"]);
    let run = p.run(&["ab", "1"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        marker.exists(),
        "the trusted verify command judged the runs"
    );
}

/// With no learning for the "with" arm to be given, the report says the arms ran alike.
#[test]
fn an_experiment_without_any_learning_given_says_it_measures_nothing() {
    let p = TestProject::in_git_repo();
    p.command_agent("cat > /dev/null; echo done\n", "");
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    p.add(&["Make the project's checks pass"]);
    let out = p.ok(&["ab", "1", "--no-verify"]);
    assert!(
        out.contains(
            "Learnings were given to 0 of the 1 runs with learnings: both arms ran alike, so this measures nothing"
        ),
        "{out}"
    );
    assert!(out.contains("alike in 1"), "{out}");
}
