//! Git across machines (issue 21): clones of one repository on different machines share one
//! queue in PostgreSQL, so a task's branch goes to the shared `origin` (a bare repository here)
//! after its commit, and comes from it before another clone diffs, reviews, improves, builds on
//! or merges it. A push that fails leaves the task as it ended, with one line; a cloned
//! `gza.yaml` cannot turn pushing on until trusted; gza's push never runs the repository's
//! hooks.
//!
//! The clones' tests run on the test cluster whatever the suite's backend (only a shared
//! database shares a queue); the others run on the suite's backend, with `push: true` set on
//! SQLite, where it is off by default.

use std::path::{Path, PathBuf};

use crate::support::project::{TestProject, on_postgres, wait_until};

/// An agent: a review asks for changes until `better.txt` is in its checkout, an improve task
/// writes it, any other task writes `work-<id>.txt`.
const AGENT: &str = r#"prompt=$(cat)
case "$prompt" in
  "Complete this task: Review task"*)
    if [ -f better.txt ]; then
      printf '## Verdict\n\nAPPROVED\n'
    else
      printf '## Blockers\n- add better.txt\n\n## Verdict\n\nCHANGES_REQUESTED\n'
    fi ;;
  "Complete this task: Improve task"*)
    echo better > better.txt
    echo 'Added better.txt' ;;
  *)
    echo "$GZA_TASK_ID" > "work-$GZA_TASK_ID.txt"
    echo done ;;
esac
"#;

/// The agent, and `extra` settings, in the person's own `gza.local.yaml` (never committed).
fn person_settings(p: &TestProject, extra: &str) {
    let script = p.agent_script(AGENT);
    std::fs::write(
        p.path("gza.local.yaml"),
        format!("provider: command\nproviders:\n  command:\n    command: [sh, {script}]\n{extra}"),
    )
    .unwrap();
}

/// The first clone: a repository whose `origin` is `origin`, gza initialised and committed,
/// `main` pushed when `origin` exists.
fn first_clone(p: &TestProject, origin: &Path, extra: &str) {
    p.git(&["init", "--quiet", "--initial-branch=main"]);
    p.git(&["remote", "add", "origin", &origin.to_string_lossy()]);
    std::fs::write(p.path("README.md"), "# shared\n").unwrap();
    p.ok(&["init"]);
    person_settings(p, extra);
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "initial"]);
    if origin.exists() {
        p.git(&["push", "--quiet", "origin", "main"]);
    }
}

/// Another clone of `origin` (its `gza.yaml` came with it), joined to the project.
fn second_clone(p: &TestProject, origin: &Path) {
    p.git(&["init", "--quiet", "--initial-branch=main"]);
    p.git(&["remote", "add", "origin", &origin.to_string_lossy()]);
    p.git(&["fetch", "--quiet", "origin"]);
    p.git(&["checkout", "--quiet", "-B", "main", "origin/main"]);
    person_settings(p, "");
    p.ok(&["init"]);
}

/// A bare repository outside the clones, created.
fn bare_origin(p: &TestProject) -> PathBuf {
    let path = p.scratch().join("origin.git");
    p.git(&["init", "--quiet", "--bare", &path.to_string_lossy()]);
    path
}

/// The commit `branch` names on `origin`, if it is there.
fn on_origin(p: &TestProject, origin: &Path, branch: &str) -> Option<String> {
    let out = p.git(&[
        "ls-remote",
        &origin.to_string_lossy(),
        &format!("refs/heads/{branch}"),
    ]);
    out.split_whitespace().next().map(str::to_string)
}

fn branch_of(p: &TestProject, id: i64) -> String {
    p.json(&["show", &id.to_string(), "--json"])["branch"]
        .as_str()
        .expect("the task has a branch")
        .to_string()
}

fn has_branch(p: &TestProject, branch: &str) -> bool {
    p.git_ok(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("refs/heads/{branch}"),
    ])
}

/// Settings that turn pushing on where it is not on by default (SQLite).
fn push_on() -> &'static str {
    if on_postgres() { "" } else { "push: true\n" }
}

#[test]
fn a_task_worked_in_one_clone_is_diffed_reviewed_improved_rebased_and_merged_in_another() {
    let a = TestProject::empty_postgres();
    let b = TestProject::empty_sharing(&a);
    let origin = bare_origin(&a);
    // No `push` setting anywhere: a shared database turns it on.
    first_clone(&a, &origin, "");
    second_clone(&b, &origin);
    let id = a.add(&["write the work file"]);
    let run = a.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("push"), "{run}");
    let branch = branch_of(&a, id);
    let tip = on_origin(&a, &origin, &branch).expect("the task's branch is on origin");
    assert!(a.ok(&["show", "1"]).contains("on origin at"));

    // The second clone has never seen the branch: diff fetches it.
    assert!(!has_branch(&b, &branch));
    let diff = b.ok(&["diff", "1"]);
    assert!(diff.contains("work-1.txt") && diff.contains("+1"), "{diff}");
    assert_eq!(b.git(&["rev-parse", &branch]).trim(), tip);

    // Reviewed and improved there; the improvement goes to origin too.
    let review: i64 = b.ok(&["review", "1", "-q"]).trim().parse().unwrap();
    let run = b.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        b.json(&["show", &review.to_string(), "--json"])["status"],
        "completed"
    );
    assert!(
        b.ok(&["show", &review.to_string()])
            .contains("CHANGES_REQUESTED")
    );
    b.ok(&["improve", &review.to_string()]);
    let run = b.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let improved = on_origin(&b, &origin, &branch).unwrap();
    assert_ne!(improved, tip, "the improve task's commit was pushed");

    // The first clone's copy is behind (and checked out in its task's worktree): its diff
    // fetches the improvement and moves the worktree with it.
    let diff = a.ok(&["diff", "1"]);
    assert!(diff.contains("better.txt"), "{diff}");
    assert_eq!(a.git(&["rev-parse", &branch]).trim(), improved);

    // The second clone's main moves on; it rebases the branch, which replaces origin's copy,
    // and the first clone (which added nothing) takes the rewritten branch.
    std::fs::write(b.path("other.txt"), "other\n").unwrap();
    b.git(&["add", "other.txt"]);
    b.git(&["commit", "--quiet", "-m", "other"]);
    let run = b.run(&["rebase", "1"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("warning"), "{run}");
    let rebased = on_origin(&b, &origin, &branch).unwrap();
    assert_eq!(b.git(&["rev-parse", &branch]).trim(), rebased);
    assert_ne!(rebased, improved);
    let run = a.run(&["diff", "1", "--stat"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("diverged"), "{run}");
    assert_eq!(a.git(&["rev-parse", &branch]).trim(), rebased);

    // Merged in the second clone.
    let merged = b.ok(&["merge", "1"]);
    assert!(merged.contains("Merged"), "{merged}");
    assert!(b.path("work-1.txt").is_file() && b.path("better.txt").is_file());
}

#[test]
fn a_task_based_on_another_clones_branch_builds_on_it() {
    let a = TestProject::empty_postgres();
    let b = TestProject::empty_sharing(&a);
    let origin = bare_origin(&a);
    first_clone(&a, &origin, "");
    second_clone(&b, &origin);
    a.add(&["write the first file"]);
    assert_eq!(a.run(&["work"]).code, 0);
    // Stacked on task 1's branch, which only the first clone made.
    let id = b.add(&["--based-on", "1", "write the second file"]);
    let run = b.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let branch = branch_of(&b, id);
    on_origin(&b, &origin, &branch).expect("pushed");
    let files = b.git(&["ls-tree", "--name-only", &branch]);
    assert!(
        files.contains("work-1.txt") && files.contains(&format!("work-{id}.txt")),
        "{files}"
    );
}

#[test]
fn a_branch_that_never_reached_origin_is_one_line_in_another_clone() {
    let a = TestProject::empty_postgres();
    let b = TestProject::empty_sharing(&a);
    let origin = bare_origin(&a);
    first_clone(&a, &origin, "");
    second_clone(&b, &origin);
    // The first clone's origin is gone while its task runs.
    let moved = a.scratch().join("moved.git");
    std::fs::rename(&origin, &moved).unwrap();
    a.add(&["write the work file"]);
    let run = a.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    std::fs::rename(&moved, &origin).unwrap();
    let err = b.user_error(&["diff", "1"]);
    assert!(
        err.contains("is not in this clone and not on origin")
            && err.contains("its push from")
            && err.contains("git push origin gza/1-"),
        "{err}"
    );
}

#[test]
fn a_dead_origin_leaves_the_task_completed_with_one_line_and_the_next_command_pushes_again() {
    let p = TestProject::empty();
    let origin = p.scratch().join("origin.git");
    first_clone(&p, &origin, push_on());
    let id = p.add(&["write the work file"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let warning: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("could not push"))
        .collect();
    assert_eq!(warning.len(), 1, "{run}");
    let branch = branch_of(&p, id);
    assert!(
        warning[0].contains(&format!("git push origin {branch}")),
        "{run}"
    );
    let shown = p.json(&["show", "1", "--json"]);
    assert_eq!(shown["status"], "completed");
    assert!(shown["push"]["error"].is_string(), "{shown}");
    let text = p.ok(&["show", "1"]);
    assert!(
        text.contains("Push:") && text.contains("failed from"),
        "{text}"
    );
    // origin is back: the next command that needs the branch pushes it.
    p.git(&["init", "--quiet", "--bare", &origin.to_string_lossy()]);
    p.ok(&["diff", "1"]);
    assert!(on_origin(&p, &origin, &branch).is_some());
    assert!(p.json(&["show", "1", "--json"])["push"]["error"].is_null());
}

#[test]
fn gzas_push_never_runs_the_repositorys_pre_push_hook() {
    let p = TestProject::empty();
    let origin = bare_origin(&p);
    first_clone(&p, &origin, push_on());
    let marker = p.scratch().join("hook-ran");
    let hook = p.path(".git/hooks/pre-push");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\ntouch {}\nexit 1\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let id = p.add(&["write the work file"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("could not push"), "{run}");
    on_origin(&p, &origin, &branch_of(&p, id)).expect("pushed");
    assert!(!marker.exists(), "gza's push ran the pre-push hook");
    // The hook is live: a push of the person's own runs it (and it refuses).
    assert!(!p.git_ok(&["push", "--quiet", "origin", "main:refs/heads/probe"]));
    assert!(marker.exists());
}

#[test]
fn a_cloned_gza_yaml_cannot_turn_pushing_on_until_trusted() {
    let p = TestProject::empty_sqlite();
    let origin = bare_origin(&p);
    first_clone(&p, &origin, "");
    // A pull brings a gza.yaml that turns pushing on.
    let yaml = std::fs::read_to_string(p.path("gza.yaml")).unwrap();
    p.config_untrusted(&format!("{yaml}\npush: true\n"));
    let id = p.add(&["write the work file"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("push") && run.stderr.contains("gza trust"),
        "{run}"
    );
    let branch = branch_of(&p, id);
    assert_eq!(on_origin(&p, &origin, &branch), None, "pushed untrusted");
    // Nor does a later command push it.
    p.ok(&["diff", &id.to_string()]);
    assert_eq!(on_origin(&p, &origin, &branch), None);
    let asked = p.ok(&["trust", "--yes"]);
    assert!(asked.contains("push"), "{asked}");
    let id = p.add(&["write another file"]);
    assert_eq!(p.run(&["work"]).code, 0);
    on_origin(&p, &origin, &branch_of(&p, id)).expect("pushed once trusted");
}

#[test]
fn a_retry_on_another_clone_starts_from_what_the_failed_run_committed_and_its_base() {
    let a = TestProject::empty_postgres();
    let b = TestProject::empty_sharing(&a);
    let origin = bare_origin(&a);
    first_clone(&a, &origin, "");
    second_clone(&b, &origin);
    // The first clone's main moves on after the second cloned: the second lacks the commit the
    // task starts from.
    std::fs::write(a.path("later.txt"), "later\n").unwrap();
    a.git(&["add", "later.txt"]);
    a.git(&["commit", "--quiet", "-m", "later"]);
    a.git(&["push", "--quiet", "origin", "main"]);
    let base = a.git(&["rev-parse", "HEAD"]).trim().to_string();
    // Its agent writes half the work and fails.
    let failing = a.agent_script("cat > /dev/null\necho half > half.txt\nexit 3\n");
    std::fs::write(
        a.path("gza.local.yaml"),
        format!("provider: command\nproviders:\n  command:\n    command: [sh, {failing}]\n"),
    )
    .unwrap();
    a.add(&["finish the work"]);
    a.run(&["work"]);
    assert_eq!(a.json(&["show", "1", "--json"])["status"], "failed");
    assert!(!b.git_ok(&["cat-file", "-e", &format!("{base}^{{commit}}")]));

    let retry: i64 = b
        .ok(&["retry", "1"])
        .split_whitespace()
        .find_map(|w| w.parse().ok())
        .unwrap();
    let run = b.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    let shown = b.json(&["show", &retry.to_string(), "--json"]);
    assert_eq!(shown["status"], "completed", "{shown}");
    assert_eq!(shown["base_commit"], base.as_str(), "{shown}");
    let files = b.git(&["ls-tree", "--name-only", &branch_of(&b, retry)]);
    assert!(
        files.contains("half.txt") && files.contains("later.txt"),
        "{files}"
    );
}

/// A worker's checkout that is behind origin (another machine merged work and pushed `main`)
/// does not make stale tasks: a new task starts from origin's `main`, says so once, and the
/// person's checkout is left as it was. A checkout that has diverged from origin keeps its own.
#[test]
fn a_new_task_starts_from_origins_branch_when_this_checkout_is_behind() {
    let a = TestProject::empty_postgres();
    let b = TestProject::empty_sharing(&a);
    let origin = bare_origin(&a);
    first_clone(&a, &origin, "");
    second_clone(&b, &origin);
    // Machine A merges work into main and pushes it; B's checkout does not know.
    std::fs::write(a.path("merged-on-a.txt"), "from machine A\n").unwrap();
    a.git(&["add", "merged-on-a.txt"]);
    a.git(&["commit", "--quiet", "-m", "work merged on machine A"]);
    a.git(&["push", "--quiet", "origin", "main"]);
    let pushed = a.git(&["rev-parse", "HEAD"]);
    let b_before = b.git(&["rev-parse", "HEAD"]);
    let id = b.add(&["build on the newest main"]);
    let run = b.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("start from origin/main") && run.stderr.contains("git pull"),
        "{run}"
    );
    let branch = branch_of(&b, id);
    assert!(
        b.git_ok(&["merge-base", "--is-ancestor", pushed.trim(), &branch]),
        "the task's branch was not made from origin's main"
    );
    assert_eq!(
        b.git(&["show", &format!("{branch}:merged-on-a.txt")])
            .trim(),
        "from machine A"
    );
    assert_eq!(
        b.git(&["rev-parse", "HEAD"]),
        b_before,
        "the checkout moved"
    );
    let shown = b.json(&["show", &id.to_string(), "--json"]);
    assert_eq!(
        shown["base_commit"].as_str().map(str::trim),
        Some(pushed.trim()),
        "{shown}"
    );
    // Diverged (a commit of B's own on main): B's checkout is the base, nothing is said.
    std::fs::write(b.path("local.txt"), "only here\n").unwrap();
    b.git(&["add", "local.txt"]);
    b.git(&["commit", "--quiet", "-m", "a commit of B's own"]);
    let own = b.git(&["rev-parse", "HEAD"]);
    let id = b.add(&["build on this checkout"]);
    let run = b.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("origin/main"), "{run}");
    assert!(b.git_ok(&[
        "merge-base",
        "--is-ancestor",
        own.trim(),
        &branch_of(&b, id)
    ]));
}

/// `gza merge --delete-branch` in a clone that never had the branch fetches it, merges it and
/// deletes it on `origin` too, so no clone fetches a merged branch back. A branch that moved
/// on at origin after the clone last had it is merged as origin has it, then deleted.
#[test]
fn merge_with_delete_branch_in_another_clone_merges_origins_copy_and_deletes_it_there() {
    let a = TestProject::empty_postgres();
    let b = TestProject::empty_sharing(&a);
    let origin = bare_origin(&a);
    first_clone(&a, &origin, "");
    second_clone(&b, &origin);
    let first = a.add(&["write the first work file"]);
    let second = a.add(&["write the second work file"]);
    let run = a.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    let (one, two) = (branch_of(&a, first), branch_of(&a, second));
    assert!(on_origin(&a, &origin, &one).is_some() && on_origin(&a, &origin, &two).is_some());

    // B never had the branch: merge fetches it first.
    let merged = b.ok(&["merge", &first.to_string(), "--delete-branch"]);
    assert!(
        merged.contains(&format!("Deleted branch {one} here and on origin")),
        "{merged}"
    );
    assert_eq!(
        on_origin(&b, &origin, &one),
        None,
        "the merged branch is still on origin"
    );
    assert!(!has_branch(&b, &one));
    assert!(b.path(&format!("work-{first}.txt")).is_file());

    // B has the second branch, then it moves on at origin (a machine went on working on it).
    b.git(&[
        "fetch",
        "--quiet",
        "origin",
        &format!("+refs/heads/{two}:refs/heads/{two}"),
    ]);
    let elsewhere = PathBuf::from(
        a.json(&["show", &second.to_string(), "--json"])["worktree"]
            .as_str()
            .expect("the task's worktree"),
    );
    std::fs::write(elsewhere.join("later.txt"), "later\n").unwrap();
    let git_in = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&elsewhere)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git_in(&["add", "later.txt"]);
    git_in(&["commit", "--quiet", "-m", "later work"]);
    git_in(&["push", "--quiet", "origin", &two]);
    let run = b.run(&["merge", &second.to_string(), "--delete-branch"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        b.path("later.txt").is_file(),
        "origin's newer copy was not the one merged"
    );
    assert_eq!(on_origin(&b, &origin, &two), None, "{run}");
}

/// A worker whose task was reaped while it was away (its lease expired: a partition, a
/// suspended machine) finishes with a commit all the same: nothing of it reaches `origin`,
/// and no push is recorded over what others recorded since (its result is refused too).
#[test]
fn a_worker_whose_task_was_reaped_while_it_was_away_pushes_nothing() {
    let p = TestProject::empty();
    let origin = bare_origin(&p);
    first_clone(&p, &origin, "");
    let marker = p.scratch().join("started");
    // The agent writes its work, then waits; stopped (by the reaper), it ends as if done.
    let script = p.agent_script(&format!(
        "cat > /dev/null\necho late > \"late-$GZA_TASK_ID.txt\"\ntrap 'echo \"the late result\"; exit 0' TERM\ntouch {}\nsleep 120 &\nwait\n",
        marker.display()
    ));
    std::fs::write(
        p.path("gza.local.yaml"),
        format!(
            "provider: command\nproviders:\n  command:\n    command: [sh, {script}]\n{}",
            push_on()
        ),
    )
    .unwrap();
    p.add(&["slow task"]);
    let away = p.spawn(&["work"]);
    wait_until(30, "the agent to start", || marker.exists());
    p.lapse_worker_leases();
    let reaper = p.run(&["work"]);
    assert_eq!(reaper.code, 0, "{reaper}");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "WORKER_DIED");
    let out = away.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("its result was not recorded"), "{stderr}");
    let heads = p.git(&["ls-remote", "--heads", &origin.to_string_lossy()]);
    assert!(!heads.contains("gza/"), "the reaped worker pushed: {heads}");
    let pushes: i64 = p
        .db()
        .query_row("SELECT COUNT(*) FROM branch_pushes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pushes, 0);
    let shown = p.ok(&["show", "1"]);
    assert!(!shown.contains("Push:"), "{shown}");
}

/// A worker whose lease runs out while its push is on its way (origin is slow to take it: held
/// here by origin's own pre-receive hook, which no client option turns off) and whose task is
/// reaped meanwhile: its check of the lease came before the reap, its push lands after it. The
/// worker takes the push back, so nothing of the refused run stays on `origin` and no push of
/// it is recorded; the reaper's own work is pushed as usual.
#[test]
fn a_push_that_lands_after_its_task_was_reaped_is_taken_back() {
    let p = TestProject::empty();
    let origin = bare_origin(&p);
    first_clone(&p, &origin, push_on());
    let hold = p.scratch().join("hold");
    let held = p.scratch().join("held");
    let release = p.scratch().join("release");
    // Only the first push after `hold` appears waits (until `release`, at most a minute).
    let hook = origin.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat > /dev/null\nif mv '{}' '{}' 2>/dev/null; then\n  i=0\n  while [ ! -e '{}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\nfi\nexit 0\n",
            hold.display(),
            held.display(),
            release.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(&hold, "").unwrap();
    let id = p.add(&["write the work file"]);
    let late = p.spawn(&["work"]);
    wait_until(60, "the worker's push to reach origin", || held.exists());
    // The lease runs out while the push is held, and another worker reaps the task.
    p.db()
        .execute(
            "UPDATE worker_leases SET heartbeat_at = heartbeat_at - 1000",
            [],
        )
        .unwrap();
    let reaper = p.run(&["work"]);
    assert_eq!(reaper.code, 0, "{reaper}");
    assert_eq!(p.task_field::<String>(id, "failure_reason"), "WORKER_DIED");
    std::fs::write(&release, "").unwrap();
    let out = late.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("its result was not recorded"), "{stderr}");
    let branch = branch_of(&p, id);
    assert_eq!(
        on_origin(&p, &origin, &branch),
        None,
        "the reaped run's push stayed on origin: {stderr}"
    );
    let recorded: i64 = p
        .db()
        .query_row(
            "SELECT COUNT(*) FROM branch_pushes WHERE task_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(recorded, 0, "{stderr}");
}
