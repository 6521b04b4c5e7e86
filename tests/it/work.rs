//! `gza work` and friends with scripted agents: isolation, limits, faults, parallel workers.

use std::time::Duration;

use crate::support::project::{TestProject, process_alive, wait_until};

const WRITE_AND_ANSWER: &str =
    "cat > /dev/null\necho 'hello' > hello.txt\necho 'Added hello.txt'\n";

#[test]
fn a_code_task_is_committed_on_its_own_branch() {
    let p = TestProject::in_git_repo();
    p.command_agent(WRITE_AND_ANSWER, "");
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    p.add(&["Add a hello file"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("1 completed, 0 failed"), "{run}");
    let branch: String = p.task_field(1, "branch");
    assert_eq!(branch, "gza/1-add-a-hello-file");
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
    assert_eq!(p.task_field::<String>(1, "output"), "Added hello.txt");
    assert_eq!(
        p.task_field::<String>(1, "diff_stats"),
        "1 file changed, 1 insertion(+)"
    );
    let log = p.git(&["log", "--format=%s%n%b", "-1", &branch]);
    assert!(log.starts_with("gza task 1: Add a hello file"), "{log}");
    assert!(log.contains("Task-Id: 1"), "{log}");
    assert_eq!(p.git(&["show", &format!("{branch}:hello.txt")]), "hello\n");
    // The main worktree is untouched.
    assert!(!p.path("hello.txt").exists());
    assert!(p.path(".gza/logs/1.jsonl").is_file());
    // clean removes the finished worktree and keeps the branch.
    let worktree: String = p.task_field(1, "worktree");
    assert!(std::path::Path::new(&worktree).is_dir());
    assert!(
        p.ok(&["clean"])
            .contains("Nothing to clean of tasks finished over 30 days ago")
    );
    assert!(std::path::Path::new(&worktree).is_dir());
    assert!(
        p.ok(&["clean", "--all"])
            .contains("Removed 1 worktree (their branches are kept) and 1 log; 0 kept")
    );
    assert!(!p.path(".gza/logs/1.jsonl").exists());
    assert!(!std::path::Path::new(&worktree).exists());
    assert!(p.git(&["branch", "--list", &branch]).contains(&branch));
}

#[test]
fn a_task_based_on_another_starts_from_its_branch() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho \"$GZA_TASK_ID\" >> trail.txt\necho ok\n",
        "",
    );
    p.add(&["first"]);
    p.add(&["second", "--based-on", "1"]);
    p.ok(&["work", "--all"]);
    let branch: String = p.task_field(2, "branch");
    assert_eq!(p.git(&["show", &format!("{branch}:trail.txt")]), "1\n2\n");
}

#[test]
fn explore_tasks_run_in_place_and_keep_a_report() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho '## Findings'\necho 'It is slow.'\n",
        "",
    );
    p.add(&["Why is it slow?", "--type", "explore"]);
    p.ok(&["work"]);
    let report: String = p.task_field(1, "report_file");
    assert_eq!(report, ".gza/reports/1-why-is-it-slow.md");
    let text = std::fs::read_to_string(p.path(&report)).unwrap();
    assert!(text.contains("It is slow."), "{text}");
    assert_eq!(p.task_field::<Option<String>>(1, "branch"), None);
}

#[test]
fn outside_git_a_code_task_runs_in_place_with_a_warning() {
    let p = TestProject::new();
    p.command_agent(WRITE_AND_ANSWER, "");
    p.add(&["no repo here"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stderr.contains("is not a git repository"), "{run}");
    assert!(p.path("hello.txt").is_file());
}

#[test]
fn a_dirty_main_worktree_is_warned_about_and_left_alone() {
    let p = TestProject::in_git_repo();
    p.command_agent(WRITE_AND_ANSWER, "");
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    std::fs::write(p.path("README.md"), "uncommitted edit\n").unwrap();
    p.add(&["task"]);
    let run = p.run(&["work"]);
    assert!(run.stderr.contains("uncommitted changes"), "{run}");
    let branch: String = p.task_field(1, "branch");
    assert_eq!(
        p.git(&["show", &format!("{branch}:README.md")]),
        "# test repo\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("README.md")).unwrap(),
        "uncommitted edit\n"
    );
}

#[test]
fn an_existing_branch_name_gets_a_suffix() {
    let p = TestProject::in_git_repo();
    p.command_agent(WRITE_AND_ANSWER, "");
    p.git(&["branch", "gza/1-task"]);
    p.add(&["task"]);
    p.ok(&["work"]);
    assert_eq!(p.task_field::<String>(1, "branch"), "gza/1-task-2");
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
}

#[test]
fn a_missing_agent_binary_claims_nothing() {
    let p = TestProject::new();
    p.config("provider: command\nproviders:\n  command:\n    command: [/nonexistent/agent]\n");
    p.add(&["waits"]);
    let err = p.user_error(&["work"]);
    assert!(err.contains("`/nonexistent/agent` not found"), "{err}");
    assert!(err.contains("providers.command.command"), "{err}");
    assert_eq!(p.task_field::<String>(1, "status"), "pending");
    assert_eq!(p.task_field::<Option<String>>(1, "started_at"), None);
    // The default provider's binary is named with its key too.
    p.config("providers:\n  claude:\n    path: /nonexistent/claude\n");
    let err = p.user_error(&["work"]);
    assert!(
        err.contains("`/nonexistent/claude` not found; install it or set providers.claude.path"),
        "{err}"
    );
}

#[test]
fn an_agent_that_fails_is_recorded_with_its_stderr() {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho 'partial work'\necho 'boom: no API key' >&2\nexit 3\n",
        "",
    );
    p.add(&["will fail"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "AGENT_EXIT");
    let output: String = p.task_field(1, "output");
    assert!(output.contains("partial work"), "{output}");
    assert!(output.contains("exit status 3"), "{output}");
    assert!(output.contains("boom: no API key"), "{output}");
    // retry queues it again, based on the failed one.
    assert!(
        p.ok(&["retry", "1"])
            .contains("Created task 2 (retry of 1)")
    );
}

#[test]
fn garbage_and_invalid_utf8_from_a_stream_agent() {
    let p = TestProject::new();
    let script = p.scratch().join("fake-claude.sh");
    std::fs::write(&script, "#!/bin/sh\ncat > /dev/null\nprintf 'not json\\n\\377\\376 bytes\\n{\"type\":\"assistant\"\\n'\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.config(&format!(
        "providers:\n  claude:\n    path: {}\n",
        script.display()
    ));
    p.add(&["t"]);
    p.run(&["work"]);
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "NO_RESULT");
    let log = std::fs::read(p.path(".gza/logs/1.jsonl")).unwrap();
    assert!(
        log.windows(2).any(|w| w == b"\xff\xfe"),
        "the raw stream is logged byte for byte"
    );
}

#[test]
fn a_stream_agent_reporting_max_turns() {
    let p = TestProject::new();
    let script = p.scratch().join("fake-claude.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat > /dev/null\necho '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-42\",\"model\":\"m\"}'\n\
         echo '{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true,\"num_turns\":3,\"total_cost_usd\":0.5,\"session_id\":\"s-42\",\"usage\":{\"input_tokens\":7,\"output_tokens\":2}}'\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.config(&format!(
        "max_turns: 3\nproviders:\n  claude:\n    path: {}\n",
        script.display()
    ));
    p.add(&["t"]);
    p.run(&["work"]);
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "MAX_TURNS");
    assert_eq!(p.task_field::<String>(1, "session_id"), "s-42");
    assert_eq!(p.task_field::<f64>(1, "cost_usd"), 0.5);
    assert_eq!(p.task_field::<i64>(1, "num_turns"), 3);
    // A failed task with a session can be resumed.
    assert!(
        p.ok(&["resume", "1"])
            .contains("Created task 2 (resume of 1)")
    );
    assert_eq!(p.task_field::<String>(2, "resume_session_id"), "s-42");
}

#[test]
fn a_hundred_megabytes_of_output_stays_on_disk_not_in_the_database() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\nyes 'line of agent output that goes on and on' | head -c 100000000\necho THE-END\n", "");
    p.add(&["chatty"]);
    p.ok(&["work"]);
    let log_len = std::fs::metadata(p.path(".gza/logs/1.jsonl"))
        .unwrap()
        .len();
    assert!(log_len >= 100_000_000, "{log_len}");
    let output: String = p.task_field(1, "output");
    assert!(output.len() < 300 * 1024, "{}", output.len());
    assert!(output.ends_with("THE-END"));
    assert!(output.starts_with("[… "), "the cut is marked");
}

#[test]
fn a_timeout_ends_the_whole_process_group() {
    let p = TestProject::new();
    let pids = p.scratch().join("pids");
    p.command_agent(
        &format!(
            "sleep 300 &\necho $! > {0}\necho $$ >> {0}\nsleep 300\n",
            pids.display()
        ),
        "timeout_minutes: 0.02\n",
    );
    p.add(&["hangs"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "TIMEOUT");
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        let pid: i64 = pid.parse().unwrap();
        wait_until(5, "agent processes to end", || !process_alive(pid));
    }
}

/// Queue one task whose agent runs (with a background child) until it is ended; returns the
/// file where the agent writes its child's PID and then its own.
fn queue_a_long_running_task(p: &TestProject) -> std::path::PathBuf {
    let pids = p.scratch().join("pids");
    p.command_agent(
        &format!(
            "sleep 300 &\necho $! > {0}\necho $$ >> {0}\nwait\n",
            pids.display()
        ),
        "",
    );
    p.add(&["long"]);
    pids
}

fn agent_pid_of(p: &TestProject, pids: &std::path::Path) -> i64 {
    wait_until(10, "the agent to start", || {
        std::fs::read_to_string(pids).is_ok_and(|s| s.lines().count() >= 2)
    });
    wait_until(5, "the task to be in progress", || {
        p.task_field::<String>(1, "status") == "in_progress"
    });
    std::fs::read_to_string(pids)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn ctrl_c_stops_the_agent_and_records_killed() {
    // The default priority: Ctrl-C reaches the process the terminal started, which relays it.
    let mut p = TestProject::new();
    p.keep_default_work_priority();
    let pids = queue_a_long_running_task(&p);
    let worker = p.spawn(&["work"]);
    let agent = agent_pid_of(&p, &pids);
    unsafe { libc::kill(worker.id() as i32, libc::SIGINT) };
    let out = worker.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "KILLED");
    wait_until(5, "the agent to end", || !process_alive(agent));
}

#[test]
fn a_second_ctrl_c_exits_at_once_without_waiting_for_the_agent() {
    let mut p = TestProject::new();
    p.keep_default_work_priority();
    let pids = p.scratch().join("pids");
    // An agent that ignores SIGTERM: the first Ctrl-C waits out its grace before SIGKILL.
    p.command_agent(
        &format!(
            "trap '' TERM\nsleep 300 &\necho $! > {0}\necho $$ >> {0}\nwait\n",
            pids.display()
        ),
        "",
    );
    p.add(&["stubborn"]);
    let worker = p.spawn(&["work"]);
    let agent = agent_pid_of(&p, &pids);
    let started = std::time::Instant::now();
    unsafe { libc::kill(worker.id() as i32, libc::SIGINT) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    unsafe { libc::kill(worker.id() as i32, libc::SIGINT) };
    let out = worker.wait_with_output().unwrap();
    let took = started.elapsed();
    let leftover: Vec<i64> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    for pid in &leftover {
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    assert_eq!(out.status.code(), Some(130));
    // Well before the agent's grace (3 s) ran out, so before the task could be recorded.
    assert!(took < std::time::Duration::from_millis(2500), "{took:?}");
    assert_eq!(p.task_field::<String>(1, "status"), "in_progress");
    wait_until(5, "the agent to end", || !process_alive(agent));
}

/// A worker stopped by SIGTERM while it waits exits 130, as one stopped while it runs a task
/// does (the README's exit codes): here idle, waiting for work (`gza work --watch`).
#[test]
fn an_idle_watching_worker_stopped_by_sigterm_exits_130() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho done\n", "");
    let worker = p.spawn(&["work", "--watch"]);
    let leases = || -> i64 {
        p.db()
            .query_row("SELECT COUNT(*) FROM worker_leases", [], |r| r.get(0))
            .unwrap()
    };
    wait_until(30, "the worker to take its lease", || leases() >= 1);
    std::thread::sleep(Duration::from_millis(500));
    unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    let run = p.finish(worker.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{run}");
    assert!(
        run.stdout.contains("Stopped watching; no task ran"),
        "{run}"
    );
    assert!(run.stderr.contains("waiting for one"), "it was idle: {run}");
}

/// The same for a worker waiting for a free agent slot (`max_concurrent` reached by another
/// worker's task): `gza work` and `gza watch` stopped there exit 130, not 0 as if nothing
/// had been ready.
#[test]
fn workers_waiting_for_a_free_agent_slot_stopped_by_sigterm_exit_130() {
    let p = TestProject::new();
    let pids = p.scratch().join("pids");
    p.command_agent(
        &format!(
            "sleep 300 &\necho $! > {0}\necho $$ >> {0}\nwait\n",
            pids.display()
        ),
        "max_concurrent: 1\n",
    );
    p.add(&["long"]);
    p.add(&["waits for the slot"]);
    let busy = p.spawn(&["work", "1"]);
    let agent = agent_pid_of(&p, &pids);
    for args in [&["work"][..], &["watch"][..]] {
        let waiting = p.spawn(args);
        // It has claimed nothing: task 2 stays pending while it waits for the slot.
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(p.task_field::<String>(2, "status"), "pending");
        unsafe { libc::kill(waiting.id() as i32, libc::SIGTERM) };
        let run = p.finish(waiting.wait_with_output().unwrap());
        assert_eq!(run.code, 130, "gza {args:?}: {run}");
        // (`gza watch` says it on stdout, among its events.)
        assert!(
            format!("{}{}", run.stdout, run.stderr).contains("waiting for a free agent slot"),
            "gza {args:?}: {run}"
        );
    }
    unsafe { libc::kill(busy.id() as i32, libc::SIGTERM) };
    let _ = busy.wait_with_output();
    wait_until(5, "the agent to end", || !process_alive(agent));
}

#[test]
fn gza_kill_stops_a_task_run_by_another_process() {
    let p = TestProject::new();
    let pids = queue_a_long_running_task(&p);
    let worker = p.spawn(&["work"]);
    let agent = agent_pid_of(&p, &pids);
    let ps = p.ok(&["ps"]);
    assert!(ps.contains("long"), "{ps}");
    assert!(p.ok(&["kill", "1"]).contains("Task 1 killed"));
    let out = worker.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "KILLED");
    assert!(!process_alive(agent));
    assert!(p.user_error(&["kill", "1"]).contains("not running"));
}

#[test]
fn a_worker_killed_with_sigkill_leaves_no_task_in_progress() {
    let p = TestProject::new();
    let pids = queue_a_long_running_task(&p);
    let mut worker = p.spawn(&["work"]);
    let agent = agent_pid_of(&p, &pids);
    worker.kill().unwrap();
    worker.wait().unwrap();
    // The agent runs in its own process group, so it outlived its worker...
    assert!(process_alive(agent));
    // Commands that only read never reap or signal...
    for read in [&["next"][..], &["history"], &["show", "1"], &["ps"]] {
        p.ok(read);
    }
    assert_eq!(p.task_field::<String>(1, "status"), "in_progress");
    assert!(process_alive(agent));
    // ...but the next command that changes the queue does: the worker ran in this PID
    // namespace and its PID is dead, which is positive evidence.
    p.ok(&["work"]);
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "WORKER_DIED");
    wait_until(5, "the orphaned agent to end", || !process_alive(agent));
    assert!(p.ok(&["retry", "1"]).contains("retry of 1"));
}

#[test]
fn two_processes_with_four_workers_each_run_every_task_exactly_once() {
    let p = TestProject::new();
    let trail = p.scratch().join("trail");
    p.command_agent(
        &format!(
            "cat > /dev/null\necho \"$GZA_TASK_ID\" >> {}\necho done\n",
            trail.display()
        ),
        "",
    );
    let db = p.db();
    db.execute_batch(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60) \
         INSERT INTO tasks (prompt, task_type) SELECT 'task ' || i, 'explore' FROM n;",
    )
    .unwrap();
    let a = p.spawn(&["work", "--all", "--parallel", "4", "--quiet"]);
    let b = p.spawn(&["work", "--all", "--parallel", "4", "--quiet"]);
    assert!(a.wait_with_output().unwrap().status.success());
    assert!(b.wait_with_output().unwrap().status.success());
    let mut ran: Vec<i64> = std::fs::read_to_string(&trail)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    ran.sort();
    assert_eq!(
        ran,
        (1..=60).collect::<Vec<_>>(),
        "each task ran exactly once"
    );
    let completed: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM tasks WHERE status = 'completed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(completed, 60);
}

#[test]
fn work_runs_only_the_given_ids_and_respects_dependencies() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho ok\n", "");
    p.add(&["a"]);
    p.add(&["b", "--depends-on", "1"]);
    p.add(&["c"]);
    p.ok(&["work", "3"]);
    assert_eq!(p.task_field::<String>(3, "status"), "completed");
    assert_eq!(p.task_field::<String>(1, "status"), "pending");
    let run = p.run(&["work", "2"]);
    assert!(
        run.stdout.contains("No tasks ready"),
        "blocked tasks do not run: {run}"
    );
    assert!(p.user_error(&["work", "3"]).contains("task 3 is completed"));
    p.ok(&["work", "--all"]);
    assert_eq!(p.task_field::<String>(2, "status"), "completed");
}

#[test]
fn log_renders_and_follows() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho first line\necho second line\n", "");
    p.add(&["t"]);
    p.ok(&["work"]);
    assert_eq!(p.ok(&["log", "1"]), "first line\nsecond line\n");
    assert_eq!(p.ok(&["log", "1", "--follow"]), "first line\nsecond line\n");
    assert!(p.user_error(&["log", "9"]).contains("no task with id 9"));
}

#[test]
fn a_failing_completion_hook_never_changes_the_outcome() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho ok\n", "");
    p.add(&["t"]);
    // Break the table the hook writes to.
    p.db()
        .execute_batch("DROP TABLE learnings_metadata;")
        .unwrap();
    p.run(&["work"]);
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
    let hooks = std::fs::read_to_string(p.path(".gza/logs/hooks.log")).unwrap();
    assert!(
        hooks.contains("task 1: cannot count the task towards learnings"),
        "{hooks}"
    );
}

#[test]
fn completed_tasks_count_towards_the_next_regeneration() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho ok\n", "");
    p.add(&["a"]);
    p.add(&["b", "--no-learnings"]);
    p.add(&["c"]);
    p.ok(&["work", "--all"]);
    let count: i64 = p
        .db()
        .query_row(
            "SELECT tasks_since_regen FROM learnings_metadata",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(count, 2, "the --no-learnings task does not count");
    let _ = Duration::ZERO;
}

#[test]
fn a_background_worker_runs_the_queue_detached() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\nsleep 0.2\necho ok\n", "");
    p.add(&["a"]);
    p.add(&["b"]);
    let out = p.ok(&["work", "--all", "--background"]);
    assert!(out.contains("Started a background worker"), "{out}");
    wait_until(20, "both tasks to complete", || {
        p.task_field::<String>(2, "status") == "completed"
            && p.task_field::<String>(1, "status") == "completed"
    });
    let logs: Vec<_> = std::fs::read_dir(p.path(".gza/logs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("worker-"))
        .collect();
    assert_eq!(logs.len(), 1, "the worker's output has a log file");
}

#[test]
fn secrets_an_agent_prints_are_redacted_before_they_are_stored() {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho 'used key sk-ant-api03-LEAKEDLEAKEDLEAKEDLEAKED to deploy'\n",
        "",
    );
    p.add(&["deploy"]);
    p.ok(&["work"]);
    let output: String = p.task_field(1, "output");
    assert_eq!(output, "used key [REDACTED] to deploy");
    assert!(!p.database_text().contains("LEAKEDLEAKED"));
}

#[test]
fn tasks_naming_another_provider_run_when_the_default_is_missing() {
    let p = TestProject::new();
    let agent = p.agent_script("cat > /dev/null\necho ok\n");
    p.config(&format!(
        "providers:\n  claude:\n    path: /nonexistent/claude\n  command:\n    command: [sh, {agent}]\n"
    ));
    p.add(&["via command", "--provider", "command"]);
    p.ok(&["work"]);
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
}

#[test]
fn log_drops_terminal_escapes_an_agent_printed_unless_raw() {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\nprintf 'red \\033[31malert\\033]0;title\\007 done\\n'\n",
        "",
    );
    p.add(&["t"]);
    p.ok(&["work"]);
    let shown = p.ok(&["log", "1"]);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(
        shown.contains("alert") && shown.contains("done"),
        "{shown:?}"
    );
    assert!(p.ok(&["log", "1", "--raw"]).contains("\u{1b}[31m"));
}

/// `gza work` is batch work: it and everything it starts (the agent, git, the regeneration) run
/// ten steps nicer than the shell that started it, so a person's interactive sessions and their
/// hooks are not kept waiting for a core.
#[test]
fn work_runs_its_agents_at_a_lower_priority() {
    let mut p = TestProject::new();
    p.keep_default_work_priority();
    p.command_agent("cat > /dev/null\necho \"niceness $(nice)\"\n", "");
    p.add(&["how nice", "--type", "explore"]);
    p.ok(&["work"]);
    let output = p.json(&["show", "1", "--json"])["output"]
        .as_str()
        .unwrap()
        .to_string();
    let ours: i32 = std::process::Command::new("nice")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().parse().unwrap())
        .unwrap();
    let want = (ours + 10).min(19);
    assert!(output.contains(&format!("niceness {want}")), "{output}");
}

/// The scheduling an agent of `gza work` runs under, as its own `/proc` says: its session id,
/// its policy (0 other, 3 batch, 5 idle) and its autogroup's nice value.
fn agent_scheduling(p: &mut TestProject, extra: &str) -> (i64, i64, Option<i64>) {
    p.keep_default_work_priority();
    let script = "cat > /dev/null\n\
                  echo \"sched $(awk '{print $6, $41}' /proc/$$/stat) $(awk '{print $3}' /proc/$$/autogroup 2>/dev/null)\"\n";
    p.command_agent(script, extra);
    let id = p.add(&["where do I run", "--type", "explore"]).to_string();
    p.ok(&["work"]);
    let output = p.json(&["show", &id, "--json"])["output"]
        .as_str()
        .unwrap()
        .to_string();
    let line = output
        .lines()
        .find_map(|l| l.trim().strip_prefix("sched "))
        .unwrap_or_else(|| panic!("{output}"))
        .to_string();
    let mut words = line.split_whitespace();
    let sid = words.next().unwrap().parse().unwrap();
    let policy = words.next().unwrap().parse().unwrap();
    (sid, policy, words.next().and_then(|w| w.parse().ok()))
}

fn autogroups_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|v| v.trim() == "1")
}

/// `work_priority: background` (the default): gza work's agents run in a session of their own
/// whose autogroup is nice 10, under SCHED_IDLE, so with autogroups (each terminal a scheduling
/// group whatever its processes' nice values) a person's session in another terminal is still
/// served first; without autogroups they run SCHED_BATCH. `normal` changes nothing.
#[test]
fn work_runs_its_agents_in_a_background_session() {
    let ours = unsafe { libc::getsid(0) } as i64;
    let mut p = TestProject::new();
    let (sid, policy, nice) = agent_scheduling(&mut p, "");
    if autogroups_enabled() {
        assert_ne!(
            sid, ours,
            "the agent runs in another session than the test's"
        );
        assert_eq!(policy, 5, "SCHED_IDLE");
        assert_eq!(nice, Some(10), "the session's autogroup is nice 10");
    } else {
        assert_eq!(policy, 3, "SCHED_BATCH");
    }
    let mut p = TestProject::new();
    let (sid, policy, nice) = agent_scheduling(&mut p, "work_priority: idle\n");
    if autogroups_enabled() {
        assert_ne!(sid, ours);
        assert_eq!((policy, nice), (5, Some(19)));
    } else {
        assert_eq!(policy, 5);
    }
    let mut p = TestProject::new();
    let (sid, policy, _) = agent_scheduling(&mut p, "work_priority: normal\n");
    assert_eq!(policy, 0, "normal leaves the policy alone");
    assert_eq!(sid, ours, "normal starts no session");
}

/// The process the person started relays the terminal's signals to the worker in its own
/// session, and exits as it did; killed outright, it takes the worker with it, as `kill -9` of
/// gza work always did.
#[test]
fn the_parent_left_in_the_terminal_relays_and_takes_the_worker_with_it() {
    let mut p = TestProject::new();
    p.keep_default_work_priority();
    let pids = queue_a_long_running_task(&p);
    let parent = p.spawn(&["work"]);
    let agent = agent_pid_of(&p, &pids);
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", parent.id())).unwrap();
    let worker: i32 = children
        .split_whitespace()
        .next()
        .expect("a worker")
        .parse()
        .unwrap();
    let leftovers = || {
        for pid in std::fs::read_to_string(&pids).unwrap().lines() {
            unsafe { libc::kill(pid.parse().unwrap(), libc::SIGKILL) };
        }
    };
    if !autogroups_enabled() {
        // Without autogroups a session of its own buys nothing: gza work runs in place, the
        // agent its own child.
        let mut parent = parent;
        leftovers();
        unsafe { libc::kill(parent.id() as i32, libc::SIGKILL) };
        let _ = parent.wait();
        assert_eq!(worker as i64, agent, "the agent is gza work's own child");
        return;
    }
    assert_ne!(
        unsafe { libc::getsid(worker) },
        unsafe { libc::getsid(parent.id() as i32) },
        "the worker leads a session of its own"
    );
    unsafe { libc::kill(parent.id() as i32, libc::SIGKILL) };
    let mut parent = parent;
    let _ = parent.wait();
    wait_until(5, "the worker to end with its parent", || {
        !process_alive(worker as i64)
    });
    // The agent outlives a killed worker, as before, for the next command to reap.
    assert!(process_alive(agent));
    leftovers();
}

/// One task whose agent cannot start does not block the queue: it is left pending, named, with
/// the fix, and the rest run.
#[test]
fn a_task_whose_agent_is_missing_is_skipped_and_the_rest_run() {
    let p = TestProject::new();
    let agent = p.agent_script("cat > /dev/null\necho ok\n");
    p.config(&format!(
        "provider: command\nproviders:\n  codex:\n    path: /nonexistent/codex\n  command:\n    command: [sh, {agent}]\n"
    ));
    p.add(&["needs codex", "--provider", "codex"]);
    p.add(&["first of the rest"]);
    p.add(&["second of the rest"]);
    let run = p.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(p.task_field::<String>(1, "status"), "pending");
    assert_eq!(p.task_field::<Option<String>>(1, "started_at"), None);
    assert_eq!(p.task_field::<String>(2, "status"), "completed");
    assert_eq!(p.task_field::<String>(3, "status"), "completed");
    assert!(
        run.stderr.contains(
            "task 1 was skipped and left pending: agent binary `/nonexistent/codex` not found"
        ) && run
            .stderr
            .contains("`gza edit 1 --provider …`, then `gza work 1`"),
        "{run}"
    );
    // The fix it names works.
    p.ok(&["edit", "1", "--provider", "command"]);
    p.ok(&["work", "1"]);
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
}

/// What is true of the project for the whole run (no repository, a dirty main worktree) is said
/// once per `gza work`, not once per task.
#[test]
fn project_warnings_are_said_once_per_run() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho ok\n", "");
    for n in 1..=3 {
        p.add(&[&format!("task {n}")]);
    }
    let run = p.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.stderr.matches("is not a git repository").count(),
        1,
        "{run}"
    );

    let q = TestProject::in_git_repo();
    q.command_agent("cat > /dev/null\necho ok\n", "");
    q.git(&["add", "--all"]);
    q.git(&["commit", "--quiet", "-m", "configure"]);
    std::fs::write(q.path("README.md"), "edited, not committed\n").unwrap();
    q.git(&["add", "README.md"]);
    for n in 1..=3 {
        q.add(&[&format!("task {n}")]);
    }
    let run = q.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.stderr.matches("uncommitted changes").count(),
        1,
        "{run}"
    );
}

/// Learnings settings that make extraction impossible are said once on stderr by `gza work`,
/// not only in .gza/logs/learnings.log for each task.
#[test]
fn an_impossible_extraction_setting_is_warned_once_per_run() {
    let p = TestProject::new();
    p.command_agent(
        "cat >/dev/null\necho done\n",
        "learnings:\n  extraction_provider: openai\n",
    );
    p.add(&["one"]);
    p.add(&["two"]);
    let run = p.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("set learnings.extraction_model"))
        .collect();
    assert_eq!(warnings.len(), 1, "{run}");
    assert!(warnings[0].starts_with("warning: "), "{run}");
}
