//! Regenerations under load and against a failing endpoint: every completed task is extracted
//! once in the end, a regeneration's extraction time is bounded, and a failing endpoint is
//! left alone for a while instead of being asked again at every regeneration.

use std::time::Duration;

use crate::support::fake_anthropic::{FakeAnthropic, Reply};
use crate::support::project::TestProject;

/// A project whose `command` agent runs `script`, extracting with the anthropic client from
/// `url`, with `learnings` settings `extra`.
fn extracting_project(url: &str, script: &str, extra: &str) -> TestProject {
    let mut p = TestProject::new();
    p.command_agent(
        script,
        &format!("learnings:\n  extraction_provider: anthropic\n  base_url: {url}\n{extra}"),
    );
    p.set_env("ANTHROPIC_API_KEY", "sk-ant-api03-TESTKEYTESTKEYTESTKEY");
    p
}

fn count(p: &TestProject, sql: &str) -> i64 {
    p.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn extracted(p: &TestProject) -> i64 {
    count(p, "SELECT COUNT(*) FROM learning_extractions")
}

fn counted(p: &TestProject) -> i64 {
    count(p, "SELECT tasks_since_regen FROM learnings_metadata")
}

/// How many extraction requests asked about the task whose prompt is `prompt`.
fn asked_about(server: &FakeAnthropic, prompt: &str) -> usize {
    let needle = format!("\n{prompt}\n</task>");
    server
        .message_requests()
        .iter()
        .filter(|r| r.all_text().contains(&needle))
        .count()
}

#[test]
fn a_slow_endpoint_under_parallel_workers_loses_no_task_to_the_counter() {
    let server = FakeAnthropic::start_with_default(
        Vec::new(),
        Reply::text("- [General] Slow answers still land").delayed(Duration::from_millis(700)),
    )
    .without_side_messages();
    let p = extracting_project(
        &server.url(),
        "cat > /dev/null\necho 'Tests pass.'\n",
        "  regenerate_every: 5\n",
    );
    for i in 1..=25 {
        p.add(&[&format!("task number {i}"), "--type", "explore"]);
    }
    p.ok(&["work", "--all", "--parallel", "4"]);
    assert_eq!(
        count(&p, "SELECT COUNT(*) FROM tasks WHERE status = 'completed'"),
        25
    );
    // Every completed task is extracted or still counted towards the next regeneration
    // (resetting the counter to 0 left about 20 tasks neither).
    let (done, left) = (extracted(&p), counted(&p));
    assert!(25 - done <= left, "{done} extracted, only {left} counted");
    // The next regeneration takes in every task still owed, beyond the 15-task window.
    let update = p.ok(&["learnings", "update"]);
    assert_eq!(
        extracted(&p),
        25,
        "{done} extracted and {left} counted after the run; update said:\n{update}\n{}",
        learnings_log(&p)
    );
    for i in 1..=25 {
        assert_eq!(
            asked_about(&server, &format!("task number {i}")),
            1,
            "task {i} is extracted exactly once"
        );
    }
}

#[test]
fn completions_during_a_threaded_regeneration_still_count() {
    // The first regeneration's five calls take 1.5 s each, one at a time: the remaining five
    // tasks complete while it runs.
    let slow =
        Reply::text("- [General] Slow answers still land").delayed(Duration::from_millis(1500));
    let server = FakeAnthropic::start_with_default(
        vec![slow; 5],
        Reply::text("- [General] Fast answers land too"),
    )
    .without_side_messages();
    let p = extracting_project(
        &server.url(),
        "cat > /dev/null\nsleep 0.2\necho 'Tests pass.'\n",
        "  regenerate_every: 5\n  concurrency: 1\n",
    );
    for i in 1..=10 {
        p.add(&[&format!("task number {i}"), "--type", "explore"]);
    }
    p.ok(&["work", "--all"]);
    let (done, left) = (extracted(&p), counted(&p));
    assert!(10 - done <= left, "{done} extracted, only {left} counted");
    p.ok(&["learnings", "update"]);
    assert_eq!(extracted(&p), 10);
    assert_eq!(
        server.message_requests().len(),
        10,
        "no task is asked twice"
    );
}

fn learnings_log(p: &TestProject) -> String {
    std::fs::read_to_string(p.path(".gza/logs/learnings.log")).unwrap_or_default()
}

#[test]
fn a_regeneration_starts_no_extraction_call_after_its_deadline() {
    // Each call takes 3 s and the regeneration may start calls for 2 s: without the deadline
    // the six tasks took six calls (18 s) before `gza work` could exit.
    let server = FakeAnthropic::start_with_default(
        Vec::new(),
        Reply::text("- [General] Slow answers still land").delayed(Duration::from_secs(3)),
    )
    .without_side_messages();
    let p = extracting_project(
        &server.url(),
        "cat > /dev/null\necho 'Tests pass.'\n",
        "  regenerate_every: 6\n  concurrency: 1\n  timeout_seconds: 30\n  extraction_deadline_seconds: 2\n",
    );
    for i in 1..=6 {
        p.add(&[&format!("task number {i}"), "--type", "explore"]);
    }
    let run = p.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    let calls = server.message_requests().len();
    assert!(calls <= 1, "{calls} calls started after the deadline");
    assert!(run.stderr.contains("none starts after 2 s"), "{run}");
    let log = learnings_log(&p);
    assert!(
        log.contains("extraction stopped at its 2 s deadline"),
        "{log}"
    );
    // What was left stays counted, so the next regeneration comes for it.
    let left = 6 - extracted(&p);
    assert!(left >= 5, "{left}");
    assert!(counted(&p) >= left, "{} counted", counted(&p));
}

fn backoff_json(p: &TestProject) -> serde_json::Value {
    p.json(&["learnings", "stats", "--json"])["extraction_backoff"].clone()
}

#[test]
fn a_failing_endpoint_is_left_alone_until_its_back_off_ends_or_a_person_asks() {
    let server =
        FakeAnthropic::start_with_default(Vec::new(), Reply::status(500)).without_side_messages();
    let p = extracting_project(
        &server.url(),
        "cat > /dev/null\necho 'Tests pass.'\n",
        "  regenerate_every: 1\n  max_retries: 0\n",
    );
    p.add(&["first", "--type", "explore"]);
    p.ok(&["work"]);
    assert_eq!(server.message_requests().len(), 1);
    let b = backoff_json(&p);
    assert_eq!(b["active"], true, "{b}");
    assert_eq!(b["failures"], 1, "{b}");
    assert!(
        learnings_log(&p)
            .contains("every extraction call failed; automatic regenerations make no call until"),
        "{}",
        learnings_log(&p)
    );
    let stats = p.ok(&["learnings", "stats"]);
    assert!(
        stats.contains("backing off:      no automatic extraction call until"),
        "{stats}"
    );

    // The next task's regeneration makes no call while the endpoint backs off.
    p.add(&["second", "--type", "explore"]);
    p.ok(&["work"]);
    assert_eq!(
        server.message_requests().len(),
        1,
        "no call while backing off"
    );
    assert!(
        learnings_log(&p).contains("no extraction calls: the endpoint failed in 1 regeneration(s)"),
        "{}",
        learnings_log(&p)
    );
    assert_eq!(extracted(&p), 0);

    // A person's `gza learnings update` tries now; failing again doubles the wait.
    let run = p.run(&["learnings", "update"]);
    assert_eq!(run.code, 1, "every call failed: {run}");
    assert_eq!(server.message_requests().len(), 3);
    assert!(run.stderr.contains("every extraction call failed"), "{run}");
    assert_eq!(backoff_json(&p)["failures"], 2);

    // One that succeeds resets it.
    server.push(Reply::text("- [General] Endpoints recover"));
    server.push(Reply::text("- [General] Endpoints recover"));
    p.ok(&["learnings", "update"]);
    assert_eq!(extracted(&p), 2);
    let b = backoff_json(&p);
    assert_eq!(b["active"], false, "{b}");
    assert_eq!(b["failures"], 0, "{b}");
}

#[test]
fn a_dead_endpoint_is_backed_off_after_one_regeneration() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let p = extracting_project(
        &url,
        "cat > /dev/null\necho 'Tests pass.'\n",
        "  regenerate_every: 1\n  max_retries: 1\n",
    );
    p.add(&["first", "--type", "explore"]);
    p.ok(&["work"]);
    p.add(&["second", "--type", "explore"]);
    p.ok(&["work"]);
    let log = learnings_log(&p);
    assert_eq!(log.matches("extraction failed").count(), 1, "{log}");
    assert!(log.contains("no extraction calls"), "{log}");
    assert_eq!(backoff_json(&p)["failures"], 1, "the second made no call");
}

#[test]
fn a_dry_run_prints_the_plan_and_changes_nothing() {
    let server = FakeAnthropic::start_with_default(
        Vec::new(),
        Reply::text("- [General] Never asked in a dry run"),
    )
    .without_side_messages();
    let mut p = extracting_project(
        &server.url(),
        "cat > /dev/null\nprintf 'Done.\\n## Learnings\\n- Run make check before pushing\\n'\n",
        "  regenerate_every: 100\n",
    );
    p.add(&["first", "--type", "explore"]);
    p.add(&["second", "--type", "explore"]);
    p.ok(&["work", "--all"]);
    std::fs::write(
        p.path(".gza/learnings.md"),
        "## General\n- Mine, typed by hand\n",
    )
    .unwrap();
    let before = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap();

    let out = p.ok(&["learnings", "update", "--dry-run"]);
    assert!(out.contains("Dry run: nothing was written."), "{out}");
    assert!(
        out.contains("Extraction calls it would make (anthropic, haiku): tasks 1, 2"),
        "{out}"
    );
    assert!(
        out.contains("Would add your line: Mine, typed by hand"),
        "{out}"
    );
    assert!(out.contains("- Run make check before pushing"), "{out}");
    assert!(server.message_requests().is_empty(), "no call in a dry run");
    assert_eq!(
        std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap(),
        before
    );
    assert_eq!(count(&p, "SELECT COUNT(*) FROM learnings"), 0);
    assert_eq!(extracted(&p), 0);

    // Without a model the plan takes the agents' own lists.
    p.set_env("ANTHROPIC_API_KEY", "");
    p.config(
        &std::fs::read_to_string(p.path("gza.yaml"))
            .unwrap()
            .replace(
                "extraction_provider: anthropic",
                "extraction_provider: none",
            ),
    );
    let out = p.ok(&["learnings", "update", "--dry-run"]);
    assert!(out.contains("Extraction calls: none needed"), "{out}");
    assert!(
        out.contains("Would take in the agents' own learnings from tasks 1, 2"),
        "{out}"
    );
    assert_eq!(count(&p, "SELECT COUNT(*) FROM learnings"), 0);
}
