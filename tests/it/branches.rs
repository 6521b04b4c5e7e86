//! `gza diff`, `merge`, `rebase` and `pr` on a finished task's branch, through the binary:
//! conflicts, dirty trees, missing tools and vanished branches are one-line refusals that change
//! nothing.

use insta::assert_snapshot;

use crate::support::project::TestProject;

/// A repository whose agent adds `task-<id>.txt`, and also rewrites README.md when the prompt
/// mentions the readme.
fn project() -> TestProject {
    let p = TestProject::in_git_repo();
    p.command_agent(
        r#"prompt=$(cat)
echo "from task $GZA_TASK_ID" > "task-$GZA_TASK_ID.txt"
case "$prompt" in *readme*) echo "the agent's readme" > README.md ;; esac
echo "done $GZA_TASK_ID"
"#,
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    p
}

/// Add a task and run it to completion; returns its id.
fn finished(p: &TestProject, prompt: &str) -> i64 {
    let id = p.add(&[prompt]);
    let run = p.run(&["work", &id.to_string()]);
    assert_eq!(run.code, 0, "{run}");
    id
}

/// Commit a change to `file` on main.
fn commit_on_main(p: &TestProject, file: &str, text: &str) {
    std::fs::write(p.path(file), text).unwrap();
    p.git(&["add", file]);
    p.git(&["commit", "--quiet", "-m", &format!("main changes {file}")]);
}

fn head(p: &TestProject) -> String {
    p.git(&["rev-parse", "HEAD"])
}

/// No merge, rebase or uncommitted change is left in the main checkout.
fn assert_clean(p: &TestProject) {
    assert_eq!(
        p.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
    for marker in ["MERGE_HEAD", "REBASE_HEAD"] {
        let out = std::process::Command::new("git")
            .args([
                "-C",
                p.root().to_str().unwrap(),
                "rev-parse",
                "-q",
                "--verify",
                marker,
            ])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{marker} is left behind");
    }
}

// ---- diff -------------------------------------------------------------------------------------

#[test]
fn diff_shows_a_tasks_changes_against_its_base() {
    let p = project();
    let id = finished(&p, "Add a file");
    // Main moving on does not leak into the task's diff.
    commit_on_main(&p, "other.txt", "unrelated\n");
    assert_snapshot!("diff", p.run(&["diff", &id.to_string()]).to_string());
    assert_snapshot!(
        "diff_stat",
        p.run(&["diff", &id.to_string(), "--stat"]).to_string()
    );
}

#[test]
fn diff_refuses_tasks_without_changes_to_show() {
    let p = project();
    p.add(&["Not run yet"]);
    p.add(&["Look around", "--type", "explore"]);
    p.ok(&["work", "2"]);
    let id = finished(&p, "Add a file");
    assert_snapshot!("diff_pending", p.user_error(&["diff", "1"]));
    assert_snapshot!("diff_explore", p.user_error(&["diff", "2"]));
    assert!(p.user_error(&["diff", "42"]).contains("no task with id 42"));
    let branch: String = p.task_field(id, "branch");
    p.ok(&["clean", "--all"]);
    p.git(&["branch", "-D", &branch]);
    assert!(
        p.user_error(&["diff", &id.to_string()])
            .contains(&format!("branch {branch} of task {id} no longer exists"))
    );
}

// ---- merge ------------------------------------------------------------------------------------

#[test]
fn merge_brings_the_branch_into_the_current_branch_once() {
    let p = project();
    let id = finished(&p, "Add a file");
    commit_on_main(&p, "other.txt", "unrelated\n");
    assert_snapshot!("merge", p.run(&["merge", "1"]).to_string());
    assert_eq!(
        std::fs::read_to_string(p.path(&format!("task-{id}.txt"))).unwrap(),
        "from task 1\n"
    );
    let message = p.git(&["log", "-1", "--format=%s%n%b"]);
    assert!(message.starts_with("Merge task 1: Add a file"), "{message}");
    assert_clean(&p);
    assert_eq!(p.task_field::<String>(1, "merged_into"), "main");
    // The branch is kept unless asked, and merging again changes nothing.
    let branch: String = p.task_field(1, "branch");
    assert!(!p.git(&["branch", "--list", &branch]).is_empty());
    let before = head(&p);
    assert_snapshot!("merge_again", p.run(&["merge", "1"]).to_string());
    assert_eq!(head(&p), before);
}

#[test]
fn squash_merge_makes_one_commit_and_deletes_the_branch_and_worktree() {
    let p = project();
    finished(&p, "Add a file");
    let worktree: String = p.task_field(1, "worktree");
    let branch: String = p.task_field(1, "branch");
    let before = head(&p);
    let run = p.run(&["merge", "1", "--squash", "--delete-branch"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains(&format!("Squash-merged {branch} into main as one commit")),
        "{run}"
    );
    assert!(
        run.stdout.contains(&format!("Deleted branch {branch}")),
        "{run}"
    );
    assert_eq!(
        p.git(&["rev-parse", "HEAD~1"]),
        before,
        "exactly one new commit"
    );
    let message = p.git(&["log", "-1", "--format=%B"]);
    assert!(message.starts_with("Add a file (gza task 1)"), "{message}");
    assert!(message.contains("Task-Id: 1"), "{message}");
    assert!(p.path("task-1.txt").is_file());
    assert!(p.git(&["branch", "--list", &branch]).is_empty());
    assert!(!std::path::Path::new(&worktree).exists());
    assert_eq!(p.task_field::<Option<String>>(1, "worktree"), None);
    assert_clean(&p);
}

#[test]
fn merge_refuses_a_dirty_tree_and_changes_nothing() {
    let p = project();
    finished(&p, "Add a file");
    std::fs::write(p.path("README.md"), "my unsaved work\n").unwrap();
    let before = head(&p);
    assert_snapshot!("merge_dirty", p.user_error(&["merge", "1"]));
    assert_eq!(head(&p), before);
    assert_eq!(
        std::fs::read_to_string(p.path("README.md")).unwrap(),
        "my unsaved work\n"
    );
    assert!(!p.path("task-1.txt").exists());
    assert_eq!(p.task_field::<Option<String>>(1, "merged_at"), None);
}

#[test]
fn a_merge_conflict_is_aborted_and_leaves_nothing_half_merged() {
    let p = project();
    finished(&p, "Rewrite the readme");
    commit_on_main(&p, "README.md", "main's readme\n");
    let before = head(&p);
    for args in [vec!["merge", "1"], vec!["merge", "1", "--squash"]] {
        let err = p.user_error(&args);
        assert!(err.contains("conflicts in README.md"), "{err}");
        assert!(err.contains("nothing"), "{err}");
        assert_eq!(head(&p), before);
        assert_clean(&p);
        assert_eq!(
            std::fs::read_to_string(p.path("README.md")).unwrap(),
            "main's readme\n"
        );
        assert!(!p.path("task-1.txt").exists(), "{args:?}");
    }
    assert_snapshot!("merge_conflict", p.user_error(&["merge", "1"]));
    assert_eq!(p.task_field::<Option<String>>(1, "merged_at"), None);
}

#[test]
fn merge_refuses_unfinished_tasks_and_odd_checkouts() {
    let p = project();
    p.add(&["Not run yet"]);
    p.add(&["Look around", "--type", "explore"]);
    p.ok(&["work", "2"]);
    let id = finished(&p, "Add a file");
    p.add(&["Fails"]);
    p.db()
        .execute(
            "UPDATE tasks SET status = 'failed', failure_reason = 'TIMEOUT' WHERE id = 4",
            [],
        )
        .unwrap();
    let before = head(&p);
    assert_snapshot!("merge_pending", p.user_error(&["merge", "1"]));
    assert_snapshot!("merge_explore", p.user_error(&["merge", "2"]));
    assert_snapshot!("merge_failed", p.user_error(&["merge", "4"]));
    assert!(
        p.user_error(&["merge", "42"])
            .contains("no task with id 42")
    );
    p.git(&["checkout", "--quiet", "--detach"]);
    assert_snapshot!("merge_detached", p.user_error(&["merge", &id.to_string()]));
    p.git(&["checkout", "--quiet", "main"]);
    assert_eq!(head(&p), before);
    assert_clean(&p);
}

#[test]
fn merge_of_a_branch_deleted_by_hand_or_a_worktree_removed_by_hand() {
    let p = project();
    finished(&p, "First");
    finished(&p, "Second");
    // Worktree deleted by hand: the merge and the branch deletion still work.
    let worktree: String = p.task_field(2, "worktree");
    std::fs::remove_dir_all(&worktree).unwrap();
    let run = p.run(&["merge", "2", "--delete-branch"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("Deleted branch gza/2-second"), "{run}");
    // Branch deleted by hand: a clear refusal.
    p.ok(&["clean", "--all"]);
    p.git(&["branch", "-D", "gza/1-first"]);
    let before = head(&p);
    assert_snapshot!("merge_branch_gone", p.user_error(&["merge", "1"]));
    assert_eq!(head(&p), before);
}

#[test]
fn delete_branch_keeps_a_branch_whose_worktree_has_uncommitted_changes() {
    let p = project();
    finished(&p, "Add a file");
    let worktree: String = p.task_field(1, "worktree");
    std::fs::write(
        std::path::Path::new(&worktree).join("task-1.txt"),
        "edited by hand\n",
    )
    .unwrap();
    let run = p.run(&["merge", "1", "--delete-branch"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr
            .contains("warning: kept branch gza/1-add-a-file: its worktree"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&worktree).join("task-1.txt")).unwrap(),
        "edited by hand\n",
        "nothing lost"
    );
    assert!(!p.git(&["branch", "--list", "gza/1-add-a-file"]).is_empty());
}

// ---- rebase -----------------------------------------------------------------------------------

#[test]
fn rebase_moves_the_branch_onto_its_base_and_keeps_the_diff_the_tasks() {
    let p = project();
    finished(&p, "Add a file");
    commit_on_main(&p, "other.txt", "unrelated\n");
    let main_tip = head(&p).trim().to_string();
    assert_snapshot!("rebase", p.run(&["rebase", "1"]).to_string());
    let branch: String = p.task_field(1, "branch");
    assert!(p.git_ok(&["merge-base", "--is-ancestor", "main", &branch]));
    // The task's worktree follows its branch; the main checkout did not move.
    let worktree: String = p.task_field(1, "worktree");
    assert!(std::path::Path::new(&worktree).join("other.txt").is_file());
    assert_eq!(head(&p).trim(), main_tip);
    assert_eq!(p.task_field::<String>(1, "base_commit"), main_tip);
    let stat = p.ok(&["diff", "1", "--stat"]);
    assert!(
        stat.contains("task-1.txt") && !stat.contains("other.txt"),
        "{stat}"
    );
    assert_snapshot!("rebase_again", p.run(&["rebase", "1"]).to_string());
    // And it now merges without a merge commit.
    p.ok(&["merge", "1"]);
    assert_eq!(
        p.git(&["rev-parse", "HEAD"]),
        p.git(&["rev-parse", &branch])
    );
}

#[test]
fn a_rebase_conflict_is_aborted_and_the_branch_is_unchanged() {
    let p = project();
    finished(&p, "Rewrite the readme");
    commit_on_main(&p, "README.md", "main's readme\n");
    let branch: String = p.task_field(1, "branch");
    let tip = p.git(&["rev-parse", &branch]);
    assert_snapshot!("rebase_conflict", p.user_error(&["rebase", "1"]));
    assert_eq!(p.git(&["rev-parse", &branch]), tip);
    let worktree: String = p.task_field(1, "worktree");
    let status = p.git(&["-C", &worktree, "status", "--porcelain"]);
    assert_eq!(status, "", "the worktree is clean");
    assert!(!p.git_ok(&[
        "-C",
        &worktree,
        "rev-parse",
        "-q",
        "--verify",
        "REBASE_HEAD"
    ]));
    assert_clean(&p);
}

#[test]
fn rebase_of_a_task_whose_worktree_was_removed_uses_a_temporary_one() {
    let p = project();
    finished(&p, "Add a file");
    let worktree: String = p.task_field(1, "worktree");
    std::fs::remove_dir_all(&worktree).unwrap();
    commit_on_main(&p, "other.txt", "unrelated\n");
    let run = p.run(&["rebase", "1"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(p.git_ok(&["merge-base", "--is-ancestor", "main", "gza/1-add-a-file"]));
    let worktrees = p.git(&["worktree", "list"]);
    assert_eq!(
        worktrees.lines().count(),
        1,
        "no temporary worktree is left: {worktrees}"
    );
}

#[test]
fn rebase_refuses_a_dirty_worktree_and_a_running_task() {
    let p = project();
    finished(&p, "Add a file");
    commit_on_main(&p, "other.txt", "unrelated\n");
    let worktree: String = p.task_field(1, "worktree");
    std::fs::write(
        std::path::Path::new(&worktree).join("task-1.txt"),
        "unsaved\n",
    )
    .unwrap();
    let tip = p.git(&["rev-parse", "gza/1-add-a-file"]);
    let err = p.user_error(&["rebase", "1"]);
    assert!(
        err.contains("has uncommitted changes (task-1.txt)"),
        "{err}"
    );
    assert_eq!(p.git(&["rev-parse", "gza/1-add-a-file"]), tip);
    p.add(&["Running"]);
    p.db()
        .execute(
            "UPDATE tasks SET status = 'in_progress', running_pid = ?1 WHERE id = 2",
            [std::process::id()],
        )
        .unwrap();
    assert_snapshot!("rebase_running", p.user_error(&["rebase", "2"]));
}

// ---- pull requests ----------------------------------------------------------------------------

/// A directory holding only links to `git` and `cat` and, when given, a `gh` script; for PATH.
fn tools_dir(p: &TestProject, gh: Option<&str>) -> String {
    let dir = p.scratch().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    for tool in ["git", "cat"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap()
            .stdout;
        let _ = std::fs::remove_file(dir.join(tool));
        std::os::unix::fs::symlink(String::from_utf8(found).unwrap().trim(), dir.join(tool))
            .unwrap();
    }
    if let Some(script) = gh {
        let path = dir.join("gh");
        std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    dir.display().to_string()
}

/// A bare repository as `origin`.
fn add_origin(p: &TestProject) -> std::path::PathBuf {
    let remote = p.scratch().join("origin.git");
    p.git(&["init", "--quiet", "--bare", remote.to_str().unwrap()]);
    p.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    remote
}

#[test]
fn pr_without_gh_says_how_to_get_it() {
    let mut p = project();
    finished(&p, "Add a file");
    let path = tools_dir(&p, None);
    p.set_env("PATH", &path);
    assert_snapshot!("pr_no_gh", p.user_error(&["pr", "1"]));
    assert_eq!(p.task_field::<Option<String>>(1, "pr_url"), None);
}

#[test]
fn pr_pushes_the_branch_and_opens_a_pull_request_with_gh() {
    let mut p = project();
    finished(&p, "Add a file\n\nWith a second paragraph.");
    let remote = add_origin(&p);
    let record = p.scratch().join("gh-calls");
    let path = tools_dir(
        &p,
        Some(&format!(
            r#"printf '%s\n' "$*" >> "{0}.log"
case "$1 $2" in
  "auth status") exit 0 ;;
  "pr create") printf '%s\n' "$@" > "{0}.args"; cat > "{0}.body"; echo "https://github.com/acme/proj/pull/7" ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
"#,
            record.display()
        )),
    );
    p.set_env("PATH", &path);
    assert_snapshot!("pr", p.run(&["pr", "1"]).to_string());
    let branch: String = p.task_field(1, "branch");
    let args = std::fs::read_to_string(record.with_extension("args")).unwrap();
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        vec![
            "pr",
            "create",
            "--head",
            &branch,
            "--title",
            "Add a file",
            "--body-file",
            "-",
            "--base",
            "main"
        ]
    );
    let body = std::fs::read_to_string(record.with_extension("body")).unwrap();
    assert!(
        body.starts_with("Add a file\n\nWith a second paragraph.\n"),
        "{body}"
    );
    assert!(
        body.contains("## What the agent reported\n\ndone 1"),
        "{body}"
    );
    assert!(
        body.contains("Opened by gza from task 1. 1 file changed, 1 insertion(+)."),
        "{body}"
    );
    let pushed = p.git(&["--git-dir", remote.to_str().unwrap(), "rev-parse", &branch]);
    assert_eq!(pushed, p.git(&["rev-parse", &branch]));
    assert_eq!(
        p.task_field::<String>(1, "pr_url"),
        "https://github.com/acme/proj/pull/7"
    );
    assert!(
        p.ok(&["show", "1"])
            .contains("Pull request:   https://github.com/acme/proj/pull/7")
    );
    // Asking again opens nothing new.
    let calls = std::fs::read_to_string(record.with_extension("log")).unwrap();
    assert_snapshot!("pr_again", p.run(&["pr", "1"]).to_string());
    assert_eq!(
        std::fs::read_to_string(record.with_extension("log")).unwrap(),
        calls
    );
}

#[test]
fn pr_refuses_when_gh_is_logged_out_or_there_is_no_remote() {
    let mut p = project();
    finished(&p, "Add a file");
    p.add(&["Not run"]);
    let path = tools_dir(
        &p,
        Some("case \"$1\" in auth) echo 'not logged in' >&2; exit 1;; esac\nexit 1\n"),
    );
    p.set_env("PATH", &path);
    assert_snapshot!("pr_logged_out", p.user_error(&["pr", "1"]));
    assert!(p.user_error(&["pr", "2"]).contains("task 2 is pending"));
    let path = tools_dir(&p, Some("exit 0\n"));
    p.set_env("PATH", &path);
    assert_snapshot!("pr_no_remote", p.user_error(&["pr", "1"]));
    assert_eq!(p.task_field::<Option<String>>(1, "pr_url"), None);
}

/// After `gza merge N --delete-branch` the branch is gone because it was merged: every branch
/// command says so (it said the branch was deleted by hand and to restore it from the reflog),
/// and `gza merge N` again has nothing to do (exit 0, as for a branch merged already).
#[test]
fn a_merged_and_deleted_branch_is_said_to_be_merged_not_lost() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho \"from task $GZA_TASK_ID\" > \"task-$GZA_TASK_ID.txt\"\necho done\n",
        "verify: \"true\"\n",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    finished(&p, "Add a file");
    let branch: String = p.task_field(1, "branch");
    p.ok(&["merge", "1", "--delete-branch"]);
    let merged = format!("and its branch {branch} deleted");
    for command in ["diff", "verify", "checkout", "review", "rebase"] {
        let err = p.user_error(&[command, "1"]);
        assert!(
            err.contains("task 1 was merged into main at ") && err.contains(&merged),
            "gza {command}: {err}"
        );
        assert!(!err.contains("deleted by hand"), "gza {command}: {err}");
    }
    let before = head(&p);
    for args in [&["merge", "1"][..], &["merge", "1", "--delete-branch"]] {
        let run = p.run(args);
        assert_eq!(run.code, 0, "{run}");
        assert!(
            run.stdout.contains("task 1 was merged into main at ")
                && run.stdout.contains(&format!("{merged}; nothing to do")),
            "{run}"
        );
    }
    assert_eq!(head(&p), before);
}
