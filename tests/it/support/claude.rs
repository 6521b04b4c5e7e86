//! Finding the real Claude Code CLI for end-to-end tests.

use std::path::{Path, PathBuf};

/// The `claude` binary to test against: `$GZA_TEST_CLAUDE`, else `.tools/node_modules/.bin/claude`
/// (where `scripts/test` installs it). Under CI, or with `GZA_REQUIRE_CLAUDE=1`, a missing binary
/// fails the test instead of skipping it.
pub fn claude_bin() -> Option<PathBuf> {
    let p = std::env::var_os("GZA_TEST_CLAUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node_modules/.bin/claude")
        });
    if p.exists() {
        return Some(p);
    }
    let required = std::env::var("GZA_REQUIRE_CLAUDE").is_ok_and(|v| v == "1")
        || std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    if required {
        panic!(
            "claude binary not found at {}; run scripts/test, which installs it",
            p.display()
        );
    }
    eprintln!(
        "SKIP: claude binary not found at {} (scripts/test installs it)",
        p.display()
    );
    None
}
