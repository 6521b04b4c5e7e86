//! Integration tests: one binary, each test a hermetic project driven through the real `gza`.

mod agent_exit;
mod agents_e2e;
mod branches;
mod claude_work;
mod config_layers;
mod database_file;
mod extraction_http;
mod fake_claude_e2e;
mod groups;
mod hooks;
mod hostile;
mod house;
mod import;
mod learning_records;
mod learnings;
mod lifecycle;
mod limits;
mod ranker;
mod regeneration_window;
mod review_loop;
mod sandbox;
mod scale;
mod secrets;
mod support;
mod tasks;
mod work;
