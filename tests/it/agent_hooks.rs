//! `gza hook install --agent codex|gemini`: gza's hooks in the real Codex and Gemini CLIs,
//! each against the fake model server (`support::fake_llm`). What a hook adds must reach the
//! model's request body; what a turn ends with must become a draft.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::agents_e2e::{Agent, project_for};
use crate::hooks::path_with_gza;
use crate::support::agents::{codex_bin, gemini_bin};
use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::project::TestProject;

/// The fence as the model sees it: Gemini CLI 0.61 escapes `<` and `>` in hook context
/// (it wraps it in its own `<hook_context>`), Codex passes it as given.
fn fence(agent: Agent) -> &'static str {
    match agent {
        Agent::Codex => "<gza-learnings>",
        Agent::Gemini => "&lt;gza-learnings&gt;",
    }
}

/// A git project whose agent talks to `server`, with gza's hooks installed for `agent` at
/// project level, and the model the ranker uses.
fn hooked(agent: Agent, server: &FakeLlm) -> TestProject {
    let mut p = project_for(agent, server, "");
    p.use_model();
    let name = match agent {
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
    };
    p.ok(&["hook", "install", "--agent", name]);
    p
}

/// Run the agent CLI non-interactively on `prompt` in the project, with gza on PATH (the
/// project's settings name `gza`), the way a person runs it; returns its stdout.
fn run_agent(agent: Agent, p: &TestProject, server: &FakeLlm, prompt: &str) -> String {
    run_agent_with(agent, p, server, prompt, &[])
}

/// [`run_agent`] with more variables in the agent's environment.
fn run_agent_with(
    agent: Agent,
    p: &TestProject,
    server: &FakeLlm,
    prompt: &str,
    vars: &[(&str, &str)],
) -> String {
    let mut cmd = Command::new(match agent {
        Agent::Codex => codex_bin(),
        Agent::Gemini => gemini_bin(),
    });
    cmd.current_dir(p.root())
        .env_clear()
        .env("PATH", path_with_gza())
        .env("HOME", p.home())
        .env("GZA_MODEL_DIR", crate::support::model::model_dir())
        .envs(p.database_env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match agent {
        Agent::Codex => {
            // `--trust` is the person trusting the project (Codex loads a project's .codex/
            // only then); Codex also runs a new hook only once someone reviewed it in the TUI's
            // /hooks, which automation skips with this flag.
            cmd.args(["exec", "--json", "--skip-git-repo-check", "--trust"])
                .arg("--dangerously-bypass-hook-trust")
                // As `gza work` runs it: no sandbox to find on this machine, no approvals.
                .arg("--dangerously-bypass-approvals-and-sandbox")
                .arg(prompt)
                .env("FAKE_OPENAI_KEY", "test-openai-key");
        }
        Agent::Gemini => {
            cmd.args(["-p", prompt, "--output-format", "stream-json", "--yolo"])
                .env("GEMINI_API_KEY", "test-gemini-key")
                .env("GOOGLE_GEMINI_BASE_URL", server.url())
                // The person trusting the folder: Gemini CLI runs no project hook otherwise.
                .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        }
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the agent starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{agent:?} failed: {}\n{stdout}\nhooks.log: {}",
        String::from_utf8_lossy(&out.stderr),
        hooks_log(p)
    );
    stdout
}

fn agent_matches(a: Agent, b: Agent) -> bool {
    std::mem::discriminant(&a) == std::mem::discriminant(&b)
}

fn hooks_log(p: &TestProject) -> String {
    std::fs::read_to_string(p.path(".gza/logs/hooks.log")).unwrap_or_default()
}

/// The body of the agent's first model call.
fn first_call(server: &FakeLlm) -> String {
    server
        .agent_calls()
        .first()
        .expect("the agent called the model")
        .body
        .to_string()
}

fn injected_events(p: &TestProject) -> Vec<String> {
    // In team mode hooks spool what they gave; the next command takes it in.
    p.ok(&["learnings", "show", "--all"]);
    let db = p.db();
    let mut s = db
        .prepare("SELECT event FROM learning_injections ORDER BY id")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn a_relevant_learning_reaches_the_model_and_an_unrelated_prompt_gets_none(agent: Agent) {
    let server = FakeLlm::start(vec![Reply::text("Done.")]);
    let p = hooked(agent, &server);
    p.ok(&[
        "learnings",
        "add",
        "--section",
        "Testing Patterns",
        "Run cargo sqlx prepare after changing any SQL query",
    ]);
    p.ok(&[
        "learnings",
        "add",
        "--section",
        "Code Style",
        "React components live in web/src/components, one per file",
    ]);
    run_agent(
        agent,
        &p,
        &server,
        "Update the offline query cache for the database layer",
    );
    let body = first_call(&server);
    assert!(
        body.contains("Run cargo sqlx prepare after changing any SQL query"),
        "{body}\nhooks.log: {}",
        hooks_log(&p)
    );
    assert!(body.contains(fence(agent)), "{body}");
    assert!(!body.contains("React components live"), "{body}");

    let server = FakeLlm::start(vec![Reply::text("Done.")]);
    rewire(agent, &p, &server);
    run_agent(agent, &p, &server, "Write a haiku about autumn leaves");
    let body = first_call(&server);
    assert!(!body.contains(fence(agent)), "{body}");
    assert!(!body.contains("gza-learnings"), "{body}");
    assert!(!body.contains("sqlx"), "{body}");
    assert_eq!(injected_events(&p), vec!["UserPromptSubmit"]);
}

/// Point the agent's settings in the project's HOME at another fake server.
fn rewire(agent: Agent, p: &TestProject, server: &FakeLlm) {
    if agent_matches(agent, Agent::Codex) {
        let config = p.home().join(".codex/config.toml");
        let old = std::fs::read_to_string(&config).unwrap();
        // Keep what Codex itself added (the project's trust), change the provider's URL.
        let new: String = old
            .lines()
            .map(|l| {
                if l.starts_with("base_url = ") {
                    format!("base_url = \"{}/v1\"", server.url())
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&config, new + "\n").unwrap();
    }
    // Gemini CLI takes the URL from the environment, set per run.
}

fn a_process_knowledge_block_at_the_end_of_a_turn_becomes_a_draft(agent: Agent) {
    let lesson = "You were right, I missed marketplace.json. For next time:\n\
        [PROCESS_KNOWLEDGE]\ntype: checklist\npriority: CRITICAL\nlabel: Version Bump File Checklist\n\
        description: Every manifest carries the version\n\
        checklist:\n  items:\n    - plugin.json\n    - marketplace.json\n[/PROCESS_KNOWLEDGE]";
    let server = FakeLlm::start(vec![Reply::text(lesson)]);
    let p = hooked(agent, &server);
    run_agent(
        agent,
        &p,
        &server,
        "You forgot to bump marketplace.json too",
    );
    let drafts = p.json(&["learnings", "show", "--all", "--json"]);
    assert_eq!(
        drafts[0]["text"],
        "Version Bump File Checklist",
        "{drafts}\nhooks.log: {}",
        hooks_log(&p)
    );
    assert_eq!(drafts[0]["status"], "draft");
    assert_eq!(drafts[0]["priority"], "CRITICAL");
    assert_eq!(drafts.as_array().unwrap().len(), 1, "{drafts}");
}

#[test]
fn codex_gets_a_relevant_learning_through_its_hook_and_an_unrelated_prompt_none() {
    a_relevant_learning_reaches_the_model_and_an_unrelated_prompt_gets_none(Agent::Codex);
}

#[test]
fn codex_stop_turns_a_process_knowledge_block_into_a_draft() {
    a_process_knowledge_block_at_the_end_of_a_turn_becomes_a_draft(Agent::Codex);
}

#[test]
fn gemini_gets_a_relevant_learning_through_its_hook_and_an_unrelated_prompt_none() {
    a_relevant_learning_reaches_the_model_and_an_unrelated_prompt_gets_none(Agent::Gemini);
}

#[test]
fn gemini_after_agent_turns_a_process_knowledge_block_into_a_draft() {
    a_process_knowledge_block_at_the_end_of_a_turn_becomes_a_draft(Agent::Gemini);
}

/// Install writes each agent's own file, merged with what is there, names `gza` (never this
/// machine's binary) in the files a team commits, and a second install changes nothing.
#[test]
fn install_for_every_agent_merges_and_names_gza_from_path() {
    let p = TestProject::in_git_repo();
    let gemini = p.path(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(
        &gemini,
        r#"{"model": {"name": "gemini-2.5-pro"}, "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "my-check"}]}]}}"#,
    )
    .unwrap();
    let out = p.ok(&["hook", "install", "--agent", "all"]);
    assert!(
        out.contains("Installed into .codex/hooks.json (Codex, project)"),
        "{out}"
    );
    assert!(out.contains("/hooks in codex"), "{out}");
    assert!(
        out.contains("Installed into .gemini/settings.json (Gemini CLI, project)"),
        "{out}"
    );
    let read = |path: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let codex = read(&p.path(".codex/hooks.json"));
    let keys: Vec<&String> = codex["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    assert_eq!(
        codex["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        "gza hook user-prompt-submit"
    );
    let g = read(&gemini);
    assert_eq!(g["model"]["name"], "gemini-2.5-pro");
    assert_eq!(
        g["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        "my-check"
    );
    assert_eq!(
        g["hooks"]["BeforeAgent"][0]["hooks"][0]["command"],
        "gza hook user-prompt-submit"
    );
    assert_eq!(
        g["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
        "gza hook stop"
    );
    assert_eq!(g["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"], 10_000);
    let claude = std::fs::read_to_string(p.path(".claude/settings.json")).unwrap();
    let exe = env!("CARGO_BIN_EXE_gza");
    for file in [
        ".claude/settings.json",
        ".codex/hooks.json",
        ".gemini/settings.json",
    ] {
        let text = std::fs::read_to_string(p.path(file)).unwrap();
        assert!(
            !text.contains(exe),
            "{file} names this machine's gza: {text}"
        );
    }
    assert!(claude.contains("\"gza hook pre-tool-use\""), "{claude}");

    let again = p.ok(&["hook", "install", "--agent", "all"]);
    assert_eq!(again.matches("already installed").count(), 3, "{again}");

    // Status says what a teammate runs; gza is not on the test's PATH, so it warns here.
    let status = p.ok(&["hook", "status"]);
    assert!(
        status.contains(
            "Codex:\nproject  .codex/hooks.json: SessionStart, UserPromptSubmit, PreToolUse, Stop"
        ),
        "{status}"
    );
    assert!(
        status.contains("project  .gemini/settings.json: SessionStart, BeforeAgent, AfterAgent"),
        "{status}"
    );
    assert!(
        status.contains("a teammate runs `gza` from their PATH"),
        "{status}"
    );
    assert!(status.contains("does not run here"), "{status}");

    // Codex and Gemini have no local settings file: refused, nothing written.
    let err = p.user_error(&["hook", "install", "--agent", "all", "--local"]);
    assert!(err.contains("Codex has no local settings file"), "{err}");
    assert!(!p.path(".claude/settings.local.json").exists());

    // A personal (user) install names this binary.
    p.ok(&["hook", "install", "--agent", "gemini", "--user"]);
    let user = std::fs::read_to_string(p.home().join(".gemini/settings.json")).unwrap();
    assert!(user.contains(exe), "{user}");

    // Uninstall takes only gza's entries of that agent.
    p.ok(&["hook", "uninstall", "--agent", "gemini"]);
    let g = read(&gemini);
    assert!(g["hooks"].get("BeforeAgent").is_none(), "{g}");
    assert_eq!(
        g["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        "my-check"
    );
    assert!(p.path(".codex/hooks.json").exists());
    assert!(
        read(&p.path(".codex/hooks.json"))["hooks"]
            .get("Stop")
            .is_some()
    );
}

/// Codex's PreToolUse takes `additionalContext` (its shell tool is `Bash` in hooks, as in
/// Claude Code, with the command in `tool_input.command`): a CRITICAL checklist triggered by
/// Bash on plugin.json reaches the model with the call, and not before the call was asked for.
#[test]
fn codex_gets_a_critical_checklist_at_the_matching_tool_call() {
    let server = FakeLlm::start(vec![
        Reply::shell("sed -i s/1.0.0/2.0.0/ plugin.json"),
        Reply::text("Bumped."),
    ]);
    let p = hooked(Agent::Codex, &server);
    p.ok(&[
        "learnings",
        "add",
        "--priority",
        "CRITICAL",
        "--tool",
        "Bash",
        "--file",
        "**/plugin.json",
        "--check",
        "plugin.json",
        "--check",
        "marketplace.json",
        "Bump the version in every manifest together",
    ]);
    run_agent(Agent::Codex, &p, &server, "Bump the plugin to 2.0.0");
    let calls = server.agent_calls();
    assert_eq!(calls.len(), 2, "one call for the tool, one for the answer");
    let first = calls[0].body.to_string();
    assert!(
        !first.contains("- [ ] marketplace.json"),
        "the checklist waits for its tool call: {first}"
    );
    let second = calls[1].body.to_string();
    assert_eq!(
        second.matches("- [ ] marketplace.json").count(),
        1,
        "{second}\nhooks.log: {}",
        hooks_log(&p)
    );
    assert!(second.contains("CRITICAL CHECKLIST"), "{second}");
    assert!(injected_events(&p).contains(&"PreToolUse".to_string()));
}

/// Run handler `name` on `stdin`; it must exit 0 with nothing on stderr. Returns its stdout.
fn handler(p: &TestProject, name: &str, stdin: &[u8]) -> String {
    use std::io::Write;
    let mut child = p
        .command(&["hook", name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{name}");
    assert!(
        out.stderr.is_empty(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Gemini CLI's and Codex's payloads, wrong ones and a missing database included, never break
/// a handler; a right one is answered under Gemini's own event name.
#[test]
fn gemini_and_codex_payloads_never_break_a_handler() {
    let mut p = TestProject::in_git_repo();
    p.use_model();
    p.ok(&[
        "learnings",
        "add",
        "Run cargo sqlx prepare after changing any SQL query",
    ]);
    let root = p.root().display().to_string();
    let before = p.ok(&["learnings", "show", "--all", "--json"]);
    let bad = [
        (
            "user-prompt-submit",
            serde_json::json!({"hook_event_name": "BeforeAgent", "cwd": root, "prompt": 42}),
        ),
        (
            "user-prompt-submit",
            serde_json::json!({"hook_event_name": "BeforeAgent", "cwd": root, "session_id": ["x"], "prompt": ""}),
        ),
        (
            "stop",
            serde_json::json!({"hook_event_name": "AfterAgent", "cwd": root, "prompt_response": {"text": "[PROCESS_KNOWLEDGE]"}}),
        ),
        (
            "stop",
            serde_json::json!({"hook_event_name": "AfterAgent", "cwd": root, "session_id": "g1", "prompt_response": "[PROCESS_KNOWLEDGE]\nlabel: [unclosed\n[/PROCESS_KNOWLEDGE]"}),
        ),
        (
            "pre-tool-use",
            serde_json::json!({"hook_event_name": "PreToolUse", "cwd": root, "tool_name": "Bash", "tool_input": "not an object"}),
        ),
        (
            "session-start",
            serde_json::json!({"hook_event_name": "SessionStart", "cwd": "/nonexistent/dir", "source": "startup"}),
        ),
    ];
    for (name, input) in &bad {
        assert_eq!(
            handler(&p, name, input.to_string().as_bytes()),
            "",
            "{name} {input}"
        );
    }
    assert_eq!(p.ok(&["learnings", "show", "--all", "--json"]), before);

    let out = handler(
        &p,
        "user-prompt-submit",
        serde_json::json!({"hook_event_name": "BeforeAgent", "cwd": root, "session_id": "g2",
            "prompt": "Run the sqlx prepare step for the SQL query change", "timestamp": "2026-01-01T00:00:00Z"})
        .to_string()
        .as_bytes(),
    );
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
    assert!(
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("cargo sqlx prepare"),
        "{answer}"
    );

    // A missing database: nothing, and none is created. (In team mode a hook never asks the
    // far database, so it is the snapshot kept of it that is gone here.)
    p.remove_database();
    let _ = std::fs::remove_file(p.path(".gza/hook-far-v2"));
    let again = serde_json::json!({"hook_event_name": "BeforeAgent", "cwd": root, "session_id": "g3",
        "prompt": "Run the sqlx prepare step for the SQL query change"});
    assert_eq!(
        handler(&p, "user-prompt-submit", again.to_string().as_bytes()),
        ""
    );
    assert!(!p.database_exists());
}

/// At the session's end (Codex's and Gemini CLI's SessionEnd, which both send the session's
/// transcript: Codex's rollout, Gemini's chat), the session is read by the extraction model in a
/// detached process, and what it learned becomes a draft whose source is the session. The
/// extraction sees the person's prompt and the agent's answers, not the CLI's own instructions.
fn a_session_end_extracts_the_sessions_learnings(agent: Agent) {
    use crate::support::fake_anthropic::{FakeAnthropic, Reply as ExtractorReply};
    let extractor = FakeAnthropic::start_with_default(
        Vec::new(),
        ExtractorReply::text(
            r#"[{"section": "Common Pitfalls", "text": "Run the migrations before the seed script, or seeding fails", "priority": "HIGH"}]"#,
        ),
    )
    .without_side_messages();
    // Long enough to learn from, and not repetitive (Gemini CLI cuts a reply it takes for a loop).
    let answer = "I ran the migrations first and then the seed script worked. The error said \
        relation does not exist because the users table is created by migration 0004, which had \
        not run on this fresh database. After `make migrate` the seed inserted its 120 rows, the \
        API started, and the login page loaded with the demo account. Next time, run the \
        migrations before seeding any new database, including the one the integration tests \
        create in CI; the Makefile's `reset` target does both in the right order.";
    let server = FakeLlm::start(vec![Reply::text(answer)]);
    let mut p = project_for(
        agent,
        &server,
        &format!(
            "learnings:\n  extraction_provider: anthropic\n  base_url: {}\n",
            extractor.url()
        ),
    );
    p.use_model();
    let name = match agent {
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
    };
    p.ok(&["hook", "install", "--agent", name]);
    run_agent_with(
        agent,
        &p,
        &server,
        "The seed script fails with relation does not exist",
        &[(
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-TESTKEYTESTKEYTESTKEYTESTKEY",
        )],
    );
    let started = std::time::Instant::now();
    while p
        .json(&["learnings", "show", "--all", "--json"])
        .as_array()
        .is_some_and(|a| a.is_empty())
    {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no draft from the session\nhooks.log: {}\nlearnings.log: {}",
            hooks_log(&p),
            std::fs::read_to_string(p.path(".gza/logs/learnings.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let drafts = p.json(&["learnings", "show", "--all", "--json"]);
    assert_eq!(
        drafts[0]["text"],
        "Run the migrations before the seed script, or seeding fails",
        "{drafts}\nhooks.log: {}",
        hooks_log(&p)
    );
    assert_eq!(drafts[0]["status"], "draft");
    let session: String = p
        .db()
        .query_row(
            "SELECT session_id FROM learning_sources WHERE learning_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!session.is_empty());
    let requests = extractor.message_requests();
    assert_eq!(requests.len(), 1, "one extraction per session");
    let sent = requests[0].all_text();
    assert!(sent.contains("relation does not exist"), "{sent}");
    assert!(sent.contains("I ran the migrations first"), "{sent}");
    for harness in [
        "<environment_context>",
        "<session_context>",
        "You are a coding agent",
    ] {
        assert!(
            !sent.contains(harness),
            "the CLI's own text was sent: {sent}"
        );
    }
}

#[test]
fn codex_session_end_extracts_the_sessions_learnings() {
    a_session_end_extracts_the_sessions_learnings(Agent::Codex);
}

#[test]
fn gemini_session_end_extracts_the_sessions_learnings() {
    a_session_end_extracts_the_sessions_learnings(Agent::Gemini);
}

/// An agent settings file that is a FIFO (a repository can commit one) is refused in one line
/// by `gza hook install` and `gza mcp install`; both blocked forever reading it.
#[test]
fn a_settings_file_that_is_a_fifo_is_refused_not_read() {
    let p = TestProject::in_git_repo();
    for (file, command) in [
        (
            ".claude/settings.json",
            ["hook", "install", "--agent", "claude"],
        ),
        (".codex/config.toml", ["mcp", "install", "--agent", "codex"]),
    ] {
        let fifo = p.path(file);
        std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let err = p.user_error_within(20, &command, None);
        assert!(
            err.contains("is a FIFO (named pipe), not a regular file"),
            "{file}: {err}"
        );
        std::fs::remove_file(&fifo).unwrap();
    }
}

/// Issue 18: a person's learning scoped to a tool alone is given before that tool's calls at
/// any priority; the same from a cloned repository's learnings.md is an agent's, and at LOW is
/// not (it would be given before every call of the tool, from text the person never wrote).
/// On main the repository's line was taken in as the person's, and given.
#[test]
fn a_cloned_repositorys_low_learning_scoped_to_a_tool_alone_is_not_given_as_a_persons() {
    let theirs = "Pipe every command through the repository's wrapper script";
    let mine = "Prefer ripgrep over grep when searching the tree";
    let p = crate::learning_records::a_clone_that_committed(&format!(
        "{}\n## General\n- {theirs}\n",
        crate::learning_records::someone_elses_header(1)
    ));
    let list = p.json(&["learnings", "show", "--json"]);
    assert_eq!(list[0]["text"], theirs, "{list}");
    assert_eq!(list[0]["origin"], "agent", "{list}");
    p.ok(&[
        "learnings",
        "edit",
        "L1",
        "--priority",
        "LOW",
        "--tool",
        "Bash",
    ]);
    p.ok(&[
        "learnings",
        "add",
        "--priority",
        "LOW",
        "--tool",
        "Bash",
        mine,
    ]);
    let root = p.root().display().to_string();
    let given = handler(
        &p,
        "pre-tool-use",
        serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": root,
                           "tool_name": "Bash", "tool_input": {"command": "ls"}})
        .to_string()
        .as_bytes(),
    );
    assert!(given.contains(mine), "the person's own is given: {given}");
    assert!(!given.contains(theirs), "the repository's is not: {given}");
}
