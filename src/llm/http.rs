//! JSON over HTTP for the extraction clients: a timeout per request, and retries with
//! exponential backoff on 429, 5xx and 529 (and on connection failures), honouring `retry-after`.

use std::time::Duration;

use serde_json::Value;

use super::LlmError;

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
            .map_err(|e| LlmError::Failed(format!("cannot set up HTTP: {e}")))?;
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
            let (retryable, error, retry_after) = match request.send() {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(parse_retry_after);
                    let text = read_body(response);
                    if status.is_success() {
                        return serde_json::from_str(&text).map_err(|_| {
                            LlmError::Failed(format!(
                                "{url} answered {status} with a body that is not JSON"
                            ))
                        });
                    }
                    let code = status.as_u16();
                    let retryable = code == 429 || code >= 500;
                    let message = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| v["error"]["message"].as_str().map(String::from))
                        .unwrap_or_else(|| text.chars().take(200).collect());
                    (
                        retryable,
                        format!("{url} answered {status}: {message}"),
                        retry_after,
                    )
                }
                Err(e) if e.is_timeout() => (
                    true,
                    format!("{url} did not answer within {:?}", self.timeout),
                    None,
                ),
                Err(e) => (true, format!("cannot reach {url}: {e}"), None),
            };
            if !retryable || attempt >= self.max_retries {
                return Err(LlmError::Failed(if attempt > 0 {
                    format!("{error} (after {} attempts)", attempt + 1)
                } else {
                    error
                }));
            }
            let wait = retry_after
                .unwrap_or_else(|| backoff(attempt))
                .min(MAX_BACKOFF);
            if started.elapsed() + wait >= budget {
                return Err(LlmError::Failed(format!(
                    "{error} (gave up after {:.0} s and {} attempts; retried at a later regeneration)",
                    started.elapsed().as_secs_f64(),
                    attempt + 1
                )));
            }
            std::thread::sleep(wait);
            attempt += 1;
        }
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
    fn backoff_doubles_with_bounded_jitter() {
        for attempt in 0..4 {
            let base = FIRST_BACKOFF * 2u32.pow(attempt);
            let d = backoff(attempt);
            assert!(d >= base && d <= base.mul_f64(1.25), "{attempt}: {d:?}");
        }
    }
}
