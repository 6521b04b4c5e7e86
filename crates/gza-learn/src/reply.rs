//! What the small-model calls (`rerank`, `hints`) share about a reply they cannot trust: a size
//! cap, and the JSON taken alone or out of the one Markdown code fence models add unasked.

/// The JSON of `text`: refused when longer than `max` characters (`need` says what the asked
/// answer needs, for the message), or when it opens a code fence it does not close.
pub(crate) fn json_body<'a>(text: &'a str, max: usize, need: &str) -> Result<&'a str, String> {
    if text.len() > max {
        return Err(format!(
            "the reply is {} characters, more than the {max} {need}",
            text.len()
        ));
    }
    let mut body = text.trim();
    if let Some(inner) = body.strip_prefix("```") {
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        body = inner
            .strip_suffix("```")
            .ok_or("the reply opens a code fence it does not close")?
            .trim();
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::json_body;

    #[test]
    fn the_body_alone_or_out_of_one_fence_and_never_too_long() {
        assert_eq!(json_body(" {\"a\": 1} ", 100, "x"), Ok("{\"a\": 1}"));
        assert_eq!(json_body("```json\n{}\n```", 100, "x"), Ok("{}"));
        assert_eq!(json_body("```\n{}\n```", 100, "x"), Ok("{}"));
        assert!(json_body("```json\n{}", 100, "x").is_err());
        assert_eq!(
            json_body("{}   ", 3, "a list needs"),
            Err("the reply is 5 characters, more than the 3 a list needs".to_string())
        );
    }
}
