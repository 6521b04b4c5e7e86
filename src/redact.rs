//! Text that came from an agent is data: secrets are redacted before it is stored in the
//! database, sent for extraction or written to learnings.md, and control characters are
//! stripped from anything injected into a later prompt.

use std::sync::LazyLock;

use regex::Regex;

/// Secret shapes: Anthropic, OpenAI and GitHub tokens, AWS keys, private key blocks, passwords.
static SECRETS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)", "[REDACTED PRIVATE KEY]"),
        (r"sk-ant-[A-Za-z0-9_\-]{16,}", "[REDACTED]"),
        (r"sk-[A-Za-z0-9_\-]{20,}", "[REDACTED]"),
        (r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}", "[REDACTED]"),
        (r"\bgithub_pat_[A-Za-z0-9_]{20,}", "[REDACTED]"),
        (r"\b(AKIA|ASIA)[0-9A-Z]{16}\b", "[REDACTED]"),
        (r#"(?i)(aws_secret_access_key|secret_access_key)(\s*[=:]\s*)["']?[A-Za-z0-9/+=]{20,}["']?"#, "$1$2[REDACTED]"),
        (r#"(?i)\b(password|passwd|pwd|secret|api[_-]?key|token)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)"#, "$1$2[REDACTED]"),
    ]
    .into_iter()
    .map(|(pattern, replacement)| (Regex::new(pattern).expect("valid secret pattern"), replacement))
    .collect()
});

/// `text` with every secret replaced by a marker.
pub fn redact_secrets(text: &str) -> String {
    let mut out = text.to_string();
    for (pattern, replacement) in SECRETS.iter() {
        if pattern.is_match(&out) {
            out = pattern.replace_all(&out, *replacement).into_owned();
        }
    }
    out
}

/// `text` without control characters (newlines and tabs become spaces), whitespace collapsed.
pub fn one_clean_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_each_kind_of_secret() {
        let cases = [
            "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx-yz here",
            "OPENAI sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123",
            "token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "aws AKIAIOSFODNN7EXAMPLE",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "password=hunter2hunter2",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----",
        ];
        for case in cases {
            let out = redact_secrets(case);
            assert!(out.contains("[REDACTED"), "{case} -> {out}");
            for secret in ["AbCdEfGh", "AKIAIOSF", "wJalrXUt", "hunter2", "MIIEow"] {
                assert!(!out.contains(secret), "{case} -> {out}");
            }
        }
        assert_eq!(redact_secrets("plain text stays"), "plain text stays");
    }

    #[test]
    fn control_characters_do_not_survive() {
        assert_eq!(one_clean_line("a\u{1b}[31mb\nc\r\td"), "a [31mb c d");
    }
}
