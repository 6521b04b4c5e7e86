//! `gza import` of Python gza's task files: mapping, idempotence, refusals, and size.

use insta::assert_snapshot;

use crate::support::project::TestProject;

const FILE: &str = r#"# A task file as gza-agent's `gza import` reads it.
group: auth
spec: SPEC.md
tasks:
  - prompt: Add the login endpoint
    review: true
  - prompt: Document the login endpoint
    type: task
    depends_on: 1
    group: docs
    spec: null
  - prompt: Explore token storage
    type: explore
    depends_on: 4
  - prompt: Plan the session model
    type: plan
  - prompt: Address the review
    type: improve
  - prompt: Test after the improvement
    depends_on: 5
"#;

/// id, type, group, spec, depends_on, based_on.
type Row = (
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<i64>,
);

fn ids(p: &TestProject, sql: &str) -> Vec<Option<i64>> {
    let db = p.db();
    let mut stmt = db.prepare(sql).unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn a_python_gza_task_file_is_queued_with_types_groups_specs_and_dependencies() {
    let p = TestProject::new();
    std::fs::write(p.path("SPEC.md"), "the spec\n").unwrap();
    std::fs::write(p.path("tasks.yaml"), FILE).unwrap();
    assert_snapshot!("import", p.run(&["import", "tasks.yaml"]).to_string());
    let rows: Vec<Row> = {
        let db = p.db();
        let mut stmt = db
            .prepare(
                "SELECT id, task_type, group_name, spec, depends_on, based_on FROM tasks ORDER BY id",
            )
            .unwrap();
        stmt.query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
    };
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        rows,
        vec![
            (1, "implement".into(), s("auth"), s("SPEC.md"), None, None),
            (2, "implement".into(), s("docs"), None, Some(1), None),
            (3, "explore".into(), s("auth"), s("SPEC.md"), Some(4), None),
            (4, "plan".into(), s("auth"), s("SPEC.md"), None, None),
            // The review of entry 1 runs after it, based on it, as `gza review 1` would make it.
            (5, "review".into(), s("auth"), None, Some(1), Some(1)),
        ]
    );
    assert_snapshot!("import_next", p.run(&["next", "--all"]).to_string());

    // The same file again queues nothing.
    let before = p.dump();
    assert_snapshot!("import_again", p.run(&["import", "tasks.yaml"]).to_string());
    assert_eq!(p.dump(), before);

    // A new entry is queued alone; its dependency on an imported entry finds that task.
    std::fs::write(
        p.path("tasks.yaml"),
        format!("{FILE}  - prompt: Rate-limit the login endpoint\n    depends_on: 1\n"),
    )
    .unwrap();
    let out = p.ok(&["import", "tasks.yaml"]);
    assert!(out.contains("Queued 1 task(s) from tasks.yaml: 6"), "{out}");
    assert!(out.contains("4 were queued by an earlier import"), "{out}");
    assert_eq!(
        ids(&p, "SELECT depends_on FROM tasks WHERE id = 6"),
        vec![Some(1)]
    );
}

#[test]
fn an_imported_review_runs_after_its_task_and_records_a_verdict() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho hi > hi.txt\nprintf 'Done.\\n\\n## Verdict\\nAPPROVED\\n'\n",
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    std::fs::write(
        p.scratch().join("t.yaml"),
        "tasks:\n  - prompt: Say hi\n    review: true\n",
    )
    .unwrap();
    let file = p.scratch().join("t.yaml");
    p.ok(&["import", file.to_str().unwrap()]);
    let run = p.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(p.task_field::<String>(2, "review_verdict"), "APPROVED");
    assert!(
        p.ok(&["show", "1"])
            .contains("Reviews:        task 2 APPROVED")
    );
}

#[test]
fn a_file_with_problems_queues_nothing_and_says_what_is_wrong() {
    let p = TestProject::new();
    p.add(&["already here"]);
    let before = p.dump();
    let cases = [
        (
            "unknown_type",
            "tasks:\n  - prompt: a\n    type: implemnt\n",
        ),
        (
            "cycle",
            "tasks:\n  - prompt: a\n    depends_on: 2\n  - prompt: b\n    depends_on: 1\n",
        ),
        ("unknown_key", "tasks:\n  - prompt: a\n    priority: high\n"),
        ("not_a_list", "tasks: do everything\n"),
        ("no_tasks", "group: g\n"),
        ("bad_yaml", "tasks:\n  - prompt: [unclosed\n"),
        ("missing_spec", "tasks:\n  - prompt: a\n    spec: nope.md\n"),
        (
            "several",
            "tasks:\n  - prompt: ''\n  - prompt: b\n    depends_on: 7\n  - prompt: c\n    type: bogus\n",
        ),
    ];
    for (name, text) in cases {
        std::fs::write(p.path("bad.yaml"), text).unwrap();
        assert_snapshot!(
            format!("import_{name}"),
            p.user_error(&["import", "bad.yaml"])
        );
    }
    assert!(
        p.user_error(&["import", "missing.yaml"])
            .contains("import file missing.yaml does not exist")
    );
    // --dry-run lists every problem.
    let run = p.run(&["import", "bad.yaml", "--dry-run"]);
    assert_eq!(run.code, 1, "{run}");
    assert_snapshot!("import_dry_run_problems", run.to_string());
    assert_eq!(p.dump(), before);
}

#[test]
fn dry_run_shows_the_plan_and_queues_nothing() {
    let p = TestProject::new();
    std::fs::write(p.path("SPEC.md"), "the spec\n").unwrap();
    std::fs::write(p.path("tasks.yaml"), FILE).unwrap();
    assert_snapshot!(
        "import_dry_run",
        p.run(&["import", "tasks.yaml", "--dry-run"]).to_string()
    );
    assert_eq!(p.ok(&["next"]), "No pending tasks\n");
}

#[test]
fn ten_thousand_tasks_import_once_and_quickly() {
    let p = TestProject::new();
    let mut text = String::from("group: bulk\ntasks:\n");
    for i in 1..=10_000 {
        text.push_str(&format!("  - prompt: \"Task number {i}: do the thing\"\n"));
        // Every tenth task waits for the one before; every hundredth for a later one.
        if i % 100 == 0 && i < 10_000 {
            text.push_str(&format!("    depends_on: {}\n", i + 1));
        } else if i % 10 == 0 {
            text.push_str(&format!("    depends_on: {}\n", i - 1));
        }
    }
    std::fs::write(p.path("bulk.yaml"), text).unwrap();
    let started = std::time::Instant::now();
    let out = p.ok(&["import", "bulk.yaml"]);
    let first = started.elapsed();
    assert!(
        out.contains("Queued 10000 task(s) from bulk.yaml: 1-10000"),
        "{out}"
    );
    let started = std::time::Instant::now();
    let again = p.ok(&["import", "bulk.yaml"]);
    let second = started.elapsed();
    assert!(again.contains("Nothing new to queue"), "{again}");
    // A debug build on a shared 2-core machine: generous bounds that still catch quadratic work.
    assert!(first.as_secs_f64() < 10.0, "first import took {first:?}");
    assert!(second.as_secs_f64() < 10.0, "second import took {second:?}");
    assert_eq!(
        ids(
            &p,
            "SELECT depends_on FROM tasks WHERE id IN (10, 100, 101)"
        ),
        vec![Some(9), Some(101), None]
    );
    let count = ids(&p, "SELECT COUNT(*) FROM tasks");
    assert_eq!(count, vec![Some(10_000)]);
}

/// Python gza writes `depends_on` as a list: a list of one is that task.
#[test]
fn depends_on_as_a_list_of_one_is_read() {
    let p = TestProject::new();
    std::fs::write(
        p.path("tasks.yaml"),
        "tasks:\n  - prompt: first\n  - prompt: second\n    depends_on: [1]\n",
    )
    .unwrap();
    p.ok(&["import", "tasks.yaml"]);
    assert_eq!(p.json(&["show", "2", "--json"])["depends_on"], 1);
    std::fs::write(
        p.path("more.yaml"),
        "tasks:\n  - prompt: a\n  - prompt: b\n  - prompt: c\n    depends_on: [1, 2]\n",
    )
    .unwrap();
    let err = p.user_error(&["import", "more.yaml"]);
    assert!(
        err.contains("depends_on lists 2 entries, and a gza task waits for one"),
        "{err}"
    );
}

/// A path that is not a file of text (a FIFO, a device) is refused in one line at once (both
/// blocked forever); a file larger than any task list is refused unread; and a parse error
/// quotes at most a short excerpt of the file (a 1 MB line came back whole). Nothing is queued.
#[test]
fn a_fifo_a_device_or_a_huge_file_is_refused_in_one_short_line() {
    let p = TestProject::new();
    let before = p.dump();
    let fifo = p.scratch().join("tasks.yaml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let fifo = fifo.to_string_lossy().into_owned();
    let err = p.user_error_within(20, &["import", &fifo], None);
    assert!(
        err.contains("is a FIFO (named pipe), not a regular file"),
        "{err}"
    );
    let err = p.user_error_within(20, &["import", "/dev/zero"], None);
    assert!(
        err.contains("import file /dev/zero is a device, not a regular file"),
        "{err}"
    );
    let err = p.user_error_within(20, &["import", "--dry-run", "/dev/zero"], None);
    assert!(err.contains("is a device"), "{err}");

    std::fs::write(p.path("huge.yaml"), "x".repeat(5 << 20)).unwrap();
    let err = p.user_error(&["import", "huge.yaml"]);
    assert!(err.contains("is 5242880 bytes, more than the"), "{err}");
    assert!(err.len() < 200, "{err}");

    std::fs::write(p.path("line.yaml"), "y".repeat(1 << 20)).unwrap();
    let err = p.user_error(&["import", "line.yaml"]);
    assert!(
        err.len() < 400,
        "{} bytes: {}",
        err.len(),
        &err[..400.min(err.len())]
    );
    assert!(err.contains(&format!("\"{}…\"", "y".repeat(100))), "{err}");
    assert_eq!(p.dump(), before);
}
