//! Cutting text to fit: one line for a terminal, or a bounded head or tail of a longer text.
//! A leaf room: it uses no other.
//!
//! Widths are terminal columns (`unicode-width`): a CJK character or most emoji take two, so a
//! table of prompts in any script lines up. Every cut falls on a character boundary.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `text` as one line of at most `max` terminal columns: runs of whitespace collapsed to one
/// space, control characters (an escape sequence an agent wrote, say) shown as `�`, and an
/// ellipsis where it was cut.
pub fn one_line(text: &str, max: usize) -> String {
    let mut flat = String::with_capacity(text.len().min(max.saturating_mul(4)));
    for word in text.split_whitespace() {
        if !flat.is_empty() {
            flat.push(' ');
        }
        flat.extend(word.chars().map(|c| if c.is_control() { '�' } else { c }));
    }
    if flat.width() <= max {
        return flat;
    }
    let room = max.saturating_sub(1);
    let mut used = 0;
    let mut cut = String::new();
    for c in flat.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        cut.push(c);
    }
    // "the review…", not "the review …".
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// The columns `text` takes on a terminal, ANSI colour sequences (`ESC [ … m`) not counted.
pub fn display_width(text: &str) -> usize {
    let mut n = 0;
    let mut in_escape = false;
    for c in text.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, c) => n += c.width().unwrap_or(0),
        }
    }
    n
}

/// The first `max` characters of `text` (all of it when shorter).
pub fn head(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// The last `max` characters of `text` (all of it when shorter).
pub fn tail(text: &str, max: usize) -> &str {
    if max == 0 {
        return &text[text.len()..];
    }
    match text.char_indices().rev().nth(max - 1) {
        Some((i, _)) => &text[i..],
        None => text,
    }
}

/// `bytes` as lowercase hexadecimal (a digest, a random token).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_and_cuts_to_the_columns_given() {
        assert_eq!(one_line("a\n  b\tc", 20), "a b c");
        assert_eq!(one_line("hello wonderful world", 12), "hello wonde…");
        assert_eq!(one_line("hello wonderful world", 12).width(), 12);
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
        assert_eq!(one_line("abc def", 3), "ab…");
        assert_eq!(one_line("fits", 4), "fits");
    }

    #[test]
    fn wide_characters_take_two_columns() {
        // Seven CJK characters are fourteen columns: cut to ten, the ellipsis included.
        let cut = one_line("日本語のテスト", 10);
        assert_eq!(cut, "日本語の…");
        assert!(cut.width() <= 10, "{cut}");
        let emoji = one_line("🚀🚀🚀🚀 launch", 7);
        assert_eq!(emoji, "🚀🚀🚀…");
        assert_eq!(display_width("日本"), 4);
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(one_line("red \x1b[31mtext", 40), "red �[31mtext");
    }

    #[test]
    fn colour_sequences_take_no_columns() {
        assert_eq!(display_width("\x1b[32mdone\x1b[0m"), 4);
        assert_eq!(display_width("\x1b[1m日本\x1b[0m"), 4);
    }

    #[test]
    fn heads_and_tails_count_characters() {
        assert_eq!(head("héllo", 2), "hé");
        assert_eq!(head("hé", 5), "hé");
        assert_eq!(tail("héllo", 4), "éllo");
        assert_eq!(tail("hé", 5), "hé");
        assert_eq!(tail("hé", 0), "");
    }
}
