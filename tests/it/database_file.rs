//! Only `gza init` creates a database: a deleted, emptied or replaced .gza/gza.db is reported,
//! never silently started afresh, and an outcome is never recorded into a file that is gone.

use crate::support::project::TestProject;

fn remove_database(p: &TestProject) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(p.path(&format!(".gza/gza.db{suffix}")));
    }
}

#[test]
fn a_deleted_database_is_reported_not_recreated() {
    let p = TestProject::new_sqlite();
    p.add(&["first"]);
    remove_database(&p);
    for args in [&["history"][..], &["next"], &["add", "second"], &["stats"]] {
        let err = p.user_error(args);
        assert!(
            err.contains(".gza/gza.db does not exist")
                && err.contains("run `gza init` to start an empty one"),
            "{args:?}: {err}"
        );
    }
    assert!(!p.path(".gza/gza.db").exists());
    // `gza init` in the initialised project makes only the database.
    let out = p.ok(&["init"]);
    assert!(out.contains("Created an empty task database"), "{out}");
    assert!(p.ok(&["history"]).contains("No tasks"));
}

#[test]
fn a_zero_byte_database_is_reported_not_reinitialised() {
    let p = TestProject::new_sqlite();
    p.add(&["first"]);
    remove_database(&p);
    std::fs::write(p.path(".gza/gza.db"), b"").unwrap();
    let err = p.user_error(&["history"]);
    assert!(err.contains(".gza/gza.db is empty (0 bytes)"), "{err}");
    assert_eq!(std::fs::metadata(p.path(".gza/gza.db")).unwrap().len(), 0);
}

#[test]
fn an_agent_deleting_the_database_does_not_get_a_false_completed() {
    let p = TestProject::new_sqlite();
    p.command_agent(
        "cat > /dev/null\nrm -f \"$GZA_PROJECT_ROOT\"/.gza/gza.db*\necho 'all done'\n",
        "learnings:\n  extraction_provider: none\n",
    );
    p.add(&["delete the database"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(!run.stdout.contains("completed"), "{run}");
    assert!(
        run.stderr.contains("was deleted while gza had it open"),
        "{run}"
    );
    assert!(run.stderr.contains(".gza/logs/1.outcome.json"), "{run}");
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".gza/logs/1.outcome.json")).unwrap())
            .unwrap();
    assert_eq!(kept["status"], "completed");
    assert!(kept["output"].as_str().unwrap().contains("all done"));
    // The next command says the database is gone instead of "No tasks yet".
    let err = p.user_error(&["history"]);
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn an_agent_replacing_the_database_is_noticed() {
    let p = TestProject::new_sqlite();
    p.command_agent(
        "cat > /dev/null\ncd \"$GZA_PROJECT_ROOT\"/.gza && cp gza.db copy.db && rm -f gza.db-wal gza.db-shm && mv copy.db gza.db\necho 'all done'\n",
        "learnings:\n  extraction_provider: none\n",
    );
    p.add(&["replace the database"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("was replaced by another file"), "{run}");
}

fn sqlite(p: &TestProject) -> rusqlite::Connection {
    rusqlite::Connection::open(p.path(".gza/gza.db")).unwrap()
}

fn count(db: &rusqlite::Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A kill (or any failure) between a migration's SQL and its history row: refinery's default
/// committed the two apart, leaving a schema whose migration ran again, failed, and never let
/// gza open the database. A trigger refuses one history row midway through the upgrade, the
/// instant a kill would have hit: nothing of the upgrade remains, and once the cause is gone
/// the next command upgrades and works.
#[test]
fn an_upgrade_failing_midway_leaves_the_database_as_it_was() {
    let p = TestProject::new_sqlite();
    // A version in the middle of the known ones.
    let middle: i64 = count(
        &sqlite(&p),
        "SELECT version FROM refinery_schema_history ORDER BY version \
         LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM refinery_schema_history)",
    );
    remove_database(&p);
    sqlite(&p)
        .execute_batch(&format!(
            "CREATE TABLE refinery_schema_history(version INT4 PRIMARY KEY, name VARCHAR(255), \
               applied_on VARCHAR(255), checksum VARCHAR(255));
             CREATE TRIGGER killed BEFORE INSERT ON refinery_schema_history \
               WHEN NEW.version = {middle} BEGIN SELECT RAISE(ABORT, 'killed here'); END;"
        ))
        .unwrap();
    let err = p.user_error(&["history"]);
    assert!(
        err.contains("cannot upgrade")
            && err.contains("killed here")
            && err.contains("nothing was changed"),
        "{err}"
    );
    let db = sqlite(&p);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM refinery_schema_history"),
        0
    );
    // Only what was planted: the history table (and its key's index) and the trigger.
    assert_eq!(count(&db, "SELECT COUNT(*) FROM sqlite_master"), 3);
    db.execute_batch("DROP TRIGGER killed").unwrap();
    drop(db);
    p.add(&["keep-me"]);
    assert!(p.ok(&["history"]).contains("keep-me"));
}

/// A migration the database refuses (here: its history row deleted by hand, so it runs again
/// over its own tables) is one line with the database's reason, never the migration's SQL, and
/// exit 1; the database keeps its tasks and its history.
#[test]
fn a_failing_upgrade_is_one_line_and_changes_nothing() {
    let p = TestProject::new_sqlite();
    p.add(&["keep-me"]);
    let latest = count(
        &sqlite(&p),
        "SELECT MAX(version) FROM refinery_schema_history",
    );
    // The history from V52 on forgotten, as a kill between a migration and its history row
    // left it before upgrades were all or nothing: V52 creates tables, so running it again
    // fails ("already exists"); later migrations may well run twice without an error.
    sqlite(&p)
        .execute(
            "DELETE FROM refinery_schema_history WHERE version >= 52",
            [],
        )
        .unwrap();
    let before = count(&sqlite(&p), "SELECT COUNT(*) FROM sqlite_master");
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(&format!("to {latest}:"))
            && err.contains("already exists")
            && err.contains("nothing was changed")
            && !err.contains("CREATE"),
        "{err}"
    );
    let db = sqlite(&p);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM sqlite_master"), before);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM tasks WHERE prompt = 'keep-me'"),
        1
    );
}

/// A database path that is not a regular file is named for what it is, before SQLite opens it
/// (a FIFO was "disk I/O error", exit 255; a directory "cannot write to … check that .gza/ is
/// writable").
#[test]
fn a_database_that_is_not_a_regular_file_is_named() {
    let p = TestProject::new_sqlite();
    remove_database(&p);
    let db = p.path(".gza/gza.db");
    let made = std::process::Command::new("mkfifo")
        .arg(&db)
        .status()
        .unwrap();
    assert!(made.success());
    for args in [&["history"][..], &["add", "x"], &["init"]] {
        let err = p.user_error(args);
        assert!(
            err.contains(".gza/gza.db is a FIFO (named pipe), not a regular file; move it aside"),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_file(&db).unwrap();
    std::fs::create_dir(&db).unwrap();
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(".gza/gza.db is a directory, not a regular file"),
        "{err}"
    );
}

/// A database with a corrupt page still holds the project's records: the message says it is
/// damaged and to keep it, never that it is not a gza database to be replaced.
#[test]
fn a_damaged_database_is_called_damaged_and_kept() {
    let p = TestProject::new_sqlite();
    p.add(&["keep-me"]);
    let (page_size, root): (i64, i64) = {
        let db = sqlite(&p);
        (
            count(&db, "PRAGMA page_size"),
            count(
                &db,
                "SELECT rootpage FROM sqlite_master WHERE name = 'tasks'",
            ),
        )
    };
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(p.path(".gza/gza.db"))
            .unwrap();
        f.seek(SeekFrom::Start(((root - 1) * page_size) as u64))
            .unwrap();
        f.write_all(&vec![0xff; page_size as usize]).unwrap();
    }
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(".gza/gza.db is damaged")
            && err.contains("keep a copy")
            && !err.contains("not a gza database")
            && !err.contains("gza init"),
        "{err}"
    );
    assert!(p.path(".gza/gza.db").is_file());
}
