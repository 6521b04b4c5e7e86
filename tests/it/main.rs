//! Integration tests: one binary, each test a hermetic project driven through the real `gza`.

mod branches;
mod claude_work;
mod database_file;
mod extraction_http;
mod fake_claude_e2e;
mod groups;
mod hooks;
mod hostile;
mod import;
mod learning_records;
mod learnings;
mod ranker;
mod review_loop;
mod scale;
mod secrets;
mod support;
mod tasks;
mod work;
