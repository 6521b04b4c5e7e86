//! Clients for the cheap model that extracts learnings.

mod anthropic;
mod claude_cli;
mod http;
mod openai;

use std::time::Duration;

pub use anthropic::AnthropicClient;
pub use claude_cli::ClaudeCliClient;
pub use openai::OpenAiClient;

use crate::config::{ExtractionProvider, LearningsConfig};

/// A model reply and what it cost in tokens.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    pub text: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// Why an extraction call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    #[error("{0}")]
    Failed(String),
    #[error("timed out after {0:?}")]
    Timeout(Duration),
}

/// One request to an extraction model: instructions as the system prompt, the task as the message.
pub trait ExtractionClient: Send + Sync {
    /// The provider's name as configured (`anthropic`, `claude-cli`, …).
    fn provider(&self) -> &'static str;
    /// The model asked for.
    fn model(&self) -> &str;
    fn complete(&self, system: &str, user: &str) -> Result<Completion, LlmError>;
}

/// Environment variable with the Anthropic key.
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The client `learnings.extraction_provider` selects; `None` means no LLM (agent-listed
/// learnings only). `auto` picks anthropic when ANTHROPIC_API_KEY is set, else claude-cli when
/// `claude` is on PATH, else none. Keys come from the environment only.
pub fn client_for(
    config: &LearningsConfig,
    claude_path: &str,
) -> Result<Option<Box<dyn ExtractionClient>>, String> {
    let timeout = Duration::from_secs(config.timeout_seconds);
    let anthropic = |key: String| -> Result<Box<dyn ExtractionClient>, String> {
        let base = config
            .base_url
            .clone()
            .or_else(|| non_empty_env("ANTHROPIC_BASE_URL"))
            .unwrap_or_else(|| anthropic::DEFAULT_BASE_URL.into());
        AnthropicClient::new(
            &base,
            key,
            &config.extraction_model,
            timeout,
            config.max_retries,
        )
        .map(|c| Box::new(c) as Box<dyn ExtractionClient>)
        .map_err(|e| e.to_string())
    };
    let claude_cli = || -> Box<dyn ExtractionClient> {
        Box::new(ClaudeCliClient::new(
            claude_path,
            &config.extraction_model,
            timeout,
        ))
    };
    match config.extraction_provider {
        ExtractionProvider::None => Ok(None),
        ExtractionProvider::ClaudeCli => Ok(Some(claude_cli())),
        ExtractionProvider::Anthropic => {
            let key = non_empty_env(ANTHROPIC_KEY_ENV)
                .ok_or("learnings.extraction_provider is anthropic but ANTHROPIC_API_KEY is not set; set it or choose claude-cli or none")?;
            anthropic(key).map(Some)
        }
        ExtractionProvider::Openai => {
            if config.extraction_model == "haiku" {
                return Err("learnings.extraction_provider is openai: set learnings.extraction_model to one of its models".into());
            }
            let base = config
                .base_url
                .clone()
                .or_else(|| non_empty_env("OPENAI_BASE_URL"))
                .unwrap_or_else(|| openai::DEFAULT_BASE_URL.into());
            let key = non_empty_env(&config.api_key_env);
            OpenAiClient::new(
                &base,
                key,
                &config.extraction_model,
                timeout,
                config.max_retries,
            )
            .map(|c| Some(Box::new(c) as Box<dyn ExtractionClient>))
            .map_err(|e| e.to_string())
        }
        ExtractionProvider::Auto => {
            if let Some(key) = non_empty_env(ANTHROPIC_KEY_ENV) {
                anthropic(key).map(Some)
            } else if crate::process::check_binary(claude_path, "providers.claude.path").is_ok() {
                Ok(Some(claude_cli()))
            } else {
                Ok(None)
            }
        }
    }
}
