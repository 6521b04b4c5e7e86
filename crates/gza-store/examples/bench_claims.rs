//! Claims per second: `workers` threads, each with a connection of its own and a lease of its
//! own (as that many `gza work` processes would be), claim tasks through
//! `Store::claim_next_task` until the queue is empty. Run by scripts/bench-claims.
//!
//!     bench_claims (--sqlite FILE | --postgres URL) --workers N --tasks T
//!
//! Prints one line: backend, workers, tasks claimed, seconds, claims per second.

use std::time::Instant;

use gza_core::database::{Database, DatabaseSpec};
use gza_store::{Claim, NewTask, Scope, Store, WorkerId};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let database = match (value("--sqlite"), value("--postgres")) {
        (Some(path), None) => Database::Sqlite(path.into()),
        (None, Some(url)) => Database::Postgres {
            spec: Box::new(DatabaseSpec::parse(&url, None).expect("a database URL")),
            project: "bench/claims".into(),
        },
        _ => panic!("usage: bench_claims (--sqlite FILE | --postgres URL) --workers N --tasks T"),
    };
    let workers: usize = value("--workers").map_or(1, |v| v.parse().expect("a number"));
    let tasks: usize = value("--tasks").map_or(2000, |v| v.parse().expect("a number"));
    let store = Store::create_database(&database).expect("the database opens");
    for i in 0..tasks {
        store
            .insert_task(&NewTask {
                prompt: format!("bench task {i}"),
                ..NewTask::default()
            })
            .expect("a task is added");
    }
    drop(store);
    let started = Instant::now();
    let claimed: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|n| {
                let database = &database;
                s.spawn(move || {
                    let store = Store::open_database(database).expect("the database opens");
                    // A worker of its own: a PID no other thread of the run has.
                    let base = WorkerId {
                        pid: 1_000_000 + n as i64,
                        start: Some(n as i64),
                        lease: None,
                    };
                    let lease = store
                        .acquire_lease(base, "bench", "bench", None)
                        .expect("a lease");
                    let worker = WorkerId {
                        lease: Some(lease),
                        ..base
                    };
                    let mut mine = 0;
                    loop {
                        match store
                            .claim_next_task(worker, &[], &[], Scope::default(), None)
                            .expect("a claim")
                        {
                            Claim::Task(_) => mine += 1,
                            Claim::Empty => break,
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(claimed, tasks, "every task claimed once");
    println!(
        "{:<8} workers {workers:>2}  claims {claimed:>5}  {seconds:>6.2} s  {:>7.0} claims/s",
        match database {
            Database::Sqlite(_) => "sqlite",
            Database::Postgres { .. } => "postgres",
        },
        claimed as f64 / seconds
    );
}
