//! Process knowledge by trigger (seed 003): which learnings apply to a tool call about to run.
//!
//! Score = tool 0.4 + file 0.4 + action keyword 0.1 + context keyword 0.1, times the priority
//! multiplier (CRITICAL 2.0, HIGH 1.5, MEDIUM 1.0, LOW 0.5) and the confidence. A CRITICAL
//! learning whose tool and file triggers both match is always injected, whatever its score.
//! A learning scoped to files (`--file`, with or without `--tool` and words) whose every
//! declared condition the call meets is injected too, at MEDIUM priority or above, whatever its
//! confidence: the score's confidence factor would otherwise leave a MEDIUM learning a person
//! scoped to a tool and a file (0.8 × 0.7 = 0.56) under the 0.7 threshold, so it never fired.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::Value;

use gza_core::learning::{Learning, Priority, Triggers};

/// Most learnings injected before one tool call.
pub const MAX_INJECTED: usize = 3;

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

/// How one learning's triggers meet a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub tool: bool,
    pub file: bool,
    pub action: bool,
    pub context: bool,
    /// The learning names files, and the call meets every condition it declares (tools, files,
    /// action and context words): the call is exactly the one it was scoped to.
    pub scoped: bool,
    pub score: f64,
}

impl Match {
    /// A CRITICAL learning whose tool and file triggers match: never left out.
    pub fn must_inject(&self, priority: Priority) -> bool {
        priority == Priority::Critical && self.tool && self.file
    }

    /// Whether it is injected before the call: never left out (CRITICAL), scoped to this very
    /// call (MEDIUM or above), or scoring at least `threshold`.
    pub fn fires(&self, priority: Priority, threshold: f64) -> bool {
        self.must_inject(priority)
            || (self.scoped && priority != Priority::Low)
            || (self.score > 0.0 && self.score >= threshold)
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

/// Score a learning's triggers against a call.
pub fn score(
    triggers: &Triggers,
    priority: Priority,
    confidence: f64,
    call: &ToolCall,
    paths: &[String],
    text: &str,
) -> Match {
    let tool = triggers
        .tools
        .iter()
        .any(|t| t == "*" || t.eq_ignore_ascii_case(call.tool));
    let file = triggers
        .files
        .iter()
        .any(|g| paths.iter().any(|p| file_matches(g, p, call.cwd)));
    let has = |words: &[String]| {
        words
            .iter()
            .any(|w| !w.trim().is_empty() && text.contains(&w.trim().to_lowercase()))
    };
    let action = has(&triggers.actions);
    let context = has(&triggers.contexts);
    let scoped = !triggers.files.is_empty()
        && file
        && (triggers.tools.is_empty() || tool)
        && (triggers.actions.is_empty() || action)
        && (triggers.contexts.is_empty() || context);
    let base = 0.4 * f64::from(u8::from(tool))
        + 0.4 * f64::from(u8::from(file))
        + 0.1 * f64::from(u8::from(action))
        + 0.1 * f64::from(u8::from(context));
    Match {
        tool,
        file,
        action,
        context,
        scoped,
        score: base * multiplier(priority) * confidence.clamp(0.0, 1.0),
    }
}

/// The learnings to inject before `call`: every CRITICAL one whose tool and file triggers
/// match, then the best others that fire ([`Match::fires`]: scoped to this call, or at or above
/// `threshold`), at most [`MAX_INJECTED`] in all (the CRITICAL ones are never cut).
pub fn select<'a>(
    learnings: &'a [Learning],
    call: &ToolCall,
    threshold: f64,
) -> Vec<(&'a Learning, Match)> {
    let paths = call.paths();
    let text = call.text();
    let mut scored: Vec<(&Learning, Match)> = learnings
        .iter()
        .filter(|l| !l.triggers.is_empty())
        .map(|l| {
            let m = score(&l.triggers, l.priority, l.confidence, call, &paths, &text);
            (l, m)
        })
        .filter(|(l, m)| m.fires(l.priority, threshold))
        .collect();
    scored.sort_by(|(a, ma), (b, mb)| {
        mb.must_inject(b.priority)
            .cmp(&ma.must_inject(a.priority))
            .then(mb.score.total_cmp(&ma.score))
            .then(a.id.cmp(&b.id))
    });
    let must = scored
        .iter()
        .filter(|(l, m)| m.must_inject(l.priority))
        .count();
    scored.truncate(must.max(MAX_INJECTED));
    scored
}

/// Whether any trigger could fire for `tool`: the tools the triggers name, `*` when some
/// learning triggers on files or words alone.
pub fn tools_named(learnings: &[Learning]) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for l in learnings.iter().filter(|l| !l.triggers.is_empty()) {
        if l.triggers.tools.is_empty() {
            tools.push("*".into());
        }
        tools.extend(l.triggers.tools.iter().cloned());
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
    fn a_learning_scoped_to_a_tool_and_a_file_fires_on_that_call_whatever_its_confidence() {
        let t = triggers(&["Edit"], &["**/plugin.json"], &[]);
        let input =
            json!({"file_path": "/work/proj/plugin.json", "old_string": "1", "new_string": "2"});
        let edit = call("Edit", &input);
        let at = |p: Priority, confidence: f64, c: &ToolCall| {
            score(&t, p, confidence, c, &c.paths(), &c.text())
        };
        let m = at(Priority::Medium, 0.7, &edit);
        assert!(
            (m.score - 0.56).abs() < 1e-9,
            "under the threshold by score"
        );
        assert!(m.scoped && m.fires(Priority::Medium, 0.7));
        assert!(at(Priority::High, 0.3, &edit).fires(Priority::High, 0.7));
        assert!(
            !at(Priority::Low, 0.7, &edit).fires(Priority::Low, 0.7),
            "LOW goes by its score"
        );
        // Another tool, or another file, is not the call it was scoped to.
        let write = call("Write", &input);
        assert!(!at(Priority::Medium, 0.7, &write).fires(Priority::Medium, 0.7));
        let other = json!({"file_path": "/work/proj/package.json"});
        let other = call("Edit", &other);
        assert!(!at(Priority::Medium, 1.0, &other).fires(Priority::Medium, 0.7));
        // Declared words must be met too.
        let worded = triggers(&["Edit"], &["**/plugin.json"], &["version"]);
        let m = score(
            &worded,
            Priority::Medium,
            0.7,
            &edit,
            &edit.paths(),
            &edit.text(),
        );
        assert!(!m.scoped && !m.fires(Priority::Medium, 0.7));
        // A tool alone is not a scope: it goes by its score.
        let tool_only = triggers(&["Edit"], &[], &[]);
        let m = score(
            &tool_only,
            Priority::High,
            1.0,
            &edit,
            &edit.paths(),
            &edit.text(),
        );
        assert!(!m.scoped && !m.fires(Priority::High, 0.7));
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
