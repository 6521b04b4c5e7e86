//! The newcomer's friction (issue 24) that finding work's engineer fixed, through the binary:
//! a dry run of `learnings update` that shows what the run writes (4), an import dry run that
//! shows the entries beside its problems and an imported learning that keeps its section (11),
//! an in-place task that changed the main checkout (14), and an agent retrying its API (16).

use insta::assert_snapshot;

use crate::support::claude::claude_bin;
use crate::support::fake_anthropic::{FakeAnthropic, Reply};
use crate::support::fake_llm::{FakeLlm, Reply as LlmReply};
use crate::support::project::TestProject;

/// An agent that prints what `LEARN_<task id>` holds as its own `## Learnings` list.
const TEACHING_AGENT: &str = "cat > /dev/null\necho \"Done task $GZA_TASK_ID.\"\n\
    eval \"lines=\\${LEARN_$GZA_TASK_ID:-}\"\n\
    if [ -n \"$lines\" ]; then printf '\\n## Learnings\\n%b\\n' \"$lines\"; fi\n";

/// What a dry run says the file would be.
fn previewed_file(dry: &str) -> String {
    let at = dry
        .find(" would be:\n")
        .expect("the dry run shows the file");
    dry[at + " would be:\n".len()..].to_string()
}

#[test]
fn learnings_update_dry_run_shows_exactly_the_file_the_run_writes() {
    let mut p = TestProject::new();
    p.command_agent(
        TEACHING_AGENT,
        "learnings:\n  extraction_provider: none\n  regenerate_every: 100\n",
    );
    // Two tasks teach the same thing (the run keeps it once), in sections of their own.
    p.set_env(
        "LEARN_1",
        "- [Testing Patterns] Run cargo test before committing\\n- Keep migrations append-only",
    );
    p.set_env(
        "LEARN_2",
        "- [Testing Patterns] Run cargo test before committing\\n- [Code Style] Prefer small commits",
    );
    p.add(&["one", "--type", "explore"]);
    p.add(&["two", "--type", "explore"]);
    p.ok(&["work", "--all"]);
    // A line the person added by hand, waiting to be taken in.
    std::fs::create_dir_all(p.path(".gza")).unwrap();
    let mut file = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap_or_default();
    file.push_str("- Ask before deleting data\n");
    std::fs::write(p.path(".gza/learnings.md"), file).unwrap();

    let dry = p.ok(&["learnings", "update", "--dry-run"]);
    assert!(
        dry.contains("Would add your line: Ask before deleting data"),
        "{dry}"
    );
    let before = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap();
    let dry_again = p.ok(&["learnings", "update", "--dry-run"]);
    assert_eq!(
        dry, dry_again,
        "a dry run changes nothing, so a second says the same"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap(),
        before
    );
    let count: i64 = p
        .db()
        .query_row("SELECT COUNT(*) FROM learnings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 0, "nothing recorded");

    p.ok(&["learnings", "update"]);
    let written = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap();
    assert_eq!(previewed_file(&dry), written);
    assert_eq!(
        written.matches("Run cargo test before committing").count(),
        1
    );
    assert!(!written.contains("<!-- L-"), "placeholder ids: {written}");
    // The version's mark is of this database's random nonce.
    let mark = regex::Regex::new(r" · mark [0-9a-f]{32} ").unwrap();
    assert_snapshot!(
        "dry_run_file",
        mark.replace(
            &written.replace(&chrono::Utc::now().format("%Y-%m-%d").to_string(), "[DATE]"),
            " · mark [MARK] "
        )
    );
    // And after a run, the next dry run is the next run.
    let dry = p.ok(&["learnings", "update", "--dry-run"]);
    p.ok(&["learnings", "update"]);
    assert_eq!(
        previewed_file(&dry),
        std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap()
    );
}

#[test]
fn an_import_dry_run_that_finds_problems_still_shows_every_entry() {
    let p = TestProject::new();
    std::fs::write(
        p.path("tasks.yaml"),
        "group: g\ntasks:\n  - prompt: First thing\n  - prompt: Second thing\n    type: nonsense\n  \
         - prompt: Third thing\n    depends_on: 7\n  - prompt: Fourth thing\n    depends_on: 1\n    review: true\n",
    )
    .unwrap();
    let run = p.run(&["import", "tasks.yaml", "--dry-run"]);
    assert_eq!(run.code, 1, "{run}");
    assert_snapshot!("import_dry_run_problems_and_entries", run.to_string());
    assert_eq!(p.ok(&["history", "--json"]).trim(), "[]");
}

#[test]
fn an_exported_learning_is_imported_into_its_section() {
    let p = TestProject::new();
    for i in 0..4 {
        let dir = p.path(&format!("src/m{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("errors.rs"),
            "use thiserror::Error;\n#[derive(Error, Debug)]\npub enum E {}\n",
        )
        .unwrap();
    }
    p.ok(&[
        "learnings",
        "add",
        "--section",
        "Code Style",
        "Library errors are thiserror enums",
    ]);
    p.ok(&["learnings", "validate"]);
    p.ok(&["learnings", "export", "out/expertise.yaml"]);
    let yaml = std::fs::read_to_string(p.path("out/expertise.yaml")).unwrap();
    assert!(yaml.contains("section: Code Style"), "{yaml}");

    let q = TestProject::new();
    q.ok(&[
        "learnings",
        "import",
        &p.path("out/expertise.yaml").to_string_lossy(),
    ]);
    let shown = q.json(&["learnings", "show", "L1", "--json"]);
    assert_eq!(shown["section"], "Code Style", "{shown}");
    // A file without sections (Python gza's) imports into the first configured one; a section
    // this project does not have falls back the same way.
    std::fs::write(
        q.path("plain.yaml"),
        "version: \"0.2.0\"\npatterns:\n  - pattern: Handlers return envelopes\n    confidence: high\n  \
         - pattern: Keep the changelog sorted\n    confidence: medium\n    section: No Such Section\n",
    )
    .unwrap();
    q.ok(&["learnings", "import", "plain.yaml"]);
    for id in ["L2", "L3"] {
        let shown = q.json(&["learnings", "show", id, "--json"]);
        assert_eq!(shown["section"], "General", "{shown}");
    }
}

#[test]
fn an_explore_task_that_changes_the_main_checkout_is_reported() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\ncase \"$GZA_TASK_ID\" in\n  1) echo scribble >> README.md; echo new > notes.txt ;;\n  2) : ;;\n  3) git -c user.name=a -c user.email=a@b commit -q --allow-empty -m sneaky ;;\nesac\necho looked around\n",
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    p.add(&["Look at the README", "--type", "explore"]);
    p.add(&["Only read", "--type", "explore"]);
    p.add(&["Commit something", "--type", "plan"]);
    let run = p.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    let err = run.normalized_stderr();
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("changed the main checkout"))
        .collect();
    assert_eq!(said.len(), 2, "{err}");
    assert_snapshot!("explore_changed_checkout", said[0]);
    assert!(said[1].starts_with("warning: task 3 (plan) changed the main checkout, which it should only read: HEAD moved from "), "{err}");
    // Said in the work log too.
    let log = std::fs::read_to_string(p.path(".gza/logs/work.log")).unwrap();
    assert!(
        log.contains("an in-place task changed the main checkout"),
        "{log}"
    );
    // The tasks' outcomes are theirs: reporting changes nothing of them.
    for id in 1..=3 {
        assert_eq!(p.task_field::<String>(id, "status"), "completed");
    }
}

/// The lines `gza work` printed about an agent retrying its API.
fn retry_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("retry "))
        .map(str::to_string)
        .collect()
}

#[test]
fn claude_code_retrying_a_rate_limited_call_is_shown_and_logged() {
    let Some(claude) = claude_bin() else { return };
    let server = FakeAnthropic::start(vec![
        Reply::Error {
            status: 429,
            message: "slow down".into(),
            retry_after: Some(1),
            should_retry: None,
        },
        Reply::text("Looked around."),
    ]);
    let mut p = TestProject::in_git_repo();
    p.config(&format!(
        "providers:\n  claude:\n    path: {}\n",
        claude.display()
    ));
    for (k, v) in server.claude_env() {
        p.set_env(k, &v);
    }
    p.add(&["look", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        retry_lines(&run.stderr),
        vec![
            "warning: task 1: the agent's API call failed (HTTP 429 rate_limit); retry 1 of 10 in 1s"
        ],
        "{run}"
    );
    let log = std::fs::read_to_string(p.path(".gza/logs/work.log")).unwrap();
    assert!(
        log.contains("the agent is retrying a failed API call"),
        "{log}"
    );
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
}

#[test]
fn codex_reconnecting_is_shown_and_is_not_a_failure() {
    let server = FakeLlm::start(vec![
        LlmReply::Status(500, "upstream fell over".into()),
        LlmReply::text("Looked around."),
    ]);
    let mut p = TestProject::in_git_repo();
    p.config(&format!(
        "provider: codex\nproviders:\n  codex:\n    path: {}\n",
        crate::support::agents::codex_bin().display()
    ));
    let dir = p.home().join(".codex");
    std::fs::create_dir_all(&dir).unwrap();
    // The test server's config, with one retry of the stream (the one Codex reports; its
    // retries of a request are silent).
    let config = server
        .codex_config("FAKE_OPENAI_KEY")
        .replace("stream_max_retries = 0", "stream_max_retries = 1");
    std::fs::write(dir.join("config.toml"), config).unwrap();
    p.set_env("FAKE_OPENAI_KEY", "test-openai-key");
    p.add(&["look", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let lines = retry_lines(&run.stderr);
    assert_eq!(lines.len(), 1, "{run}");
    assert!(
        lines[0].starts_with("warning: task 1: the agent's API call failed (")
            && lines[0].ends_with("); retry 1 of 1"),
        "{run}"
    );
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
}

#[test]
fn gemini_retrying_on_stderr_is_shown() {
    let server = FakeLlm::start(vec![
        LlmReply::Status(503, "overloaded".into()),
        LlmReply::text("Looked around."),
    ]);
    let mut p = TestProject::in_git_repo();
    p.config(&format!(
        "provider: gemini\nproviders:\n  gemini:\n    path: {}\n",
        crate::support::agents::gemini_bin().display()
    ));
    let dir = p.home().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        FakeLlm::gemini_settings().replace("\"maxAttempts\":1", "\"maxAttempts\":2"),
    )
    .unwrap();
    p.set_env("GEMINI_API_KEY", "test-gemini-key");
    p.set_env("GOOGLE_GEMINI_BASE_URL", &server.url());
    p.add(&["look", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let lines = retry_lines(&run.stderr);
    assert_eq!(lines.len(), 1, "{run}");
    assert!(
        lines[0].starts_with("warning: task 1: the agent's API call failed (HTTP 503")
            && lines[0].ends_with("; retry 1"),
        "{run}"
    );
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
}
