//! Limits and clean-up across processes: `max_concurrent`, worker leases, `gza clean`.

use std::process::Child;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::project::TestProject;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn three_workers_under_a_limit_of_two_never_run_more_than_two_agents() {
    let p = TestProject::new();
    let trail = p.scratch().join("trail");
    // Each agent notes when it starts and ends (nanoseconds), and runs for a moment.
    p.command_agent(
        &format!(
            "cat > /dev/null\necho \"start $(date +%s%N)\" >> {0}\nsleep 0.4\necho \"end $(date +%s%N)\" >> {0}\necho done\n",
            trail.display()
        ),
        "max_concurrent: 2\n",
    );
    for i in 0..9 {
        p.add(&[&format!("task {i}"), "--type", "explore"]);
    }
    let workers: Vec<Child> = (0..3)
        .map(|_| p.spawn(&["work", "--all", "--parallel", "2"]))
        .collect();
    let mut waited = false;
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        waited |= String::from_utf8_lossy(&out.stderr).contains("waiting for a free agent slot");
    }
    let mut events: Vec<(u128, i32)> = std::fs::read_to_string(&trail)
        .unwrap()
        .lines()
        .map(|l| {
            let (kind, t) = l.split_once(' ').unwrap();
            (t.parse().unwrap(), if kind == "start" { 1 } else { -1 })
        })
        .collect();
    // An end and a start at the same instant: the end first.
    events.sort();
    let (mut alive, mut most) = (0, 0);
    for (_, step) in &events {
        alive += step;
        most = most.max(alive);
    }
    assert_eq!(events.len(), 18, "every task ran once");
    assert!(most <= 2, "{most} agents ran at once");
    assert_eq!(most, 2, "the limit is used, not undershot");
    assert!(
        waited,
        "six workers for two slots: some waited, and said so"
    );
    let completed: i64 = p
        .db()
        .query_row(
            "SELECT COUNT(*) FROM tasks WHERE status = 'completed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(completed, 9);
}

/// Make task 1 look as if a worker elsewhere runs it: in progress under PID `pid`, with a lease
/// from PID namespace `ns` renewed `age` seconds ago.
fn claimed_elsewhere(p: &TestProject, pid: i64, ns: &str, age: f64) {
    let db = p.db();
    db.execute(
        "UPDATE tasks SET status = 'in_progress', running_pid = ?1, running_pid_start = 7, \
         started_at = '2026-01-01T00:00:00Z' WHERE id = 1",
        [pid],
    )
    .unwrap();
    db.execute(
        "INSERT INTO worker_leases (worker, pid, pid_ns, started_at, heartbeat_at) \
         VALUES (?4, ?1, ?2, ?3, ?3) \
         ON CONFLICT (worker) DO UPDATE SET pid_ns = excluded.pid_ns, heartbeat_at = excluded.heartbeat_at",
        rusqlite::params![pid, ns, now() - age, format!("{pid}:7")],
    )
    .unwrap();
}

#[test]
fn a_worker_in_another_pid_namespace_is_alive_while_its_lease_is_fresh() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho ok\n", "");
    p.add(&["run elsewhere"]);
    p.add(&["run here"]);
    // PID 4194000 is not visible here (or is someone else), but the worker's namespace is not
    // ours and it renewed its lease a second ago: it runs.
    claimed_elsewhere(&p, 4_194_000, "pid:[1]", 1.0);
    p.ok(&["work", "--all"]);
    assert_eq!(p.task_field::<String>(1, "status"), "in_progress");
    assert_eq!(p.task_field::<String>(2, "status"), "completed");
    // Its lease went stale: now the worker is gone, and only a command that changes the queue
    // says so (reading never reaps).
    claimed_elsewhere(&p, 4_194_000, "pid:[1]", 120.0);
    p.ok(&["history"]);
    p.ok(&["next"]);
    assert_eq!(p.task_field::<String>(1, "status"), "in_progress");
    p.ok(&["work"]);
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "WORKER_DIED");
}

#[test]
fn running_tasks_of_live_workers_count_against_the_limit() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho ok\n", "max_concurrent: 1\n");
    p.add(&["held by another worker"]);
    p.add(&["waits"]);
    claimed_elsewhere(&p, 4_194_000, "pid:[1]", 1.0);
    // The one slot is taken: the worker waits (and is stopped by Ctrl-C, leaving task 2 pending).
    let worker = p.spawn(&["work", "2"]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(p.task_field::<String>(2, "status"), "pending");
    // SAFETY: kill sends a signal.
    unsafe { libc::kill(worker.id() as i32, libc::SIGINT) };
    let out = worker.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("waiting for a free agent slot: 1 already run"),
        "{out:?}"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "stopped while waiting: {out:?}"
    );
    assert_eq!(p.task_field::<String>(2, "status"), "pending");
    // The other worker's lease goes stale: its slot frees and task 2 runs.
    claimed_elsewhere(&p, 4_194_000, "pid:[1]", 120.0);
    p.ok(&["work", "2"]);
    assert_eq!(p.task_field::<String>(2, "status"), "completed");
}

#[test]
fn parallel_is_bounded_and_nothing_is_claimed() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho ok\n", "");
    p.add(&["a"]);
    let err = p.user_error(&["work", "--parallel", "40000"]);
    assert!(
        err.contains("--parallel must be between 1 and 256"),
        "{err}"
    );
    assert_eq!(p.task_field::<String>(1, "status"), "pending");
}

fn finished_code_task(p: &TestProject, prompt: &str) -> (i64, String) {
    let id = p.add(&[prompt]);
    p.ok(&["work", &id.to_string()]);
    assert_eq!(p.task_field::<String>(id, "status"), "completed");
    (id, p.task_field(id, "worktree"))
}

#[test]
fn clean_removes_old_worktrees_and_logs_and_keeps_what_must_stay() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho \"$GZA_TASK_ID\" > \"f$GZA_TASK_ID.txt\"\necho ok\n",
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    let (old, old_wt) = finished_code_task(&p, "Old task");
    let (dirty, dirty_wt) = finished_code_task(&p, "Dirty task");
    let (used, used_wt) = finished_code_task(&p, "Task with a follow-up");
    let (recent, recent_wt) = finished_code_task(&p, "Recent task");
    // A follow-up waits to continue on `used`'s branch; someone left work in `dirty`'s worktree.
    p.add(&["Follow up", "--based-on", &used.to_string()]);
    std::fs::write(std::path::Path::new(&dirty_wt).join("notes.txt"), "mine").unwrap();
    p.db()
        .execute(
            "UPDATE tasks SET completed_at = '2020-01-01T00:00:00Z' WHERE id IN (?1, ?2, ?3)",
            [old, dirty, used],
        )
        .unwrap();
    let dry = p.run(&["clean", "--dry-run"]);
    assert_eq!(dry.code, 0, "{dry}");
    assert!(
        dry.stdout
            .contains(&format!("would remove {old_wt} (task {old})")),
        "{dry}"
    );
    assert!(
        dry.stdout.contains(
            "Would remove 1 worktree and 3 logs of tasks finished over 30 days ago; 2 kept"
        ),
        "{dry}"
    );
    assert!(
        dry.stderr.contains(&format!(
            "kept {dirty_wt} (task {dirty}): uncommitted changes (notes.txt)"
        )),
        "{dry}"
    );
    assert!(
        dry.stderr.contains(&format!(
            "kept {used_wt} (task {used}): task 5 (pending) uses it"
        )),
        "{dry}"
    );
    assert!(
        std::path::Path::new(&old_wt).is_dir(),
        "a dry run removes nothing"
    );

    let run = p.run(&["clean"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("Removed 1 worktree (their branches are kept) and 3 logs of tasks finished over 30 days ago; 2 kept"), "{run}");
    assert!(!std::path::Path::new(&old_wt).exists());
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&dirty_wt).join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(std::path::Path::new(&used_wt).is_dir());
    assert!(
        std::path::Path::new(&recent_wt).is_dir(),
        "finished a moment ago"
    );
    assert!(p.path(&format!(".gza/logs/{recent}.jsonl")).is_file());
    assert!(p.path(&format!(".gza/logs/{recent}.stderr.log")).is_file());
    assert!(!p.path(&format!(".gza/logs/{old}.jsonl")).exists());
    assert!(
        !p.path(&format!(".gza/logs/{old}.stderr.log")).exists(),
        "the agent's stderr goes with its log"
    );
    let log = p.run(&["log", &old.to_string()]);
    assert_eq!(log.code, 1, "{log}");
    assert!(
        log.stderr
            .contains("has no log: `gza clean` removes the logs of finished tasks"),
        "{log}"
    );
    assert!(
        p.git(&["branch", "--list", "gza/*"])
            .contains(&format!("gza/{old}-")),
        "branches stay"
    );
    // Dirty stays dirty even with --all.
    let all = p.run(&["clean", "--all"]);
    assert!(all.stderr.contains("uncommitted changes"), "{all}");
    assert!(std::path::Path::new(&dirty_wt).is_dir());
    assert!(!std::path::Path::new(&recent_wt).exists());
    let left: Vec<String> = std::fs::read_dir(p.path(".gza/logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".stderr.log") || n.ends_with(".jsonl"))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "clean --all leaves no task log");
}

#[test]
fn work_cleans_old_worktrees_when_it_starts_and_cleanup_days_zero_keeps_them() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho x > x.txt\necho ok\n",
        "cleanup_days: 0\n",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    let (id, wt) = finished_code_task(&p, "Old task");
    p.db()
        .execute(
            "UPDATE tasks SET completed_at = '2020-01-01T00:00:00Z' WHERE id = ?1",
            [id],
        )
        .unwrap();
    assert!(
        p.ok(&["clean"])
            .contains("Nothing to clean: cleanup_days is 0")
    );
    p.ok(&["work"]);
    assert!(std::path::Path::new(&wt).is_dir());
    let script = p.agent_script("cat > /dev/null\necho ok\n");
    p.config(&format!(
        "provider: command\nproviders:\n  command:\n    command: [sh, {script}]\ncleanup_days: 30\n"
    ));
    p.ok(&["work"]);
    assert!(!std::path::Path::new(&wt).exists());
}

#[test]
fn a_background_worker_runs_in_the_project_it_was_started_for() {
    let p = TestProject::new();
    let agent = p.agent_script("cat > /dev/null\necho ok\n");
    let config = format!("provider: command\nproviders:\n  command:\n    command: [sh, {agent}]\n");
    p.config(&config);
    p.add(&["outer task", "--type", "explore"]);
    // A project nested inside, and a subdirectory of it.
    std::fs::create_dir_all(p.path("inner/sub")).unwrap();
    p.ok(&["-C", "inner", "init"]);
    std::fs::write(p.path("inner/gza.yaml"), &config).unwrap();
    p.ok(&["-C", "inner", "trust", "--yes"]);
    p.ok(&["-C", "inner", "add", "inner task", "--type", "explore"]);
    // From inner/sub, `-C ..` is the inner project; -q twice is not an error.
    let started = p
        .command(&["-C", "..", "work", "--background", "-q"])
        .current_dir(p.path("inner/sub"))
        .output()
        .unwrap();
    assert!(started.status.success(), "{started:?}");
    let inner_db = p.db_at("inner");
    crate::support::project::wait_until(20, "the inner task to complete", || {
        inner_db
            .query_row("SELECT status FROM tasks WHERE id = 1", [], |r| {
                r.get::<String>(0)
            })
            .is_ok_and(|s| s == "completed")
    });
    assert_eq!(
        p.task_field::<String>(1, "status"),
        "pending",
        "the outer project is not touched"
    );
    // Two background workers started in the same second keep separate logs.
    p.add(&["another", "--type", "explore"]);
    for _ in 0..2 {
        p.ok(&["work", "--background"]);
    }
    crate::support::project::wait_until(20, "the outer tasks to finish", || {
        p.task_field::<String>(1, "status") == "completed"
            && p.task_field::<String>(2, "status") == "completed"
    });
    let logs = std::fs::read_dir(p.path(".gza/logs"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("worker-")
        })
        .count();
    assert_eq!(logs, 2);
}

#[test]
fn processes_starting_together_after_an_upgrade_migrate_once() {
    for round in 0..3 {
        let p = TestProject::empty_sqlite();
        std::fs::create_dir_all(p.path(".gza")).unwrap();
        std::fs::write(p.path("gza.yaml"), "").unwrap();
        {
            // A database as the first release of gza left it (gza always uses WAL).
            let mut db = rusqlite::Connection::open(p.path(".gza/gza.db")).unwrap();
            let _: String = db
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
                .unwrap();
            let first = refinery::Migration::unapplied(
                "V1__tasks_and_learnings_metadata",
                include_str!("../../migrations/V1__tasks_and_learnings_metadata.sql"),
            )
            .unwrap();
            refinery::Runner::new(&[first]).run(&mut db).unwrap();
            db.execute("INSERT INTO tasks (prompt) VALUES ('kept')", [])
                .unwrap();
        }
        let runs: Vec<Child> = (0..6).map(|_| p.spawn(&["history"])).collect();
        for run in runs {
            let out = run.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(p.ok(&["history"]).contains("kept"));
    }
}
