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
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 completed, 0 failed"), "{stdout}\n{stderr}");
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
