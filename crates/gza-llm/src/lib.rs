//! Clients for the cheap model that extracts learnings.

mod anthropic;
mod claude_cli;
mod http;
mod openai;

use std::time::Duration;

pub use anthropic::AnthropicClient;
pub use claude_cli::ClaudeCliClient;
pub use openai::OpenAiClient;

use gza_core::config::{ExtractionProvider, LearningsConfig};

/// A model reply and what it cost in tokens.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    pub text: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// Why an extraction call failed, by cause. Every one of them leaves the task untouched; the
/// extraction is tried again at a later regeneration.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// The endpoint answered with an error status (`retry_after` is what it asked for, capped).
    #[error("{url} answered {}: {message}{tries}", status_text(*status))]
    Http {
        url: String,
        status: u16,
        message: String,
        retry_after: Option<Duration>,
        tries: Tries,
    },
    /// The endpoint could not be reached: refused, reset, name lookup, TLS.
    #[error("cannot reach {url}: {message}{tries}")]
    Transport {
        url: String,
        message: String,
        tries: Tries,
    },
    /// No answer within the per-request timeout (HTTP), or the CLI ran longer than it.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// An answer that is not what the provider promises (not JSON).
    #[error("{0}")]
    BadReply(String),
    /// The claude CLI could not start, or reported an error.
    #[error("{0}")]
    Cli(String),
    /// The HTTP client could not be built (the TLS setup of this machine, not the endpoint).
    #[error("cannot set up HTTP: {0}")]
    Setup(String),
}

/// How many attempts a failed HTTP call took, and whether the time budget ran out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tries {
    pub attempts: u32,
    /// Set when retrying stopped because the next wait would pass the time budget.
    pub gave_up_after: Option<Duration>,
}

impl std::fmt::Display for Tries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.gave_up_after {
            Some(spent) => write!(
                f,
                " (gave up after {:.0} s and {} attempts; retried at a later regeneration)",
                spent.as_secs_f64(),
                self.attempts
            ),
            None if self.attempts > 1 => write!(f, " (after {} attempts)", self.attempts),
            None => Ok(()),
        }
    }
}

/// `429 Too Many Requests`, as reqwest prints a status.
fn status_text(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .map(|s| s.to_string())
        .unwrap_or_else(|_| status.to_string())
}

/// Why no extraction client can be made from `learnings:`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    #[error(
        "learnings.extraction_provider is anthropic but ANTHROPIC_API_KEY is not set; set it or choose claude-cli or none"
    )]
    MissingAnthropicKey,
    #[error(
        "learnings.extraction_provider is openai: set learnings.extraction_model to one of its models"
    )]
    NoOpenAiModel,
    /// The public OpenAI endpoint with no key: every call would be refused (401), so none is made.
    #[error(
        "learnings.extraction_provider is openai with the public endpoint but {0} is not set; set it, set learnings.base_url to a server that needs no key (Ollama, vLLM), or choose claude-cli or none"
    )]
    MissingOpenAiKey(String),
    /// The HTTP client could not be built.
    #[error(transparent)]
    Setup(#[from] LlmError),
}

impl ClientError {
    /// True when the person can fix it in their configuration or environment.
    pub fn is_user_error(&self) -> bool {
        !matches!(self, ClientError::Setup(_))
    }
}

impl From<ClientError> for gza_core::error::Error {
    fn from(e: ClientError) -> Self {
        if e.is_user_error() {
            gza_core::error::Error::Usage(e.to_string())
        } else {
            gza_core::error::Error::HttpSetup(e.to_string())
        }
    }
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
) -> Result<Option<Box<dyn ExtractionClient>>, ClientError> {
    let timeout = Duration::from_secs(config.timeout_seconds);
    let anthropic = |key: String| -> Result<Box<dyn ExtractionClient>, ClientError> {
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
        .map_err(ClientError::Setup)
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
            let key = non_empty_env(ANTHROPIC_KEY_ENV).ok_or(ClientError::MissingAnthropicKey)?;
            anthropic(key).map(Some)
        }
        ExtractionProvider::Openai => {
            if config.extraction_model == "haiku" {
                return Err(ClientError::NoOpenAiModel);
            }
            let configured_base = config
                .base_url
                .clone()
                .or_else(|| non_empty_env("OPENAI_BASE_URL"));
            let key = non_empty_env(&config.api_key_env);
            let public = configured_base.as_deref().is_none_or(|b| {
                b.trim_end_matches('/') == openai::DEFAULT_BASE_URL.trim_end_matches('/')
            });
            if key.is_none() && public {
                return Err(ClientError::MissingOpenAiKey(config.api_key_env.clone()));
            }
            let base = configured_base.unwrap_or_else(|| openai::DEFAULT_BASE_URL.into());
            OpenAiClient::new(
                &base,
                key,
                &config.extraction_model,
                timeout,
                config.max_retries,
            )
            .map(|c| Some(Box::new(c) as Box<dyn ExtractionClient>))
            .map_err(ClientError::Setup)
        }
        ExtractionProvider::Auto => {
            if let Some(key) = non_empty_env(ANTHROPIC_KEY_ENV) {
                anthropic(key).map(Some)
            } else if gza_core::process::check_binary(claude_path, "providers.claude.path").is_ok()
            {
                Ok(Some(claude_cli()))
            } else {
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_the_person_can_fix_is_a_user_error_and_http_setup_is_not() {
        assert!(ClientError::MissingAnthropicKey.is_user_error());
        assert!(ClientError::NoOpenAiModel.is_user_error());
        assert!(ClientError::MissingOpenAiKey("OPENAI_API_KEY".into()).is_user_error());
        let setup = ClientError::Setup(LlmError::Setup("no TLS backend".into()));
        assert!(!setup.is_user_error());
        assert!(gza_core::error::Error::from(ClientError::MissingAnthropicKey).is_user_error());
        assert!(!gza_core::error::Error::from(setup).is_user_error());
    }

    #[test]
    fn an_http_failure_says_the_status_and_how_many_attempts_it_took() {
        let http = |tries| LlmError::Http {
            url: "http://x/v1/messages".into(),
            status: 429,
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(1)),
            tries,
        };
        assert_eq!(
            http(Tries::default()).to_string(),
            "http://x/v1/messages answered 429 Too Many Requests: slow down"
        );
        let three = Tries {
            attempts: 3,
            gave_up_after: None,
        };
        assert_eq!(
            http(three).to_string(),
            "http://x/v1/messages answered 429 Too Many Requests: slow down (after 3 attempts)"
        );
        let spent = Tries {
            attempts: 2,
            gave_up_after: Some(Duration::from_millis(3600)),
        };
        assert_eq!(
            LlmError::Transport {
                url: "http://x".into(),
                message: "connection refused".into(),
                tries: spent,
            }
            .to_string(),
            "cannot reach http://x: connection refused (gave up after 4 s and 2 attempts; retried at a later regeneration)"
        );
        assert_eq!(
            LlmError::Timeout(Duration::from_secs(2)).to_string(),
            "timed out after 2s"
        );
    }
}
