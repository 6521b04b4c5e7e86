//! `sandbox: bwrap | docker`: a sandboxed agent does its job and cannot write outside its
//! task's directory; a sandbox that cannot start fails the task with SANDBOX_ERROR and the agent
//! never runs; `gza doctor` says which sandboxes work.

use crate::agents_e2e::{Agent, project_for};
use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::project::TestProject;

/// The agent tries to write to $HOME, the project root, the database and learnings.md, then
/// writes its own file and finishes.
fn a_bwrap_agent_does_its_job_and_nothing_else(agent: Agent) {
    let server = FakeLlm::start(Vec::new());
    let p = project_for(agent, &server, "sandbox: bwrap\n");
    // (On PostgreSQL there is no file: the agent must not be able to make one either.)
    let db_before = std::fs::read(p.path(".gza/gza.db")).unwrap_or_default();
    let (home, root) = (
        p.home().display().to_string(),
        p.root().display().to_string(),
    );
    server.push(Reply::shell(format!(
        "echo x > {home}/pwned-home; echo x > {root}/pwned-root; echo x >> {root}/.gza/gza.db; \
         echo x >> {root}/.gza/learnings.md; echo tried"
    )));
    server.push(Reply::write_file("notes.txt", "sandboxed\n"));
    server.push(Reply::text("I added notes.txt."));
    p.add(&["Add notes"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(p.git(&["show", "gza/1-add-notes:notes.txt"]), "sandboxed\n");

    assert!(!p.home().join("pwned-home").exists());
    assert!(!p.root().join("pwned-root").exists());
    let learnings = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap_or_default();
    assert!(!learnings.ends_with("x\n"), "{learnings}");
    // The agent saw each write refused.
    let tool_result = server.agent_calls()[1].body.to_string();
    assert_eq!(
        tool_result.matches("Read-only file system").count(),
        4,
        "{tool_result}"
    );
    // The database the agent could not touch still holds every task (gza wrote it, not the agent).
    if p.database_env().is_empty() {
        assert_ne!(std::fs::read(p.path(".gza/gza.db")).unwrap(), db_before);
    } else {
        assert!(!p.path(".gza/gza.db").exists());
    }
}

#[test]
fn codex_in_bwrap_does_its_job_and_cannot_write_home_project_or_database() {
    a_bwrap_agent_does_its_job_and_nothing_else(Agent::Codex);
}

#[test]
fn gemini_in_bwrap_does_its_job_and_cannot_write_home_project_or_database() {
    a_bwrap_agent_does_its_job_and_nothing_else(Agent::Gemini);
}

#[test]
fn an_in_place_task_in_bwrap_writes_the_project_but_not_gza() {
    let server = FakeLlm::start(Vec::new());
    let p = project_for(Agent::Codex, &server, "sandbox: bwrap\n");
    let root = p.root().display().to_string();
    server.push(Reply::shell(format!(
        "echo notes > {root}/explored.txt; echo x >> {root}/.gza/gza.db"
    )));
    server.push(Reply::text("Explored."));
    p.add(&["Explore", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        std::fs::read_to_string(p.path("explored.txt")).unwrap(),
        "notes\n"
    );
    let tool_result = server.agent_calls()[1].body.to_string();
    assert_eq!(
        tool_result.matches("Read-only file system").count(),
        1,
        "{tool_result}"
    );
}

/// An in-place task's agent cannot plant a git hook in the checkout: the person's hooks folder,
/// when it is part of the checkout (`core.hooksPath`), is read-only to it, and husky 9's
/// layout (stubs in `.husky/_` running the scripts one folder up) keeps the folder above too.
/// A hook planted there would run on this machine at the person's next git command.
#[test]
fn an_in_place_agent_cannot_plant_a_hook_in_the_checkouts_hooks_folder() {
    for hooks_path in [".husky", ".husky/_", "tools/git-hooks"] {
        let p = TestProject::in_git_repo();
        let folder = if hooks_path == ".husky/_" {
            ".husky"
        } else {
            hooks_path
        };
        std::fs::create_dir_all(p.path(hooks_path)).unwrap();
        p.git(&["config", "core.hooksPath", hooks_path]);
        // The script inside the project, which the in-place sandbox shows (HOME is hidden).
        std::fs::write(
            p.path("agent.sh"),
            format!(
                "echo evil > {folder}/post-merge 2>/dev/null && echo planted\n\
                 echo evil > {hooks_path}/pre-commit 2>/dev/null && echo planted\n\
                 echo notes > explored.txt\necho done\n"
            ),
        )
        .unwrap();
        in_place_bwrap_agent(&p);
        p.add(&["Explore", "--type", "explore"]);
        let run = p.run(&["work"]);
        assert_eq!(run.code, 0, "{hooks_path}: {run}");
        let t = p.json(&["show", "1", "--json"]);
        let output = t["output"].as_str().unwrap_or_default();
        assert!(!output.contains("planted"), "{hooks_path}: {t}");
        assert!(
            !p.path(&format!("{folder}/post-merge")).exists(),
            "{hooks_path}"
        );
        assert!(
            !p.path(&format!("{hooks_path}/pre-commit")).exists(),
            "{hooks_path}"
        );
        // The control: the agent does write the checkout elsewhere.
        assert_eq!(
            std::fs::read_to_string(p.path("explored.txt")).unwrap(),
            "notes\n",
            "{hooks_path}"
        );
    }
}

/// An in-place task's agent cannot change what a git hook manager runs at the person's next git
/// command (hostile review 14: lefthook.yml, .pre-commit-config.yaml and package.json's scripts
/// were the agent's to rewrite): those that exist are read-only in bubblewrap, and one it
/// creates (an ignored `lefthook-local.yml`, which `git status` does not show) is named when the
/// task ends.
#[test]
fn an_in_place_agent_cannot_rewrite_what_a_hook_manager_runs_and_a_new_one_is_named() {
    let p = TestProject::in_git_repo();
    let originals = [
        (
            "lefthook.yml",
            "pre-commit:\n  commands:\n    lint:\n      run: cargo fmt --check\n",
        ),
        (
            ".pre-commit-config.yaml",
            "repos:\n  - repo: local\n    hooks:\n      - id: fmt\n        name: fmt\n        entry: cargo fmt --check\n        language: system\n",
        ),
        (
            "package.json",
            "{\"scripts\": {\"test\": \"node test.js\"}, \"husky\": {\"hooks\": {\"pre-commit\": \"npm test\"}}}\n",
        ),
    ];
    for (name, text) in originals {
        std::fs::write(p.path(name), text).unwrap();
    }
    std::fs::write(p.path(".gitignore"), "lefthook-local.yml\n").unwrap();
    std::fs::write(
        p.path("agent.sh"),
        "echo '    evil: {run: touch /tmp/pwned}' >> lefthook.yml 2>/dev/null && echo changed-lefthook\n\
         echo 'evil' >> .pre-commit-config.yaml 2>/dev/null && echo changed-pre-commit\n\
         echo '{\"scripts\": {\"test\": \"touch /tmp/pwned\"}}' > package.json 2>/dev/null && echo changed-package\n\
         rm -f lefthook.yml 2>/dev/null; mv package.json moved.json 2>/dev/null\n\
         printf 'pre-commit:\\n  commands:\\n    evil:\\n      run: touch /tmp/pwned\\n' > lefthook-local.yml\n\
         echo notes > explored.txt\necho done\n",
    )
    .unwrap();
    in_place_bwrap_agent(&p);
    p.add(&["Explore", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    let output = t["output"].as_str().unwrap_or_default();
    assert!(output.contains("done"), "{t}");
    assert!(!output.contains("changed-"), "{t}");
    for (name, text) in originals {
        assert_eq!(
            std::fs::read_to_string(p.path(name)).unwrap(),
            text,
            "{name}"
        );
    }
    assert!(!p.path("moved.json").exists());
    // The one it could create is named, with what to do.
    assert!(p.path("lefthook-local.yml").exists());
    assert!(
        run.stderr
            .contains("changed lefthook-local.yml, which a git hook manager")
            && run.stderr.contains("read it before you commit or push"),
        "{run}"
    );
    // The control: the agent does write the checkout elsewhere.
    assert_eq!(
        std::fs::read_to_string(p.path("explored.txt")).unwrap(),
        "notes\n"
    );
}

/// The project's agent: `sh agent.sh` (a script inside the project, which the in-place sandbox
/// shows; HOME is hidden) in bubblewrap.
fn in_place_bwrap_agent(p: &TestProject) {
    p.config(&format!(
        "provider: command\nproviders:\n  command:\n    command: [sh, {}]\nsandbox: bwrap\n",
        serde_json::to_string(&p.path("agent.sh").to_string_lossy()).unwrap()
    ));
}

/// A command agent that records that it ran; `sandbox` and `path` set the rest.
fn marker_project(extra: &str) -> (TestProject, std::path::PathBuf) {
    let p = TestProject::new();
    let marker = p.scratch().join("agent-ran");
    p.command_agent(&format!("touch {}\necho ran\n", marker.display()), extra);
    (p, marker)
}

#[test]
fn a_missing_bwrap_fails_the_task_with_sandbox_error_and_the_agent_never_runs() {
    let (mut p, marker) = marker_project("sandbox: bwrap\n");
    let empty = p.scratch().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    // Only sh and git on PATH: no bwrap.
    for tool in ["sh", "git"] {
        let real = which(tool);
        std::os::unix::fs::symlink(real, empty.join(tool)).unwrap();
    }
    p.set_env("PATH", &empty.to_string_lossy());
    p.add(&["anything", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["failure_reason"], "SANDBOX_ERROR", "{t}");
    assert_eq!(
        t["output"],
        "gza: sandbox bwrap: `bwrap` not found; install bubblewrap, or set sandbox: none in gza.yaml"
    );
    assert!(!marker.exists(), "the agent must not run unsandboxed");
}

/// bubblewrap refusing to create namespaces (as on a kernel without unprivileged user
/// namespaces) cannot be produced on a machine where it works, so a `bwrap` that answers the way
/// bubblewrap does there stands in for it: what is tested is gza's handling of the refusal.
#[test]
fn a_bwrap_that_cannot_create_namespaces_fails_the_task_with_its_reason() {
    let (mut p, marker) = marker_project("sandbox: bwrap\n");
    let bin = p.scratch().join("refusing-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    p.set_env("PATH", &path);
    p.add(&["anything", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["failure_reason"], "SANDBOX_ERROR", "{t}");
    assert!(
        t["output"]
            .as_str()
            .unwrap()
            .starts_with("gza: sandbox bwrap: bwrap cannot start a sandbox here: bwrap: No permissions to create new namespace"),
        "{t}"
    );
    assert!(!marker.exists(), "the agent must not run unsandboxed");
    let doctor = p.run(&["doctor"]);
    assert_eq!(doctor.code, 1, "{doctor}");
    assert!(
        doctor
            .stdout
            .contains("bwrap   does not work: bwrap cannot start a sandbox here"),
        "{doctor}"
    );
}

#[test]
fn docker_without_an_engine_fails_the_task_with_sandbox_error() {
    let (p, marker) = marker_project("sandbox: docker\ndocker_image: gza-agents:latest\n");
    p.add(&["anything", "--type", "explore"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["failure_reason"], "SANDBOX_ERROR", "{t}");
    let output = t["output"].as_str().unwrap();
    // Without a client: "`docker` not found"; with a client but no engine (these machines):
    // "no container engine answers `docker`: Cannot connect to the Docker daemon …".
    assert!(
        output.starts_with("gza: sandbox docker: no container engine answers `docker`: ")
            || output
                == "gza: sandbox docker: `docker` not found; install docker, or set sandbox: none in gza.yaml",
        "{output}"
    );
    assert!(!marker.exists(), "the agent must not run unsandboxed");
}

/// The command line gza hands the container CLI, recorded by a `docker` that answers like an
/// engine with the image present (no engine runs on these machines).
#[test]
fn docker_runs_the_agent_with_the_worktree_at_workspace_and_git_read_only() {
    let mut p = TestProject::in_git_repo();
    let log = p.scratch().join("docker-args");
    let fake = p.scratch().join("docker");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$*\" >> {}\ncase \"$1\" in version) echo 27.0.0;; image) echo '[]';; run) echo 'agent output'; exit 3;; rm) ;; esac\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.set_env("GZA_DOCKER", &fake.to_string_lossy());
    p.set_env("OPENAI_API_KEY", "sk-test-not-a-real-key");
    p.set_env("MY_SECRET_TOKEN", "host-secret");
    p.config(
        "provider: codex\nsandbox: docker\ndocker_image: gza-agents:1\nproviders:\n  codex:\n    path: /opt/agents/bin/codex\n",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    p.add(&["Add notes"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let calls = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines[0], "version --format {{.Server.Version}}");
    assert_eq!(lines[1], "image inspect gza-agents:1");
    let root = p.root().canonicalize().unwrap();
    let wt = root.join(".gza/worktrees/1-add-notes");
    let copies = root.join(".gza/sandbox");
    let expected = format!(
        "run --rm -i --init --name gza-PID-task-1 -v {wt}:/workspace -w /workspace \
         -v {git}:{git}:ro -v COPY:{git}/config:ro -v /dev/null:{git}/index:ro \
         --tmpfs {git}/worktrees -v {git}/worktrees/1-add-notes:{git}/worktrees/1-add-notes:ro \
         -e LANG -e NO_COLOR -e OPENAI_API_KEY -e TZ gza-agents:1 codex exec --json --skip-git-repo-check \
         --dangerously-bypass-approvals-and-sandbox -",
        wt = wt.display(),
        git = root.join(".git").display()
    );
    let got = lines[2]
        .split_whitespace()
        .map(|w| {
            if w.starts_with("gza-") && w.ends_with("-task-1") {
                "gza-PID-task-1".to_string()
            } else if let Some(rest) = w.strip_prefix(&format!("{}/", copies.display())) {
                // The repository's config without credentials, from this run's scratch copy.
                rest.split_once('/').map_or(w.to_string(), |(_, file)| {
                    format!("COPY{}", &file[file.find(':').unwrap()..])
                })
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(got, expected);
    // The copy went with the run.
    assert_eq!(std::fs::read_dir(&copies).unwrap().count(), 0);
    // A container that outlived its client is removed.
    assert!(
        lines[3].starts_with("rm --force gza-") && lines[3].ends_with("-task-1"),
        "{calls}"
    );
    // The key is passed by name, never on the command line; the host's other secrets not at all.
    assert!(!calls.contains("sk-test"), "{calls}");
    assert!(!calls.contains("MY_SECRET_TOKEN"), "{calls}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["failure_reason"], "AGENT_EXIT", "{t}");
}

#[test]
fn doctor_reports_each_sandbox() {
    let p = TestProject::new();
    p.config("sandbox: bwrap\nproviders:\n  codex:\n    sandbox: docker\ndocker_image: x\n");
    let run = p.run(&["doctor"]);
    assert_eq!(run.code, 0, "{run}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "Sandboxes on this machine:");
    assert_eq!(lines[1], "  none    works: agents run with your own access");
    assert!(
        lines[2].starts_with("  bwrap   works: bubblewrap "),
        "{run}"
    );
    assert!(lines[3].starts_with("  docker  does not work: "), "{run}");
    assert!(
        lines[4].starts_with("Embedding model: none usable (")
            && lines[4].ends_with("until you run `gza model install`"),
        "{run}"
    );
    assert_eq!(
        lines[5],
        "This project (gza.yaml): claude bwrap, codex docker, gemini bwrap, command bwrap"
    );
}

fn which(tool: &str) -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(tool))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{tool} on PATH"))
}

/// The real Claude Code CLI in bubblewrap reaches its (fake) API and writes its file, which gza
/// commits; its writes to HOME and the database are refused; a secret in gza's environment is
/// not in its: its `env` goes back to the model without it.
#[test]
fn claude_in_bwrap_does_its_job_and_cannot_write_home_or_the_database() {
    use crate::support::claude::claude_bin;
    use crate::support::fake_anthropic::{FakeAnthropic, Reply as ClaudeReply};
    let claude = claude_bin().unwrap();
    let server = FakeAnthropic::start(Vec::new());
    let mut p = TestProject::in_git_repo();
    p.config(&format!(
        "sandbox: bwrap\nproviders:\n  claude:\n    path: {}\n",
        claude.display()
    ));
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    for (k, v) in server.claude_env() {
        p.set_env(k, &v);
    }
    p.set_env("CLAUDE_CODE_MAX_RETRIES", "0");
    p.set_env("MY_SECRET_TOKEN", "host-secret-a91f");
    let (home, root) = (
        p.home().display().to_string(),
        p.root().display().to_string(),
    );
    server.push(ClaudeReply::bash(format!(
        "env | sort; echo x > {home}/pwned-home; echo x >> {root}/.gza/gza.db; echo tried"
    )));
    server.push(ClaudeReply::write_file(
        p.path(".gza/worktrees/1-add-notes/notes.txt")
            .to_string_lossy(),
        "sandboxed claude\n",
    ));
    server.push(ClaudeReply::text("I added notes.txt."));
    p.add(&["Add notes"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(
        p.git(&["show", "gza/1-add-notes:notes.txt"]),
        "sandboxed claude\n"
    );
    assert!(!p.home().join("pwned-home").exists());
    let tool_result = server.message_requests()[1].last_user_text();
    assert_eq!(
        tool_result.matches("Read-only file system").count(),
        2,
        "{tool_result}"
    );
    assert!(tool_result.contains("ANTHROPIC_BASE_URL="), "{tool_result}");
    let sent: String = server
        .message_requests()
        .iter()
        .map(|r| r.all_text())
        .collect();
    assert!(!sent.contains("host-secret-a91f"), "{sent}");
    assert!(!sent.contains("MY_SECRET_TOKEN"), "{sent}");
}
