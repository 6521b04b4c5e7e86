//! `gza work` driving the real Codex and Gemini CLIs against a fake API on loopback
//! (`support::fake_llm`): what `claude_work` proves for Claude Code, proved for each.

use serde_json::Value;

use crate::support::agents::{codex_bin, gemini_bin};
use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::project::{TestProject, process_alive, wait_until};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Agent {
    Codex,
    Gemini,
}

/// A git project whose provider is the real `agent` CLI, talking to `server`; `extra` is more
/// gza.yaml.
pub(crate) fn project_for(agent: Agent, server: &FakeLlm, extra: &str) -> TestProject {
    let mut p = TestProject::in_git_repo();
    let (name, bin) = match agent {
        Agent::Codex => ("codex", codex_bin()),
        Agent::Gemini => ("gemini", gemini_bin()),
    };
    p.config(&format!(
        "provider: {name}\nproviders:\n  {name}:\n    path: {}\n{extra}",
        bin.display()
    ));
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    match agent {
        Agent::Codex => {
            let dir = p.home().join(".codex");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("config.toml"),
                server.codex_config("FAKE_OPENAI_KEY"),
            )
            .unwrap();
            p.set_env("FAKE_OPENAI_KEY", "test-openai-key");
        }
        Agent::Gemini => {
            let dir = p.home().join(".gemini");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("settings.json"), FakeLlm::gemini_settings()).unwrap();
            p.set_env("GEMINI_API_KEY", "test-gemini-key");
            p.set_env("GOOGLE_GEMINI_BASE_URL", &server.url());
        }
    }
    p
}

/// The logged stream of task `id`, one JSON event a line.
fn events(p: &TestProject, id: i64) -> Vec<Value> {
    std::fs::read_to_string(p.path(&format!(".gza/logs/{id}.jsonl")))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn writes_a_file_that_gza_commits(agent: Agent) {
    let server = FakeLlm::start(vec![
        Reply::write_file("notes.txt", "written by the agent\n"),
        Reply::text("I added notes.txt."),
    ]);
    let p = project_for(agent, &server, "");
    p.add(&["Add notes"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");

    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["branch"], "gza/1-add-notes");
    assert_eq!(
        p.git(&["show", "gza/1-add-notes:notes.txt"]),
        "written by the agent\n"
    );
    assert!(
        t["output"].as_str().unwrap().contains("I added notes.txt."),
        "{t}"
    );
    // Neither CLI reports a cost; gza does not invent one.
    assert_eq!(t["cost_usd"], Value::Null);

    let calls = server.agent_calls();
    assert_eq!(
        calls.len(),
        2,
        "one model call for the tool, one for the answer"
    );
    let events = events(&p, 1);
    match agent {
        Agent::Codex => {
            // `turn.completed` sums the turn's two calls: input 100+101, output 20+21.
            let done = events
                .iter()
                .find(|e| e["type"] == "turn.completed")
                .unwrap();
            assert_eq!(done["usage"]["input_tokens"], 201);
            assert_eq!(
                (t["input_tokens"].as_i64(), t["output_tokens"].as_i64()),
                (Some(201), Some(41))
            );
            assert_eq!(t["num_turns"], 1, "one Codex turn");
            let thread = events
                .iter()
                .find(|e| e["type"] == "thread.started")
                .unwrap();
            assert_eq!(t["session_id"], thread["thread_id"]);
            assert_eq!(
                calls[0].header("authorization"),
                Some("Bearer test-openai-key")
            );
            assert!(
                calls[0].body.to_string().contains("Add notes"),
                "gza's prompt reaches the API"
            );
        }
        Agent::Gemini => {
            // Without -m Gemini CLI routes first (a flash-lite side call of 5 + 5 tokens), and
            // its `result` stats count that call too.
            let result = events.iter().find(|e| e["type"] == "result").unwrap();
            assert_eq!(t["input_tokens"], result["stats"]["input_tokens"]);
            assert_eq!(t["output_tokens"], result["stats"]["output_tokens"]);
            assert_eq!(t["input_tokens"].as_i64(), Some(100 + 101 + 5));
            assert_eq!(t["output_tokens"].as_i64(), Some(20 + 21 + 5));
            assert_eq!(t["num_turns"], 2, "one model response per call");
            let init = events.iter().find(|e| e["type"] == "init").unwrap();
            assert_eq!(t["session_id"], init["session_id"]);
            assert_eq!(calls[0].header("x-goog-api-key"), Some("test-gemini-key"));
            assert!(
                calls[0].body.to_string().contains("Add notes"),
                "gza's prompt reaches the API"
            );
        }
    }
}

fn an_api_error_fails_the_task_with_its_message(agent: Agent, reply: Reply, expect: &str) {
    let server = FakeLlm::start(vec![reply]);
    let p = project_for(agent, &server, "");
    p.add(&["doomed", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["failure_reason"], "AGENT_ERROR", "{t}");
    assert!(t["output"].as_str().unwrap().contains(expect), "{t}");
}

/// The agent starts a background process, then its API hangs: the timeout ends the task and
/// the whole process group, the background process too.
fn a_timeout_ends_the_whole_group(agent: Agent) {
    let server = FakeLlm::start(Vec::new());
    // Long enough for a node CLI to start and run its first command on a loaded machine (6 s
    // was not, under a parallel suite), short enough to keep the test quick.
    let p = project_for(agent, &server, "timeout_minutes: 0.3\n");
    let pid_file = p.scratch().join("bg.pid");
    server.push(Reply::shell(format!(
        "sleep 300 >/dev/null 2>&1 & echo $! > {}",
        pid_file.display()
    )));
    server.push(Reply::Hang);
    p.add(&["hang", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["failure_reason"], "TIMEOUT", "{t}");
    let bg: i64 = std::fs::read_to_string(&pid_file)
        .expect("the agent ran the background command")
        .trim()
        .parse()
        .unwrap();
    wait_until(5, "the background process to end", || !process_alive(bg));
}

/// The agent starts a background process and its API hangs; SIGTERM to `gza work` ends the task
/// as KILLED, and the agent's processes with it.
fn sigterm_ends_the_task_and_the_agents_processes(agent: Agent) {
    let server = FakeLlm::start(Vec::new());
    let p = project_for(agent, &server, "");
    let pid_file = p.scratch().join("bg.pid");
    server.push(Reply::shell(format!(
        "sleep 300 >/dev/null 2>&1 & echo $! > {}",
        pid_file.display()
    )));
    server.push(Reply::Hang);
    p.add(&["hang", "--type", "explore"]);
    let worker = p
        .command(&["work"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(60, "the agent's background command", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let bg: i64 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    let out = worker.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["failure_reason"], "KILLED", "{t}");
    wait_until(5, "the background process to end", || !process_alive(bg));
}

#[test]
fn codex_sigterm_ends_the_task_and_its_processes() {
    sigterm_ends_the_task_and_the_agents_processes(Agent::Codex);
}

#[test]
fn gemini_sigterm_ends_the_task_and_its_processes() {
    sigterm_ends_the_task_and_the_agents_processes(Agent::Gemini);
}

#[test]
fn codex_writes_a_file_that_gza_commits_with_its_tokens_and_turns() {
    writes_a_file_that_gza_commits(Agent::Codex);
}

#[test]
fn codex_api_error_fails_the_task() {
    an_api_error_fails_the_task_with_its_message(
        Agent::Codex,
        Reply::Status(400, "the fake rejects this request".into()),
        "the fake rejects this request",
    );
}

#[test]
fn codex_stream_failure_fails_the_task() {
    an_api_error_fails_the_task_with_its_message(
        Agent::Codex,
        Reply::StreamFailed("the fake model failed".into()),
        "stream disconnected before completion: the fake model failed",
    );
}

#[test]
fn codex_timeout_ends_the_whole_process_group() {
    a_timeout_ends_the_whole_group(Agent::Codex);
}

#[test]
fn gemini_writes_a_file_that_gza_commits_with_its_tokens_and_turns() {
    writes_a_file_that_gza_commits(Agent::Gemini);
}

#[test]
fn gemini_api_error_fails_the_task() {
    an_api_error_fails_the_task_with_its_message(
        Agent::Gemini,
        Reply::Status(400, "the fake rejects this request".into()),
        "the fake rejects this request",
    );
}

#[test]
fn gemini_timeout_ends_the_whole_process_group() {
    a_timeout_ends_the_whole_group(Agent::Gemini);
}

/// Bad agent output, for the Codex and Gemini parsers: a stand-in binary that prints garbage and
/// exits 0 fails the task with NO_RESULT, one that exits non-zero with AGENT_EXIT; nothing is lost.
#[test]
fn an_agent_that_prints_garbage_fails_with_a_reason() {
    for (provider, code, reason) in [
        ("codex", 0, "NO_RESULT"),
        ("codex", 3, "AGENT_EXIT"),
        ("gemini", 0, "NO_RESULT"),
        ("gemini", 3, "AGENT_EXIT"),
    ] {
        let p = TestProject::new();
        let script = p.scratch().join(format!("fake-{provider}"));
        std::fs::write(
            &script,
            format!("#!/bin/sh\ncat >/dev/null\necho 'this is not JSON'\necho '{{\"type\":\"unknown\"}}'\nexit {code}\n"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.config(&format!(
            "provider: {provider}\nproviders:\n  {provider}:\n    path: {}\n",
            script.display()
        ));
        p.add(&["anything", "--type", "explore"]);
        let run = p.run(&["work"]);
        assert_eq!(run.code, 1, "{run}");
        let t = p.json(&["show", "1", "--json"]);
        assert_eq!(t["failure_reason"], reason, "{provider} exit {code}: {t}");
        assert!(
            t["output"]
                .as_str()
                .unwrap()
                .starts_with("gza: the agent ended without a final result"),
            "{t}"
        );
        let log = std::fs::read_to_string(p.path(".gza/logs/1.jsonl")).unwrap();
        assert!(log.contains("this is not JSON"), "the raw stream is kept");
    }
}
