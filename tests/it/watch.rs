//! `gza watch` through the binary, with scripted agents: the whole loop from a queued task to its
//! merge; Ctrl-C and a second watch; a failing provider paused; a task failing the same way
//! twice stopped; a dirty checkout and a moved base.

use insta::assert_snapshot;

use crate::support::project::{Run, TestProject, wait_until};

/// An agent that implements (writes hello.txt), improves (writes fixed.txt) and reviews: the
/// review approves only when fixed.txt is in its checkout (so: CHANGES_REQUESTED once, then
/// APPROVED). Each prompt is saved to `prompt-<task id>.txt` in the scratch directory. While
/// `block` exists in the scratch directory, implementing waits (after touching `started`).
const LOOP_AGENT: &str = r#"prompt=$(cat)
printf '%s' "$prompt" > "$SCRATCH/prompt-$GZA_TASK_ID.txt"
case "$prompt" in
  "Complete this task: Review task"*)
    if [ -f fixed.txt ]; then
      printf '## Summary\nfixed.txt is there.\n\n## Verdict\n\nAPPROVED\n'
    else
      printf '## Summary\nNo fixed.txt.\n\n## Blockers\n- B1: add fixed.txt\n\n## Verdict\n\n**CHANGES_REQUESTED**\n'
    fi ;;
  "Complete this task: Improve task"*)
    echo fixed > fixed.txt
    echo 'Added fixed.txt as the review asked' ;;
  *)
    if [ -f "$SCRATCH/block" ]; then touch "$SCRATCH/started"; sleep 60; fi
    echo hello > hello.txt
    echo 'Added hello.txt' ;;
esac
"#;

/// The checks: pass once fixed.txt is there; each run is counted in `verify-runs`.
const VERIFY: &str = r#"echo run >> "$HOME/verify-runs"; test -f hello.txt || exit 2; test -f fixed.txt || { echo "FAIL: fixed.txt is missing"; exit 1; }; echo all good"#;

/// A project whose command agent is `script` (with `$SCRATCH` set to the scratch directory), and
/// `extra` settings; gza.yaml committed.
fn project_with(script: &str, extra: &str) -> TestProject {
    let p = TestProject::in_git_repo();
    let script = format!(
        "SCRATCH={}\n{script}",
        serde_json::to_string(&p.scratch().to_string_lossy()).unwrap()
    );
    p.command_agent(&script, extra);
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    p
}

fn verify_setting() -> String {
    format!(
        "verify: {}\nwatch:\n  backoff_seconds: 1\n",
        serde_json::to_string(VERIFY).unwrap()
    )
}

fn prompt_of(p: &TestProject, id: i64) -> String {
    std::fs::read_to_string(p.scratch().join(format!("prompt-{id}.txt"))).unwrap()
}

/// What a person sees, with commits, durations and times made stable.
fn shown(p: &TestProject, run: &Run) -> String {
    let mut text = run.to_string();
    for line in p.git(&["rev-list", "--all"]).lines() {
        text = text
            .replace(line, "[COMMIT]")
            .replace(&line[..10], "[COMMIT]");
    }
    let secs = regex::Regex::new(r"\b\d+(m \d+)?s\b").unwrap();
    secs.replace_all(&text, "[SECS]").into_owned()
}

/// Nothing half-done: no task pending or running, no merge or rebase in progress, and the
/// checkout clean.
fn assert_settled(p: &TestProject) {
    let unfinished: i64 = p
        .db()
        .query_row(
            "SELECT COUNT(*) FROM tasks WHERE status IN ('pending', 'in_progress')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unfinished, 0, "{}", p.dump());
    assert!(!p.path(".git/MERGE_HEAD").exists());
    assert!(!p.path(".git/rebase-merge").exists());
    assert_eq!(
        p.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
}

fn verify_runs(p: &TestProject) -> Vec<(String, String)> {
    let db = p.db();
    let mut stmt = db
        .prepare("SELECT status, commit_sha FROM verifications ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_loop_implements_reviews_improves_verifies_and_merges() {
    let p = project_with(LOOP_AGENT, &verify_setting());
    p.add(&["Add a hello file"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 0, "{run}");
    assert_snapshot!("watch_loop", shown(&p, &run));

    // Landed on main, with both commits; the branch and its worktree are gone.
    assert_eq!(p.git(&["show", "main:hello.txt"]), "hello\n");
    assert_eq!(p.git(&["show", "main:fixed.txt"]), "fixed\n");
    let branch: String = p.task_field(1, "branch");
    assert!(p.git(&["branch", "--list", &branch]).is_empty());
    assert_eq!(p.task_field::<String>(1, "merged_into"), "main");
    assert_settled(&p);

    // The reviews: changes requested once, then approved; one improve round.
    let types: Vec<(String, Option<String>)> = {
        let db = p.db();
        let mut stmt = db
            .prepare("SELECT task_type, review_verdict FROM tasks ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let want = [
        ("implement", None),
        ("review", Some("CHANGES_REQUESTED")),
        ("improve", None),
        ("review", Some("APPROVED")),
    ];
    assert_eq!(
        types,
        want.map(|(t, v)| (t.to_string(), v.map(str::to_string)))
    );

    // The verify failed once (before the first review), then passed on the improved branch,
    // and what merged is the commit that passed.
    let runs = verify_runs(&p);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0].0, "failed");
    assert_eq!(runs[1].0, "passed");
    assert_eq!(p.git(&["rev-parse", "main"]).trim(), runs[1].1);

    // Each reviewer was told what the checks said of the commit it reviewed, and the improve
    // task was given the failure.
    let first_review = prompt_of(&p, 2);
    assert!(
        first_review.contains("### The project's checks")
            && first_review.contains("failed (exit 1) on this commit")
            && first_review.contains("FAIL: fixed.txt is missing"),
        "{first_review}"
    );
    let improve = prompt_of(&p, 3);
    assert!(
        improve.contains("## The project's checks fail") && improve.contains("- B1: add fixed.txt"),
        "{improve}"
    );
    let second_review = prompt_of(&p, 4);
    assert!(
        second_review.contains("passed on this commit"),
        "{second_review}"
    );

    // show and history say what the gate said.
    let show = p.ok(&["show", "1"]);
    assert!(show.contains("Verify:         passed at"), "{show}");
    let again = p.run(&["watch"]);
    assert_eq!(again.code, 0, "{again}");
    assert!(
        again
            .stdout
            .contains("watching 0 open branches and 0 tasks ready to run"),
        "{again}"
    );
    assert!(again.stdout.contains("0 tasks run"), "{again}");
}

#[test]
fn ctrl_c_leaves_tasks_that_the_next_watch_finishes() {
    let p = project_with(LOOP_AGENT, &verify_setting());
    std::fs::write(p.scratch().join("block"), "").unwrap();
    p.add(&["Add a hello file"]);
    let watch = p.spawn(&["watch"]);
    wait_until(60, "the agent to start", || {
        p.scratch().join("started").exists()
    });
    unsafe { libc::kill(watch.id() as i32, libc::SIGINT) };
    let run = p.finish(watch.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run}");
    assert!(
        run.stdout
            .contains("task 1 was stopped; task 2 continues it at the next gza watch"),
        "{run}"
    );
    assert!(run.stdout.contains("stopped; `gza watch` resumes"), "{run}");
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "KILLED");
    assert_eq!(p.task_field::<String>(2, "status"), "pending");
    let running: i64 = p
        .db()
        .query_row(
            "SELECT COUNT(*) FROM tasks WHERE status = 'in_progress'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(running, 0);

    std::fs::remove_file(p.scratch().join("block")).unwrap();
    let second = p.run(&["watch"]);
    assert_eq!(second.code, 0, "{second}");
    assert!(
        second
            .stdout
            .contains("watching 0 open branches and 1 task ready to run"),
        "{second}"
    );
    assert_eq!(p.git(&["show", "main:hello.txt"]), "hello\n");
    assert_eq!(p.git(&["show", "main:fixed.txt"]), "fixed\n");
    assert_eq!(p.task_field::<String>(2, "merged_into"), "main");
    // The killed task is not retried again: its continuation carried it.
    assert!(!second.stdout.contains("task 1 failed"), "{second}");
    assert_settled(&p);
}

/// An agent whose first run fails as an overloaded API would (exit 1, no result), then works;
/// its reviews approve.
const FLAKY_AGENT: &str = r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*)
    printf '## Verdict\n\nAPPROVED\n' ;;
  *)
    if [ ! -f "$SCRATCH/failed-once" ]; then
      touch "$SCRATCH/failed-once"
      echo 'API Error: 529 overloaded' >&2
      exit 1
    fi
    echo hello > hello.txt
    echo 'Added hello.txt' ;;
esac
"#;

#[test]
fn a_failing_provider_is_paused_and_its_task_run_again() {
    let p = project_with(FLAKY_AGENT, "watch:\n  backoff_seconds: 2\n");
    p.add(&["Add a hello file"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains(
            "! pausing command tasks for 2 s: task 1 failed with AGENT_EXIT\n\
             → task 1 failed with AGENT_EXIT: task 2 runs it again\n… waiting "
        ),
        "{run}"
    );
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "AGENT_EXIT");
    assert_eq!(p.task_field::<i64>(2, "based_on"), 1);
    // The retry started only once the pause was over.
    let failed_at: String = p.task_field(1, "completed_at");
    let retried_at: String = p.task_field(2, "started_at");
    let secs = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap().timestamp();
    assert!(
        secs(&retried_at) - secs(&failed_at) >= 2,
        "{failed_at} → {retried_at}"
    );
    assert_eq!(p.task_field::<String>(2, "merged_into"), "main");
    assert_settled(&p);
}

/// An agent that fails every task whose prompt says "doomed", and does the rest.
const DOOMED_AGENT: &str = r#"prompt=$(cat)
case "$prompt" in
  *doomed*) echo 'cannot do this' >&2; exit 3 ;;
  "Complete this task: Review task"*) printf '## Verdict\n\nAPPROVED\n' ;;
  *) echo "$GZA_TASK_ID" > "done-$GZA_TASK_ID.txt"; echo done ;;
esac
"#;

#[test]
fn a_task_failing_the_same_way_twice_is_stopped_and_the_rest_lands() {
    let p = project_with(DOOMED_AGENT, "watch:\n  backoff_seconds: 0\n");
    p.add(&["A doomed task"]);
    p.add(&["A fine task"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 1, "{run}");
    // Task 1 failed, was retried as 3, failed the same way, and was left; task 2 landed.
    assert_eq!(p.task_field::<String>(3, "status"), "failed");
    assert_eq!(p.task_field::<i64>(3, "based_on"), 1);
    let tasks: i64 = p
        .db()
        .query_row("SELECT COUNT(*) FROM tasks WHERE based_on = 3", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(tasks, 0, "no third attempt");
    assert!(
        run.stdout.contains(
            "  needs you: task 3: task 3 failed the same way twice in a row (AGENT_EXIT, as task 1 did); see `gza log 3`, then `gza retry 3`\n"
        ),
        "{run}"
    );
    assert_eq!(p.task_field::<String>(2, "merged_into"), "main");
    assert!(p.path("done-2.txt").exists());
    assert_settled(&p);
}

/// An agent whose reviews always approve.
const APPROVING_AGENT: &str = r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*) printf '## Verdict\n\nAPPROVED\n' ;;
  *) echo hello > hello.txt; echo 'Added hello.txt' ;;
esac
"#;

#[test]
fn a_dirty_checkout_is_never_merged_over() {
    let p = project_with(APPROVING_AGENT, "");
    p.add(&["Add a hello file"]);
    std::fs::write(p.path("README.md"), "# my own edit, not committed\n").unwrap();
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains(
            "! needs you: task 1: approved, but the checkout has uncommitted changes (README.md); watch never merges over them: commit or stash them, then run gza watch again"
        ),
        "{run}"
    );
    assert_eq!(p.task_field::<Option<String>>(1, "merged_at"), None);
    assert!(!p.path("hello.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.path("README.md")).unwrap(),
        "# my own edit, not committed\n"
    );

    // Once the person has put the edit away, the next watch lands it.
    p.git(&["stash", "--quiet"]);
    let again = p.run(&["watch"]);
    assert_eq!(again.code, 0, "{again}");
    assert!(again.stdout.contains("✓ merged gza/1-"), "{again}");
    assert_eq!(p.git(&["show", "main:hello.txt"]), "hello\n");
}

#[test]
fn a_base_that_moved_is_rebased_onto_and_verified_again_before_the_merge() {
    let verify = r#"verify: "echo run >> \"$HOME/verify-runs\"; test -f hello.txt"
"#;
    let p = project_with(APPROVING_AGENT, verify);
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    // Someone commits to main meanwhile.
    std::fs::write(p.path("other.txt"), "other\n").unwrap();
    p.git(&["add", "other.txt"]);
    p.git(&["commit", "--quiet", "-m", "meanwhile on main"]);
    let moved_to = p.git(&["rev-parse", "main"]).trim().to_string();

    let run = p.run(&["watch"]);
    assert_eq!(run.code, 0, "{run}");
    assert_snapshot!("watch_moved_base", shown(&p, &run));
    // Verified before the review, then again on the rebased branch, which is what landed.
    let runs = verify_runs(&p);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|(status, _)| status == "passed"));
    let main = p.git(&["rev-parse", "main"]).trim().to_string();
    assert_eq!(main, runs[1].1);
    assert!(p.git_ok(&["merge-base", "--is-ancestor", &moved_to, &main]));
    assert_eq!(p.git(&["show", "main:other.txt"]), "other\n");
    assert_eq!(p.git(&["show", "main:hello.txt"]), "hello\n");
    assert_settled(&p);
}

#[test]
fn the_checkout_on_another_branch_is_not_merged_into() {
    let p = project_with(APPROVING_AGENT, "");
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    p.git(&["switch", "--quiet", "-c", "elsewhere"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains(
            "approved, but the checkout is on branch elsewhere, not main, which task 1 started from; `git switch main`, then run gza watch again"
        ),
        "{run}"
    );
    assert!(!p.git_ok(&["show", "elsewhere:hello.txt"]));
    assert!(!p.git_ok(&["show", "main:hello.txt"]));
}

#[test]
fn watch_is_scoped_by_group_and_refuses_an_unknown_one() {
    let p = project_with(APPROVING_AGENT, "");
    p.add(&["Add a hello file", "--group", "night"]);
    p.add(&["Not tonight"]);
    let err = p.user_error(&["watch", "--group", "nigth"]);
    assert!(err.contains("no task is in group `nigth`"), "{err}");
    let run = p.run(&["watch", "--group", "night"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(p.task_field::<String>(1, "merged_into"), "main");
    // The review watch queued joined the group; the other task was left alone.
    assert_eq!(p.task_field::<String>(3, "group_name"), "night");
    assert_eq!(p.task_field::<String>(2, "status"), "pending");
}

#[test]
fn watch_is_scoped_by_tag_and_refuses_an_unknown_one() {
    let p = project_with(APPROVING_AGENT, "");
    p.add(&["Add a hello file", "--tag", "night"]);
    p.add(&["Not tonight", "--tag", "day"]);
    p.add(&["Nor this one"]);
    let err = p.user_error(&["watch", "--tag", "nigth"]);
    assert!(err.contains("no task has tag `nigth`"), "{err}");
    let run = p.run(&["watch", "--tag", "night"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(p.task_field::<String>(1, "merged_into"), "main");
    // The review watch queued carries the tag, so it was in scope and ran; the others were
    // left alone.
    assert_eq!(p.task_field::<String>(4, "task_type"), "review");
    assert_eq!(p.task_field::<String>(4, "status"), "completed");
    let night: Vec<i64> = p
        .json(&["history", "--tag", "night", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(night, vec![4, 1]);
    assert_eq!(p.task_field::<String>(2, "status"), "pending");
    assert_eq!(p.task_field::<String>(3, "status"), "pending");
}

#[test]
fn rounds_are_capped_and_the_branch_left_for_a_person() {
    // Reviews never approve.
    let agent = r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*) printf '## Verdict\n\nCHANGES_REQUESTED\n' ;;
  *) echo "$GZA_TASK_ID" >> work.txt; echo 'did something' ;;
esac
"#;
    let p = project_with(agent, "watch:\n  max_rounds: 1\n");
    p.add(&["Add a hello file"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 1, "{run}");
    // implement 1, review 2, improve 3, review 4; then it stops.
    assert!(
        run.stdout.contains(
            "  needs you: task 1: review task 4 still requests changes after 1 improve round (watch.max_rounds)"
        ),
        "{run}"
    );
    let count: i64 = p
        .db()
        .query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 4);
    assert_eq!(p.task_field::<Option<String>>(1, "merged_at"), None);
}

#[test]
fn a_branch_merged_outside_gza_is_recorded_and_left_alone() {
    let p = project_with(APPROVING_AGENT, "");
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    let branch: String = p.task_field(1, "branch");
    p.git(&["merge", "--quiet", "--no-edit", &branch]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains(&format!(
            "✓ {branch} (task 1) is already in main: merged outside gza; recorded"
        )),
        "{run}"
    );
    assert_eq!(p.task_field::<String>(1, "merged_into"), "main");
    let tasks: i64 = p
        .db()
        .query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tasks, 1, "no review was queued");
}

#[test]
fn gza_work_says_what_to_do_next() {
    let p = project_with(LOOP_AGENT, "");
    p.add(&["Add a hello file"]);
    let work = p.ok(&["work"]);
    assert!(
        work.ends_with(
            "next for task 1: `gza review 1` queues a review of gza/1-add-a-hello-file; `gza merge 1` merges it into main\n"
        ),
        "{work}"
    );
    p.ok(&["review", "1"]);
    let review = p.ok(&["work"]);
    assert!(
        review.ends_with("next for task 2: `gza improve 2` queues a fix for its findings\n"),
        "{review}"
    );
    p.ok(&["improve", "2"]);
    let improve = p.ok(&["work"]);
    assert!(
        improve
            .contains("next for task 3: `gza review 3` queues a review of gza/1-add-a-hello-file"),
        "{improve}"
    );
    p.ok(&["review", "3"]);
    let approved = p.ok(&["work"]);
    assert!(
        approved.ends_with("next for task 4: `gza merge 3` merges the approved branch\n"),
        "{approved}"
    );
    // A failure: where to look, and how to run it again.
    p.command_agent("exit 4\n", "");
    p.add(&["Fail"]);
    let failed = p.run(&["work"]);
    assert_eq!(failed.code, 1, "{failed}");
    assert!(
        failed.stdout.ends_with(
            "next for task 5: `gza log 5` shows what happened; `gza retry 5` runs it again\n"
        ),
        "{failed}"
    );
    // --quiet prints the summary only.
    p.add(&["Fail again"]);
    let quiet = p.run(&["work", "--quiet"]);
    assert!(!quiet.stdout.contains("next for"), "{quiet}");
}

#[test]
fn land_pr_opens_a_pull_request_instead_of_merging() {
    let mut p = project_with(APPROVING_AGENT, "watch:\n  land: pr\n");
    let remote = p.scratch().join("origin.git");
    p.git(&["init", "--quiet", "--bare", remote.to_str().unwrap()]);
    p.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    // A scripted `gh`, first on PATH.
    let bin = p.scratch().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        "#!/bin/sh\ncase \"$1 $2\" in\n  \"auth status\") exit 0 ;;\n  \"pr create\") cat > /dev/null; echo https://github.com/acme/proj/pull/9 ;;\n  *) exit 1 ;;\nesac\n",
    )
    .unwrap();
    std::fs::set_permissions(&gh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    p.set_env("PATH", &path);
    p.add(&["Add a hello file"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains("✓ opened a pull request for task 1: https://github.com/acme/proj/pull/9"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("0 branches merged, 1 pull request opened"),
        "{run}"
    );
    assert_eq!(
        p.task_field::<String>(1, "pr_url"),
        "https://github.com/acme/proj/pull/9"
    );
    assert_eq!(p.task_field::<Option<String>>(1, "merged_at"), None);
    let branch: String = p.task_field(1, "branch");
    assert!(p.git_ok(&["--git-dir", remote.to_str().unwrap(), "rev-parse", &branch]));
    assert!(!p.git_ok(&["show", "main:hello.txt"]));
    // The next watch leaves the branch to its pull request.
    let again = p.run(&["watch"]);
    assert!(again.stdout.contains("watching 0 open branches"), "{again}");
}

/// The checkout's own in-tree hooks, as husky sets them up: a committed `.husky/post-merge`
/// that touches `mark`, and `core.hooksPath: .husky`.
fn commit_husky_post_merge(p: &TestProject, mark: &std::path::Path) {
    std::fs::create_dir_all(p.path(".husky")).unwrap();
    std::fs::write(
        p.path(".husky/post-merge"),
        format!("#!/bin/sh\ntouch {}\n", mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        p.path(".husky/post-merge"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "husky hooks"]);
    p.git(&["config", "core.hooksPath", ".husky"]);
}

/// An agent that rewrites the checkout's own hooks (`core.hooksPath: .husky`): watch never
/// merges that unattended (git would run the new hooks on this machine during and after the
/// merge); `gza merge` by the person merges with hooks off and says so.
#[test]
fn a_branch_that_rewrites_the_checkouts_hooks_is_not_merged_under_them() {
    let marks = tempfile::tempdir().unwrap();
    let planted = marks.path().join("planted-ran");
    let own = marks.path().join("own-hook-ran");
    let agent = format!(
        r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*) printf '## Verdict\n\nAPPROVED\n' ;;
  *) printf '#!/bin/sh\ntouch {}\n' > .husky/post-merge; echo hello > hello.txt; echo 'Tidied the hooks' ;;
esac
"#,
        planted.display()
    );
    let p = project_with(&agent, "");
    commit_husky_post_merge(&p, &own);
    p.add(&["Tidy the hooks"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains("changes the git hooks this checkout runs (.husky/post-merge), so it is not merged unattended"),
        "{run}"
    );
    assert_eq!(p.task_field::<Option<String>>(1, "merged_at"), None);
    assert!(!planted.exists(), "the agent's hook ran");
    // The person merges it by hand: merged, hooks off, and told so.
    let merged = p.run(&["merge", "1"]);
    assert_eq!(merged.code, 0, "{merged}");
    assert!(
        merged.stderr.contains("changes the git hooks this checkout runs (.husky/post-merge); the merge ran without hooks"),
        "{merged}"
    );
    assert!(p.path("hello.txt").exists());
    assert!(!planted.exists(), "the agent's hook ran at the merge");
    assert!(!own.exists(), "no hook runs for that merge");
}

/// A branch that rewrites what the checkout's hook manager runs (lefthook.yml here; the list is
/// `git::HOOK_MANAGER_FILES`) is not merged unattended when the checkout has a hook installed:
/// the person's next commit would run the agent's command on this machine (hostile review 14).
/// `gza merge` by the person merges it with hooks off and names the file.
#[test]
fn a_branch_that_rewrites_the_hook_managers_config_is_not_merged_unattended() {
    let marks = tempfile::tempdir().unwrap();
    let planted = marks.path().join("planted-ran");
    let agent = format!(
        r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*) printf '## Verdict\n\nAPPROVED\n' ;;
  *) printf 'pre-commit:\n  commands:\n    tidy:\n      run: touch {}\n' > lefthook.yml; echo hello > hello.txt; echo 'Tidied the lint setup' ;;
esac
"#,
        planted.display()
    );
    let p = project_with(&agent, "");
    std::fs::write(
        p.path("lefthook.yml"),
        "pre-commit:\n  commands:\n    fmt:\n      run: cargo fmt --check\n",
    )
    .unwrap();
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "lefthook"]);
    // lefthook's stub, as `lefthook install` writes it (it runs what lefthook.yml says).
    let stub = p.path(".git/hooks/pre-commit");
    std::fs::write(&stub, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.add(&["Tidy the lint setup"]);
    let run = p.run(&["watch"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains("changes the git hooks this checkout runs (lefthook.yml), so it is not merged unattended"),
        "{run}"
    );
    assert_eq!(p.task_field::<Option<String>>(1, "merged_at"), None);
    let merged = p.run(&["merge", "1"]);
    assert_eq!(merged.code, 0, "{merged}");
    assert!(
        merged.stderr.contains(
            "changes the git hooks this checkout runs (lefthook.yml); the merge ran without hooks"
        ),
        "{merged}"
    );
    assert!(p.path("hello.txt").exists());
    assert!(!planted.exists());
}

/// No git hook runs at a merge gza makes, even one the branch did not touch: a hook may run
/// whatever the branch changed. Husky 9's layout (`core.hooksPath: .husky/_`, whose stubs run
/// the scripts one folder up, outside the hooks folder) with an agent that rewrites
/// `.husky/post-merge`: neither its script nor the person's runs, at `gza merge` or a squash
/// merge's commit, and the person is told which of their hooks did not run.
#[test]
fn no_git_hook_runs_at_a_merge_and_the_person_is_told() {
    let marks = tempfile::tempdir().unwrap();
    let planted = marks.path().join("planted-ran");
    let own = marks.path().join("own-hook-ran");
    for squash in [false, true] {
        let agent = format!(
            r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*) printf '## Verdict\n\nAPPROVED\n' ;;
  *) printf '#!/bin/sh\ntouch {}\n' > .husky/post-merge; printf '#!/bin/sh\ntouch {}\n' > .husky/post-commit; echo hello > hello.txt; echo 'Added hello' ;;
esac
"#,
            planted.display(),
            planted.display()
        );
        let p = project_with(&agent, "");
        std::fs::create_dir_all(p.path(".husky/_")).unwrap();
        for hook in ["post-merge", "post-commit", "prepare-commit-msg"] {
            let script = p.path(&format!(".husky/{hook}"));
            std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", own.display())).unwrap();
            // husky 9's stub: run the script of the same name one folder up.
            let stub = p.path(&format!(".husky/_/{hook}"));
            std::fs::write(
                &stub,
                "#!/bin/sh\nexec sh \"$(dirname \"$0\")/../$(basename \"$0\")\" \"$@\"\n",
            )
            .unwrap();
            for f in [&script, &stub] {
                std::fs::set_permissions(f, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                    .unwrap();
            }
        }
        std::fs::write(p.path(".husky/.gitignore"), "_\n").unwrap();
        p.git(&["add", "--all"]);
        p.git(&["commit", "--quiet", "-m", "husky 9 hooks"]);
        p.git(&["config", "core.hooksPath", ".husky/_"]);
        p.add(&["Add a hello file"]);
        p.ok(&["work"]);
        let args: &[&str] = if squash {
            &["merge", "1", "--squash"]
        } else {
            &["merge", "1"]
        };
        let merged = p.run(args);
        assert_eq!(merged.code, 0, "{merged}");
        assert!(p.path("hello.txt").exists(), "{merged}");
        assert!(
            !planted.exists(),
            "the agent's hook ran at the merge (squash: {squash})"
        );
        assert!(!own.exists(), "a hook ran at the merge (squash: {squash})");
        assert!(
            merged.stderr.contains(
                "the merge ran without your git hooks (prepare-commit-msg, post-commit, post-merge)"
            ),
            "{merged}"
        );
        // The person's own git, afterwards, runs them as ever.
        p.git(&["commit", "--quiet", "--allow-empty", "-m", "by hand"]);
        assert!(own.exists(), "git itself still runs the hooks");
        std::fs::remove_file(&own).unwrap();
        let _ = std::fs::remove_file(&planted);
    }
}
