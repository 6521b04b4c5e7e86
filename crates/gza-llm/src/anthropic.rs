//! The Anthropic Messages API: `x-api-key` from ANTHROPIC_API_KEY, `anthropic-version:
//! 2023-06-01`; the endpoint is `learnings.base_url`, else ANTHROPIC_BASE_URL (as the official
//! SDKs read it), else the public API.

use std::time::Duration;

use serde_json::json;

use super::http::JsonPoster;
use super::{Completion, ExtractionClient, LlmError};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// Replies are at most three short lines.
const MAX_REPLY_TOKENS: u32 = 400;

pub struct AnthropicClient {
    http: JsonPoster,
    url: String,
    key: String,
    model: String,
}

/// Aliases users write, as Claude Code accepts them, to current model ids.
pub fn resolve_model(model: &str) -> &str {
    match model {
        "haiku" => "claude-haiku-4-5",
        "sonnet" => "claude-sonnet-4-5",
        "opus" => "claude-opus-4-1",
        other => other,
    }
}

impl AnthropicClient {
    pub fn new(
        base_url: &str,
        key: String,
        model: &str,
        timeout: Duration,
        max_retries: u32,
    ) -> Result<Self, LlmError> {
        Ok(AnthropicClient {
            http: JsonPoster::new(timeout, max_retries)?,
            url: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            key,
            model: resolve_model(model).to_string(),
        })
    }
}

impl ExtractionClient for AnthropicClient {
    fn provider(&self) -> &'static str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, system: &str, user: &str) -> Result<Completion, LlmError> {
        let body = json!({
            "model": self.model,
            "max_tokens": MAX_REPLY_TOKENS,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        });
        let headers = [
            ("x-api-key", self.key.clone()),
            ("anthropic-version", "2023-06-01".to_string()),
        ];
        let reply = self.http.post(&self.url, &headers, &body)?;
        let text = gza_core::wire::text_blocks(&reply["content"]);
        let usage = &reply["usage"];
        Ok(Completion {
            text: text.join("\n"),
            input_tokens: gza_core::wire::input_tokens(usage),
            output_tokens: usage["output_tokens"].as_i64().unwrap_or(0),
        })
    }
}
