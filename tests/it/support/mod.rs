pub mod claude;
pub mod fake_anthropic;
pub mod project;
