//! What team mode shows across machines (issue 21): the workers in `gza ps --json` and
//! `gza ps --workers`, and learnings edited in one clone's `.gza/learnings.md` seen by another
//! clone of the project.

use insta::assert_snapshot;

use crate::support::project::{TestProject, wait_until};

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// The JSON with what changes from run to run (host, PIDs, seconds) named instead.
fn steady(json: &serde_json::Value) -> String {
    fn walk(v: &mut serde_json::Value, host: &str) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    match k.as_str() {
                        "host" if x == host => *x = "[this host]".into(),
                        "pid" | "up_secs" | "last_beat_secs" if x.is_number() => {
                            *x = format!("[{k}]").into()
                        }
                        _ => walk(x, host),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|x| walk(x, host)),
            _ => {}
        }
    }
    let mut v = json.clone();
    walk(&mut v, &this_host());
    serde_json::to_string_pretty(&v).unwrap()
}

/// A worker running a task and one waiting for work: `ps --json` gives the running task's
/// worker beside its host (the task list keeps its shape), and `ps --workers --json` lists
/// both workers, the idle one too, on each backend.
#[test]
fn ps_json_names_each_running_tasks_worker_and_ps_workers_lists_every_live_worker() {
    for team in [true, false] {
        let p = if team {
            TestProject::empty_postgres()
        } else {
            TestProject::empty_sqlite()
        };
        p.ok(&["init"]);
        let marker = p.scratch().join("started");
        p.command_agent(
            &format!(
                "cat > /dev/null\ntouch {}\nsleep 60\necho done\n",
                marker.display()
            ),
            "",
        );
        p.add(&["a task to watch run"]);
        let mut busy = p.spawn(&["work"]);
        wait_until(30, "the agent to start", || marker.exists());
        let idle = p.spawn(&["work", "--watch"]);
        let idle_pid = idle.id();
        let leases = || -> i64 {
            p.db()
                .query_row("SELECT COUNT(*) FROM worker_leases", [], |r| r.get(0))
                .unwrap()
        };
        wait_until(30, "the idle worker to take its lease", || leases() >= 2);
        let ps = p.json(&["ps", "--json"]);
        let workers = p.json(&["ps", "--workers", "--json"]);
        let table = p.ok(&["ps", "--workers"]);
        let _ = p.run(&["kill", "1"]);
        let _ = busy.wait();
        unsafe { libc::kill(idle_pid as i32, libc::SIGTERM) };
        let _ = idle.wait_with_output();

        let list = workers.as_array().expect("a list of workers");
        assert_eq!(list.len(), 2, "{workers}");
        assert_eq!(list[0]["pid"], busy.id(), "{workers}");
        assert_eq!(list[1]["pid"], idle_pid, "{workers}");
        assert!(
            table.contains("HOST") && table.contains(&this_host()),
            "{table}"
        );
        assert!(table.contains(&idle_pid.to_string()), "{table}");
        assert_snapshot!("ps_workers_json", steady(&workers));
        let tasks = ps.as_array().expect("still a list of tasks");
        assert_eq!(tasks.len(), 1, "{ps}");
        assert_eq!(tasks[0]["id"], 1, "{ps}");
        if team {
            assert_eq!(tasks[0]["worker"]["pid"], busy.id(), "{ps}");
            assert_snapshot!("ps_json_task_worker", steady(&tasks[0]["worker"]));
        } else {
            // One machine: what solo scripts read is unchanged.
            assert!(tasks[0].get("worker").is_none(), "{ps}");
            assert!(tasks[0].get("host").is_none(), "{ps}");
        }
    }
}
