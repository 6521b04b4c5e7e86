//! Finding the real Claude Code CLI for end-to-end tests.

use std::path::{Path, PathBuf};

/// The `claude` binary to test against: `$GZA_TEST_CLAUDE`, else `.tools/node_modules/.bin/claude`
/// (where `scripts/test` installs it). A missing binary fails the test: it never passes untested.
pub fn claude_bin() -> Option<PathBuf> {
    let p = std::env::var_os("GZA_TEST_CLAUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node_modules/.bin/claude")
        });
    if p.exists() {
        return Some(p);
    }
    panic!(
        "claude binary not found at {}; run scripts/test, which installs it",
        p.display()
    );
}
