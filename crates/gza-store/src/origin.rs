//! A project's SQLite database must be the person's own, made in this clone: a repository can
//! commit `.gza/gza.db`, and its tasks and learnings (active ones included, never seen by the
//! quarantine) would then reach the person's agents as if they were the project's.
//!
//! A database made or first opened here is registered under the person's home by its random
//! nonce (`hook_state.nonce`, V27): `~/.gza/databases/<nonce>`, a small file naming where it was.
//! A registered database is the person's, wherever the project moves. One that is not (an older
//! gza made it, or it came from somewhere) is checked once against git's index: committed, it is
//! refused; otherwise it is registered. The check costs a stat of one file per open, and one git
//! process the first time.

use std::path::{Path, PathBuf};

use gza_core::error::{Error, Result};

use crate::Store;

/// Where databases this person made or adopted are registered.
fn registry() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".gza").join("databases"))
}

/// A nonce as gza makes them: 32 lower-case hex digits (anything else came from elsewhere and
/// never names a file).
fn well_formed(nonce: &str) -> bool {
    nonce.len() == 32
        && nonce
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Refuse the database at `path`, of the project at `root`, if it came with the repository.
pub(crate) fn ensure_own(root: &Path, path: &Path, store: &Store) -> Result<()> {
    let nonce = store.hook_version().map(|(_, n)| n).unwrap_or_default();
    let mark = registry()
        .filter(|_| well_formed(&nonce))
        .map(|dir| dir.join(&nonce));
    if mark.as_ref().is_some_and(|m| m.is_file()) {
        return Ok(());
    }
    if committed(root, path) {
        return Err(Error::RepositoryDatabase {
            path: path.to_path_buf(),
        });
    }
    if let Some(mark) = mark {
        if let Some(dir) = mark.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = gza_core::fsutil::write_atomically(&mark, path.display().to_string().as_bytes());
    }
    Ok(())
}

/// Whether git's index of the repository at `root` holds `path`.
fn committed(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let Some(rel) = rel.to_str() else {
        return false;
    };
    gza_core::git::succeeds(root, &["ls-files", "--error-unmatch", "--", rel])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_gzas_own_nonces_name_a_file() {
        assert!(well_formed("0123456789abcdef0123456789abcdef"));
        for bad in [
            "",
            "../../../etc/passwd",
            "0123456789ABCDEF0123456789abcdef",
            "0123456789abcdef0123456789abcde/",
            "0123456789abcdef",
        ] {
            assert!(!well_formed(bad), "{bad}");
        }
    }
}
