//! Learning from outcomes through the binary: every task a learning was given credits it with how
//! the task ended (completed or why it failed, the review's verdict, merged, reverted); ranking
//! weighs learnings by it; learnings whose tasks keep going wrong are flagged with the evidence;
//! people rate learnings; `learnings stats` reports seed 000's measures.

use insta::assert_snapshot;

use crate::support::project::TestProject;

/// An agent for the review loop: implements (hello.txt), improves (fixed.txt), and reviews,
/// approving only when fixed.txt is in its checkout.
fn loop_agent(p: &TestProject) {
    p.command_agent(
        r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*)
    if [ -f fixed.txt ]; then
      printf '## Verdict\n\nAPPROVED\n'
    else
      printf '## Verdict\n\nCHANGES_REQUESTED\n'
    fi ;;
  "Complete this task: Improve task"*)
    echo fixed > fixed.txt
    echo 'Added fixed.txt' ;;
  *)
    echo hello > hello.txt
    echo 'Added hello.txt' ;;
esac
"#,
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
}

/// Replace commit ids (full or the 10-character form gza prints) with `[COMMIT]`.
fn without_commits(p: &TestProject, text: &str) -> String {
    let mut out = text.to_string();
    for line in p.git(&["rev-list", "--all"]).lines() {
        out = out
            .replace(line, "[COMMIT]")
            .replace(&line[..10], "[COMMIT]");
    }
    crate::support::project::normalize_times(&out)
}

/// Rate as someone: gza's runs get no git identity and no OS user otherwise.
fn as_a_person(p: &mut TestProject) {
    p.set_env("USER", "tester");
}

fn credit(p: &TestProject, id: &str) -> serde_json::Value {
    p.json(&["learnings", "show", id, "--json"])["credit"].clone()
}

#[test]
fn a_task_credits_its_learnings_with_how_it_ended_review_merge_and_revert_included() {
    let mut p = TestProject::in_git_repo();
    as_a_person(&mut p);
    loop_agent(&p);
    p.ok(&["learnings", "add", "Keep greeting files in plain ASCII"]);
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    // Completed: helpful.
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(1), Some(0)),
        "{c}"
    );

    // The review requests changes: the task it reviewed becomes harmful. The review itself
    // is credited nothing (it was given the learning too; its verdict is its reviewed task's
    // credit, and crediting its completion as helpful cancelled the debit).
    p.ok(&["review", "1"]);
    p.ok(&["work"]);
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(0), Some(1)),
        "{c}"
    );
    let tasks = c["tasks"].as_array().unwrap();
    assert_eq!(tasks[0]["task"], 2);
    assert_eq!(tasks[0]["credit"], "neutral");
    assert_eq!(tasks[1]["task"], 1);
    assert_eq!(tasks[1]["credit"], "harmful");
    assert_eq!(tasks[1]["verdict"], "CHANGES_REQUESTED");
    assert_eq!(tasks[1]["review_task"], 2);

    // Improved and approved, then merged: the improvement is helpful and both are merged
    // (the approving review is credited nothing either).
    p.ok(&["improve", "2"]);
    p.ok(&["work"]);
    p.ok(&["review", "3"]);
    p.ok(&["work"]);
    assert_eq!(p.task_field::<String>(4, "review_verdict"), "APPROVED");
    p.ok(&["merge", "1", "--squash"]);
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(1), Some(1)),
        "{c}"
    );
    assert_eq!(c["tasks"][3]["merged"], true, "{c}");

    // Someone reverts the merged work: the next update finds it, and the branch's tasks are
    // harmful now; a second update changes nothing.
    p.git(&["revert", "--no-edit", "HEAD"]);
    p.ok(&["learnings", "update"]);
    p.ok(&["learnings", "update"]);
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(0), Some(2)),
        "{c}"
    );
    assert_snapshot!(
        "outcomes_show_credit",
        without_commits(&p, &p.ok(&["learnings", "show", "L1"]))
            .lines()
            .filter(|l| !l.starts_with("    [TIME]  rated"))
            .skip_while(|l| !l.starts_with("  Injected"))
            .take_while(|l| !l.starts_with("  Created"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // A person's down rating tips it over: flagged in stats and in review, with the evidence.
    p.ok(&[
        "learnings",
        "rate",
        "L1",
        "down",
        "--why",
        "ASCII is not the problem here",
    ]);
    // Up to the regeneration's figures (its time in milliseconds varies from run to run).
    let stats = without_commits(&p, &p.ok(&["learnings", "stats"]))
        .lines()
        .take_while(|l| !l.starts_with("Tasks extracted:"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_snapshot!("outcomes_stats", stats);
    let review = p.json(&["learnings", "review", "--json"]);
    let flagged = &review.as_array().unwrap()[0];
    assert_eq!(flagged["id"], "L1");
    assert_eq!(flagged["flag"]["harmful"], 2);
    assert_eq!(flagged["flag"]["rated_down"], 1);
    assert_eq!(flagged["flag"]["evidence"][0]["task"], 3);
    assert_eq!(
        flagged["flag"]["ratings"][0]["why"],
        "ASCII is not the problem here"
    );
}

/// A learning whose tasks all get CHANGES_REQUESTED is flagged in `stats` and `review` with the
/// verdicts as evidence: the reviews, given the same learning, are not credited as helpful (on
/// main they were: "3 helpful, 3 harmful", never flagged).
#[test]
fn a_learning_whose_tasks_keep_getting_changes_requested_is_flagged() {
    let p = TestProject::in_git_repo();
    loop_agent(&p);
    p.ok(&["learnings", "add", "Keep greeting files in plain ASCII"]);
    for i in 0..3 {
        let task = p.add(&[&format!("Add hello file {i}")]);
        p.ok(&["work"]);
        p.ok(&["review", &task.to_string()]);
        p.ok(&["work"]);
    }
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(0), Some(3)),
        "{c}"
    );
    let stats = p.ok(&["learnings", "stats"]);
    assert!(stats.contains("    review L1"), "{stats}");
    for (task, review) in [(1, 2), (3, 4), (5, 6)] {
        assert!(
            stats.contains(&format!(
                "      task {task}: completed, review CHANGES_REQUESTED (task {review})"
            )),
            "{stats}"
        );
    }
    let review = p.json(&["learnings", "review", "--json"]);
    let flagged = &review.as_array().unwrap()[0];
    assert_eq!(flagged["id"], "L1", "{review}");
    assert_eq!(flagged["flag"]["harmful"], 3, "{review}");
    assert_eq!(flagged["flag"]["helpful"], 0, "{review}");
    assert_eq!(
        flagged["flag"]["evidence"][0]["verdict"], "CHANGES_REQUESTED",
        "{review}"
    );
}

/// Two learnings that match "production deploys" equally; a task naming deploy_legacy.sh is
/// given only the first, and its agent fails when it is given it.
fn deploy_project() -> TestProject {
    let mut p = TestProject::new();
    as_a_person(&mut p);
    p.command_agent(
        "prompt=$(cat)\ncase \"$prompt\" in\n  *\"Run deploy_legacy.sh for production deploys\"*) echo 'it broke' >&2; sleep 30 ;;\nesac\necho done\n",
        "timeout_minutes: 0.01\nlearnings:\n  inject: relevant\n",
    );
    p.ok(&[
        "learnings",
        "add",
        "Run deploy_legacy.sh for production deploys",
    ]);
    p.ok(&[
        "learnings",
        "add",
        "Run deploy_modern.sh for production deploys",
    ]);
    p
}

fn search_ids(p: &TestProject, query: &str) -> Vec<String> {
    p.json(&["learnings", "search", query, "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ranking_weighs_outcomes_but_one_bad_task_buries_nothing() {
    let p = deploy_project();
    assert_eq!(
        search_ids(&p, "production deploys"),
        ["L1", "L2"],
        "a tie goes to the older"
    );
    p.add(&["--type", "explore", "Check what deploy_legacy.sh does"]);
    p.run(&["work"]);
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "TIMEOUT");
    // One failure: L1 drops below its twin, and is still found.
    assert_eq!(search_ids(&p, "production deploys"), ["L2", "L1"]);
    let c = credit(&p, "L1");
    assert_eq!(c["harmful"], 1);
    let factor = c["factor"].as_f64().unwrap();
    assert!((0.93..1.0).contains(&factor), "{factor}");
    assert_eq!(
        credit(&p, "L2")["factor"],
        1.0,
        "never given: no history, no change"
    );
    assert!(
        !p.ok(&["learnings", "stats"]).contains("    review L1"),
        "one failure is no pattern"
    );
    // Three in a row: flagged, with each task and how it ended.
    for _ in 0..2 {
        p.add(&["--type", "explore", "Check what deploy_legacy.sh does"]);
    }
    p.run(&["work", "--all"]);
    let stats = p.ok(&["learnings", "stats"]);
    assert!(
        stats.contains("review L1    Run deploy_legacy.sh for production dep… (given to 3 tasks that all failed: TIMEOUT); ranks ×0.87"),
        "{stats}"
    );
    for task in 1..=3 {
        assert!(
            stats.contains(&format!("      task {task}: TIMEOUT\n")),
            "{stats}"
        );
    }
    // People outweigh a few tasks: two up ratings lift it back above its twin.
    p.ok(&["learnings", "rate", "L1", "up"]);
    let out = p.ok(&[
        "learnings",
        "rate",
        "L1",
        "up",
        "--why",
        "the script is right; the tasks were not",
    ]);
    assert_snapshot!("outcomes_rate_up", out);
    assert_eq!(search_ids(&p, "production deploys"), ["L1", "L2"]);
    assert!(!p.ok(&["learnings", "stats"]).contains("    review L1"));
}

#[test]
fn tasks_stopped_by_a_person_or_the_machine_credit_nothing() {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho started\nsleep 30\n",
        "learnings:\n  inject: file\n",
    );
    p.ok(&["learnings", "add", "Keep the changelog sorted by date"]);
    p.add(&["--type", "explore", "Look at the changelog"]);
    let mut worker = p.spawn(&["work"]);
    crate::support::project::wait_until(20, "the task to start", || {
        p.db()
            .query_row("SELECT status FROM tasks WHERE id = 1", [], |r| {
                r.get::<String>(0)
            })
            .is_ok_and(|s| s == "in_progress")
    });
    p.ok(&["kill", "1"]);
    let _ = worker.wait();
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "KILLED");
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(0), Some(0)),
        "{c}"
    );
}

/// A person's rating is their standing word: the latest replaces their earlier one (five ups
/// count one), `clear` takes it back, and a standing down rating flags the learning with its why
/// and outweighs any record of tasks (on main one down after 6 helpful tasks ranked it ×0.95,
/// unflagged, and "rate up --why misclicked" after a down left it penalised).
#[test]
fn a_persons_latest_rating_stands_and_a_down_rating_flags_the_learning() {
    let mut p = TestProject::new();
    as_a_person(&mut p);
    p.command_agent("cat > /dev/null\necho done\n", "");
    p.ok(&["learnings", "add", "Keep the changelog sorted by date"]);
    for i in 0..6 {
        p.add(&["--type", "explore", &format!("look {i}")]);
    }
    p.run(&["work", "--all"]);
    assert_eq!(credit(&p, "L1")["helpful"], 6);
    for _ in 0..5 {
        p.ok(&["learnings", "rate", "L1", "up"]);
    }
    let c = credit(&p, "L1");
    assert_eq!(
        (&c["rated_up"], &c["rated_down"]),
        (&1.into(), &0.into()),
        "{c}"
    );

    let out = p.ok(&[
        "learnings",
        "rate",
        "L1",
        "down",
        "--why",
        "we moved off make",
    ]);
    assert!(
        out.contains("(0 up, 1 down, one per person;") && out.contains("flagged for review"),
        "{out}"
    );
    let c = credit(&p, "L1");
    assert_eq!(
        (&c["rated_up"], &c["rated_down"]),
        (&0.into(), &1.into()),
        "{c}"
    );
    let factor = c["factor"].as_f64().unwrap();
    assert!(
        factor <= 0.8,
        "a person's word outweighs 6 helpful tasks: {factor}"
    );
    let stats = p.ok(&["learnings", "stats"]);
    assert!(stats.contains("    review L1"), "{stats}");
    assert!(
        stats.contains("      rated down by tester: we moved off make"),
        "{stats}"
    );
    let review = p.json(&["learnings", "review", "--json"]);
    assert_eq!(review[0]["id"], "L1", "{review}");
    assert_eq!(
        review[0]["flag"]["ratings"][0]["why"], "we moved off make",
        "{review}"
    );

    // Misclicked: the up replaces the down, and it is not flagged or penalised any more.
    p.ok(&["learnings", "rate", "L1", "up", "--why", "misclicked"]);
    let c = credit(&p, "L1");
    assert_eq!(
        (&c["rated_up"], &c["rated_down"]),
        (&1.into(), &0.into()),
        "{c}"
    );
    assert!(c["factor"].as_f64().unwrap() >= 1.0, "{c}");
    assert!(!p.ok(&["learnings", "stats"]).contains("    review L1"));
    // Cleared: no rating stands; the history keeps every one.
    p.ok(&["learnings", "rate", "L1", "clear"]);
    let c = credit(&p, "L1");
    assert_eq!(
        (&c["rated_up"], &c["rated_down"]),
        (&0.into(), &0.into()),
        "{c}"
    );
    assert_eq!(c["ratings"].as_array().unwrap().len(), 0, "{c}");
    let show = p.ok(&["learnings", "show", "L1"]);
    assert!(
        show.contains("rated down: we moved off make") && show.contains("rating cleared"),
        "{show}"
    );
}

#[test]
fn rating_checks_its_arguments_and_redacts_the_reason() {
    let mut p = TestProject::new();
    p.ok(&["learnings", "add", "Run the linter before pushing"]);
    // No git identity and no OS user: refused, since every such rating was one shared vote
    // (stored as rater '', so one nameless process could take back another's down rating).
    let before = p.dump();
    for rating in ["up", "down", "clear"] {
        let err = p.user_error(&["learnings", "rate", "L1", rating]);
        assert!(
            err.contains("no identity to rate as") && err.contains("git config user.email"),
            "{err}"
        );
    }
    assert_eq!(p.dump(), before);
    as_a_person(&mut p);
    assert_snapshot!(
        "outcomes_rate_unknown",
        p.user_error(&["learnings", "rate", "L9", "up"])
    );
    let run = p.run(&["learnings", "rate", "L1", "sideways"]);
    assert_eq!(run.code, 2, "{run}");
    p.user_error(&["learnings", "rate", "L1", "down", "--why", "  "]);
    p.ok(&[
        "learnings",
        "rate",
        "L1",
        "down",
        "--why",
        "breaks with GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ]);
    let shown = p.ok(&["learnings", "show", "L1"]);
    assert!(
        !shown.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        "{shown}"
    );
    assert!(
        shown.contains("rated down: breaks with GITHUB_TOKEN="),
        "{shown}"
    );
}

#[test]
fn stats_report_injection_rate_usage_growth_and_feedback() {
    let p = TestProject::new();
    p.command_agent(
        "prompt=$(cat)\ncase \"$prompt\" in\n  *\"Run retry_flaky.py when network tests fail\"*) sleep 30 ;;\nesac\necho done\n",
        "timeout_minutes: 0.01\nlearnings:\n  inject: relevant\n",
    );
    p.ok(&[
        "learnings",
        "add",
        "Run retry_flaky.py when network tests fail",
    ]);
    // Two tasks given the learning (one fails), two given nothing (both complete).
    p.add(&[
        "--type",
        "explore",
        "Fix the network tests with retry_flaky.py",
    ]);
    p.add(&["--type", "explore", "Look at retry_flaky.py again"]);
    p.add(&["--type", "explore", "Write the release notes"]);
    p.add(&["--type", "explore", "Tidy the README"]);
    p.run(&["work", "--all"]);
    let json = p.json(&["learnings", "stats", "--json"]);
    let o = &json["outcomes"];
    assert_eq!(o["measures"]["tasks"], 4, "{o}");
    assert_eq!(o["measures"]["given"], 2, "{o}");
    assert_eq!(o["measures"]["given_harmful"], 2, "{o}");
    assert_eq!(o["measures"]["not_given_helpful"], 2, "{o}");
    assert_eq!(o["growth_per_week"], serde_json::json!([0, 0, 0, 1]));
    assert_eq!(o["base_rate"]["helpful"], 2);
    assert_eq!(o["base_rate"]["harmful"], 2);
    let text = p.ok(&["learnings", "stats"]);
    let measures: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Outcomes:"))
        .take(5)
        .collect();
    assert_snapshot!("outcomes_measures", measures.join("\n"));
}

/// A `Task-Id:` trailer is text a cloned repository can forge: commits in its history that
/// look like gza's own ("gza task 1: …", "Merge task 1: …") and their reverts, made before this
/// project's task 1 began, debit none of the learnings task 1 was given. A real revert of the
/// task's work, made after it, still does.
#[test]
fn forged_task_commits_and_reverts_in_a_cloned_history_debit_nothing() {
    let p = TestProject::in_git_repo();
    loop_agent(&p);
    // The repository as cloned: forged gza commits for tasks 1 and 2, and their reverts.
    for (file, message) in [
        ("a.txt", "gza task 1: forged\n\nTask-Id: 1"),
        ("b.txt", "Merge task 2: forged\n\nTask-Id: 2"),
    ] {
        std::fs::write(p.path(file), "x\n").unwrap();
        p.git(&["add", file]);
        p.git(&["commit", "--quiet", "-m", message]);
        p.git(&["revert", "--no-edit", "HEAD"]);
    }
    p.ok(&["learnings", "add", "Keep greeting files in plain ASCII"]);
    p.add(&["Add a hello file"]);
    p.add(&["Add another hello file"]);
    p.ok(&["work", "--all"]);
    p.ok(&["learnings", "update"]);
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(2), Some(0)),
        "forged reverts debited the learning: {c}"
    );
    // The real thing still counts: task 1's work merged, then reverted.
    p.ok(&["merge", "1", "--squash"]);
    p.git(&["revert", "--no-edit", "HEAD"]);
    p.ok(&["learnings", "update"]);
    let c = credit(&p, "L1");
    assert_eq!(
        (c["helpful"].as_i64(), c["harmful"].as_i64()),
        (Some(1), Some(1)),
        "{c}"
    );
}

/// Credits recorded before the rules changed (a review's own completion credited helpful, a
/// provider's AGENT_EXIT debited harmful) are stored counts, put right only when their task
/// happened to be credited again: migration V55 (PostgreSQL V25) derives every task's credit,
/// every learning's counts and the base rate again by today's rules. The old state is made here
/// as the old rules left it, and the migration run again over it.
#[test]
fn credits_recorded_under_the_old_rules_are_recomputed_by_the_migration() {
    let p = TestProject::in_git_repo();
    loop_agent(&p);
    p.ok(&["learnings", "add", "Keep greeting files in plain ASCII"]);
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    // The review requests changes: task 1 is harmful, the review (task 2) neutral.
    p.ok(&["review", "1"]);
    p.ok(&["work"]);
    // A provider failure (task 3): neutral.
    p.command_agent("cat > /dev/null\nexit 3\n", "");
    p.add(&["--type", "explore", "Look at the greeting files"]);
    p.run(&["work"]);
    assert_eq!(p.task_field::<String>(3, "failure_reason"), "AGENT_EXIT");
    let db = p.db();
    let given: i64 = db
        .query_row(
            "SELECT COUNT(DISTINCT task_id) FROM learning_injections WHERE learning_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(given, 3, "L1 was given to every task");
    let now = |p: &TestProject| {
        let c = credit(p, "L1");
        let base = p.json(&["learnings", "stats", "--json"])["outcomes"]["base_rate"].clone();
        (
            c["helpful"].as_i64(),
            c["harmful"].as_i64(),
            base["helpful"].as_i64(),
            base["harmful"].as_i64(),
        )
    };
    let today = now(&p);
    assert_eq!(today, (Some(0), Some(1), Some(0), Some(1)));

    // As the old rules credited them: the review helpful, the provider failure harmful.
    db.execute_batch(
        "UPDATE task_credits SET credit = 'helpful' WHERE task_id = 2; \
         UPDATE task_credits SET credit = 'harmful' WHERE task_id = 3; \
         UPDATE learning_credit SET helpful = helpful + 1, harmful = harmful + 1 WHERE learning_id = 1; \
         UPDATE credit_totals SET helpful = helpful + 1, harmful = harmful + 1 WHERE id = 1;",
    )
    .unwrap();
    assert_eq!(now(&p), (Some(1), Some(2), Some(1), Some(2)));
    let version = if db.is_postgres() { 25 } else { 55 };
    db.execute(
        "DELETE FROM refinery_schema_history WHERE version = ?1",
        [version],
    )
    .unwrap();
    drop(db);
    assert_eq!(now(&p), today, "recomputed by today's rules");
    let credits: Vec<String> = (1..=3)
        .map(|t| {
            p.db()
                .query_row(
                    "SELECT credit FROM task_credits WHERE task_id = ?1",
                    [t],
                    |r| r.get(0),
                )
                .unwrap()
        })
        .collect();
    assert_eq!(credits, ["harmful", "neutral", "neutral"]);
}

/// Stats in a project where no task was ever given a learning: the base rate's figures are
/// said to be the tasks counted for it (they read as credits to learnings: "3 helpful, 0
/// harmful of the tasks credited"), and no helpful or harmful credit is shown for learnings.
#[test]
fn stats_without_any_injection_show_no_credit_to_learnings() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho done\n", "");
    for i in 0..3 {
        p.add(&["--type", "explore", &format!("look {i}")]);
    }
    p.run(&["work", "--all"]);
    let stats = p.ok(&["learnings", "stats"]);
    assert!(
        stats.contains("from the finished tasks counted for it, with learnings or without (3 helpful, 0 harmful)"),
        "{stats}"
    );
    assert!(!stats.contains("of the tasks credited"), "{stats}");
    assert!(
        stats.contains("no finished task was given learnings, so none has credit yet"),
        "{stats}"
    );
    assert!(!stats.contains("of tasks given learnings"), "{stats}");
}

/// `p` (not yet initialized) as a git repository with a project and a command agent running
/// `script`.
fn with_agent(p: TestProject, script: &str) -> TestProject {
    p.git(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(p.path("README.md"), "# test repo\n").unwrap();
    p.ok(&["init"]);
    p.command_agent(script, "learnings:\n  extraction_provider: none\n");
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "initial"]);
    p
}

/// An agent whose output holds NUL bytes completes on both backends (PostgreSQL's text cannot
/// hold a NUL; it made the outcome unrecordable there), and both show the same: the NUL as
/// U+FFFD, in `gza show`, its JSON and `gza log`.
#[test]
fn an_agent_printing_nul_bytes_completes_and_reads_the_same_on_both_backends() {
    let agent = "cat > /dev/null\nprintf 'before\\000after\\n'\n";
    let mut seen = Vec::new();
    for p in [TestProject::empty_sqlite(), TestProject::empty_postgres()] {
        let p = with_agent(p, agent);
        let id = p.add(&["print a NUL"]);
        let run = p.run(&["work"]);
        assert_eq!(run.code, 0, "{run}");
        assert_eq!(p.task_field::<String>(id, "status"), "completed", "{run}");
        let json = p.json(&["show", &id.to_string(), "--json"]);
        assert_eq!(json["output"], "before\u{FFFD}after", "{json}");
        let show = p.ok(&["show", &id.to_string()]);
        assert!(show.contains("before\u{FFFD}after"), "{show}");
        let log = p.ok(&["log", &id.to_string()]);
        assert!(!log.contains('\0'), "{log}");
        let shown: Vec<String> = show
            .lines()
            .chain(log.lines())
            .filter(|l| l.contains("before"))
            .map(str::to_owned)
            .collect();
        assert!(!shown.is_empty(), "{show}\n{log}");
        seen.push((json["output"].clone(), shown));
    }
    assert_eq!(seen[0], seen[1], "both backends show the same");
}

/// Make the database refuse (`on`) or take again (`!on`) a task output holding "refuse me": a
/// write that fails for a reason other than a full disk, on either backend.
fn refuse_outputs(p: &TestProject, on: bool) {
    let db = p.db();
    let sql = match (db.is_postgres(), on) {
        (false, true) => {
            "CREATE TRIGGER refuse_output BEFORE UPDATE OF output ON tasks \
             WHEN NEW.output LIKE '%refuse me%' \
             BEGIN SELECT RAISE(ABORT, 'the test refuses this output'); END;"
        }
        (false, false) => "DROP TRIGGER refuse_output;",
        (true, true) => {
            "CREATE FUNCTION refuse_output() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN IF NEW.output LIKE '%refuse me%' THEN \
             RAISE EXCEPTION 'the test refuses this output'; END IF; RETURN NEW; END $$; \
             CREATE TRIGGER refuse_output BEFORE UPDATE ON tasks FOR EACH ROW \
             EXECUTE FUNCTION refuse_output();"
        }
        (true, false) => "DROP TRIGGER refuse_output ON tasks; DROP FUNCTION refuse_output();",
    };
    db.execute_batch(sql).unwrap();
}

/// A finished task whose outcome the database refuses is kept on disk, and the message says
/// what happened without blaming a full disk. The next `gza work` cannot record it either: the
/// file stays, the task stays in progress (never `WORKER_DIED`), and one line says so. Once the
/// cause is gone, the next `gza work` records it.
#[test]
fn a_kept_outcome_that_cannot_be_recorded_survives_the_next_work() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho 'refuse me'\n",
        "learnings:\n  extraction_provider: none\n",
    );
    let id = p.add(&["a task whose outcome is refused"]);
    let kept = p.path(&format!(".gza/logs/{id}.outcome.json"));
    refuse_outputs(&p, true);

    let first = p.run(&["work"]);
    assert_ne!(first.code, 0, "{first}");
    assert!(
        first.stderr.contains("its outcome could not be recorded")
            && first.stderr.contains("the test refuses this output")
            && first
                .stderr
                .contains(&format!("it is kept in .gza/logs/{id}.outcome.json")),
        "{first}"
    );
    assert!(!first.stderr.contains("free some space"), "{first}");
    assert!(kept.exists(), "{first}");

    let second = p.run(&["work"]);
    let text = format!("{}{}", second.stdout, second.stderr);
    let said: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("could not be recorded"))
        .collect();
    assert_eq!(said.len(), 1, "{second}");
    assert!(
        said[0].contains(&format!(".gza/logs/{id}.outcome.json"))
            && said[0].contains("the test refuses this output")
            && said[0].contains("the file stays")
            && !said[0].contains("free some space"),
        "{second}"
    );
    assert!(kept.exists(), "the kept outcome was deleted: {second}");
    assert_eq!(
        p.task_field::<String>(id, "status"),
        "in_progress",
        "{second}"
    );
    assert_eq!(p.task_field::<Option<String>>(id, "failure_reason"), None);

    refuse_outputs(&p, false);
    let third = p.run(&["work"]);
    assert_eq!(third.code, 0, "{third}");
    assert_eq!(p.task_field::<String>(id, "status"), "completed", "{third}");
    assert_eq!(
        p.task_field::<Option<String>>(id, "output").as_deref(),
        Some("refuse me")
    );
    assert!(!kept.exists(), "{third}");
}
