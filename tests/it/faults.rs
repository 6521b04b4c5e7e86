//! Team mode's faults (issue 21): PostgreSQL restarted under running workers. Each test here
//! runs on a PostgreSQL cluster of its own (`Cluster::private`), whatever the suite's backend,
//! since restarting the shared one would cut off every other test's connections.

use crate::support::postgres::Cluster;
use crate::support::project::{TestProject, wait_until};

/// A project in a new database of `cluster`.
fn project_on(cluster: &Cluster) -> TestProject {
    let mut p = TestProject::empty_sqlite();
    let name = cluster.new_database();
    p.set_env("GZA_DATABASE_URL", &cluster.url(&name));
    p
}

/// How many times each task's agent started, from the lines the agent appends to `log`.
fn starts(log: &std::path::Path) -> std::collections::BTreeMap<i64, usize> {
    let mut runs = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        if let Some(id) = line.strip_prefix("start ") {
            *runs.entry(id.trim().parse::<i64>().unwrap()).or_default() += 1;
        }
    }
    runs
}

/// PostgreSQL restarts (every session ended) while a task's agent runs: the agent goes on, the
/// worker connects again and records the outcome once, claims the next task on the new
/// connection, and ends as if nothing happened. A watching worker then waits for work through a
/// second restart and is woken by a task added after it.
#[test]
fn postgresql_restarted_while_an_agent_runs_loses_nothing_and_records_once() {
    let cluster = Cluster::private();
    let mut p = project_on(&cluster);
    p.set_env("GZA_RECONNECT_SECONDS", "60");
    p.ok(&["init"]);
    let log = p.scratch().join("runs.log");
    let started = p.scratch().join("started");
    let release = p.scratch().join("release");
    p.command_agent(
        &format!(
            "cat > /dev/null\necho \"start $GZA_TASK_ID\" >> {log}\ntouch {started}\n\
             if [ \"$GZA_TASK_ID\" = 1 ]; then while [ ! -e {release} ]; do sleep 0.1; done; fi\n\
             echo \"the result of $GZA_TASK_ID\"\n",
            log = log.display(),
            started = started.display(),
            release = release.display()
        ),
        "",
    );
    let first = p.add(&["a task that runs across a restart"]);
    let second = p.add(&["the task after it"]);
    let worker = p.spawn(&["work", "--watch"]);
    wait_until(30, "the first agent to start", || started.exists());
    cluster.restart();
    std::fs::write(&release, "").unwrap();
    let status = |id: i64| p.task_field::<String>(id, "status");
    wait_until(60, "both tasks to be recorded", || {
        status(first) == "completed" && status(second) == "completed"
    });
    assert_eq!(
        p.task_field::<Option<String>>(first, "output").as_deref(),
        Some("the result of 1")
    );
    assert!(
        !p.path(&format!(".gza/logs/{first}.outcome.json")).exists(),
        "the kept outcome goes once the database has it"
    );
    // Idle, the worker listens for work; the server restarts under it; a task added after is
    // still found (woken, or at the latest by its recheck).
    std::thread::sleep(std::time::Duration::from_millis(500));
    cluster.restart();
    let third = p.add(&["a task added after the second restart"]);
    wait_until(45, "the task added after the restart to run", || {
        status(third) == "completed"
    });
    unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    let out = worker.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Stopped by SIGTERM: 130 (the README's exit codes), after its summary.
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("3 completed, 0 failed"),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("not recorded"), "{stderr}");
    let runs = starts(&log);
    assert_eq!(
        runs,
        [(first, 1), (second, 1), (third, 1)].into_iter().collect(),
        "each task ran once"
    );
    let stats = p.json(&["stats", "--json"]);
    assert_eq!(stats["by_status"]["completed"], 3, "{stats}");
}

/// A command started while PostgreSQL restarts (here a smart shutdown, held open by a session,
/// refusing new connections) waits for the restart instead of failing at once, and runs once
/// the server is back. Past `GZA_RECONNECT_SECONDS` it says in one line what is going on and
/// what to do, and has stored nothing. A hook never waits.
#[test]
fn a_command_started_while_postgresql_restarts_waits_for_it_and_says_so_in_one_line_when_it_gives_up()
 {
    let cluster = Cluster::private();
    let mut p = project_on(&cluster);
    p.ok(&["init"]);
    p.add(&["stored before the restart"]);
    let holder = cluster.admin();
    cluster.begin_smart_stop();
    let refusing = || {
        postgres::Client::connect(
            &format!(
                "host=127.0.0.1 port={} user=gza dbname=postgres",
                cluster.port
            ),
            postgres::NoTls,
        )
        .err()
        .and_then(|e| e.code().cloned())
            == Some(postgres::error::SqlState::CANNOT_CONNECT_NOW)
    };
    wait_until(30, "the server to refuse new connections", refusing);

    // Out of patience: one line, nothing stored.
    p.set_env("GZA_RECONNECT_SECONDS", "1.5");
    let t = std::time::Instant::now();
    let run = p.run(&["add", "not stored while the server shuts down"]);
    let waited = t.elapsed();
    assert_ne!(run.code, 0, "{run}");
    let err = run.stderr;
    assert!(
        waited >= std::time::Duration::from_millis(1000),
        "gave up after {waited:?} without waiting"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("is not taking connections: the database system is shutting down")
            && err.contains("try again once it is up"),
        "{err}"
    );
    // A hook is never held up by it: it answers within its budget.
    let t = std::time::Instant::now();
    let mut hook = p
        .command(&["hook", "session-start"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let event = serde_json::json!({"hook_event_name": "SessionStart", "cwd": p.root()});
        let mut stdin = hook.stdin.take().unwrap();
        stdin.write_all(event.to_string().as_bytes()).unwrap();
    }
    let hook = hook.wait_with_output().unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_secs(1),
        "the hook waited {:?}: {}",
        t.elapsed(),
        String::from_utf8_lossy(&hook.stderr)
    );
    assert_eq!(hook.status.code(), Some(0));

    // Within its patience: it waits through the shutdown and the start, then runs.
    p.set_env("GZA_RECONNECT_SECONDS", "60");
    let waiting = p.spawn(&["add", "stored once the server is back"]);
    std::thread::sleep(std::time::Duration::from_millis(800));
    drop(holder);
    cluster.start_again();
    let out = waiting.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prompts: Vec<String> = p
        .db()
        .prepare("SELECT prompt FROM tasks ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        prompts,
        [
            "stored before the restart",
            "stored once the server is back"
        ]
    );
}

/// `cmd` run by bubblewrap in a PID namespace of its own (the file system, network and user
/// shared): to other workers it is on another machine as far as PIDs go. Killing the returned
/// process (bubblewrap's) ends everything in the namespace, as a machine's power cut would.
fn in_own_pid_namespace(cmd: &std::process::Command) -> std::process::Command {
    let mut wrapped = std::process::Command::new("bwrap");
    wrapped
        .args([
            "--dev-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--unshare-pid",
            "--die-with-parent",
            "--",
        ])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            wrapped.env(k, v);
        }
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// A storm: `clones` clones of one bare `origin` (each with its own HOME), eight watching
/// workers among them, 300 tasks of a quick agent, workers killed with SIGKILL one after
/// another and started again, and (on PostgreSQL) the server restarted once mid-way. The
/// operator queues again what a dead worker left (`gza retry`, for tasks failed `WORKER_DIED`).
/// In the end no task is lost (each of the 300 completed, itself or through its retries), none
/// ran twice (each agent appends its start to one log), and nothing failed any other way. On
/// PostgreSQL every worker runs in a PID namespace of its own.
fn storm(cluster: Option<&Cluster>, clones: usize) {
    const TASKS: usize = 300;
    const WORKERS: usize = 8;
    let origin = tempfile::Builder::new()
        .prefix("gza-origin")
        .tempdir()
        .unwrap();
    let bare = origin.path().join("app.git");
    let status = std::process::Command::new("git")
        .args(["init", "--quiet", "--bare", "--initial-branch=main"])
        .arg(&bare)
        .status()
        .unwrap();
    assert!(status.success());
    let bare = bare.to_str().unwrap().to_string();
    let database = cluster.map(|c| c.url(&c.new_database()));
    let log = origin.path().join("runs.log");
    let mut projects: Vec<TestProject> = Vec::new();
    for n in 0..clones {
        let mut p = TestProject::empty_sqlite();
        if let Some(url) = &database {
            p.set_env("GZA_DATABASE_URL", url);
        }
        if n == 0 {
            p.git(&["init", "--quiet", "--initial-branch=main"]);
            std::fs::write(p.path("README.md"), "# the shared repository\n").unwrap();
            p.git(&["add", "--all"]);
            p.git(&["commit", "--quiet", "-m", "initial"]);
            p.git(&["remote", "add", "origin", &bare]);
            p.git(&["push", "--quiet", "origin", "main"]);
        } else {
            p.git(&["clone", "--quiet", &bare, "."]);
        }
        p.command_agent(
            &format!(
                "cat > /dev/null\necho \"start $GZA_TASK_ID\" >> {log}\n\
                 echo \"$GZA_TASK_ID\" > \"task-$GZA_TASK_ID.txt\"\nsleep 0.3\necho done\n",
                log = log.display()
            ),
            "max_concurrent: 8\n",
        );
        p.ok(&["init"]);
        projects.push(p);
    }
    let mut file = String::from("tasks:\n");
    for i in 1..=TASKS {
        file.push_str(&format!("  - prompt: storm task {i}\n"));
    }
    std::fs::write(projects[0].scratch().join("tasks.yaml"), file).unwrap();
    let tasks_file = projects[0].scratch().join("tasks.yaml");
    projects[0].ok(&["import", tasks_file.to_str().unwrap()]);

    let spawn = |n: usize| -> std::process::Child {
        let p = &projects[n % clones];
        let err = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p.scratch().join(format!("worker-{n}.err")))
            .unwrap();
        let worker = p.command(&["work", "--watch"]);
        // On PostgreSQL each worker is a machine of its own: its own PID namespace, where a
        // PID of another's means nothing, so only an expired lease reaps what it left.
        let mut worker = if cluster.is_some() {
            in_own_pid_namespace(&worker)
        } else {
            worker
        };
        worker
            .stdout(std::process::Stdio::null())
            .stderr(err)
            .spawn()
            .unwrap()
    };
    let mut workers: Vec<std::process::Child> = (0..WORKERS).map(spawn).collect();
    // A connection of its own for each look, so the oracle needs nothing of what is tested.
    let count = |status: &str| -> i64 {
        projects[0]
            .db()
            .query_row(
                "SELECT COUNT(*) FROM tasks WHERE status = ?1",
                [status],
                |r| r.get(0),
            )
            .unwrap()
    };
    let started = std::time::Instant::now();
    let mut last_kill = std::time::Instant::now();
    let (mut kills, mut restarted, mut requeued) = (0usize, cluster.is_none(), 0usize);
    let mut spawned_at = [std::time::Instant::now(); WORKERS];
    let mut respawned_after_restart = [false; WORKERS];
    let mut restart_done: Option<std::time::Instant> = None;
    loop {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(240),
            "the storm did not settle: {} pending, {} in progress, {} completed",
            count("pending"),
            count("in_progress"),
            count("completed")
        );
        // A worker ends only when killed: one that gave up on its own (the database it lost
        // at the restart, say) is a fault of its own. The one exception is the rule for a
        // worker that starts while the database is down (one line, nothing claimed): a worker
        // respawned just before the restart may still be opening its store when the server
        // goes away, and is started again, as a supervisor would.
        for n in 0..workers.len() {
            if let Some(exit) = workers[n].try_wait().unwrap() {
                let err = std::fs::read_to_string(
                    projects[n % clones]
                        .scratch()
                        .join(format!("worker-{n}.err")),
                )
                .unwrap_or_default();
                let started_in_the_restart = restart_done.is_some_and(|done| spawned_at[n] <= done)
                    && err.trim_end().ends_with(
                        "check that it runs and the database setting (or GZA_DATABASE_URL) names it",
                    )
                    && err.contains("cannot reach PostgreSQL");
                if !started_in_the_restart || respawned_after_restart[n] {
                    // What the clone's workers traced (warnings among them) says which step
                    // gave up.
                    let log =
                        std::fs::read_to_string(projects[n % clones].path(".gza/logs/work.log"))
                            .unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(60).collect();
                    let tail: Vec<&str> = tail.into_iter().rev().collect();
                    panic!(
                        "worker {n} ended on its own ({exit}): {err}\nthe clone's work.log ends:\n{}",
                        tail.join("\n")
                    );
                }
                respawned_after_restart[n] = true;
                workers[n] = spawn(n);
                spawned_at[n] = std::time::Instant::now();
            }
        }
        if kills < 16 && last_kill.elapsed() >= std::time::Duration::from_millis(700) {
            let n = (kills * 5) % WORKERS;
            unsafe { libc::kill(workers[n].id() as i32, libc::SIGKILL) };
            let _ = workers[n].wait();
            workers[n] = spawn(n);
            spawned_at[n] = std::time::Instant::now();
            kills += 1;
            last_kill = std::time::Instant::now();
        }
        if !restarted && count("completed") >= 100 {
            cluster.unwrap().restart();
            restarted = true;
            restart_done = Some(std::time::Instant::now());
        }
        if kills >= 16 && restarted && count("pending") == 0 && count("in_progress") == 0 {
            // What dead workers left is queued again, as an operator would.
            let orphans: Vec<i64> = projects[0]
                .db()
                .prepare(
                    "SELECT t.id FROM tasks t WHERE t.status = 'failed' \
                     AND t.failure_reason = 'WORKER_DIED' \
                     AND NOT EXISTS (SELECT 1 FROM tasks f WHERE f.based_on = t.id) ORDER BY t.id",
                )
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            if orphans.is_empty() {
                break;
            }
            for id in orphans {
                projects[id as usize % clones].ok(&["retry", &id.to_string()]);
                requeued += 1;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    for w in &workers {
        unsafe { libc::kill(w.id() as i32, libc::SIGTERM) };
    }
    for mut w in workers {
        let _ = w.wait();
    }
    // Every task as it ended: (status, failure reason, the task it retries).
    let oracle = projects[0].db();
    let rows: Vec<(i64, String, Option<String>, Option<i64>)> = oracle
        .prepare("SELECT id, status, failure_reason, based_on FROM tasks ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let runs = starts(&log);
    let mut retried_by = std::collections::HashMap::new();
    for (id, _, _, based_on) in &rows {
        if let Some(b) = based_on {
            assert!(
                retried_by.insert(*b, *id).is_none(),
                "task {b} was queued again twice"
            );
        }
    }
    let ended: std::collections::HashMap<i64, (String, Option<String>)> = rows
        .iter()
        .map(|(id, s, r, _)| (*id, (s.clone(), r.clone())))
        .collect();
    for (id, status, reason, _) in &rows {
        let ran = runs.get(id).copied().unwrap_or(0);
        assert!(ran <= 1, "task {id} ran {ran} times");
        match status.as_str() {
            "completed" => assert_eq!(ran, 1, "task {id} completed without its agent running"),
            "failed" => assert_eq!(
                reason.as_deref(),
                Some("WORKER_DIED"),
                "task {id} failed otherwise than by its worker's death: {:?}",
                oracle
                    .query_row("SELECT output FROM tasks WHERE id = ?1", [id], |r| r
                        .get::<Option<String>>(0))
                    .unwrap()
            ),
            other => panic!("task {id} ended {other}"),
        }
    }
    for id in 1..=TASKS as i64 {
        let mut at = id;
        while ended[&at].0 != "completed" {
            at = *retried_by
                .get(&at)
                .unwrap_or_else(|| panic!("task {id} was lost: {at} failed and was not retried"));
        }
    }
    // In team mode every completed task's branch is on origin (pushed before its outcome was
    // recorded), so any clone can review or merge it.
    if cluster.is_some() {
        let heads = projects[0].git(&["ls-remote", "--heads", "origin"]);
        let branches: Vec<(i64, Option<String>)> = oracle
            .prepare("SELECT id, branch FROM tasks WHERE status = 'completed' ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (id, branch) in branches {
            let branch = branch.unwrap_or_else(|| panic!("completed task {id} has no branch"));
            assert!(
                heads.contains(&format!("refs/heads/{branch}\n")),
                "task {id}'s branch {branch} is not on origin"
            );
        }
    }
    eprintln!(
        "storm: {} tasks, {kills} workers killed, {requeued} queued again, {} s",
        rows.len(),
        started.elapsed().as_secs()
    );
    drop(oracle);
}

/// The storm on the suite's backend. On PostgreSQL (its own cluster): three clones of one
/// `origin` sharing one project, and the server restarted once mid-way. On SQLite, where a
/// project's records are one clone's file: the eight workers in one clone, killed as often.
#[test]
fn a_storm_of_killed_workers_and_a_restarted_postgresql_loses_no_task_and_runs_none_twice() {
    if crate::support::project::on_postgres() {
        let cluster = Cluster::private();
        storm(Some(&cluster), 3);
    } else {
        storm(None, 1);
    }
}
