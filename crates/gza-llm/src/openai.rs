//! Any OpenAI-compatible `/chat/completions` (OpenAI, Ollama, OpenRouter, vLLM). The endpoint is
//! `learnings.base_url`, else OPENAI_BASE_URL, else the public API; the key is read from the
//! environment variable named by `learnings.api_key_env` (none is sent when it is unset, as
//! local servers such as Ollama need none).

use std::time::Duration;

use serde_json::json;

use super::http::JsonPoster;
use super::{Completion, ExtractionClient, LlmError};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
const MAX_REPLY_TOKENS: u32 = 400;

pub struct OpenAiClient {
    http: JsonPoster,
    url: String,
    key: Option<String>,
    model: String,
}

impl OpenAiClient {
    pub fn new(
        base_url: &str,
        key: Option<String>,
        model: &str,
        timeout: Duration,
        max_retries: u32,
    ) -> Result<Self, LlmError> {
        Ok(OpenAiClient {
            http: JsonPoster::new(timeout, max_retries)?,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            key,
            model: model.to_string(),
        })
    }
}

impl ExtractionClient for OpenAiClient {
    fn provider(&self) -> &'static str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, system: &str, user: &str) -> Result<Completion, LlmError> {
        let body = json!({
            "model": self.model,
            "max_tokens": MAX_REPLY_TOKENS,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        });
        let headers: Vec<(&str, String)> = self
            .key
            .iter()
            .map(|k| ("authorization", format!("Bearer {k}")))
            .collect();
        let reply = self.http.post(&self.url, &headers, &body)?;
        Ok(Completion {
            text: reply["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            input_tokens: reply["usage"]["prompt_tokens"].as_i64().unwrap_or(0),
            output_tokens: reply["usage"]["completion_tokens"].as_i64().unwrap_or(0),
        })
    }
}
