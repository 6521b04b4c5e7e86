//! OpenAI Codex CLI: `codex exec --json … -`, prompt on stdin.
//!
//! Events: `thread.started` (thread_id, the session), `turn.completed` (usage: input_tokens,
//! cached_input_tokens — a part of input_tokens — and output_tokens), `item.completed` whose item
//! is an `agent_message` (text), and `turn.failed` / `error`. Codex reports no cost, and gza does
//! not guess one from a price table that would go stale: cost is left empty, tokens are recorded.
//! `turn.completed` closes one user turn (one `codex exec`), however many model calls it made, so
//! the turns recorded for a Codex task are Codex's turns, not API requests; its usage already sums
//! the turn's requests.
//!
//! `codex exec` defaults to a read-only sandbox of its own, in which the agent cannot write a file
//! (the task "completes" with no change). Its `workspace-write` sandbox runs commands through
//! bubblewrap and a helper binary it installs under CODEX_HOME, which it refuses to do when that
//! lies under /tmp ("bwrap: execvp codex-linux-sandbox: No such file or directory"), and it cannot
//! nest inside gza's own sandbox. So isolation is gza's `sandbox` setting, and gza runs Codex with
//! `--dangerously-bypass-approvals-and-sandbox` unless `providers.codex.args` choose Codex's own
//! sandbox (`--sandbox`/`-s`, `--full-auto`).

use serde_json::Value;

use super::{
    AgentReport, AgentRequest, Invocation, Progress, StreamParser, Verdict, bound_output, one_line,
};
use gza_core::config::Config;
use gza_core::task::FailureReason;

pub fn invocation(config: &Config, request: &AgentRequest) -> Invocation {
    let c = &config.providers.codex;
    let chooses_own_sandbox = c.args.iter().any(|a| {
        a == "-s"
            || a == "--sandbox"
            || a.starts_with("--sandbox=")
            || a == "--full-auto"
            || a == "--dangerously-bypass-approvals-and-sandbox"
    });
    let mut args: Vec<String> = vec!["exec".into()];
    if let Some(session) = request.resume_session {
        args.extend(["resume".into(), session.into()]);
    }
    args.extend(["--json".into(), "--skip-git-repo-check".into()]);
    if !chooses_own_sandbox {
        args.push("--dangerously-bypass-approvals-and-sandbox".into());
    }
    if let Some(model) = request.model {
        // One argument: a model's name from a task or a file can never be read as an option.
        args.push(format!("--model={model}"));
    }
    args.extend(c.args.iter().cloned());
    args.push("-".into());
    Invocation {
        program: c.path_or("codex").to_string(),
        args,
        prompt_on_stdin: true,
        env: Vec::new(),
    }
}

#[derive(Default)]
pub struct CodexParser {
    session_id: Option<String>,
    turns: i64,
    input_tokens: i64,
    output_tokens: i64,
    last_message: Option<String>,
    error: Option<String>,
    retry: Option<super::Retry>,
}

/// Codex's retry of a dropped or failed stream: `Reconnecting... 2/5 (what failed)`.
fn reconnecting(message: &str) -> Option<super::Retry> {
    let rest = message.trim().strip_prefix("Reconnecting...")?.trim_start();
    let (count, why) = rest.split_once(' ').unwrap_or((rest, ""));
    let (attempt, max) = count.split_once('/')?;
    let why = why
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    Some(super::Retry {
        attempt: attempt.parse().ok()?,
        max: max.parse().ok(),
        error: one_line(if why.is_empty() { "stream error" } else { why }, 80),
        delay_ms: None,
    })
}

impl StreamParser for CodexParser {
    fn line(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let retry = (event["type"] == "error")
            .then(|| event["message"].as_str().and_then(reconnecting))
            .flatten();
        self.retry = retry;
        if self.retry.is_some() {
            // A retry is not the turn failing; if every retry fails, `turn.failed` says so.
            return;
        }
        match event["type"].as_str() {
            Some("thread.started") => {
                self.session_id = event["thread_id"].as_str().map(String::from)
            }
            Some("turn.completed") => {
                self.turns += 1;
                self.input_tokens += event["usage"]["input_tokens"].as_i64().unwrap_or(0);
                self.output_tokens += event["usage"]["output_tokens"].as_i64().unwrap_or(0);
            }
            Some("item.completed") if event["item"]["type"] == "agent_message" => {
                self.last_message = event["item"]["text"].as_str().map(String::from);
            }
            Some("turn.failed") => {
                self.error = Some(
                    event["error"]["message"]
                        .as_str()
                        .unwrap_or("turn failed")
                        .to_string(),
                );
            }
            Some("error") => {
                self.error = Some(event["message"].as_str().unwrap_or("error").to_string());
            }
            _ => {}
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            turns: self.turns,
            cost_usd: None,
            session_id: self.session_id.clone(),
            retry: self.retry.clone(),
        }
    }

    fn finish(self: Box<Self>, exit_ok: bool) -> AgentReport {
        let verdict = match (&self.error, self.turns) {
            (Some(e), _) => Verdict::Failed {
                reason: FailureReason::AgentError,
                detail: one_line(e, 300),
            },
            (None, 0) => Verdict::NoResult,
            (None, _) if !exit_ok => Verdict::NoResult,
            (None, _) => Verdict::Success,
        };
        AgentReport {
            verdict,
            output: self.last_message.as_deref().map(bound_output),
            session_id: self.session_id,
            model: None,
            cost_usd: None,
            input_tokens: Some(self.input_tokens),
            output_tokens: Some(self.output_tokens),
            num_turns: Some(self.turns),
        }
    }
}

pub fn render(line: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line).ok()?;
    match event["type"].as_str()? {
        "thread.started" => Some(format!(
            "── thread {}",
            event["thread_id"].as_str().unwrap_or("?")
        )),
        "item.completed" => {
            let item = &event["item"];
            match item["type"].as_str()? {
                "agent_message" | "reasoning" => {
                    item["text"].as_str().map(|t| t.trim().to_string())
                }
                "command_execution" => Some(format!(
                    "→ {}",
                    one_line(item["command"].as_str().unwrap_or(""), 100)
                )),
                "file_change" => Some(format!(
                    "→ edit {}",
                    one_line(&item["changes"].to_string(), 100)
                )),
                other => Some(format!("→ {other}")),
            }
        }
        "turn.completed" => Some(format!(
            "── turn: {} in / {} out tokens",
            event["usage"]["input_tokens"].as_i64().unwrap_or(0),
            event["usage"]["output_tokens"].as_i64().unwrap_or(0)
        )),
        "turn.failed" | "error" => Some(format!("✗ {}", one_line(&event.to_string(), 200))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reconnect_is_a_retry_not_a_failure() {
        let mut p = Box::new(CodexParser::default());
        p.line(r#"{"type":"thread.started","thread_id":"t-1"}"#);
        p.line(r#"{"type":"turn.started"}"#);
        p.line(r#"{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion: boom)"}"#);
        let retry = p.progress().retry.expect("a retry");
        assert_eq!((retry.attempt, retry.max), (1, Some(5)));
        assert_eq!(retry.error, "stream disconnected before completion: boom");
        assert_eq!(
            retry.describe(),
            "API call failed (stream disconnected before completion: boom); retry 1 of 5"
        );
        // The next attempt answers: no retry any more, and the task succeeds.
        p.line(
            r#"{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"Done."}}"#,
        );
        assert_eq!(p.progress().retry, None);
        p.line(r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#);
        assert_eq!(p.finish(true).verdict, Verdict::Success);
    }

    #[test]
    fn reads_session_usage_and_final_message() {
        let mut p = Box::new(CodexParser::default());
        for l in [
            r#"{"type":"thread.started","thread_id":"t-9"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"Done."}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":80}}"#,
        ] {
            p.line(l);
        }
        let r = p.finish(true);
        assert_eq!(r.verdict, Verdict::Success);
        assert_eq!(r.session_id.as_deref(), Some("t-9"));
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.num_turns),
            (Some(1200), Some(80), Some(1))
        );
        assert_eq!(r.output.as_deref(), Some("Done."));
        assert_eq!(r.cost_usd, None);
    }

    #[test]
    fn a_failed_turn_fails_the_task() {
        let mut p = Box::new(CodexParser::default());
        p.line(r#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#);
        assert!(matches!(
            p.finish(false).verdict,
            Verdict::Failed {
                reason: FailureReason::AgentError,
                ..
            }
        ));
    }
}
