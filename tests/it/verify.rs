//! `gza verify` and the gate before `gza merge`: the result stored per branch and commit, shown
//! in `show` and `history`, stale once the branch moves; merge refusing a failed or stale verify
//! unless `--force`; the command trusted like any other, sandboxed like the agent, redacted and
//! bounded in time.

use insta::assert_snapshot;

use crate::support::project::{Run, TestProject};

/// An agent that writes hello.txt.
const AGENT: &str = "cat > /dev/null; echo hello > hello.txt; echo 'Added hello.txt'\n";

/// The check: fixed.txt must be there.
const CHECK: &str = r#"verify: "test -f fixed.txt || { echo 'FAIL: fixed.txt is missing'; exit 3; }"
"#;

fn project(extra: &str) -> TestProject {
    let p = TestProject::in_git_repo();
    p.command_agent(AGENT, extra);
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    p
}

fn stable(p: &TestProject, run: &Run) -> String {
    let mut text = run.to_string();
    for line in p.git(&["rev-list", "--all"]).lines() {
        text = text
            .replace(line, "[COMMIT]")
            .replace(&line[..10], "[COMMIT]");
    }
    let secs = regex::Regex::new(r"\b\d+(m \d+)?s\b").unwrap();
    secs.replace_all(&text, "[SECS]").into_owned()
}

/// Commit `file` on task `id`'s branch, in its worktree.
fn commit_on_branch(p: &TestProject, id: i64, file: &str) {
    let worktree: String = p.task_field(id, "worktree");
    let dir = std::path::Path::new(&worktree);
    std::fs::write(dir.join(file), "fixed\n").unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=T", "-c", "user.email=t@localhost"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["add", file]);
    git(&["commit", "--quiet", "-m", "fix"]);
}

#[test]
fn merge_refuses_a_failed_or_stale_verify_until_it_passes_or_is_forced() {
    let p = project(CHECK);
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);

    let failed = p.run(&["verify", "1"]);
    assert_eq!(failed.code, 1, "{failed}");
    assert_snapshot!("verify_failed", stable(&p, &failed));
    let refused = p.user_error(&["merge", "1"]);
    assert!(
        refused.contains("the verify of gza/1-add-a-hello-file failed (exit 3) at ")
            && refused.contains("or merge anyway with --force"),
        "{refused}"
    );
    assert!(!p.path("hello.txt").exists(), "nothing merged");
    let show = p.ok(&["show", "1"]);
    assert!(
        show.contains("Verify:         failed (exit 3) at "),
        "{show}"
    );
    assert!(
        show.contains(
            "Verify output (the end):\n------------------------------------------------\n"
        ) || show.contains("Verify output (the end):\n"),
        "{show}"
    );
    assert!(show.contains("FAIL: fixed.txt is missing"), "{show}");
    assert!(
        p.ok(&["history"]).contains("completed (verify failed)"),
        "{}",
        p.ok(&["history"])
    );

    // The branch moves: the failed run is stale, and still refused.
    commit_on_branch(&p, 1, "fixed.txt");
    let stale = p.user_error(&["merge", "1"]);
    assert!(
        stale.contains("gza/1-add-a-hello-file moved since its verify failed (exit 3) at ")
            && stale.contains("run `gza verify 1` on its tip"),
        "{stale}"
    );
    assert!(p.ok(&["history"]).contains("completed (verify stale)"));
    assert!(
        p.ok(&["show", "1"])
            .contains("Verify:         stale: failed (exit 3) at ")
    );

    // Verified at the tip, it merges.
    let passed = p.run(&["verify", "1"]);
    assert_eq!(passed.code, 0, "{passed}");
    assert_snapshot!("verify_passed", stable(&p, &passed));
    assert!(p.ok(&["history"]).contains("completed (verified)"));
    p.ok(&["merge", "1"]);
    assert_eq!(
        std::fs::read_to_string(p.path("fixed.txt")).unwrap(),
        "fixed\n"
    );
    let runs: i64 = p
        .db()
        .query_row(
            "SELECT COUNT(*) FROM verifications WHERE task_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(runs, 2);

    // --force merges over a failed verify.
    p.add(&["Add another hello file"]);
    p.ok(&["work"]);
    assert_eq!(p.run(&["verify", "2"]).code, 0, "fixed.txt is on main now");
    commit_on_branch(&p, 2, "more.txt");
    p.user_error(&["merge", "2"]);
    let forced = p.run(&["merge", "2", "--force"]);
    assert_eq!(forced.code, 0, "{forced}");
    assert!(p.path("more.txt").exists());
}

#[test]
fn verify_needs_a_command_and_a_finished_branch() {
    let p = project("");
    p.add(&["Add a hello file"]);
    let none = p.user_error(&["verify", "1"]);
    assert!(
        none.contains("no verify command: set `verify:` in gza.yaml"),
        "{none}"
    );
    std::fs::write(p.path("gza.local.yaml"), "verify: \"true\"\n").unwrap();
    let pending = p.user_error(&["verify", "1"]);
    assert!(pending.contains("task 1 has not run yet"), "{pending}");
    assert!(p.user_error(&["verify", "99"]).contains("99"));
    p.ok(&["work"]);
    // A review's id verifies the branch it reviews.
    p.ok(&["review", "1"]);
    assert_eq!(p.run(&["verify", "2"]).code, 0);
    let task: i64 = p
        .db()
        .query_row("SELECT task_id FROM verifications", [], |r| r.get(0))
        .unwrap();
    assert_eq!(task, 1);
}

#[test]
fn a_cloned_verify_command_runs_nothing_until_trusted() {
    let p = project("");
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    let marker = p.scratch().join("ran");
    let yaml = format!(
        "{}verify: \"touch {}\"\n",
        std::fs::read_to_string(p.path("gza.yaml")).unwrap(),
        marker.display()
    );
    p.config_untrusted(&yaml);
    let run = p.run(&["verify", "1"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(
            "gza.yaml sets verify, which gza ignores until you trust it: `gza trust` shows it"
        ),
        "{run}"
    );
    assert!(!marker.exists(), "the untrusted command ran");
    let trust = p.ok(&["trust", "--yes"]);
    assert!(trust.contains("verify"), "{trust}");
    assert_eq!(p.run(&["verify", "1"]).code, 0);
    assert!(marker.exists());
}

#[test]
fn the_output_is_redacted_and_a_command_that_hangs_is_ended() {
    let token = format!("ghp_{}", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa98");
    let verify = format!(
        "verify: \"echo GITHUB_TOKEN={token}; sleep 30 & sleep 30\"\nverify_timeout_minutes: 0.03\n"
    );
    let p = project(&verify);
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    let started = std::time::Instant::now();
    let run = p.run(&["verify", "1"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    assert!(run.stdout.contains("✗ verify timed out on gza/1-"), "{run}");
    assert!(!run.stdout.contains(&token), "{run}");
    let (tail, log): (String, String) = p
        .db()
        .query_row("SELECT output_tail, log_file FROM verifications", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(
        tail.contains("GITHUB_TOKEN=") && !tail.contains(&token),
        "{tail}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("GITHUB_TOKEN=") && !logged.contains(&token),
        "{logged}"
    );
    assert!(!p.ok(&["show", "1"]).contains(&token));
}

#[test]
fn a_command_that_changes_tracked_files_fails() {
    let p = project("verify: \"echo changed > hello.txt\"\n");
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    let run = p.run(&["verify", "1"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains(
            "gza: the command changed tracked files (hello.txt); a check must pass on the commit as it is"
        ),
        "{run}"
    );
}

#[test]
fn a_sandboxed_verify_sees_the_worktree_and_no_more() {
    // In bubblewrap, as the agent would: the worktree, not the database or HOME's files, and
    // only the variables an agent of the command provider gets.
    let check = r#"verify: "test -f hello.txt && test ! -e \"$GZA_PROJECT_ROOT/.gza/gza.db\" && test ! -e \"$HOME/secret.txt\" && test -z \"$HOST_SECRET\" && echo confined"
"#;
    let yaml = |sandbox: &str| {
        format!(
            "provider: command\nsandbox: {sandbox}\nproviders:\n  command:\n    command: [sh, -c, {}]\n{check}",
            serde_json::to_string(AGENT).unwrap()
        )
    };
    let mut p = TestProject::in_git_repo();
    p.config(&yaml("bwrap"));
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    std::fs::write(p.home().join("secret.txt"), "secret\n").unwrap();
    p.set_env("HOST_SECRET", "hunter2-but-longer");
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    let run = p.run(&["verify", "1"]);
    assert_eq!(run.code, 0, "{run}");
    let tail: String = p
        .db()
        .query_row("SELECT output_tail FROM verifications", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tail, "confined");

    // Without the sandbox the same check sees the host: the test can fail.
    p.config(&yaml("none"));
    let run = p.run(&["verify", "1"]);
    assert_eq!(run.code, 1, "{run}");
}

#[test]
fn clean_removes_the_verify_outputs_with_the_task_log() {
    let p = project("verify: \"echo checked\"\n");
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    p.ok(&["verify", "1"]);
    let log: String = p
        .db()
        .query_row("SELECT log_file FROM verifications", [], |r| r.get(0))
        .unwrap();
    assert!(std::path::Path::new(&log).exists());
    p.ok(&["clean", "--all"]);
    assert!(!std::path::Path::new(&log).exists(), "{log}");
    // The end of the output stays in the database.
    assert!(p.ok(&["show", "1"]).contains("Verify:         passed at"));
}
