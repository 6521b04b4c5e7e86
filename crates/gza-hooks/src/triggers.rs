//! Process knowledge by trigger (seed 003): which learnings apply to a tool call about to run.
//!
//! Score = tool 0.4 + file 0.4 + action keyword 0.1 + context keyword 0.1, times the priority
//! multiplier (CRITICAL 2.0, HIGH 1.5, MEDIUM 1.0, LOW 0.5) and the confidence. A CRITICAL
//! learning whose tool and file triggers both match is always injected, whatever its score.
//! A learning scoped to files (`--file`, with or without `--tool` and words), or to a tool and
//! words of the call (`--tool Bash --keyword "git push"`), whose every declared condition the
//! call meets is injected too, at MEDIUM priority or above, whatever its confidence: the
//! score's confidence factor would otherwise leave a MEDIUM learning a person scoped to a tool
//! and a file (0.8 × 0.7 = 0.56), or a HIGH one scoped to a tool and a keyword (0.5 × 1.5 × 0.7
//! = 0.525), under the 0.7 threshold, so it never fired.
//!
//! Globs name files from the project's root: a path is matched as given, from the session's
//! cwd, from the root and from the root of the task worktree it is in; `./x`, `/x` and `x/`
//! are read as `x`, `x` and `x/**`; a name without wildcards names a file or a folder.
//!
//! This runs before every tool call, over every learning with triggers: the file globs of all
//! of them are matched as one set built per call, and a glob is only put in the set when the
//! literal text every path it matches must contain is in one of the call's paths (so a project
//! with hundreds of triggers compiles the two or three that could match, not all of them).

use std::collections::HashSet;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::Value;

use gza_core::learning::{Origin, Priority, Triggers, normal_glob, tool_names};
use gza_store::HookLearning;

/// Most learnings injected before one tool call.
pub const MAX_INJECTED: usize = 3;

/// What trigger selection reads of a learning: the hooks' [`HookLearning`] (kept in the snapshot
/// file), owned or borrowed.
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
    /// The project's root: a glob names files from it, wherever the session's cwd is.
    pub root: &'a Path,
    /// The folder of gza's task worktrees: a file in one is matched as the same file at the root.
    pub worktrees: &'a Path,
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

/// The forms of `path` a glob is matched on: as given (`./` dropped), and relative to the
/// session's cwd, to the project's root and to the task worktree it is in (a relative path is
/// taken from the cwd first), each made lexical (`.` and `..` resolved). So `src/**/*.rs`
/// matches `/proj/src/a.rs`, `./src/a.rs`, `a.rs` from a session in `/proj/src`, and
/// `/proj/.gza/worktrees/t1/src/a.rs`.
fn path_forms(path: &str, call: &ToolCall) -> Vec<String> {
    let given = Path::new(path);
    let mut forms: Vec<String> = Vec::with_capacity(4);
    let mut push = |p: &Path| {
        let s = p.to_string_lossy();
        let s = s.trim_start_matches("./");
        if !s.is_empty() && !forms.iter().any(|f| f == s) {
            forms.push(s.to_string());
        }
    };
    push(given);
    let absolute = lexical(&if given.is_absolute() {
        given.to_path_buf()
    } else {
        call.cwd.join(given)
    });
    push(&absolute);
    for base in [call.cwd, call.root] {
        if let Ok(rel) = absolute.strip_prefix(base) {
            push(rel);
        }
    }
    // `/src/*.rs` names a file from the root, as in a .gitignore.
    if let Ok(rel) = absolute.strip_prefix(call.root) {
        push(&Path::new("/").join(rel));
    }
    // In a task's worktree: the path from that worktree's root.
    if let Ok(rel) = absolute.strip_prefix(call.worktrees) {
        let mut parts = rel.components();
        if parts.next().is_some() {
            push(parts.as_path());
        }
    }
    forms
}

/// `path` with `.` dropped and `..` taking off the part before it, without asking the file
/// system (the file may not exist yet: a Write creates it).
fn lexical(path: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether a glob without `/` is a plain name (no wildcard): it then names a file or a folder
/// anywhere in the project, so `src` matches `src/a.rs` as `Makefile` matches `Makefile`.
fn is_plain_name(pattern: &str) -> bool {
    !pattern.contains('/') && !pattern.contains(['*', '?', '[', '{'])
}

/// The parts of a path a glob without `/` is matched on: the file's name, and for a plain
/// name every folder the path passes through.
fn names_of(form: &str, plain: bool) -> impl Iterator<Item = &str> {
    let name = form.rsplit('/').next().filter(|n| !n.is_empty());
    // Folders only of a path within the project (relative, never climbing out of it):
    // `/home/x/proj/…` and `../proj/…` pass through folders that say nothing of its files.
    let within = plain && !form.starts_with('/') && !form.split('/').any(|c| c == "..");
    let folders = form
        .split('/')
        .rev()
        .skip(1)
        .filter(move |n| within && !n.is_empty());
    name.into_iter().chain(folders)
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

/// Whether a file glob matches a path: in any of its [`path_forms`], or (for a glob without
/// a `/`) on the file's name, or on any folder's name for a plain name.
fn file_matches(pattern: &str, path: &str, call: &ToolCall) -> bool {
    let pattern = normal_glob(pattern);
    let Some(m) = glob(&pattern) else {
        return false;
    };
    let bare = !pattern.contains('/');
    let plain = is_plain_name(&pattern);
    path_forms(path, call)
        .iter()
        .any(|f| m.is_match(f) || (bare && names_of(f, plain).any(|n| m.is_match(n))))
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

/// Which file globs a call's paths match: each glob tested as [`file_matches`] tests one (every
/// [`path_forms`] of a path, and for a glob without `/` the file's name or, for a plain name,
/// its folders' names), all of them in one [`GlobSet`] holding only the globs whose required
/// literal is in some form of a path.
struct FileMatches<'a> {
    matched: HashSet<&'a str>,
}

impl<'a> FileMatches<'a> {
    fn new(globs: impl IntoIterator<Item = &'a str>, paths: &[String], call: &ToolCall) -> Self {
        // Each path in every form a glob is tested on.
        let forms: Vec<String> = paths.iter().flat_map(|p| path_forms(p, call)).collect();
        let mut builder = GlobSetBuilder::new();
        // Each glob in the set: as stored, whether it is bare (no `/`), whether a plain name.
        let mut kept: Vec<(&'a str, bool, bool)> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for g in globs {
            if !seen.insert(g) {
                continue;
            }
            let normal = normal_glob(g);
            let literal = required_literal(&normal);
            if !forms.iter().any(|f| f.contains(literal)) {
                continue;
            }
            // A glob that does not parse matches nothing, as in `file_matches`.
            if let Ok(glob) = GlobBuilder::new(&normal).literal_separator(true).build() {
                builder.add(glob);
                kept.push((g, !normal.contains('/'), is_plain_name(&normal)));
            }
        }
        let mut matched = HashSet::new();
        if kept.is_empty() {
            return FileMatches { matched };
        }
        let Ok(set) = builder.build() else {
            return FileMatches { matched };
        };
        for f in &forms {
            for i in set.matches(f) {
                matched.insert(kept[i].0);
            }
            for (k, n) in names_of(f, true).enumerate() {
                for i in set.matches(n) {
                    let (g, bare, plain) = kept[i];
                    // The file's name (first) for any bare glob; folders' for plain names.
                    if bare && (k == 0 || plain) {
                        matched.insert(g);
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
    /// The call is exactly the one the learning was scoped to ([`scoped`]): it is given
    /// whatever its confidence.
    pub scoped: bool,
    /// A CRITICAL learning the call meets ([`must`]): never left out.
    pub must: bool,
    pub score: f64,
}

impl Match {
    /// A CRITICAL learning whose triggers the call meets: never left out.
    pub fn must_inject(&self) -> bool {
        self.must
    }

    /// Whether it is injected before the call: never left out (CRITICAL), scoped to this very
    /// call, or scoring at least `threshold`.
    pub fn fires(&self, threshold: f64) -> bool {
        self.must || self.scoped || (self.score > 0.0 && self.score >= threshold)
    }
}

/// Whether `triggers` name a tool (not `*`).
fn names_a_tool(triggers: &Triggers) -> bool {
    triggers
        .tools
        .iter()
        .flat_map(|t| tool_names(t))
        .any(|t| t != "*")
}

/// Whether the call meets every condition `triggers` declares, and they narrow it to calls
/// one could name: files, or a tool with words of the call (`--tool Bash --keyword "git
/// push"`: a push, not every command); for a learning a person wrote (`by_person`), also a
/// tool alone or words alone, since they asked for exactly that. Below MEDIUM only a person's
/// learning is given this way (others go by their score).
fn scoped(
    triggers: &Triggers,
    priority: Priority,
    by_person: bool,
    tool: bool,
    file: bool,
    action: bool,
    context: bool,
) -> bool {
    let words = !triggers.actions.is_empty() || !triggers.contexts.is_empty();
    let named_tool = names_a_tool(triggers);
    let narrow =
        !triggers.files.is_empty() || (named_tool && words) || (by_person && (named_tool || words));
    (priority != Priority::Low || by_person)
        && narrow
        && (triggers.files.is_empty() || file)
        && (triggers.tools.is_empty() || tool)
        && (triggers.actions.is_empty() || action)
        && (triggers.contexts.is_empty() || context)
}

/// Whether a CRITICAL learning must be given before the call: it names files or a tool, and
/// the call meets each it names (with files named, the files and tools decide, as seed 003
/// has it; with a tool alone, its words too, so `--tool Bash --keyword "git push"` is every
/// push and not every command). SessionStart promises these "before matching tool calls".
fn must(
    triggers: &Triggers,
    priority: Priority,
    tool: bool,
    file: bool,
    action: bool,
    context: bool,
) -> bool {
    let files = !triggers.files.is_empty();
    priority == Priority::Critical
        && (files || names_a_tool(triggers))
        && (!files || file)
        && (triggers.tools.is_empty() || tool)
        && (files
            || ((triggers.actions.is_empty() || action)
                && (triggers.contexts.is_empty() || context)))
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
        .flat_map(|t| tool_names(t))
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
    origin: Origin,
    confidence: f64,
    call: &ToolCall,
    paths: &[String],
    text: &str,
) -> Match {
    let tool = tool_matches(triggers, call.tool);
    let file = triggers
        .files
        .iter()
        .any(|g| paths.iter().any(|p| file_matches(g, p, call)));
    let action = has_word(&triggers.actions, text);
    let context = has_word(&triggers.contexts, text);
    Match {
        tool,
        file,
        action,
        context,
        scoped: scoped(
            triggers,
            priority,
            origin == Origin::User,
            tool,
            file,
            action,
            context,
        ),
        must: must(triggers, priority, tool, file, action, context),
        score: base(tool, file, action, context)
            * multiplier(priority)
            * confidence.clamp(0.0, 1.0),
    }
}

/// The learnings to inject before `call`: every CRITICAL one whose tool and file triggers
/// match, then the best others that fire ([`Match::fires`]: scoped to this call, or at or above
/// `threshold`), at most [`MAX_INJECTED`] in all (the CRITICAL ones are never cut).
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
        call,
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
        let by_person = l.origin() == Origin::User;
        // Given (or scoped to this call) if its words, when it declares any, are in the text.
        let may_be_must = must(t, l.priority(), tool, file, true, true);
        let reachable = best > 0.0 && best >= threshold;
        let may_be_scoped = scoped(t, l.priority(), by_person, tool, file, true, true);
        if !may_be_must && !reachable && !may_be_scoped {
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
            scoped: scoped(t, l.priority(), by_person, tool, file, action, context),
            must: must(t, l.priority(), tool, file, action, context),
            score: base(tool, file, action, context) * factor,
        };
        if m.fires(threshold) {
            scored.push((l, m));
        }
    }
    scored.sort_by(|(a, ma), (b, mb)| {
        mb.must
            .cmp(&ma.must)
            .then(mb.score.total_cmp(&ma.score))
            .then(a.id().cmp(&b.id()))
    });
    let must = scored.iter().filter(|(_, m)| m.must).count();
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
        tools.extend(
            t.tools
                .iter()
                .flat_map(|e| tool_names(e))
                .map(str::to_string),
        );
    }
    tools.sort();
    tools.dedup();
    tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use gza_core::learning::Learning;
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
            root: Path::new("/work/proj"),
            worktrees: Path::new("/work/proj/.gza/worktrees"),
        }
    }

    /// A call with no input from a session in `cwd` of the project `/work/proj`.
    fn from(cwd: &Path) -> ToolCall<'_> {
        static NULL: Value = Value::Null;
        ToolCall {
            tool: "Edit",
            input: &NULL,
            cwd,
            root: Path::new("/work/proj"),
            worktrees: Path::new("/work/proj/.gza/worktrees"),
        }
    }

    fn m(t: &Triggers, p: Priority, c: &ToolCall) -> Match {
        score(t, p, Origin::Agent, 1.0, c, &c.paths(), &c.text())
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
        assert!(!r.tool && r.file && !r.must_inject());
    }

    #[test]
    fn a_learning_scoped_to_a_tool_and_a_file_fires_on_that_call_whatever_its_confidence() {
        let t = triggers(&["Edit"], &["**/plugin.json"], &[]);
        let input =
            json!({"file_path": "/work/proj/plugin.json", "old_string": "1", "new_string": "2"});
        let edit = call("Edit", &input);
        let at = |p: Priority, confidence: f64, c: &ToolCall| {
            score(&t, p, Origin::Agent, confidence, c, &c.paths(), &c.text())
        };
        let m = at(Priority::Medium, 0.7, &edit);
        assert!(
            (m.score - 0.56).abs() < 1e-9,
            "under the threshold by score"
        );
        assert!(m.scoped && m.fires(0.7));
        assert!(at(Priority::High, 0.3, &edit).fires(0.7));
        assert!(
            !at(Priority::Low, 0.7, &edit).fires(0.7),
            "LOW goes by its score"
        );
        // Another tool, or another file, is not the call it was scoped to.
        let write = call("Write", &input);
        assert!(!at(Priority::Medium, 0.7, &write).fires(0.7));
        let other = json!({"file_path": "/work/proj/package.json"});
        let other = call("Edit", &other);
        assert!(!at(Priority::Medium, 1.0, &other).fires(0.7));
        // Declared words must be met too.
        let worded = triggers(&["Edit"], &["**/plugin.json"], &["version"]);
        let m = score(
            &worded,
            Priority::Medium,
            Origin::Agent,
            0.7,
            &edit,
            &edit.paths(),
            &edit.text(),
        );
        assert!(!m.scoped && !m.fires(0.7));
        // A tool alone is not a scope for an agent's or a model's learning: it goes by its
        // score.
        let tool_only = triggers(&["Edit"], &[], &[]);
        let m = score(
            &tool_only,
            Priority::High,
            Origin::Agent,
            1.0,
            &edit,
            &edit.paths(),
            &edit.text(),
        );
        assert!(!m.scoped && !m.fires(0.7));
    }

    #[test]
    fn globs_match_absolute_relative_and_bare_names() {
        let cwd = Path::new("/work/proj");
        assert!(file_matches(
            "**/plugin.json",
            "/work/proj/plugin.json",
            &from(cwd)
        ));
        assert!(file_matches(
            "**/plugin.json",
            "plugins/x/plugin.json",
            &from(cwd)
        ));
        assert!(file_matches(
            "plugin.json",
            "/elsewhere/deep/plugin.json",
            &from(cwd)
        ));
        assert!(file_matches(
            "migrations/*.sql",
            "/work/proj/migrations/V1__a.sql",
            &from(cwd)
        ));
        assert!(!file_matches(
            "migrations/*.sql",
            "/work/proj/src/migrations.rs",
            &from(cwd)
        ));
        assert!(
            !file_matches("[", "/x", &from(cwd)),
            "a broken glob matches nothing"
        );
        let input = json!({"command": "sed -i s/1/2/ plugins/a/plugin.json && git add ."});
        let c = call("Bash", &input);
        assert!(
            c.paths()
                .iter()
                .any(|p| file_matches("**/plugin.json", p, &from(cwd)))
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

    /// Globs name files from the project's root, wherever the session is and however the tool
    /// names the file; folders and plain names too; and a tool list written as a matcher.
    #[test]
    fn paths_are_matched_from_the_root_the_cwd_and_a_task_worktree() {
        let root = Path::new("/work/proj");
        let sub = Path::new("/work/proj/src");
        for (glob, path, cwd, hit) in [
            ("src/**/*.rs", "/work/proj/src/a/b.rs", sub, true),
            ("src/**/*.rs", "a/b.rs", sub, true),
            ("src/**/*.rs", "./src/a/b.rs", root, true),
            (
                "src/**/*.rs",
                "/work/proj/.gza/worktrees/t1/src/a/b.rs",
                root,
                true,
            ),
            (
                "src/**/*.rs",
                "../src/a/b.rs",
                Path::new("/work/proj/docs"),
                true,
            ),
            ("src/**/*.rs", "/work/proj/lib/src.rs", root, false),
            ("./src/*.rs", "/work/proj/src/a.rs", root, true),
            ("/src/*.rs", "/work/proj/src/a.rs", sub, true),
            ("/src/*.rs", "/work/proj/lib/src/a.rs", root, false),
            ("src/", "/work/proj/src/deep/a.rs", root, true),
            ("src", "/work/proj/src/deep/a.rs", root, true),
            ("src", "/work/proj/lib/srcs/a.rs", root, false),
            // A plain name says nothing of folders outside the project.
            ("work", "/work/proj/a.rs", root, false),
            ("Makefile", "/work/proj/sub/Makefile", root, true),
        ] {
            assert_eq!(
                file_matches(glob, path, &from(cwd)),
                hit,
                "{glob} on {path} from {cwd:?}"
            );
        }
        let t = triggers(&["Edit|Write", "MultiEdit, NotebookEdit"], &[], &[]);
        for tool in ["Edit", "Write", "MultiEdit", "NotebookEdit"] {
            assert!(tool_matches(&t, tool), "{tool}");
        }
        assert!(!tool_matches(&t, "Bash"));
        let named = tools_named(&[HookLearning::from(&Learning {
            triggers: t,
            ..gza_learn::dedupe::preview(
                &gza_core::learning::NewLearning::new("General", "x", Origin::User),
                1,
            )
        })]);
        assert_eq!(named, ["Edit", "MultiEdit", "NotebookEdit", "Write"]);
    }

    /// A learning a person scoped to a tool and words of the call (no file) reaches that call
    /// at HIGH and MEDIUM, as one scoped to a file does; a tool alone or words alone do not.
    #[test]
    fn a_learning_scoped_to_a_tool_and_a_keyword_fires_on_that_call() {
        let push = json!({"command": "git push origin v1.2.0"});
        let other = json!({"command": "git status"});
        let bash = call("Bash", &push);
        let at = |t: &Triggers, p: Priority, c: &ToolCall| {
            score(t, p, Origin::Agent, 0.7, c, &c.paths(), &c.text())
        };
        let scoped = triggers(&["Bash"], &[], &["git push"]);
        for p in [Priority::High, Priority::Medium] {
            let m = at(&scoped, p, &bash);
            assert!(m.scoped && m.fires(0.7), "{p:?}: {m:?}");
        }
        assert!(!at(&scoped, Priority::Low, &bash).fires(0.7));
        let status = call("Bash", &other);
        assert!(!at(&scoped, Priority::High, &status).fires(0.7));
        let edit = call("Edit", &push);
        assert!(!at(&scoped, Priority::High, &edit).fires(0.7));
        let tool_only = triggers(&["Bash"], &[], &[]);
        assert!(!at(&tool_only, Priority::High, &bash).scoped);
        let words_only = triggers(&[], &[], &["git push"]);
        assert!(!at(&words_only, Priority::High, &bash).scoped);
        let any_tool = triggers(&["*"], &[], &["git push"]);
        assert!(!at(&any_tool, Priority::High, &bash).scoped);
        // Selection agrees with the score (its pre-filter must not drop it).
        let l = HookLearning::from(&Learning {
            priority: Priority::High,
            triggers: scoped,
            confidence: 0.7,
            ..gza_learn::dedupe::preview(
                &gza_core::learning::NewLearning::new("General", "x", Origin::Agent),
                1,
            )
        });
        assert_eq!(select(std::slice::from_ref(&l), &bash, 0.7).len(), 1);
        assert!(select(std::slice::from_ref(&l), &status, 0.7).is_empty());
    }

    /// What a person scopes a learning to is what it reaches: a tool alone, words alone, a
    /// file at LOW; a CRITICAL one scoped to a tool (which SessionStart promises "before
    /// matching tool calls") is never left out of that tool's calls, and with words only of
    /// the calls that have them. An agent's learning scoped the same way goes by its score.
    #[test]
    fn what_a_person_scopes_a_learning_to_is_what_it_reaches() {
        let write_input = json!({"file_path": "/work/proj/src/x.rs", "content": "fn x() {}"});
        let write = call("Write", &write_input);
        let doc_input =
            json!({"file_path": "/work/proj/docs/intro.md", "old_string": "a", "new_string": "b"});
        let doc = call("Edit", &doc_input);
        let compose_input = json!({"command": "docker compose up -d"});
        let compose = call("Bash", &compose_input);
        let ls_input = json!({"command": "ls"});
        let ls = call("Bash", &ls_input);
        let at = |t: &Triggers, p: Priority, o: Origin, c: &ToolCall| {
            score(t, p, o, 0.7, c, &c.paths(), &c.text())
        };
        let tool = triggers(&["Write"], &[], &[]);
        let m = at(&tool, Priority::Critical, Origin::Agent, &write);
        assert!(m.must && m.fires(0.7), "CRITICAL by tool alone: {m:?}");
        assert!(!at(&tool, Priority::Critical, Origin::Agent, &doc).fires(0.7));
        assert!(at(&tool, Priority::Medium, Origin::User, &write).fires(0.7));
        assert!(!at(&tool, Priority::Medium, Origin::Agent, &write).fires(0.7));
        assert!(!at(&tool, Priority::Medium, Origin::User, &doc).fires(0.7));
        let words = triggers(&[], &[], &["docker compose"]);
        assert!(at(&words, Priority::High, Origin::User, &compose).fires(0.7));
        assert!(!at(&words, Priority::High, Origin::User, &ls).fires(0.7));
        assert!(!at(&words, Priority::High, Origin::Agent, &compose).fires(0.7));
        let docs = triggers(&[], &["docs/*.md"], &[]);
        assert!(at(&docs, Priority::Low, Origin::User, &doc).fires(0.7));
        assert!(!at(&docs, Priority::Low, Origin::Agent, &doc).fires(0.7));
        assert!(!at(&docs, Priority::Low, Origin::User, &write).fires(0.7));
        // CRITICAL with a tool and words: every push, not every command.
        let push = triggers(&["Bash"], &[], &["docker compose"]);
        assert!(at(&push, Priority::Critical, Origin::Agent, &compose).must);
        assert!(!at(&push, Priority::Critical, Origin::Agent, &ls).fires(0.7));
        // `*` is no tool: CRITICAL on it alone is not forced into every call.
        let any = triggers(&["*"], &[], &[]);
        assert!(!at(&any, Priority::Critical, Origin::Agent, &ls).must);
        // Selection agrees (its pre-filter keeps them).
        for (t, p, c) in [
            (&tool, Priority::Critical, &write),
            (&words, Priority::High, &compose),
            (&docs, Priority::Low, &doc),
        ] {
            let l = HookLearning::from(&Learning {
                priority: p,
                triggers: t.clone(),
                confidence: 0.7,
                ..gza_learn::dedupe::preview(
                    &gza_core::learning::NewLearning::new("General", "x", Origin::User),
                    1,
                )
            });
            assert_eq!(select(std::slice::from_ref(&l), c, 0.7).len(), 1, "{t:?}");
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
            "./src/*.rs",
            "/src/**/*.rs",
            "src/",
            "src",
            "a",
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
            "./src/a/b.rs",
            "/work/proj/.gza/worktrees/t1/src/a/b.rs",
            "../proj/src/x.rs",
            "/src/a.rs",
        ];
        for path in paths {
            let one = vec![path.to_string()];
            let set = FileMatches::new(globs.iter().map(String::as_str), &one, &from(cwd));
            for g in &globs {
                assert_eq!(
                    set.any(std::slice::from_ref(g)),
                    file_matches(g, path, &from(cwd)),
                    "{g} on {path}"
                );
            }
        }
    }

    #[test]
    fn criticals_are_never_cut_and_the_rest_need_the_threshold() {
        let mk = |id: i64, p: Priority, t: Triggers| {
            HookLearning::from(&Learning {
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
            })
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
