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
    p.ok(&["learnings", "update"]);
    assert_eq!(extracted(&p), 25);
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
