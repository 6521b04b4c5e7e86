//! Drafts that say what a known learning says, whichever way they arrive (a session's Stop or
//! SessionEnd hook, a session's extraction, the MCP `add_learning` tool, an agent's LEARNINGS.md),
//! confirm that learning with their provenance instead of becoming a second record: by the same
//! stemmed words at once, by the same meaning where the model first embeds them.

use serde_json::json;

use crate::mcp::Client;
use crate::support::fake_anthropic::{FakeAnthropic, Reply};
use crate::support::project::{TestProject, wait_until};

const KNOWN: &str = "Run pytest -q tests/ before finishing the task";
/// [`KNOWN`] in fewer words: the same stemmed words (5 of 6), not the same text.
const SAME_WORDS: &str = "Run pytest -q tests/ before finishing";
const OTHER: &str = "Restart the dev server after editing vite.config.ts";

/// Send `message` as the turn's last message to the Stop hook of session `session`.
fn stop(p: &TestProject, session: &str, message: &str) {
    p.hook(
        "stop",
        &json!({"hook_event_name": "Stop", "session_id": session, "cwd": p.root(),
               "last_assistant_message": message}),
    );
}

fn block(label: &str) -> String {
    format!("Done.\n[PROCESS_KNOWLEDGE]\nlabel: {label}\n[/PROCESS_KNOWLEDGE]\n")
}

/// Every learning's text, oldest first (any status; the spool taken in first).
fn texts(p: &TestProject) -> Vec<String> {
    p.json(&["learnings", "show", "--all", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap().to_string())
        .collect()
}

/// How learning `id` was taught or confirmed: (task, session, kind), oldest first.
fn sources(p: &TestProject, id: i64) -> Vec<(Option<i64>, Option<String>, String)> {
    let db = p.db();
    let mut statement = db
        .prepare(
            "SELECT task_id, session_id, kind FROM learning_sources WHERE learning_id = ?1 \
             ORDER BY created_at, kind",
        )
        .unwrap();
    statement
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn confidence(p: &TestProject, id: i64) -> f64 {
    p.db()
        .query_row(
            "SELECT confidence FROM learnings WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_sessions_draft_in_the_same_words_confirms_the_learning_with_the_session() {
    let p = TestProject::new();
    p.ok(&["learnings", "add", KNOWN]);
    let before = confidence(&p, 1);
    stop(&p, "s1", &format!("{}{}", block(SAME_WORDS), block(OTHER)));
    assert_eq!(texts(&p), [KNOWN, OTHER], "one record per idea");
    assert_eq!(
        sources(&p, 1),
        [(None, Some("s1".to_string()), "confirmed".to_string())]
    );
    assert!(confidence(&p, 1) > before, "confirming raises confidence");
    // A second session saying it again confirms it again; the draft that says something else
    // stays a draft of its own.
    stop(&p, "s2", &block(SAME_WORDS));
    assert_eq!(texts(&p), [KNOWN, OTHER]);
    assert_eq!(sources(&p, 1).len(), 2, "{:?}", sources(&p, 1));
}

#[test]
fn the_mcp_tool_confirms_a_learning_said_in_the_same_words() {
    let p = TestProject::new();
    p.ok(&["learnings", "add", KNOWN]);
    let mut c = Client::start(&p, None);
    let again = c.ok("add_learning", json!({"text": SAME_WORDS}));
    assert!(again.starts_with("L1 already says this"), "{again}");
    let other = c.ok("add_learning", json!({"text": OTHER}));
    assert!(other.starts_with("Added L"), "{other}");
    c.finish();
    assert_eq!(texts(&p), [KNOWN, OTHER]);
    let confirmed = sources(&p, 1);
    assert_eq!(confirmed.len(), 1, "{confirmed:?}");
    assert!(
        confirmed[0]
            .1
            .as_deref()
            .is_some_and(|s| s.starts_with("mcp-"))
            && confirmed[0].2 == "confirmed",
        "{confirmed:?}"
    );
}

/// An agent that writes LEARNINGS.md from $RULES (a printf format) and a code file.
const RULE_WRITER: &str =
    "cat > /dev/null\nprintf \"$RULES\" > LEARNINGS.md\necho change > code.txt\necho done\n";

#[test]
fn an_agents_learnings_md_rule_in_the_same_words_confirms_the_learning_with_the_task() {
    let mut p = TestProject::in_git_repo();
    p.command_agent(RULE_WRITER, "learnings:\n  extraction_provider: none\n");
    p.ok(&["learnings", "add", KNOWN]);
    p.set_env(
        "RULES",
        &format!("# Learnings\\n---\\n{SAME_WORDS}\\n---\\n{OTHER}\\n"),
    );
    p.add(&["write code"]);
    p.ok(&["work"]);
    assert_eq!(texts(&p), [KNOWN, OTHER]);
    assert_eq!(sources(&p, 1), [(Some(1), None, "confirmed".to_string())]);
}

#[test]
fn a_session_extraction_that_finds_a_known_learning_confirms_it_with_the_session() {
    let server = FakeAnthropic::start_with_default(
        Vec::new(),
        Reply::text(format!(
            r#"[{{"section": "Common Pitfalls", "text": "{SAME_WORDS}"}}]"#
        )),
    )
    .without_side_messages();
    let mut p = TestProject::in_git_repo();
    p.config(&format!(
        "learnings:\n  extraction_provider: anthropic\n  base_url: {}\n",
        server.url()
    ));
    p.set_env(
        "ANTHROPIC_API_KEY",
        "sk-ant-api03-TESTKEYTESTKEYTESTKEYTESTKEY",
    );
    p.ok(&["learnings", "add", KNOWN]);
    let transcript = p.path("session.jsonl");
    let turn = |role: &str, text: &str| {
        json!({"type": role, "message": {"role": role, "content": [{"type": "text", "text": text}]}}).to_string()
    };
    std::fs::write(
        &transcript,
        [
            turn("user", "The task is not done until the tests pass"),
            turn(
                "assistant",
                &"I ran pytest -q tests/ and fixed the failures before finishing. ".repeat(20),
            ),
        ]
        .join("\n"),
    )
    .unwrap();
    let end = json!({"hook_event_name": "SessionEnd", "session_id": "sess-1", "cwd": p.root(),
        "transcript_path": transcript, "reason": "exit"});
    p.hook("session-end", &end);
    wait_until(20, "the session's confirmation", || {
        !sources(&p, 1).is_empty()
    });
    assert_eq!(
        sources(&p, 1),
        [(None, Some("sess-1".to_string()), "confirmed".to_string())]
    );
    assert_eq!(texts(&p), [KNOWN]);
}

/// By meaning, with the model: the hook stores the draft as written (it computes no
/// embedding), and where the draft is first embedded it is folded into the learning that says
/// the same in other words; a draft that merely shares words is kept.
#[test]
fn a_sessions_draft_in_other_words_is_merged_by_meaning_once_embedded() {
    let mut p = TestProject::new();
    p.use_model();
    p.ok(&["learnings", "add", "Run cargo nextest before every commit"]);
    stop(
        &p,
        "s1",
        &format!(
            "{}{}",
            block("Execute cargo nextest ahead of each commit"),
            block("Run cargo clippy before every commit")
        ),
    );
    // The next command embeds what lacks a vector (or the job the hook started already has).
    p.ok(&["learnings", "add", OTHER]);
    wait_until(30, "the paraphrase merged", || texts(&p).len() == 3);
    assert_eq!(
        texts(&p),
        [
            "Run cargo nextest before every commit",
            "Run cargo clippy before every commit",
            OTHER
        ]
    );
    assert_eq!(
        sources(&p, 1),
        [(None, Some("s1".to_string()), "confirmed".to_string())]
    );
}

/// The Stop hook settles within its budget: it compares a draft with the few learnings the
/// ranking index finds sharing its terms (never every learning), so a draft in the same words
/// as one indexed among hundreds still confirms it at once.
#[test]
fn a_stop_hooks_draft_finds_its_learning_through_the_ranking_index() {
    let p = TestProject::new();
    let mut file = format!("# Project Learnings\n\n## General\n- {KNOWN}\n");
    for i in 0..300 {
        file.push_str(&format!("- Calibrate widget {i} with the flux gauge\n"));
    }
    std::fs::write(p.path(".gza/learnings.md"), file).unwrap();
    p.ok(&["learnings", "show"]);
    assert_eq!(texts(&p).len(), 301);
    // The background job builds the index (by words: no model here).
    p.settle();
    p.ok(&["hook", "embed"]);
    assert!(p.path(".gza/rank-index-v2.bin").is_file());
    stop(&p, "s1", &block(SAME_WORDS));
    assert_eq!(texts(&p).len(), 301, "the draft confirmed the learning");
    assert_eq!(
        sources(&p, 1),
        [(None, Some("s1".to_string()), "confirmed".to_string())]
    );
}
