//! `next` and `stats` at scale: bounded counts and running totals, checked for what they print.

use crate::support::project::TestProject;

/// Insert `n` tasks straight into the database (as scripts/gen-bench-db does).
fn bulk_insert(p: &TestProject, n: usize, status: &str, depends_on: Option<i64>) {
    let db = p.db();
    db.execute_batch("BEGIN").unwrap();
    {
        let mut stmt = db
            .prepare("INSERT INTO tasks (prompt, status, depends_on) VALUES (?1, ?2, ?3)")
            .unwrap();
        for i in 0..n {
            stmt.execute(rusqlite::params![
                format!("bulk task {i}"),
                status,
                depends_on
            ])
            .unwrap();
        }
    }
    db.execute_batch("COMMIT").unwrap();
}

#[test]
fn next_counts_a_long_queue_only_up_to_a_cap() {
    let p = TestProject::new();
    bulk_insert(&p, 10_050, "pending", None);
    let blocker = p.add(&["the blocker"]);
    bulk_insert(&p, 3, "pending", Some(blocker));
    let out = p.ok(&["next", "-n", "5"]);
    assert!(out.contains("… 9995+ more ready (-n 0 lists all)"), "{out}");
    assert!(out.contains("(3 tasks blocked by dependencies"), "{out}");
    // A short queue is still counted exactly.
    let q = TestProject::new();
    bulk_insert(&q, 7, "pending", None);
    assert!(q.ok(&["next", "-n", "5"]).contains("… 2 more ready"));
}

/// Totals straight from the tasks table, to compare with what `stats` keeps running.
fn direct_totals(p: &TestProject) -> (i64, f64, i64, i64, f64) {
    p.db()
        .query_row(
            "SELECT COUNT(*), COALESCE(SUM(cost_usd), 0), CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT), \
             CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT), COALESCE(SUM(duration_seconds), 0) FROM tasks",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap()
}

#[test]
fn stats_running_totals_follow_every_change_to_a_task() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho done\n", "");
    p.add(&["one"]);
    p.add(&["two"]);
    p.add(&["three"]);
    p.ok(&["work"]);
    p.db()
        .execute(
            "UPDATE tasks SET cost_usd = 0.25, input_tokens = 100, output_tokens = 7 WHERE id = 1",
            [],
        )
        .unwrap();
    p.ok(&["retry", "1"]);
    p.ok(&["delete", "2", "--yes"]);
    let stats = p.json(&["stats", "--json"]);
    let (total, cost, tin, tout, dur) = direct_totals(&p);
    assert_eq!(stats["total"], total, "{stats}");
    assert_eq!(stats["by_status"]["completed"], 1, "{stats}");
    assert_eq!(stats["by_status"]["pending"], 2, "{stats}");
    assert!((stats["cost_usd"]["total"].as_f64().unwrap() - cost).abs() < 1e-9);
    assert_eq!(stats["tokens"]["input"], tin);
    assert_eq!(stats["tokens"]["output"], tout);
    assert!((stats["duration_seconds"]["total"].as_f64().unwrap() - dur).abs() < 1e-6);
}

/// Bytes `gza args` read through read()/pread() (SQLite's page reads among them), from the
/// I/O counters of a shell that has waited for it: the kernel adds a reaped child's counters
/// to its parent's. A work measure, not a time: it does not vary with the machine's load.
fn bytes_read_by(p: &TestProject, args: &str) -> u64 {
    let gza = p.command(&[]);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "before=$(sed -n 's/^rchar: //p' /proc/$$/io); \"$GZA\" {args} >/dev/null || exit 9; \
             after=$(sed -n 's/^rchar: //p' /proc/$$/io); echo $((after - before))"
        ))
        .current_dir(p.root())
        .env_clear()
        .envs(gza.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("GZA", gza.get_program())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn stats_reads_running_totals_not_every_task() {
    // What gza's own process reads of the file measures this on SQLite; on PostgreSQL the
    // server reads, and the shared transcript test checks stats reads `task_totals`.
    let p = TestProject::new_sqlite();
    {
        let db = p.db();
        db.execute_batch("BEGIN").unwrap();
        {
            let mut stmt = db
                .prepare(
                    "INSERT INTO tasks (prompt, status, output, cost_usd, input_tokens, \
                     output_tokens, duration_seconds) VALUES (?1, 'completed', ?2, 0.01, 100, 10, 3.0)",
                )
                .unwrap();
            let output = "x".repeat(2000);
            for i in 0..20_000 {
                stmt.execute(rusqlite::params![format!("bulk task {i}"), output])
                    .unwrap();
            }
        }
        db.execute_batch("COMMIT").unwrap();
        if db.is_postgres() {
            db.execute_batch("CHECKPOINT").unwrap();
        } else {
            db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        }
    }
    let db = p.db();
    let db_size: i64 = if db.is_postgres() {
        db.query_row("SELECT pg_total_relation_size('tasks')", [], |r| r.get(0))
            .unwrap()
    } else {
        std::fs::metadata(p.path(".gza/gza.db")).unwrap().len() as i64
    };
    assert!(db_size > 40_000_000, "{db_size}");
    let out = p.ok(&["stats"]);
    assert!(out.contains("20000") || out.contains("20,000"), "{out}");
    // Summing cost, tokens and duration over the tasks reads every page of the table; the
    // running totals are a few pages.
    let read = bytes_read_by(&p, "stats");
    assert!(
        read < db_size as u64 / 20,
        "gza stats read {read} bytes of a {db_size}-byte database"
    );
}
