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
        let (p, mut busy) = crate::team::with_a_running_task(team);
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

/// Two clones of one repository on one shared database.
fn two_clones() -> (TestProject, TestProject) {
    let first = TestProject::empty_postgres();
    let second = TestProject::empty_sharing(&first);
    for p in [&first, &second] {
        p.git(&["init", "--quiet", "--initial-branch=main"]);
        p.git(&[
            "remote",
            "add",
            "origin",
            "git@github.com:acme/learn-together.git",
        ]);
        p.ok(&["init"]);
    }
    (first, second)
}

fn edit_file(p: &TestProject, edit: impl FnOnce(String) -> String) {
    let path = p.path(".gza/learnings.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(&path, edited).unwrap();
}

/// Each clone's `.gza/learnings.md` is its view of one record set: a line changed, added or
/// deleted in one clone's file becomes a record change the other clone lists, finds by search
/// and writes into its own file when it regenerates; an edit made meanwhile to the other's
/// older view adds to those changes and undoes none of them.
#[test]
fn an_edit_in_one_clones_learnings_file_is_a_record_change_the_other_clone_sees() {
    let (first, second) = two_clones();
    first.ok(&["learnings", "add", "Use pytest -q before finishing"]);
    first.ok(&[
        "learnings",
        "add",
        "Handlers live in api/, one module per resource",
    ]);
    first.ok(&["learnings", "update"]);
    second.ok(&["learnings", "update"]);
    let second_view = std::fs::read_to_string(second.path(".gza/learnings.md")).unwrap();
    assert!(
        second_view.contains("Handlers live in api/"),
        "{second_view}"
    );

    // In the first clone: one line reworded, one deleted, one added.
    edit_file(&first, |t| {
        t.replace(
            "- Use pytest -q before finishing",
            "- Use pytest -q -x before finishing",
        )
        .replace(
            "- Handlers live in api/, one module per resource <!-- L2 -->\n",
            "- Always run cargo fmt before committing\n",
        )
    });
    // Any command that reads learnings takes the edits in.
    let found = first.ok(&["learnings", "search", "pytest"]);
    assert!(found.contains("pytest -q -x"), "{found}");

    // The second clone sees the records as changed.
    let listed = second.ok(&["learnings", "show", "--all"]);
    assert!(
        listed.contains("L1    Use pytest -q -x before finishing"),
        "{listed}"
    );
    assert!(
        listed.contains("L2    Handlers live in api/, one module per resource [user · archived]"),
        "{listed}"
    );
    assert!(
        listed.contains("L3    Always run cargo fmt before committing"),
        "{listed}"
    );
    let found = second.ok(&["learnings", "search", "cargo fmt"]);
    assert!(found.starts_with("L3 "), "{found}");
    let shown = second.ok(&["learnings", "show", "L2"]);
    assert!(shown.contains("archived"), "{shown}");

    // Its own, older view is edited too (a line added) before it regenerates: the first
    // clone's changes stand.
    let stale = std::fs::read_to_string(second.path(".gza/learnings.md")).unwrap();
    assert!(stale.contains("Handlers live in api/"), "{stale}");
    std::fs::write(
        second.path(".gza/learnings.md"),
        format!("{stale}- Never commit .env files\n"),
    )
    .unwrap();
    second.ok(&["learnings", "update"]);
    let view = std::fs::read_to_string(second.path(".gza/learnings.md")).unwrap();
    assert!(
        view.contains("- Use pytest -q -x before finishing <!-- L1 -->"),
        "{view}"
    );
    assert!(!view.contains("Handlers live in api/"), "{view}");
    assert!(
        view.contains("- Always run cargo fmt before committing <!-- L3 -->"),
        "{view}"
    );
    assert!(
        view.contains("- Never commit .env files <!-- L4 -->"),
        "{view}"
    );

    // And back: the first clone's next view has the second's line.
    first.ok(&["learnings", "update"]);
    let view = std::fs::read_to_string(first.path(".gza/learnings.md")).unwrap();
    assert!(
        view.contains("- Never commit .env files <!-- L4 -->"),
        "{view}"
    );
    assert!(!view.contains("Handlers live in api/"), "{view}");
}
