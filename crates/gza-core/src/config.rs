//! `gza.yaml`: the project configuration.
//!
//! YAML is read with serde_norway, the maintained fork of serde_yaml (serde_yaml is deprecated
//! and serde_yml is unsound). It keeps serde_yaml's error locations, so a bad key is reported
//! with its line and column. Secrets never live here: API keys are read from the environment.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The commented example written by `gza init`; it documents every key with its default.
pub const EXAMPLE_YAML: &str = include_str!("../../../gza.example.yaml");

/// Which agent CLI runs a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    #[default]
    Claude,
    Codex,
    Gemini,
    Command,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 4] = [Self::Claude, Self::Codex, Self::Gemini, Self::Command];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Command => "command",
        }
    }

    /// Parse a provider name given on the command line or stored with a task.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

/// How an agent is isolated from the rest of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SandboxKind {
    /// The agent runs as the user, with the user's access.
    #[default]
    None,
    /// bubblewrap: the system read-only, the task's directory read-write, HOME hidden.
    Bwrap,
    /// A container from `docker_image`, the task's directory mounted at /workspace.
    Docker,
}

impl SandboxKind {
    pub const ALL: [SandboxKind; 3] = [Self::None, Self::Bwrap, Self::Docker];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Bwrap => "bwrap",
            Self::Docker => "docker",
        }
    }
}

/// Whether a `database` value means the SQLite file in `.gza/`.
pub fn is_sqlite(value: &str) -> bool {
    let v = value.trim();
    v.is_empty() || v.eq_ignore_ascii_case("sqlite")
}

/// The most agents gza runs at once in one project (`max_concurrent`, `work --parallel`).
pub const MAX_CONCURRENT_LIMIT: u32 = 256;

/// The whole of gza.yaml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Display name; defaults to the directory name.
    pub project_name: Option<String>,
    /// Default agent provider for new tasks.
    pub provider: ProviderKind,
    /// Default model passed to the provider (provider default when unset).
    pub model: Option<String>,
    /// Wall-clock limit for one task, in minutes (fractions allowed); 0 means no limit.
    pub timeout_minutes: f64,
    /// Maximum agent turns per task, passed to providers that support it.
    pub max_turns: u32,
    /// Agents running at once across every `gza work` process of the project.
    pub max_concurrent: u32,
    /// How `gza work` and what it starts share the CPU with the person's own sessions.
    pub work_priority: WorkPriority,
    /// `gza clean` (and `gza work` at start) removes worktrees and logs of tasks finished longer
    /// ago than this many days; 0 keeps them until `gza clean --all`.
    pub cleanup_days: u32,
    /// Redact secrets in the agent's raw logs (`.gza/logs/ID.jsonl`, `ID.stderr.log`) as they
    /// are written; false keeps them byte for byte, and `gza log --raw` says so.
    pub redact_raw_logs: bool,
    /// How agents are isolated; each provider may override it.
    pub sandbox: SandboxKind,
    /// The container image agents run in with `sandbox: docker`.
    pub docker_image: Option<String>,
    /// Environment variables a sandboxed agent is given besides the basic ones and its
    /// provider's own: names, or prefixes ending in `*`.
    pub sandbox_env: Vec<String>,
    /// Learning accumulation.
    pub learnings: LearningsConfig,
    /// Claude Code hook handlers.
    pub hooks: HooksConfig,
    /// Per-provider binaries and arguments.
    pub providers: ProvidersConfig,
    /// Where tasks and learnings are kept: unset (or `sqlite`) for `.gza/gza.db`, or a
    /// PostgreSQL connection (URL or `key=value` words) a team shares; never with a password.
    pub database: Option<String>,
    /// The project's name in a shared database; unset: the normalised URL of `origin`.
    pub project: Option<String>,
    /// Push a task's branch to `origin` after its commit (and fetch branches before the
    /// commands that need them); unset: on when `database` is PostgreSQL, off on SQLite.
    pub push: Option<bool>,
    /// The project's check command (run with `sh -c` in a task's worktree, in the sandbox its
    /// agent gets): `gza verify`, and the gate before `gza merge` and `gza watch` land a
    /// branch. `None`: the project has none.
    pub verify: Option<String>,
    /// Wall-clock limit for one verify run, in minutes (fractions allowed); 0 means no limit.
    pub verify_timeout_minutes: f64,
    /// `gza watch`: the autonomous loop.
    pub watch: WatchConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            project_name: None,
            provider: ProviderKind::Claude,
            model: None,
            timeout_minutes: 30.0,
            max_turns: 50,
            max_concurrent: 5,
            work_priority: WorkPriority::Background,
            cleanup_days: 30,
            redact_raw_logs: true,
            sandbox: SandboxKind::None,
            docker_image: None,
            sandbox_env: Vec::new(),
            learnings: LearningsConfig::default(),
            hooks: HooksConfig::default(),
            providers: ProvidersConfig::default(),
            database: None,
            project: None,
            push: None,
            verify: None,
            verify_timeout_minutes: 30.0,
            watch: WatchConfig::default(),
        }
    }
}

/// How `gza watch` lands approved, verified work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LandMode {
    /// `gza merge`: a merge commit into the branch the task started from.
    #[default]
    Merge,
    /// `gza merge --squash`: one commit with the branch's changes.
    Squash,
    /// `gza pr`: push the branch and open a pull request (needs `gh`).
    Pr,
}

impl LandMode {
    pub fn as_str(self) -> &'static str {
        match self {
            LandMode::Merge => "merge",
            LandMode::Squash => "squash",
            LandMode::Pr => "pr",
        }
    }
}

/// The `watch:` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WatchConfig {
    /// Improve tasks one branch gets while its reviews request changes; then it waits for a
    /// person.
    pub max_rounds: u32,
    /// How approved work lands once verified.
    pub land: LandMode,
    /// Delete a merged branch and the worktrees gza made for it.
    pub delete_branch: bool,
    /// Runs one task gets (its first included) before watch stops retrying it.
    pub max_attempts: u32,
    /// The first pause after a provider's agent failed, in seconds; each failure in a row
    /// doubles it, up to `backoff_max_seconds`.
    pub backoff_seconds: f64,
    pub backoff_max_seconds: f64,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            max_rounds: 3,
            land: LandMode::Merge,
            delete_branch: true,
            max_attempts: 3,
            backoff_seconds: 30.0,
            backoff_max_seconds: 600.0,
        }
    }
}

/// How `gza work` and everything it starts share the CPU with the person's interactive
/// sessions (`gza_core::priority` says how each is done).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WorkPriority {
    /// Batch work: a session of its own, its autogroup at nice 10, `SCHED_IDLE`.
    #[default]
    Background,
    /// Only what nobody else wants: autogroup nice 19, `SCHED_IDLE`.
    Idle,
    /// As any other command: nothing lowered.
    Normal,
}

/// Which client extracts learnings from finished tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ExtractionProvider {
    /// `anthropic` when ANTHROPIC_API_KEY is set, else `claude-cli` when claude is on PATH, else `none`.
    #[default]
    Auto,
    Anthropic,
    Openai,
    ClaudeCli,
    None,
}

/// Which learnings a task is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum InjectMode {
    /// The windowed learnings.md, bounded by max_tokens (the spec).
    #[default]
    File,
    /// Only what the ranker picks for the task, plus every CRITICAL learning that matches.
    Relevant,
    /// The file, plus up to `recall` relevant learnings that fell out of its window.
    Both,
}

/// The `learnings:` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LearningsConfig {
    pub enabled: bool,
    pub window_size: u32,
    pub regenerate_every: u32,
    pub extraction_provider: ExtractionProvider,
    pub extraction_model: String,
    pub max_tokens: u32,
    /// Endpoint override for the `anthropic` and `openai` clients.
    pub base_url: Option<String>,
    /// Environment variable holding the key for the `openai` client.
    pub api_key_env: String,
    pub timeout_seconds: u64,
    pub max_retries: u32,
    pub concurrency: u32,
    /// How long one regeneration starts extraction calls; tasks left then wait for the next.
    pub extraction_deadline_seconds: u64,
    pub sections: Vec<String>,
    /// Which learnings a task is given.
    pub inject: InjectMode,
    /// How many relevant learnings `relevant` and `both` add at most.
    pub recall: u32,
    /// A sentence-transformers model folder (relative to the project root); unset: the default.
    pub model_dir: Option<std::path::PathBuf>,
    /// Drafts (learnings awaiting review) are given to agents, marked as drafts.
    pub inject_drafts: bool,
    /// Layer (g) of the quarantine: also hold a learning whose nearest labelled example (of
    /// the committed corpora, embedded with the ranking model) is hostile by a margin. Off by
    /// default: on leave-one-set-out it does not beat the rules (docs/quarantine.md).
    pub quarantine_neighbours: bool,
    /// Whether task extractions land active (`auto`) or as drafts (`manual`).
    pub review: ReviewMode,
    /// Globs `gza learnings validate` skips when it searches the tree.
    pub evidence_exclude: Vec<String>,
    /// Where tier 2 learnings are exported (seed 002's expertise.yaml).
    pub expertise_path: std::path::PathBuf,
    /// Whether `gza work` asks the extraction model which of the ranker's best candidates would
    /// help each task (one call per task, never in hooks). Off by default: it costs a call and
    /// its wait per task, and sends the task's prompt to the extraction endpoint.
    pub rerank: RerankMode,
    /// How many of the ranker's best learnings the rerank is shown.
    pub rerank_candidates: u32,
    /// The rerank's deadline: past it the ranker's own choice is given.
    pub rerank_timeout_seconds: u64,
}

/// Whether the ranker's choice for a `gza work` task is checked by a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RerankMode {
    /// The ranker alone chooses.
    #[default]
    Off,
    /// The extraction model chooses among the ranker's best `rerank_candidates`.
    Extraction,
}

/// Most candidates a rerank may be shown.
pub const MAX_RERANK_CANDIDATES: u32 = 20;
/// Longest rerank deadline: it holds up the start of every task.
pub const MAX_RERANK_TIMEOUT_SECONDS: u64 = 60;

/// How learnings extracted from tasks land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReviewMode {
    /// Active at once.
    #[default]
    Auto,
    /// As drafts, for `gza learnings review`.
    Manual,
}

/// The `hooks:` block: gza's Claude Code hook handlers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HooksConfig {
    /// Lowest trigger score that injects process knowledge before a tool call.
    pub threshold: f64,
    /// Most learnings a prompt is given by the UserPromptSubmit hook.
    pub prompt_learnings: u32,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            threshold: 0.7,
            prompt_learnings: 3,
        }
    }
}

impl Default for LearningsConfig {
    fn default() -> Self {
        LearningsConfig {
            enabled: true,
            window_size: 15,
            regenerate_every: 5,
            extraction_provider: ExtractionProvider::Auto,
            extraction_model: "haiku".into(),
            max_tokens: 2000,
            base_url: None,
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_seconds: 60,
            max_retries: 3,
            concurrency: 4,
            extraction_deadline_seconds: 120,
            sections: DEFAULT_SECTIONS.iter().map(|s| s.to_string()).collect(),
            inject: InjectMode::File,
            recall: 5,
            model_dir: None,
            inject_drafts: true,
            quarantine_neighbours: false,
            review: ReviewMode::Auto,
            evidence_exclude: DEFAULT_EVIDENCE_EXCLUDE
                .iter()
                .map(|s| s.to_string())
                .collect(),
            expertise_path: ".claude/skills/learned/resources/expertise.yaml".into(),
            rerank: RerankMode::Off,
            rerank_candidates: 10,
            rerank_timeout_seconds: 10,
        }
    }
}

/// What `gza learnings validate` skips by default: docs, YAML, lock files, VCS and build folders, gza's own state.
pub const DEFAULT_EVIDENCE_EXCLUDE: [&str; 16] = [
    ".git",
    ".gza",
    "node_modules",
    "target",
    "*.md",
    "*.markdown",
    "*.mdx",
    "*.rst",
    "*.yaml",
    "*.yml",
    "*.lock",
    "*.lockb",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "go.sum",
    "LEARNINGS.md",
];

/// The spec's learnings sections, in file order.
pub const DEFAULT_SECTIONS: [&str; 6] = [
    "Testing Patterns",
    "Code Style",
    "Git Workflow",
    "Architecture Decisions",
    "Common Pitfalls",
    "General",
];

/// The `providers:` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ProvidersConfig {
    pub claude: ClaudeConfig,
    pub codex: AgentBinaryConfig,
    pub gemini: AgentBinaryConfig,
    pub command: CommandConfig,
}

/// `providers.claude`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClaudeConfig {
    pub path: String,
    /// Tools the agent may use; sent as both `--tools` and `--allowedTools`.
    pub tools: Vec<String>,
    /// Extra arguments appended to the command line.
    pub args: Vec<String>,
    /// Overrides the top-level `sandbox` for this provider.
    pub sandbox: Option<SandboxKind>,
}

impl Default for ClaudeConfig {
    fn default() -> Self {
        ClaudeConfig {
            path: "claude".into(),
            tools: ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            args: Vec::new(),
            sandbox: None,
        }
    }
}

/// `providers.codex` and `providers.gemini`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct AgentBinaryConfig {
    pub path: String,
    pub args: Vec<String>,
    /// Overrides the top-level `sandbox` for this provider.
    pub sandbox: Option<SandboxKind>,
}

impl AgentBinaryConfig {
    /// The configured binary, or `default` when unset.
    pub fn path_or<'a>(&'a self, default: &'a str) -> &'a str {
        if self.path.is_empty() {
            default
        } else {
            &self.path
        }
    }
}

/// `providers.command`: any agent that reads a prompt on stdin and prints text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct CommandConfig {
    /// Program and arguments; `{model}` is replaced by the task's model.
    pub command: Vec<String>,
    /// Overrides the top-level `sandbox` for this provider.
    pub sandbox: Option<SandboxKind>,
}

impl Config {
    /// The sandbox tasks of provider `kind` run in.
    pub fn sandbox_for(&self, kind: ProviderKind) -> SandboxKind {
        let p = &self.providers;
        let own = match kind {
            ProviderKind::Claude => p.claude.sandbox,
            ProviderKind::Codex => p.codex.sandbox,
            ProviderKind::Gemini => p.gemini.sandbox,
            ProviderKind::Command => p.command.sandbox,
        };
        own.unwrap_or(self.sandbox)
    }

    /// Read and validate `path`.
    pub fn load(path: &Path) -> Result<Config> {
        Self::parse(path, &Self::read_text(path)?)
    }

    /// Parse config text; `path` is only used in error messages.
    pub fn parse(path: &Path, text: &str) -> Result<Config> {
        let config = Self::parse_unchecked(path, text)?;
        config.validate(path)?;
        Ok(config)
    }

    /// Read config text, failing on unknown keys and wrong types (with the line), without the
    /// checks across keys (a layer may rely on another for those).
    pub fn read_text(path: &Path) -> Result<String> {
        // Non-blocking and regular files only: a FIFO in a settings file's place never stalls
        // a hook or a worker.
        let bytes = crate::fsutil::read_regular_file(path, MAX_CONFIG_BYTES)
            .map_err(|e| crate::fsutil::read_refused(path, e))?;
        String::from_utf8(bytes).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            location: None,
            message: format!(
                "not UTF-8 text (bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        })
    }

    /// Parse config text, failing on unknown keys and wrong types (with the line), without the
    /// checks across keys (a layer may rely on another for those).
    pub fn parse_unchecked(path: &Path, text: &str) -> Result<Config> {
        let is_empty = text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
        if is_empty {
            return Ok(Config::default());
        }
        crate::yaml::from_str(text).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            location: e.location,
            message: clean_yaml_message(&e.message),
        })
    }

    /// The checks across keys, for the settings of every layer together.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let bad = |message: String| Error::Config {
            path: path.to_path_buf(),
            location: None,
            message,
        };
        // One bound check for every "between 1 and MAX" setting, so each says the same thing.
        let between = |name: &str, value: u64, max: u64| {
            if (1..=max).contains(&value) {
                Ok(())
            } else {
                Err(bad(format!("{name} must be between 1 and {max}")))
            }
        };
        // A key out of its range, in the words a wrong type of it gets too ([`range_of`]).
        let out_of_range = |key: &str| {
            bad(format!(
                "{key} must be {}",
                range_of(key).unwrap_or_else(|| "in range".into())
            ))
        };
        if let Some(db) = self.database.as_deref().filter(|d| !is_sqlite(d)) {
            crate::database::DatabaseSpec::parse(db, None)
                .map_err(|e| bad(format!("database: {e}")))?;
        }
        if self.project.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return Err(bad(
                "project must not be empty; remove it to name the project by its origin".into(),
            ));
        }
        let l = &self.learnings;
        if l.window_size == 0 {
            return Err(out_of_range("learnings.window_size"));
        }
        if l.regenerate_every == 0 {
            return Err(out_of_range("learnings.regenerate_every"));
        }
        if !(0.0..=10.0).contains(&self.hooks.threshold) {
            return Err(bad("hooks.threshold must be between 0 and 10".into()));
        }
        if let Some((g, e)) = l
            .evidence_exclude
            .iter()
            .find_map(|g| globset::Glob::new(g).err().map(|e| (g, e)))
        {
            return Err(bad(format!(
                "learnings.evidence_exclude: {g:?} is not a glob: {e}"
            )));
        }
        if l.sections.is_empty() {
            return Err(bad(
                "learnings.sections must name at least one section".into()
            ));
        }
        // A bound, not just finiteness: 1e18 minutes overflows a Duration after the task is claimed.
        if !(0.0..=MAX_TIMEOUT_MINUTES).contains(&self.timeout_minutes) {
            return Err(bad(format!(
                "timeout_minutes must be 0 (no limit) or a number of minutes up to {MAX_TIMEOUT_MINUTES} (a year)"
            )));
        }
        between(
            "learnings.timeout_seconds",
            l.timeout_seconds,
            MAX_LLM_TIMEOUT_SECONDS,
        )?;
        between(
            "learnings.rerank_candidates",
            u64::from(l.rerank_candidates),
            u64::from(MAX_RERANK_CANDIDATES),
        )?;
        between(
            "learnings.rerank_timeout_seconds",
            l.rerank_timeout_seconds,
            MAX_RERANK_TIMEOUT_SECONDS,
        )?;
        if l.rerank == RerankMode::Extraction && l.inject == InjectMode::File {
            return Err(bad(
                "learnings.rerank: extraction reranks what the ranker picks, and learnings.inject: file uses no ranker; set inject to relevant or both, or rerank to off".into()
            ));
        }
        between(
            "learnings.extraction_deadline_seconds",
            l.extraction_deadline_seconds,
            MAX_LLM_TIMEOUT_SECONDS,
        )?;
        let uses_docker = ProviderKind::ALL
            .iter()
            .any(|&k| self.sandbox_for(k) == SandboxKind::Docker);
        if uses_docker
            && self
                .docker_image
                .as_deref()
                .is_none_or(|i| i.trim().is_empty())
        {
            return Err(bad(
                "sandbox: docker needs docker_image: the image agents run in".into(),
            ));
        }
        if let Some(name) = self.sandbox_env.iter().find(|name| {
            let name = name.strip_suffix('*').unwrap_or(name);
            name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        }) {
            return Err(bad(format!(
                "sandbox_env: {name:?} is not a variable name (letters, digits and _, or a prefix ending in *)"
            )));
        }
        if self.max_turns == 0 {
            return Err(out_of_range("max_turns"));
        }
        // Each tool is one argument of Claude Code's command line: an entry that is not a
        // tool's name would be read as an option (`--settings=…` runs hooks), and this key needs
        // no trust.
        if let Some(tool) = self
            .providers
            .claude
            .tools
            .iter()
            .find(|t| !is_tool_name(t))
        {
            return Err(bad(format!(
                "providers.claude.tools: {tool:?} is not a tool's name (Read, Bash(git diff:*), mcp__server__tool)"
            )));
        }
        for (key, model) in [
            ("model", self.model.as_deref()),
            (
                "learnings.extraction_model",
                Some(self.learnings.extraction_model.as_str()),
            ),
        ] {
            if let Some(model) = model.filter(|m| !is_model_name(m)) {
                return Err(bad(format!(
                    "{key}: {model:?} is not a model's name (letters, digits and . _ - : / @ [ ], not starting with -)"
                )));
            }
        }
        between(
            "max_concurrent",
            u64::from(self.max_concurrent),
            u64::from(MAX_CONCURRENT_LIMIT),
        )?;
        if !(0.0..=MAX_TIMEOUT_MINUTES).contains(&self.verify_timeout_minutes) {
            return Err(bad(format!(
                "verify_timeout_minutes must be 0 (no limit) or a number of minutes up to {MAX_TIMEOUT_MINUTES} (a year)"
            )));
        }
        if self.verify.as_deref().is_some_and(|v| v.contains('\0')) {
            return Err(bad("verify: the command cannot hold a NUL character".into()));
        }
        let w = &self.watch;
        if w.max_attempts == 0 {
            return Err(out_of_range("watch.max_attempts"));
        }
        if !(0.0..=86_400.0).contains(&w.backoff_seconds)
            || !(0.0..=86_400.0).contains(&w.backoff_max_seconds)
        {
            return Err(bad(
                "watch.backoff_seconds and watch.backoff_max_seconds must be between 0 and 86400 (a day)".into(),
            ));
        }
        if self.cleanup_days > 36_500 {
            return Err(out_of_range("cleanup_days"));
        }
        Ok(())
    }
}

/// A Claude Code tool or permission rule: a name (`Read`, `mcp__server__tool`), optionally
/// with a pattern in parentheses (`Bash(git diff:*)`, `Edit(src/**)`), on one line.
pub fn is_tool_name(tool: &str) -> bool {
    let (name, rest) = match tool.find('(') {
        Some(i) => (&tool[..i], Some(&tool[i..])),
        None => (tool, None),
    };
    let name_ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let rest_ok =
        rest.is_none_or(|r| r.len() >= 2 && r.ends_with(')') && !r.chars().any(char::is_control));
    name_ok && rest_ok
}

/// A model's name as the agent CLIs and APIs take it (`sonnet`, `claude-sonnet-4-5@20250929`,
/// `gpt-5.1-codex`, `models/gemini-2.5-pro`, `claude-opus-4-1[1m]`): never an option.
pub fn is_model_name(model: &str) -> bool {
    !model.is_empty()
        && !model.starts_with('-')
        && model.len() <= 200
        && model
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_:/@[]".contains(&b))
}

/// Longest `timeout_minutes`: a year.
const MAX_TIMEOUT_MINUTES: f64 = 525_600.0;
/// A settings file larger than this is refused.
const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// Longest wait for one extraction request: an hour.
const MAX_LLM_TIMEOUT_SECONDS: u64 = 3600;

/// The range of a whole-number key whose range is not its type's, as its messages state it
/// ("at least 1", "between 1 and 3600"): the checks across keys and a value of the wrong type
/// or sign both say this, so `max_turns: -5` and `max_turns: 0` get the same range (-5 was
/// told "a whole number, 0 or more", and then 0 "must be at least 1").
pub fn range_of(key: &str) -> Option<String> {
    Some(match key {
        "max_turns"
        | "learnings.window_size"
        | "learnings.regenerate_every"
        | "watch.max_attempts" => "at least 1".into(),
        "learnings.timeout_seconds" | "learnings.extraction_deadline_seconds" => {
            format!("between 1 and {MAX_LLM_TIMEOUT_SECONDS}")
        }
        "learnings.rerank_candidates" => format!("between 1 and {MAX_RERANK_CANDIDATES}"),
        "learnings.rerank_timeout_seconds" => {
            format!("between 1 and {MAX_RERANK_TIMEOUT_SECONDS}")
        }
        "max_concurrent" => format!("between 1 and {MAX_CONCURRENT_LIMIT}"),
        "cleanup_days" => "between 0 and 36500 (0 keeps everything)".into(),
        _ => return None,
    })
}

/// serde_norway appends " at line L column C"; we print the location ourselves. A key with a
/// range of its own ([`range_of`]) is told that range, not its type's.
pub fn clean_yaml_message(message: &str) -> String {
    let message = match message.find(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    // Rust's type names mean nothing to a person writing YAML.
    let mut message = message.replace("unknown field", "unknown key");
    for (rust, plain) in [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected f32", "expected a number"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a sequence", "expected a list"),
        ("expected a map", "expected keys and values"),
        ("invalid type: string", "got the text"),
        ("invalid type: integer", "got the number"),
        ("invalid type: floating point", "got the number"),
        ("invalid type: boolean", "got"),
        ("invalid value: integer", "got the number"),
    ] {
        message = message.replace(rust, plain);
    }
    if let Some((key, rest)) = message.split_once(": ")
        && let Some(range) = range_of(key)
        && let Some(cut) = rest.find(", expected ")
    {
        return format!("{key}: {}; {key} must be {range}", &rest[..cut]);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config> {
        Config::parse(Path::new("gza.yaml"), text)
    }

    #[test]
    fn example_file_parses_to_the_defaults() {
        let mut parsed = parse(EXAMPLE_YAML).unwrap();
        parsed.project_name = None;
        assert_eq!(parsed, Config::default());
    }

    #[test]
    fn empty_or_comment_only_file_is_the_default() {
        assert_eq!(parse("").unwrap(), Config::default());
        assert_eq!(parse("# nothing\n\n").unwrap(), Config::default());
    }

    #[test]
    fn unknown_key_names_key_and_line() {
        let err = parse("provider: claude\nlearnings:\n  windw_size: 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("gza.yaml:3:"), "{err}");
        assert!(err.contains("unknown key `windw_size`"), "{err}");
    }

    #[test]
    fn wrong_type_names_key_and_line() {
        let err = parse("timeout_minutes: soon\n").unwrap_err().to_string();
        assert!(err.contains("gza.yaml:1:"), "{err}");
        assert!(err.contains("timeout_minutes"), "{err}");
    }

    #[test]
    fn a_key_with_a_range_states_it_whatever_is_wrong_with_the_value() {
        for (text, want) in [
            (
                "max_turns: -5\n",
                "max_turns: got the number `-5`; max_turns must be at least 1",
            ),
            ("max_turns: 0\n", "max_turns must be at least 1"),
            (
                "max_turns: many\n",
                "max_turns: got the text \"many\"; max_turns must be at least 1",
            ),
            (
                "watch:\n  max_attempts: -1\n",
                "watch.max_attempts must be at least 1",
            ),
            (
                "learnings:\n  timeout_seconds: -1\n",
                "learnings.timeout_seconds must be between 1 and 3600",
            ),
            (
                "cleanup_days: -3\n",
                "cleanup_days must be between 0 and 36500",
            ),
            (
                "cleanup_days: 40000\n",
                "cleanup_days must be between 0 and 36500",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
            assert!(!err.contains("0 or more"), "{text}: {err}");
        }
    }

    #[test]
    fn zero_window_is_rejected() {
        let err = parse("learnings:\n  window_size: 0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("window_size must be at least 1"), "{err}");
    }
}
