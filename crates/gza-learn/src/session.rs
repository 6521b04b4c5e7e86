//! Learning from an agent session's transcript (seed 000: Claude Code's, Codex's and Gemini CLI's): once per session, in a process
//! the SessionEnd hook starts detached. Trivial sessions are skipped, secrets are redacted
//! first, the input is bounded, and what is learned lands as drafts.

use std::path::Path;

use serde_json::Value;

use super::dedupe;
use super::extract;
use super::items::{self, MAX_ITEMS_PER_TASK};
use super::rank::Ranker;
use gza_core::error::{Error, Result};
use gza_core::learning::Status;
use gza_core::project::Project;
use gza_core::redact::redact_secrets;
use gza_store::{Store, Taught};

/// How much of a transcript's end is read.
pub const TRANSCRIPT_TAIL_BYTES: u64 = 4 * 1024 * 1024;

/// Characters of a transcript sent for extraction: the start (what was asked) and the end.
const HEAD_CHARS: usize = 3_000;
const TAIL_CHARS: usize = 9_000;
/// A session with fewer prompts and less assistant text than this taught nothing worth a call.
const MIN_PROMPTS: usize = 1;
const MIN_ASSISTANT_CHARS: usize = 400;

/// What a session said, in order: (role, text), from the transcript of any of the agent CLIs
/// gza has hooks for (each line is read as the format it is in; other lines are skipped):
///
/// - Claude Code: `{"type": "user"|"assistant", "message": {"content": [{"type": "text", …}]}}`;
/// - Codex 0.169's rollout: `{"type": "response_item", "payload": {"type": "message", "role":
///   "user"|"assistant", "content": [{"type": "input_text"|"output_text", "text": …}]}}`
///   (developer messages are Codex's own instructions, and are left out);
/// - Gemini CLI 0.61's chat: `{"id": …, "type": "user"|"gemini", "content": "…" | [{"text": …}]}`,
///   where a message written again under the same id (with its tool calls) replaces the first.
///
/// User messages that are a harness's context, not the person (`<environment_context>…`,
/// `<session_context>…`), are left out.
fn conversation(transcript: &Path) -> Result<Vec<(String, String)>> {
    // Bounded: only the end of a huge transcript is read, and only from a regular file.
    let text = gza_core::fsutil::read_regular_tail(transcript, TRANSCRIPT_TAIL_BYTES)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| gza_core::fsutil::read_refused(transcript, e))?;
    let mut turns: Vec<(String, String)> = Vec::new();
    let mut by_id: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some((role, content, id)) = turn_of(&entry) else {
            continue;
        };
        let said = content_text(content);
        if said.trim().is_empty() || (role == "user" && is_harness_context(&said)) {
            continue;
        }
        match id.and_then(|id| by_id.get(id).copied()) {
            Some(i) => turns[i] = (role.to_string(), said),
            None => {
                if let Some(id) = id {
                    by_id.insert(id.to_string(), turns.len());
                }
                turns.push((role.to_string(), said));
            }
        }
    }
    Ok(turns)
}

/// A transcript line's role, content and (Gemini) message id, in whichever CLI's format it is.
fn turn_of(entry: &Value) -> Option<(&'static str, &Value, Option<&str>)> {
    let kind = entry.get("type").and_then(Value::as_str)?;
    let role = |r: &str| match r {
        "user" => Some("user"),
        "assistant" | "gemini" => Some("assistant"),
        _ => None,
    };
    if kind == "response_item" {
        let payload = entry.get("payload")?;
        if payload.get("type").and_then(Value::as_str) != Some("message") {
            return None;
        }
        let r = role(payload.get("role").and_then(Value::as_str)?)?;
        return Some((r, payload.get("content")?, None));
    }
    let r = role(kind)?;
    if let Some(content) = entry.pointer("/message/content") {
        return Some((r, content, None));
    }
    // Gemini CLI: the content is on the entry, which has an id.
    let content = entry.get("content")?;
    Some((r, content, entry.get("id").and_then(Value::as_str)))
}

/// The text of a message's content: a string, or the text of its blocks (tool calls, tool
/// results and images are left out).
fn content_text(content: &Value) -> String {
    let mut said = String::new();
    match content {
        Value::String(s) => said.push_str(s),
        Value::Array(blocks) => {
            for b in blocks {
                let kind = b.get("type").and_then(Value::as_str);
                if matches!(kind, None | Some("text" | "input_text" | "output_text"))
                    && let Some(t) = b.get("text").and_then(Value::as_str)
                {
                    said.push_str(t);
                    said.push('\n');
                }
            }
        }
        _ => {}
    }
    said
}

/// Whether a user message is context a CLI added (`<environment_context>…</environment_context>`,
/// `<session_context>…`) rather than what the person typed.
fn is_harness_context(text: &str) -> bool {
    let t = text.trim_start();
    let Some(rest) = t.strip_prefix('<') else {
        return false;
    };
    let tag: String = rest
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
        .collect();
    tag.len() > 2 && rest[tag.len()..].starts_with('>') && tag.contains('_')
}

/// The extraction message for a conversation, redacted and bounded; `None` when trivial.
pub fn session_message(turns: &[(String, String)]) -> Option<String> {
    let prompts = turns.iter().filter(|(r, _)| r == "user").count();
    let assistant: usize = turns
        .iter()
        .filter(|(r, _)| r == "assistant")
        .map(|(_, t)| t.len())
        .sum();
    if prompts < MIN_PROMPTS || assistant < MIN_ASSISTANT_CHARS {
        return None;
    }
    let mut all = String::new();
    for (role, text) in turns {
        all.push_str(&format!("[{role}]\n{}\n", text.trim_end()));
    }
    // Redacted whole before it is cut, so a cut cannot leave part of a key unrecognised.
    let all = redact_secrets(&all);
    let chars: Vec<char> = all.chars().collect();
    let body = if chars.len() <= HEAD_CHARS + TAIL_CHARS {
        all
    } else {
        let head: String = chars[..HEAD_CHARS].iter().collect();
        let tail: String = chars[chars.len() - TAIL_CHARS..].iter().collect();
        format!("{head}\n[… middle of the session left out …]\n{tail}")
    };
    Some(redact_secrets(&gza_core::fence::fenced(
        gza_core::fence::Fence::ClaudeCodeSession,
        &body,
    )))
}

/// Extract 0-3 draft learnings from a session's transcript, once per session.
pub fn extract_session(
    project: &Project,
    store: &Store,
    session: &str,
    transcript: &Path,
) -> Result<String> {
    let config = &project.config.learnings;
    let Some(client) =
        gza_llm::client_for(config, &project.config.providers.claude.path).map_err(Error::from)?
    else {
        return Ok("no extraction model is configured".into());
    };
    let turns = conversation(transcript)?;
    let Some(message) = session_message(&turns) else {
        return Ok(format!("session {session} is too short to learn from"));
    };
    if !store.claim_session_extraction(session, client.provider(), client.model())? {
        return Ok(format!("session {session} was already extracted"));
    }
    let reply = client
        .complete(&extract::instructions(&config.sections), &message)
        .map_err(|e| Error::Usage(format!("extraction failed: {e}")))?;
    store.finish_session_extraction(session, (reply.input_tokens, reply.output_tokens))?;
    let found = items::parse_reply(&reply.text, &config.sections, MAX_ITEMS_PER_TASK);
    let known = store.learnings(true)?;
    let ranker = Ranker::load(project);
    let mut taught = dedupe::decide(
        &found,
        gza_core::learning::Origin::Llm,
        &known,
        Some(&ranker),
        store,
    );
    super::neighbours::screen_taught(project, Some(&ranker), &mut taught);
    // What says the same as a known learning confirms it, with the session as its evidence,
    // as a task's extraction does.
    let mut drafts = Vec::new();
    let mut confirmed = Vec::new();
    for t in taught {
        match t {
            Taught::New(mut l) => {
                l.status = Status::Draft;
                drafts.push(*l);
            }
            Taught::Confirms(id) => confirmed.push(id),
        }
    }
    let ids = store.add_session_learnings(session, &drafts)?;
    store.record_session_confirmations(session, &confirmed)?;
    let _ = ranker.embed_missing(store);
    Ok(format!(
        "session {session}: {} draft(s) and {} confirmation(s) from {} item(s)",
        ids.len(),
        confirmed.len(),
        found.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(lines: &[serde_json::Value]) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        std::fs::write(f.path(), text.join("\n")).unwrap();
        f
    }

    #[test]
    fn codex_rollouts_are_read_without_codexs_own_instructions() {
        use serde_json::json;
        let msg = |role: &str, kind: &str, text: &str| {
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "message",
                "role": role, "content": [{"type": kind, "text": text}]}})
        };
        let f = transcript(&[
            json!({"type": "session_meta", "payload": {"id": "x"}}),
            msg(
                "developer",
                "input_text",
                "You are Codex; follow the sandbox rules",
            ),
            msg(
                "user",
                "input_text",
                "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>",
            ),
            msg("user", "input_text", "Seed the database"),
            json!({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "arguments": "{}"}}),
            msg(
                "assistant",
                "output_text",
                "The seed needs the migrations first.",
            ),
            json!({"type": "event_msg", "payload": {"type": "task_complete"}}),
        ]);
        let turns = conversation(f.path()).unwrap();
        assert_eq!(
            turns,
            [
                ("user".to_string(), "Seed the database\n".to_string()),
                (
                    "assistant".to_string(),
                    "The seed needs the migrations first.\n".to_string()
                ),
            ]
        );
    }

    #[test]
    fn gemini_chats_are_read_with_a_rewritten_message_once() {
        use serde_json::json;
        let f = transcript(&[
            json!({"sessionId": "s", "projectHash": "h", "kind": "main"}),
            json!({"$set": {"messages": [{"id": "c", "type": "user", "content": [{"text": "<session_context>\nThis is the Gemini CLI.</session_context>"}]}]}}),
            json!({"id": "u1", "type": "user", "content": [{"text": "Seed the database"}]}),
            json!({"id": "g1", "type": "gemini", "content": "", "tokens": {}}),
            json!({"$set": {"lastUpdated": "t"}}),
            json!({"id": "g1", "type": "gemini", "content": "Running the migrations.", "toolCalls": []}),
            json!({"id": "u2", "type": "user", "content": [{"functionResponse": {"name": "run_shell_command", "response": {}}}]}),
            json!({"id": "g2", "type": "gemini", "content": "The seed needs the migrations first."}),
        ]);
        let turns = conversation(f.path()).unwrap();
        assert_eq!(
            turns,
            [
                ("user".to_string(), "Seed the database\n".to_string()),
                (
                    "assistant".to_string(),
                    "Running the migrations.".to_string()
                ),
                (
                    "assistant".to_string(),
                    "The seed needs the migrations first.".to_string()
                ),
            ]
        );
    }

    #[test]
    fn trivial_sessions_are_skipped_and_long_ones_bounded_and_redacted() {
        let t = |r: &str, s: &str| (r.to_string(), s.to_string());
        assert!(session_message(&[t("user", "hi"), t("assistant", "Hello!")]).is_none());
        let long = vec![
            t(
                "user",
                "Fix the export; key sk-ant-api03-SECRETSECRETSECRETSECRET",
            ),
            t("assistant", &"a".repeat(50_000)),
        ];
        let m = session_message(&long).unwrap();
        assert!(m.len() < 13_000, "{}", m.len());
        assert!(!m.contains("SECRETSECRET"));
        assert!(m.contains("middle of the session left out"));
    }

    #[test]
    fn a_key_the_cut_goes_through_is_not_half_kept() {
        let t = |r: &str, s: &str| (r.to_string(), s.to_string());
        // `[user]\n` and 2,985 characters, then a key that the 3,000-character head cuts.
        let prompt = format!(
            "{} ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "p".repeat(2_984)
        );
        let m =
            session_message(&[t("user", &prompt), t("assistant", &"a".repeat(50_000))]).unwrap();
        assert!(!m.contains("ghp_AbCd"), "{}", &m[2_900..3_100]);
    }
}
