//! `gza mcp` with real clients: the pinned Claude Code, Codex and Gemini CLIs, each given the
//! configuration `gza mcp install` wrote, each scripted by its fake model server to call gza's
//! search tool. The tool's answer must reach the model in the next request.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::agents_e2e::{Agent, project_for};
use crate::hooks::path_with_gza;
use crate::support::agents::{codex_bin, gemini_bin};
use crate::support::claude::claude_bin;
use crate::support::fake_anthropic::{FakeAnthropic, Reply as ClaudeReply};
use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::project::TestProject;

const LEARNING: &str = "Run cargo sqlx prepare after changing any SQL query";
const QUERY: &str = "update the offline query cache for the database layer";

fn add_learnings(p: &TestProject) {
    p.ok(&["learnings", "add", "--keywords", "sqlx", LEARNING]);
    p.ok(&[
        "learnings",
        "add",
        "React components live in web/src/components, one per file",
    ]);
}

fn mcp_log(p: &TestProject) -> String {
    std::fs::read_to_string(p.path(".gza/logs/mcp.log")).unwrap_or_default()
}

/// The search was recorded as given to an MCP session.
fn assert_recorded(p: &TestProject) {
    let events: Vec<(i64, String)> = {
        let db = p.db();
        let mut s = db
            .prepare("SELECT learning_id, event FROM learning_injections")
            .unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(events, [(1, "McpSearch".to_string())]);
}

#[test]
fn claude_code_calls_gza_search_and_the_answer_reaches_the_model() {
    let claude = claude_bin().unwrap();
    let mut p = TestProject::in_git_repo();
    p.use_model();
    add_learnings(&p);
    p.ok(&["mcp", "install", "--agent", "claude"]);
    let server = FakeAnthropic::start(vec![
        ClaudeReply::tool_use("mcp__gza__search_learnings", json!({"query": QUERY})),
        ClaudeReply::text("Done."),
    ]);
    let mut cmd = Command::new(claude);
    cmd.args(["-p", "--output-format", "stream-json", "--verbose"])
        .args(["--max-turns", "4"])
        // The file `gza mcp install` wrote, and only it.
        .arg("--mcp-config")
        .arg(p.path(".mcp.json"))
        .arg("--strict-mcp-config")
        .args(["--allowedTools", "mcp__gza__search_learnings"])
        .current_dir(p.root())
        .env_clear()
        .env("PATH", path_with_gza())
        // The shared database, in team mode: the person's own environment.
        .envs(p.database_env())
        .env("HOME", p.home())
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("GZA_MODEL_DIR", crate::support::model::model_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in server.claude_env() {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("claude starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Update the query cache")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "claude failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls: Vec<_> = server
        .message_requests()
        .into_iter()
        .filter(|r| r.json["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    assert!(calls.len() >= 2, "{stdout}");
    let offered = calls[0].json["tools"].to_string();
    assert!(offered.contains("mcp__gza__search_learnings"), "{offered}");
    let next = calls[1].messages_text();
    assert!(
        next.contains(LEARNING) && next.contains("<gza-learnings>") && next.contains("why: "),
        "the tool's answer is not in the next request: {next}\n{stdout}\nmcp.log: {}",
        mcp_log(&p)
    );
    assert!(!next.contains("React components"), "{next}");
    assert_recorded(&p);
}

/// Run Codex or Gemini CLI on `prompt` in the project, the way a person does, with gza on PATH.
fn run_agent(agent: Agent, p: &TestProject, server: &FakeLlm, prompt: &str) -> String {
    let mut cmd = Command::new(match agent {
        Agent::Codex => codex_bin(),
        Agent::Gemini => gemini_bin(),
    });
    cmd.current_dir(p.root())
        .env_clear()
        .env("PATH", path_with_gza())
        // The shared database, in team mode: the person's own environment.
        .envs(p.database_env())
        .env("HOME", p.home())
        .env("GZA_MODEL_DIR", crate::support::model::model_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match agent {
        Agent::Codex => {
            // `--trust`: the person trusting the project, so Codex reads its .codex/config.toml.
            cmd.args(["exec", "--json", "--skip-git-repo-check", "--trust"])
                .arg("--dangerously-bypass-approvals-and-sandbox")
                .arg(prompt)
                .env("FAKE_OPENAI_KEY", "test-openai-key");
        }
        Agent::Gemini => {
            cmd.args(["-p", prompt, "--output-format", "stream-json", "--yolo"])
                .env("GEMINI_API_KEY", "test-gemini-key")
                .env("GOOGLE_GEMINI_BASE_URL", server.url())
                // The person trusting the folder: Gemini CLI starts no project server otherwise.
                .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        }
    }
    let out = cmd.output().expect("the agent starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{agent:?} failed: {}\n{stdout}\nmcp.log: {}",
        String::from_utf8_lossy(&out.stderr),
        mcp_log(p)
    );
    stdout
}

fn agent_calls_gza_search_and_the_answer_reaches_the_model(agent: Agent) {
    let server = FakeLlm::start(vec![
        Reply::call_tool("search_learnings", json!({"query": QUERY})),
        Reply::text("Done."),
    ]);
    let mut p = project_for(agent, &server, "");
    p.use_model();
    // Codex starts an MCP server with a short list of variables (HOME and PATH, not
    // GZA_MODEL_DIR): the model is where `gza model install` puts it, under HOME.
    let models = p.home().join(".local/share/gza/models");
    std::fs::create_dir_all(&models).unwrap();
    let dir = crate::support::model::model_dir();
    std::os::unix::fs::symlink(&dir, models.join(dir.file_name().unwrap())).unwrap();
    add_learnings(&p);
    let name = match agent {
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
    };
    p.ok(&["mcp", "install", "--agent", name]);
    let stdout = run_agent(agent, &p, &server, "Update the query cache");
    let calls = server.agent_calls();
    assert!(calls.len() >= 2, "{stdout}");
    let offered = calls[0].body["tools"].to_string();
    assert!(offered.contains("search_learnings"), "{offered}");
    let next: &Value = &calls[1].body;
    let next = next.to_string();
    assert!(
        next.contains(LEARNING) && next.contains("why: "),
        "the tool's answer is not in the next request: {next}\n{stdout}\nmcp.log: {}",
        mcp_log(&p)
    );
    assert!(!next.contains("React components"), "{next}");
    assert_recorded(&p);
}

#[test]
fn codex_calls_gza_search_and_the_answer_reaches_the_model() {
    agent_calls_gza_search_and_the_answer_reaches_the_model(Agent::Codex);
}

#[test]
fn gemini_calls_gza_search_and_the_answer_reaches_the_model() {
    agent_calls_gza_search_and_the_answer_reaches_the_model(Agent::Gemini);
}
