//! The learnings.md format, read in one place: `## Section` headings, `- ` or `* ` items each
//! optionally ending in an id comment (`<!-- L42 -->`), and the version marker gza writes in the
//! header (`<!-- gza:version 7 -->`). The learn crate renders and reconciles the file; the runner
//! reads it to see what an agent running in place added. Both parse it here so they cannot
//! disagree about what a line is.

use std::sync::LazyLock;

use regex::Regex;

use crate::learning::parse_label;
use crate::redact::one_clean_line;

static ID_COMMENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\s*<!--\s*[Ll](\d{1,18})\s*-->\s*$").expect("valid regex"));
static VERSION_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<!--\s*gza:version\s+(\d{1,18})\b").expect("valid regex"));

/// One item line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewLine {
    pub section: String,
    pub text: String,
    pub id: Option<i64>,
}

/// A parsed learnings file: the version it says gza wrote, and its items in order.
#[derive(Debug, Clone, Default)]
pub struct ParsedView {
    pub version: Option<i64>,
    pub lines: Vec<ViewLine>,
}

/// Read a learnings file (gza's, a person's, or Python gza's): `## Section` headings and `- `
/// or `* ` items, each optionally ending in an id comment.
pub fn parse(text: &str) -> ParsedView {
    let mut view = ParsedView::default();
    let mut section = String::from("General");
    for line in text.lines() {
        let t = line.trim();
        if view.version.is_none()
            && let Some(c) = VERSION_MARKER.captures(t)
        {
            view.version = c[1].parse().ok();
            continue;
        }
        if let Some(h) = t.strip_prefix("## ") {
            let h = one_clean_line(h);
            if !h.is_empty() {
                section = h;
            }
        } else if let Some(body) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
            let (body, id) = match ID_COMMENT.captures(body) {
                Some(c) => (
                    &body[..c.get(0).expect("whole match").start()],
                    parse_label(&c[1]),
                ),
                None => (body, None),
            };
            let text = one_clean_line(body);
            if !text.is_empty() {
                view.lines.push(ViewLine {
                    section: section.clone(),
                    text,
                    id,
                });
            }
        }
    }
    view
}

/// The file's text without id comments or the version marker: what an agent is given.
pub fn strip_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if VERSION_MARKER.is_match(line.trim()) {
            continue;
        }
        out.push_str(ID_COMMENT.replace(line, "").as_ref());
        out.push('\n');
    }
    out
}

/// The version marker's number, if the text carries one.
pub fn version(text: &str) -> Option<i64> {
    VERSION_MARKER
        .captures(text)
        .and_then(|c| c[1].parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_items_ids_and_the_version_marker() {
        let text = "# Learnings\n<!-- gza:version 7 -->\n\n## Testing\n- Run `cargo test` first <!-- L42 -->\n* Keep fixtures small\nplain prose\n## Style\n-  \n- Prefer `?` <!-- l3 -->\n";
        let view = parse(text);
        assert_eq!(view.version, Some(7));
        assert_eq!(version(text), Some(7));
        let got: Vec<_> = view
            .lines
            .iter()
            .map(|l| (l.section.as_str(), l.text.as_str(), l.id))
            .collect();
        assert_eq!(
            got,
            [
                ("Testing", "Run `cargo test` first", Some(42)),
                ("Testing", "Keep fixtures small", None),
                ("Style", "Prefer `?`", Some(3)),
            ]
        );
        let stripped = strip_ids(text);
        assert!(!stripped.contains("<!--"), "{stripped}");
        assert!(stripped.contains("- Run `cargo test` first\n"));
    }
}
