//! Times the secret redactor over a few MB of agent output shaped like Claude Code's
//! stream-json (benchmark, not a test): `cargo run --release --example bench_redact`.
//!
//! The corpus is this crate's own sources and docs (code, prose, configuration: the words
//! `token`, `password`, `secret` and `key` are everywhere in them), cut into the lines an agent
//! run writes: tool calls, tool results with file contents, assistant text, usage figures, and one
//! line in 200 carrying a secret. Each figure is the best and the median of 15 runs.

use std::io::Write;
use std::time::{Duration, Instant};

use gza::redact::{RedactingWriter, redact_log_line, redact_secrets};

const SECRETS: &[&str] = &[
    "export GITHUB_TOKEN=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "DB_PASSWORD=hunter2hunter2 npm test",
    "connecting to postgres://app:s3cr3tP4ss@db.internal:5432/app",
    "mysql -u root -pS3cr3t app < dump.sql",
    "aws_session_token = FwoGZXIvYXdzEJr//////////wEaDHx3yZ9Ex4mpLe",
];

fn corpus() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut stack = vec![root.join("src"), root.join("docs"), root.join("tests")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs" || x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut lines = Vec::new();
    let mut n = 0usize;
    'outer: loop {
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            for chunk in text.lines().collect::<Vec<_>>().chunks(40) {
                let body = chunk.join("\n");
                let path = f.display().to_string();
                lines.push(
                    serde_json::json!({"type": "assistant", "message": {"content": [
                    {"type": "tool_use", "id": format!("toolu_{n:08}"), "name": "Read",
                     "input": {"file_path": path}}]}})
                    .to_string(),
                );
                let body = if n.is_multiple_of(200) {
                    format!("{body}\n{}", SECRETS[(n / 200) % SECRETS.len()])
                } else {
                    body
                };
                lines.push(
                    serde_json::json!({"type": "user", "message": {"content": [
                    {"type": "tool_result", "tool_use_id": format!("toolu_{n:08}"),
                     "content": body}]}})
                    .to_string(),
                );
                lines.push(
                    serde_json::json!({"type": "assistant", "message": {
                    "content": [{"type": "text", "text": chunk.iter().take(3).copied()
                        .collect::<Vec<_>>().join(" ")}],
                    "usage": {"input_tokens": 1200 + n, "cache_read_input_tokens": 30000,
                              "output_tokens": 40}}})
                    .to_string(),
                );
                n += 1;
                if lines.iter().map(String::len).sum::<usize>() > 4 * 1024 * 1024 {
                    break 'outer;
                }
            }
        }
    }
    lines
}

fn time(runs: usize, mut f: impl FnMut() -> usize) -> (Duration, Duration, usize) {
    let mut times = Vec::new();
    let mut out = 0;
    for _ in 0..runs {
        let started = Instant::now();
        out = std::hint::black_box(f());
        times.push(started.elapsed());
    }
    times.sort();
    (times[0], times[runs / 2], out)
}

fn report(what: &str, bytes: usize, (best, median, _): (Duration, Duration, usize)) {
    let mbs = |d: Duration| bytes as f64 / 1e6 / d.as_secs_f64();
    println!(
        "| {what} | {:.1} MB | {:.1} ms ({:.0} MB/s) | {:.1} ms ({:.0} MB/s) |",
        bytes as f64 / 1e6,
        best.as_secs_f64() * 1e3,
        mbs(best),
        median.as_secs_f64() * 1e3,
        mbs(median)
    );
}

fn main() {
    let lines = corpus();
    let stream: String = lines.iter().map(|l| format!("{l}\n")).collect();
    // `bench_redact --write-stream FILE`: save the stream (for a whole-process run of `gza work`
    // with an agent that prints it) and stop.
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, path] = args.as_slice()
        && flag == "--write-stream"
    {
        std::fs::write(path, &stream).expect("write the stream");
        return;
    }
    // What the runner stores: the agent's text, redacted in 256 KiB outputs.
    let text: String = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            v.pointer("/message/content/0/content")
                .and_then(|c| c.as_str())
                .map(str::to_string)
        })
        .collect::<Vec<_>>()
        .join("\n");
    let outputs: Vec<&str> = text
        .as_bytes()
        .chunks(256 * 1024)
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
        .collect();
    let changed = lines
        .iter()
        .filter(|l| redact_log_line(l) != l.as_str())
        .count();
    println!(
        "{} lines, {:.1} MB of stream-json, {} lines changed by redaction\n",
        lines.len(),
        stream.len() as f64 / 1e6,
        changed
    );
    println!("| what | input | best | median |\n|---|---|---|---|");
    let runs = 15;
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("1.jsonl");
    // As the runner writes a log: 64 KiB reads, a flush after each.
    let write_log = |redact: bool| {
        let file = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
        let mut w: Box<dyn Write> = if redact {
            Box::new(RedactingWriter::new(file))
        } else {
            Box::new(file)
        };
        for chunk in stream.as_bytes().chunks(64 * 1024) {
            w.write_all(chunk).unwrap();
            w.flush().unwrap();
        }
        drop(w);
        0
    };
    report(
        "raw log file through `RedactingWriter` (JSON lines kept valid)",
        stream.len(),
        time(runs, || write_log(true)),
    );
    report(
        "raw log file, `redact_raw_logs: false`",
        stream.len(),
        time(runs, || write_log(false)),
    );
    report(
        "stored output: `redact_secrets` over 256 KiB outputs",
        text.len(),
        time(runs, || {
            outputs.iter().map(|o| redact_secrets(o).len()).sum()
        }),
    );
    report(
        "stored output, the redactor before this change (18 sequential regexes)",
        text.len(),
        time(runs, || {
            outputs.iter().map(|o| old::redact_secrets(o).len()).sum()
        }),
    );
    report(
        "per line: `redact_secrets` on each stream-json line",
        stream.len(),
        time(runs, || lines.iter().map(|l| redact_secrets(l).len()).sum()),
    );
    report(
        "per line, the redactor before this change",
        stream.len(),
        time(runs, || {
            lines.iter().map(|l| old::redact_secrets(l).len()).sum()
        }),
    );
}

/// The redactor as it was before the gitleaks-class rewrite, for comparison.
#[allow(dead_code)]
mod old {
    use std::sync::LazyLock;

    use regex::{Captures, Regex};

    /// One secret shape: what it looks like, what replaces it, and (for loose shapes) a check that
    /// the captured value really looks like a secret rather than a word.
    struct Rule {
        pattern: Regex,
        replacement: &'static str,
        /// For rules whose group 3 is the value: keep the match unless the value looks secret.
        looks_secret: Option<fn(&str) -> bool>,
    }

    /// Secret shapes. The provider-specific patterns follow gitleaks' rule set
    /// (github.com/gitleaks/gitleaks, config/gitleaks.toml: private-key, slack-bot-token,
    /// slack-user-token, gcp-api-key, stripe-access-token, jwt, github-pat, github-oauth,
    /// github-fine-grained-pat, aws-access-token, anthropic-api-key, openai-api-key), widened where
    /// gitleaks pins an exact length, so a token that grew a few characters is still caught.
    static SECRETS: LazyLock<Vec<Rule>> = LazyLock::new(|| {
        let strict = |pattern: &str, replacement: &'static str| Rule {
            pattern: Regex::new(pattern).expect("valid secret pattern"),
            replacement,
            looks_secret: None,
        };
        vec![
            // gitleaks private-key; also a block whose END line was cut off.
            strict(
                r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|$)",
                "[REDACTED PRIVATE KEY]",
            ),
            // Credentials in a URL: scheme://user:password@host keeps the user and host.
            strict(
                r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@",
                "$1[REDACTED]@",
            ),
            // An HTTP Authorization header, whatever its scheme.
            strict(
                r#"(?i)\b(authorization\s*[:=]\s*["']?(?:bearer|basic|token|bot)\s+)[^\s"']+"#,
                "$1[REDACTED]",
            ),
            strict(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{20,}=*", "$1[REDACTED]"),
            // gitleaks jwt.
            strict(
                r"\bey[A-Za-z0-9]{17,}\.ey[A-Za-z0-9/\\_-]{17,}\.(?:[A-Za-z0-9/\\_-]{10,}={0,2})?",
                "[REDACTED]",
            ),
            // gitleaks anthropic-api-key, openai-api-key.
            strict(r"sk-ant-[A-Za-z0-9_\-]{16,}", "[REDACTED]"),
            strict(r"sk-[A-Za-z0-9_\-]{20,}", "[REDACTED]"),
            // gitleaks github-pat, github-oauth, github-app-token, github-refresh-token.
            strict(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}", "[REDACTED]"),
            // gitleaks github-fine-grained-pat.
            strict(r"\bgithub_pat_[A-Za-z0-9_]{20,}", "[REDACTED]"),
            // gitleaks slack-bot-token, slack-user-token, slack-app-token and the legacy shapes.
            strict(r"\bxox[abposre]-[0-9A-Za-z-]{10,}", "[REDACTED]"),
            strict(r"\bxapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+", "[REDACTED]"),
            // gitleaks gcp-api-key.
            strict(r"\bAIza[0-9A-Za-z_\-]{35}", "[REDACTED]"),
            // gitleaks stripe-access-token.
            strict(r"\b(sk|rk)_(test|live|prod)_[0-9A-Za-z]{10,99}", "[REDACTED]"),
            // gitleaks aws-access-token.
            strict(r"\b(A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", "[REDACTED]"),
            strict(
                r#"(?i)(aws_secret_access_key|secret_access_key)(\s*[=:]\s*)["']?[A-Za-z0-9/+=]{20,}["']?"#,
                "$1$2[REDACTED]",
            ),
            // key=value and key: value, the shape of env files, YAML and command lines.
            strict(
                r#"(?i)\b(password|passwd|pwd|secret|api[_-]?key|token)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)"#,
                "$1$2[REDACTED]",
            ),
            // "the token is abc123…" in prose: only when the value looks like a secret, so "the token
            // is expired" stays.
            Rule {
                pattern: Regex::new(
                    r#"(?i)\b(password|passwd|secret|api[_ -]?key|token)(\s+is\s+)["'`]?([A-Za-z0-9_\-./+=!@#$%^&*]{6,})"#,
                )
                .expect("valid secret pattern"),
                replacement: "$1$2[REDACTED]",
                looks_secret: Some(|value| {
                    let digits = value.chars().any(|c| c.is_ascii_digit());
                    let letters = value.chars().any(|c| c.is_ascii_alphabetic());
                    (digits && letters) || value.len() >= 24
                }),
            },
        ]
    });

    /// `text` with every secret replaced by a marker.
    pub fn redact_secrets(text: &str) -> String {
        let mut out = text.to_string();
        for rule in SECRETS.iter() {
            if !rule.pattern.is_match(&out) {
                continue;
            }
            out = match rule.looks_secret {
                None => rule
                    .pattern
                    .replace_all(&out, rule.replacement)
                    .into_owned(),
                Some(looks_secret) => rule
                    .pattern
                    .replace_all(&out, |caps: &Captures| {
                        if looks_secret(&caps[3]) {
                            let mut kept = String::new();
                            caps.expand(rule.replacement, &mut kept);
                            kept
                        } else {
                            caps[0].to_string()
                        }
                    })
                    .into_owned(),
            };
        }
        out
    }
}
