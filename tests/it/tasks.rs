//! The task store and task commands, driven as a user would (issue: the ground floor).

use insta::assert_snapshot;

use crate::support::project::TestProject;

#[test]
fn init_creates_config_database_and_gitignore() {
    let p = TestProject::empty_sqlite();
    let run = p.run(&["init"]);
    assert_snapshot!("init", run.to_string());
    assert!(p.path("gza.yaml").is_file());
    assert!(p.path(".gza/gza.db").is_file());
    let gitignore = std::fs::read_to_string(p.path(".gitignore")).unwrap();
    assert!(
        gitignore.contains("/.gza/*\n!/.gza/learnings.md\n"),
        "{gitignore}"
    );
    let yaml = std::fs::read_to_string(p.path("gza.yaml")).unwrap();
    assert!(yaml.contains("project_name: \"proj\""), "{yaml}");
    // The learnings metadata row exists from the start, exactly as the spec gives it.
    let row: (Option<String>, Option<i64>, i64) = p
        .db()
        .query_row(
            "SELECT last_regenerated_at, last_regenerated_from_task_id, tasks_since_regen \
             FROM learnings_metadata WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(row, (None, None, 0));
}

#[test]
fn init_refuses_to_overwrite_without_force_and_force_keeps_tasks() {
    let p = TestProject::new();
    std::fs::write(p.path("gza.yaml"), "max_turns: 7\n").unwrap();
    p.add(&["keep me"]);
    assert_snapshot!("init_again", p.user_error(&["init"]));
    assert_eq!(
        std::fs::read_to_string(p.path("gza.yaml")).unwrap(),
        "max_turns: 7\n"
    );
    p.ok(&["init", "--force"]);
    assert!(
        std::fs::read_to_string(p.path("gza.yaml"))
            .unwrap()
            .contains("max_turns: 50")
    );
    assert!(p.ok(&["history"]).contains("keep me"));
    // .gitignore entries are not duplicated.
    let gitignore = std::fs::read_to_string(p.path(".gitignore")).unwrap();
    assert_eq!(gitignore.matches("/.gza/*").count(), 1);
}

/// Everything gza keeps in `.gza/` stays out of git (runtime files, locks, spooled drafts,
/// reports, partial files, and whatever a later gza adds) except learnings.md, which the team
/// shares.
#[test]
fn gitignore_keeps_runtime_files_out_and_learnings_md_in() {
    let p = TestProject::in_git_repo();
    for rel in [
        ".gza/gza.db",
        ".gza/gza.db-wal",
        ".gza/learnings.lock",
        ".gza/learnings.md.partial",
        ".gza/spool/drafts.jsonl",
        ".gza/reports/1.md",
        ".gza/logs/1.stderr.log",
        ".gza/tracked.cache",
        "gza.local.yaml",
        ".gza/learnings.md",
    ] {
        if let Some(dir) = p.path(rel).parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(p.path(rel), "x").unwrap();
    }
    let status = p.git(&["status", "--porcelain", "--untracked-files=all"]);
    let untracked: Vec<&str> = status
        .lines()
        .filter(|l| l.contains(".gza") || l.contains("gza.local"))
        .collect();
    assert_eq!(untracked, ["?? .gza/learnings.md"], "{status}");
}

#[test]
fn commands_outside_a_project_say_to_run_init() {
    let p = TestProject::empty();
    assert!(p.user_error(&["next"]).contains("run `gza init`"));
}

#[test]
fn dash_c_points_at_another_directory() {
    let p = TestProject::new();
    // Another directory of the same person (the same environment, the same database).
    let elsewhere = TestProject::empty_sharing(&p);
    let mut cmd = elsewhere.command(&["-C", p.root().to_str().unwrap(), "add", "from afar"]);
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    assert!(p.ok(&["history"]).contains("from afar"));
}

#[test]
fn add_prints_the_new_id_and_stores_every_option() {
    let p = TestProject::new();
    std::fs::write(p.path("SPEC.md"), "the spec").unwrap();
    let run = p.run(&["add", "Add user authentication"]);
    assert_snapshot!("add", run.to_string());
    let id = p.add(&[
        "Write tests",
        "--type",
        "explore",
        "--based-on",
        "1",
        "--depends-on",
        "1",
        "--group",
        "auth",
        "--spec",
        "SPEC.md",
        "--model",
        "opus",
        "--provider",
        "codex",
        "--no-learnings",
        "--next",
    ]);
    assert_eq!(id, 2);
    let t = p.json(&["show", "2", "--json"]);
    assert_eq!(t["task_type"], "explore");
    assert_eq!(t["based_on"], 1);
    assert_eq!(t["depends_on"], 1);
    assert_eq!(t["group"], "auth");
    assert_eq!(t["spec"], "SPEC.md");
    assert_eq!(t["model"], "opus");
    assert_eq!(t["provider"], "codex");
    assert_eq!(t["skip_learnings"], true);
    assert_eq!(t["urgent"], true);
    assert_eq!(t["status"], "pending");
    let stored: i64 = p
        .db()
        .query_row("SELECT skip_learnings FROM tasks WHERE id = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(stored, 1);
}

#[test]
fn add_with_editor_uses_what_was_saved() {
    let mut p = TestProject::new();
    p.set_env("EDITOR", "sh -c 'printf \"from the editor\" > \"$0\"'");
    p.ok(&["add", "--edit"]);
    assert_eq!(
        p.json(&["show", "1", "--json"])["prompt"],
        "from the editor"
    );
    p.set_env("VISUAL", "false");
    let err = p.user_error(&["add", "--edit"]);
    assert!(err.contains("nothing was changed"), "{err}");
}

#[test]
fn next_lists_in_pickup_order_and_never_offers_a_blocked_task() {
    let p = TestProject::new();
    p.add(&["first, oldest"]);
    p.add(&["second"]);
    p.add(&["waits for 1", "--depends-on", "1"]);
    p.add(&["urgent one", "--next"]);
    assert_snapshot!("next", p.run(&["next"]).to_string());
    assert_snapshot!("next_all", p.run(&["next", "--all"]).to_string());
    let queue = p.json(&["next", "--json"]);
    let ids: Vec<i64> = queue
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![4, 1, 2]);
    let all = p.json(&["next", "--all", "--json"]);
    let blocked = all
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == 3)
        .unwrap();
    assert_eq!(blocked["blocked_by"], serde_json::json!([1, "pending"]));

    // Once the dependency completes, the task becomes ready.
    p.db()
        .execute("UPDATE tasks SET status = 'completed' WHERE id = 1", [])
        .unwrap();
    let ids: Vec<i64> = p
        .json(&["next", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![4, 2, 3]);
    // A failed dependency keeps it blocked.
    p.db()
        .execute("UPDATE tasks SET status = 'failed' WHERE id = 1", [])
        .unwrap();
    assert!(p.ok(&["next"]).contains("1 task blocked"));
}

#[test]
fn next_on_an_empty_queue() {
    let p = TestProject::new();
    assert_eq!(p.ok(&["next"]), "No pending tasks\n");
}

#[test]
fn next_limits_long_queues() {
    let p = TestProject::new();
    for i in 0..5 {
        p.add(&[&format!("task {i}")]);
    }
    let out = p.ok(&["next", "-n", "2"]);
    assert!(out.contains("… 3 more ready (-n 0 lists all)"), "{out}");
    assert_eq!(p.ok(&["next", "-n", "0"]).lines().count(), 6);
}

#[test]
fn history_filters_and_json() {
    let p = TestProject::new();
    p.add(&["one"]);
    p.add(&["two", "--type", "plan"]);
    p.add(&["three"]);
    p.db()
        .execute(
            "UPDATE tasks SET status = 'failed', failure_reason = 'TIMEOUT', cost_usd = 0.25, \
             duration_seconds = 125 WHERE id = 3",
            [],
        )
        .unwrap();
    assert_snapshot!("history", p.run(&["history"]).to_string());
    assert_snapshot!(
        "history_failed",
        p.run(&["history", "--status", "failed"]).to_string()
    );
    let plans = p.json(&["history", "--type", "plan", "--json"]);
    assert_eq!(plans.as_array().unwrap().len(), 1);
    assert_eq!(plans[0]["prompt"], "two");
    assert_eq!(
        p.json(&["history", "-n", "1", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let run = p.run(&["history", "--status", "bogus"]);
    assert_eq!(run.code, 2, "{run}");
}

#[test]
fn show_prints_the_task_and_its_prompt() {
    let p = TestProject::new();
    std::fs::write(p.path("SPEC.md"), "Use JWT.\n").unwrap();
    p.add(&["Add auth", "--spec", "SPEC.md", "--group", "auth"]);
    assert_snapshot!("show", p.run(&["show", "1"]).to_string());
    assert_snapshot!("show_prompt", p.run(&["show", "1", "--prompt"]).to_string());
}

#[test]
fn show_prompt_injects_learnings_unless_the_task_opts_out() {
    let p = TestProject::new();
    std::fs::create_dir_all(p.path(".gza")).unwrap();
    std::fs::write(
        p.path(".gza/learnings.md"),
        "# Project Learnings\n\n## Testing Patterns\n- Run cargo test\n",
    )
    .unwrap();
    p.add(&["with learnings"]);
    p.add(&["without", "--no-learnings"]);
    assert!(
        p.ok(&["show", "1", "--prompt"])
            .contains("- Run cargo test")
    );
    assert!(!p.ok(&["show", "2", "--prompt"]).contains("Run cargo test"));
    p.ok(&["edit", "2", "--learnings"]);
    assert!(
        p.ok(&["show", "2", "--prompt"])
            .contains("- Run cargo test")
    );
}

#[test]
fn edit_changes_a_pending_task() {
    let p = TestProject::new();
    p.add(&["old prompt"]);
    p.add(&["other"]);
    assert_snapshot!(
        "edit",
        p.run(&[
            "edit",
            "1",
            "new prompt",
            "--type",
            "plan",
            "--depends-on",
            "2"
        ])
        .to_string()
    );
    let t = p.json(&["show", "1", "--json"]);
    assert_eq!(t["prompt"], "new prompt");
    assert_eq!(t["task_type"], "plan");
    assert_eq!(t["depends_on"], 2);
    p.ok(&["edit", "1", "--no-learnings"]);
    assert_eq!(p.json(&["show", "1", "--json"])["skip_learnings"], true);
    p.ok(&["edit", "1", "--learnings"]);
    assert_eq!(p.json(&["show", "1", "--json"])["skip_learnings"], false);
}

#[test]
fn edit_of_a_finished_task_only_toggles_learnings() {
    let p = TestProject::new();
    p.add(&["done already"]);
    p.db()
        .execute("UPDATE tasks SET status = 'completed' WHERE id = 1", [])
        .unwrap();
    let before = p.dump();
    assert_snapshot!(
        "edit_finished",
        p.user_error(&["edit", "1", "rewrite history"])
    );
    assert_eq!(p.dump(), before);
    p.ok(&["edit", "1", "--no-learnings"]);
    assert_eq!(p.json(&["show", "1", "--json"])["skip_learnings"], true);
}

#[test]
fn delete_asks_for_confirmation_and_refuses_running_tasks() {
    let p = TestProject::new();
    p.add(&["a"]);
    p.add(&["b", "--depends-on", "1"]);
    assert!(p.user_error(&["delete", "1"]).contains("pass --yes"));
    assert_snapshot!("delete", p.run(&["delete", "1", "--yes"]).to_string());
    assert_eq!(
        p.json(&["show", "2", "--json"])["depends_on"],
        serde_json::Value::Null
    );
    // A live worker (this test process) owns the task.
    p.db()
        .execute(
            "UPDATE tasks SET status = 'in_progress', running_pid = ?1 WHERE id = 2",
            [std::process::id()],
        )
        .unwrap();
    assert!(
        p.user_error(&["delete", "2", "--yes"])
            .contains("gza kill 2")
    );
}

/// Deleting a task removes what gza made for it (its worktree, when nothing of the person's is
/// in it, and its logs), keeps its branch and says so, and its id is never given again: the
/// next task's branch never collides with the deleted one's.
#[test]
fn delete_removes_the_worktree_and_logs_keeps_the_branch_and_never_reuses_the_id() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho \"$GZA_TASK_ID\" > \"f$GZA_TASK_ID.txt\"\necho ok\n",
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    for prompt in ["First", "Second"] {
        let id = p.add(&[prompt]);
        p.ok(&["work", &id.to_string()]);
    }
    let worktree: String = p.task_field(2, "worktree");
    let branch: String = p.task_field(2, "branch");
    let log: String = p.task_field(2, "log_file");
    assert!(std::path::Path::new(&worktree).is_dir());
    assert!(p.path(".gza/logs/2.stderr.log").is_file());
    let run = p.run(&["delete", "2", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains(&format!(
            "its branch {branch} is kept (`git branch -D {branch}`"
        )),
        "{run}"
    );
    assert!(!std::path::Path::new(&worktree).exists(), "{run}");
    assert!(!std::path::Path::new(&log).exists());
    assert!(!p.path(".gza/logs/2.stderr.log").exists());
    assert!(p.git(&["branch", "--list", &branch]).contains(&branch));

    // The newest task was deleted; the next one still gets a new id, and a branch of its own.
    let next = p.add(&["Third"]);
    assert_eq!(next, 3);
    p.ok(&["work", "3"]);
    let third: String = p.task_field(3, "branch");
    assert_ne!(third, branch);
    assert!(third.starts_with("gza/3-"), "{third}");
    // Imports too.
    p.ok(&["delete", "3", "--yes"]);
    std::fs::write(p.path("tasks.yaml"), "tasks:\n  - prompt: Imported\n").unwrap();
    p.ok(&["import", "tasks.yaml"]);
    assert_eq!(p.json(&["show", "4", "--json"])["prompt"], "Imported");

    // A worktree holding the person's uncommitted work is kept, and the note says why.
    let id = p.add(&["Fourth"]);
    p.ok(&["work", &id.to_string()]);
    let kept: String = p.task_field(id, "worktree");
    std::fs::write(std::path::Path::new(&kept).join("mine.txt"), "mine").unwrap();
    let run = p.run(&["delete", &id.to_string(), "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains(&format!(
            "its worktree {kept} is kept: uncommitted changes (mine.txt)"
        )),
        "{run}"
    );
    assert!(std::path::Path::new(&kept).join("mine.txt").is_file());
}

#[test]
fn retry_queues_a_new_task_based_on_the_old_one() {
    let p = TestProject::new();
    p.add(&[
        "flaky work",
        "--type",
        "explore",
        "--no-learnings",
        "--group",
        "g",
    ]);
    assert!(p.user_error(&["retry", "1"]).contains("is pending"));
    p.db()
        .execute(
            "UPDATE tasks SET status = 'failed', failure_reason = 'TIMEOUT' WHERE id = 1",
            [],
        )
        .unwrap();
    assert_snapshot!("retry", p.run(&["retry", "1"]).to_string());
    let t = p.json(&["show", "2", "--json"]);
    assert_eq!(t["based_on"], 1);
    assert_eq!(t["prompt"], "flaky work");
    assert_eq!(t["task_type"], "explore");
    assert_eq!(t["skip_learnings"], true);
    assert_eq!(t["group"], "g");
    assert_eq!(t["status"], "pending");
}

#[test]
fn stats_counts_and_totals() {
    let p = TestProject::new();
    for _ in 0..3 {
        p.add(&["t"]);
    }
    p.db()
        .execute_batch(
            "UPDATE tasks SET status = 'completed', cost_usd = 0.5, input_tokens = 1000, \
             output_tokens = 200, duration_seconds = 60 WHERE id IN (1, 2);",
        )
        .unwrap();
    assert_snapshot!("stats", p.run(&["stats"]).to_string());
    let s = p.json(&["stats", "--json"]);
    assert_eq!(s["total"], 3);
    assert_eq!(s["by_status"]["completed"], 2);
    assert_eq!(s["by_status"]["pending"], 1);
    assert_eq!(s["cost_usd"]["total"], 1.0);
    assert_eq!(s["cost_usd"]["mean"], 0.5);
    assert_eq!(s["tokens"]["input"], 2000);
}

// ---- bad input: a clear one-line error, and nothing already stored changes ----

#[test]
fn unknown_task_ids() {
    let p = TestProject::new();
    p.add(&["only task"]);
    let before = p.dump();
    for args in [
        vec!["show", "42"],
        vec!["edit", "42", "x"],
        vec!["delete", "42", "--yes"],
        vec!["retry", "42"],
        vec!["add", "x", "--based-on", "42"],
        vec!["add", "x", "--depends-on", "42"],
    ] {
        let err = p.user_error(&args);
        assert!(err.contains("no task with id 42"), "{args:?}: {err}");
    }
    assert_eq!(p.dump(), before);
}

#[test]
fn malformed_config_names_file_key_and_line() {
    let p = TestProject::new();
    p.add(&["stored before"]);
    let cases = [
        (
            "unknown_key",
            "provider: claude\nlearnings:\n  windw_size: 3\n",
        ),
        ("wrong_type", "max_turns: many\n"),
        ("bad_yaml", "provider: [claude\n"),
        ("half_written", "learnings:\n  enabled: tr"),
        ("bad_provider", "provider: gpt\n"),
    ];
    for (name, text) in cases {
        std::fs::write(p.path("gza.yaml"), text).unwrap();
        let err = p.user_error(&["next"]);
        assert!(err.contains("[PROJECT]/gza.yaml"), "{err}");
        assert_snapshot!(format!("config_{name}"), err);
    }
    std::fs::write(p.path("gza.yaml"), "").unwrap();
    assert!(p.ok(&["history"]).contains("stored before"));
}

#[test]
fn a_database_that_is_not_sqlite() {
    let p = TestProject::new_sqlite();
    std::fs::write(p.path(".gza/gza.db"), b"this is not a database, just some text that is long enough to fill a header page for sqlite to read it..........").unwrap();
    assert_snapshot!("not_sqlite", p.user_error(&["next"]));
    assert_snapshot!("not_sqlite_add", p.user_error(&["add", "x"]));
}

#[test]
fn a_database_from_a_newer_gza_is_refused_untouched() {
    let p = TestProject::new_sqlite();
    p.add(&["precious"]);
    rusqlite::Connection::open(p.path(".gza/gza.db"))
        .unwrap()
        .execute(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) \
             VALUES (999, 'future', '2030-01-01T00:00:00Z', '0')",
            [],
        )
        .unwrap();
    let bytes_before = std::fs::read(p.path(".gza/gza.db")).unwrap();
    let err = p.user_error(&["add", "more"]);
    assert!(err.contains("newer gza (schema version 999"), "{err}");
    assert!(err.contains("upgrade gza"), "{err}");
    let count: i64 = rusqlite::Connection::open(p.path(".gza/gza.db"))
        .unwrap()
        .query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 1);
    assert_eq!(
        std::fs::read(p.path(".gza/gza.db")).unwrap().len(),
        bytes_before.len()
    );
}

#[test]
fn read_only_state_directory() {
    let p = TestProject::new_sqlite();
    p.add(&["stored"]);
    let gza = env!("CARGO_BIN_EXE_gza");
    // A real read-only file system (root ignores permission bits): a private mount namespace
    // with .gza bind-mounted read-only.
    let script = format!(
        "mount --bind .gza .gza && mount -o remount,ro,bind .gza && \
         {gza} add 'not stored'; echo \"add=$?\"; {gza} history -n 5"
    );
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .current_dir(p.root())
        .env("NO_COLOR", "1")
        .output()
        .expect("unshare runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("add=1"), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("cannot write to") && stderr.contains("check that .gza/ is writable"),
        "{stderr}"
    );
    assert!(
        stdout.contains("stored"),
        "reads still work on a read-only .gza/: {stdout}"
    );
    assert_eq!(p.json(&["history", "--json"]).as_array().unwrap().len(), 1);
}

#[test]
fn prompt_input_errors() {
    let p = TestProject::new();
    p.add(&["existing"]);
    let before = p.dump();
    assert_snapshot!(
        "prompt_file_missing",
        p.user_error(&["add", "--prompt-file", "nope.md"])
    );
    assert_snapshot!("prompt_empty", p.user_error(&["add", "   "]));
    assert_snapshot!("prompt_none", p.user_error(&["add"]));
    std::fs::write(p.path("nul.md"), b"hello\0world").unwrap();
    assert_snapshot!(
        "prompt_nul",
        p.user_error(&["add", "--prompt-file", "nul.md"])
    );
    std::fs::write(p.path("latin1.md"), b"caf\xe9 au lait").unwrap();
    assert_snapshot!(
        "prompt_not_utf8",
        p.user_error(&["add", "--prompt-file", "latin1.md"])
    );
    assert!(
        p.user_error(&["add", "x", "--spec", "missing.md"])
            .contains("spec file missing.md does not exist")
    );
    assert_eq!(p.dump(), before);
}

#[test]
fn a_one_megabyte_prompt_is_stored_faithfully() {
    let p = TestProject::new();
    let big: String = (0..1_048_576)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let big = format!("{big}\nünïcödé ✓ last line");
    std::fs::write(p.path("big.md"), &big).unwrap();
    p.add(&["--prompt-file", "big.md"]);
    let stored: String = p
        .db()
        .query_row("SELECT prompt FROM tasks WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, big);
    // List views stay one short line per task.
    let history = p.ok(&["history"]);
    assert!(
        history.lines().all(|l| l.chars().count() <= 100),
        "{history}"
    );
}

#[test]
fn dependency_cycles_are_refused() {
    let p = TestProject::new();
    p.add(&["a"]);
    p.add(&["b", "--depends-on", "1"]);
    p.add(&["c", "--depends-on", "2"]);
    let before = p.dump();
    assert_snapshot!("cycle", p.user_error(&["edit", "1", "--depends-on", "3"]));
    assert!(
        p.user_error(&["edit", "1", "--depends-on", "1"])
            .contains("cannot refer to itself")
    );
    assert_eq!(p.dump(), before);
}

#[test]
fn bad_arguments_exit_2() {
    let p = TestProject::new();
    assert_eq!(p.run(&["add", "x", "--type", "bogus"]).code, 2);
    assert_eq!(p.run(&["show", "abc"]).code, 2);
    assert_eq!(p.run(&["frobnicate"]).code, 2);
}

/// A prompt file is read only when it is a regular file, and never past the prompt's limit:
/// `/dev/urandom` (17 GB of memory in 20 s) and a huge file are refused in one line, in small
/// memory; a spec too large to send is refused when it is added, not when the task runs.
#[test]
fn prompt_and_spec_files_are_bounded() {
    let p = TestProject::new();
    p.add(&["existing"]);
    let before = p.dump();
    let err = p.user_error(&["add", "--prompt-file", "/dev/urandom"]);
    assert!(
        err.contains("prompt file /dev/urandom is a device, not a regular file"),
        "{err}"
    );
    // Sparse: 200 MB that take no disk.
    let big = std::fs::File::create(p.path("big.md")).unwrap();
    big.set_len(200 * 1024 * 1024).unwrap();
    let (code, _, stderr, peak_kib) = p.run_measuring_rss(&["add", "--prompt-file", "big.md"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("prompt file big.md is 209715200 bytes; the limit is 16777216"),
        "{stderr}"
    );
    assert!(peak_kib < 100 * 1024, "read the file: {peak_kib} KiB");
    assert!(
        p.user_error(&["edit", "1", "--prompt-file", "big.md"])
            .contains("prompt file big.md is 209715200 bytes")
    );
    let spec = std::fs::File::create(p.path("spec.md")).unwrap();
    spec.set_len(3 * 1024 * 1024).unwrap();
    let err = p.user_error(&["add", "x", "--spec", "spec.md"]);
    assert!(
        err.contains(
            "spec file spec.md is 3145728 bytes; gza sends spec files of at most 1048576 bytes"
        ),
        "{err}"
    );
    assert_eq!(p.dump(), before);
}
