//! Text that came from an agent is data: secrets are redacted before it is stored in the
//! database, sent for extraction or written to learnings.md, and control characters are
//! stripped from anything injected into a later prompt.

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

    /// One case per format: the text, and a fragment of the secret that must not survive.
    const SECRETS_BY_FORMAT: &[(&str, &str)] = &[
        (
            "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx-yz here",
            "AbCdEfGh",
        ),
        ("OPENAI sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123", "AbCdEfGh"),
        ("token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGh"),
        ("oauth gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGh"),
        (
            "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "abcdefghij",
        ),
        ("aws AKIAIOSFODNN7EXAMPLE", "IOSFODNN7"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUt",
        ),
        ("password=hunter2hunter2", "hunter2"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----",
            "MIIEow",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA",
            "b3BlbnNz",
        ),
        (
            "slack xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "AbCdEfGh",
        ),
        (
            "slack xoxp-1234567890123-1234567890123-1234567890123-abcdef0123456789abcdef0123456789",
            "abcdef0123",
        ),
        ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "SyA1b2C3"),
        ("stripe sk_live_51AbCdEfGhIjKlMnOpQrStUv", "51AbCdEf"),
        ("stripe rk_live_51AbCdEfGhIjKlMnOpQrStUv", "51AbCdEf"),
        ("stripe sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqL"),
        (
            "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            "SflKxwRJ",
        ),
        (
            "curl -H 'Authorization: Bearer abc123def456ghi789jkl'",
            "abc123def",
        ),
        ("Authorization: token 0123456789abcdef", "0123456789"),
        (
            "export DATABASE_URL=postgres://admin:s3cr3tP4ss@db.internal:5432/app",
            "s3cr3tP4ss",
        ),
        ("the token is f9a8b7c6d5e4", "f9a8b7c6"),
        ("my password is hunter22", "hunter22"),
    ];

    #[test]
    fn redacts_each_format() {
        for (case, fragment) in SECRETS_BY_FORMAT {
            let out = redact_secrets(case);
            assert!(out.contains("[REDACTED"), "{case} -> {out}");
            assert!(!out.contains(fragment), "{case} -> {out}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let ordinary = [
            "plain text stays",
            "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main)",
            "Merge: 3f2a9c1 8b7d6a5",
            "request 123e4567-e89b-12d3-a456-426614174000 finished",
            "the token is expired; refresh the token before retrying",
            "the tokenizer splits words, and a bearer of bad news",
            "see https://github.com/owner/repo/pull/12 and git@github.com:owner/repo.git",
            "connect to postgres://localhost:5432/app as user@example.com",
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "the password is stored in the keychain",
        ];
        for text in ordinary {
            assert_eq!(redact_secrets(text), text);
        }
    }

    #[test]
    fn a_url_keeps_its_user_and_host() {
        assert_eq!(
            redact_secrets("postgres://user:pass@host/db"),
            "postgres://user:[REDACTED]@host/db"
        );
    }

    #[test]
    fn control_characters_do_not_survive() {
        assert_eq!(one_clean_line("a\u{1b}[31mb\nc\r\td"), "a [31mb c d");
    }
}
