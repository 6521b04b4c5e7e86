//! The injection counters (SQLite V52, PostgreSQL V22) against the counting queries they stand
//! for, after every kind of write that changes what those queries count, on both backends, and
//! after `gza db copy` of such a history into PostgreSQL (which builds them once, its triggers
//! off). Each step compares the counters with the queries over `learning_injections` and
//! `ab_runs`, and the learnings' records and `learnings stats`' totals with those numbers.

#[path = "../../../tests/it/support/postgres.rs"]
#[allow(dead_code)]
mod postgres;

use std::collections::BTreeMap;

use gza_core::database::{Database, DatabaseSpec};
use gza_core::learning::{NewLearning, Origin};
use gza_core::task::TaskId;
use gza_store::*;

/// Per learning (given, injected outside A/B runs), per event, and per learning and way of
/// ending (the finished tasks it was given to), as the counting queries say.
type Counts = (
    BTreeMap<i64, (i64, i64)>,
    BTreeMap<String, i64>,
    BTreeMap<(i64, String, String), i64>,
);

/// The counts as the counting queries compute them from the records.
fn counted(store: &Store) -> Counts {
    read(
        store,
        "SELECT i.learning_id, COUNT(*), \
                COUNT(CASE WHEN NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = i.task_id) THEN 1 END) \
         FROM learning_injections i GROUP BY i.learning_id ORDER BY 1",
        "SELECT event, COUNT(*) FROM learning_injections GROUP BY event ORDER BY 1",
        "SELECT i.learning_id, t.status, COALESCE(t.failure_reason, ''), COUNT(DISTINCT t.id) \
         FROM learning_injections i JOIN tasks t ON t.id = i.task_id \
         WHERE t.status IN ('completed', 'failed') \
           AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id) \
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
}

/// What the counters hold (rows that count nothing left out).
fn kept(store: &Store) -> Counts {
    read(
        store,
        "SELECT learning_id, given, injected FROM learning_injection_counts \
         WHERE given <> 0 OR injected <> 0 ORDER BY 1",
        "SELECT event, n FROM injection_event_counts WHERE n <> 0 ORDER BY 1",
        "SELECT learning_id, status, failure_reason, tasks FROM learning_outcome_counts \
         WHERE tasks <> 0 ORDER BY 1, 2, 3",
    )
}

/// Per learning (all, outside A/B runs), per event, and per learning and way of ending, as
/// the three queries give them.
fn read(store: &Store, per_learning: &str, per_event: &str, outcomes: &str) -> Counts {
    let db = store.db();
    let per_learning = db
        .query_map(per_learning, params![], |r| {
            Ok((r.get::<i64>(0)?, (r.get::<i64>(1)?, r.get::<i64>(2)?)))
        })
        .unwrap();
    let per_event = db
        .query_map(per_event, params![], |r| {
            Ok((r.get::<String>(0)?, r.get::<i64>(1)?))
        })
        .unwrap();
    let outcomes = db
        .query_map(outcomes, params![], |r| {
            Ok((
                (r.get::<i64>(0)?, r.get::<String>(1)?, r.get::<String>(2)?),
                r.get::<i64>(3)?,
            ))
        })
        .unwrap();
    (
        per_learning.into_iter().collect(),
        per_event.into_iter().collect(),
        outcomes.into_iter().collect(),
    )
}

/// The counters equal the counting queries, and what a person reads shows them.
fn check(store: &Store, step: &str) -> Counts {
    let want = counted(store);
    assert_eq!(
        kept(store),
        want,
        "{:?}, after {step}: counters differ from the counting queries",
        store.backend()
    );
    for l in store.learnings(true).unwrap() {
        let injected = want.0.get(&l.id).map_or(0, |c| c.1);
        assert_eq!(l.injected, injected, "after {step}: L{}'s record", l.id);
        let ended = |status: &str| -> i64 {
            want.2
                .iter()
                .filter(|((id, s, _), _)| *id == l.id && s == status)
                .map(|(_, n)| n)
                .sum()
        };
        let counts = store.injection_outcome_counts(l.id).unwrap();
        assert_eq!(
            (counts.completed, counts.failed),
            (ended("completed"), ended("failed")),
            "after {step}: L{}'s outcomes",
            l.id
        );
        // The newest of them, each once, newest first.
        let newest = store.injection_outcomes(l.id, false, 2).unwrap();
        assert_eq!(
            newest.len() as i64,
            (counts.completed + counts.failed).min(2),
            "after {step}: L{}'s newest outcomes",
            l.id
        );
        assert!(newest.windows(2).all(|w| w[0].task > w[1].task));
    }
    let totals = store.learnings_totals().unwrap();
    assert_eq!(
        totals.injections,
        want.1.values().sum::<i64>(),
        "after {step}: stats' injections"
    );
    let by_event: BTreeMap<String, i64> = totals
        .injections_by_event
        .iter()
        .map(|t| (t.name.clone(), t.count))
        .collect();
    assert_eq!(by_event, want.1, "after {step}: stats' injections by event");
    want
}

fn item(prompt: &str) -> AbItem {
    AbItem {
        prompt: prompt.into(),
        spec: None,
        model: None,
        provider: None,
        source_task: None,
    }
}

/// Every write that changes what the counters count, checked after each; returns the last
/// counts (for comparing the backends and a copy).
fn scenario(store: &Store) -> Counts {
    let learning = |text: &str| {
        store
            .add_learning(&NewLearning::new("General", text, Origin::User))
            .unwrap()
    };
    let (l1, l2, l3, l4) = (
        learning("Run the tests before every commit"),
        learning("Keep migrations additive"),
        learning("Name the lock you take"),
        learning("Quote every identifier you build"),
    );
    let task = |prompt: &str| {
        store
            .insert_task(&NewTask {
                prompt: prompt.into(),
                ..NewTask::default()
            })
            .unwrap()
    };
    let (t1, t2, t3) = (task("one"), task("two"), task("three"));
    check(store, "nothing injected");
    let end = |t: TaskId, status: &str, reason: Option<&str>| {
        store
            .db()
            .execute(
                "UPDATE tasks SET status = ?2, failure_reason = ?3 WHERE id = ?1",
                params![t, status, reason],
            )
            .unwrap();
    };
    // A task that ended before it was given anything (the spool's late injections).
    end(t1, "completed", None);

    // Injections added: a batch, one, the same learning twice, a session's, and an id that
    // names no learning (skipped).
    store
        .record_injections(Some(t1), None, "task", &[l1, l2, l3])
        .unwrap();
    store
        .record_injections(Some(t2), None, "task", &[l1])
        .unwrap();
    store
        .record_injections(Some(t2), None, "pre-tool-use", &[l1, l1, 999])
        .unwrap();
    store
        .record_injections(None, Some("sess-1"), "session-start", &[l2, l4])
        .unwrap();
    check(store, "injections added");

    // Tasks end, change how, and are queued again.
    end(t2, "failed", Some("TEST_FAILURE"));
    end(t3, "completed", None);
    check(store, "tasks ended");
    // Given again to a task that ended (counted once), and for the first time (counted).
    store
        .record_injections(Some(t2), None, "pre-tool-use", &[l1, l3])
        .unwrap();
    check(store, "a finished task given learnings again");
    end(t2, "failed", Some("TIMEOUT"));
    check(store, "a failure's reason changed");
    end(t3, "pending", None);
    check(store, "a task queued again");
    end(t3, "failed", None);
    check(store, "a task failed without a reason");

    // A/B runs: their injections are given but not counted as injected.
    let items = [item("ab one"), item("ab two")];
    let experiment = store
        .create_ab_experiment("abc123", "main", 1, false, &items)
        .unwrap();
    let runs = store.ab_runs(experiment.id).unwrap();
    for run in &runs {
        store
            .record_injections(Some(run.task), None, "task", &[l1, l3])
            .unwrap();
    }
    check(store, "A/B runs' injections added");
    for run in &runs {
        end(run.task, "completed", None);
    }
    check(store, "A/B runs ended");

    // A task already given learnings becomes an A/B run (its injections leave the count), and a
    // run pointed at another task (`gza ab --resume`) brings its old task's back.
    store
        .db()
        .execute(
            "INSERT INTO ab_runs (experiment, item, round, arm, task_id) VALUES (?1, 9, 1, 'with', ?2)",
            params![experiment.id, t1],
        )
        .unwrap();
    check(store, "a task with injections made an A/B run");
    let with = runs.iter().find(|r| r.arm == Arm::With).unwrap();
    let replaced = store
        .replace_ab_run(&experiment, with, &items[with.item as usize])
        .unwrap();
    store
        .record_injections(Some(replaced), None, "task", &[l2])
        .unwrap();
    end(replaced, "failed", Some("TEST_FAILURE"));
    check(store, "an A/B run re-pointed at a new task");
    store
        .set_ab_verified(replaced, AbVerified::Passed)
        .expect("verified");
    check(store, "an A/B run judged");

    // Injections re-pointed and changed by hand, and deleted one at a time and several at once.
    store
        .db()
        .execute(
            "UPDATE learning_injections SET learning_id = ?2, event = 'moved' WHERE learning_id = ?1 AND task_id = ?3",
            params![l3, l4, t1],
        )
        .unwrap();
    check(store, "injections re-pointed");
    store
        .db()
        .execute(
            "UPDATE learning_injections SET task_id = ?2 WHERE task_id = ?1",
            params![replaced, t3],
        )
        .unwrap();
    check(store, "an A/B run's injections moved to a task of no run");
    let first: i64 = store
        .db()
        .one(
            "SELECT MIN(id) FROM learning_injections WHERE learning_id = ?1",
            params![l1],
        )
        .unwrap();
    store
        .db()
        .execute(
            "DELETE FROM learning_injections WHERE id = ?1",
            params![first],
        )
        .unwrap();
    store
        .db()
        .execute(
            "DELETE FROM learning_injections WHERE session_id IS NOT NULL",
            params![],
        )
        .unwrap();
    check(store, "injections deleted");

    // A task deleted (its injections stay, as before), an experiment deleted (its runs
    // cascade: their tasks count again), a learning deleted (its injections cascade).
    store.delete_task(t2).unwrap();
    check(store, "a task deleted");
    store
        .db()
        .execute(
            "DELETE FROM ab_experiments WHERE id = ?1",
            params![experiment.id],
        )
        .unwrap();
    check(store, "an experiment deleted");
    store
        .db()
        .execute("DELETE FROM learnings WHERE id = ?1", params![l4])
        .unwrap();
    let last = check(store, "a learning deleted");
    assert!(
        last.0.values().any(|c| c.0 > 1) && last.1.len() >= 2 && last.2.len() >= 2,
        "the scenario leaves counts to compare: {last:?}"
    );
    last
}

fn postgres_store(cluster: &postgres::Cluster, name: &str) -> Store {
    Store::create_database(&Database::Postgres {
        spec: Box::new(DatabaseSpec::parse(&cluster.url(name), None).unwrap()),
        project: "github.com/acme/app".into(),
    })
    .unwrap()
}

#[test]
fn the_injection_counters_follow_every_write_on_both_backends_and_through_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::create_database(&Database::Sqlite(dir.path().join("gza.db"))).unwrap();
    let on_sqlite = scenario(&sqlite);

    let cluster = postgres::cluster();
    let name = cluster.new_database();
    let pg = postgres_store(cluster, &name);
    let on_postgres = scenario(&pg);
    assert_eq!(on_sqlite, on_postgres);
    cluster.drop_database(&name);

    // `gza db copy` of that history: the counters are built once, and right.
    let name = cluster.new_database();
    let target = postgres_store(cluster, &name);
    sqlite.copy_into(&target, false).unwrap();
    assert_eq!(check(&target, "a copy"), on_sqlite);
    // Again: nothing added, nothing doubled.
    sqlite.copy_into(&target, false).unwrap();
    assert_eq!(check(&target, "a second copy"), on_sqlite);
    // The triggers are on again after it: a new injection is counted.
    let l = target.learnings(true).unwrap()[0].id;
    target
        .record_injections(None, Some("sess-2"), "session-start", &[l])
        .unwrap();
    check(&target, "an injection after the copy");
    // And `learnings clear` empties them.
    target.clear_learnings().unwrap();
    assert_eq!(check(&target, "learnings cleared"), Counts::default());
    cluster.drop_database(&name);

    sqlite.clear_learnings().unwrap();
    assert_eq!(check(&sqlite, "learnings cleared"), Counts::default());
}
