//! Isolating an agent: the command line that runs it inside bubblewrap or a container, and the
//! checks that say whether a sandbox can start here.
//!
//! A sandbox that cannot start is an error the task records (SANDBOX_ERROR); an agent is never
//! run unsandboxed in its place.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gza_core::config::{ProviderKind, SandboxKind};

use super::providers::Invocation;

mod scratch;

/// The bubblewrap binary gza runs.
pub const BWRAP: &str = "bwrap";
/// The container CLI gza runs; `GZA_DOCKER` names another (podman, say).
pub const DOCKER: &str = "docker";
/// Where a container sees the task's directory.
pub const CONTAINER_WORKDIR: &str = "/workspace";

/// Variables every sandboxed agent is given from gza's environment, when set: what a program
/// needs to run and to reach its API through a proxy. Nothing else of the host's environment
/// (tokens, passwords, cloud credentials) enters a sandbox unless `sandbox_env` names it.
const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
];

/// A provider's own variables (its keys, endpoints and switches): exact names, and prefixes
/// ending in `_`.
fn provider_env(provider: ProviderKind) -> &'static [&'static str] {
    match provider {
        ProviderKind::Claude => &[
            "ANTHROPIC_",
            "CLAUDE_CODE_",
            "CLAUDE_CONFIG_DIR",
            "DISABLE_AUTOUPDATER",
            "DISABLE_TELEMETRY",
            "DISABLE_ERROR_REPORTING",
            "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
            "MAX_THINKING_TOKENS",
            "API_TIMEOUT_MS",
        ],
        ProviderKind::Codex => &["OPENAI_", "CODEX_"],
        ProviderKind::Gemini => &[
            "GEMINI_",
            "GOOGLE_API_KEY",
            "GOOGLE_GEMINI_BASE_URL",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_CLOUD_PROJECT",
            "GOOGLE_CLOUD_LOCATION",
        ],
        ProviderKind::Command => &[],
    }
}

/// Whether `name` matches `pattern`: the same name, or a prefix when the pattern ends in `*`
/// (in `sandbox_env`) or `_` (gza's own lists).
fn env_matches(pattern: &str, name: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        !prefix.is_empty() && name.starts_with(prefix)
    } else if pattern.ends_with('_') {
        name.starts_with(pattern)
    } else {
        name == pattern
    }
}

/// The variables Codex reads its keys from, as the user's Codex configuration names them
/// (`env_key` of each `[model_providers.*]` in `$CODEX_HOME/config.toml` or
/// `~/.codex/config.toml`): a custom provider's key is Codex's own key.
fn codex_key_vars(home: Option<&Path>) -> Vec<String> {
    let config = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".codex")))
        .map(|dir| dir.join("config.toml"));
    let Some(text) = config
        .and_then(|path| gza_core::fsutil::read_regular_file(&path, 1 << 20).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
    else {
        return Vec::new();
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut names: Vec<String> = table
        .get("model_providers")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|providers| providers.values())
        .filter_map(|p| p.get("env_key")?.as_str())
        .filter(|name| is_env_name(name))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A plausible environment variable name (so a config file cannot smuggle in `*`).
fn is_env_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The names (and values) of the variables of gza's environment a sandboxed agent of
/// `provider` is given: [`BASE_ENV`], the provider's own, and what `extra` (`sandbox_env`)
/// names. Sorted by name.
pub fn agent_environment(
    provider: ProviderKind,
    extra: &[String],
    home: Option<&Path>,
) -> Vec<(String, String)> {
    let codex_keys = if provider == ProviderKind::Codex {
        codex_key_vars(home)
    } else {
        Vec::new()
    };
    let allowed = |name: &str| {
        BASE_ENV.contains(&name)
            || provider_env(provider).iter().any(|p| env_matches(p, name))
            || codex_keys.iter().any(|k| k == name)
            || extra.iter().any(|p| env_matches(p, name))
    };
    let mut kept: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| allowed(k))
        .collect();
    kept.sort();
    kept
}

/// Where one task's agent runs.
#[derive(Debug, Clone)]
pub struct Place<'a> {
    pub task_id: gza_core::task::TaskId,
    pub provider: ProviderKind,
    /// The project root (holds `.gza/` and `.git`).
    pub project_root: &'a Path,
    /// The directory the agent works in: a worktree, or the project root for in-place tasks.
    pub workdir: &'a Path,
    /// The user's home directory, hidden from a bwrap agent but for the provider's own files.
    pub home: Option<PathBuf>,
    /// The image for `docker`.
    pub docker_image: Option<&'a str>,
    /// The repository's git directory (`git rev-parse --git-common-dir`), when there is one:
    /// shown read-only, so a worktree's `.git` file resolves and no hook or config can be
    /// planted in it.
    pub git_dir: Option<PathBuf>,
    /// What `sandbox_env` adds to the variables an agent is given.
    pub sandbox_env: &'a [String],
}

/// The configuration files and directories under HOME a provider's CLI reads and writes
/// (its login, settings and session files), relative to HOME. A bwrap agent sees scratch
/// copies of them, never the person's own (`scratch.rs`).
pub fn provider_home_entries(provider: ProviderKind) -> &'static [&'static str] {
    match provider {
        ProviderKind::Claude => &[".claude", ".claude.json", ".config/claude"],
        ProviderKind::Codex => &[".codex"],
        ProviderKind::Gemini => &[".gemini"],
        ProviderKind::Command => &[],
    }
}

/// The directory among a provider's entries that its CLI creates on first use; it is always in
/// the scratch copy, since inside the sandbox HOME is read-only (Claude Code's Bash tool fails
/// with "EROFS: read-only file system, mkdir '~/.claude'" otherwise).
fn provider_home_dir(provider: ProviderKind) -> Option<&'static str> {
    match provider {
        ProviderKind::Claude => Some(".claude"),
        ProviderKind::Codex => Some(".codex"),
        ProviderKind::Gemini => Some(".gemini"),
        ProviderKind::Command => None,
    }
}

/// The repository's common git directory, which a sandboxed run must be shown (a worktree's
/// `.git` file points into it); `None` without a sandbox, or when git cannot say.
pub fn git_common_dir(root: &Path, kind: SandboxKind) -> Option<PathBuf> {
    if kind == SandboxKind::None {
        return None;
    }
    gza_core::git::run(
        root,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .ok()
    .map(PathBuf::from)
}

/// The command line that runs `inv` in sandbox `kind`; `Err` is a one-line reason.
pub fn wrap(kind: SandboxKind, place: &Place, inv: Invocation) -> Result<Invocation, String> {
    match kind {
        SandboxKind::None => Ok(inv),
        SandboxKind::Bwrap => bwrap_invocation(place, inv),
        SandboxKind::Docker => docker_invocation(place, inv),
    }
}

/// Check, just before a task starts, that sandbox `kind` can run `wrapped`: for bwrap the same
/// mounts are set up around `true`, so a missing bubblewrap, a kernel without user namespaces or
/// a mount that fails is found before the agent starts; for docker, the engine and the image.
pub fn preflight(kind: SandboxKind, place: &Place, wrapped: &Invocation) -> Result<(), String> {
    match kind {
        SandboxKind::None => Ok(()),
        SandboxKind::Bwrap => {
            let sep = wrapped
                .args
                .iter()
                .position(|a| a == "--")
                .unwrap_or(wrapped.args.len());
            let mut args = wrapped.args[..sep].to_vec();
            args.extend(["--".into(), "true".into()]);
            run_check(BWRAP, &args, "bubblewrap").inspect_err(|_| {
                // No agent will run: its scratch copies go now.
                scratch::remove(place.project_root, place.task_id.0);
            })
        }
        SandboxKind::Docker => {
            let docker = docker_binary();
            engine_check(&docker)?;
            let image = place.docker_image.unwrap_or_default();
            run_check(&docker, &["image".into(), "inspect".into(), image.into()], "docker")
                .map_err(|_| {
                    format!("docker image `{image}` not found; `{docker} pull {image}` or set docker_image in gza.yaml")
                })
        }
    }
}

/// What every bwrap run starts from: the system read-only, its own /dev, /proc, /tmp and PID
/// namespace, ended with gza. `probe` tries exactly this; the agent's run adds its mounts.
const BWRAP_BASE: &[&str] = &[
    "--die-with-parent",
    "--unshare-pid",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
];

/// Whether sandbox `kind` works on this machine: `Ok` with what was found, or why not.
pub fn probe(kind: SandboxKind) -> Result<String, String> {
    match kind {
        SandboxKind::None => Ok("agents run with your own access".into()),
        SandboxKind::Bwrap => {
            let version = version_of(BWRAP)?;
            let args: Vec<String> = BWRAP_BASE
                .iter()
                .chain(&["--", "true"])
                .map(|s| s.to_string())
                .collect();
            run_check(BWRAP, &args, "bubblewrap")?;
            Ok(version)
        }
        SandboxKind::Docker => {
            let docker = docker_binary();
            let server = engine_check(&docker)?;
            Ok(format!("{docker}, engine {server}"))
        }
    }
}

fn docker_binary() -> String {
    std::env::var("GZA_DOCKER")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DOCKER.to_string())
}

fn engine_check(docker: &str) -> Result<String, String> {
    let out = Command::new(docker)
        .args(["version", "--format", "{{.Server.Version}}"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| not_runnable(docker, "docker", &e))?;
    let server = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !server.is_empty() {
        return Ok(server);
    }
    Err(format!(
        "no container engine answers `{docker}`: {}",
        first_line(&out.stderr).unwrap_or_else(|| "no server version".into())
    ))
}

fn version_of(program: &str) -> Result<String, String> {
    let out = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| not_runnable(program, "bubblewrap", &e))?;
    Ok(first_line(&out.stdout).unwrap_or_else(|| program.to_string()))
}

fn not_runnable(program: &str, package: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        format!("`{program}` not found; install {package}, or set sandbox: none in gza.yaml")
    } else {
        format!("cannot run `{program}`: {e}")
    }
}

fn run_check(program: &str, args: &[String], package: &str) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|e| not_runnable(program, package, &e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{program} cannot start a sandbox here: {}",
        first_line(&out.stderr).unwrap_or_else(|| format!("{}", out.status))
    ))
}

fn first_line(bytes: &[u8]) -> Option<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| gza_core::text::one_line(l, 200))
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// bubblewrap: the whole system read-only, a private /tmp, /dev and /proc (own PID namespace, so
/// nothing the agent starts outlives it), HOME replaced by an empty read-only directory in which
/// the provider's config entries are scratch copies of the person's (read-write, thrown away
/// when the agent ends: what an agent writes there never runs on the host), and the
/// environment cut to [`agent_environment`] (set by the runner on the bwrap process).
///
/// The project: for a worktree task only the task's directory is there (read-write) and the
/// repository's git directory (read-only); the rest of the project (the main checkout with its
/// untracked files, `gza.local.yaml`, `.gza/` with the database, other tasks' logs and
/// worktrees) is an empty directory. For an in-place task the project is read-write but for its
/// git directory, `gza.yaml` and `gza.local.yaml` (read-only: what they say runs on the host)
/// and `.gza/` (hidden). Of the git directory, the config is a copy without credentials, and
/// other worktrees' administrative directories (with, for a worktree task, the main checkout's
/// index) are hidden. The network is shared: the agent needs its API.
fn bwrap_invocation(place: &Place, inv: Invocation) -> Result<Invocation, String> {
    let mut a: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(|s| s.to_string()));
    push(BWRAP_BASE);
    push(&["--unshare-ipc"]);
    let home = place
        .home
        .as_ref()
        .filter(|h| h.is_absolute() && h.parent().is_some() && h.is_dir());
    let git_config = |name: &str| {
        place
            .git_dir
            .as_ref()
            .map(|g| g.join(name))
            .filter(|f| f.is_file())
    };
    let needs_scratch = (home.is_some() && !provider_home_entries(place.provider).is_empty())
        || git_config("config").is_some()
        || git_config("config.worktree").is_some();
    // Fails closed: without its scratch directory the agent would see the person's own files.
    let scratch = needs_scratch
        .then(|| scratch::make_dir(place.project_root, place.task_id.0))
        .transpose()
        .map_err(|e| format!("cannot make the sandbox's scratch directory under .gza/: {e}"))?;
    if let Some(home) = home {
        a.extend(["--tmpfs".into(), s(home)]);
        if let Some(scratch) = &scratch {
            let copy = scratch.join("home");
            for entry in scratch::copy_provider_config(place.provider, home, &copy) {
                a.extend(["--bind".into(), s(&copy.join(entry)), s(&home.join(entry))]);
            }
        }
    }
    for dir in hidden_tool_dirs(&inv.program, home.map(PathBuf::as_path)) {
        let d = s(&dir);
        a.extend(["--ro-bind".into(), d.clone(), d]);
    }
    let root = s(place.project_root);
    let workdir = s(place.workdir);
    let at_root = |name: &str| s(&place.project_root.join(name));
    let in_place = place.workdir == place.project_root;
    if in_place {
        a.extend(["--bind".into(), root.clone(), root.clone()]);
        // The settings files gza reads on the host are read-only; one that does not exist is
        // an empty read-only file, so the agent cannot create it either. (bubblewrap leaves the
        // empty mount point behind, which reads as no settings; it is not removed, since a
        // parallel task's sandbox may still have it mounted.)
        for file in [
            gza_core::settings::PROJECT_FILE,
            gza_core::settings::LOCAL_FILE,
        ] {
            let path = at_root(file);
            let source = if place.project_root.join(file).is_file() {
                path.clone()
            } else {
                "/dev/null".into()
            };
            a.extend(["--ro-bind".into(), source, path]);
        }
        a.extend(["--tmpfs".into(), at_root(gza_core::project::STATE_DIR)]);
        a.extend(["--remount-ro".into(), at_root(gza_core::project::STATE_DIR)]);
        // The folders whose content runs on the host later (agent CLIs' settings, the person's
        // hooks): read-only; one that does not exist is an empty read-only folder (its empty
        // mount point stays behind, which reads as nothing there).
        for (rel, exists) in in_place_read_only_folders(place.project_root) {
            let path = at_root(&rel);
            if exists {
                a.extend(["--ro-bind".into(), path.clone(), path]);
            } else {
                a.extend(["--tmpfs".into(), path.clone(), "--remount-ro".into(), path]);
            }
        }
        // What a git hook manager reads (lefthook.yml, .pre-commit-config.yaml, package.json's
        // husky and lint-staged keys and scripts) runs on this machine, outside any sandbox, at
        // the person's next git command: those that exist are read-only; one the agent creates
        // is named to the person when the task ends (an empty mount point per absent name would
        // litter the checkout).
        for name in in_place_read_only_files(place.project_root, place.git_dir.is_some()) {
            let path = at_root(&name);
            a.extend(["--ro-bind".into(), path.clone(), path]);
        }
        if place.git_dir.is_none() {
            // No repository: an agent must not make one that gza's own git commands would
            // then read as the project's. (The empty `.git` left behind is no repository.)
            a.extend(["--tmpfs".into(), at_root(".git")]);
            a.extend(["--remount-ro".into(), at_root(".git")]);
        }
    } else {
        a.extend(["--tmpfs".into(), root.clone()]);
    }
    // After the project's own mounts, so neither hides it: the repository, read-only.
    if let Some(git_dir) = &place.git_dir {
        let git_s = s(git_dir);
        a.extend(["--ro-bind".into(), git_s.clone(), git_s]);
        // Its config as the agent may see it: no credential, token, helper or include.
        for name in ["config", "config.worktree"] {
            let Some(file) = git_config(name) else {
                continue;
            };
            let copy = scratch.as_ref().map(|d| d.join(format!("git-{name}")));
            let source = match &copy {
                Some(copy) if scratch::write_sanitised_git_config(&file, copy).is_ok() => s(copy),
                _ => "/dev/null".into(),
            };
            a.extend(["--ro-bind".into(), source, s(&file)]);
        }
        // The main checkout's staged content is not a worktree task's to read.
        let index = git_dir.join("index");
        if !in_place && index.is_file() {
            a.extend(["--ro-bind".into(), "/dev/null".into(), s(&index)]);
        }
        // Nor are other tasks' worktrees (their index, HEAD, what they staged).
        let worktrees = git_dir.join("worktrees");
        if worktrees.is_dir() {
            let w = s(&worktrees);
            a.extend(["--tmpfs".into(), w.clone()]);
            if !in_place && let Some(own) = scratch::own_worktree_admin(place.workdir, git_dir) {
                let own = s(&own);
                a.extend(["--ro-bind".into(), own.clone(), own]);
            }
            a.extend(["--remount-ro".into(), w]);
        }
    }
    if !in_place {
        a.extend(["--bind".into(), workdir.clone(), workdir.clone()]);
        a.extend(["--remount-ro".into(), root]);
    }
    // Last, once every mount point under HOME exists: HOME itself becomes read-only.
    if let Some(home) = home {
        a.extend(["--remount-ro".into(), s(home)]);
    }
    a.extend(["--chdir".into(), workdir, "--".into(), inv.program]);
    a.extend(inv.args);
    Ok(Invocation {
        program: BWRAP.into(),
        args: a,
        prompt_on_stdin: inv.prompt_on_stdin,
        env: inv.env,
    })
}

/// Directories the agent needs to start that the sandbox would hide (they lie under HOME or
/// /tmp), to bind read-only: the PATH entries there (an nvm node, ~/.local/bin), the directory
/// of the agent program, and the `node_modules` its real path lies in (an npm-installed CLI is a
/// symlink into its package, which loads the rest of the package and its dependencies).
fn hidden_tool_dirs(program: &str, home: Option<&Path>) -> Vec<PathBuf> {
    let hidden = |p: &Path| p.starts_with("/tmp") || home.is_some_and(|h| p.starts_with(h));
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let program_path = if program.contains('/') {
        Some(PathBuf::from(program))
    } else {
        path_dirs
            .iter()
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    };
    let mut dirs: Vec<PathBuf> = path_dirs.into_iter().filter(|d| d.is_dir()).collect();
    if let Some(path) = program_path {
        dirs.extend(path.parent().map(Path::to_path_buf));
        if let Ok(real) = path.canonicalize() {
            let package_root = real
                .ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
                .map(Path::to_path_buf);
            dirs.extend(package_root.or_else(|| real.parent().map(Path::to_path_buf)));
        }
    }
    let mut kept: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let Ok(dir) = std::path::absolute(&dir) else {
            continue;
        };
        if hidden(&dir) && !kept.iter().any(|k| dir.starts_with(k)) {
            kept.retain(|k| !k.starts_with(&dir));
            kept.push(dir);
        }
    }
    kept
}

fn container_name(place: &Place) -> String {
    format!("gza-{}-task-{}", std::process::id(), place.task_id)
}

/// After the agent ended: remove its container, should one outlive the `docker run` client gza
/// ended (SIGKILL reaches the client, not the container), or bwrap's scratch copies (what the
/// agent wrote in its provider's configuration goes with them). Best effort.
pub fn clean_up(kind: SandboxKind, place: &Place) {
    if kind != SandboxKind::None {
        scratch::remove(place.project_root, place.task_id.0);
    }
    if kind == SandboxKind::Docker {
        let _ = Command::new(docker_binary())
            .args(["rm", "--force", &container_name(place)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The folders of the checkout an in-place agent may not write, relative to the project root,
/// each with whether it exists (a sandbox shows a missing one as an empty read-only folder, so
/// the agent cannot create it either), for bwrap and docker alike:
/// - the agent CLIs' settings folders: hooks and MCP servers an agent wrote there would run on
///   the host at the next session, and gza trusts only what the repository committed once the
///   person says so (docs/security.md §4);
/// - the person's hooks folder when it is part of the checkout (`core.hooksPath: .husky`), or
///   the agent could plant a hook that runs on this machine, outside any sandbox, at the
///   person's next git command (hostile review 13). husky 9 keeps stubs in `.husky/_` that run
///   the scripts one folder up: that folder is kept instead.
fn in_place_read_only_folders(project_root: &Path) -> Vec<(String, bool)> {
    let mut folders: Vec<PathBuf> = [".claude", ".gemini", ".codex"]
        .iter()
        .map(PathBuf::from)
        .collect();
    if let Some(rel) = gza_core::git::hooks_in_tree(project_root) {
        let rel = match rel.parent() {
            Some(parent) if rel.file_name() == Some("_".as_ref()) => parent.to_path_buf(),
            _ => rel,
        };
        if !rel.as_os_str().is_empty() && !folders.contains(&rel) {
            folders.push(rel);
        }
    }
    // A symbolic link is never mounted: binding it would bind what it names, which may be
    // outside the project (a committed `.claude -> ~/.claude` would show the person's own
    // folder to the agent), and a mount over it would be made where it points.
    folders
        .into_iter()
        .filter_map(
            |rel| match std::fs::symlink_metadata(project_root.join(&rel)) {
                Ok(m) if m.file_type().is_symlink() => None,
                Ok(m) => Some((s(&rel), m.is_dir())),
                Err(_) => Some((s(&rel), false)),
            },
        )
        .collect()
}

/// The files of the checkout an in-place agent may not write, relative to the project root,
/// those that exist: a committed `.mcp.json` (its servers run at the person's next session),
/// and, in a git repository, what a hook manager reads ([`gza_core::git::HOOK_MANAGER_FILES`]).
/// Outside a repository no git hook runs, and a task there may need `package.json`.
fn in_place_read_only_files(project_root: &Path, in_git: bool) -> Vec<String> {
    std::iter::once(".mcp.json")
        .chain(
            gza_core::git::HOOK_MANAGER_FILES
                .iter()
                .copied()
                .filter(|_| in_git),
        )
        // Never a symbolic link, as for the folders above: binding one binds what it names.
        .filter(|name| {
            std::fs::symlink_metadata(project_root.join(name))
                .is_ok_and(|m| !m.file_type().is_symlink())
        })
        .map(str::to_string)
        .collect()
}

/// `docker run`: the task's directory at /workspace; for a worktree, the project's `.git` at
/// its own path, read-only, so the worktree's `.git` file (which names that path) resolves and
/// no container can prune another task's worktree. The agent binary is the image's (its file
/// name is looked up on the image's PATH).
fn docker_invocation(place: &Place, inv: Invocation) -> Result<Invocation, String> {
    let image = place
        .docker_image
        .filter(|i| !i.trim().is_empty())
        .ok_or("sandbox: docker needs docker_image in gza.yaml")?;
    let program = Path::new(&inv.program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(inv.program.clone());
    let name = container_name(place);
    let mut a: Vec<String> = vec![
        "run".into(),
        "--rm".into(),
        "-i".into(),
        "--init".into(),
        "--name".into(),
        name,
        "-v".into(),
        format!("{}:{CONTAINER_WORKDIR}", s(place.workdir)),
        "-w".into(),
        CONTAINER_WORKDIR.into(),
    ];
    let git = s(&place
        .git_dir
        .clone()
        .unwrap_or_else(|| place.project_root.join(".git")));
    // The repository's config as the container sees it: a copy without credentials, as for
    // bwrap (the engine mounts the copy over the read-only repository's).
    let config = place
        .git_dir
        .as_ref()
        .map(|g| g.join("config"))
        .filter(|f| f.is_file());
    let config_copy = match &config {
        Some(file) => {
            let dir = scratch::make_dir(place.project_root, place.task_id.0).map_err(|e| {
                format!("cannot make the sandbox's scratch directory under .gza/: {e}")
            })?;
            let copy = dir.join("git-config");
            scratch::write_sanitised_git_config(file, &copy)
                .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
            Some(s(&copy))
        }
        None => None,
    };
    if place.workdir != place.project_root {
        a.extend(["-v".into(), format!("{git}:{git}:ro")]);
        if let Some(copy) = &config_copy {
            a.extend(["-v".into(), format!("{copy}:{git}/config:ro")]);
        }
        if let Some(git_dir) = &place.git_dir {
            // As in bwrap: the main checkout's staged content is not a worktree task's to read,
            // nor are other tasks' worktrees (their index, HEAD, what they staged). The engine
            // mounts parents before children, so the task's own admin directory is bound into
            // the empty tmpfs that hides the others.
            if git_dir.join("index").is_file() {
                a.extend(["-v".into(), format!("/dev/null:{git}/index:ro")]);
            }
            if git_dir.join("worktrees").is_dir() {
                a.extend(["--tmpfs".into(), format!("{git}/worktrees")]);
                if let Some(own) = scratch::own_worktree_admin(place.workdir, git_dir) {
                    let own = s(&own);
                    a.extend(["-v".into(), format!("{own}:{own}:ro")]);
                }
            }
        }
    } else {
        // In place: the repository and gza's settings read-only (an empty one where there is
        // none), `.gza/` hidden.
        match &place.git_dir {
            Some(_) => a.extend(["-v".into(), format!("{git}:{CONTAINER_WORKDIR}/.git:ro")]),
            None => a.extend(["--tmpfs".into(), format!("{CONTAINER_WORKDIR}/.git:ro")]),
        }
        // Other tasks' worktrees are not an in-place task's to read either.
        if place
            .git_dir
            .as_ref()
            .is_some_and(|g| g.join("worktrees").is_dir())
        {
            a.extend([
                "--tmpfs".into(),
                format!("{CONTAINER_WORKDIR}/.git/worktrees:ro"),
            ]);
        }
        if let Some(copy) = &config_copy {
            a.extend([
                "-v".into(),
                format!("{copy}:{CONTAINER_WORKDIR}/.git/config:ro"),
            ]);
        }
        for file in [
            gza_core::settings::PROJECT_FILE,
            gza_core::settings::LOCAL_FILE,
        ] {
            let path = place.project_root.join(file);
            let source = if path.is_file() {
                s(&path)
            } else {
                "/dev/null".into()
            };
            a.extend([
                "-v".into(),
                format!("{source}:{CONTAINER_WORKDIR}/{file}:ro"),
            ]);
        }
        a.extend([
            "--tmpfs".into(),
            format!("{CONTAINER_WORKDIR}/{}:ro", gza_core::project::STATE_DIR),
        ]);
        // As for bwrap: what runs on the host later is read-only (an empty read-only folder
        // where there is none), and so are the hook managers' files and a committed `.mcp.json`.
        for (rel, exists) in in_place_read_only_folders(place.project_root) {
            if exists {
                let host = s(&place.project_root.join(&rel));
                a.extend(["-v".into(), format!("{host}:{CONTAINER_WORKDIR}/{rel}:ro")]);
            } else {
                a.extend(["--tmpfs".into(), format!("{CONTAINER_WORKDIR}/{rel}:ro")]);
            }
        }
        for name in in_place_read_only_files(place.project_root, place.git_dir.is_some()) {
            let host = s(&place.project_root.join(&name));
            a.extend(["-v".into(), format!("{host}:{CONTAINER_WORKDIR}/{name}:ro")]);
        }
    }
    // Only the allowed variables, by name: docker takes each value from its own environment.
    for (key, _) in agent_environment(place.provider, place.sandbox_env, place.home.as_deref()) {
        if key != "PATH" && key != "HOME" {
            a.extend(["-e".into(), key]);
        }
    }
    for (k, v) in &inv.env {
        a.extend(["-e".into(), format!("{k}={v}")]);
    }
    a.push(image.to_string());
    a.push(program);
    a.extend(inv.args);
    Ok(Invocation {
        program: docker_binary(),
        args: a,
        prompt_on_stdin: inv.prompt_on_stdin,
        env: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv() -> Invocation {
        Invocation {
            program: "/opt/bin/codex".into(),
            args: vec!["exec".into(), "-".into()],
            prompt_on_stdin: true,
            env: vec![("GZA_X".into(), "1".into())],
        }
    }

    #[test]
    fn docker_mounts_the_worktree_at_a_fixed_path_and_git_read_only() {
        let place = Place {
            task_id: gza_core::task::TaskId(7),
            provider: ProviderKind::Codex,
            project_root: Path::new("/p"),
            workdir: Path::new("/p/.gza/worktrees/7-x"),
            home: None,
            docker_image: Some("agents:1"),
            git_dir: None,
            sandbox_env: &[],
        };
        let w = wrap(SandboxKind::Docker, &place, inv()).unwrap();
        let line = w.args.join(" ");
        assert!(
            line.contains(
                "-v /p/.gza/worktrees/7-x:/workspace -w /workspace -v /p/.git:/p/.git:ro"
            ),
            "{line}"
        );
        assert!(line.ends_with("-e GZA_X=1 agents:1 codex exec -"), "{line}");
    }

    #[test]
    fn docker_shows_the_repository_config_without_its_credentials() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        std::fs::create_dir_all(&git).unwrap();
        std::fs::write(
            git.join("config"),
            "[remote \"origin\"]\n\turl = https://u:TOKEN-9@h/r.git\n[credential]\n\thelper = x\n",
        )
        .unwrap();
        let workdir = root.path().join(".gza/worktrees/7-x");
        let place = Place {
            task_id: gza_core::task::TaskId(7),
            provider: ProviderKind::Codex,
            project_root: root.path(),
            workdir: &workdir,
            home: None,
            docker_image: Some("agents:1"),
            git_dir: Some(git.clone()),
            sandbox_env: &[],
        };
        let w = wrap(SandboxKind::Docker, &place, inv()).unwrap();
        let line = w.args.join(" ");
        let copy = line
            .split(' ')
            .find_map(|a| a.strip_suffix(&format!(":{}/config:ro", git.display())))
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(
            std::fs::read_to_string(copy).unwrap(),
            "[remote \"origin\"]\n\turl = \"https://h/r.git\"\n"
        );
        clean_up(SandboxKind::Bwrap, &place);
        assert!(!Path::new(copy).exists());
    }

    /// As bwrap does: a worktree task's container sees neither the main checkout's index nor
    /// another task's worktree admin directory, only its own; an in-place task's sees no
    /// worktree's. (Checked on `docker run`'s arguments: no engine runs here.)
    #[test]
    fn docker_hides_the_main_index_and_other_tasks_worktrees() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        for admin in ["worktrees/7-x", "worktrees/8-y"] {
            std::fs::create_dir_all(git.join(admin)).unwrap();
        }
        std::fs::write(git.join("index"), "staged").unwrap();
        let workdir = root.path().join(".gza/worktrees/7-x");
        std::fs::create_dir_all(&workdir).unwrap();
        std::fs::write(
            workdir.join(".git"),
            format!("gitdir: {}\n", git.join("worktrees/7-x").display()),
        )
        .unwrap();
        let mut place = Place {
            task_id: gza_core::task::TaskId(7),
            provider: ProviderKind::Codex,
            project_root: root.path(),
            workdir: &workdir,
            home: None,
            docker_image: Some("agents:1"),
            git_dir: Some(git.clone()),
            sandbox_env: &[],
        };
        let w = wrap(SandboxKind::Docker, &place, inv()).unwrap();
        let line = w.args.join(" ");
        let g = git.display();
        assert!(
            line.contains(&format!("-v /dev/null:{g}/index:ro")),
            "{line}"
        );
        assert!(line.contains(&format!("--tmpfs {g}/worktrees ")), "{line}");
        let own = format!("{g}/worktrees/7-x");
        assert!(line.contains(&format!("-v {own}:{own}:ro")), "{line}");
        assert!(!line.contains("8-y"), "{line}");

        place.workdir = root.path();
        let w = wrap(SandboxKind::Docker, &place, inv()).unwrap();
        let line = w.args.join(" ");
        assert!(
            line.contains("--tmpfs /workspace/.git/worktrees:ro"),
            "{line}"
        );
        assert!(
            !line.contains("/dev/null:/workspace/.git/index"),
            "in place, the index is the task's: {line}"
        );
        clean_up(SandboxKind::Bwrap, &place);
    }

    /// An in-place container, as an in-place bwrap sandbox: the agent CLIs' settings folders,
    /// the person's hooks folder in the checkout (husky 9's folder above `.husky/_`) and a
    /// committed `.mcp.json` are read-only, and a missing settings folder is an empty read-only
    /// one, since what an agent wrote there would run on the host later.
    #[test]
    fn docker_in_place_keeps_what_runs_on_the_host_read_only() {
        let root = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(root.path())
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "--quiet"]);
        git(&["config", "core.hooksPath", ".husky/_"]);
        std::fs::create_dir_all(root.path().join(".husky/_")).unwrap();
        std::fs::create_dir_all(root.path().join(".claude")).unwrap();
        std::fs::write(root.path().join(".mcp.json"), "{}").unwrap();
        std::fs::write(root.path().join("lefthook.yml"), "pre-commit: {}").unwrap();
        let place = Place {
            task_id: gza_core::task::TaskId(3),
            provider: ProviderKind::Claude,
            project_root: root.path(),
            workdir: root.path(),
            home: None,
            docker_image: Some("agents:1"),
            git_dir: Some(root.path().join(".git")),
            sandbox_env: &[],
        };
        let w = wrap(SandboxKind::Docker, &place, inv()).unwrap();
        let line = w.args.join(" ");
        let r = root.path().display();
        for mount in [
            format!("-v {r}/.claude:/workspace/.claude:ro"),
            format!("-v {r}/.husky:/workspace/.husky:ro"),
            format!("-v {r}/.mcp.json:/workspace/.mcp.json:ro"),
            format!("-v {r}/lefthook.yml:/workspace/lefthook.yml:ro"),
            "--tmpfs /workspace/.gemini:ro".to_string(),
            "--tmpfs /workspace/.codex:ro".to_string(),
        ] {
            assert!(line.contains(&mount), "{mount} in {line}");
        }
        // The workspace itself stays writable: these are mounted over it, after it.
        let at = |m: &str| line.find(m).unwrap();
        assert!(
            at(&format!("{r}:/workspace ")) < at("/workspace/.claude:ro"),
            "{line}"
        );
        clean_up(SandboxKind::Docker, &place);
    }

    /// A committed symbolic link among those names is never mounted: binding it would show
    /// what it names (the person's own `~/.claude`, a key) inside the sandbox.
    #[test]
    fn in_place_mounts_never_follow_a_link_out_of_the_project() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "key").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join(".claude")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join(".mcp.json"))
            .unwrap();
        let place = Place {
            task_id: gza_core::task::TaskId(4),
            provider: ProviderKind::Claude,
            project_root: root.path(),
            workdir: root.path(),
            home: None,
            docker_image: Some("agents:1"),
            git_dir: None,
            sandbox_env: &[],
        };
        for kind in [SandboxKind::Docker, SandboxKind::Bwrap] {
            let w = wrap(kind, &place, inv()).unwrap();
            let line = w.args.join(" ");
            assert!(!line.contains(".claude"), "{line}");
            assert!(!line.contains(".mcp.json"), "{line}");
            assert!(
                !line.contains(&outside.path().display().to_string()),
                "{line}"
            );
            clean_up(kind, &place);
        }
    }

    #[test]
    fn docker_without_an_image_is_refused() {
        let place = Place {
            task_id: gza_core::task::TaskId(1),
            provider: ProviderKind::Codex,
            project_root: Path::new("/p"),
            workdir: Path::new("/p"),
            home: None,
            docker_image: None,
            git_dir: None,
            sandbox_env: &[],
        };
        assert!(wrap(SandboxKind::Docker, &place, inv()).is_err());
    }

    #[test]
    fn an_npm_cli_under_tmp_is_exposed_with_its_node_modules() {
        let base = PathBuf::from(format!("/tmp/gza-unit-tools-{}", std::process::id()));
        let pkg = base.join("node_modules/agent-cli/bin");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::create_dir_all(base.join("node_modules/.bin")).unwrap();
        std::fs::write(pkg.join("cli.js"), "").unwrap();
        let link = base.join("node_modules/.bin/agent");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("../agent-cli/bin/cli.js", &link).unwrap();
        let dirs = hidden_tool_dirs(&link.to_string_lossy(), None);
        std::fs::remove_dir_all(&base).unwrap();
        assert!(dirs.contains(&base.join("node_modules")), "{dirs:?}");
        assert!(
            !dirs
                .iter()
                .any(|d| d.starts_with(base.join("node_modules/.bin")))
        );
    }

    #[test]
    fn bwrap_hides_gza_and_keeps_git_and_settings_read_only_for_in_place_tasks() {
        let place = Place {
            task_id: gza_core::task::TaskId(1),
            provider: ProviderKind::Codex,
            project_root: Path::new("/p"),
            workdir: Path::new("/p"),
            home: None,
            docker_image: None,
            git_dir: Some("/p/.git".into()),
            sandbox_env: &[],
        };
        let w = wrap(SandboxKind::Bwrap, &place, inv()).unwrap();
        let line = w.args.join(" ");
        assert!(
            line.contains(
                "--bind /p /p --ro-bind /dev/null /p/gza.yaml \
                 --ro-bind /dev/null /p/gza.local.yaml --tmpfs /p/.gza \
                 --remount-ro /p/.gza --tmpfs /p/.claude --remount-ro /p/.claude \
                 --tmpfs /p/.gemini --remount-ro /p/.gemini --tmpfs /p/.codex \
                 --remount-ro /p/.codex --ro-bind /p/.git /p/.git --chdir /p -- /opt/bin/codex exec -"
            ),
            "{line}"
        );
    }
}
