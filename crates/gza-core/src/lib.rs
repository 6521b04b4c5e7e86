//! gza-core: the leaf types and policies every other gza crate uses: the error type and its exit
//! codes, settings in layers and which of a repository's settings are trusted, task and learning
//! records, text, redaction and the quarantine, paths confined to the project, and git (the one
//! place it is started, hardened for agents' worktrees). It knows nothing of the store, the
//! runner, learnings or the command line.

pub mod config;
pub mod confine;
pub mod database;
pub mod error;
pub mod fence;
pub mod fsutil;
pub mod git;
pub mod lazy_regex;
pub mod learning;
pub mod learnings_md;
pub mod priority;
pub mod process;
pub mod project;
pub mod prompt;
pub mod quarantine;
pub mod redact;
pub mod search;
pub mod settings;
pub mod task;
pub mod text;
pub mod time;
pub mod trust;
pub mod verify;
pub mod wire;
pub mod worktree;
pub mod yaml;

pub use error::{Error, Result};
