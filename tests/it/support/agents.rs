//! Finding the real Codex and Gemini CLIs for end-to-end tests.

use std::path::{Path, PathBuf};

/// `$var`, else `.tools/node_modules/.bin/<name>` (where `scripts/test` installs the pinned
/// versions from agents/package-lock.json). A missing binary fails the test: it never passes
/// untested.
fn agent_bin(var: &str, name: &str) -> PathBuf {
    let p = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(".tools/node_modules/.bin/{name}"))
    });
    assert!(
        p.exists(),
        "{name} binary not found at {}; run scripts/test, which installs it (or set {var})",
        p.display()
    );
    p
}

pub fn codex_bin() -> PathBuf {
    agent_bin("GZA_TEST_CODEX", "codex")
}

pub fn gemini_bin() -> PathBuf {
    agent_bin("GZA_TEST_GEMINI", "gemini")
}
