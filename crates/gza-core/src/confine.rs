//! Paths that come from a repository's files (a setting in `gza.yaml`, a task file's `spec:`,
//! a spec stored with a task) are confined to the project: resolved through `..` and symbolic
//! links, they must stay inside its root. A leaf room: it uses none of the others but `error`.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// Why a path is not inside the project.
#[derive(Debug, Clone, PartialEq)]
pub struct Outside {
    /// Where it really leads, as far as it exists.
    pub resolved: PathBuf,
}

/// `path` (relative to `root`, or absolute) resolved to a path inside the project: every
/// existing part through symbolic links, the rest (which need not exist yet, for a file about
/// to be written) lexically, refusing a `..` that climbs out. The result lies inside `root`'s
/// canonical path, or `Err` says where it leads instead.
pub fn inside(root: &Path, path: &Path) -> std::result::Result<PathBuf, Outside> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let joined = root.join(path);
    // The longest existing ancestor, resolved; then what does not exist yet, component by
    // component.
    let mut existing = joined.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let mut resolved = loop {
        match existing.canonicalize() {
            Ok(real) => break real,
            Err(_) => {
                let Some(parent) = existing.parent() else {
                    break PathBuf::from("/");
                };
                match existing.components().next_back() {
                    Some(Component::Normal(name)) => rest.push(name),
                    Some(Component::ParentDir) => {
                        return Err(Outside {
                            resolved: joined.clone(),
                        });
                    }
                    _ => {}
                }
                existing = parent;
            }
        }
    };
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(Outside { resolved })
    }
}

/// [`inside`] with the error a person reads: which setting (or task file entry) in which file
/// names the path, where it leads, and `hint`, what to do instead.
pub fn inside_or_error(
    root: &Path,
    path: &Path,
    key: &str,
    file: &Path,
    hint: &str,
) -> Result<PathBuf> {
    inside(root, path).map_err(|o| Error::OutsideProject {
        key: key.to_string(),
        file: file.to_path_buf(),
        path: path.to_path_buf(),
        resolved: o.resolved,
        hint: hint.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_absolute_paths_and_symlinks_out_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("proj");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(tmp.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret"), root.join("docs/link")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("up")).unwrap();
        let root = root.canonicalize().unwrap();

        assert_eq!(
            inside(&root, Path::new("docs/new/file.yaml")).unwrap(),
            root.join("docs/new/file.yaml")
        );
        assert!(inside(&root, Path::new("docs/../docs/x")).is_ok());
        for bad in [
            "../x",
            "/etc/x.yaml",
            "docs/../../x",
            "docs/link",
            "up/secret",
            "up/new-file",
            "missing/../../x",
        ] {
            assert!(inside(&root, Path::new(bad)).is_err(), "{bad}");
        }
    }
}
