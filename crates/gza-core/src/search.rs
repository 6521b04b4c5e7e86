//! What `gza search` looks for, and where a text matches it. The store translates a
//! [`SearchQuery`] for its full-text index; the command line marks the matches in a snippet with
//! [`snippet`]. Both read words the same way the index does (runs of letters and digits, case
//! and accents folded), so what is marked is what was found. A leaf room: it uses no other.

use std::ops::Range;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Most terms in one query: past this a query is a paste, not a search.
pub const MAX_TERMS: usize = 32;

/// Words shorter than this are matched whole, never as a word beginning: `a*` would expand to
/// most of the vocabulary.
const MIN_PREFIX_CHARS: usize = 2;

/// What a search asks for: tasks whose prompt or output holds every term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    terms: Vec<Term>,
}

/// One thing a match contains: a word, or words in a row (a quoted `"exact phrase"`, or a word
/// such as `src/cli/mod.rs` that holds several). Unless it was quoted, its last word may be the
/// beginning of a longer one (`auth` finds `authentication`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// Folded words ([`fold`]), never empty.
    pub words: Vec<String>,
    pub prefix: bool,
}

impl SearchQuery {
    /// Read a query as a person types it: words separated by spaces, each required; text in
    /// double quotes is an exact phrase. Punctuation separates words, as in the index.
    pub fn parse(text: &str) -> Result<SearchQuery, String> {
        let mut terms = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            rest = rest.trim_start();
            if let Some(quoted) = rest.strip_prefix('"') {
                let (inside, after) = match quoted.find('"') {
                    Some(end) => (&quoted[..end], &quoted[end + 1..]),
                    None => (quoted, ""),
                };
                push_term(&mut terms, inside, false);
                rest = after;
            } else {
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '"')
                    .unwrap_or(rest.len());
                push_term(&mut terms, &rest[..end], true);
                rest = &rest[end..];
            }
        }
        if terms.is_empty() {
            return Err(format!(
                "nothing to search for in {text:?}: give at least one word of letters or digits"
            ));
        }
        if terms.len() > MAX_TERMS {
            return Err(format!(
                "the search has {} words; give at most {MAX_TERMS} (quote a phrase to find it word for word)",
                terms.len()
            ));
        }
        terms.dedup();
        Ok(SearchQuery { terms })
    }

    pub fn terms(&self) -> &[Term] {
        &self.terms
    }
}

fn push_term(terms: &mut Vec<Term>, text: &str, may_prefix: bool) {
    let words: Vec<String> = words(text).map(|(_, w)| w).collect();
    let Some(last) = words.last() else { return };
    let prefix = may_prefix && last.chars().count() >= MIN_PREFIX_CHARS;
    terms.push(Term { words, prefix });
}

/// A word as the index compares it: accents removed, lower case.
pub fn fold(word: &str) -> String {
    word.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `c` belongs to a word: letters, digits and the marks that go with them (the
/// index's tokenizer, unicode61, reads the same classes).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

/// The words of `text`: where each is, and its folded form.
pub fn words(text: &str) -> impl Iterator<Item = (Range<usize>, String)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let start = loop {
            let (i, c) = chars.next()?;
            if word_char(c) {
                break i;
            }
        };
        let mut end = text.len();
        while let Some(&(i, c)) = chars.peek() {
            if !word_char(c) {
                end = i;
                break;
            }
            chars.next();
        }
        Some((start..end, fold(&text[start..end])))
    })
}

/// Where in `text` the query's terms occur, as byte ranges in text order (a phrase is one range,
/// from its first word to its last).
pub fn matches(text: &str, query: &SearchQuery) -> Vec<Range<usize>> {
    let words: Vec<(Range<usize>, String)> = words(text).collect();
    let mut found = Vec::new();
    for term in &query.terms {
        let n = term.words.len();
        if n > words.len() {
            continue;
        }
        for start in 0..=words.len() - n {
            let hit = term.words.iter().enumerate().all(|(k, want)| {
                let have = &words[start + k].1;
                if term.prefix && k == n - 1 {
                    have.starts_with(want.as_str())
                } else {
                    have == want
                }
            });
            if hit {
                found.push(words[start].0.start..words[start + n - 1].0.end);
            }
        }
    }
    found.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    // Overlapping matches (a word two terms both find) become one.
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in found {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

/// A stretch of a text around its first match, on one line, in pieces that are either matched
/// or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The text in order: `(piece, matched)`.
    pub pieces: Vec<(String, bool)>,
    /// Text was left out before the first piece.
    pub cut_before: bool,
    /// Text was left out after the last piece.
    pub cut_after: bool,
}

impl Snippet {
    /// Whether any piece is a match.
    pub fn has_match(&self) -> bool {
        self.pieces.iter().any(|(_, m)| *m)
    }

    /// The snippet as plain text, matches between `open` and `close`, and `…` where text was
    /// left out.
    pub fn render(&self, open: &str, close: &str) -> String {
        let mut out = String::new();
        if self.cut_before {
            out.push('…');
        }
        for (piece, matched) in &self.pieces {
            if *matched {
                out.push_str(open);
                out.push_str(piece);
                out.push_str(close);
            } else {
                out.push_str(piece);
            }
        }
        if self.cut_after {
            out.push('…');
        }
        out
    }
}

/// At most `max` characters of `text` around its first match of `query` (from its start when
/// nothing matches), whitespace collapsed to single spaces and control characters dropped, with
/// every match inside marked. `lead` characters at most come before the first match.
pub fn snippet(text: &str, query: &SearchQuery, max: usize, lead: usize) -> Snippet {
    let found = matches(text, query);
    let first = found.first().map_or(0, |r| r.start);
    // Walk back up to `lead` characters, then forward to a word's start so no word is cut.
    let mut start = first;
    for (taken, (i, _)) in text[..first].char_indices().rev().enumerate() {
        if taken >= lead {
            break;
        }
        start = i;
    }
    if start > 0 && start < first {
        let before = &text[..start];
        if before.chars().next_back().is_some_and(word_char)
            && let Some(gap) = text[start..first].find(|c: char| !word_char(c))
        {
            start += gap;
        }
    }
    let mut pieces: Vec<(String, bool)> = Vec::new();
    let mut used = 0;
    let mut pos = start;
    let mut last_space = true;
    let mut cut_after = false;
    let push = |c: char, matched: bool, pieces: &mut Vec<(String, bool)>| match pieces.last_mut() {
        Some((piece, m)) if *m == matched => piece.push(c),
        _ => pieces.push((c.to_string(), matched)),
    };
    'outer: for (i, c) in text[start..].char_indices() {
        let at = start + i;
        pos = at;
        let matched = found.iter().any(|r| r.contains(&at));
        let c = if c.is_whitespace() {
            if last_space {
                continue;
            }
            ' '
        } else if c.is_control() {
            continue;
        } else {
            c
        };
        if used >= max {
            cut_after = true;
            break 'outer;
        }
        last_space = c == ' ';
        push(c, matched, &mut pieces);
        used += 1;
        pos = at + c.len_utf8();
    }
    if !cut_after {
        pos = text.len();
    } else if text[pos..].chars().next().is_some_and(word_char) {
        // Cut inside a word: end at the word before it, unless that leaves too little.
        let mut dropped = 0;
        let mut keep = pieces.clone();
        while let Some((piece, _)) = keep.last_mut() {
            match piece.chars().next_back() {
                Some(c) if word_char(c) => {
                    piece.pop();
                    dropped += 1;
                    if piece.is_empty() {
                        keep.pop();
                    }
                }
                _ => break,
            }
        }
        if used - dropped >= max / 2 {
            pieces = keep;
        }
    }
    // No trailing space before an ellipsis or the end.
    if let Some((piece, _)) = pieces.last_mut() {
        let trimmed = piece.trim_end().len();
        piece.truncate(trimmed);
        if piece.is_empty() {
            pieces.pop();
        }
    }
    Snippet {
        pieces,
        cut_before: !text[..start].trim().is_empty(),
        cut_after: cut_after && !text[pos..].trim().is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> SearchQuery {
        SearchQuery::parse(text).unwrap()
    }

    #[test]
    fn a_query_is_words_phrases_and_word_beginnings() {
        let query = q(r#"Auth "Login Page" src/cli/mod.rs a"#);
        let terms: Vec<(Vec<&str>, bool)> = query
            .terms()
            .iter()
            .map(|t| (t.words.iter().map(String::as_str).collect(), t.prefix))
            .collect();
        assert_eq!(
            terms,
            vec![
                (vec!["auth"], true),
                (vec!["login", "page"], false),
                (vec!["src", "cli", "mod", "rs"], true),
                (vec!["a"], false),
            ]
        );
        assert_eq!(q("Café").terms()[0].words, vec!["cafe"]);
        assert_eq!(q("\"unclosed phrase").terms()[0].words.len(), 2);
        assert!(SearchQuery::parse("  -- ++ \"\" ").is_err());
        let long = "w ".repeat(MAX_TERMS + 1);
        assert!(SearchQuery::parse(&long).is_err());
    }

    #[test]
    fn matches_follow_the_words_not_the_bytes() {
        let text = "Fix the AUTHENTICATION flow; the author wrote login-page tests. Café.";
        let found: Vec<&str> = matches(text, &q("auth"))
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(found, vec!["AUTHENTICATION", "author"]);
        let found: Vec<&str> = matches(text, &q("\"login page\" cafe"))
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(found, vec!["login-page", "Café"]);
        // A quoted word is whole: "auth" is not "author".
        assert!(matches(text, &q("\"auth\"")).is_empty());
    }

    #[test]
    fn a_snippet_starts_near_the_first_match_and_marks_every_match() {
        let text = "line one\n\nsome words before the match: the parser reads   the\ttokens, \
                    then the parser stops. And a long tail that goes on and on.";
        let s = snippet(text, &q("parser"), 50, 12);
        assert_eq!(
            s.render("[", "]"),
            "…match: the [parser] reads the tokens, then the…"
        );
        assert!(s.has_match());
        // Nothing matches: the start of the text, unmarked.
        let s = snippet("short text\nhere", &q("absent"), 50, 12);
        assert_eq!(s.render("[", "]"), "short text here");
        assert!(!s.has_match());
        // Control characters never reach a terminal.
        let s = snippet("a \u{1b}[31mred\u{7} word", &q("word"), 50, 12);
        assert_eq!(s.render("[", "]"), "a [31mred [word]");
    }
}
