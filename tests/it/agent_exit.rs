//! An agent's leftovers cannot hold `gza work`: processes it started in a new session are ended
//! with it, and gza stops reading its output a bounded time after it exits.

use std::time::{Duration, Instant};

use crate::support::project::{TestProject, process_alive, wait_until};

fn pid_in(path: &std::path::Path) -> i64 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_grandchild_in_a_new_session_is_ended_with_the_agent() {
    let p = TestProject::new();
    let pid_file = p.scratch().join("grandchild");
    p.command_agent(
        &format!(
            "setsid sleep 600 &\necho $! > {}\necho finished\n",
            pid_file.display()
        ),
        "",
    );
    p.add(&["leaves a process behind"]);
    let started = Instant::now();
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(started.elapsed() < Duration::from_secs(20), "{run}");
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
    wait_until(5, "the grandchild to end", || {
        !process_alive(pid_in(&pid_file))
    });
}

#[test]
fn a_grandchild_that_hides_from_gza_does_not_hold_its_output_open() {
    let p = TestProject::new();
    let pid_file = p.scratch().join("grandchild");
    // A new session and an empty environment: neither the group nor the tag reaches it, and it
    // keeps the agent's stdout open for ten minutes.
    p.command_agent(
        &format!(
            "env -i setsid sleep 600 &\necho $! > {}\necho finished\n",
            pid_file.display()
        ),
        "",
    );
    p.add(&["hides a process"]);
    let started = Instant::now();
    let run = p.run(&["work"]);
    let took = started.elapsed();
    let grandchild = pid_in(&pid_file);
    unsafe { libc::kill(grandchild as i32, libc::SIGKILL) };
    assert_eq!(run.code, 0, "{run}");
    assert!(took < Duration::from_secs(20), "gza waited {took:?}");
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
    let output: String = p.task_field(1, "output");
    assert!(output.contains("finished"), "{output}");
}

#[test]
fn a_timeout_ends_a_grandchild_in_a_new_session() {
    let p = TestProject::new();
    let pid_file = p.scratch().join("grandchild");
    p.command_agent(
        &format!(
            "setsid sleep 600 &\necho $! > {}\nsleep 600\n",
            pid_file.display()
        ),
        "timeout_minutes: 0.02\n",
    );
    p.add(&["hangs"]);
    let started = Instant::now();
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(started.elapsed() < Duration::from_secs(20), "{run}");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "TIMEOUT");
    wait_until(5, "the grandchild to end", || {
        !process_alive(pid_in(&pid_file))
    });
}

#[test]
fn sigterm_ends_a_task_whose_grandchild_left_the_group() {
    let p = TestProject::new();
    let pid_file = p.scratch().join("grandchild");
    p.command_agent(
        &format!(
            "setsid sleep 600 &\necho $! > {}\nsleep 600\n",
            pid_file.display()
        ),
        "",
    );
    p.add(&["runs long"]);
    let worker = p
        .command(&["work"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(10, "the agent to start", || pid_file.exists());
    wait_until(5, "the task to be in progress", || {
        p.task_field::<String>(1, "status") == "in_progress"
    });
    let started = Instant::now();
    unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    let out = worker.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "KILLED");
    wait_until(5, "the grandchild to end", || {
        !process_alive(pid_in(&pid_file))
    });
}

/// A `command` agent gives no final result to look for: its exit status alone is its verdict
/// (README's failure reasons). One that exits 0 printing nothing completes, with what it
/// changed committed; one that exits non-zero printing nothing fails with AGENT_EXIT.
#[test]
fn a_silent_command_agent_is_judged_by_its_exit_status() {
    let p = TestProject::in_git_repo();
    p.command_agent("cat >/dev/null\necho changed > made.txt\n", "");
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    p.add(&["change a file quietly"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
    let branch: String = p.task_field(1, "branch");
    assert_eq!(p.git(&["show", &format!("{branch}:made.txt")]), "changed\n");
    p.command_agent("cat >/dev/null\nexit 3\n", "");
    p.add(&["fail quietly"]);
    p.run(&["work"]);
    assert_eq!(p.task_field::<String>(2, "status"), "failed");
    assert_eq!(p.task_field::<String>(2, "failure_reason"), "AGENT_EXIT");
}

/// A file gza would read without bound is never committed: a sparse file takes no disk, but
/// `git add` reads and compresses every byte of its length (a 1 TiB one, hours of CPU) and puts
/// it in the branch. Over 100 MiB a file (or 1 GiB in all) the task fails GIT_ERROR at once,
/// saying which file, and its worktree keeps everything for the person. (150 MiB here, so that
/// without the check the test fails in seconds rather than reading a terabyte.)
#[test]
fn a_file_too_large_to_commit_fails_the_task_at_once_and_nothing_is_read() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat >/dev/null\necho small > made.txt\ntruncate -s 150M big.bin\necho done\n",
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    p.add(&["leave a huge sparse file"]);
    let started = std::time::Instant::now();
    let run = p.run(&["work"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the file was read: {run}"
    );
    assert_eq!(p.task_field::<String>(1, "status"), "failed", "{run}");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "GIT_ERROR");
    assert!(
        run.stderr.contains("the agent left big.bin (150.0 MiB")
            && run
                .stderr
                .contains("more than gza commits (100.0 MiB a file, 1.0 GiB in all)"),
        "{run}"
    );
    let branch: String = p.task_field(1, "branch");
    assert!(
        !p.git_ok(&["cat-file", "-e", &format!("{branch}:big.bin")]),
        "committed"
    );
    let kept = std::fs::read_dir(p.path(".gza/worktrees"))
        .unwrap()
        .flatten()
        .any(|e| e.path().join("big.bin").exists());
    assert!(kept, "the worktree keeps the agent's files");
}
