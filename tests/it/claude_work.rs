//! `gza work` driving the real Claude Code CLI against a fake Anthropic API on loopback.

use serde_json::Value;

use crate::support::claude::claude_bin;
use crate::support::fake_anthropic::{FakeAnthropic, Reply};
use crate::support::project::TestProject;

/// A git project whose claude provider is the real CLI, talking to `server`.
fn project_for(server: &FakeAnthropic, claude: &std::path::Path, extra: &str) -> TestProject {
    let mut p = TestProject::in_git_repo();
    p.config(&format!(
        "providers:\n  claude:\n    path: {}\n{extra}",
        claude.display()
    ));
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    for (k, v) in server.claude_env() {
        p.set_env(k, &v);
    }
    p.set_env("CLAUDE_CODE_MAX_RETRIES", "0");
    p
}

/// The `result` event of a task's logged stream.
fn result_event(p: &TestProject, id: i64) -> Value {
    let log = std::fs::read_to_string(p.path(&format!(".gza/logs/{id}.jsonl"))).unwrap();
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "result")
        .expect("a result event in the log")
}

#[test]
fn claude_writes_a_file_that_gza_commits_and_the_figures_match_the_stream() {
    let Some(claude) = claude_bin() else { return };
    let server = FakeAnthropic::start(Vec::new());
    let p = project_for(&server, &claude, "");
    let worktree = p.path(".gza/worktrees/1-add-notes");
    server.push(Reply::write_file(
        worktree.join("notes.txt").to_string_lossy(),
        "written by claude\n",
    ));
    server.push(Reply::text(
        "I added notes.txt.\n\n## Learnings\n- Notes live in notes.txt",
    ));
    p.add(&["Add notes"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");

    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["branch"], "gza/1-add-notes");
    assert_eq!(
        p.git(&["show", "gza/1-add-notes:notes.txt"]),
        "written by claude\n"
    );

    let result = result_event(&p, 1);
    let usage = &result["usage"];
    let input = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .map(|k| usage[*k].as_i64().unwrap())
    .sum::<i64>();
    assert_eq!(t["cost_usd"], result["total_cost_usd"]);
    assert!(t["cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(t["input_tokens"].as_i64(), Some(input));
    assert_eq!(t["output_tokens"], usage["output_tokens"]);
    assert_eq!(t["num_turns"], result["num_turns"]);
    assert_eq!(t["session_id"], result["session_id"]);
    assert!(t["output"].as_str().unwrap().contains("I added notes.txt."));

    // What reached the API: gza's prompt, and only the configured tools.
    let requests = server.message_requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0]
            .all_text()
            .contains("Complete this task: Add notes")
    );
    let tools: Vec<&str> = requests[0].json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tools.len(), 6, "{tools:?}");
    // The rendered log shows the tool call and the result line.
    let log = p.ok(&["log", "1"]);
    assert!(log.contains("→ Write "), "{log}");
    assert!(log.contains("── result: success"), "{log}");
}

#[test]
fn claude_at_max_turns_fails_the_task_with_max_turns() {
    let Some(claude) = claude_bin() else { return };
    let server = FakeAnthropic::start(Vec::new());
    let p = project_for(&server, &claude, "max_turns: 1\n");
    server.push(Reply::write_file(
        p.path(".gza/worktrees/1-loop/a.txt").to_string_lossy(),
        "a",
    ));
    server.push(Reply::write_file(
        p.path(".gza/worktrees/1-loop/b.txt").to_string_lossy(),
        "b",
    ));
    p.add(&["loop"]);
    p.run(&["work"]);
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["failure_reason"], "MAX_TURNS");
    assert!(t["session_id"].is_string());
    // The partial work is kept on the branch, marked unfinished.
    let subject = p.git(&["log", "--format=%s", "-1", "gza/1-loop"]);
    assert!(subject.contains("(unfinished)"), "{subject}");
}

#[test]
fn an_api_that_answers_500_fails_the_task_with_the_error() {
    let Some(claude) = claude_bin() else { return };
    let server = FakeAnthropic::start_with_default(Vec::new(), Reply::status(500));
    let p = project_for(&server, &claude, "");
    p.add(&["doomed", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["status"], "failed");
    assert_eq!(t["failure_reason"], "AGENT_ERROR");
    assert!(t["output"].as_str().unwrap().contains("500"), "{t}");
}

#[test]
fn learnings_reach_the_api_request_unless_the_task_opts_out() {
    let Some(claude) = claude_bin() else { return };
    let server = FakeAnthropic::start(Vec::new());
    let p = project_for(&server, &claude, "");
    std::fs::write(
        p.path(".gza/learnings.md"),
        "# Project Learnings\n\n## Testing Patterns\n- Run make check before finishing\n",
    )
    .unwrap();
    p.add(&["with learnings", "--type", "explore"]);
    p.add(&["without learnings", "--type", "explore", "--no-learnings"]);
    p.ok(&["work", "--all"]);
    let requests = server.message_requests();
    let body_of = |task: &str| {
        requests
            .iter()
            .find(|r| {
                r.all_text()
                    .contains(&format!("Complete this task: {task}"))
            })
            .unwrap()
            .body
            .clone()
    };
    assert!(body_of("with learnings").contains("Run make check before finishing"));
    assert!(!body_of("without learnings").contains("Run make check"));
}

#[test]
fn hooks_a_repository_committed_for_claude_code_run_only_once_trusted() {
    let Some(claude) = claude_bin() else { return };
    let server = FakeAnthropic::start_with_default(Vec::new(), Reply::text("done"));
    let p = project_for(&server, &claude, "");
    // The repository commits Claude Code settings whose hooks run a command at every session's
    // start and prompt (`claude -p` skips Claude Code's own folder trust).
    let marker = p.scratch().join("repository-hook-ran");
    let hook = serde_json::json!([{"hooks": [{"type": "command",
        "command": format!("touch {}", marker.display())}]}]);
    std::fs::create_dir_all(p.path(".claude")).unwrap();
    std::fs::write(
        p.path(".claude/settings.json"),
        serde_json::json!({"hooks": {"SessionStart": hook, "UserPromptSubmit": hook}}).to_string(),
    )
    .unwrap();
    p.git(&["add", "--all"]);
    p.git(&[
        "commit",
        "--quiet",
        "-m",
        "the repository's claude settings",
    ]);
    p.add(&["Look around", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(p.json(&["show", "1", "--json"])["status"], "completed");
    assert!(
        !marker.exists(),
        "a committed hook ran before the person trusted it"
    );
    assert!(
        run.stderr
            .contains("Claude Code runs without .claude/settings.json")
            && run.stderr.contains("gza trust"),
        "the person is told what was left out: {run}"
    );

    // `gza trust` names the file; once trusted, its hooks are the person's choice.
    let shown = p.run(&["trust"]).stdout;
    assert!(
        shown.contains("agent config .claude/settings.json  \"sha256:"),
        "{shown}"
    );
    p.ok(&["trust", "--yes"]);
    p.add(&["Look again", "--type", "explore"]);
    assert_eq!(p.run(&["work"]).code, 0);
    assert!(marker.exists(), "the trusted hook did not run");

    // A later change to the file needs trust again.
    std::fs::remove_file(&marker).unwrap();
    std::fs::write(
        p.path(".claude/settings.json"),
        serde_json::json!({"hooks": {"SessionStart": hook}}).to_string(),
    )
    .unwrap();
    p.git(&["commit", "--quiet", "-am", "changed"]);
    p.add(&["Look once more", "--type", "explore"]);
    assert_eq!(p.run(&["work"]).code, 0);
    assert!(!marker.exists(), "a changed hook file ran without trust");
}
