//! Clients for the cheap model that extracts learnings.

mod claude_cli;

use std::time::Duration;

pub use claude_cli::ClaudeCliClient;

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

/// The client `learnings.extraction_provider` selects; `None` means no LLM (agent-listed
/// learnings only). `auto` picks anthropic when ANTHROPIC_API_KEY is set, else claude-cli when
/// `claude` is on PATH, else none.
pub fn client_for(
    config: &LearningsConfig,
    claude_path: &str,
) -> Result<Option<Box<dyn ExtractionClient>>, String> {
    let claude_cli = || -> Box<dyn ExtractionClient> {
        Box::new(ClaudeCliClient::new(
            claude_path,
            &config.extraction_model,
            Duration::from_secs(config.timeout_seconds),
        ))
    };
    match config.extraction_provider {
        ExtractionProvider::None => Ok(None),
        ExtractionProvider::ClaudeCli => Ok(Some(claude_cli())),
        ExtractionProvider::Anthropic | ExtractionProvider::Openai => Err(format!(
            "learnings.extraction_provider {:?} is not built yet in this gza; use claude-cli or none",
            config.extraction_provider
        )
        .to_lowercase()),
        ExtractionProvider::Auto => {
            if crate::runner::check_binary(claude_path, "providers.claude.path").is_ok() {
                Ok(Some(claude_cli()))
            } else {
                Ok(None)
            }
        }
    }
}
