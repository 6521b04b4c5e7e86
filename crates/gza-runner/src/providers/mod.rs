//! Agent CLIs: how each is invoked, and how its output stream is read.
//!
//! A provider turns a task into an [`Invocation`] and supplies a [`StreamParser`] that reads the
//! agent's stdout line by line, tracks progress, and finally reports what the agent did.

mod claude;
mod codex;
mod command;
mod gemini;

use gza_core::config::{Config, ProviderKind};
use gza_core::task::FailureReason;
pub(crate) use gza_core::text::one_line;

/// Longest agent output kept in the database; the full stream stays in the log file.
pub const MAX_STORED_OUTPUT: usize = 256 * 1024;

/// How to start an agent.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
    /// Whether the prompt is written to the agent's stdin (otherwise it is in `args`).
    pub prompt_on_stdin: bool,
    /// Environment variables set for the agent, on top of gza's own.
    pub env: Vec<(String, String)>,
}

/// What a task asks of its agent.
#[derive(Debug, Clone)]
pub struct AgentRequest<'a> {
    pub prompt: &'a str,
    pub model: Option<&'a str>,
    pub max_turns: u32,
    pub resume_session: Option<&'a str>,
}

/// Progress so far, for status lines and `gza ps`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    pub turns: i64,
    pub cost_usd: Option<f64>,
    pub session_id: Option<String>,
    /// The agent is retrying a failed API call (cleared when it is heard from otherwise).
    pub retry: Option<Retry>,
}

/// An agent retrying a failed call to its model's API, as its own stream reports it: Claude
/// Code's `system`/`api_retry` events, Codex's `Reconnecting... N/M` errors, Gemini CLI's
/// "Attempt N failed with status S. Retrying with backoff" lines on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    /// Which retry this is (1 for the first, made after the first call failed).
    pub attempt: u32,
    /// How many retries the agent makes at most, when it says.
    pub max: Option<u32>,
    /// What failed, in a few words (`HTTP 529 overloaded`).
    pub error: String,
    /// How long the agent waits before the next attempt, when it says.
    pub delay_ms: Option<u64>,
}

impl Retry {
    /// `API call failed (HTTP 529 overloaded); retry 1 of 10 in 4s`.
    pub fn describe(&self) -> String {
        let of = self.max.map(|m| format!(" of {m}")).unwrap_or_default();
        let after = self
            .delay_ms
            .map(|ms| format!(" in {}s", ms.div_ceil(1000)))
            .unwrap_or_default();
        format!(
            "API call failed ({}); retry {}{of}{after}",
            self.error, self.attempt
        )
    }
}

/// How the agent itself judged its run.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The agent reported success.
    Success,
    /// The agent reported a failure.
    Failed {
        reason: FailureReason,
        detail: String,
    },
    /// The stream ended without a final result.
    NoResult,
}

/// Everything the agent reported, once it has exited.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentReport {
    pub verdict: Verdict,
    pub output: Option<String>,
    pub session_id: Option<String>,
    pub model: Option<String>,
    pub cost_usd: Option<f64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub num_turns: Option<i64>,
}

/// Reads one agent's stdout.
pub trait StreamParser: Send {
    /// Take one line of output (without its newline).
    fn line(&mut self, line: &str);
    /// Take one line the agent wrote to stderr (without its newline); most agents say nothing
    /// there that gza reads.
    fn stderr_line(&mut self, _line: &str) {}
    /// Progress so far.
    fn progress(&self) -> Progress;
    /// The final report; `exit_ok` says whether the process exited with status 0.
    fn finish(self: Box<Self>, exit_ok: bool) -> AgentReport;
}

/// The gza.yaml key that names a provider's binary, for "binary not found" errors.
pub fn config_key(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Claude => "providers.claude.path",
        ProviderKind::Codex => "providers.codex.path",
        ProviderKind::Gemini => "providers.gemini.path",
        ProviderKind::Command => "providers.command.command",
    }
}

/// The binary a provider runs, from config.
pub fn binary(kind: ProviderKind, config: &Config) -> String {
    let p = &config.providers;
    match kind {
        ProviderKind::Claude => p.claude.path.clone(),
        ProviderKind::Codex => p.codex.path_or("codex").to_string(),
        ProviderKind::Gemini => p.gemini.path_or("gemini").to_string(),
        ProviderKind::Command => p.command.command.first().cloned().unwrap_or_default(),
    }
}

/// The command line for `request` with provider `kind`.
pub fn invocation(kind: ProviderKind, config: &Config, request: &AgentRequest) -> Invocation {
    match kind {
        ProviderKind::Claude => claude::invocation(config, request),
        ProviderKind::Codex => codex::invocation(config, request),
        ProviderKind::Gemini => gemini::invocation(config, request),
        ProviderKind::Command => command::invocation(config, request),
    }
}

/// A fresh parser for provider `kind`.
pub fn parser(kind: ProviderKind) -> Box<dyn StreamParser> {
    match kind {
        ProviderKind::Claude => Box::new(claude::ClaudeParser::default()),
        ProviderKind::Codex => Box::new(codex::CodexParser::default()),
        ProviderKind::Gemini => Box::new(gemini::GeminiParser::default()),
        ProviderKind::Command => Box::new(command::TextParser::default()),
    }
}

/// A readable rendering of one logged line, for `gza log`; `None` hides the line.
pub fn render_line(kind: ProviderKind, line: &str) -> Option<String> {
    match kind {
        ProviderKind::Claude => claude::render(line),
        ProviderKind::Codex => codex::render(line),
        ProviderKind::Gemini => gemini::render(line),
        ProviderKind::Command => Some(line.to_string()),
    }
}

/// Whether the provider can continue an earlier session.
pub fn supports_resume(kind: ProviderKind) -> bool {
    matches!(kind, ProviderKind::Claude | ProviderKind::Codex)
}

/// Keep at most [`MAX_STORED_OUTPUT`] bytes of `text`, secrets redacted: the end, where agents
/// put their summary.
pub fn bound_output(text: &str) -> String {
    bound_redacted(text, false)
}

/// Extra bytes a parser keeps beyond [`MAX_STORED_OUTPUT`], so a secret its own cut went through
/// lies wholly in a stretch that [`bound_redacted`] drops (a 4096-bit PEM key is about 3.2 KiB).
pub const REDACTION_MARGIN: usize = 16 * 1024;

/// Redact `text`, then keep at most [`MAX_STORED_OUTPUT`] bytes of its end. Redacting first means
/// the cut cannot leave the tail of a key that no pattern recognises any more; when `already_cut`
/// (the text starts where a parser cut the stream) the first [`REDACTION_MARGIN`] bytes go too.
pub fn bound_redacted(text: &str, already_cut: bool) -> String {
    let text = gza_core::redact::redact_secrets(text);
    let floor = if already_cut {
        REDACTION_MARGIN.min(text.len())
    } else {
        0
    };
    let start = text.ceil_char_boundary(text.len().saturating_sub(MAX_STORED_OUTPUT).max(floor));
    if start == 0 {
        return text;
    }
    format!(
        "[… {start} bytes cut; the full output is in the task's log …]\n{}",
        &text[start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_output_keeps_the_end() {
        let text = "x".repeat(MAX_STORED_OUTPUT + 10) + "END";
        let kept = bound_output(&text);
        assert!(kept.ends_with("END"));
        assert!(kept.starts_with("[… 13 bytes cut"));
        assert!(kept.len() < MAX_STORED_OUTPUT + 100);
    }
}
