//! Shapes of Anthropic's JSON read by both the runner (Claude Code's stream) and `llm` (the
//! extraction reply). A leaf room: it uses no other.

/// Input tokens of an Anthropic `usage` object: fresh, cache-write and cache-read together.
pub fn input_tokens(usage: &serde_json::Value) -> i64 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|k| usage[*k].as_i64())
    .sum()
}

/// The text of an Anthropic message's content blocks, read by block type (a message may also
/// hold tool calls, thinking or other blocks).
pub fn text_blocks(content: &serde_json::Value) -> Vec<&str> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect()
}
