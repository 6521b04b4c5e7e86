//! What a bubblewrap agent is shown in place of the person's own files it must not change or
//! read: a scratch copy of its provider's configuration (the agent's writes land there and are
//! thrown away when it ends), and a copy of the repository's git config without credentials.
//!
//! Why a copy and not the person's files read-write: whatever an agent writes in
//! `~/.claude/settings.json`, `~/.claude.json`, `~/.codex/config.toml` or
//! `~/.gemini/settings.json` (hooks, MCP servers, notify programs) would run on the host at the
//! person's next session, or at gza's own extraction. What is copied in is an allow-list of the
//! small files a CLI needs to log in and to know the person's settings; the history directories
//! (`~/.claude/projects`, `~/.codex/sessions`) stay out. Nothing is copied back: an OAuth token
//! the CLI refreshes inside the sandbox is dropped with the copy (the person's own file keeps
//! the token it had, which the next host-side run refreshes), since a credentials file the agent
//! could write would let it sign the person in as someone else.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gza_core::config::ProviderKind;

/// The directory under `.gza/` that holds every run's scratch copies.
const SCRATCH_DIR: &str = "sandbox";
/// A file larger than this is not copied (a CLI's state file grown with history).
const MAX_FILE: u64 = 64 << 20;
/// At most this many files per directory entry, so a huge tree cannot stall a task's start.
const MAX_FILES: usize = 2_000;

/// The configuration a provider's CLI reads under HOME, copied into its scratch HOME: for each
/// of [`super::provider_home_entries`], the names under it that are copied (files, or directories
/// copied whole); an empty list for a plain file copies the file.
fn copied_config(provider: ProviderKind) -> &'static [(&'static str, &'static [&'static str])] {
    const CLAUDE_DIR: &[&str] = &[
        ".credentials.json",
        "settings.json",
        "settings.local.json",
        "CLAUDE.md",
        "agents",
        "commands",
        "skills",
        "hooks",
        "output-styles",
    ];
    match provider {
        ProviderKind::Claude => &[
            (".claude", CLAUDE_DIR),
            (".claude.json", &[]),
            (".config/claude", CLAUDE_DIR),
        ],
        ProviderKind::Codex => &[(
            ".codex",
            &[
                "auth.json",
                "config.toml",
                "AGENTS.md",
                "AGENTS.override.md",
                "instructions.md",
                "prompts",
            ],
        )],
        ProviderKind::Gemini => &[(
            ".gemini",
            &[
                "settings.json",
                ".env",
                "oauth_creds.json",
                "google_accounts.json",
                "mcp-oauth-tokens.json",
                "installation_id",
                "user_id",
                "GEMINI.md",
                "commands",
            ],
        )],
        ProviderKind::Command => &[],
    }
}

/// One run's scratch directory: `.gza/sandbox/<pid>-<task>-<n>/`, private to the person.
pub(super) fn make_dir(project_root: &Path, task: i64) -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = project_root
        .join(gza_core::project::STATE_DIR)
        .join(SCRATCH_DIR);
    std::fs::create_dir_all(&base)?;
    sweep_dead(&base);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = base.join(format!("{}-{task}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(false)
        .create(&dir)?;
    Ok(dir)
}

/// Remove this process's scratch directories of `task` (its agent or verify command ended).
pub(super) fn remove(project_root: &Path, task: i64) {
    let base = project_root
        .join(gza_core::project::STATE_DIR)
        .join(SCRATCH_DIR);
    let prefix = format!("{}-{task}-", std::process::id());
    for entry in std::fs::read_dir(&base).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Remove what a gza process that is gone left behind (it crashed, or its sandbox never
/// started): the copies hold credentials.
fn sweep_dead(base: &Path) {
    for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Copy `provider`'s allow-listed configuration from `home` into `scratch` (the same relative
/// paths), and make its state directory there, so the CLI can write. Returns the entries of
/// [`super::provider_home_entries`] that exist in `scratch`, to bind over HOME's.
pub(super) fn copy_provider_config(
    provider: ProviderKind,
    home: &Path,
    scratch: &Path,
) -> Vec<&'static str> {
    let mut present = Vec::new();
    for (entry, names) in copied_config(provider) {
        let from = home.join(entry);
        let to = scratch.join(entry);
        if names.is_empty() {
            if from.is_file() && copy_file(&from, &to) {
                present.push(*entry);
            }
            continue;
        }
        if !from.is_dir() && Some(*entry) != super::provider_home_dir(provider) {
            continue;
        }
        if std::fs::create_dir_all(&to).is_err() {
            continue;
        }
        let mut budget = MAX_FILES;
        for name in *names {
            let src = from.join(name);
            if src.is_dir() {
                copy_tree(&src, &to.join(name), &mut budget);
            } else if src.is_file() {
                copy_file(&src, &to.join(name));
            }
        }
        present.push(*entry);
    }
    present
}

/// Copy one regular file (a symbolic link is followed: dotfile managers link settings), with
/// its mode; `false` when it is not copied.
fn copy_file(from: &Path, to: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(from) else {
        return false;
    };
    if !meta.is_file() || meta.len() > MAX_FILE {
        return false;
    }
    if let Some(parent) = to.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::copy(from, to).is_ok()
}

/// Copy a directory's regular files and subdirectories (links to directories are not
/// followed, so a loop cannot hold a task up), at most `budget` files.
fn copy_tree(from: &Path, to: &Path, budget: &mut usize) {
    if std::fs::create_dir_all(to).is_err() {
        return;
    }
    for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
        if *budget == 0 {
            return;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            copy_tree(&path, &to.join(entry.file_name()), budget);
        } else if copy_file(&path, &to.join(entry.file_name())) {
            *budget -= 1;
        }
    }
}

/// The git config of `file` an agent may see, written to `to`: an allow-list of keys (the
/// repository's format and core settings, remotes, branches' upstreams, submodules, the
/// identity), remote URLs without their user and password, and nothing else: no `credential.*`,
/// no `http.*` (extra headers carry tokens), no `url.*` (an `insteadOf` base can hold a token),
/// no `include`/`includeIf`. A config git cannot read becomes an empty one.
pub(super) fn write_sanitised_git_config(file: &Path, to: &Path) -> std::io::Result<()> {
    let listed = std::process::Command::new("git")
        .args(["config", "--no-includes", "--file"])
        .arg(file)
        .args(["--list", "-z"])
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .env_remove("GIT_CONFIG_GLOBAL")
        .env_remove("GIT_CONFIG_SYSTEM")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let text = match listed {
        Ok(out) if out.status.success() => sanitised_config(&String::from_utf8_lossy(&out.stdout)),
        _ => String::new(),
    };
    std::fs::write(to, text)
}

/// [`write_sanitised_git_config`]'s text from `git config --list -z` output.
fn sanitised_config(listed: &str) -> String {
    let mut out = String::new();
    let mut current: Option<(String, Option<String>)> = None;
    for item in listed.split('\0').filter(|i| !i.is_empty()) {
        let (key, value) = match item.split_once('\n') {
            Some((k, v)) => (k, Some(v)),
            None => (item, None),
        };
        let Some((section, rest)) = key.split_once('.') else {
            continue;
        };
        let (sub, name) = match rest.rsplit_once('.') {
            Some((sub, name)) => (Some(sub), name),
            None => (None, rest),
        };
        if !allowed(section, sub.is_some(), name) {
            continue;
        }
        if sub.is_some_and(|s| s.contains(['\n', '\0'])) || !is_plain(section) || !is_plain(name) {
            continue;
        }
        let value = value.map(|v| {
            if matches!(name, "url" | "pushurl") {
                without_userinfo(v)
            } else {
                v.to_string()
            }
        });
        let header = (section.to_string(), sub.map(str::to_string));
        if current.as_ref() != Some(&header) {
            match sub {
                Some(sub) => out.push_str(&format!(
                    "[{section} \"{}\"]\n",
                    sub.replace('\\', "\\\\").replace('"', "\\\"")
                )),
                None => out.push_str(&format!("[{section}]\n")),
            }
            current = Some(header);
        }
        match value {
            Some(v) => out.push_str(&format!(
                "\t{name} = \"{}\"\n",
                v.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n")
                    .replace('\t', "\\t")
            )),
            None => out.push_str(&format!("\t{name}\n")),
        }
    }
    out
}

fn is_plain(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Whether key `section[.sub].name` (section and name lower case, as git lists them) is one an
/// agent is shown.
fn allowed(section: &str, has_sub: bool, name: &str) -> bool {
    match (section, has_sub) {
        ("core" | "extensions", false) => true,
        ("user", false) => matches!(name, "name" | "email"),
        ("remote", true) => matches!(
            name,
            "url"
                | "pushurl"
                | "fetch"
                | "push"
                | "tagopt"
                | "mirror"
                | "promisor"
                | "partialclonefilter"
        ),
        ("branch", true) => matches!(name, "remote" | "merge" | "rebase" | "pushremote"),
        ("submodule", true) => matches!(name, "url" | "path" | "branch" | "active"),
        _ => false,
    }
}

/// `scheme://user:password@host/...` without `user:password@`; other URLs as they are.
fn without_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://{host}{path}"),
        None => url.to_string(),
    }
}

/// The repository's administrative directory of the worktree at `workdir` (what its `.git` file
/// names), when it lies directly in `git_dir/worktrees/`.
pub(super) fn own_worktree_admin(workdir: &Path, git_dir: &Path) -> Option<PathBuf> {
    let text = gza_core::fsutil::read_regular_file(&workdir.join(".git"), 4096).ok()?;
    let text = String::from_utf8(text).ok()?;
    let named = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    let named = if named.is_absolute() {
        named
    } else {
        workdir.join(named)
    };
    let named = named.canonicalize().ok()?;
    let worktrees = git_dir.join("worktrees").canonicalize().ok()?;
    let name = named.file_name()?;
    (named.parent() == Some(worktrees.as_path())).then(|| git_dir.join("worktrees").join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_includes_and_helpers_are_left_out_and_urls_lose_their_userinfo() {
        let listed = "core.repositoryformatversion\n0\0core.bare\nfalse\0\
            extensions.worktreeconfig\ntrue\0\
            remote.origin.url\nhttps://x-access-token:ghp_SECRET@github.com/o/r.git\0\
            remote.origin.fetch\n+refs/heads/*:refs/remotes/origin/*\0\
            remote.origin.proxy\nhttp://u:p@proxy\0\
            credential.helper\nstore --file /home/p/.creds\0\
            http.https://github.com/.extraheader\nAUTHORIZATION: basic SECRET2\0\
            url.https://tok@github.com/.insteadof\nhttps://github.com/\0\
            include.path\n/home/p/.gitconfig-secret\0\
            includeif.gitdir:/x/.path\n/y\0\
            branch.main.remote\norigin\0\
            user.name\nA \"B\" \\ C\0core.symlinks\0";
        let text = sanitised_config(listed);
        assert_eq!(
            text,
            "[core]\n\trepositoryformatversion = \"0\"\n\tbare = \"false\"\n\
             [extensions]\n\tworktreeconfig = \"true\"\n\
             [remote \"origin\"]\n\turl = \"https://github.com/o/r.git\"\n\
             \tfetch = \"+refs/heads/*:refs/remotes/origin/*\"\n\
             [branch \"main\"]\n\tremote = \"origin\"\n\
             [user]\n\tname = \"A \\\"B\\\" \\\\ C\"\n[core]\n\tsymlinks\n"
        );
    }

    #[test]
    fn only_the_userinfo_of_a_url_goes() {
        assert_eq!(without_userinfo("https://a:b@h/p@q"), "https://h/p@q");
        assert_eq!(without_userinfo("ssh://git@h:22/r"), "ssh://h:22/r");
        assert_eq!(
            without_userinfo("git@github.com:o/r.git"),
            "git@github.com:o/r.git"
        );
        assert_eq!(without_userinfo("/srv/repo.git"), "/srv/repo.git");
    }
}
