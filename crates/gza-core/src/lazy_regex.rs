//! A regex compiled the first time it is used. A hook process checks or redacts a few short
//! texts and needs few of the hundreds of patterns gza holds; compiling them all at once (the
//! case-insensitive Unicode ones take milliseconds each) was most of some hooks' CPU.

use regex::Regex;
use std::sync::OnceLock;

pub struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    /// `pattern` is checked when first used (a bad one panics there, as `Regex::new(..)
    /// .expect(..)` did where it was built).
    pub fn new(pattern: impl Into<String>) -> LazyRegex {
        LazyRegex {
            pattern: pattern.into(),
            compiled: OnceLock::new(),
        }
    }
}

impl std::ops::Deref for LazyRegex {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&self.pattern).expect("a valid built-in pattern"))
    }
}

/// A regex compiled the first time a text could hold a match of it: what every match must
/// contain (its literals, read from the pattern's syntax, case-folded as the regex folds them) is
/// checked first, and a text without it never pays for the compilation. Same pattern, same
/// matches: only a text that cannot match is answered without the regex.
///
/// Why: the quarantine's intent layer matches every text against whole-text shapes and things
/// written as case-insensitive Unicode alternations in a dozen languages; building them was
/// nine tenths of a Stop hook's CPU (callgrind: 436 M of 504 M instructions), for texts that
/// almost never hold their words. A literal prefilter inside the regex crate runs after the
/// build, which is the cost.
pub struct GatedRegex {
    pattern: std::borrow::Cow<'static, str>,
    needs: OnceLock<Needs>,
    compiled: OnceLock<Regex>,
}

impl GatedRegex {
    pub fn new(pattern: impl Into<std::borrow::Cow<'static, str>>) -> GatedRegex {
        GatedRegex {
            pattern: pattern.into(),
            needs: OnceLock::new(),
            compiled: OnceLock::new(),
        }
    }

    /// The compiled pattern, when `text` could hold a match of it (`None`: it cannot). A bad
    /// pattern panics when first compiled, as `Regex::new(..).expect(..)` did where it was built.
    pub fn for_text(&self, text: &str) -> Option<&Regex> {
        if let Some(r) = self.compiled.get() {
            return Some(r);
        }
        self.needs
            .get_or_init(|| Needs::of_pattern(&self.pattern))
            .met_by(&fold_text(text))
            .then(|| self.compiled())
    }

    /// The pattern compiled, whatever the text.
    pub fn compiled(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&self.pattern).expect("a valid built-in pattern"))
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.for_text(text).is_some_and(|r| r.is_match(text))
    }

    pub fn find_iter<'t>(&self, text: &'t str) -> impl Iterator<Item = regex::Match<'t>> {
        self.for_text(text)
            .into_iter()
            .flat_map(move |r| r.find_iter(text))
    }

    pub fn captures_iter<'t>(&self, text: &'t str) -> impl Iterator<Item = regex::Captures<'t>> {
        self.for_text(text)
            .into_iter()
            .flat_map(move |r| r.captures_iter(text))
    }

    /// What every match of the pattern contains.
    pub fn needs(&self) -> &Needs {
        self.needs.get_or_init(|| Needs::of_pattern(&self.pattern))
    }
}

/// What every match of a pattern contains, as literals case-folded by [`fold_char`]: a
/// necessary condition, never a sufficient one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needs {
    /// Any text may hold a match.
    Nothing,
    /// The folded text contains this (folded) string.
    Literal(String),
    /// Every one of these holds.
    All(Vec<Needs>),
    /// At least one of these holds.
    Any(Vec<Needs>),
}

impl Needs {
    /// What every match of `pattern` contains, from its syntax (`Nothing` when it cannot be
    /// read, or when the case-folding tables are missing).
    pub fn of_pattern(pattern: &str) -> Needs {
        if fold_char('k').is_none() {
            return Needs::Nothing;
        }
        match regex_syntax::ast::parse::Parser::new().parse(pattern) {
            Ok(ast) => Needs::of(&ast),
            Err(_) => Needs::Nothing,
        }
    }

    fn of(ast: &regex_syntax::ast::Ast) -> Needs {
        use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};
        match ast {
            Ast::Empty(_)
            | Ast::Flags(_)
            | Ast::Dot(_)
            | Ast::Assertion(_)
            | Ast::ClassUnicode(_)
            | Ast::ClassPerl(_)
            | Ast::ClassBracketed(_) => Needs::Nothing,
            Ast::Literal(lit) => {
                literal_char(lit).map_or(Needs::Nothing, |c| Needs::Literal(c.to_string()))
            }
            Ast::Repetition(rep) => {
                let at_least_once = match &rep.op.kind {
                    RepetitionKind::ZeroOrOne | RepetitionKind::ZeroOrMore => false,
                    RepetitionKind::OneOrMore => true,
                    RepetitionKind::Range(
                        RepetitionRange::Exactly(m)
                        | RepetitionRange::AtLeast(m)
                        | RepetitionRange::Bounded(m, _),
                    ) => *m >= 1,
                };
                if at_least_once {
                    Needs::of(&rep.ast)
                } else {
                    Needs::Nothing
                }
            }
            Ast::Group(g) => Needs::of(&g.ast),
            Ast::Alternation(alt) => Needs::any(alt.asts.iter().map(Needs::of).collect()),
            Ast::Concat(cat) => {
                // Literal characters side by side are one string in the text (an assertion or a
                // flag between them takes no room).
                let mut parts = Vec::new();
                let mut run = String::new();
                for part in &cat.asts {
                    match part {
                        Ast::Flags(_) | Ast::Assertion(_) => continue,
                        Ast::Literal(lit) => {
                            if let Some(c) = literal_char(lit) {
                                run.push(c);
                                continue;
                            }
                        }
                        _ => {}
                    }
                    if !run.is_empty() {
                        parts.push(Needs::Literal(std::mem::take(&mut run)));
                    }
                    parts.push(Needs::of(part));
                }
                if !run.is_empty() {
                    parts.push(Needs::Literal(run));
                }
                Needs::all(parts)
            }
        }
    }

    fn all(parts: Vec<Needs>) -> Needs {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Needs::Nothing => {}
                Needs::All(inner) => out.extend(inner),
                p => out.push(p),
            }
        }
        match out.len() {
            0 => Needs::Nothing,
            1 => out.pop().expect("one"),
            _ => Needs::All(out),
        }
    }

    fn any(branches: Vec<Needs>) -> Needs {
        let mut out: Vec<Needs> = Vec::new();
        for b in branches {
            match b {
                Needs::Nothing => return Needs::Nothing,
                Needs::Any(inner) => out.extend(inner),
                b => out.push(b),
            }
        }
        // A literal that holds another branch's literal adds nothing ("tests" beside "test").
        let literals: Vec<String> = out
            .iter()
            .filter_map(|b| match b {
                Needs::Literal(l) => Some(l.clone()),
                _ => None,
            })
            .collect();
        out.retain(|b| match b {
            Needs::Literal(l) => !literals
                .iter()
                .any(|o| o.len() < l.len() && l.contains(o.as_str())),
            _ => true,
        });
        out.dedup();
        match out.len() {
            0 => Needs::Nothing,
            1 => out.pop().expect("one"),
            _ => Needs::Any(out),
        }
    }

    /// Whether `folded` (a text passed through [`fold_text`]) meets the need.
    pub fn met_by(&self, folded: &str) -> bool {
        match self {
            Needs::Nothing => true,
            Needs::Literal(l) => folded.contains(l.as_str()),
            Needs::All(parts) => parts.iter().all(|p| p.met_by(folded)),
            Needs::Any(branches) => branches.iter().any(|b| b.met_by(folded)),
        }
    }
}

/// The character a literal stands for, folded; `None` for a byte escape above ASCII (outside
/// Unicode mode it means a byte, not a character).
fn literal_char(lit: &regex_syntax::ast::Literal) -> Option<char> {
    use regex_syntax::ast::LiteralKind;
    let byte_escape = matches!(
        lit.kind,
        LiteralKind::HexFixed(_) | LiteralKind::HexBrace(_) | LiteralKind::Octal
    );
    if byte_escape && !lit.c.is_ascii() {
        return None;
    }
    fold_char(lit.c)
}

/// One character for each set of characters a case-insensitive regex treats as the same (the
/// smallest of them): Unicode simple case folding, as `regex-syntax` applies it to a literal
/// under `(?i)` (`k`, `K` and the Kelvin sign are one; `s`, `S` and `ſ` are one). `None` when
/// the tables are not compiled in.
pub fn fold_char(c: char) -> Option<char> {
    use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
    if c.is_ascii() {
        // Every ASCII letter's set holds its upper case, the smallest (`K` below the Kelvin
        // sign, `S` below `ſ`): checked over all of ASCII in the tests.
        return Some(c.to_ascii_uppercase());
    }
    let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
    class.try_case_fold_simple().ok()?;
    class.ranges().first().map(|r| r.start())
}

/// `text` with every character folded by [`fold_char`] (unchanged where it cannot be).
pub fn fold_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        if !text.bytes().any(|b| b.is_ascii_lowercase()) {
            return std::borrow::Cow::Borrowed(text);
        }
        return std::borrow::Cow::Owned(text.to_ascii_uppercase());
    }
    std::borrow::Cow::Owned(text.chars().map(|c| fold_char(c).unwrap_or(c)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

    /// The characters a case-insensitive literal `c` matches, as `regex-syntax` builds them.
    fn orbit(c: char) -> Vec<char> {
        let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
        class.try_case_fold_simple().expect("case tables");
        class
            .ranges()
            .iter()
            .flat_map(|r| r.start()..=r.end())
            .collect()
    }

    /// What the gate relies on: every character a case-insensitive literal matches folds to the
    /// same character as the literal, over all of Unicode (and ASCII's shortcut agrees).
    #[test]
    fn folding_is_one_character_per_case_insensitive_set() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let f = fold_char(c).expect("case tables");
            for d in orbit(c) {
                assert_eq!(fold_char(d), Some(f), "{c:?} and {d:?}");
            }
            if c.is_ascii() {
                assert_eq!(Some(f), orbit(c).first().copied(), "{c:?}");
            }
        }
        assert_eq!(fold_char('\u{212A}'), fold_char('k'));
        assert_eq!(fold_char('ſ'), fold_char('s'));
        assert_eq!(fold_text("Ξ ſecret"), fold_text("ξ SECRET"));
    }

    #[test]
    fn needs_are_read_from_the_syntax() {
        let lit = |s: &str| Needs::Literal(s.to_string());
        assert_eq!(
            Needs::of_pattern("(?i)foo|bar"),
            Needs::Any(vec![lit("FOO"), lit("BAR")])
        );
        // Optional and zero-or-more parts need nothing; an assertion takes no room.
        assert_eq!(Needs::of_pattern(r"a?b\bc(?:x){0,3}"), lit("BC"));
        assert_eq!(Needs::of_pattern(r"(?:ab){2,}"), lit("AB"));
        // One branch that needs nothing: the whole needs nothing.
        assert_eq!(Needs::of_pattern(r"abc|\w+"), Needs::Nothing);
        assert_eq!(Needs::of_pattern(r"(?:a|)bc"), lit("BC"));
        // A class of two letters is no literal; a longer branch holding a shorter one adds
        // nothing.
        assert_eq!(
            Needs::of_pattern(r"(?i)\bcl[eé]s?\b\s+(?:de\s+)?(?:prod|api|production)"),
            Needs::All(vec![lit("CL"), Needs::Any(vec![lit("PROD"), lit("API")])])
        );
        // Escapes are their characters; a byte escape above ASCII is not one.
        assert_eq!(Needs::of_pattern(r"\.env\x22"), lit(".ENV\""));
        assert_eq!(Needs::of_pattern(r"(?-u:\xFF)"), Needs::Nothing);
        // A pattern that does not parse is compiled whatever the text (and panics there).
        assert_eq!(Needs::of_pattern(r"(unclosed"), Needs::Nothing);
    }

    /// The gate answers as the regex does, for texts that match only through case folding.
    #[test]
    fn a_gated_regex_matches_as_the_regex_does() {
        let cases: &[(&str, &[&str])] = &[
            (
                "(?i)secret|kelvin",
                &["ſECRET", "\u{212A}ELVIN", "a SeCrEt", "nothing", "sec ret"],
            ),
            (
                r"(?i)\bудал\w*\s+(?:все\s+)?тест",
                &["УДАЛИ ВСЕ ТЕСТЫ", "удали тесты", "Удалить", "тест"],
            ),
            (
                r"(?i)σοφία|straße",
                &["ΣΟΦΊΑ", "σοφίας", "STRASSE", "Straße"],
            ),
            (
                r"(?i)(?-i:Run)\s+it",
                &["Run IT", "run it", "RUN it", "Run"],
            ),
            (r"删除|テスト", &["删除测试", "テストを消して", "none"]),
        ];
        for (pattern, texts) in cases {
            let plain = Regex::new(pattern).expect("pattern");
            for t in *texts {
                let gated = GatedRegex::new(pattern.to_string());
                let want: Vec<_> = plain.find_iter(t).map(|m| m.range()).collect();
                let got: Vec<_> = gated.find_iter(t).map(|m| m.range()).collect();
                assert_eq!(got, want, "{pattern} on {t:?}");
                assert_eq!(
                    GatedRegex::new(pattern.to_string()).is_match(t),
                    plain.is_match(t)
                );
            }
        }
        // A text without the pattern's literals leaves it uncompiled.
        let gated = GatedRegex::new("(?i)secret");
        assert!(!gated.is_match("keep functions small"));
        assert!(gated.compiled.get().is_none());
        assert!(gated.is_match("the SECRET"));
        assert!(gated.compiled.get().is_some());
    }
}
