//! Reading YAML that someone else may have written: a cloned repository's gza.yaml (parsed by
//! every hook), ~/.gza/config.yaml, files given to `gza import` and `gza learnings import`.
//!
//! The YAML parser's time grows faster than the input with nesting depth (60,000 nested `[`
//! took 20 s, 100,000 more than a minute), so a hostile file could stall every hook of a
//! session. [`from_str`] is the one way gza parses such text: a linear pre-scan bounds the
//! nesting first and refuses deeper text in one line, before the parser sees it. No real
//! settings or import file comes near the bound.

use serde::de::DeserializeOwned;

/// The deepest nesting gza reads: flow collections (`[`, `{`) and block levels (indentation,
/// `- ` items) together.
pub const MAX_DEPTH: usize = 64;

/// Why YAML text was not read: the message (without the parser's " at line …" tail) and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    /// Line and column, from 1.
    pub location: Option<(usize, usize)>,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parse `text`, refusing nesting deeper than [`MAX_DEPTH`] before the parser runs.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, ParseError> {
    if let Some(line) = too_deep(text) {
        return Err(ParseError {
            message: format!("nested more than {MAX_DEPTH} levels deep; gza reads no deeper"),
            location: Some((line, 1)),
        });
    }
    serde_norway::from_str(text).map_err(|e| {
        let message = e.to_string();
        let message = shorten_excerpts(
            message
                .find(" at line ")
                .map_or(message.as_str(), |i| &message[..i]),
        );
        ParseError {
            message,
            location: e.location().map(|l| (l.line(), l.column())),
        }
    })
}

/// Longest excerpt of the input a parse error quotes, in characters.
pub const MAX_EXCERPT_CHARS: usize = 100;

/// The parser quotes a scalar it could not use whole (`invalid type: string "…"`, an unknown
/// key in backquotes): a file of one 20 MB line came back as a 20 MB "one-line" error. Every
/// quoted stretch of `message` longer than [`MAX_EXCERPT_CHARS`] is cut there and marked `…`.
pub fn shorten_excerpts(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' && c != '`' {
            continue;
        }
        let quote = c;
        // Inside a quoted stretch (`"` ones are Debug-escaped: `\"` does not end them).
        let mut kept = 0;
        let mut escaped = false;
        for c in chars.by_ref() {
            let closing = c == quote && !escaped;
            escaped = quote == '"' && c == '\\' && !escaped;
            if closing {
                break;
            }
            kept += 1;
            if kept <= MAX_EXCERPT_CHARS {
                out.push(c);
            }
        }
        if kept > MAX_EXCERPT_CHARS {
            out.push('…');
        }
        out.push(quote);
    }
    out
}

/// The line (from 1) where `text` first nests deeper than [`MAX_DEPTH`], if it does. Linear in
/// the text; it may count a level the parser would not (a bracket in a multi-line plain
/// scalar), never fewer than a flow collection opens, so it errs towards refusing only text no
/// person writes.
pub fn too_deep(text: &str) -> Option<usize> {
    // Indentations of the open block levels.
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    let mut quote: Option<char> = None;
    // A block scalar's content: lines indented more than this belong to it.
    let mut block_scalar: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if let Some(parent) = block_scalar {
            if rest.trim().is_empty() || indent > parent {
                continue;
            }
            block_scalar = None;
        }
        if quote.is_none() && flow == 0 {
            if rest.trim().is_empty() || rest.starts_with('#') {
                continue;
            }
            while indents.last().is_some_and(|&i| i >= indent) {
                indents.pop();
            }
            indents.push(indent);
        }
        // Block levels opened on this line by compact `- ` / `? ` items.
        let mut compact = 0usize;
        let mut prev: Option<char> = None;
        let mut at_value_start = quote.is_none() && flow == 0;
        let chars: Vec<char> = rest.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if let Some(q) = quote {
                if c == q {
                    // '' inside single quotes is an escaped quote.
                    if q == '\'' && chars.get(i + 1) == Some(&'\'') {
                        i += 2;
                        continue;
                    }
                    quote = None;
                } else if q == '"' && c == '\\' {
                    i += 1;
                }
                prev = Some(c);
                i += 1;
                continue;
            }
            let next_blank = chars.get(i + 1).is_none_or(|c| *c == ' ' || *c == '\t');
            match c {
                '#' if prev.is_none_or(|p| p == ' ' || p == '\t') => break,
                '"' | '\'' if flow > 0 || at_value_start => quote = Some(c),
                '[' | '{' if flow > 0 || at_value_start => flow += 1,
                ']' | '}' if flow > 0 => flow -= 1,
                '-' | '?' if flow == 0 && at_value_start && next_blank => compact += 1,
                ':' if flow == 0 && next_blank => at_value_start = true,
                '|' | '>' if flow == 0 && at_value_start => {
                    block_scalar = Some(indent);
                    break;
                }
                ' ' | '\t' => {}
                // Anchors and tags stand before a value without ending its start.
                '&' | '!' if flow == 0 && at_value_start => {
                    while i + 1 < chars.len() && chars[i + 1] != ' ' {
                        i += 1;
                    }
                }
                _ if flow == 0 => at_value_start = false,
                _ => {}
            }
            if flow + indents.len() + compact > MAX_DEPTH {
                return Some(n + 1);
            }
            prev = Some(c);
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_quoted_scalar_is_cut_in_the_message() {
        let long = "x".repeat(5000);
        let e = from_str::<std::collections::BTreeMap<String, u32>>(&long).unwrap_err();
        assert!(e.message.len() < 300, "{}", e.message);
        assert!(
            e.message.contains(&format!("\"{}…\"", "x".repeat(100))),
            "{}",
            e.message
        );
        assert_eq!(shorten_excerpts("a `b` \"c\\\"d\""), "a `b` \"c\\\"d\"");
    }

    #[test]
    fn deep_flow_nesting_is_refused_before_parsing_quickly() {
        let text = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let started = std::time::Instant::now();
        let e = from_str::<serde_norway::Value>(&text).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(e.location, Some((1, 1)));
        assert!(e.message.contains("nested more than 64 levels"), "{e}");
    }

    #[test]
    fn deep_block_nesting_is_refused() {
        let mut text = String::new();
        for d in 0..100 {
            text.push_str(&format!("{}k{d}:\n", " ".repeat(d)));
        }
        assert_eq!(too_deep(&text), Some(MAX_DEPTH + 1));
        let items = format!("{}x\n", "- ".repeat(100));
        assert_eq!(too_deep(&items), Some(1));
        let braces = format!("a: {}\n", "{b: ".repeat(100));
        assert_eq!(too_deep(&braces), Some(1));
    }

    #[test]
    fn brackets_in_text_are_not_nesting() {
        let many = "[".repeat(200);
        let text = format!(
            "prompt: fix a{many}\nq: \"{many}\"\ns: '{many}'\nb: |\n  {many}\n  {{{{{{\nc: x # {many}\nlist: [\"{many}\", '{many}']\n"
        );
        assert_eq!(too_deep(&text), None);
        let v: serde_norway::Value = from_str(&text).unwrap();
        assert_eq!(v["list"][0].as_str(), Some(many.as_str()));
    }

    #[test]
    fn ordinary_nesting_is_read() {
        let text = "a:\n  b:\n    - c: [1, {d: [2, 3]}]\n      e: &x !!str f\n";
        assert_eq!(too_deep(text), None);
        let depth = format!("a: {}{}\n", "[".repeat(60), "]".repeat(60));
        assert!(from_str::<serde_norway::Value>(&depth).is_ok());
    }
}
