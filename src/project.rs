//! Where a gza project lives on disk, and the paths of its runtime files.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::error::{Error, Result};

/// File name of the project configuration, at the project root.
pub const CONFIG_FILE: &str = "gza.yaml";
/// Directory holding gza's runtime state, at the project root.
pub const STATE_DIR: &str = ".gza";

/// A located gza project: its root directory and loaded configuration.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub config: Config,
}

impl Project {
    /// Find the project containing `start` (the nearest ancestor holding gza.yaml) and load its config.
    pub fn discover(start: &Path) -> Result<Project> {
        let start = std::path::absolute(start).map_err(|e| Error::io(start, "resolve", e))?;
        let root = start
            .ancestors()
            .find(|dir| dir.join(CONFIG_FILE).is_file())
            .ok_or_else(|| Error::NotInitialized(start.clone()))?
            .to_path_buf();
        let config = crate::settings::load(&root)?.config;
        Ok(Project { root, config })
    }

    /// The `.gza/` directory.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    /// The SQLite database.
    pub fn db_path(&self) -> PathBuf {
        self.state_dir().join("gza.db")
    }

    /// Raw agent streams, one file per task, and learning-machinery logs.
    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir().join("logs")
    }

    /// The learnings file users read and edit.
    pub fn learnings_path(&self) -> PathBuf {
        self.state_dir().join("learnings.md")
    }

    /// Reports written by explore and plan tasks.
    pub fn reports_dir(&self) -> PathBuf {
        self.state_dir().join("reports")
    }

    /// Git worktrees of code tasks.
    pub fn worktrees_dir(&self) -> PathBuf {
        self.state_dir().join("worktrees")
    }

    /// A human name for the project: the configured one, else the directory name.
    pub fn name(&self) -> String {
        self.config.project_name.clone().unwrap_or_else(|| {
            self.root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "project".into())
        })
    }
}
