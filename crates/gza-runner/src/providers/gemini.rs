//! Gemini CLI: `gemini -p PROMPT --output-format stream-json --yolo`.
//!
//! Events: `init` (session_id, model), `message` (role, content; `delta: true` continues the
//! current message), `tool_use`, `tool_result`, and `result` (status, stats with input_tokens,
//! output_tokens, tool_calls). Gemini takes the prompt as an argument and reports no cost.
//! A turn is counted per model response: the first assistant message or tool call after the
//! start or after a tool result. A failed `result` carries `error.message`.
//!
//! Gemini CLI does not trust a folder it has not been told about, and in an untrusted folder it
//! silently turns `--yolo` back into "ask first", which a headless run cannot answer: the agent
//! then cannot write. gza's worktrees are new folders, so gza sets `GEMINI_CLI_TRUST_WORKSPACE=true`
//! for the agent unless the environment already sets it.

use serde_json::Value;

use super::{
    AgentReport, AgentRequest, Invocation, Progress, StreamParser, Verdict, bound_output, one_line,
};
use gza_core::config::Config;
use gza_core::task::FailureReason;

pub fn invocation(config: &Config, request: &AgentRequest) -> Invocation {
    let c = &config.providers.gemini;
    let mut args: Vec<String> = vec![
        "-p".into(),
        request.prompt.into(),
        "--output-format".into(),
        "stream-json".into(),
        "--yolo".into(),
    ];
    if let Some(model) = request.model {
        // One argument: a model's name from a task or a file can never be read as an option.
        args.push(format!("--model={model}"));
    }
    args.extend(c.args.iter().cloned());
    let env = if std::env::var_os("GEMINI_CLI_TRUST_WORKSPACE").is_none() {
        vec![("GEMINI_CLI_TRUST_WORKSPACE".to_string(), "true".to_string())]
    } else {
        Vec::new()
    };
    Invocation {
        program: c.path_or("gemini").to_string(),
        args,
        prompt_on_stdin: false,
        env,
    }
}

#[derive(Default)]
pub struct GeminiParser {
    session_id: Option<String>,
    model: Option<String>,
    turns: i64,
    in_turn: bool,
    current: String,
    last_message: Option<String>,
    result: Option<Value>,
    retry: Option<super::Retry>,
}

/// Gemini CLI's retry, on stderr: `Attempt 1 failed with status 500. Retrying with backoff...
/// <the error>` (its last attempt says `Attempt 3 failed: … Max attempts reached`, no retry).
fn retrying(line: &str) -> Option<super::Retry> {
    let rest = line.trim().strip_prefix("Attempt ")?;
    let (attempt, rest) = rest.split_once(' ')?;
    let attempt: u32 = attempt.parse().ok()?;
    let (failed, error) = rest.split_once("Retrying with backoff...")?;
    let status = failed
        .trim()
        .strip_prefix("failed with status ")
        .map(|s| format!("HTTP {}", s.trim().trim_end_matches('.')))
        .unwrap_or_else(|| "failed".into());
    let detail = error.trim();
    let error = if detail.is_empty() {
        status
    } else {
        format!("{status}: {detail}")
    };
    Some(super::Retry {
        attempt,
        max: None,
        error: one_line(&gza_core::redact::redact_secrets(&error), 80),
        delay_ms: None,
    })
}

impl GeminiParser {
    fn close_message(&mut self) {
        if !self.current.is_empty() {
            self.last_message = Some(std::mem::take(&mut self.current));
        }
    }
}

impl GeminiParser {
    fn start_turn(&mut self) {
        if !self.in_turn {
            self.turns += 1;
            self.in_turn = true;
        }
    }
}

impl StreamParser for GeminiParser {
    fn line(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            return;
        };
        // The API answered again.
        self.retry = None;
        match event["type"].as_str() {
            Some("init") => {
                self.session_id = event["session_id"].as_str().map(String::from);
                self.model = event["model"].as_str().map(String::from);
            }
            Some("message") if event["role"] == "assistant" => {
                let content = event["content"].as_str().unwrap_or("");
                if event["delta"] != true || self.current.is_empty() {
                    self.close_message();
                }
                self.start_turn();
                self.current.push_str(content);
            }
            Some("tool_use") => {
                self.close_message();
                self.start_turn();
            }
            Some("tool_result") => self.in_turn = false,
            Some("result") => {
                self.close_message();
                self.result = Some(event);
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

    fn stderr_line(&mut self, line: &str) {
        if let Some(retry) = retrying(line) {
            self.retry = Some(retry);
        }
    }

    fn finish(mut self: Box<Self>, _exit_ok: bool) -> AgentReport {
        self.close_message();
        let stats = self
            .result
            .as_ref()
            .map(|r| r["stats"].clone())
            .unwrap_or(Value::Null);
        let verdict = match &self.result {
            None => Verdict::NoResult,
            Some(r) if r["status"] == "success" => Verdict::Success,
            Some(r) => Verdict::Failed {
                reason: FailureReason::AgentError,
                detail: one_line(
                    &r["error"]["message"]
                        .as_str()
                        .map(String::from)
                        .unwrap_or_else(|| r["error"].to_string()),
                    300,
                ),
            },
        };
        AgentReport {
            verdict,
            output: self.last_message.as_deref().map(bound_output),
            session_id: self.session_id,
            model: self.model,
            cost_usd: None,
            input_tokens: stats["input_tokens"].as_i64(),
            output_tokens: stats["output_tokens"].as_i64(),
            num_turns: Some(self.turns),
        }
    }
}

pub fn render(line: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line).ok()?;
    match event["type"].as_str()? {
        "init" => Some(format!(
            "── session {} · model {}",
            event["session_id"].as_str().unwrap_or("?"),
            event["model"].as_str().unwrap_or("?")
        )),
        "message" if event["role"] == "assistant" => event["content"].as_str().map(String::from),
        "tool_use" => Some(format!(
            "→ {} {}",
            event["tool_name"].as_str().unwrap_or("?"),
            super::claude::key_argument(&event["parameters"])
        )),
        "result" => Some(format!(
            "── result: {} · {} in / {} out tokens",
            event["status"].as_str().unwrap_or("?"),
            event["stats"]["input_tokens"].as_i64().unwrap_or(0),
            event["stats"]["output_tokens"].as_i64().unwrap_or(0)
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_is_read_from_stderr() {
        let mut p = Box::new(GeminiParser::default());
        p.line(r#"{"type":"init","session_id":"g-1","model":"gemini-2.5-pro"}"#);
        p.stderr_line("YOLO mode is enabled. All tool calls will be automatically approved.");
        assert_eq!(p.progress().retry, None);
        p.stderr_line(r#"Attempt 1 failed with status 503. Retrying with backoff... _ApiError: {"error":{"message":"overloaded"}}"#);
        let retry = p.progress().retry.expect("a retry");
        assert_eq!(retry.attempt, 1);
        assert!(retry.error.starts_with("HTTP 503: _ApiError"), "{retry:?}");
        // The last attempt's line is no retry; an answer clears it.
        p.stderr_line("Attempt 3 failed: boom. Max attempts reached");
        assert_eq!(p.progress().retry.map(|r| r.attempt), Some(1));
        p.line(r#"{"type":"message","role":"assistant","content":"ok","delta":true}"#);
        assert_eq!(p.progress().retry, None);
    }

    #[test]
    fn joins_deltas_and_reads_stats() {
        let mut p = Box::new(GeminiParser::default());
        for l in [
            r#"{"type":"init","session_id":"g-1","model":"gemini-2.5-pro"}"#,
            r#"{"type":"message","role":"user","content":"do it"}"#,
            r#"{"type":"message","role":"assistant","content":"Work","delta":true}"#,
            r#"{"type":"message","role":"assistant","content":"ing.","delta":true}"#,
            r#"{"type":"tool_use","tool_name":"write_file","parameters":{"file_path":"a"}}"#,
            r#"{"type":"tool_result","tool_id":"w1","status":"success"}"#,
            r#"{"type":"message","role":"assistant","content":"Done.","delta":true}"#,
            r#"{"type":"result","status":"success","stats":{"input_tokens":500,"output_tokens":20,"tool_calls":1}}"#,
        ] {
            p.line(l);
        }
        let r = p.finish(true);
        assert_eq!(r.verdict, Verdict::Success);
        assert_eq!(r.output.as_deref(), Some("Done."));
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.num_turns),
            (Some(500), Some(20), Some(2))
        );
    }
}
