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
