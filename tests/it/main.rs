//! Integration tests: one binary, each test a hermetic project driven through the real `gza`.

mod support;
mod tasks;
mod fake_claude_e2e;
