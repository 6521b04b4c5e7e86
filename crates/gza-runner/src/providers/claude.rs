//! Claude Code: `claude -p --output-format stream-json --verbose`, prompt on stdin.
//! (`-p -` would not mean stdin: Claude Code would prepend a literal "-" to the prompt.)
//!
//! The stream is NDJSON: `system/init` (session_id, model), `assistant` messages (one per API
//! response; a message id can repeat across lines and is counted once), `user` tool results, and a
//! final `result` (subtype, is_error, total_cost_usd, usage, num_turns, session_id, result text).
//! Tokens are taken from the result's usage: input counts fresh, cache-write and cache-read input
//! tokens together. `stream-json` without `--verbose` fails, so both are always passed.

use std::collections::HashSet;

use serde_json::Value;

use super::{
    AgentReport, AgentRequest, Invocation, Progress, StreamParser, Verdict, bound_output, one_line,
};
use gza_core::config::Config;
use gza_core::task::FailureReason;
use gza_core::wire::input_tokens;

pub fn invocation(config: &Config, request: &AgentRequest) -> Invocation {
    let c = &config.providers.claude;
    let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(model) = request.model {
        // One argument: a model's name from a task or a file can never be read as an option.
        args.push(format!("--model={model}"));
    }
    args.extend(["--max-turns".into(), request.max_turns.to_string()]);
    if let Some(session) = request.resume_session {
        args.extend(["--resume".into(), session.into()]);
    }
    if !c.tools.is_empty() {
        // --allowedTools only pre-approves; --tools also keeps every other tool's schema out
        // of each request (about 15k input tokens a turn).
        args.extend(["--tools".into(), c.tools.join(",")]);
        args.push("--allowedTools".into());
        args.extend(c.tools.iter().cloned());
    }
    args.extend(c.args.iter().cloned());
    Invocation {
        program: c.path.clone(),
        args,
        prompt_on_stdin: true,
        env: Vec::new(),
    }
}

#[derive(Default)]
pub struct ClaudeParser {
    session_id: Option<String>,
    model: Option<String>,
    message_ids: HashSet<String>,
    input_tokens: i64,
    output_tokens: i64,
    last_text: Option<String>,
    result: Option<Value>,
    retry: Option<super::Retry>,
}

impl StreamParser for ClaudeParser {
    fn line(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let kind = event.get("type").and_then(Value::as_str);
        let subtype = event.get("subtype").and_then(Value::as_str);
        // Any other event means the API answered again.
        if (kind, subtype) != (Some("system"), Some("api_retry")) {
            self.retry = None;
        }
        match kind {
            Some("system") if subtype == Some("api_retry") => {
                let status = event["error_status"]
                    .as_i64()
                    .map(|s| format!("HTTP {s} "))
                    .unwrap_or_default();
                let error = event["error"].as_str().unwrap_or("error");
                self.retry = Some(super::Retry {
                    attempt: event["attempt"].as_u64().unwrap_or(1) as u32,
                    max: event["max_retries"].as_u64().map(|m| m as u32),
                    error: one_line(&format!("{status}{error}"), 80),
                    delay_ms: event["retry_delay_ms"].as_f64().map(|d| d as u64),
                });
            }
            Some("system") if subtype == Some("init") => {
                self.session_id = event["session_id"].as_str().map(String::from);
                self.model = event["model"].as_str().map(String::from);
            }
            Some("assistant") => {
                let message = &event["message"];
                let id = message["id"].as_str().unwrap_or_default().to_string();
                if self.message_ids.insert(id) {
                    let usage = &message["usage"];
                    self.input_tokens += input_tokens(usage);
                    self.output_tokens += usage["output_tokens"].as_i64().unwrap_or(0);
                }
                let text = gza_core::wire::text_blocks(&message["content"]);
                if !text.is_empty() {
                    self.last_text = Some(text.join("\n"));
                }
            }
            Some("result") => {
                if let Some(s) = event["session_id"].as_str() {
                    self.session_id = Some(s.to_string());
                }
                self.result = Some(event);
            }
            _ => {}
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            turns: self.message_ids.len() as i64,
            cost_usd: self
                .result
                .as_ref()
                .and_then(|r| r["total_cost_usd"].as_f64()),
            session_id: self.session_id.clone(),
            retry: self.retry.clone(),
        }
    }

    fn finish(self: Box<Self>, _exit_ok: bool) -> AgentReport {
        let Some(result) = &self.result else {
            return AgentReport {
                verdict: Verdict::NoResult,
                output: self.last_text.as_deref().map(bound_output),
                session_id: self.session_id.clone(),
                model: self.model.clone(),
                cost_usd: None,
                input_tokens: Some(self.input_tokens),
                output_tokens: Some(self.output_tokens),
                num_turns: Some(self.message_ids.len() as i64),
            };
        };
        let subtype = result["subtype"].as_str().unwrap_or("");
        let is_error = result["is_error"].as_bool().unwrap_or(false);
        let text = result["result"]
            .as_str()
            .map(String::from)
            .or(self.last_text.clone());
        let verdict = match subtype {
            "success" if !is_error => Verdict::Success,
            "error_max_turns" => Verdict::Failed {
                reason: FailureReason::MaxTurns,
                detail: "the agent reached max_turns".into(),
            },
            _ => Verdict::Failed {
                reason: FailureReason::AgentError,
                detail: match text.as_deref() {
                    Some(t) if !t.is_empty() => one_line(&gza_core::redact::redact_secrets(t), 300),
                    _ => format!("result {subtype}"),
                },
            },
        };
        let usage = &result["usage"];
        let (mut input, mut output) = if usage.is_object() {
            (
                input_tokens(usage),
                usage["output_tokens"].as_i64().unwrap_or(0),
            )
        } else {
            (self.input_tokens, self.output_tokens)
        };
        // After a cut stream Claude Code re-sends without streaming and leaves `usage` at zero,
        // while `modelUsage` still counts the reply.
        if let (0, 0, Some(models)) = (input, output, result["modelUsage"].as_object()) {
            for m in models.values() {
                input += [
                    "inputTokens",
                    "cacheCreationInputTokens",
                    "cacheReadInputTokens",
                ]
                .iter()
                .filter_map(|k| m[*k].as_i64())
                .sum::<i64>();
                output += m["outputTokens"].as_i64().unwrap_or(0);
            }
        }
        AgentReport {
            verdict,
            output: text.as_deref().map(bound_output),
            session_id: self.session_id.clone(),
            model: self.model.clone(),
            cost_usd: result["total_cost_usd"].as_f64(),
            input_tokens: Some(input),
            output_tokens: Some(output),
            num_turns: result["num_turns"]
                .as_i64()
                .or(Some(self.message_ids.len() as i64)),
        }
    }
}

/// The argument that says most about a tool call.
pub(crate) fn key_argument(input: &Value) -> String {
    for key in [
        "file_path",
        "command",
        "pattern",
        "path",
        "url",
        "query",
        "description",
        "prompt",
    ] {
        if let Some(v) = input.get(key).and_then(Value::as_str) {
            return one_line(v, 100);
        }
    }
    String::new()
}

pub fn render(line: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line).ok()?;
    match event["type"].as_str()? {
        "system" if event["subtype"] == "init" => Some(format!(
            "── session {} · model {}",
            event["session_id"].as_str().unwrap_or("?"),
            event["model"].as_str().unwrap_or("?")
        )),
        "assistant" => {
            let mut parts = Vec::new();
            for block in event["message"]["content"].as_array()? {
                match block["type"].as_str() {
                    Some("text") => {
                        parts.push(block["text"].as_str().unwrap_or("").trim().to_string())
                    }
                    Some("tool_use") => parts.push(format!(
                        "→ {} {}",
                        block["name"].as_str().unwrap_or("?"),
                        key_argument(&block["input"])
                    )),
                    _ => {}
                }
            }
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
        "user" => {
            let errors: Vec<String> = event["message"]["content"]
                .as_array()?
                .iter()
                .filter(|b| b["type"] == "tool_result" && b["is_error"] == true)
                .map(|b| format!("  ✗ {}", one_line(&b["content"].to_string(), 120)))
                .collect();
            (!errors.is_empty()).then(|| errors.join("\n"))
        }
        "result" => Some(format!(
            "── result: {}{} · {} turns · ${:.4} · {:.1}s",
            event["subtype"].as_str().unwrap_or("?"),
            if event["is_error"] == true {
                " (error)"
            } else {
                ""
            },
            event["num_turns"].as_i64().unwrap_or(0),
            event["total_cost_usd"].as_f64().unwrap_or(0.0),
            event["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_retry_event_is_progress_until_the_api_answers() {
        let mut p = Box::new(ClaudeParser::default());
        p.line(INIT);
        p.line(r#"{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":4000.5,"error_status":529,"error":"overloaded"}"#);
        let retry = p.progress().retry.expect("a retry");
        assert_eq!(
            retry.describe(),
            "API call failed (HTTP 529 overloaded); retry 2 of 10 in 4s"
        );
        p.line(MSG1);
        assert_eq!(p.progress().retry, None);
    }

    fn parse(lines: &[&str]) -> AgentReport {
        let mut p = Box::new(ClaudeParser::default());
        for l in lines {
            p.line(l);
        }
        p.finish(true)
    }

    const INIT: &str =
        r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-x"}"#;
    const MSG1: &str = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}}"#;
    const MSG1_AGAIN: &str = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","name":"Write","input":{"file_path":"a.txt"}}],"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}}"#;

    #[test]
    fn success_takes_figures_from_the_result() {
        let r = parse(&[
            INIT,
            MSG1,
            MSG1_AGAIN,
            r#"{"type":"result","subtype":"success","is_error":false,"num_turns":2,"total_cost_usd":0.0125,"session_id":"s-1","result":"All done","usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":40}}"#,
        ]);
        assert_eq!(r.verdict, Verdict::Success);
        assert_eq!(r.output.as_deref(), Some("All done"));
        assert_eq!(r.cost_usd, Some(0.0125));
        assert_eq!(r.input_tokens, Some(150));
        assert_eq!(r.output_tokens, Some(40));
        assert_eq!(r.num_turns, Some(2));
        assert_eq!(r.session_id.as_deref(), Some("s-1"));
        assert_eq!(r.model.as_deref(), Some("claude-x"));
    }

    #[test]
    fn message_ids_are_counted_once_without_a_result() {
        let r = parse(&[INIT, MSG1, MSG1_AGAIN, "garbage {", ""]);
        assert_eq!(r.verdict, Verdict::NoResult);
        assert_eq!(r.input_tokens, Some(15));
        assert_eq!(r.output_tokens, Some(3));
        assert_eq!(r.num_turns, Some(1));
    }

    #[test]
    fn max_turns_and_errors_are_failures() {
        let r = parse(&[
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3}"#,
        ]);
        assert!(matches!(
            r.verdict,
            Verdict::Failed {
                reason: FailureReason::MaxTurns,
                ..
            }
        ));
        let r = parse(&[
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500"}"#,
        ]);
        assert_eq!(
            r.verdict,
            Verdict::Failed {
                reason: FailureReason::AgentError,
                detail: "API Error: 500".into()
            }
        );
    }

    #[test]
    fn renders_tool_calls_with_their_key_argument() {
        assert_eq!(render(MSG1_AGAIN).as_deref(), Some("→ Write a.txt"));
        assert_eq!(render("not json"), None);
    }
}
