//! Integration tests: one binary, each test a hermetic project driven through the real `gza`.

mod claude_work;
mod extraction_http;
mod fake_claude_e2e;
mod hooks;
mod learning_records;
mod learnings;
mod ranker;
mod support;
mod tasks;
mod work;
