//! Hooks that never stall a session and never lose what they learned, sessions as sources
//! everywhere, and the model's derived files checked (issue 18). Every hook runs as Claude Code
//! runs it: the binary with the hook's JSON on stdin.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::project::{TestProject, wait_until};

/// What a bounded run did.
struct Bounded {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Run gza with `stdin`, killing it after `secs`: a run that had to be killed has no code.
fn run_bounded(p: &TestProject, args: &[&str], stdin: &[u8], secs: u64) -> Bounded {
    let started = Instant::now();
    let mut child = p
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let deadline = started + Duration::from_secs(secs);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    let _ = writer.join();
    Bounded {
        code,
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        took,
    }
}

fn hook(p: &TestProject, name: &str, input: &Value) -> Bounded {
    run_bounded(p, &["hook", name], input.to_string().as_bytes(), 10)
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn knowledge(label: &str) -> String {
    format!("Done.\n[PROCESS_KNOWLEDGE]\nlabel: {label}\npriority: HIGH\n[/PROCESS_KNOWLEDGE]")
}

fn learnings_json(p: &TestProject) -> Vec<Value> {
    p.json(&["learnings", "show", "--all", "--json"])
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn fifos_as_transcript_logs_and_learnings_md_never_stall_a_hook_or_a_worker() {
    let p = TestProject::in_git_repo();
    p.ok(&[
        "learnings",
        "add",
        "--priority",
        "CRITICAL",
        "Never force-push to main",
    ]);
    mkfifo(&p.path(".gza/logs/hooks.log"));
    mkfifo(&p.path(".gza/logs/learnings.log"));
    let transcript = p.path("transcript.jsonl");
    mkfifo(&transcript);
    // A Stop hook that reads a FIFO transcript and must log a bad block to a FIFO log.
    let stop = json!({"hook_event_name": "Stop", "session_id": "s1", "cwd": p.root(),
        "transcript_path": transcript,
        "last_assistant_message": "[PROCESS_KNOWLEDGE]\nlabel: Ok\npriority: WHENEVER\n[/PROCESS_KNOWLEDGE]"});
    let run = hook(&p, "stop", &stop);
    assert_eq!(run.code, Some(0), "the Stop hook stalled ({:?})", run.took);
    assert!(run.took < Duration::from_secs(5), "{:?}", run.took);
    // The same for SessionEnd, and with the transcript a device that never ends.
    for path in [transcript.clone(), "/dev/zero".into()] {
        let end = json!({"hook_event_name": "SessionEnd", "session_id": "s2", "cwd": p.root(),
            "transcript_path": path, "reason": "exit",
            "last_assistant_message": knowledge("Run the seed script after the migrations")});
        let run = hook(&p, "session-end", &end);
        assert_eq!(run.code, Some(0), "SessionEnd stalled on {path:?}");
    }
    // The draft the block taught was stored, and its log line skipped, not waited on.
    assert!(
        learnings_json(&p)
            .iter()
            .any(|l| l["text"] == "Run the seed script after the migrations")
    );
    // SessionStart injects while learnings.md is a FIFO too.
    mkfifo(&p.path(".gza/learnings.md"));
    let start = json!({"hook_event_name": "SessionStart", "session_id": "s3", "cwd": p.root(), "source": "startup"});
    let run = hook(&p, "session-start", &start);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("Never force-push to main"),
        "{}",
        run.stdout
    );
    // `gza work` runs a task to its end, regeneration included, with both logs and
    // learnings.md FIFOs (it used to block for good opening learnings.log, deaf to SIGTERM).
    p.command_agent(
        "cat >/dev/null; echo done\n",
        "learnings:\n  regenerate_every: 1\n  extraction_provider: none\n",
    );
    p.add(&["--type", "explore", "Look at the README"]);
    let run = run_bounded(&p, &["work", "--all", "--quiet"], b"", 30);
    assert_eq!(run.code, Some(0), "gza work stalled: {}", run.stderr);
    assert_eq!(p.json(&["history", "--json"])[0]["status"], "completed");
}

#[test]
fn a_transcript_that_never_ends_is_read_from_its_tail_within_a_bound() {
    let mut p = TestProject::in_git_repo();
    // An extraction model is configured (nothing listens: the transcript is read first).
    p.config("learnings:\n  extraction_provider: anthropic\n  base_url: http://127.0.0.1:9\n");
    p.set_env(
        "ANTHROPIC_API_KEY",
        "sk-ant-api03-TESTKEYTESTKEYTESTKEYTESTKEY",
    );
    let run = run_bounded(
        &p,
        &[
            "hook",
            "extract-session",
            "--session",
            "s",
            "--transcript",
            "/dev/zero",
        ],
        b"",
        10,
    );
    assert!(run.code.is_some(), "reading /dev/zero never ended");
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    // A 3 GB transcript (sparse) is read from its end, not loaded whole: the process's peak
    // memory stays far below the file's size.
    let big = p.path("big.jsonl");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(3 * 1024 * 1024 * 1024).unwrap();
    drop(f);
    let big_path = big.to_str().unwrap();
    let (code, _, stderr, peak_kib) = p.run_measuring_rss(&[
        "hook",
        "extract-session",
        "--session",
        "s2",
        "--transcript",
        big_path,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let peak_mb = peak_kib / 1024;
    assert!(peak_mb < 256, "peak RSS {peak_mb} MB for a 3 GB transcript");
    let log = std::fs::read_to_string(p.path(".gza/logs/learnings.log")).unwrap();
    assert!(
        log.contains("session s2 is too short to learn from"),
        "{log}"
    );
}

#[test]
fn a_busy_database_makes_the_stop_hook_spool_and_the_next_command_takes_the_drafts_in() {
    let p = TestProject::in_git_repo();
    let db = p.db();
    // A big import holds the write lock for longer than any hook may wait.
    db.execute_batch("BEGIN IMMEDIATE").unwrap();
    let stop = json!({"hook_event_name": "Stop", "session_id": "busy-session", "cwd": p.root(),
        "last_assistant_message": knowledge("Rebuild the search index after a bulk import")});
    let run = hook(&p, "stop", &stop);
    assert_eq!(run.code, Some(0));
    assert!(run.took < Duration::from_secs(5), "{:?}", run.took);
    let spooled: Vec<_> = std::fs::read_dir(p.path(".gza/spool"))
        .expect("the drafts were spooled")
        .collect();
    assert_eq!(spooled.len(), 1);
    let stored: i64 = db
        .query_row("SELECT COUNT(*) FROM learnings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        stored, 0,
        "nothing could be written while the lock was held"
    );
    // A command that only reads does not wait for the lock to take the spool in.
    let run = run_bounded(&p, &["learnings", "show"], b"", 10);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.took < Duration::from_secs(3), "{:?}", run.took);
    db.execute_batch("ROLLBACK").unwrap();
    // The lock is gone: the next command takes the drafts in, once.
    let all = learnings_json(&p);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(
        all[0]["text"],
        "Rebuild the search index after a bulk import"
    );
    assert_eq!(all[0]["status"], "draft");
    let shown = p.json(&["learnings", "show", "--json", "L1"]);
    assert_eq!(shown["sources"][0]["session"], "busy-session");
    assert_eq!(
        std::fs::read_dir(p.path(".gza/spool")).unwrap().count(),
        0,
        "the spool is empty once taken in"
    );
    assert_eq!(learnings_json(&p).len(), 1);
}

#[test]
fn injections_a_busy_database_cannot_take_are_spooled_and_the_context_still_given() {
    let p = TestProject::in_git_repo();
    p.ok(&[
        "learnings",
        "add",
        "--priority",
        "CRITICAL",
        "Never force-push to main",
    ]);
    let db = p.db();
    db.execute_batch("BEGIN IMMEDIATE").unwrap();
    let start = json!({"hook_event_name": "SessionStart", "session_id": "s-busy", "cwd": p.root(), "source": "startup"});
    let run = hook(&p, "session-start", &start);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("Never force-push to main"),
        "{}",
        run.stdout
    );
    db.execute_batch("ROLLBACK").unwrap();
    drop(db);
    p.ok(&["learnings", "show"]);
    let stats = p.ok(&["learnings", "stats"]);
    assert!(stats.contains("SessionStart"), "{stats}");
}

#[test]
fn a_draft_taught_only_by_a_session_never_breaks_add_update_or_regeneration() {
    let p = TestProject::in_git_repo();
    let stop = json!({"hook_event_name": "Stop", "session_id": "only-source", "cwd": p.root(),
        "last_assistant_message": knowledge("Run the migrations before the seed script")});
    assert_eq!(hook(&p, "stop", &stop).code, Some(0));
    assert_eq!(learnings_json(&p).len(), 1);
    p.ok(&["learnings", "add", "Money is stored as integer cents"]);
    p.ok(&["learnings", "update"]);
    p.ok(&["learnings", "validate"]);
    p.ok(&["learnings", "archive", "L1"]);
    p.ok(&["learnings", "restore", "L1"]);
    p.ok(&["learnings", "promote", "L1"]);
    p.ok(&["learnings", "edit", "L1", "--priority", "CRITICAL"]);
    // Promoted, the session's learning is in learnings.md like a task's.
    p.ok(&["learnings", "update"]);
    let file = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap();
    assert!(
        file.contains("Run the migrations before the seed script"),
        "{file}"
    );
    assert!(file.contains("Money is stored as integer cents"), "{file}");
    // Automatic regeneration after a task keeps the file current too.
    p.command_agent(
        "cat >/dev/null; echo done\n",
        "learnings:\n  regenerate_every: 1\n  extraction_provider: none\n",
    );
    p.add(&["--type", "explore", "Look at the README"]);
    p.ok(&["work", "--all", "--quiet"]);
    let log = std::fs::read_to_string(p.path(".gza/logs/learnings.log")).unwrap_or_default();
    assert!(!log.contains("regeneration failed"), "{log}");
    let version: i64 = p
        .db()
        .query_row("SELECT COUNT(*) FROM learnings_versions", [], |r| r.get(0))
        .unwrap();
    assert!(version >= 3, "{version} versions");
}

/// A model folder of the test's own (the files linked to the installed model), so the int8
/// copy derived beside it can be damaged without touching anyone else's.
fn private_model(p: &TestProject) -> std::path::PathBuf {
    let installed = crate::support::model::model_dir();
    let dir = p.scratch().join("model");
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&installed).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if entry.path().is_file() && !name.to_string_lossy().starts_with('.') {
            std::os::unix::fs::symlink(entry.path(), dir.join(name)).unwrap();
        }
    }
    dir
}

#[test]
fn a_damaged_int8_copy_is_rebuilt_with_one_warning_and_search_still_finds() {
    let mut p = TestProject::in_git_repo();
    let model = private_model(&p);
    p.set_env("GZA_MODEL_DIR", &model.to_string_lossy());
    p.ok(&[
        "learnings",
        "add",
        "Stripe webhooks must verify the signature header",
    ]);
    p.ok(&[
        "learnings",
        "add",
        "Invoices are exported as CSV by the nightly job",
    ]);
    let copy = model.join(".gza-int8-v3.bin");
    let good = std::fs::read(&copy).expect("the int8 copy was derived");
    let found = p.json(&["learnings", "search", "--json", "stripe webhook signature"]);
    assert_eq!(found[0]["id"], "L1", "{found}");
    // Damage the row scales of the first matrix (the header is left as it was), once the jobs
    // the commands started have ended: one still running could rebuild it first.
    p.settle();
    let mut bad = good.clone();
    bad[256..4096].fill(0xff);
    std::fs::write(&copy, &bad).unwrap();
    let run = p.run(&["learnings", "search", "--json", "stripe webhook signature"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(
        warnings[0].starts_with("warning: the embedding model's int8 copy")
            && warnings[0].contains("is damaged")
            && warnings[0].contains("rebuilt it"),
        "{}",
        run.stderr
    );
    let found: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(found[0]["id"], "L1", "{found}");
    assert_eq!(std::fs::read(&copy).unwrap(), good, "rebuilt as it was");
    let again = p.run(&["learnings", "search", "--json", "stripe webhook signature"]);
    assert_eq!(again.stderr, "", "one warning, not one per run");
    // A hook never rebuilds it (that is more than its budget): it ranks by words meanwhile,
    // logs why once, and the background job rebuilds it.
    p.settle();
    std::fs::write(&copy, &bad).unwrap();
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": p.root(),
        "prompt": "do stripe webhooks verify the signature header"});
    let run = hook(&p, "user-prompt-submit", &prompt);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("Stripe webhooks must verify"),
        "{}",
        run.stdout
    );
    let log = std::fs::read_to_string(p.path(".gza/logs/learnings.log")).unwrap();
    assert!(log.contains("is damaged"), "{log}");
    wait_until(60, "the background job to rebuild the copy", || {
        std::fs::read(&copy).is_ok_and(|b| b == good)
    });
}

#[test]
fn a_prompt_never_waits_for_drafts_to_be_embedded_they_rank_by_words_and_the_job_embeds_them() {
    let mut p = TestProject::in_git_repo();
    let model = private_model(&p);
    p.set_env("GZA_MODEL_DIR", &model.to_string_lossy());
    p.ok(&[
        "learnings",
        "add",
        "Stripe webhooks must verify the signature header",
    ]);
    // 1,500 drafts no one has embedded (as a busy day of Stop hooks leaves them).
    {
        let db = p.db();
        db.execute_batch("BEGIN").unwrap();
        for i in 0..1500 {
            let text = if i == 700 {
                "The ledger reconciliation job runs after midnight UTC".to_string()
            } else {
                format!("Draft rule number {i} about module m{i} and its fixtures")
            };
            db.execute(
                "INSERT INTO learnings (section, text, origin, status, created_at, updated_at, confirmed_at) \
                 VALUES ('General', ?1, 'agent', 'draft', '2026-11-22T00:00:00Z', '2026-11-22T00:00:00Z', '2026-11-22T00:00:00Z')",
                [text],
            )
            .unwrap();
        }
        db.execute_batch("COMMIT").unwrap();
    }
    // Written behind gza's back: in team mode the hooks' snapshot follows the next command.
    p.ok(&["learnings", "show"]);
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": p.root(),
        "prompt": "when does the ledger reconciliation job run"});
    let run = hook(&p, "user-prompt-submit", &prompt);
    assert_eq!(run.code, Some(0));
    // Embedding 1,500 drafts takes tens of seconds; the hook embeds none of them.
    assert!(
        run.took < Duration::from_secs(5),
        "the hook embedded the drafts: {:?}",
        run.took
    );
    assert!(
        run.stdout
            .contains("ledger reconciliation job runs after midnight"),
        "a draft not embedded yet is ranked by its words: {}",
        run.stdout
    );
    let embedded = || -> i64 {
        p.db()
            .query_row("SELECT COUNT(*) FROM learning_embeddings", [], |r| r.get(0))
            .unwrap()
    };
    wait_until(300, "the background job to embed every draft", || {
        embedded() == 1501
    });
}
