//! Hook handlers for Claude Code, Codex and Gemini CLI: learnings in every session, and
//! sessions that teach.
//!
//! Each handler reads the agent's hook JSON on stdin and, when it has something to say,
//! prints `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`, the answer
//! all three read (with the event name the input gave: Gemini CLI's prompt event is
//! BeforeAgent, its end of turn AfterAgent, Claude Code's and Codex's UserPromptSubmit and
//! Stop). A handler
//! never breaks a session: on any error, bad input, missing or locked database or unknown wire
//! format it exits 0 with no output and logs why to `.gza/logs/hooks.log`. It never exits 2,
//! which would make Claude Code block the tool.

pub mod far;
pub mod install;
pub mod knowledge;
pub mod snapshot;
pub mod triggers;

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use gza_core::learning::{Learning, Priority, Status, label};
use gza_core::project::{Project, STATE_DIR};
use gza_learn::rank::{self, Ranker};
use gza_learn::session::TRANSCRIPT_TAIL_BYTES;
use gza_store::{HookLearning, Store};

/// The handlers, by the name `gza hook NAME` runs them under.
pub const HANDLERS: [&str; 5] = [
    "session-start",
    "user-prompt-submit",
    "pre-tool-use",
    "stop",
    "session-end",
];

/// Hook input larger than this is not read further (a transcript is read from its file).
const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;
/// A hook gives up on a locked database after this long, and spools what it had to write for
/// the next command (see `learn::spool`): reading never waits (WAL), and a write waits at most
/// this, so a big import or a regeneration holding the lock never stalls a session.
const BUSY: Duration = Duration::from_millis(20);
/// PreToolUse's wait, within a budget of 10 ms for the whole hook. `gza work` runs SCHED_IDLE
/// and can be preempted, by this very hook, while it holds the write lock: the injection record
/// is spooled rather than waited for.
const BUSY_BEFORE_A_TOOL: Duration = Duration::from_millis(3);

/// Whether `args` (the whole command line) runs a handler rather than a management command:
/// `gza [-C DIR] hook NAME …` with NAME not `install`, `uninstall`, `status` or a flag. Such a
/// run never goes through clap, so no argument can make it fail (or exit 2).
pub fn handler_in_args(args: &[std::ffi::OsString]) -> Option<String> {
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    let mut first = words.next()?;
    if first == "-C" || first == "--directory" {
        words.next()?;
        first = words.next()?;
    } else if first.starts_with("-C") || first.starts_with("--directory=") {
        first = words.next()?;
    }
    if first != "hook" {
        return None;
    }
    let name = words.next()?;
    let management = [
        "install",
        "uninstall",
        "status",
        "extract-session",
        "embed",
        "help",
    ];
    (!name.starts_with('-') && !management.contains(&name.as_ref())).then(|| name.into_owned())
}

/// Whether the person turned injection off (`GZA_HOOKS=off`, or seed 003's switch).
fn disabled() -> bool {
    let off = |k: &str, values: &[&str]| {
        std::env::var(k).is_ok_and(|v| values.contains(&v.trim().to_lowercase().as_str()))
    };
    off("GZA_HOOKS", &["off", "0", "false", "no"])
        || off("DISABLE_EXPERIENCE_INJECTION", &["1", "true", "yes"])
}

/// Run a handler and exit 0, whatever happens.
pub fn run_handler(name: &str) -> ExitCode {
    if disabled() {
        return ExitCode::SUCCESS;
    }
    let input = read_input(std::io::stdin(), INPUT_IDLE, INPUT_TOTAL);
    let outcome = std::panic::catch_unwind(|| handle(name, &input));
    let (project, result) = match outcome {
        Ok(r) => r,
        Err(_) => (None, Err("the handler panicked".to_string())),
    };
    match result {
        Ok(Some(output)) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(output.as_bytes());
            let _ = out.flush();
        }
        Ok(None) => {}
        Err(why) => {
            if let Some(project) = project {
                gza_core::fsutil::append_log(
                    &project.logs_dir().join("hooks.log"),
                    &format!("hook {name}: {why}"),
                );
            }
        }
    }
    ExitCode::SUCCESS
}

/// How long a hook waits for the next byte of its input once bytes stopped coming.
const INPUT_IDLE: Duration = Duration::from_secs(1);
/// How long a hook waits for its whole input, however it trickles in.
const INPUT_TOTAL: Duration = Duration::from_secs(3);

/// The hook's input: read until one complete JSON value has arrived, the input ends, it reaches
/// [`MAX_INPUT_BYTES`], no byte came for `idle`, or `total` passed, whichever is first. An agent
/// that writes its JSON and keeps the pipe open (or never writes) cannot stall the session: the
/// reading thread is left blocked and ends with the process.
fn read_input(input: impl Read + Send + 'static, idle: Duration, total: Duration) -> Vec<u8> {
    use std::sync::mpsc;
    use std::time::Instant;
    let (send, chunks) = mpsc::sync_channel::<Vec<u8>>(16);
    let reader = std::thread::Builder::new()
        .name("hook-stdin".into())
        .spawn(move || {
            let mut input = input.take(MAX_INPUT_BYTES);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match input.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => {
                        if send.send(buf[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        });
    if reader.is_err() {
        return Vec::new();
    }
    let deadline = Instant::now() + total;
    let mut got = Vec::new();
    loop {
        let wait = idle.min(deadline.saturating_duration_since(Instant::now()));
        match chunks.recv_timeout(wait) {
            Ok(chunk) => {
                got.extend_from_slice(&chunk);
                if holds_one_value(&got) {
                    return got;
                }
            }
            // The input ended (or the cap was reached), or it went quiet.
            Err(_) => return got,
        }
    }
}

/// Whether `bytes` start with one complete JSON value (an object ends with `}`: nothing else
/// is parsed, so a large input arriving in many chunks is not parsed over and over).
fn holds_one_value(bytes: &[u8]) -> bool {
    if bytes.trim_ascii_end().last() != Some(&b'}') {
        return false;
    }
    let mut values =
        serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
    match values.next() {
        Some(Ok(_)) => true,
        // Not JSON at all: nothing more will make it so; the handler says what is wrong.
        Some(Err(e)) => !e.is_eof(),
        None => false,
    }
}

/// The fields of a hook's input gza reads; everything else is tolerated and ignored.
struct Input<'a> {
    raw: &'a Value,
    event: &'a str,
    /// The agent's session id as it came, read only through [`Input::session`].
    session_id: Option<&'a str>,
    /// The id redacted, once something asks for it.
    session: std::cell::OnceCell<Option<std::borrow::Cow<'a, str>>>,
    cwd: PathBuf,
}

impl<'a> Input<'a> {
    fn str(&self, key: &str) -> Option<&'a str> {
        self.raw.get(key).and_then(Value::as_str)
    }

    /// The session id, redacted: the logs, the spool and the database (which redact it too)
    /// all see one id, and no secret in it. Redacted when first asked for, which a hook that
    /// ends before it gives or records anything (most PreToolUse calls) never does; a UUID,
    /// the id every agent sends, is recognised without building the redactor.
    fn session(&self) -> Option<&str> {
        self.session
            .get_or_init(|| self.session_id.map(gza_core::redact::redact))
            .as_deref()
    }
}

/// The gza project a session runs in: the nearest gza.yaml above `cwd`, except that inside a
/// task's worktree (`<root>/.gza/worktrees/…`) it is the project that owns the worktree.
pub fn project_for(cwd: &Path) -> Option<Project> {
    let cwd = std::path::absolute(cwd).ok()?;
    let components: Vec<_> = cwd.components().collect();
    let owner = components
        .windows(2)
        .position(|w| w[0].as_os_str() == STATE_DIR && w[1].as_os_str() == "worktrees")
        .map(|i| components[..i].iter().collect::<PathBuf>());
    Project::discover(owner.as_deref().unwrap_or(&cwd)).ok()
}

fn handle(name: &str, bytes: &[u8]) -> (Option<Project>, Result<Option<String>, String>) {
    let raw: Value = match serde_json::from_slice(bytes) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return (None, Err("stdin is not a JSON object".into())),
        Err(e) => {
            // Log it in the project of the current directory, if there is one.
            let project = std::env::current_dir().ok().and_then(|d| project_for(&d));
            return (project, Err(format!("stdin is not JSON ({e})")));
        }
    };
    let cwd = raw
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let Some(project) = project_for(&cwd) else {
        // Not a gza project: nothing to give, nowhere to log.
        return (None, Ok(None));
    };
    let input = Input {
        raw: &raw,
        event: raw
            .get("hook_event_name")
            .and_then(Value::as_str)
            .unwrap_or(""),
        session_id: raw.get("session_id").and_then(Value::as_str),
        session: std::cell::OnceCell::new(),
        cwd,
    };
    let _span = tracing::debug_span!("hook", name, event = input.event).entered();
    let started = std::time::Instant::now();
    let result = match (name, input.event) {
        ("session-start", "SessionStart" | "") => session_start(&project, &input),
        ("user-prompt-submit", "UserPromptSubmit" | "BeforeAgent" | "") => {
            user_prompt_submit(&project, &input)
        }
        ("pre-tool-use", "PreToolUse" | "") => pre_tool_use(&project, &input),
        ("stop", "Stop" | "SubagentStop" | "AfterAgent" | "")
        | ("session-end", "SessionEnd" | "") => {
            session_learned(&project, &input, name == "session-end")
        }
        (_, event) => Err(format!("nothing to do for event {event:?}; ignored")),
    };
    // Standard error, and only when RUST_LOG asks: standard output is the hook's answer.
    tracing::debug!(
        answered = result.as_ref().is_ok_and(Option::is_some),
        bytes = result
            .as_ref()
            .map_or(0, |a| a.as_ref().map_or(0, String::len)),
        error = result.as_ref().err().map(String::as_str),
        ms = started.elapsed().as_millis() as u64,
        "hook handled"
    );
    (Some(project), result)
}

fn open_store_waiting(project: &Project, busy: Duration) -> Result<Option<Store>, String> {
    Store::open_existing_project(project, busy).map_err(|e| e.to_string())
}

/// Where a giving hook reads, and records what it gave: the project's database (SQLite, on
/// this machine), or in team mode the snapshot kept under `.gza/` (`far`), with what it gives
/// spooled for the next command: a hook never waits on a far database.
///
/// The database's connection is never closed: the hook's process exits as soon as it has
/// answered, which releases its locks and files at once, and closing first would free SQLite's
/// parsed schema object by object (0.56 M instructions, a tenth of a PreToolUse). A hook holds
/// no transaction once it answers, and it asks for no checkpoint on close
/// (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`), so there is nothing a close would still do.
enum Source {
    Db(std::mem::ManuallyDrop<Store>),
    Far(far::Far),
}

/// The hook's source; `None` when there is nothing to read (no database yet).
fn open_source(project: &Project, busy: Duration) -> Result<Option<Source>, String> {
    if far::applies(project) {
        return far::load(project)
            .map(|f| Some(Source::Far(f)))
            .map_err(|m| m.to_string());
    }
    Ok(open_store_waiting(project, busy)?
        .map(|store| Source::Db(std::mem::ManuallyDrop::new(store))))
}

/// The task a hook runs under, when `gza work` started the session.
fn task_id() -> Option<gza_core::task::TaskId> {
    std::env::var("GZA_TASK_ID").ok()?.trim().parse().ok()
}

/// The JSON the agents read: `additionalContext` for `event`, under the event name the input
/// gave (Codex checks it; Gemini CLI names its prompt event BeforeAgent).
fn context_output(input: &Input, event: &str, context: &str) -> String {
    let event = if input.event.is_empty() {
        event
    } else {
        input.event
    };
    let out = json!({
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": context,
        }
    });
    format!("{out}\n")
}

/// Learnings fenced (gza_core::fence: any tag that could close the fence is neutralised, in any
/// case or look-alike), after the framing every prompt shares.
pub fn fenced(intro: &str, body: &str) -> String {
    format!(
        "{intro} {}\n{}",
        gza_core::fence::FRAMING,
        gza_core::fence::fenced(gza_core::fence::Fence::SessionLearnings, body)
    )
}

/// One learning as a line (and its checklist as checkboxes).
pub fn render(l: &Learning) -> String {
    render_hook(&HookLearning::from(l))
}

/// One learning of the hooks' snapshot as a line (and its checklist as checkboxes).
fn render_hook(l: &HookLearning) -> String {
    let mut line = format!("- {} ", label(l.id));
    if l.priority != Priority::Medium {
        let _ = write!(line, "[{}] ", l.priority);
    }
    if l.status == Status::Draft {
        line.push_str("(draft) ");
    }
    line.push_str(&l.text);
    if let Some(insight) = &l.insight {
        let _ = write!(line, ": {insight}");
    }
    for item in &l.checklist {
        let _ = write!(line, "\n  - [ ] {item}");
    }
    line
}

/// Record the learnings given; when the database is busy, spool the record for the next command.
/// In team mode (a far database) the record always goes to the spool, and the ids are noted
/// as given in the session beside the snapshot.
fn record(
    project: &Project,
    source: &Source,
    input: &Input,
    event: &str,
    ids: &[i64],
) -> Result<(), String> {
    let spool = || {
        let record = gza_learn::spool::Record::Injections {
            task: task_id(),
            session: input.session().map(str::to_string),
            event: event.to_string(),
            ids: ids.to_vec(),
        };
        gza_learn::spool::spool(project, &record).map(|_| ())
    };
    let store = match source {
        Source::Db(store) => store,
        Source::Far(_) => {
            if ids.is_empty() {
                return Ok(());
            }
            if let Some(session) = input.session() {
                far::note_given(project, session, ids)?;
            }
            return spool().map_err(|e| format!("the spool failed: {e}"));
        }
    };
    match store.record_injections(task_id(), input.session(), event, ids) {
        Err(gza_core::Error::Locked(_)) => {
            spool().map_err(|e| format!("the database is busy and the spool failed: {e}"))
        }
        other => other.map_err(|e| e.to_string()),
    }
}

/// Learnings not yet given to this session.
fn not_yet_given<'a>(
    project: &Project,
    source: &Source,
    input: &Input,
    list: Vec<&'a HookLearning>,
) -> Result<Vec<&'a HookLearning>, String> {
    let Some(session) = input.session() else {
        return Ok(list);
    };
    let given = match source {
        Source::Db(store) => store
            .injected_in_session(session)
            .map_err(|e| e.to_string())?,
        Source::Far(_) => far::given_in_session(project, session),
    };
    Ok(list
        .into_iter()
        .filter(|l| !given.contains(&l.id))
        .collect())
}

/// Whether a learning of the snapshot is in use under the project's settings (drafts only when
/// `learnings.inject_drafts`).
/// Whether a learning of the snapshot may be given: active (or a draft, when drafts are
/// given), and not decayed out of use since the snapshot was taken.
fn in_use(project: &Project, l: &HookLearning) -> bool {
    (l.status == Status::Active
        || (l.status == Status::Draft && project.config.learnings.inject_drafts))
        && !l.is_decayed()
}

fn session_start(project: &Project, input: &Input) -> Result<Option<String>, String> {
    let Some(source) = open_source(project, BUSY)? else {
        return Ok(None);
    };
    let snap = match &source {
        Source::Db(store) => snapshot::current(project, store)?.snapshot(project, store)?,
        Source::Far(far) => far.snapshot()?,
    };
    let critical: Vec<&HookLearning> = snap
        .critical
        .iter()
        .filter(|l| in_use(project, l))
        .collect();
    let critical = not_yet_given(project, &source, input, critical)?;
    // Process knowledge with triggers is given in full before the tool call it is about; here
    // it is only named, so the session knows it exists.
    let (triggered, general): (Vec<&HookLearning>, Vec<&HookLearning>) =
        critical.into_iter().partition(|l| !l.triggers.is_empty());
    let drafts = snap.drafts;
    if general.is_empty() && triggered.is_empty() && drafts == 0 {
        return Ok(None);
    }
    let mut body = String::new();
    for l in &general {
        body.push_str(&render_hook(l));
        body.push('\n');
    }
    for l in &triggered {
        let draft = if l.status == Status::Draft {
            " (draft)"
        } else {
            ""
        };
        let t = &l.triggers;
        let on: Vec<&str> = t.tools.iter().chain(&t.files).map(String::as_str).collect();
        let _ = writeln!(
            body,
            "- {} [CRITICAL]{draft} {} (shown in full before matching tool calls: {})",
            label(l.id),
            l.text,
            on.join(", ")
        );
    }
    if drafts > 0 {
        let _ = writeln!(
            body,
            "{drafts} draft learning(s) await review (`gza learnings show` marks them)."
        );
    }
    body.push_str(
        "More: `gza learnings search TEXT` finds the learnings relevant to a task; `gza learnings show` lists them all.",
    );
    let ids: Vec<i64> = general.iter().map(|l| l.id).collect();
    record(project, &source, input, "SessionStart", &ids)?;
    let intro = if general.is_empty() && triggered.is_empty() {
        "gza project learnings."
    } else {
        "gza project learnings: the CRITICAL ones."
    };
    Ok(Some(context_output(
        input,
        "SessionStart",
        &fenced(intro, &body),
    )))
}

fn user_prompt_submit(project: &Project, input: &Input) -> Result<Option<String>, String> {
    let Some(prompt) = input.str("prompt").filter(|p| !p.trim().is_empty()) else {
        return Ok(None);
    };
    let Some(source) = open_source(project, BUSY)? else {
        return Ok(None);
    };
    let k = project.config.hooks.prompt_learnings as usize;
    // No model work here but the query's embedding: learnings without a vector are ranked by
    // words, and the background job embeds them.
    let ranker = Ranker::for_hook(project);
    let query = rank::Query {
        text: prompt,
        k: k + 8,
        calibrated: true,
        drafts: project.config.learnings.inject_drafts,
    };
    let mut found = Vec::new();
    match &source {
        Source::Db(store) => {
            let hits = ranker.search(store, query).map_err(|e| e.to_string())?;
            for h in hits {
                // Process knowledge with triggers waits for its tool call (PreToolUse).
                if let Some(l) = store
                    .learning(h.id)
                    .map_err(|e| e.to_string())?
                    .filter(|l| l.is_in_use() && l.triggers.is_empty())
                    .map(|l| HookLearning::from(&l))
                    .filter(|l| !l.is_decayed())
                {
                    found.push(l);
                }
            }
        }
        Source::Far(far) => {
            // Only what the snapshot holds (learnings in use) can become text, whatever the
            // ranking index names. Of its prompt file only the table and the lines ranking
            // needs are read (the rows the index does not answer for, the best hits), each
            // line checked against its hash in the table the header's MAC covers.
            let prompt = far.prompt().map_err(|e| e.to_string())?;
            let result = ranker
                .search_local(
                    &prompt.entries(),
                    far.nonce_hash(),
                    far.vectors_model(),
                    query,
                    |ids| prompt.rows(ids),
                    |id| Ok(prompt.learning(id)?.map(|p| p.learning.text)),
                )
                .and_then(|hits| {
                    let mut found = Vec::new();
                    for h in hits {
                        if let Some(p) = prompt.learning(h.id)?.filter(|p| {
                            matches!(p.learning.status, Status::Active | Status::Draft)
                                && p.learning.triggers.is_empty()
                                && !p.learning.is_decayed()
                        }) {
                            found.push(p.learning);
                        }
                    }
                    Ok(found)
                });
            match result {
                Ok(given) => found = given,
                Err(e) => {
                    // A line that fails its check: nothing is given, and the background job
                    // writes the file again.
                    far.rewrite_soon();
                    return Err(e.to_string());
                }
            }
        }
    }
    let mut found = not_yet_given(project, &source, input, found.iter().collect())?;
    found.truncate(k);
    if found.is_empty() {
        return Ok(None);
    }
    let body: Vec<String> = found.iter().map(|l| render_hook(l)).collect();
    let ids: Vec<i64> = found.iter().map(|l| l.id).collect();
    record(project, &source, input, "UserPromptSubmit", &ids)?;
    Ok(Some(context_output(
        input,
        "UserPromptSubmit",
        &fenced(
            "gza project learnings relevant to this prompt.",
            &body.join("\n"),
        ),
    )))
}

fn pre_tool_use(project: &Project, input: &Input) -> Result<Option<String>, String> {
    let Some(tool) = input.str("tool_name") else {
        return Err("PreToolUse input without tool_name".into());
    };
    let drafts = project.config.learnings.inject_drafts;
    // Most calls name a tool no trigger names: answered from the snapshot's signed header
    // alone when the change marker says it is current, without opening SQLite (whose schema
    // parse was half of this hook's CPU). See `snapshot::kept` for when that holds.
    if !far::applies(project)
        && let Some(kept) = snapshot::kept(project)
        && !kept.names_tool(tool, drafts)
    {
        return Ok(None);
    }
    let Some(source) = open_source(project, BUSY_BEFORE_A_TOOL)? else {
        return Ok(None);
    };
    let snap = match &source {
        Source::Db(store) => {
            // The learnings with triggers as of the database's hook counter: one row and a
            // file, not a query of every learning with triggers, on every call.
            let current = snapshot::current(project, store)?;
            // A tool no trigger names ends here, with the file's header read and nothing else.
            if !current.names_tool(tool, drafts) {
                return Ok(None);
            }
            current.snapshot(project, store)?
        }
        Source::Far(far) => {
            if !far.names_tool(tool, drafts) {
                return Ok(None);
            }
            far.snapshot()?
        }
    };
    let learnings: Vec<&HookLearning> = snap
        .triggered
        .iter()
        .filter(|l| in_use(project, l))
        .collect();
    let learnings = not_yet_given(project, &source, input, learnings)?;
    let tool_input = input.raw.get("tool_input").cloned().unwrap_or(Value::Null);
    let worktrees = project.worktrees_dir();
    let call = triggers::ToolCall {
        tool,
        input: &tool_input,
        cwd: &input.cwd,
        root: &project.root,
        worktrees: &worktrees,
    };
    let picked = triggers::select(&learnings, &call, project.config.hooks.threshold);
    if picked.is_empty() {
        return Ok(None);
    }
    let mut body = String::new();
    for (l, m) in &picked {
        let head = if !l.checklist.is_empty() && m.must_inject() {
            "CRITICAL CHECKLIST: "
        } else {
            ""
        };
        let _ = writeln!(body, "{head}{}", render_hook(l));
    }
    let ids: Vec<i64> = picked.iter().map(|(l, _)| l.id).collect();
    record(project, &source, input, "PreToolUse", &ids)?;
    Ok(Some(context_output(
        input,
        "PreToolUse",
        &fenced(
            &format!("gza process knowledge for this {tool} call."),
            &body,
        ),
    )))
}

/// The text of a session: the Stop input's last message and the assistant messages of the
/// transcript's end (at most [`TRANSCRIPT_TAIL_BYTES`]).
pub fn session_text(last_message: Option<&str>, transcript: Option<&Path>) -> String {
    let mut text = String::new();
    if let Some(path) = transcript
        && let Ok(tail) = read_tail(path, TRANSCRIPT_TAIL_BYTES)
    {
        for line in tail.lines() {
            let Ok(entry) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if entry.get("type").and_then(Value::as_str) != Some("assistant") {
                continue;
            }
            if let Some(Value::Array(blocks)) = entry.pointer("/message/content") {
                for b in blocks {
                    if let Some(t) = b.get("text").and_then(Value::as_str) {
                        text.push_str(t);
                        text.push('\n');
                    }
                }
            }
        }
    }
    if let Some(m) = last_message
        && !text.contains(m)
    {
        text.push_str(m);
    }
    text
}

/// The last `max` bytes of a regular file, as text (a FIFO or device is refused at once).
fn read_tail(path: &Path, max: u64) -> std::io::Result<String> {
    let bytes = gza_core::fsutil::read_regular_tail(path, max)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Stop and SessionEnd: `[PROCESS_KNOWLEDGE]` blocks become drafts at once; at the session's
/// end an extraction model (when configured) reads the transcript in a detached process, so
/// the hook itself returns in milliseconds.
fn session_learned(project: &Project, input: &Input, end: bool) -> Result<Option<String>, String> {
    let Some(session) = input.session() else {
        return Err("no session_id in the input".into());
    };
    let transcript = input.str("transcript_path").map(PathBuf::from);
    // Claude Code and Codex give the turn's last message as `last_assistant_message`, Gemini
    // CLI's AfterAgent as `prompt_response`.
    let last = input
        .str("last_assistant_message")
        .or_else(|| input.str("prompt_response"));
    let text = session_text(last, transcript.as_deref());
    let mut problems = Vec::new();
    if text.contains("[PROCESS_KNOWLEDGE]") {
        let parsed = knowledge::parse(&text, &project.config.learnings.sections);
        problems.extend(parsed.skipped);
        problems.extend(parsed.ignored);
        if !parsed.learnings.is_empty() {
            store_session_drafts(project, session, &parsed.learnings)?;
        }
    }
    if end && let Some(path) = &transcript {
        spawn_session_extraction(project, session, path)?;
    }
    if problems.is_empty() {
        Ok(None)
    } else {
        Err(format!("[PROCESS_KNOWLEDGE]: {}", problems.join("; ")))
    }
}

/// Store a session's drafts; when the database is busy (or cannot be opened for that reason),
/// spool them for the next command instead, so nothing is lost and the hook does not wait.
/// New drafts are embedded by the background job, never here.
fn store_session_drafts(
    project: &Project,
    session: &str,
    learnings: &[gza_core::learning::NewLearning],
) -> Result<(), String> {
    let spool = || {
        let record = gza_learn::spool::Record::Drafts {
            session: session.to_string(),
            learnings: learnings.iter().map(Into::into).collect(),
        };
        gza_learn::spool::spool(project, &record)
            .map(|path| {
                gza_learn::log(
                    project,
                    &format!(
                        "session {session}: the database is busy; {} draft(s) spooled to {}",
                        learnings.len(),
                        path.display()
                    ),
                );
            })
            .map_err(|e| format!("the database is busy and the spool failed: {e}"))
    };
    // A far database (team mode): the drafts go to the spool, which the next command and the
    // background job (started by the next hook that finds the snapshot stale) take in, so the
    // hook never waits on the network.
    if far::applies(project) {
        return spool();
    }
    let store = match Store::open_existing_project(project, BUSY) {
        Ok(Some(store)) => store,
        Ok(None) => return Ok(()),
        Err(gza_core::Error::Locked(_)) => return spool(),
        Err(e) => return Err(e.to_string()),
    };
    let ids = match store.add_session_learnings(session, learnings) {
        Ok(ids) => ids,
        Err(gza_core::Error::Locked(_)) => return spool(),
        Err(e) => return Err(e.to_string()),
    };
    // One that says what a known learning says, in the same stemmed words, confirms it instead
    // (among the few learnings the ranking index finds: the hook's budget; by meaning where the
    // drafts are embedded later, never here).
    let merged = gza_learn::dedupe::settle(project, &store, &ids).unwrap_or_default();
    for (draft, into) in &merged {
        gza_learn::log(
            project,
            &format!(
                "session {session}: draft {} says what {} says; merged into it",
                label(*draft),
                label(*into)
            ),
        );
    }
    let ids: Vec<i64> = ids
        .into_iter()
        .filter(|id| !merged.iter().any(|(d, _)| d == id))
        .collect();
    // The database took a write: whatever earlier hooks spooled goes in now too.
    gza_learn::take_in_spooled(project, &store);
    if !ids.is_empty() {
        let labels: Vec<String> = ids.iter().map(|i| label(*i)).collect();
        gza_learn::log(
            project,
            &format!(
                "session {session}: drafts {} from [PROCESS_KNOWLEDGE]",
                labels.join(", ")
            ),
        );
        if model_installed(project) {
            gza_learn::rank::start_embed_job(&project.root);
        }
    }
    Ok(())
}

/// Whether an embedding model folder is there to embed with (a cheap check: no loading).
pub fn model_installed(project: &Project) -> bool {
    let configured = project
        .config
        .learnings
        .model_dir
        .as_ref()
        .map(|d| project.root.join(d));
    gza_embed::resolve_model_dir(configured.as_deref())
        .is_some_and(|d| d.join("model.safetensors").is_file())
}

/// Start `gza hook extract-session` detached, when an extraction model is configured.
fn spawn_session_extraction(
    project: &Project,
    session: &str,
    transcript: &Path,
) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let client = gza_llm::client_for(
        &project.config.learnings,
        &project.config.providers.claude.path,
    )
    .map_err(|e| e.to_string())?;
    if client.is_none() {
        return Ok(());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    std::process::Command::new(exe)
        .arg("-C")
        .arg(&project.root)
        .args([
            "hook",
            "extract-session",
            "--session",
            session,
            "--transcript",
        ])
        .arg(transcript)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .env("GZA_HOOKS", "off")
        .process_group(0)
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("cannot start the session extraction: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Gives `chunks` one read at a time, then blocks as an open pipe does (`None`) or ends.
    struct Pipe {
        chunks: Vec<Vec<u8>>,
        then_block: bool,
    }

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.chunks.is_empty() {
                if self.then_block {
                    std::thread::sleep(Duration::from_secs(3600));
                }
                return Ok(0);
            }
            let chunk = self.chunks.remove(0);
            buf[..chunk.len()].copy_from_slice(&chunk);
            Ok(chunk.len())
        }
    }

    fn read(chunks: &[&str], then_block: bool) -> (String, Duration) {
        let pipe = Pipe {
            chunks: chunks.iter().map(|c| c.as_bytes().to_vec()).collect(),
            then_block,
        };
        let started = Instant::now();
        let got = read_input(pipe, Duration::from_millis(300), Duration::from_secs(2));
        (String::from_utf8(got).unwrap(), started.elapsed())
    }

    #[test]
    fn a_complete_json_object_is_enough_though_the_pipe_stays_open() {
        let (got, took) = read(&["{\"a\": \"x}\", ", "\"b\": {\"c\": 1}}\n"], true);
        assert_eq!(got, "{\"a\": \"x}\", \"b\": {\"c\": 1}}\n");
        assert!(took < Duration::from_millis(200), "{took:?}");
    }

    #[test]
    fn a_half_object_on_an_open_pipe_waits_only_while_bytes_come() {
        let (got, took) = read(&["{\"a\": "], true);
        assert_eq!(got, "{\"a\": ");
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert!(took < Duration::from_millis(1500), "{took:?}");
    }

    #[test]
    fn what_is_not_json_and_what_ends_is_taken_as_it_is() {
        assert_eq!(read(&["not json}"], true).0, "not json}");
        assert_eq!(read(&["[1, 2]"], false).0, "[1, 2]");
        assert_eq!(read(&[], false).0, "");
    }
}
