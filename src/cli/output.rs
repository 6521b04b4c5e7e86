//! Terminal output: colour that respects NO_COLOR and non-terminals, aligned tables, short text.

use std::io::Write;

use anstyle::{AnsiColor, Style};

use crate::task::TaskStatus;

/// Standard output that strips colour when it is not a terminal or NO_COLOR is set, and never
/// passes a terminal control sequence but colour ([`Printable`]).
pub fn stdout() -> Printable<anstream::AutoStream<std::io::Stdout>> {
    Printable(anstream::AutoStream::auto(std::io::stdout()))
}

/// Standard error, like [`stdout`].
pub fn stderr() -> Printable<anstream::AutoStream<std::io::Stderr>> {
    Printable(anstream::AutoStream::auto(std::io::stderr()))
}

/// A writer that passes text, newlines, tabs and colour (SGR: `ESC [ digits m`) and drops
/// every other control character: what gza prints quotes agents, models and repositories
/// (prompts, outputs, comments, branch names, configuration keys), and on a terminal an OSC 52
/// would write the clipboard, a CSI clear the screen, a carriage return overwrite what gza
/// said. anstream strips colour for pipes, but passes everything to a terminal. Each write is
/// filtered whole: gza writes a colour's sequence in one piece.
pub struct Printable<W: Write>(pub W);

impl<W: Write> Write for Printable<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        if text
            .chars()
            .all(|c| (!c.is_control() || c == '\n' || c == '\t') && !is_bidi_control(c))
        {
            self.0.write_all(text.as_bytes())?;
            return Ok(buf.len());
        }
        self.0.write_all(printable(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `text` with every control character but newline, tab and a colour sequence left out.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\x1b' {
            // Colour only: ESC [ (digits or ;)* m, kept whole.
            let rest = &text[i + 1..];
            if let Some(body) = rest.strip_prefix('[') {
                let len = body
                    .find(|c: char| !(c.is_ascii_digit() || c == ';'))
                    .unwrap_or(body.len());
                if body[len..].starts_with('m') {
                    out.push_str(&text[i..i + 2 + len + 1]);
                    for _ in 0..len + 2 {
                        chars.next();
                    }
                    continue;
                }
            }
            continue;
        }
        if (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c) {
            continue;
        }
        out.push(c);
    }
    out
}

/// The invisible characters that reorder how a terminal shows text (the "Trojan Source"
/// embeddings, overrides and isolates, and the marks): text from a repository or an agent could
/// use them to show a person something other than what gza would run or store.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with each of [`is_bidi_control`]'s characters written as its escape (`\u{202e}`),
/// for a value a person is asked to judge, which must show every character it holds.
pub fn bidi_visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_bidi_control(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();
pub const GREEN: Style = AnsiColor::Green.on_default();
pub const RED: Style = AnsiColor::Red.on_default();
pub const YELLOW: Style = AnsiColor::Yellow.on_default();
pub const CYAN: Style = AnsiColor::Cyan.on_default();

/// Wrap `text` in `style`.
pub fn paint(style: Style, text: impl std::fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}

/// The colour of a status word.
pub fn status_style(status: TaskStatus) -> Style {
    match status {
        TaskStatus::Pending => DIM,
        TaskStatus::InProgress => CYAN,
        TaskStatus::Completed => GREEN,
        TaskStatus::Failed => RED,
        TaskStatus::Dropped => YELLOW,
    }
}

/// Columns available for a table: the terminal's width, else $COLUMNS, else 100.
pub fn width() -> usize {
    if let Some((_, columns)) = dialoguer::console::Term::stdout().size_checked() {
        return usize::from(columns);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c: &usize| c >= 20)
        .unwrap_or(100)
}

pub use crate::text::one_line;

/// A table with a header row; cells may hold colour codes, which do not count towards width.
#[derive(Default)]
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: Vec<&'static str>) -> Self {
        Table {
            header,
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.len()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(crate::text::display_width(cell));
            }
        }
        widths
    }

    /// Print the table; the last column (free text) is cut to one line that fits the screen.
    pub fn print(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut widths = self.widths();
        let last = widths.len() - 1;
        widths[last] = 0;
        let used: usize = widths[..last].iter().map(|w| w + 2).sum();
        let room = width().saturating_sub(used).max(20);
        let header: Vec<String> = self.header.iter().map(|h| h.to_string()).collect();
        write_row(out, &header, &widths, last, BOLD)?;
        for row in &self.rows {
            let mut row = row.clone();
            if let Some(text) = row.get_mut(last) {
                *text = one_line(text, room);
            }
            write_row(out, &row, &widths, last, Style::new())?;
        }
        Ok(())
    }
}

/// `text` followed by spaces up to `width` terminal columns (CJK and emoji count two, colour
/// codes none), as `{:width$}` would do if it counted columns rather than characters.
pub fn pad(text: &str, width: usize) -> String {
    let mut padded = text.to_string();
    padded.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(crate::text::display_width(text)),
    ));
    padded
}

fn write_row(
    out: &mut impl Write,
    cells: &[String],
    widths: &[usize],
    last: usize,
    style: Style,
) -> std::io::Result<()> {
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate() {
        if i < last {
            line.push_str(&pad(cell, widths[i] + 2));
        } else {
            line.push_str(cell);
        }
    }
    writeln!(out, "{}", paint(style, line.trim_end()))
}

/// Money as people read it: `$0.0123`, or `-` when unknown.
pub fn cost(cost: Option<f64>) -> String {
    match cost {
        Some(c) if c >= 1.0 => format!("${c:.2}"),
        Some(c) => format!("${c:.4}"),
        None => "-".into(),
    }
}

/// A duration in seconds as `42s`, `3m 05s` or `1h 02m`; `-` when unknown.
pub fn duration(seconds: Option<f64>) -> String {
    let Some(s) = seconds else { return "-".into() };
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The date and minute of an RFC 3339 timestamp, as `2026-11-22 07:50`.
pub fn short_time(ts: &str) -> String {
    ts.get(..16)
        .map(|t| t.replace('T', " "))
        .unwrap_or_else(|| ts.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_colour_and_text_reach_the_terminal() {
        let ours = paint(RED, "Error:");
        assert_eq!(printable(&ours), ours);
        assert_eq!(printable("a\tb\nc"), "a\tb\nc");
        // OSC 52 (clipboard), OSC 0 (title), OSC 8 (link), CSI clear screen and cursor moves,
        // a carriage return, a backspace, C1's CSI: the sequences lose their control bytes.
        assert_eq!(
            printable("x\x1b]52;c;ZXZpbA==\x07y\x1b]0;t\x1b\\z"),
            "x]52;c;ZXZpbA==y]0;t\\z"
        );
        assert_eq!(
            printable("\x1b[2J\x1b[1;1H\rok\x08\u{9b}31m"),
            "[2J[1;1Hok31m"
        );
        let mut out = Printable(Vec::new());
        write!(out, "{}\x1b]52;c;eA==\x07 done", paint(GREEN, "ok")).unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            format!("{}]52;c;eA== done", paint(GREEN, "ok"))
        );
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(Some(42.4)), "42s");
        assert_eq!(duration(Some(185.0)), "3m 05s");
        assert_eq!(duration(Some(3720.0)), "1h 02m");
        assert_eq!(duration(None), "-");
    }

    #[test]
    fn padding_counts_columns() {
        assert_eq!(pad("日本", 6), "日本  ");
        assert_eq!(pad("ab", 6), "ab    ");
        assert_eq!(
            pad(&paint(GREEN, "ok"), 3),
            format!("{} ", paint(GREEN, "ok"))
        );
        assert_eq!(pad("too wide", 3), "too wide");
    }

    #[test]
    fn escape_codes_do_not_count() {
        assert_eq!(crate::text::display_width(&paint(GREEN, "done")), 4);
    }
}
