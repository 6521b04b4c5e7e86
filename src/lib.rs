//! gza: a task runner for AI coding agents whose finished tasks teach the next ones.
//!
//! The workspace's crates are its rooms, and their dependencies are the layering (data flows one
//! way: cli → runner / learn / hooks → store → core): `gza-core` (leaf types and policies),
//! `gza-store` (SQLite), `gza-llm` (extraction clients), `gza-embed` (the embedding model),
//! `gza-learn` (learnings), `gza-runner` (running agents, the review loop), `gza-hooks` (agent
//! hooks), and this crate, the command line. The rooms are re-exported here under their old
//! names, so the command line reads `crate::store::Store` whichever crate a room lives in.

pub mod actions;
pub mod cli;
pub mod import;
pub mod serve;

pub use gza_core::database;
pub use gza_core::verify;
pub use gza_core::{Error, Result};
pub use gza_core::{
    config, confine, error, fence, fsutil, git, learning, process, project, prompt, quarantine,
    redact, settings, task, text, time, trust, wire, worktree,
};
pub use gza_hooks as hooks;
pub use gza_learn as learn;
pub use gza_llm as llm;
pub use gza_mcp as mcp;
pub use gza_runner as runner;
pub use gza_runner::{branch, remote, review};
pub use gza_store as store;
