//! gza: a task runner for AI coding agents whose finished tasks teach the next ones.
//!
//! The crate is laid out by room: `cli` parses and prints, `runner` runs agents, `learn` turns
//! finished tasks into learnings, `llm` talks to extraction models, `prompt` builds what an agent
//! is sent, and `store` keeps everything in SQLite. Data flows one way: cli → runner/learn → store.

pub mod branch;
pub mod cli;
pub mod config;
pub mod confine;
pub mod error;
pub mod fence;
pub mod fsutil;
pub mod git;
pub mod hooks;
pub mod import;
pub mod learn;
pub mod learning;
pub mod llm;
pub mod process;
pub mod project;
pub mod prompt;
pub mod quarantine;
pub mod redact;
pub mod review;
pub mod runner;
pub mod settings;
pub mod store;
pub mod task;
pub mod text;
pub mod trust;
pub mod wire;
pub mod worktree;

pub use error::{Error, Result};
