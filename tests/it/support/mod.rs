pub mod fake_anthropic;
pub mod project;
