//! JSON over HTTP for the extraction clients: a timeout per request, and retries with
//! exponential backoff on 429, 5xx and 529 (and on connection failures), honouring `retry-after`.

use std::time::Duration;

use serde_json::Value;

use super::{LlmError, Tries};

/// Longest wait between attempts, whatever `retry-after` asks.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

pub struct JsonPoster {
    client: reqwest::blocking::Client,
    max_retries: u32,
    timeout: Duration,
}

impl JsonPoster {
    pub fn new(timeout: Duration, max_retries: u32) -> Result<Self, LlmError> {
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| LlmError::Setup(e.to_string()))?;
        Ok(JsonPoster {
            client,
            max_retries,
            timeout,
        })
    }

    /// POST `body` to `url` with `headers`; the JSON reply of the first successful attempt.
    pub fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
    ) -> Result<Value, LlmError> {
        let mut attempt = 0;
        // Every attempt and every wait between them fits in twice the per-request timeout, so an
        // unresponsive endpoint costs a bounded time however many retries are allowed.
        let budget = self.timeout * 2;
        let started = std::time::Instant::now();
        loop {
            let left = budget.saturating_sub(started.elapsed());
            let mut request = self
                .client
                .post(url)
                .json(body)
                .timeout(self.timeout.min(left).max(Duration::from_millis(100)));
            for (name, value) in headers {
                request = request.header(*name, value);
            }
            let error = match request.send() {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(parse_retry_after);
                    let text = read_body(response);
                    if status.is_success() {
                        tracing::debug!(
                            url,
                            attempt = attempt + 1,
                            ms = started.elapsed().as_millis() as u64,
                            "extraction request answered"
                        );
                        return serde_json::from_str(&text).map_err(|_| {
                            LlmError::BadReply(format!(
                                "{url} answered {status} with a body that is not JSON"
                            ))
                        });
                    }
                    let message = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| v["error"]["message"].as_str().map(String::from))
                        .unwrap_or_else(|| text.chars().take(200).collect());
                    LlmError::Http {
                        url: url.to_string(),
                        status: status.as_u16(),
                        message,
                        retry_after,
                        tries: Tries::default(),
                    }
                }
                Err(e) if e.is_timeout() => LlmError::Timeout(self.timeout),
                Err(e) => LlmError::Transport {
                    url: url.to_string(),
                    message: e.to_string(),
                    tries: Tries::default(),
                },
            };
            let tries = Tries {
                attempts: attempt + 1,
                gave_up_after: None,
            };
            tracing::debug!(url, attempt = attempt + 1, error = %error, "extraction request failed");
            if !retryable(&error) || attempt >= self.max_retries {
                return Err(with_tries(error, tries));
            }
            let wait = retry_after(&error)
                .unwrap_or_else(|| backoff(attempt))
                .min(MAX_BACKOFF);
            if started.elapsed() + wait >= budget {
                let tries = Tries {
                    gave_up_after: Some(started.elapsed()),
                    ..tries
                };
                return Err(with_tries(error, tries));
            }
            std::thread::sleep(wait);
            attempt += 1;
        }
    }
}

/// 429, 5xx (529 included), timeouts and connection failures are worth another attempt.
fn retryable(error: &LlmError) -> bool {
    match error {
        LlmError::Http { status, .. } => *status == 429 || *status >= 500,
        LlmError::Timeout(_) | LlmError::Transport { .. } => true,
        LlmError::BadReply(_) | LlmError::Cli(_) | LlmError::Setup(_) => false,
    }
}

fn retry_after(error: &LlmError) -> Option<Duration> {
    match error {
        LlmError::Http { retry_after, .. } => *retry_after,
        _ => None,
    }
}

/// `error` with the attempts it took recorded (a timeout keeps only its duration).
fn with_tries(error: LlmError, tries: Tries) -> LlmError {
    match error {
        LlmError::Http {
            url,
            status,
            message,
            retry_after,
            ..
        } => LlmError::Http {
            url,
            status,
            message,
            retry_after,
            tries,
        },
        LlmError::Transport { url, message, .. } => LlmError::Transport {
            url,
            message,
            tries,
        },
        other => other,
    }
}

/// Largest response body read; an extraction reply is a few kilobytes.
const MAX_BODY_BYTES: u64 = 4 * 1024 * 1024;

/// The body as text, read up to [`MAX_BODY_BYTES`] (a longer one is cut, and then is not JSON),
/// so an endpoint streaming without end cannot take all the memory.
fn read_body(response: reqwest::blocking::Response) -> String {
    use std::io::Read;
    let mut bytes = Vec::new();
    let _ = response.take(MAX_BODY_BYTES).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A `retry-after` header in seconds, capped at [`MAX_BACKOFF`]; `None` for a negative, infinite,
/// or unparseable value (which would otherwise panic in `Duration::from_secs_f64`).
fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds = value.trim().parse::<f64>().ok()?;
    if seconds.is_nan() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(
        seconds.min(MAX_BACKOFF.as_secs_f64()),
    ))
}

/// 0.5 s, 1 s, 2 s, … with up to 25% jitter so parallel extractions do not retry in step.
fn backoff(attempt: u32) -> Duration {
    let base = FIRST_BACKOFF * 2u32.saturating_pow(attempt.min(6));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    base + base.mul_f64(f64::from(nanos % 250) / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_capped_and_hostile_values_are_ignored() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("99999"), Some(MAX_BACKOFF));
        assert_eq!(parse_retry_after("inf"), Some(MAX_BACKOFF));
        assert_eq!(parse_retry_after("1e308"), Some(MAX_BACKOFF));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("NaN"), None);
        assert_eq!(parse_retry_after("-inf"), None);
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn throttling_server_errors_and_lost_connections_are_retried_nothing_else() {
        let http = |status| LlmError::Http {
            url: "u".into(),
            status,
            message: String::new(),
            retry_after: Some(Duration::from_secs(2)),
            tries: Tries::default(),
        };
        for status in [429, 500, 503, 529] {
            assert!(retryable(&http(status)), "{status}");
        }
        for status in [400, 401, 404] {
            assert!(!retryable(&http(status)), "{status}");
        }
        assert!(retryable(&LlmError::Timeout(Duration::from_secs(1))));
        let lost = LlmError::Transport {
            url: "u".into(),
            message: "reset".into(),
            tries: Tries::default(),
        };
        assert!(retryable(&lost));
        assert!(!retryable(&LlmError::BadReply("not JSON".into())));
        assert_eq!(retry_after(&http(429)), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(&lost), None);
        let tries = Tries {
            attempts: 4,
            gave_up_after: None,
        };
        assert!(
            matches!(with_tries(http(500), tries), LlmError::Http { tries: t, .. } if t == tries)
        );
        assert!(matches!(
            with_tries(LlmError::Timeout(Duration::from_secs(1)), tries),
            LlmError::Timeout(_)
        ));
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        for attempt in 0..4 {
            let base = FIRST_BACKOFF * 2u32.pow(attempt);
            let d = backoff(attempt);
            assert!(d >= base && d <= base.mul_f64(1.25), "{attempt}: {d:?}");
        }
    }
}
