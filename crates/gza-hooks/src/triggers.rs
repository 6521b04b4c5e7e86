//! Process knowledge by trigger (seed 003): which learnings apply to a tool call about to run.
//!
//! Score = tool 0.4 + file 0.4 + action keyword 0.1 + context keyword 0.1, times the priority
//! multiplier (CRITICAL 2.0, HIGH 1.5, MEDIUM 1.0, LOW 0.5) and the confidence. A CRITICAL
//! learning whose tool and file triggers both match is always injected, whatever its score.
//!
//! This runs before every tool call, over every learning with triggers: the file globs of all
//! of them are matched as one set built per call, and a glob is only put in the set when the
//! literal text every path it matches must contain is in one of the call's paths (so a project
//! with hundreds of triggers compiles the two or three that could match, not all of them).

use std::collections::HashSet;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::Value;

use gza_core::learning::{Learning, Origin, Priority, Triggers};
use gza_store::HookLearning;

/// Most learnings injected before one tool call.
pub const MAX_INJECTED: usize = 3;

/// What trigger selection reads of a learning: a stored [`Learning`], or the hooks' lighter
/// [`HookLearning`] kept in the snapshot file.
pub trait Triggered {
    fn id(&self) -> i64;
    fn triggers(&self) -> &Triggers;
    fn priority(&self) -> Priority;
    fn confidence(&self) -> f64;
    fn origin(&self) -> Origin;
}

impl<T: Triggered> Triggered for &T {
    fn id(&self) -> i64 {
        (**self).id()
    }
    fn triggers(&self) -> &Triggers {
        (**self).triggers()
    }
    fn priority(&self) -> Priority {
        (**self).priority()
    }
    fn confidence(&self) -> f64 {
        (**self).confidence()
    }
    fn origin(&self) -> Origin {
        (**self).origin()
    }
}

impl Triggered for Learning {
    fn id(&self) -> i64 {
        self.id
    }
    fn triggers(&self) -> &Triggers {
        &self.triggers
    }
    fn priority(&self) -> Priority {
        self.priority
    }
    fn confidence(&self) -> f64 {
        self.confidence
    }
    fn origin(&self) -> Origin {
        self.origin
    }
}

impl Triggered for HookLearning {
    fn id(&self) -> i64 {
        self.id
    }
    fn triggers(&self) -> &Triggers {
        &self.triggers
    }
    fn priority(&self) -> Priority {
        self.priority
    }
    fn confidence(&self) -> f64 {
        self.confidence
    }
    fn origin(&self) -> Origin {
        self.origin
    }
}

/// A tool call about to run, as PreToolUse describes it.
pub struct ToolCall<'a> {
    pub tool: &'a str,
    pub input: &'a Value,
    /// The session's working directory (file paths are matched relative to it too).
    pub cwd: &'a Path,
}

impl ToolCall<'_> {
    /// The paths the call touches: the file fields tools use, and path-like words of a command.
    fn paths(&self) -> Vec<String> {
        let mut paths = Vec::new();
        for key in ["file_path", "notebook_path", "path"] {
            if let Some(p) = self.input.get(key).and_then(Value::as_str) {
                paths.push(p.to_string());
            }
        }
        if let Some(cmd) = self.input.get("command").and_then(Value::as_str) {
            paths.extend(
                cmd.split(|c: char| c.is_whitespace() || "\"'`;|&<>()".contains(c))
                    .filter(|w| w.contains('/') || w.contains('.'))
                    .take(64)
                    .map(str::to_string),
            );
        }
        paths
    }

    /// The call's text, lowercased, for keyword matching.
    fn text(&self) -> String {
        let mut text = String::new();
        collect_strings(self.input, &mut text, 64 * 1024);
        text.to_lowercase()
    }
}

fn collect_strings(v: &Value, out: &mut String, budget: usize) {
    if out.len() >= budget {
        return;
    }
    match v {
        Value::String(s) => {
            let room = budget - out.len();
            let cut = s.char_indices().nth(room).map_or(s.len(), |(i, _)| i);
            out.push_str(&s[..cut]);
            out.push(' ');
        }
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out, budget)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out, budget)),
        _ => {}
    }
}

/// A glob as a one-glob set: the set matches common shapes (`**/name.json`, `*.rs`, a prefix)
/// by literal, extension or prefix without compiling a regex, which for a few dozen triggers
/// was most of a PreToolUse hook's time.
fn glob(pattern: &str) -> Option<GlobSet> {
    let g = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()?;
    GlobSetBuilder::new().add(g).build().ok()
}

/// Whether a file glob matches a path: as given, relative to `cwd`, or (for a glob without a
/// `/`) the file's name.
fn file_matches(pattern: &str, path: &str, cwd: &Path) -> bool {
    let Some(m) = glob(pattern) else {
        return false;
    };
    let p = Path::new(path);
    let relative = p.strip_prefix(cwd).unwrap_or(p);
    m.is_match(p)
        || m.is_match(relative)
        || (!pattern.contains('/') && p.file_name().is_some_and(|n| m.is_match(n)))
}

/// The longest run of literal text in a glob: every path the glob matches contains it (text in
/// a class `[…]` or an alternation `{…}`, and anything escaped, is left out, so the run is
/// conservative). Empty when the glob has none (`*`, `**/*`).
fn required_literal(pattern: &str) -> &str {
    let mut best = (0, 0);
    let mut run: Option<usize> = None;
    let mut braces = 0usize;
    let mut chars = pattern.char_indices().peekable();
    let bytes = pattern.as_bytes();
    let mut end_run = |run: &mut Option<usize>, end: usize| {
        let Some(mut start) = run.take() else {
            return;
        };
        // A `/` next to a `*` belongs to `**/` or `/**`, which may match nothing at all
        // (`**/plugin.json` matches `plugin.json`): it is not required.
        let mut end = end;
        if start > 0 && bytes[start - 1] == b'*' && bytes.get(start) == Some(&b'/') {
            start += 1;
        }
        if end > start && bytes.get(end) == Some(&b'*') && bytes[end - 1] == b'/' {
            end -= 1;
        }
        if end > start && end - start > best.1 - best.0 {
            best = (start, end);
        }
    };
    while let Some((i, c)) = chars.next() {
        match c {
            '[' => {
                end_run(&mut run, i);
                // A class: `[!…]` or `[^…]`, where a `]` first is one of its characters.
                let _ = chars.next_if(|&(_, c)| c == '!' || c == '^');
                let _ = chars.next_if(|&(_, c)| c == ']');
                for (_, c) in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                }
            }
            '{' => {
                end_run(&mut run, i);
                braces += 1;
            }
            '}' => {
                end_run(&mut run, i);
                braces = braces.saturating_sub(1);
            }
            '*' | '?' | ']' => end_run(&mut run, i),
            '\\' => {
                end_run(&mut run, i);
                chars.next();
            }
            _ if braces == 0 => {
                run.get_or_insert(i);
            }
            _ => {}
        }
    }
    end_run(&mut run, pattern.len());
    &pattern[best.0..best.1]
}

/// Which file globs a call's paths match: each glob tested as [`file_matches`] tests one (the
/// path as given, relative to `cwd`, and a glob without `/` on the file's name), all of them
/// in one [`GlobSet`] holding only the globs whose required literal is in some path.
struct FileMatches<'a> {
    matched: HashSet<&'a str>,
}

impl<'a> FileMatches<'a> {
    fn new(globs: impl IntoIterator<Item = &'a str>, paths: &[String], cwd: &Path) -> Self {
        // Each path in the three forms a glob is tested on.
        let forms: Vec<(String, String, Option<String>)> = paths
            .iter()
            .map(|path| {
                let p = Path::new(path);
                let relative = p.strip_prefix(cwd).unwrap_or(p);
                (
                    path.clone(),
                    relative.to_string_lossy().into_owned(),
                    p.file_name().map(|n| n.to_string_lossy().into_owned()),
                )
            })
            .collect();
        let mut builder = GlobSetBuilder::new();
        let mut kept: Vec<&'a str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for g in globs {
            if !seen.insert(g) {
                continue;
            }
            let literal = required_literal(g);
            let possible = forms.iter().any(|(p, r, n)| {
                p.contains(literal)
                    || r.contains(literal)
                    || (!g.contains('/') && n.as_deref().is_some_and(|n| n.contains(literal)))
            });
            if !possible {
                continue;
            }
            // A glob that does not parse matches nothing, as in `file_matches`.
            if let Ok(glob) = GlobBuilder::new(g).literal_separator(true).build() {
                builder.add(glob);
                kept.push(g);
            }
        }
        let mut matched = HashSet::new();
        if kept.is_empty() {
            return FileMatches { matched };
        }
        let Ok(set) = builder.build() else {
            return FileMatches { matched };
        };
        for (p, r, n) in &forms {
            for i in set.matches(p).into_iter().chain(set.matches(r)) {
                matched.insert(kept[i]);
            }
            if let Some(n) = n {
                for i in set.matches(n) {
                    if !kept[i].contains('/') {
                        matched.insert(kept[i]);
                    }
                }
            }
        }
        FileMatches { matched }
    }

    fn any(&self, globs: &[String]) -> bool {
        globs.iter().any(|g| self.matched.contains(g.as_str()))
    }
}

/// How one learning's triggers meet a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub tool: bool,
    pub file: bool,
    pub action: bool,
    pub context: bool,
    pub score: f64,
}

impl Match {
    /// A CRITICAL learning whose tool and file triggers match: never left out.
    pub fn must_inject(&self, priority: Priority) -> bool {
        priority == Priority::Critical && self.tool && self.file
    }
}

fn multiplier(p: Priority) -> f64 {
    match p {
        Priority::Critical => 2.0,
        Priority::High => 1.5,
        Priority::Medium => 1.0,
        Priority::Low => 0.5,
    }
}

fn tool_matches(triggers: &Triggers, tool: &str) -> bool {
    triggers
        .tools
        .iter()
        .any(|t| t == "*" || t.eq_ignore_ascii_case(tool))
}

/// Whether any of `words` is in `text` (lowercased).
fn has_word(words: &[String], text: &str) -> bool {
    words
        .iter()
        .any(|w| !w.trim().is_empty() && text.contains(&w.trim().to_lowercase()))
}

/// The seed's sum before the priority multiplier and the confidence.
fn base(tool: bool, file: bool, action: bool, context: bool) -> f64 {
    0.4 * f64::from(u8::from(tool))
        + 0.4 * f64::from(u8::from(file))
        + 0.1 * f64::from(u8::from(action))
        + 0.1 * f64::from(u8::from(context))
}

/// Score a learning's triggers against a call.
pub fn score(
    triggers: &Triggers,
    priority: Priority,
    confidence: f64,
    call: &ToolCall,
    paths: &[String],
    text: &str,
) -> Match {
    let tool = tool_matches(triggers, call.tool);
    let file = triggers
        .files
        .iter()
        .any(|g| paths.iter().any(|p| file_matches(g, p, call.cwd)));
    let action = has_word(&triggers.actions, text);
    let context = has_word(&triggers.contexts, text);
    Match {
        tool,
        file,
        action,
        context,
        score: base(tool, file, action, context)
            * multiplier(priority)
            * confidence.clamp(0.0, 1.0),
    }
}

/// The learnings to inject before `call`: every CRITICAL one whose tool and file triggers
/// match, then the best others at or above `threshold`, at most [`MAX_INJECTED`] in all
/// (the CRITICAL ones are never cut).
pub fn select<'a, L: Triggered>(
    learnings: &'a [L],
    call: &ToolCall,
    threshold: f64,
) -> Vec<(&'a L, Match)> {
    let paths = call.paths();
    let candidates: Vec<&L> = learnings
        .iter()
        .filter(|l| !l.triggers().is_empty())
        .collect();
    let files = FileMatches::new(
        learnings
            .iter()
            .flat_map(|l| l.triggers().files.iter().map(String::as_str)),
        &paths,
        call.cwd,
    );
    // The call's text is lowercased once, and only when some learning's words could decide.
    let mut text: Option<String> = None;
    let mut scored: Vec<(&L, Match)> = Vec::new();
    for l in candidates {
        let t = l.triggers();
        let tool = tool_matches(t, call.tool);
        let file = files.any(&t.files);
        let factor = multiplier(l.priority()) * l.confidence().clamp(0.0, 1.0);
        let best = base(tool, file, !t.actions.is_empty(), !t.contexts.is_empty()) * factor;
        let must = l.priority() == Priority::Critical && tool && file;
        let reachable = best > 0.0 && best >= threshold;
        if !must && !reachable {
            // Not even every keyword matching could bring it to the threshold.
            continue;
        }
        let text = text.get_or_insert_with(|| call.text());
        let action = has_word(&t.actions, text);
        let context = has_word(&t.contexts, text);
        let m = Match {
            tool,
            file,
            action,
            context,
            score: base(tool, file, action, context) * factor,
        };
        if m.must_inject(l.priority()) || (m.score > 0.0 && m.score >= threshold) {
            scored.push((l, m));
        }
    }
    scored.sort_by(|(a, ma), (b, mb)| {
        mb.must_inject(b.priority())
            .cmp(&ma.must_inject(a.priority()))
            .then(mb.score.total_cmp(&ma.score))
            .then(a.id().cmp(&b.id()))
    });
    let must = scored
        .iter()
        .filter(|(l, m)| m.must_inject(l.priority()))
        .count();
    scored.truncate(must.max(MAX_INJECTED));
    scored
}

/// Whether any trigger could fire for `tool`: the tools the triggers name, `*` when some
/// learning triggers on files or words alone.
pub fn tools_named<L: Triggered>(learnings: &[L]) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for t in learnings
        .iter()
        .map(Triggered::triggers)
        .filter(|t| !t.is_empty())
    {
        if t.tools.is_empty() {
            tools.push("*".into());
        }
        tools.extend(t.tools.iter().cloned());
    }
    tools.sort();
    tools.dedup();
    tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn triggers(tools: &[&str], files: &[&str], actions: &[&str]) -> Triggers {
        Triggers {
            tools: tools.iter().map(|s| s.to_string()).collect(),
            files: files.iter().map(|s| s.to_string()).collect(),
            actions: actions.iter().map(|s| s.to_string()).collect(),
            contexts: vec![],
        }
    }

    fn call<'a>(tool: &'a str, input: &'a Value) -> ToolCall<'a> {
        ToolCall {
            tool,
            input,
            cwd: Path::new("/work/proj"),
        }
    }

    fn m(t: &Triggers, p: Priority, c: &ToolCall) -> Match {
        score(t, p, 1.0, c, &c.paths(), &c.text())
    }

    #[test]
    fn the_seed_formula() {
        let t = triggers(&["Write", "Edit"], &["**/plugin.json"], &["version"]);
        let input = json!({"file_path": "/work/proj/plugins/a/plugin.json", "content": "{\"version\": \"2\"}"});
        let c = call("Write", &input);
        let got = m(&t, Priority::Medium, &c);
        assert!(got.tool && got.file && got.action && !got.context);
        assert!((got.score - 0.9).abs() < 1e-9);
        assert!((m(&t, Priority::Critical, &c).score - 1.8).abs() < 1e-9);
        assert!((m(&t, Priority::Low, &c).score - 0.45).abs() < 1e-9);
        // Reading the file is not writing it.
        let read = call("Read", &input);
        let r = m(&t, Priority::Critical, &read);
        assert!(!r.tool && r.file && !r.must_inject(Priority::Critical));
    }

    #[test]
    fn globs_match_absolute_relative_and_bare_names() {
        let cwd = Path::new("/work/proj");
        assert!(file_matches(
            "**/plugin.json",
            "/work/proj/plugin.json",
            cwd
        ));
        assert!(file_matches("**/plugin.json", "plugins/x/plugin.json", cwd));
        assert!(file_matches(
            "plugin.json",
            "/elsewhere/deep/plugin.json",
            cwd
        ));
        assert!(file_matches(
            "migrations/*.sql",
            "/work/proj/migrations/V1__a.sql",
            cwd
        ));
        assert!(!file_matches(
            "migrations/*.sql",
            "/work/proj/src/migrations.rs",
            cwd
        ));
        assert!(
            !file_matches("[", "/x", cwd),
            "a broken glob matches nothing"
        );
        let input = json!({"command": "sed -i s/1/2/ plugins/a/plugin.json && git add ."});
        let c = call("Bash", &input);
        assert!(
            c.paths()
                .iter()
                .any(|p| file_matches("**/plugin.json", p, cwd))
        );
    }

    #[test]
    fn the_required_literal_is_text_every_match_contains() {
        for (glob, literal) in [
            ("**/plugin.json", "plugin.json"),
            ("*.rs", ".rs"),
            ("migrations/*.sql", "migrations"),
            ("a/**/bcd", "bcd"),
            ("docs/**", "docs"),
            ("src/{a,bcdefgh}/x.rs", "/x.rs"),
            ("[abc]def.txt", "def.txt"),
            ("[]xyzw]ab", "ab"),
            ("[!]xyzw]ab", "ab"),
            ("a\\*bcdef", "bcdef"),
            ("**", ""),
            ("*", ""),
        ] {
            assert_eq!(required_literal(glob), literal, "{glob}");
        }
    }

    /// The one set with its literal filter says what testing each glob alone says.
    #[test]
    fn one_set_matches_as_each_glob_alone() {
        let cwd = Path::new("/work/proj");
        let globs: Vec<String> = [
            "**/plugin.json",
            "plugin.json",
            "*.json",
            "migrations/*.sql",
            "src/**/*.rs",
            "src/{lib,main}.rs",
            "[mp]lugin.json",
            "Cargo.toml",
            "/work/proj/Cargo.lock",
            "docs/**",
            "*",
            "[",
            "a\\*b.txt",
            "**/.github/workflows/*.yml",
            "a/**/bcd",
        ]
        .iter()
        .map(|g| g.to_string())
        .collect();
        let paths = [
            "/work/proj/plugin.json",
            "plugins/x/plugin.json",
            "/elsewhere/deep/plugin.json",
            "/work/proj/migrations/V1__a.sql",
            "/work/proj/src/migrations.rs",
            "src/main.rs",
            "/work/proj//src//lib.rs",
            "/work/proj/Cargo.lock",
            "Cargo.toml",
            "docs/a/b.md",
            "a*b.txt",
            "/work/proj/.github/workflows/ci.yml",
            "mlugin.json",
            "plugin.json",
            "docs",
            "a/bcd",
        ];
        for path in paths {
            let one = vec![path.to_string()];
            let set = FileMatches::new(globs.iter().map(String::as_str), &one, cwd);
            for g in &globs {
                assert_eq!(
                    set.any(std::slice::from_ref(g)),
                    file_matches(g, path, cwd),
                    "{g} on {path}"
                );
            }
        }
    }

    #[test]
    fn criticals_are_never_cut_and_the_rest_need_the_threshold() {
        let mk = |id: i64, p: Priority, t: Triggers| Learning {
            id,
            priority: p,
            triggers: t,
            ..gza_learn::dedupe::preview(
                &gza_core::learning::NewLearning::new(
                    "General",
                    "x y",
                    gza_core::learning::Origin::User,
                ),
                id,
            )
        };
        let write = triggers(&["Write"], &["**/plugin.json"], &[]);
        let tool_only = triggers(&["Write"], &[], &[]);
        let learnings = vec![
            mk(1, Priority::Medium, tool_only.clone()),
            mk(2, Priority::High, write.clone()),
            mk(3, Priority::Critical, write.clone()),
            mk(4, Priority::Critical, write.clone()),
            mk(5, Priority::Critical, write.clone()),
            mk(6, Priority::Critical, write),
        ];
        let input = json!({"file_path": "plugin.json"});
        let picked: Vec<i64> = select(&learnings, &call("Write", &input), 0.7)
            .iter()
            .map(|(l, _)| l.id)
            .collect();
        assert_eq!(
            picked,
            vec![3, 4, 5, 6],
            "four CRITICALs beat the cap; 0.4 is under 0.7"
        );
        assert_eq!(tools_named(&learnings), vec!["Write"]);
    }
}
