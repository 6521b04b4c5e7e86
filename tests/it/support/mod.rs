pub mod claude;
pub mod fake_anthropic;
pub mod model;
pub mod project;
