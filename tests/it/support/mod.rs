pub mod agents;
pub mod claude;
pub mod fake_anthropic;
pub mod fake_llm;
pub mod model;
pub mod postgres;
pub mod project;
