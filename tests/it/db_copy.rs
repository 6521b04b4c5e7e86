//! `gza db copy --to URL` (issue 21, "moving in"): a project's SQLite records into its project in
//! a shared PostgreSQL database. The copies go into databases of the test cluster whatever the
//! suite's backend (the source is always a SQLite project), so every test here runs, and
//! checks the copy, in both passes.

use std::collections::BTreeMap;

use crate::support::postgres;
use crate::support::project::{TestProject, wait_until};

/// A SQLite project in a git repository whatever the suite's backend, with an agent that
/// completes every task.
fn sqlite_project() -> TestProject {
    let mut p = TestProject::empty_sqlite();
    p.git(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(p.path("README.md"), "# moving in\n").unwrap();
    p.ok(&["init"]);
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "initial"]);
    p.use_model();
    p.command_agent(
        "cat > /dev/null\necho \"agent ran $GZA_TASK_ID\" > \"out-$GZA_TASK_ID.txt\"\necho 'done: ünïcode ✓ 日本語 🚀'\n",
        "",
    );
    p
}

/// A new database in the test cluster, and its URL (no password: trust on loopback).
fn new_target() -> (String, String) {
    let cluster = postgres::cluster();
    let name = cluster.new_database();
    let url = cluster.url(&name);
    (name, url)
}

/// Run `args` in `p` against the PostgreSQL database at `url` instead of its SQLite file.
fn on_pg(p: &TestProject, url: &str, args: &[&str]) -> crate::support::project::Run {
    let out = p
        .command(args)
        .env("GZA_DATABASE_URL", url)
        .output()
        .unwrap();
    p.finish(out)
}

/// Every copied table's rows, each value as it reads, keyed by table: what a lossless copy
/// keeps. Columns are SQLite's (those the target keeps of its own, and `rank_generation`, a
/// counter each database keeps, are left out).
fn contents(
    store: &gza::store::Store,
    sqlite: &gza::store::Store,
) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for (table, _) in gza::store::COPIED_TABLES {
        let columns: Vec<String> = sqlite
            .db()
            .query_map(
                "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
                &[&table as &dyn gza::store::db::ToParam],
                |r| r.get(0),
            )
            .unwrap()
            .into_iter()
            .filter(|c: &String| !(table == "learnings" && c == "rank_generation"))
            .collect();
        let list: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
        let sql = format!(
            "SELECT {} FROM {table} ORDER BY {}",
            list.join(", "),
            (1..=columns.len())
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let rows = store
            .db()
            .query_map(&sql, &[], |r| {
                let mut line = String::new();
                for i in 0..columns.len() {
                    line.push_str(&format!("{:?}|", r.value(i)?));
                }
                Ok(line)
            })
            .unwrap();
        out.insert(table.to_string(), rows);
    }
    out
}

fn open(database: &gza::database::Database) -> gza::store::Store {
    gza::store::Store::open_database(database).unwrap()
}

fn pg_database(p: &TestProject, url: &str) -> gza::database::Database {
    let name = std::fs::read_to_string(p.path(".gza/project"))
        .map(|n| n.trim().to_string())
        .unwrap_or_else(|_| gza::database::default_project_name(p.root()));
    gza::database::Database::Postgres {
        spec: Box::new(gza::database::DatabaseSpec::parse(url, None).unwrap()),
        project: name,
    }
}

/// What `gza db copy` printed, as (table → (rows, copied, already there)).
fn counts(stdout: &str) -> BTreeMap<String, (u64, u64, u64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 4 && w[1].parse::<u64>().is_ok()).then(|| {
                (
                    w[0].to_string(),
                    (
                        w[1].parse().unwrap(),
                        w[2].parse().unwrap(),
                        w[3].parse().unwrap(),
                    ),
                )
            })
        })
        .collect()
}

/// Fill the project with what a few days of work leave: tasks run and failed, tags,
/// comments, learnings with embeddings, ratings, edits and archives, a regeneration, and rows
/// the tables no command here reaches yet (A/B runs, verifications, extractions) hold.
fn fill(p: &TestProject) -> i64 {
    p.ok(&[
        "learnings",
        "add",
        "Run `pytest -q` before finishing ✓ 日本語",
    ]);
    p.ok(&[
        "learnings",
        "add",
        "Handlers live in api/, one module per resource",
    ]);
    p.ok(&["learnings", "add", "A learning to archive later"]);
    // Rated as someone (a rating with no identity is refused).
    let rated = p
        .command(&["learnings", "rate", "L1", "up", "--why", "saved a retry"])
        .env("USER", "tester")
        .output()
        .unwrap();
    assert!(rated.status.success(), "{rated:?}");
    p.ok(&["learnings", "archive", "L3"]);
    let first = p.add(&["Add a health-check endpoint ✓ ünïcode 🚀"]);
    p.add(&["--type", "explore", "Why is the nightly export slow?"]);
    let third = p.add(&["Paginate the /users endpoint"]);
    p.ok(&["edit", &third.to_string(), "--tag", "backend"]);
    p.ok(&[
        "comment",
        &first.to_string(),
        "please keep the handler small — merci",
    ]);
    p.ok(&["work", "--all"]);
    // A task that depends on a later one (ids need not be in dependency order).
    let waits = p.add(&["Waits for the next one"]);
    let later = p.add(&["Runs first"]);
    p.ok(&[
        "edit",
        &waits.to_string(),
        "--depends-on",
        &later.to_string(),
    ]);
    let db = p.db();
    // A large unicode text: a megabyte of output.
    let big: String = "ünïcode ✓ 日本語 🚀 line\n".repeat(40_000);
    db.execute(
        "UPDATE tasks SET output = ?1 WHERE id = ?2",
        [&big as &dyn rusqlite::ToSql, &first],
    )
    .unwrap();
    // Rows of tables the commands above do not reach.
    db.execute_batch(&format!(
        "INSERT INTO verifications (task_id, commit_sha, command, status, exit_code, output_tail, duration_seconds, created_at) \
           VALUES ({first}, 'abc123', 'cargo test', 'passed', 0, 'ok ✓', 1.25, '2026-11-20T10:00:00Z');
         INSERT INTO ab_experiments (id, created_at, base_commit, base_name, repeats, verify) \
           VALUES (1, '2026-11-20T10:00:00Z', 'abc123', 'main', 1, 0);
         INSERT INTO ab_runs (experiment, item, round, arm, task_id, source_task, verified) \
           VALUES (1, 0, 0, 'with', {first}, NULL, 'passed');
         INSERT INTO ab_runs (experiment, item, round, arm, task_id, source_task, verified) \
           VALUES (1, 0, 0, 'without', {third}, NULL, NULL);
         INSERT INTO branch_pushes (branch, task_id, host, pushed_tip, error, at) \
           VALUES ('gza/1-first', {first}, 'laptop-é', 'abc123', 'rejected: ✗ non-fast-forward', '2026-11-20T10:00:00Z');
         INSERT INTO session_extractions (session_id, provider, model, extracted_at, input_tokens, output_tokens) \
           VALUES ('sess-1', 'anthropic', 'haiku', '2026-11-20T10:00:00Z', 100, 20);
         INSERT INTO learning_extractions (task_id, provider, model, extracted_at, input_tokens, output_tokens) \
           VALUES ({first}, 'anthropic', 'haiku', '2026-11-20T10:00:00Z', 120, 30);
         INSERT INTO learning_sources (learning_id, task_id, session_id, kind, created_at) \
           VALUES (1, {first}, NULL, 'taught', '2026-11-20T10:00:00Z');
         INSERT INTO learning_sources (learning_id, task_id, session_id, kind, created_at) \
           VALUES (2, NULL, 'sess-1', 'confirmed', '2026-11-20T10:00:00Z');
         INSERT INTO learning_injections (learning_id, task_id, session_id, event, injected_at) \
           VALUES (2, NULL, 'sess-1', 'SessionStart', '2026-11-20T10:00:00Z');
         INSERT INTO task_credits (task_id, credit, ending, verdict, review_task, merged, credited_at) \
           VALUES ({third}, 'helpful', 'completed', NULL, NULL, 0, '2026-11-20T10:00:00Z') ON CONFLICT DO NOTHING;
         INSERT INTO task_reranks (task_id, outcome, candidates, chosen, reason, ms, input_tokens, output_tokens, at) \
           VALUES ({first}, 'fallback', 10, '[]', 'timed out ✗', 10004, 0, 0, '2026-11-20T10:00:00Z');
         INSERT INTO worker_leases (worker, host, machine, pid, pid_ns, started_at, heartbeat_at) \
           VALUES ('w-gone', 'laptop', 'm1', 4242, NULL, 1763632800.5, 1763632801.25);
         UPDATE extraction_backoff SET failures = 2, until = '2026-11-20T11:00:00Z', last_error = 'HTTP 529' WHERE id = 1;
         UPDATE credit_totals SET helpful = 3, harmful = 1 WHERE id = 1;
         UPDATE learnings_metadata SET tasks_since_regen = 4 WHERE id = 1;"
    ))
    .unwrap();
    // A person's ANALYZE leaves SQLite tables of its own (sqlite_stat1), nothing to copy.
    db.execute_batch("ANALYZE").unwrap();
    // A deleted task: its id is never given out again, in SQLite or after the copy.
    let gone = p.add(&["A task deleted before the move"]);
    p.ok(&["delete", &gone.to_string(), "--yes"]);
    gone
}

/// What a person reads, on either backend.
fn screens(p: &TestProject, url: Option<&str>) -> Vec<(String, String)> {
    let mut commands: Vec<Vec<String>> = [
        "history -n 0",
        "history -n 0 --json",
        "next",
        "stats",
        "stats --json",
        "search endpoint",
        "learnings show",
        "learnings show --all",
        "learnings show L1",
        "learnings show L3",
        "learnings stats",
        "learnings search pytest",
        "lineage 1",
        "unmerged",
    ]
    .iter()
    .map(|c| c.split(' ').map(str::to_string).collect())
    .collect();
    for id in 1..=6 {
        commands.push(vec!["show".into(), id.to_string()]);
    }
    commands
        .into_iter()
        .map(|args| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = match url {
                Some(url) => on_pg(p, url, &args),
                None => p.run(&args),
            };
            (
                args.join(" "),
                format!("exit {}\n{}\n{}", run.code, run.stdout, run.stderr),
            )
        })
        .collect()
}

#[test]
fn a_copied_project_reads_the_same_on_postgres_and_a_second_copy_adds_nothing() {
    let p = sqlite_project();
    let deleted_id = fill(&p);
    let sqlite = open(&p.database());
    // Every table the copy takes holds something here, so each is checked below.
    let before = contents(&sqlite, &sqlite);
    let empty: Vec<&String> = before
        .iter()
        .filter(|(_, rows)| rows.is_empty())
        .map(|(t, _)| t)
        .collect();
    assert!(empty.is_empty(), "tables left empty by fill(): {empty:?}");

    let (name, url) = new_target();
    let dry = p.ok(&["db", "copy", "--to", &url, "--dry-run"]);
    assert!(dry.contains("Nothing was written"), "{dry}");
    let first = p.ok(&["db", "copy", "--to", &url]);
    assert!(
        first.starts_with("Copied .gza/gza.db into project"),
        "{first}"
    );
    // The clone keeps the name its records went under (an origin added later moves nothing).
    let recorded = std::fs::read_to_string(p.path(".gza/project")).unwrap();
    assert!(
        first.contains(&format!("into project {:?}", recorded.trim())),
        "{recorded} {first}"
    );
    let copied = counts(&first);
    assert_eq!(counts(&dry), copied, "the dry run said what the copy did");
    for (table, rows) in &before {
        assert_eq!(
            copied[table],
            (rows.len() as u64, rows.len() as u64, 0),
            "{table}: {first}"
        );
    }

    // Losslessly: every row of every copied table, value for value.
    let target = open(&pg_database(&p, &url));
    assert_eq!(contents(&target, &sqlite), before);
    // And every screen reads the same.
    let sqlite_screens = screens(&p, None);
    let pg_screens = screens(&p, Some(&url));
    for ((cmd, a), (_, b)) in sqlite_screens.iter().zip(&pg_screens) {
        assert_eq!(a, b, "gza {cmd} differs after the copy");
    }
    let big = p.task_field::<String>(1, "output");
    assert_eq!(big.len(), "ünïcode ✓ 日本語 🚀 line\n".len() * 40_000);

    // Again: nothing is added, every row is found there.
    let second = p.ok(&["db", "copy", "--to", &url]);
    for (table, (rows, copied, present)) in counts(&second) {
        assert_eq!((copied, present), (0, rows), "{table}: {second}");
    }
    assert_eq!(contents(&target, &sqlite), before);

    // New ids on PostgreSQL come after every id SQLite gave out (the deleted task's included).
    let added = on_pg(&p, &url, &["add", "-q", "After the move"]);
    assert_eq!(added.stdout.trim(), (deleted_id + 1).to_string(), "{added}");
    let comment = on_pg(&p, &url, &["comment", "1", "another"]);
    assert!(comment.stdout.contains("comment 2"), "{comment}");
    postgres::cluster().drop_database(&name);
}

/// A copy run again after the project moved on brings the changes across, and duplicates and
/// loses nothing (issue 21: "can be run again without duplicating anything"). A row changed
/// here only since the last copy is updated there; one changed there only is kept; one changed
/// on both sides stops the copy in one line naming it and what to do, and nothing is written
/// until `--overwrite` says this store's version wins. The re-run used to be refused as soon
/// as any copied row had changed here, advising a new `project:`.
#[test]
fn a_copy_run_again_brings_changes_across_and_refuses_only_a_row_changed_on_both_sides() {
    let p = sqlite_project();
    p.add(&["One"]);
    p.add(&["Two"]);
    let (name, url) = new_target();
    p.ok(&["db", "copy", "--to", &url]);
    let prompt = |url: Option<&str>, id: &str| -> String {
        let args = ["show", id, "--json"];
        let run = match url {
            Some(url) => on_pg(&p, url, &args),
            None => p.run(&args),
        };
        assert_eq!(run.code, 0, "{run}");
        serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap()["prompt"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Moved on here only: a task edited, one added.
    p.ok(&["edit", "2", "Two, reworded on the laptop"]);
    p.add(&["Three"]);
    let again = p.ok(&["db", "copy", "--to", &url]);
    assert_eq!(counts(&again)["tasks"], (3, 2, 1), "{again}");
    assert_eq!(prompt(Some(&url), "2"), "Two, reworded on the laptop");
    assert_eq!(prompt(Some(&url), "3"), "Three");
    // Moved on there only: kept, not undone by the next copy.
    let edited = on_pg(&p, &url, &["edit", "1", "One, reworded by the team"]);
    assert_eq!(edited.code, 0, "{edited}");
    let kept = p.ok(&["db", "copy", "--to", &url]);
    assert_eq!(counts(&kept)["tasks"], (3, 0, 3), "{kept}");
    assert_eq!(prompt(Some(&url), "1"), "One, reworded by the team");
    // Moved on in both places: refused in one line, and nothing written.
    let edited = on_pg(&p, &url, &["edit", "2", "Two, as the team has it"]);
    assert_eq!(edited.code, 0, "{edited}");
    p.ok(&["edit", "2", "Two, as the laptop has it"]);
    p.add(&["Four"]);
    let err = p.user_error(&["db", "copy", "--to", &url]);
    assert!(
        err.contains("tasks id 2 changed both here and there since this store last copied it")
            && err.contains("nothing was copied")
            && err.contains("gza db copy --overwrite"),
        "{err}"
    );
    let count = |url: &str| -> i64 {
        open(&pg_database(&p, url))
            .db()
            .one("SELECT COUNT(*) FROM tasks", &[])
            .unwrap()
    };
    assert_eq!(
        count(&url),
        3,
        "task 4 came before nothing: the refusal undid the copy"
    );
    assert_eq!(prompt(Some(&url), "2"), "Two, as the team has it");
    // This store's version, when asked for.
    let overwritten = p.ok(&["db", "copy", "--to", &url, "--overwrite"]);
    assert_eq!(counts(&overwritten)["tasks"], (4, 2, 2), "{overwritten}");
    assert_eq!(prompt(Some(&url), "2"), "Two, as the laptop has it");
    assert_eq!(prompt(Some(&url), "1"), "One, reworded by the team");
    assert_eq!(prompt(None, "1"), "One");
    // Never a duplicate: one row per task, four tasks.
    assert_eq!(count(&url), 4);
    postgres::cluster().drop_database(&name);
}

/// A row the last copy brought and deleted here since is deleted there too by the next copy,
/// with what depended on it here (a task and its comment), and said so. Refused in one line,
/// with nothing written: a row deleted here and changed there since (unless `--overwrite`), and
/// a deletion that would take a row the team made there with it (a comment on that task
/// added in PostgreSQL), `--overwrite` or not. Before, a deleted row stayed there for good.
#[test]
fn a_row_deleted_here_is_deleted_there_unless_the_team_changed_or_built_on_it() {
    let p = sqlite_project();
    for t in ["One", "Two", "Three", "Four"] {
        p.add(&[t]);
    }
    p.ok(&["comment", "2", "a note on two"]);
    let (name, url) = new_target();
    p.ok(&["db", "copy", "--to", &url]);
    let tasks_there = |url: &str| -> Vec<i64> {
        open(&pg_database(&p, url))
            .db()
            .query_map("SELECT id FROM tasks ORDER BY id", &[], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(tasks_there(&url), [1, 2, 3, 4]);

    // Deleted here: the next copy deletes it there, with its comment.
    p.ok(&["delete", "2", "--yes"]);
    let dry = p.ok(&["db", "copy", "--to", &url, "--dry-run"]);
    assert!(dry.contains("Would delete there as well"), "{dry}");
    assert_eq!(tasks_there(&url), [1, 2, 3, 4], "a dry run writes nothing");
    let again = p.ok(&["db", "copy", "--to", &url]);
    assert!(
        again.contains("Deleted there as well, as they were deleted here since the last copy: tasks 1, task_comments 1"),
        "{again}"
    );
    assert_eq!(tasks_there(&url), [1, 3, 4]);
    let comments: i64 = open(&pg_database(&p, &url))
        .db()
        .one("SELECT COUNT(*) FROM task_comments", &[])
        .unwrap();
    assert_eq!(comments, 0);
    // Nothing more to do, and nothing said of deletions.
    let quiet = p.ok(&["db", "copy", "--to", &url]);
    assert!(!quiet.contains("Deleted"), "{quiet}");

    // Deleted here, changed there since: refused, unless --overwrite.
    let edited = on_pg(&p, &url, &["edit", "3", "Three, reworded by the team"]);
    assert_eq!(edited.code, 0, "{edited}");
    p.ok(&["delete", "3", "--yes"]);
    p.add(&["Five"]);
    let err = p.user_error(&["db", "copy", "--to", &url]);
    assert!(
        err.contains("tasks id 3 was deleted here and changed there since")
            && err.contains("nothing was copied")
            && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(tasks_there(&url), [1, 3, 4], "task 5 came before nothing");
    let overwritten = p.ok(&["db", "copy", "--to", &url, "--overwrite"]);
    assert!(overwritten.contains("tasks 1"), "{overwritten}");
    assert_eq!(tasks_there(&url), [1, 4, 5]);

    // Deleted here, and the team commented on it there: the comment is theirs, never taken.
    let theirs = on_pg(&p, &url, &["comment", "4", "the team's note"]);
    assert_eq!(theirs.code, 0, "{theirs}");
    p.ok(&["delete", "4", "--yes"]);
    for extra in [&[][..], &["--overwrite"][..]] {
        let mut args = vec!["db", "copy", "--to", url.as_str()];
        args.extend_from_slice(extra);
        let err = p.user_error(&args);
        assert!(
            err.contains("tasks id 4 was deleted here")
                && err.contains("1 rows of task_comments that no copy from this store brought")
                && err.contains("nothing was copied"),
            "{extra:?}: {err}"
        );
        assert_eq!(tasks_there(&url), [1, 4, 5]);
    }

    // A task of the team's there that waits on one deleted here: refused too (their row would
    // be changed by ON DELETE SET NULL).
    let waiting = on_pg(&p, &url, &["add", "after five", "--depends-on", "5"]);
    assert_eq!(waiting.code, 0, "{waiting}");
    // (Task 4 as the refusal says: deleted there by hand, its comment with it.)
    let by_hand = on_pg(&p, &url, &["delete", "4", "--yes"]);
    assert_eq!(by_hand.code, 0, "{by_hand}");
    p.ok(&["delete", "5", "--yes"]);
    let err = p.user_error(&["db", "copy", "--to", &url]);
    assert!(
        err.contains("tasks id 5 was deleted here")
            && err.contains("rows of tasks that no copy from this store brought"),
        "{err}"
    );
    assert_eq!(tasks_there(&url), [1, 5, 6]);

    // A store replaced since the last copy (a fresh `init` over a deleted database) has not
    // deleted anything there, though none of the ledger's rows is in it: nothing is deleted.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(p.path(&format!(".gza/gza.db{suffix}")));
    }
    p.ok(&["init"]);
    let fresh = p.ok(&["db", "copy", "--to", &url]);
    assert!(!fresh.contains("Deleted"), "{fresh}");
    assert_eq!(tasks_there(&url), [1, 5, 6], "{fresh}");
    postgres::cluster().drop_database(&name);
}

#[test]
fn a_password_on_the_command_line_is_refused_and_one_from_the_environment_is_never_printed() {
    let p = sqlite_project();
    p.add(&["One"]);
    let cluster = postgres::cluster();
    let name = cluster.new_database_owned_by("gza_secret");
    let with_password = format!(
        "postgres://gza_secret:hunter2-for-tests@127.0.0.1:{}/{name}",
        cluster.port
    );
    let err = p.user_error(&["db", "copy", "--to", &with_password]);
    assert!(err.contains("--to holds a password"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let url = format!("postgres://gza_secret@127.0.0.1:{}/{name}", cluster.port);
    // Without one, the server refuses in one line.
    let refused = p.run(&["db", "copy", "--to", &url]);
    assert_eq!(refused.code, 1, "{refused}");
    assert_eq!(refused.stderr.lines().count(), 1, "{refused}");
    let out = p
        .command(&["db", "copy", "--to", &url])
        .env("PGPASSWORD", "hunter2-for-tests")
        .output()
        .unwrap();
    let run = p.finish(out);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        !run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"),
        "{run}"
    );
    assert_eq!(counts(&run.stdout)["tasks"], (1, 1, 0), "{run}");
    cluster.drop_database(&name);
}

#[test]
fn a_copy_killed_midway_leaves_the_target_as_it_was() {
    let p = sqlite_project();
    fill(&p);
    let (name, url) = new_target();
    // The project exists there (made by a first clone's init), empty.
    let other = {
        let mut o = TestProject::empty_sqlite();
        o.set_env("GZA_DATABASE_URL", &url);
        o.config(&format!(
            "project: {}\n",
            std::fs::read_to_string(p.path(".gza/project"))
                .map(|n| n.trim().to_string())
                .unwrap_or_else(|_| gza::database::default_project_name(p.root()))
        ));
        o.ok(&["init"]);
        o
    };
    let target = open(&pg_database(&p, &url));
    let sqlite = open(&p.database());
    let before = contents(&target, &sqlite);
    // A reader holds the last table of the copy: the copy writes every table before it, then
    // waits there, inside its transaction, until it is killed.
    let schema = target.status().unwrap().schema.unwrap();
    let mut blocker = ::postgres::Client::connect(
        &format!(
            "host=127.0.0.1 port={} user=gza dbname={name}",
            postgres::cluster().port
        ),
        ::postgres::NoTls,
    )
    .unwrap();
    blocker
        .batch_execute(&format!(
            "BEGIN; LOCK TABLE {schema}.ab_runs IN EXCLUSIVE MODE"
        ))
        .unwrap();
    let mut copy = p.spawn(&["db", "copy", "--to", &url]);
    let mut watcher = ::postgres::Client::connect(
        &format!(
            "host=127.0.0.1 port={} user=gza dbname={name}",
            postgres::cluster().port
        ),
        ::postgres::NoTls,
    )
    .unwrap();
    wait_until(30, "the copy waits on ab_runs", || {
        if let Some(status) = copy.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(copy.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("the copy ended ({status}) before it reached ab_runs: {err}");
        }
        let row = watcher
            .query_one(
                "SELECT COUNT(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
                 WHERE NOT l.granted AND c.relname = 'ab_runs'",
                &[],
            )
            .unwrap();
        row.get::<_, i64>(0) > 0
    });
    copy.kill().unwrap();
    let _ = copy.wait();
    blocker.batch_execute("ROLLBACK").unwrap();
    assert_eq!(
        contents(&target, &sqlite),
        before,
        "the killed copy left rows behind"
    );
    // And the copy then runs whole.
    let run = p.ok(&["db", "copy", "--to", &url]);
    assert_eq!(counts(&run)["ab_runs"], (2, 2, 0), "{run}");
    drop(other);
    postgres::cluster().drop_database(&name);
}

#[test]
fn a_copy_waits_for_the_workers_of_the_sqlite_store_to_stop() {
    let p = sqlite_project();
    p.add(&["One"]);
    p.ok(&["work", "--all"]);
    let worker = p.spawn(&["work", "--watch"]);
    wait_until(30, "the worker to take its lease", || {
        p.db()
            .query_row("SELECT COUNT(*) FROM worker_leases", [], |r| {
                r.get::<i64>(0)
            })
            .unwrap()
            >= 1
    });
    let (name, url) = new_target();
    let run = p.run(&["db", "copy", "--to", &url]);
    let pid = worker_pid(&p);
    unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    let _ = worker.wait_with_output();
    assert_ne!(run.code, 0, "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
    assert!(
        run.stderr
            .contains(&format!("gza worker {pid} (waiting for work) works on")),
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!("`kill {pid}`"))
            && run
                .stderr
                .contains(&format!("run `gza db copy --to {url}`")),
        "{run}"
    );
    // Nothing was made there, and once the worker stopped, the copy runs.
    let copied = p.ok(&["db", "copy", "--to", &url]);
    assert_eq!(counts(&copied)["tasks"], (1, 1, 0), "{copied}");
    postgres::cluster().drop_database(&name);
}

/// The pid of the (one) worker with a lease on `p`'s store.
fn worker_pid(p: &TestProject) -> i64 {
    p.db()
        .query_row("SELECT pid FROM worker_leases", [], |r| r.get::<i64>(0))
        .unwrap()
}

/// A worker running a task: the copy refuses in one line that names the task and its worker
/// and gives the commands that clear the way, and copies once they were run.
#[test]
fn a_copy_while_a_task_runs_says_which_and_what_to_do() {
    let p = sqlite_project();
    let go = p.scratch().join("go");
    let started = p.scratch().join("started");
    p.command_agent(
        &format!(
            "cat > /dev/null\ntouch '{}'\nwhile [ ! -e '{}' ]; do sleep 0.1; done\necho done\n",
            started.display(),
            go.display()
        ),
        "",
    );
    let id = p.add(&["One"]);
    let worker = p.spawn(&["work"]);
    wait_until(30, "the agent to start", || started.exists());
    let pid = worker_pid(&p);
    let (name, url) = new_target();
    let run = p.run(&["db", "copy", "--to", &url]);
    std::fs::write(&go, "").unwrap();
    let _ = worker.wait_with_output();
    assert_ne!(run.code, 0, "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
    for said in [
        format!("gza worker {pid} (running task {id}) works on this project's SQLite store"),
        format!("`gza kill {id}`"),
        format!("`kill {pid}`"),
        format!("run `gza db copy --to {url}`"),
    ] {
        assert!(run.stderr.contains(&said), "{said:?} in {run}");
    }
    let copied = p.ok(&["db", "copy", "--to", &url]);
    assert_eq!(counts(&copied)["tasks"], (1, 1, 0), "{copied}");
    postgres::cluster().drop_database(&name);
}

/// More rows than one statement takes, references to later rows across statements, and a
/// second copy that finds most rows there and a few new ones among them.
#[test]
fn many_rows_go_across_statements_and_a_later_copy_takes_only_the_new_ones() {
    let p = sqlite_project();
    let db = p.db();
    db.execute_batch(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 450) \
         INSERT INTO tasks (id, prompt, status, depends_on, output, created_at) \
         SELECT i, 'task ' || i || ' ✓', CASE WHEN i % 3 = 0 THEN 'completed' ELSE 'pending' END, \
                CASE WHEN i % 7 = 0 AND i < 440 THEN i + 5 END, \
                CASE WHEN i % 3 = 0 THEN printf('%.*c', i * 40, 'x') END, \
                '2026-11-20T10:00:00Z' FROM n",
    )
    .unwrap();
    let (name, url) = new_target();
    let first = p.ok(&["db", "copy", "--to", &url]);
    assert_eq!(counts(&first)["tasks"], (450, 450, 0), "{first}");
    let sqlite = open(&p.database());
    let target = open(&pg_database(&p, &url));
    assert_eq!(contents(&target, &sqlite), contents(&sqlite, &sqlite));
    for id in [2, 5, 7] {
        p.add(&[&format!("new after the first copy {id}")]);
    }
    p.ok(&["edit", "451", "--tag", "late"]);
    // A dry run into the project as it is: it says what a copy would take, and takes nothing.
    let dry = p.ok(&["db", "copy", "--to", &url, "--dry-run"]);
    assert_eq!(counts(&dry)["tasks"], (453, 3, 450), "{dry}");
    let history = on_pg(&p, &url, &["history", "-n", "0"]);
    assert!(
        !history.stdout.contains("new after the first copy"),
        "{history}"
    );
    let second = p.ok(&["db", "copy", "--to", &url]);
    assert_eq!(counts(&second), counts(&dry), "{second}");
    assert_eq!(counts(&second)["tasks"], (453, 3, 450), "{second}");
    assert_eq!(counts(&second)["task_tags"], (1, 1, 0), "{second}");
    assert_eq!(contents(&target, &sqlite), contents(&sqlite, &sqlite));
    let next_sqlite = p.ok(&["next", "--all"]);
    let next_pg = on_pg(&p, &url, &["next", "--all"]);
    assert_eq!(next_sqlite, next_pg.stdout);
    postgres::cluster().drop_database(&name);
}

/// A project whose state tables still hold what a new schema holds (no regeneration backed
/// off, say): the dry run into a project not made yet says what the copy then does, row for
/// row, state tables included.
#[test]
fn a_dry_run_into_a_new_project_agrees_with_the_copy_for_state_left_at_its_defaults() {
    let p = sqlite_project();
    p.add(&["one task"]);
    let (name, url) = new_target();
    let dry = p.ok(&["db", "copy", "--to", &url, "--dry-run"]);
    let real = p.ok(&["db", "copy", "--to", &url]);
    let (dry, real) = (counts(&dry), counts(&real));
    assert_eq!(dry["extraction_backoff"], real["extraction_backoff"]);
    assert_eq!(dry, real);
    postgres::cluster().drop_database(&name);
}

/// A SQLite project whose task output holds a NUL (stored as is by a gza from before text was
/// made storable on both backends) copies: PostgreSQL's text cannot hold a NUL, and the copy
/// stores it as U+FFFD, as gza now stores it on both backends; copying again finds it there.
#[test]
fn a_nul_in_a_task_output_copies() {
    let p = sqlite_project();
    p.add(&["One"]);
    p.ok(&["work"]);
    // Written by SQL, not through gza's binding, as an older gza left it.
    p.db()
        .execute_batch("UPDATE tasks SET output = 'before' || char(0) || 'after' WHERE id = 1")
        .unwrap();
    let (name, url) = new_target();
    let run = p.run(&["db", "copy", "--to", &url]);
    assert_eq!(run.code, 0, "{run}");
    let show = on_pg(&p, &url, &["show", "1", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(json["output"], "before\u{FFFD}after", "{show}");
    let again = p.ok(&["db", "copy", "--to", &url]);
    assert!(again.contains("Copied"), "{again}");
    postgres::cluster().drop_database(&name);
}
