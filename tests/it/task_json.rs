//! What `--json` prints about tasks, byte for byte: a fixed project holding every status, every
//! failure reason gza records (and one it does not know), and every column set somewhere. The
//! typed task state (issue 19) must print exactly what the stored rows printed before it.

use insta::assert_snapshot;

use crate::support::project::TestProject;

/// Every failure reason this gza records.
const REASONS: [&str; 12] = [
    "TIMEOUT",
    "MAX_TURNS",
    "KILLED",
    "WORKER_DIED",
    "AGENT_ERROR",
    "AGENT_EXIT",
    "NO_RESULT",
    "AGENT_START",
    "SANDBOX_ERROR",
    "PROMPT_ERROR",
    "GIT_ERROR",
    "UNSAFE_WORKTREE",
];

/// A project whose tasks are written as gza writes them, at fixed times (the database is the
/// clock: no test-only clock is needed).
fn fixed_project() -> TestProject {
    let p = TestProject::new();
    for prompt in [
        "Add a --verbose flag",
        "Address the review of task 4",
        "Refactor the parser",
        "Teach the lexer about raw strings",
        "Review task 4",
        "Explore the cache layer",
        "Plan the plugin system",
        "Fix the flaky test",
        "Old idea",
        "Imported before timestamps were kept",
    ] {
        p.add(&[prompt]);
    }
    for (n, _) in REASONS.iter().enumerate() {
        p.add(&[&format!("Failing task {n}")]);
    }
    let db = p.db();
    let ids: Vec<i64> = db
        .prepare("SELECT id FROM tasks ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for id in ids {
        db.execute(
            "UPDATE tasks SET created_at = ?1 WHERE id = ?2",
            rusqlite::params![format!("2026-01-{:02}T09:{:02}:00Z", 1 + id % 28, id), id],
        )
        .unwrap();
    }
    db.execute_batch(
        "INSERT INTO learnings_versions (id, created_at, content) VALUES (1, '2026-01-01T08:00:00Z', '');
         UPDATE tasks SET group_name = 'cli', spec = 'docs/spec.md', model = 'opus', provider = 'claude',
           urgent = 1 WHERE id = 1;
         UPDATE tasks SET task_type = 'improve', based_on = 4, depends_on = 5, skip_learnings = 1,
           resume_session_id = 'sess-4' WHERE id = 2;
         UPDATE tasks SET status = 'in_progress', started_at = '2026-01-04T10:00:00Z',
           running_pid = 4242, running_pid_start = 123456, agent_pid = 4243, agent_start = 123460,
           branch = 'gza/3-refactor-the-parser', worktree = '/work/proj/.gza/worktrees/3-refactor',
           log_file = '.gza/logs/3.jsonl', base_branch = 'main',
           base_commit = 'abcdef0123456789abcdef0123456789abcdef01', num_turns = 4, cost_usd = 0.0421,
           session_id = 'sess-3', learnings_version = 1 WHERE id = 3;
         UPDATE tasks SET status = 'completed', started_at = '2026-01-05T10:00:00Z',
           completed_at = '2026-01-05T10:05:12Z', branch = 'gza/4-teach-the-lexer',
           log_file = '.gza/logs/4.jsonl', output = 'Done.
Raw strings lex now.', cost_usd = 0.1234, input_tokens = 15000, output_tokens = 2300, num_turns = 12,
           duration_seconds = 312.5, session_id = 'sess-4', diff_stats = ' 2 files changed, 10 insertions(+)',
           base_branch = 'main', base_commit = '0123456789abcdef0123456789abcdef01234567',
           learnings_version = 1, merged_at = '2026-01-06T12:00:00Z', merged_into = 'main',
           pr_url = 'https://github.com/o/r/pull/7' WHERE id = 4;
         UPDATE tasks SET status = 'completed', task_type = 'review', based_on = 4, depends_on = 4,
           started_at = '2026-01-06T10:00:00Z', completed_at = '2026-01-06T10:01:00Z',
           worktree = '/work/proj/.gza/worktrees/5-review', log_file = '.gza/logs/5.jsonl',
           output = '## Verdict
CHANGES_REQUESTED', review_verdict = 'CHANGES_REQUESTED', report_file = '.gza/reports/5-review-task-4.md',
           cost_usd = 0.02, duration_seconds = 60 WHERE id = 5;
         UPDATE tasks SET status = 'completed', task_type = 'explore', started_at = '2026-01-07T10:00:00Z',
           completed_at = '2026-01-07T10:00:30Z', output = 'The cache is fine.', cost_usd = 0.25,
           duration_seconds = 30.25, report_file = '.gza/reports/6-explore.md' WHERE id = 6;
         UPDATE tasks SET status = 'failed', task_type = 'plan', failure_reason = 'QUOTA_EXCEEDED',
           started_at = '2026-01-08T10:00:00Z', completed_at = '2026-01-08T10:00:02Z',
           output = 'gza: a reason from a newer gza' WHERE id = 7;
         UPDATE tasks SET status = 'failed' WHERE id = 8;
         UPDATE tasks SET status = 'dropped' WHERE id = 9;
         UPDATE tasks SET status = 'completed', cost_usd = 0.5, input_tokens = 1000 WHERE id = 10;",
    )
    .unwrap();
    for (n, reason) in REASONS.iter().enumerate() {
        db.execute(
            "UPDATE tasks SET status = 'failed', failure_reason = ?1, \
             started_at = '2026-01-09T10:00:00Z', completed_at = '2026-01-09T10:01:00Z', \
             duration_seconds = ?2 WHERE id = ?3",
            rusqlite::params![reason, 60.0 + n as f64, 11 + n as i64],
        )
        .unwrap();
    }
    p
}

#[test]
fn show_json_prints_every_column_as_stored() {
    let p = fixed_project();
    let shown: Vec<String> = (1..=11)
        .map(|id| p.ok(&["show", &id.to_string(), "--json"]))
        .collect();
    assert_snapshot!("show_json", shown.join(""));
}

#[test]
fn list_json_outputs_are_unchanged() {
    let p = fixed_project();
    assert_snapshot!("history_json", p.ok(&["history", "-n", "0", "--json"]));
    assert_snapshot!(
        "history_failed_json",
        p.ok(&["history", "--status", "failed", "-n", "3", "--json"])
    );
    assert_snapshot!("stats_json", p.ok(&["stats", "--json"]));
    assert_snapshot!("next_all_json", p.ok(&["next", "--all", "--json"]));
    assert_snapshot!("ps_json", p.ok(&["ps", "--json"]));
}

#[test]
fn failure_reasons_read_the_same_known_or_not() {
    let p = fixed_project();
    assert_snapshot!("history_text", p.ok(&["history", "-n", "0"]));
    // A reason from a newer gza, and none at all, still show.
    let newer = p.ok(&["show", "7"]);
    assert!(newer.contains("Failure reason: QUOTA_EXCEEDED"), "{newer}");
    let none = p.ok(&["show", "8"]);
    assert!(none.contains("Failure reason: UNKNOWN"), "{none}");
}

/// The stored row of task `id`, column by column (`group_name` under the name JSON gives it).
fn stored_row(p: &TestProject, id: i64) -> serde_json::Map<String, serde_json::Value> {
    let db = p.db();
    db.query_row("SELECT * FROM tasks WHERE id = ?1", [id], |r| {
        let mut row = serde_json::Map::new();
        for i in 0..r.column_count() {
            use gza::store::db::Val;
            let value = match r.value(i)? {
                Val::Null => serde_json::Value::Null,
                Val::Int(n) => n.into(),
                Val::Bool(b) => i64::from(b).into(),
                Val::Real(x) => x.into(),
                Val::Text(t) => t.to_string().into(),
                Val::Blob(_) => "<blob>".into(),
            };
            let name = r.column_name(i);
            let name = if name == "group_name" {
                "group".to_string()
            } else {
                name
            };
            row.insert(name, value);
        }
        Ok(row)
    })
    .unwrap()
}

#[test]
fn show_json_is_the_row_gza_wrote() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "prompt=$(cat)\ncase \"$prompt\" in\n  *crash*) echo partial; exit 3 ;;\n  *) echo change > made.txt; echo done ;;\nesac\n",
        "",
    );
    let done = p.add(&["make a change"]);
    let crashed = p.add(&["crash please"]);
    let explored = p.add(&["--type", "explore", "look around"]);
    p.run(&["work", "--all"]);
    let stamp = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$").unwrap();
    for id in [done, crashed, explored] {
        let shown = p.json(&["show", &id.to_string(), "--json"]);
        let shown = shown.as_object().unwrap();
        let row = stored_row(&p, id);
        for (key, value) in shown {
            // SQLite keeps booleans as 0 and 1.
            let value = match value {
                serde_json::Value::Bool(b) => i64::from(*b).into(),
                v => v.clone(),
            };
            assert_eq!(Some(&value), row.get(key), "task {id}, {key}");
        }
        for key in ["created_at", "started_at", "completed_at"] {
            let at = shown[key]
                .as_str()
                .unwrap_or_else(|| panic!("task {id} {key}"));
            assert!(stamp.is_match(at), "task {id} {key}: {at}");
        }
    }
    let status = |id: i64| p.json(&["show", &id.to_string(), "--json"])["status"].clone();
    assert_eq!(status(done), "completed");
    assert_eq!(status(crashed), "failed");
    assert_eq!(
        p.json(&["show", &crashed.to_string(), "--json"])["failure_reason"],
        "AGENT_EXIT"
    );
}

#[test]
fn learnings_stats_json_is_unchanged() {
    let p = TestProject::new();
    // The tasks time out: a failure that debits the learnings they were given (an agent's
    // exit, a provider failure, debits none), so the flagged lists have something to show.
    p.command_agent(
        "cat > /dev/null\necho partial\nsleep 30\n",
        "timeout_minutes: 0.01\n",
    );
    p.ok(&["learnings", "add", "Keep handlers thin"]);
    p.ok(&["learnings", "add", "Run make test before finishing"]);
    for n in 0..3 {
        p.add(&["--type", "explore", &format!("look around {n}")]);
    }
    p.run(&["work", "--all"]);
    let stats = p.ok(&["learnings", "stats", "--json"]);
    let stats = regex::Regex::new(r#""duration_ms": \d+"#)
        .unwrap()
        .replace_all(&stats, r#""duration_ms": [MS]"#);
    assert_snapshot!(
        "learnings_stats_json",
        crate::support::project::normalize_times(&stats)
    );
    let shown = p.ok(&["learnings", "show", "L1", "--json"]);
    assert_snapshot!(
        "learnings_show_json",
        crate::support::project::normalize_times(&shown)
    );
}

#[test]
fn learnings_stats_json_lists_stale_decayed_and_unexplained_failures() {
    let p = TestProject::new();
    // The tasks time out: a failure that debits the learnings they were given (an agent's
    // exit, a provider failure, debits none), so the flagged lists have something to show.
    p.command_agent(
        "cat > /dev/null\necho partial\nsleep 30\n",
        "timeout_minutes: 0.01\n",
    );
    p.ok(&["learnings", "add", "Keep handlers thin"]);
    p.ok(&["learnings", "add", "Run make test before finishing"]);
    for n in 0..3 {
        p.add(&["--type", "explore", &format!("look around {n}")]);
    }
    p.run(&["work", "--all"]);
    // L1 went stale; L2 came from an agent and was last confirmed long ago (decayed); the
    // tasks both were given failed with no reason recorded (a row an older tool wrote).
    p.db()
        .execute_batch(
            "UPDATE learnings SET stale_reason = 'src/handlers is gone' WHERE id = 1;
             UPDATE learnings SET origin = 'agent', confirmed_at = '2020-01-01T00:00:00Z' WHERE id = 2;
             UPDATE tasks SET failure_reason = NULL;",
        )
        .unwrap();
    let stats = p.ok(&["learnings", "stats", "--json"]);
    let stats = regex::Regex::new(r#""(duration_ms|confidence)": [0-9.e-]+"#)
        .unwrap()
        .replace_all(&stats, r#""$1": [N]"#);
    let stats = crate::support::project::normalize_times(&stats);
    assert!(stats.contains(r#""failure_reason": """#), "{stats}");
    assert_snapshot!("learnings_stats_lifecycle_json", stats);
}

#[test]
fn a_time_gza_cannot_read_is_a_one_line_error_naming_its_row() {
    let p = TestProject::new();
    p.add(&["fine"]);
    let odd = p.add(&["hand edited"]);
    p.db()
        .execute(
            "UPDATE tasks SET created_at = 'last tuesday' WHERE id = ?1",
            [odd],
        )
        .unwrap();
    for args in [vec!["history"], vec!["show", "2"]] {
        let err = p.user_error(&args);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains(r#"task 2's created_at is "last tuesday", not a time"#),
            "{err}"
        );
        let place = if p.database_env().is_empty() {
            "gza.db"
        } else {
            "postgres://"
        };
        assert!(err.contains(place), "{err}");
    }
    // The other task is unaffected.
    assert!(p.ok(&["show", "1"]).contains("fine"));
}
