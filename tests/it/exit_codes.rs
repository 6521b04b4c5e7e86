//! Exit codes through the binary: an internal fault (git failing on a broken repository, a file
//! operation failing on gza's own files) exits 255 with one line; what a person can fix exits 1.

use insta::assert_snapshot;

use crate::support::project::TestProject;

/// A git repository whose agent adds `task-<id>.txt`, and one finished task in it.
fn repo_with_finished_task() -> (TestProject, i64) {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat >/dev/null\necho \"from task $GZA_TASK_ID\" > \"task-$GZA_TASK_ID.txt\"\necho done\n",
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    let id = p.add(&["Add a file"]);
    let run = p.run(&["work", &id.to_string()]);
    assert_eq!(run.code, 0, "{run}");
    (p, id)
}

/// Exit 255, nothing on stdout, and one `Error:` line on stderr.
fn assert_internal(run: &crate::support::project::Run) {
    assert_eq!(run.code, 255, "an internal fault exits 255:\n{run}");
    assert_eq!(run.stderr.lines().count(), 1, "one line:\n{run}");
    assert!(run.stderr.starts_with("Error: "), "{run}");
}

#[test]
fn git_failing_on_a_corrupt_repository_is_an_internal_fault() {
    let (p, id) = repo_with_finished_task();
    let branch: String = p.task_field(id, "branch");
    let base: String = p.task_field(id, "base_commit");
    // Lose the object of the file the task added, as a broken disk or a bad copy would.
    let blob = p.git(&["rev-parse", &format!("{branch}:task-{id}.txt")]);
    let blob = blob.trim();
    let object = p.path(&format!(".git/objects/{}/{}", &blob[..2], &blob[2..]));
    std::fs::remove_file(&object).expect("the blob is a loose object");

    let run = p.run(&["diff", &id.to_string(), "--stat"]);
    assert_internal(&run);
    assert_snapshot!(
        "git_failing_on_a_corrupt_repository",
        run.to_string().replace(&base, "[BASE]")
    );

    // The same repository still answers what a person got wrong with exit 1.
    assert_eq!(
        p.user_error(&["diff", "99"]),
        "Error: no task with id 99; `gza history` lists the tasks\n"
    );
}

#[test]
fn a_file_operation_failing_on_gzas_own_files_is_an_internal_fault() {
    let p = TestProject::new();
    let id = p.add(&["Write the notes"]);
    // A file where gza keeps a directory.
    std::fs::write(p.path(".gza/logs"), "not a directory\n").unwrap();

    let run = p.run(&["work", "--background"]);
    assert_internal(&run);
    assert_snapshot!("file_operation_failing_on_gzas_own_files", run.to_string());
    let status: String = p.task_field(id, "status");
    assert_eq!(status, "pending", "nothing was claimed");
}

#[test]
fn a_file_the_person_named_or_removed_is_still_a_user_error() {
    let p = TestProject::new();
    std::fs::create_dir(p.path("tasks.yaml")).unwrap();
    assert_snapshot!(
        "user_error_import_a_directory",
        p.user_error(&["import", "tasks.yaml"])
    );
    assert_snapshot!(
        "user_error_prompt_file_a_directory",
        p.user_error(&["add", "--prompt-file", "tasks.yaml"])
    );

    // A task log deleted by hand: the person knows why, so it is not a fault of gza's.
    p.command_agent("cat >/dev/null\necho 'Notes written.'\n", "");
    let id = p.add(&["Write the notes", "--type", "explore"]);
    p.ok(&["work", &id.to_string()]);
    let log: String = p.task_field(id, "log_file");
    std::fs::remove_file(&log).unwrap();
    assert_snapshot!(
        "user_error_log_deleted_by_hand",
        p.user_error(&["log", &id.to_string()])
    );
}

/// Stdout closed under gza (a pipe into `head` that has read enough) is exit 3 with nothing on
/// stderr, for the `--json` printers too: serde_json's error hides the io error it wraps, and
/// `learnings show --json | head -1` said "Error: Broken pipe (os error 32)", exit 255.
#[test]
fn a_closed_stdout_is_exit_3_and_silent_for_every_json_printer() {
    let mut p = TestProject::new();
    p.use_model();
    p.ok(&["learnings", "add", "Run the formatter before every commit"]);
    p.ok(&["add", "Write the docs"]);
    for args in [
        &["learnings", "show", "--json"][..],
        &["learnings", "show", "L1", "--json"],
        &["learnings", "review", "--json"],
        &["learnings", "stats", "--json"],
        &["learnings", "search", "--json", "formatter"],
        &["history", "--json"],
        &["stats", "--json"],
        &["next", "--json"],
        &["show", "1", "--json"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = p
            .command(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned()
            ),
            (Some(3), String::new()),
            "{args:?}"
        );
    }
}
