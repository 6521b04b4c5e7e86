//! A task that finishes on a full disk keeps its outcome: gza waits for space and records it,
//! or leaves it on disk for the next `gza work`, and never records a different outcome.
//!
//! The project lives on a real, small tmpfs (bubblewrap mounts it, with `--size`), and the agent
//! fills that file system after doing its job, as a runaway build or log would.

use std::process::Command;

use crate::support::project::TestProject;

/// The agent writes its file, fills the disk, then reports success.
const FILLING_AGENT: &str = "cat > /dev/null\n\
    echo fixed > fix.txt\n\
    head -c 1073741824 /dev/zero > \"$GZA_PROJECT_ROOT/filler\" 2>/dev/null\n\
    echo 'all done'\n";

/// Run `script` with bash inside a mount namespace where the project directory is a fresh
/// 48 MiB tmpfs holding a copy of the project (same path, so git's and gza's paths hold).
/// `$GZA` is the gza binary; the test project's environment is kept. Returns stdout + stderr.
fn on_small_disk(p: &TestProject, script: &str) -> String {
    let gza = p.command(&[]);
    let shadow = p.scratch().join("shadow");
    std::fs::create_dir_all(&shadow).unwrap();
    let root = p.root().to_str().unwrap();
    let mut cmd = Command::new("bwrap");
    cmd.args(["--dev-bind", "/", "/", "--bind", root])
        .arg(&shadow)
        .args(["--size", "50331648", "--tmpfs", root, "--chdir", root])
        .args(["bash", "-c"])
        .arg(format!(
            "set -u\ncp -a \"$SHADOW\"/. \"$ROOT\"/ || exit 99\ncd \"$ROOT\"\n{script}"
        ))
        .env_clear()
        .envs(gza.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("GZA", gza.get_program())
        .env("SHADOW", &shadow)
        .env("ROOT", root)
        .env("OUT", p.scratch());
    let out = cmd
        .output()
        .expect("bwrap runs (scripts/test installs bubblewrap)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the script failed:\n{text}");
    text
}

fn project() -> TestProject {
    let p = TestProject::in_git_repo();
    p.command_agent(FILLING_AGENT, "learnings:\n  extraction_provider: none\n");
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "config"]);
    p.add(&["fix the bug"]);
    p
}

/// Start `gza work` in the background, wait until it says the disk is full; `$pid` is its PID.
const START_AND_WAIT_FOR_FULL: &str = "\
\"$GZA\" work > \"$OUT/work.out\" 2> \"$OUT/work.err\" &\n\
pid=$!\n\
for i in $(seq 1 600); do grep -q 'the disk is full' \"$OUT/work.err\" && break; sleep 0.1; done\n\
grep -q 'the disk is full' \"$OUT/work.err\" || { echo 'never said the disk is full'; cat \"$OUT/work.err\"; exit 1; }\n\
[ -s .gza/logs/1.outcome.json ] && echo 'kept while waiting'\n";

/// What the script prints after: the task as gza shows it, and what its branch holds.
const REPORT: &str = "\
echo \"status: $(\"$GZA\" show 1 --json | sed -n 's/.*\"status\": *\"\\([a-z_]*\\)\".*/\\1/p' | head -1)\"\n\
echo \"reason: $(\"$GZA\" show 1 --json | grep -o '\"failure_reason\": *[^,]*' | head -1)\"\n\
echo \"branch file: $(git show \"$(git for-each-ref --format='%(refname)' refs/heads/gza | head -1)\":fix.txt 2>&1)\"\n\
[ -e .gza/logs/1.outcome.json ] && echo 'outcome file left' || echo 'outcome file gone'\n";

#[test]
fn the_outcome_is_recorded_when_space_returns() {
    let p = project();
    let out = on_small_disk(
        &p,
        &format!(
            "{START_AND_WAIT_FOR_FULL}\
             rm -f filler\n\
             wait $pid; echo \"work exit: $?\"\n\
             cat \"$OUT/work.out\" \"$OUT/work.err\"\n\
             {REPORT}"
        ),
    );
    assert!(out.contains("kept while waiting"), "{out}");
    assert!(out.contains("work exit: 0"), "{out}");
    assert!(
        out.contains("task 1 completed, but the disk is full"),
        "{out}"
    );
    assert!(out.contains("status: completed"), "{out}");
    assert!(out.contains("reason: \"failure_reason\": null"), "{out}");
    assert!(out.contains("branch file: fixed"), "{out}");
    assert!(out.contains("outcome file gone"), "{out}");
}

#[test]
fn a_worker_stopped_on_a_full_disk_leaves_the_outcome_for_the_next_work() {
    let p = project();
    let out = on_small_disk(
        &p,
        &format!(
            "{START_AND_WAIT_FOR_FULL}\
             kill -INT $pid; wait $pid; echo \"work exit: $?\"\n\
             cat \"$OUT/work.err\"\n\
             echo \"while full: $(\"$GZA\" show 1 --json | grep -o '\"status\": *\"[a-z_]*\"' | head -1)\"\n\
             rm -f filler\n\
             \"$GZA\" work 2>&1; echo \"second work exit: $?\"\n\
             {REPORT}"
        ),
    );
    assert!(out.contains("work exit: 1"), "{out}");
    assert!(
        out.contains("task 1 completed, but its outcome could not be recorded: the disk is full")
            || out.contains("task 1 completed, but its outcome could not be recorded"),
        "{out}"
    );
    assert!(
        out.contains("it is kept in .gza/logs/1.outcome.json; free some space and the next `gza work` records it"),
        "{out}"
    );
    assert!(
        out.contains("while full: \"status\": \"in_progress\""),
        "{out}"
    );
    assert!(
        out.contains("recorded the outcome it kept in .gza/logs/1.outcome.json (completed)"),
        "{out}"
    );
    assert!(out.contains("second work exit: 0"), "{out}");
    assert!(out.contains("status: completed"), "{out}");
    assert!(out.contains("branch file: fixed"), "{out}");
    assert!(out.contains("outcome file gone"), "{out}");
}

#[test]
fn a_worker_killed_on_a_full_disk_does_not_turn_its_task_into_worker_died() {
    let p = project();
    let out = on_small_disk(
        &p,
        &format!(
            "{START_AND_WAIT_FOR_FULL}\
             kill -KILL $pid; wait $pid; echo \"work exit: $?\"\n\
             rm -f filler\n\
             \"$GZA\" work 2>&1; echo \"second work exit: $?\"\n\
             {REPORT}"
        ),
    );
    assert!(out.contains("work exit: 137"), "{out}");
    assert!(out.contains("second work exit: 0"), "{out}");
    assert!(out.contains("status: completed"), "{out}");
    assert!(!out.contains("WORKER_DIED"), "{out}");
    assert!(out.contains("branch file: fixed"), "{out}");
}

#[test]
fn an_in_place_task_waits_for_the_database_and_its_report() {
    let p = TestProject::in_git_repo();
    p.command_agent(FILLING_AGENT, "learnings:\n  extraction_provider: none\n");
    p.add(&["--type", "explore", "look around"]);
    let out = on_small_disk(
        &p,
        &format!(
            "{START_AND_WAIT_FOR_FULL}\
             rm -f filler\n\
             wait $pid; echo \"work exit: $?\"\n\
             cat \"$OUT/work.err\"\n\
             {REPORT}\
             cat .gza/reports/1-*.md\n"
        ),
    );
    assert!(out.contains("work exit: 0"), "{out}");
    // Nothing git: what the full disk stopped is the report or the database write.
    assert!(
        out.contains("task 1 completed, but the disk is full"),
        "{out}"
    );
    assert!(out.contains("status: completed"), "{out}");
    assert!(out.contains("# Task 1 (explore)\n\nall done"), "{out}");
    assert!(out.contains("outcome file gone"), "{out}");
}
