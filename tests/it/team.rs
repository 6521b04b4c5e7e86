//! Team mode (issue 21): projects in a shared PostgreSQL database, where credentials may come
//! from, what a database that cannot be reached does, and claims and leases across workers.
//! The PostgreSQL tests run against the test cluster whatever the suite's backend; the claim
//! and fencing tests run on the suite's backend (so on both, across the two passes).

use crate::support::postgres;
use crate::support::project::{TestProject, wait_until};

/// A git repository with `origin` at `url` (never contacted), gza not initialised yet.
fn clone_with_origin(p: &TestProject, url: &str) {
    p.git(&["init", "--quiet", "--initial-branch=main"]);
    p.git(&["remote", "add", "origin", url]);
}

#[test]
fn db_status_shows_backend_project_and_schema_but_never_the_password() {
    let mut p = TestProject::empty_sqlite();
    let cluster = postgres::cluster();
    let name = cluster.new_database_owned_by("gza_secret");
    // A password given in the environment is the person's to give.
    p.set_env(
        "GZA_DATABASE_URL",
        &format!(
            "postgres://gza_secret:hunter2-for-tests@127.0.0.1:{}/{name}",
            cluster.port
        ),
    );
    clone_with_origin(&p, "git@github.com:acme/status.git");
    let init = p.ok(&["init"]);
    assert!(init.contains("project github.com/acme/status"), "{init}");
    let status = p.ok(&["db", "status"]);
    assert!(status.contains("backend         postgres"), "{status}");
    assert!(
        status.contains(&format!(
            "location        postgres://gza_secret@127.0.0.1:{}/{name}",
            cluster.port
        )),
        "{status}"
    );
    assert!(
        status.contains("project         github.com/acme/status"),
        "{status}"
    );
    assert!(
        status.contains("schema          gza_p_github_com_acme_status_"),
        "{status}"
    );
    assert!(status.contains("connection      ok"), "{status}");
    assert!(!status.contains("hunter2"), "{status}");
    let json = p.json(&["db", "status", "--json"]);
    assert_eq!(json["backend"], "postgres");
    assert_eq!(json["schema_version"], json["known_version"]);
    assert!(!json.to_string().contains("hunter2"));
    cluster.drop_database(&name);

    let local = TestProject::new_sqlite();
    let status = local.ok(&["db", "status"]);
    assert!(status.contains("backend         sqlite"), "{status}");
    assert!(status.contains(".gza/gza.db"), "{status}");
}

#[test]
fn a_password_in_a_settings_file_is_refused_in_one_line() {
    let p = TestProject::new_sqlite();
    let port = postgres::cluster().port;
    for file in ["gza.yaml", "gza.local.yaml"] {
        let url = format!("postgres://gza_secret:hunter2-for-tests@127.0.0.1:{port}/db");
        if file == "gza.yaml" {
            p.config(&format!("database: {url}\n"));
        } else {
            p.config("");
            std::fs::write(p.path(file), format!("database: {url}\n")).unwrap();
        }
        let err = p.user_error(&["next"]);
        assert!(
            err.contains(file) && err.contains("holds a password"),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
        let _ = std::fs::remove_file(p.path("gza.local.yaml"));
    }
    // The key=value form too.
    p.config(&format!(
        "database: host=127.0.0.1 port={port} password=hunter2-for-tests dbname=db\n"
    ));
    let err = p.user_error(&["next"]);
    assert!(
        err.contains("holds a password") && !err.contains("hunter2"),
        "{err}"
    );
}

#[test]
fn passwords_come_from_pgpass_or_a_service_file() {
    let p = TestProject::empty_sqlite();
    let cluster = postgres::cluster();
    let name = cluster.new_database_owned_by("gza_secret");
    let port = cluster.port;
    std::fs::write(p.path("gza.yaml"), "").unwrap();
    p.config(&format!(
        "database: postgres://gza_secret@127.0.0.1:{port}/{name}\nproject: team/app\n"
    ));
    // No password anywhere: one line that says where to give it.
    let err = p.user_error(&["init"]);
    assert!(
        err.contains("refused user gza_secret") && err.contains("~/.pgpass"),
        "{err}"
    );
    // A password file others can read is not used, as libpq does.
    let pgpass = p.home().join(".pgpass");
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{port}:*:gza_secret:hunter2-for-tests\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = p.user_error(&["init"]);
    assert!(
        err.contains(&format!(
            "{} holds passwords but others can read it",
            pgpass.display()
        )) && err.contains("chmod 600"),
        "{err}"
    );
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let init = p.ok(&["init"]);
    assert!(
        init.contains("Created") && init.contains("team/app"),
        "{init}"
    );
    p.add(&["a task kept in PostgreSQL"]);
    std::fs::remove_file(&pgpass).unwrap();
    // A service file names the whole connection, its password included.
    std::fs::write(
        p.home().join(".pg_service.conf"),
        format!(
            "[team]\nhost=127.0.0.1\nport={port}\nuser=gza_secret\ndbname={name}\npassword=hunter2-for-tests\n"
        ),
    )
    .unwrap();
    p.config("database: service=team\nproject: team/app\n");
    let next = p.ok(&["next"]);
    assert!(next.contains("a task kept in PostgreSQL"), "{next}");
    let err = {
        p.config("database: service=nosuch\nproject: team/app\n");
        p.user_error(&["next"])
    };
    assert!(err.contains("service \"nosuch\""), "{err}");
    cluster.drop_database(&name);
}

#[test]
fn a_database_that_cannot_be_reached_is_one_line_and_nothing_is_claimed() {
    let mut p = TestProject::new_sqlite();
    p.command_agent("cat > /dev/null\necho ran > ran.txt\n", "");
    p.add(&["would run"]);
    // Nothing listens on this port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    p.set_env(
        "GZA_DATABASE_URL",
        &format!("postgres://gza@127.0.0.1:{closed}/nowhere?connect_timeout=2"),
    );
    for args in [
        &["next"][..],
        &["work"],
        &["add", "more"],
        &["db", "status"],
    ] {
        let err = p.user_error(args);
        assert!(
            err.contains(&format!(
                "cannot reach PostgreSQL at postgres://gza@127.0.0.1:{closed}/nowhere"
            )),
            "{args:?}: {err}"
        );
    }
    assert!(!p.path("ran.txt").exists());
}

/// With `sslmode=prefer` (the default) and a server without TLS (the test cluster's), a
/// command reads none of the system's certificates: they are read only once a server agrees to
/// TLS. Reading them (the bundle, then every file of `/etc/ssl/certs`) was half of a short
/// command's CPU at every start. `SSL_CERT_FILE` names a FIFO that nobody writes, which blocks
/// whoever opens it for reading: a command that reads the roots never ends by itself.
#[test]
fn a_connection_to_a_server_without_tls_reads_no_certificate() {
    let mut p = TestProject::empty_postgres();
    p.ok(&["init"]);
    let id = p.add(&["read no certificate"]);
    let fifo = p.scratch().join("roots.pem");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    p.set_env("SSL_CERT_FILE", fifo.to_str().unwrap());
    let mut child = p.spawn(&["show", &id.to_string()]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            // Let the reader go (an empty file), so the command ends either way.
            drop(std::fs::OpenOptions::new().write(true).open(&fifo));
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let status = status.expect("`gza show` blocked reading the certificates in SSL_CERT_FILE");
    let out = child.wait_with_output().unwrap();
    assert!(status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("read no certificate"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn clones_of_one_repository_share_a_project_and_other_repositories_see_none_of_it() {
    let first = TestProject::empty_postgres();
    let second = TestProject::empty_sharing(&first);
    let other = TestProject::empty_sharing(&first);
    clone_with_origin(&first, "git@github.com:acme/app.git");
    clone_with_origin(&second, "https://github.com/acme/app");
    clone_with_origin(&other, "https://github.com/acme/other.git");
    let made = first.ok(&["init"]);
    assert!(made.contains("project github.com/acme/app"), "{made}");
    let id = first.add(&["fix the flaky test"]);
    first.ok(&[
        "learnings",
        "add",
        "The integration tests need a running PostgreSQL",
    ]);
    // The second clone (its gza.yaml came with the repository) finds the project made.
    std::fs::copy(first.path("gza.yaml"), second.path("gza.yaml")).unwrap();
    let joined = second.ok(&["init"]);
    assert!(
        joined.contains("Using") && joined.contains("github.com/acme/app"),
        "{joined}"
    );
    let next = second.ok(&["next"]);
    assert!(next.contains("fix the flaky test"), "{next}");
    assert_eq!(
        second.json(&["show", &id.to_string(), "--json"])["prompt"],
        "fix the flaky test"
    );
    let learned = second.ok(&["learnings", "search", "PostgreSQL integration tests"]);
    assert!(learned.contains("need a running PostgreSQL"), "{learned}");
    // Another repository in the same database is another project: it starts at task 1 and
    // sees nothing of the first.
    other.ok(&["init"]);
    let empty = other.ok(&["next"]);
    assert!(!empty.contains("flaky"), "{empty}");
    assert_eq!(other.add(&["its own task"]), 1);
    let none = other.ok(&["learnings", "show"]);
    assert!(!none.contains("PostgreSQL"), "{none}");
    assert!(!first.ok(&["history"]).contains("its own task"));
}

/// A repository that commits `.gza/project` (past gza's .gitignore, with `git add -f`) naming
/// another repository's project does not put its clones into that project: the committed name
/// is never used, the clone is named by its own `origin`, and the file is left as git has it.
#[test]
fn a_committed_project_name_does_not_put_a_clone_into_another_project() {
    let victim = TestProject::empty_postgres();
    let evil = TestProject::empty_sharing(&victim);
    clone_with_origin(&victim, "git@github.com:acme/payroll.git");
    clone_with_origin(&evil, "https://github.com/mallory/tools.git");
    victim.ok(&["init"]);
    victim.add(&["rotate the payroll signing key"]);
    victim.ok(&[
        "learnings",
        "add",
        "The payroll export runs from the deploy host only",
    ]);
    let named = std::fs::read_to_string(victim.path(".gza/project")).unwrap();
    assert_eq!(named.trim(), "github.com/acme/payroll");

    std::fs::create_dir_all(evil.path(".gza")).unwrap();
    std::fs::write(evil.path(".gza/project"), &named).unwrap();
    std::fs::write(evil.path("README.md"), "tools\n").unwrap();
    evil.git(&["add", "--force", ".gza/project", "README.md"]);
    evil.git(&["commit", "--quiet", "-m", "tools"]);
    let made = evil.ok(&["init"]);
    assert!(made.contains("github.com/mallory/tools"), "{made}");
    assert!(!made.contains("acme/payroll"), "{made}");
    let history = evil.ok(&["history"]);
    assert!(!history.contains("payroll"), "{history}");
    let learnings = evil.ok(&["learnings", "show"]);
    assert!(!learnings.contains("payroll"), "{learnings}");
    let status = evil.ok(&["db", "status"]);
    assert!(status.contains("github.com/mallory/tools"), "{status}");
    assert_eq!(evil.add(&["its own task"]), 1);
    assert!(!victim.ok(&["history"]).contains("its own task"));
    // The committed file is git's: left as it is.
    assert_eq!(
        std::fs::read_to_string(evil.path(".gza/project")).unwrap(),
        named
    );
}

/// An agent that notes when it starts and ends (seconds, from the clock), then sleeps.
fn timed_agent(p: &TestProject, log: &std::path::Path, sleep: &str) {
    p.command_agent(
        &format!(
            "cat > /dev/null\necho \"start $GZA_TASK_ID $(date +%s.%N)\" >> {log}\nsleep {sleep}\necho \"end $GZA_TASK_ID $(date +%s.%N)\" >> {log}\necho done\n",
            log = log.display()
        ),
        "max_concurrent: 3\n",
    );
}

#[test]
fn workers_in_many_processes_claim_each_task_once_within_max_concurrent() {
    let p = TestProject::new();
    let log = p.scratch().join("runs.log");
    timed_agent(&p, &log, "0.3");
    for i in 0..24 {
        p.add(&[&format!("task number {i}")]);
    }
    let workers: Vec<_> = (0..4)
        .map(|_| p.spawn(&["work", "--all", "--parallel", "2"]))
        .collect();
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let mut starts = std::collections::BTreeMap::<String, usize>::new();
    let mut events = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        let at: f64 = parts[2].parse().unwrap();
        if parts[0] == "start" {
            *starts.entry(parts[1].to_string()).or_default() += 1;
            events.push((at, 1i32));
        } else {
            events.push((at, -1));
        }
    }
    assert_eq!(starts.len(), 24, "every task ran: {text}");
    assert!(
        starts.values().all(|n| *n == 1),
        "no task ran twice: {starts:?}"
    );
    events.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (mut running, mut most) = (0, 0);
    for (_, d) in events {
        running += d;
        most = most.max(running);
    }
    assert!(most <= 3, "{most} agents ran at once with max_concurrent 3");
    let stats = p.json(&["stats", "--json"]);
    assert_eq!(stats["by_status"]["completed"], 24, "{stats}");
}

#[test]
fn a_worker_whose_task_was_reaped_while_it_was_away_records_nothing() {
    let p = TestProject::new();
    let marker = p.scratch().join("started");
    // The agent ends only when it is stopped: the reaper stops it before it reaps, the gap in
    // which its worker, seeing it end, tries to record AGENT_EXIT. (Were it to end on its own
    // first, the test would pass without passing through that gap.)
    p.command_agent(
        &format!(
            "cat > /dev/null\ntouch {}\nsleep 120\necho 'the late result'\n",
            marker.display()
        ),
        "",
    );
    p.add(&["slow task"]);
    let away = p.spawn(&["work"]);
    wait_until(30, "the agent to start", || marker.exists());
    // The worker cannot renew its lease (as if cut off from the database): it expires, on the
    // database's clock, and another worker reaps the task.
    p.lapse_worker_leases();
    let reaper = p.run(&["work"]);
    assert_eq!(reaper.code, 0, "{reaper}");
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "WORKER_DIED");
    // The first worker comes back: its agent is stopped, and its result is refused.
    let out = away.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("its result was not recorded"), "{stderr}");
    assert_eq!(p.task_field::<String>(1, "status"), "failed");
    assert_eq!(p.task_field::<String>(1, "failure_reason"), "WORKER_DIED");
    assert_eq!(p.task_field::<Option<String>>(1, "output"), None);
}

#[test]
fn a_worker_whose_lease_lapsed_while_nobody_reaped_its_task_still_records_its_result() {
    let p = TestProject::new();
    let marker = p.scratch().join("started");
    let release = p.scratch().join("release");
    // The agent ends on its own, when the test says, after the lease expired (a machine asleep);
    // no other worker runs to reap the task.
    p.command_agent(
        &format!(
            "cat > /dev/null\ntouch {}\nwhile [ ! -e {} ]; do sleep 0.1; done\necho 'the late result'\n",
            marker.display(),
            release.display()
        ),
        "",
    );
    p.add(&["slow task"]);
    let away = p.spawn(&["work"]);
    wait_until(30, "the agent to start", || marker.exists());
    p.lapse_worker_leases();
    std::fs::write(&release, "").unwrap();
    let out = away.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not recorded"), "{stderr}");
    assert_eq!(p.task_field::<String>(1, "status"), "completed");
    assert_eq!(
        p.task_field::<Option<String>>(1, "output").as_deref(),
        Some("the late result")
    );
}

/// Where each running task runs, in team mode: `gza ps` (table and JSON) and the dashboard's
/// board name the host of its worker's lease next to the worker's PID; a project on SQLite,
/// where every worker is on this machine, shows no host column.
/// A project on PostgreSQL (`team`) or SQLite with one task whose agent has started and
/// sleeps a minute, and the `gza work` running it.
pub(crate) fn with_a_running_task(team: bool) -> (TestProject, std::process::Child) {
    let p = if team {
        TestProject::empty_postgres()
    } else {
        TestProject::empty_sqlite()
    };
    p.ok(&["init"]);
    let marker = p.scratch().join("started");
    p.command_agent(
        &format!(
            "cat > /dev/null\ntouch {}\nsleep 60\necho done\n",
            marker.display()
        ),
        "",
    );
    p.add(&["a task to watch run"]);
    let worker = p.spawn(&["work"]);
    wait_until(30, "the agent to start", || marker.exists());
    (p, worker)
}

#[test]
fn a_running_task_names_its_workers_host_in_ps_and_on_the_board() {
    let this_host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    for team in [true, false] {
        let (p, mut worker) = with_a_running_task(team);
        let ps = p.ok(&["ps"]);
        let header = ps.lines().next().unwrap_or_default().to_string();
        let json = p.json(&["ps", "--json"]);
        let s = crate::serve::Server::start(&p, &[]);
        let board = s.page("/");
        drop(s);
        let _ = p.run(&["kill", "1"]);
        let _ = worker.wait();
        if team {
            assert!(header.contains("HOST"), "{ps}");
            let row = ps.lines().nth(1).unwrap_or_default();
            assert!(row.contains(&this_host), "{ps}");
            assert_eq!(json[0]["host"], this_host.as_str(), "{json}");
            assert!(
                board.contains(&format!("on {}", crate::serve::escaped(&this_host))),
                "{board}"
            );
        } else {
            assert!(!header.contains("HOST"), "{ps}");
            assert!(json[0]["host"].is_null(), "{json}");
            assert!(!board.contains("class=\"host\""), "{board}");
        }
    }
}

/// Two clones of one project share its tasks, so they must not both extract them: while one
/// clone's regeneration runs (its extraction call slow), the other's `learnings update` says
/// another machine is regenerating, makes no call, and changes nothing; when the first is
/// done, the task was extracted once, and the second clone's update finds nothing owed.
#[test]
fn one_regeneration_at_a_time_across_the_clones_of_a_project() {
    use crate::support::fake_anthropic::{FakeAnthropic, Reply};
    use std::time::Duration;
    let server = FakeAnthropic::start_with_default(
        Vec::new(),
        Reply::text("- [General] Shared answers land once").delayed(Duration::from_secs(3)),
    )
    .without_side_messages();
    let mut first = TestProject::empty_postgres();
    let mut second = TestProject::empty_sharing(&first);
    clone_with_origin(&first, "git@github.com:acme/regen.git");
    clone_with_origin(&second, "https://github.com/acme/regen");
    for p in [&mut first, &mut second] {
        p.command_agent(
            "cat > /dev/null\necho 'Tests pass.'\n",
            &format!(
                "learnings:\n  extraction_provider: anthropic\n  base_url: {}\n  regenerate_every: 100\n",
                server.url()
            ),
        );
        p.set_env("ANTHROPIC_API_KEY", "sk-ant-api03-TESTKEYTESTKEYTESTKEY");
        p.ok(&["init"]);
    }
    first.add(&["look at the flaky test", "--type", "explore"]);
    first.ok(&["work"]);
    assert_eq!(server.message_requests().len(), 0);
    let running = first.spawn(&["learnings", "update"]);
    wait_until(30, "the first clone's extraction call", || {
        !server.message_requests().is_empty()
    });
    let busy = second.run(&["learnings", "update"]);
    assert_ne!(busy.code, 0, "{busy}");
    assert!(
        busy.stderr.contains("another machine is regenerating"),
        "{busy}"
    );
    assert_eq!(busy.stderr.trim().lines().count(), 1, "{busy}");
    let out = running.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(server.message_requests().len(), 1);
    second.ok(&["learnings", "update"]);
    assert_eq!(server.message_requests().len(), 1, "extracted twice");
    let shown = second.ok(&["learnings", "search", "shared answers"]);
    assert!(shown.contains("Shared answers land once"), "{shown}");
}

/// A worker that waits for work (`gza work --watch`): idle, it is woken when a task is added
/// (on PostgreSQL by the database's notification, on SQLite by the file's change counter) well
/// before its 30 s recheck, runs it, and waits again; a task that waits on another runs once
/// that one is done; in team mode `gza ps` lists it with its host while it waits; SIGTERM ends
/// it cleanly with a summary. Runs on the suite's backend (both, across the two passes).
#[test]
fn a_watching_worker_is_woken_by_new_work_and_stops_cleanly() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho done\n", "");
    let worker = p.spawn(&["work", "--watch"]);
    let leases = || -> i64 {
        p.db()
            .query_row("SELECT COUNT(*) FROM worker_leases", [], |r| r.get(0))
            .unwrap()
    };
    wait_until(30, "the worker to take its lease", || leases() >= 1);
    std::thread::sleep(std::time::Duration::from_millis(500));
    if p.db().is_postgres() {
        let ps = p.ok(&["ps"]);
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim()
            .to_string();
        assert!(ps.contains("No tasks running"), "{ps}");
        assert!(ps.contains("Workers") && ps.contains(&host), "{ps}");
    }
    let status = |id: i64| p.task_field::<String>(id, "status");
    let first = p.add(&["the first task"]);
    wait_until(10, "the first task to be run", || {
        status(first) == "completed"
    });
    // A task that waits on another: run once the other is done.
    let blocker = p.add(&["the blocker"]);
    let blocked = p.add(&["after the blocker", "--depends-on", &blocker.to_string()]);
    wait_until(10, "both to be run", || {
        status(blocker) == "completed" && status(blocked) == "completed"
    });
    unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    let out = worker.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Stopped by SIGTERM: 130 (the README's exit codes), after its summary.
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(stdout.contains("3 completed, 0 failed"), "{stdout}");
    assert_eq!(leases(), 0, "the lease is given up");
}

/// Sessions the server has had in database `name` (each a backend process it started), once
/// the count has stayed the same for a second (a backend counts itself as it exits, a moment
/// after its client).
fn sessions_settled(name: &str) -> i64 {
    let mut admin = postgres::cluster().admin();
    let mut read = || -> i64 {
        admin
            .execute("SELECT pg_stat_clear_snapshot()", &[])
            .unwrap();
        admin
            .query_one(
                "SELECT sessions FROM pg_stat_database WHERE datname = $1",
                &[&name],
            )
            .unwrap()
            .get(0)
    };
    let mut last = read();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let now = read();
        if now == last || std::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// `gza work` opens one connection to run a task, whatever it does on the way (issue 21: it
/// opened five, a server process started for each: the start's sweep and lease, the worker,
/// the heartbeat, the lease's release, the hooks' snapshot), and records what the task was
/// given and its credit as on SQLite (`both_backends`-style checks in `learning_records`).
#[test]
fn work_opens_one_connection_for_a_task() {
    let mut p = TestProject::empty_postgres();
    // No model: no embedding job (a process of its own, with its own connection) starts.
    p.set_env(
        "GZA_MODEL_DIR",
        p.scratch().join("no-model").to_str().unwrap(),
    );
    p.ok(&["init"]);
    p.command_agent("cat > /dev/null\necho done\n", "work_priority: normal\n");
    for i in 1..=3 {
        p.ok(&[
            "learnings",
            "add",
            &format!("Rule {i}: run the parser tests first"),
        ]);
    }
    let id = p.add(&["--type", "explore", "look at the parser"]);
    let name = p.pg_database().expect("a database of its own").to_string();
    let before = sessions_settled(&name);
    let out = p.ok(&["work", "--count", "1"]);
    assert!(out.contains("1 completed"), "{out}");
    let after = sessions_settled(&name);
    assert_eq!(
        after - before,
        1,
        "connections opened by `gza work` for one task"
    );
    let show = p.ok(&["show", &id.to_string()]);
    assert!(show.contains("(L1, L2, L3)"), "{show}");
}

/// README's "Team mode" commands, as written, set the project up on PostgreSQL; the order a
/// person may take instead (the database line first, no trust) gets SQLite and says plainly
/// why, in what `gza init` prints.
#[test]
fn the_readmes_team_mode_commands_work_as_written() {
    let cluster = postgres::cluster();
    let name = cluster.new_database();
    let line = format!("database: {}\n", cluster.url(&name));
    let append = |p: &TestProject| {
        let mut yaml = std::fs::read_to_string(p.path("gza.yaml")).unwrap_or_default();
        yaml.push_str(&line);
        std::fs::write(p.path("gza.yaml"), yaml).unwrap();
    };
    // The database line first, untrusted: SQLite, and why.
    let p = TestProject::empty_sqlite();
    clone_with_origin(&p, "git@github.com:acme/readme-first.git");
    append(&p);
    let out = p.ok(&["init"]);
    assert!(out.contains("(SQLite)"), "{out}");
    assert!(
        out.contains("database setting is ignored until you trust it") && out.contains("gza trust"),
        "{out}"
    );
    // Run again without trusting: refused, saying why again.
    let err = p.user_error(&["init"]);
    assert!(err.contains("ignored until you trust it"), "{err}");

    // As README says: init, the line, trust, init.
    let p = TestProject::empty_sqlite();
    clone_with_origin(&p, "git@github.com:acme/readme.git");
    p.ok(&["init"]);
    append(&p);
    p.ok(&["trust", "--yes"]);
    let out = p.ok(&["init"]);
    assert!(
        out.contains("PostgreSQL") && out.contains("project github.com/acme/readme"),
        "{out}"
    );
    let status = p.ok(&["db", "status"]);
    assert!(status.contains("backend         postgres"), "{status}");
    cluster.drop_database(&name);
}

/// What a worker whose task was reaped elsewhere leaves in this clone's logs: the room it made
/// for the outcome, blank. Nothing can record it, so the next `gza work` removes it; a kept
/// outcome that holds something is left to the reaping that reads it.
#[test]
fn a_blank_outcome_reservation_of_a_finished_task_goes_with_the_next_work() {
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho done\n", "");
    p.add(&["a task"]);
    p.ok(&["work"]);
    let blank = p.path(".gza/logs/1.outcome.json");
    std::fs::write(&blank, vec![b' '; 64 * 1024]).unwrap();
    let other = p.path(".gza/logs/7.outcome.json");
    std::fs::write(&other, "{\"task_id\": 7}\n").unwrap();
    p.ok(&["work"]);
    assert!(!blank.exists(), "the blank reservation was kept");
    assert!(other.exists());
}

/// What `gza work` asks of the `tasks` row and of `credit_totals` for each task beyond the
/// first of a run, read from the server's own table statistics once the run's connection has
/// ended: each is a round trip on a far database. A task's row is updated at most seven times
/// (its claim, where it runs and its base in one statement, the prompt, the log's redaction,
/// the agent's process, its ending and its output), and `credit_totals` is read once per task
/// (its credit): how far reverts were scanned is asked once per run, not after every task.
#[test]
fn work_asks_the_database_no_more_per_task_than_it_needs() {
    let mut p = TestProject::empty_postgres();
    p.set_env(
        "GZA_MODEL_DIR",
        p.scratch().join("no-model").to_str().unwrap(),
    );
    p.git(&["init", "--quiet", "--initial-branch=main"]);
    p.git(&["commit", "--quiet", "--allow-empty", "-m", "initial"]);
    p.ok(&["init"]);
    p.command_agent("cat > /dev/null\necho done\n", "");
    for i in 1..=4 {
        p.add(&[&format!("task {i}")]);
    }
    let name = p.pg_database().expect("a database of its own").to_string();
    // (updates of `tasks` rows, scans of `credit_totals`), once the counts stop moving.
    let settled = || -> (i64, i64) {
        let mut db =
            ::postgres::Client::connect(&postgres::cluster().url(&name), ::postgres::NoTls)
                .unwrap();
        let mut read = || -> (i64, i64) {
            db.execute("SELECT pg_stat_clear_snapshot()", &[]).unwrap();
            let row = db
                .query_one(
                    "SELECT (SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'tasks'), \
                     (SELECT COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) FROM pg_stat_user_tables \
                      WHERE relname = 'credit_totals')",
                    &[],
                )
                .unwrap();
            (row.get(0), row.get(1))
        };
        let mut last = read();
        for _ in 0..20 {
            std::thread::sleep(std::time::Duration::from_millis(1000));
            let now = read();
            if now == last {
                return now;
            }
            last = now;
        }
        last
    };
    // A first run sets up what every later run finds (how far reverts were scanned); then a
    // run of one task and a run of two: their difference is what one more task costs.
    p.ok(&["work", "--count", "1", "--quiet"]);
    let start = settled();
    p.ok(&["work", "--count", "1", "--quiet"]);
    let one = settled();
    p.ok(&["work", "--count", "2", "--quiet"]);
    let two = settled();
    let first = (one.0 - start.0, one.1 - start.1);
    let run = (two.0 - one.0, two.1 - one.1);
    let (updates, scans) = (run.0 - first.0, run.1 - first.1);
    assert!(
        updates <= 7,
        "{updates} updates of the task's row for one more task (a run of one {first:?}, of two {run:?})"
    );
    assert_eq!(
        scans, 1,
        "reads of credit_totals for one more task (a run of one {first:?}, of two {run:?})"
    );
}

/// An address that takes the connection and never answers (a database behind a dead link, a
/// black hole): every command ends within the URL's `connect_timeout`, in one line naming the
/// address, and writes nothing. tokio-postgres's own timeout covers only the TCP connect, so
/// the startup exchange waited forever: `gza history` printed nothing for 400 s.
#[test]
fn a_database_that_takes_the_connection_and_never_answers_is_one_line_within_its_timeout() {
    let mut p = TestProject::empty_postgres();
    p.ok(&["init"]);
    p.add(&["already there"]);
    let url = p.database_env().pop().unwrap().1;
    // Accepts (the kernel does, from its backlog) and never answers; open while it lives.
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hole.local_addr().unwrap().port();
    p.set_env(
        "GZA_DATABASE_URL",
        &format!("postgres://gza@127.0.0.1:{port}/nowhere?connect_timeout=2"),
    );
    for args in [
        &["history"][..],
        &["add", "never stored"],
        &["db", "status"],
        &["next"],
    ] {
        let started = std::time::Instant::now();
        let err = p.user_error_within(60, args, None);
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_secs(30),
            "{args:?} took {took:?}: {err}"
        );
        assert!(
            err.contains(&format!(
                "cannot reach PostgreSQL at postgres://gza@127.0.0.1:{port}/nowhere: no answer within 2 s"
            )),
            "{args:?}: {err}"
        );
    }
    drop(hole);
    p.unset_env("GZA_DATABASE_URL");
    p.set_env("GZA_DATABASE_URL", &url);
    let history = p.ok(&["history"]);
    assert!(!history.contains("never stored"), "{history}");
}

/// A connection as the superuser to the project's own database in the test cluster.
fn admin_of(p: &TestProject) -> ::postgres::Client {
    ::postgres::Client::connect(
        &format!(
            "host=127.0.0.1 port={} user=gza dbname={}",
            postgres::cluster().port,
            p.pg_database().expect("a PostgreSQL project")
        ),
        ::postgres::NoTls,
    )
    .expect("connect to the project's database")
}

/// A project opens the schema the register (`gza.projects`) gives its full name, never the one
/// its name derives to. Schema names were a 40-character slug and a 32-bit hash, and the owner
/// was checked only when a migration was pending: a name made to hash as another project's
/// (the probe crafted one sharing the first 40 characters) opened that project's tasks and
/// learnings. Here the victim's tables are moved to the schema the other name is given, as a
/// crafted collision would have them: the victim still opens its own, the other name is a
/// project not made yet, and `gza init` gives it a schema of its own.
#[test]
fn a_name_that_hashes_to_another_projects_schema_never_opens_it() {
    let victim = TestProject::empty_postgres();
    let other = TestProject::empty_sharing(&victim);
    clone_with_origin(&victim, "git@github.com:acme/payroll.git");
    clone_with_origin(&other, "https://github.com/mallory/payroll-tools.git");
    victim.ok(&["init"]);
    victim.add(&["rotate the payroll signing key"]);
    let schema_of = |p: &TestProject| {
        p.json(&["db", "status", "--json"])["schema"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let victims = schema_of(&victim);
    other.ok(&["init"]);
    let others = schema_of(&other);
    let mut admin = admin_of(&victim);
    admin
        .batch_execute(&format!(
            "DROP SCHEMA {others} CASCADE; \
             DELETE FROM gza.projects WHERE schema_name = '{others}'; \
             ALTER SCHEMA {victims} RENAME TO {others}; \
             UPDATE gza.projects SET schema_name = '{others}' WHERE name = 'github.com/acme/payroll'"
        ))
        .unwrap();
    // The other name derives to the schema the victim's tables are in: it must not open them.
    let run = other.run(&["history"]);
    assert!(!run.stdout.contains("payroll signing key"), "{run}");
    let err = other.user_error(&["history"]);
    assert!(
        err.contains("project \"github.com/mallory/payroll-tools\" is not in")
            && err.contains("run `gza init`"),
        "{err}"
    );
    let history = victim.ok(&["history"]);
    assert!(
        history.contains("rotate the payroll signing key"),
        "{history}"
    );
    let made = other.ok(&["init"]);
    assert!(made.contains("github.com/mallory/payroll-tools"), "{made}");
    let mine = schema_of(&other);
    assert_ne!(mine, others);
    // New schemas carry a 64-bit hash.
    assert_eq!(mine.rsplit('_').next().unwrap().len(), 16, "{mine}");
    let history = other.ok(&["history"]);
    assert!(!history.contains("payroll signing key"), "{history}");
    assert_eq!(other.add(&["its own task"]), 1);
    assert!(!victim.ok(&["history"]).contains("its own task"));
    let owners: Vec<(String, String)> = admin
        .query(
            "SELECT name, schema_name FROM gza.projects ORDER BY name",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        owners,
        [
            ("github.com/acme/payroll".to_string(), others),
            ("github.com/mallory/payroll-tools".to_string(), mine)
        ]
    );
}

/// A proxy on a loopback port to the test cluster: each connection accepted is handed, with a
/// new connection to the server, to `relay` on a thread of its own. Runs while the test does;
/// returns its port.
fn proxy_to_cluster(
    relay: impl Fn(std::net::TcpStream, std::net::TcpStream) + Send + Sync + 'static,
) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server_port = postgres::cluster().port;
    let relay = std::sync::Arc::new(relay);
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", server_port)) else {
                return;
            };
            let relay = std::sync::Arc::clone(&relay);
            std::thread::spawn(move || relay(client, server));
        }
    });
    port
}

/// A proxy to the test cluster that passes each connection on until the server has said it is
/// ready for a query `answers` times, then passes nothing more from the server: the connection
/// stays open and acknowledged (the kernel takes what gza sends) and nothing ever answers, as
/// with a stopped server or a proxy whose far side hung. Runs while the test does; returns its
/// port. For connections without TLS (`sslmode=disable`), whose every server message is a type
/// byte and a length.
fn answers_then_never(answers: usize) -> u16 {
    use std::io::{Read, Write};
    proxy_to_cluster(move |mut client, mut server| {
        let (mut from_client, mut to_server) =
            (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::spawn(move || std::io::copy(&mut from_client, &mut to_server));
        let mut pending = Vec::new();
        let mut ready = 0;
        let mut buf = [0u8; 8192];
        while ready < answers {
            let Ok(n) = server.read(&mut buf) else { return };
            if n == 0 {
                return;
            }
            pending.extend_from_slice(&buf[..n]);
            while pending.len() >= 5 && ready < answers {
                let len = u32::from_be_bytes(pending[1..5].try_into().unwrap()) as usize;
                if pending.len() < 1 + len {
                    break;
                }
                let message: Vec<u8> = pending.drain(..1 + len).collect();
                if client.write_all(&message).is_err() {
                    return;
                }
                if message[0] == b'Z' {
                    ready += 1;
                }
            }
        }
        // Silent from here on, both sockets kept open.
        std::thread::sleep(std::time::Duration::from_secs(3600));
        drop((client, server));
    })
}

/// A statement on an open connection whose peer acknowledges and never answers fails within
/// the statement deadline (`GZA_STATEMENT_SECONDS`), in one line naming the address: whichever
/// statement it is (the project's lookup in the register as the connection opens, or a later
/// one of the command). Neither `connect_timeout` nor keepalives cover it: the connection is up
/// and the kernel acknowledges, so every command waited forever.
#[test]
fn a_statement_that_gets_no_answer_on_an_open_connection_is_one_line_within_its_deadline() {
    let mut p = TestProject::empty_postgres();
    p.ok(&["init"]);
    p.add(&["already there"]);
    let db = p.pg_database().unwrap().to_string();
    p.set_env("GZA_STATEMENT_SECONDS", "2");
    p.set_env("GZA_RECONNECT_SECONDS", "1");
    for answers in [1, 4] {
        let port = answers_then_never(answers);
        p.set_env(
            "GZA_DATABASE_URL",
            &format!("postgres://gza@127.0.0.1:{port}/{db}?sslmode=disable&connect_timeout=2"),
        );
        for args in [&["history"][..], &["add", "never stored"], &["next"]] {
            let started = std::time::Instant::now();
            let err = p.user_error_within(60, args, None);
            let took = started.elapsed();
            assert!(
                took < std::time::Duration::from_secs(30),
                "{args:?} after {answers} answers took {took:?}: {err}"
            );
            assert!(
                err.contains(&format!(
                    "PostgreSQL at postgres://gza@127.0.0.1:{port}/{db}"
                )) && err.contains("did not answer a statement within 2 s"),
                "{args:?} after {answers} answers: {err}"
            );
        }
    }
    p.unset_env("GZA_DATABASE_URL");
    p.set_env("GZA_DATABASE_URL", &postgres::cluster().url(&db));
    let history = p.ok(&["history"]);
    assert!(history.contains("already there"), "{history}");
    assert!(!history.contains("never stored"), "{history}");
}

/// A proxy to the test cluster that passes everything both ways until the client sends a
/// statement whose text holds `needle`; from then on that connection's server says nothing
/// more (the statement reaches the server, its answer never reaches gza), as when the server
/// stops between two statements. When gza closes or shuts down its side, the server's side is
/// closed too, so the server ends that session and frees what it held. Returns its port.
fn silent_after_statement(needle: &'static str) -> u16 {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    proxy_to_cluster(move |mut client, mut server| {
        let silent = Arc::new(AtomicBool::new(false));
        let (mut from_client, mut to_server) =
            (client.try_clone().unwrap(), server.try_clone().unwrap());
        let heard = Arc::clone(&silent);
        std::thread::spawn(move || {
            // The tail of what came before, so a needle split across reads is still seen.
            let mut seen: Vec<u8> = Vec::new();
            let mut buf = [0u8; 8192];
            loop {
                let n = match from_client.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                seen.extend_from_slice(&buf[..n]);
                if seen.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    heard.store(true, Ordering::SeqCst);
                }
                let keep = seen.len().saturating_sub(needle.len());
                seen.drain(..keep);
                if to_server.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to_server.shutdown(std::net::Shutdown::Both);
        });
        let mut buf = [0u8; 8192];
        loop {
            let n = match server.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if silent.load(Ordering::SeqCst) {
                continue;
            }
            if client.write_all(&buf[..n]).is_err() {
                return;
            }
        }
    })
}

/// The lock that makes one regeneration at a time across machines is let go of under the
/// statement deadline too: a server that stops answering just as a regeneration lets go of it
/// held `gza learnings update` forever after its work was done (the release was the one
/// statement sent outside the deadline). Now the command ends within the deadline, and the lock,
/// which goes with the connection, is free for the next regeneration.
#[test]
fn a_server_that_stops_answering_as_the_regeneration_lock_is_released_holds_nothing_up() {
    let mut p = TestProject::empty_postgres();
    p.ok(&["init"]);
    p.ok(&[
        "learnings",
        "add",
        "Run the migrations before the seed script",
    ]);
    let db = p.pg_database().unwrap().to_string();
    let direct = postgres::cluster().url(&db);
    let port = silent_after_statement("pg_advisory_unlock");
    p.set_env("GZA_STATEMENT_SECONDS", "2");
    p.set_env("GZA_RECONNECT_SECONDS", "1");
    p.set_env(
        "GZA_DATABASE_URL",
        &format!("postgres://gza@127.0.0.1:{port}/{db}?sslmode=disable&connect_timeout=2"),
    );
    let (run, took) = p.run_within(90, &["learnings", "update"], None);
    assert!(
        took < std::time::Duration::from_secs(30),
        "took {took:?}:\n{run}"
    );
    assert_eq!(run.code, 0, "the regeneration itself was done:\n{run}");
    p.unset_env("GZA_DATABASE_URL");
    p.set_env("GZA_DATABASE_URL", &direct);
    let again = p.run(&["learnings", "update"]);
    assert_eq!(again.code, 0, "the lock went with the connection:\n{again}");
}

/// What a person got wrong in the connection is said in one line with what to do about it: a
/// user the server lacks, TLS asked of a server without it, and a user the project's owner has
/// not let in, who was told to run `gza init` (which it could not have done either).
#[test]
fn connection_mistakes_are_one_line_that_says_what_to_do() {
    let mut p = TestProject::empty_postgres();
    clone_with_origin(&p, "https://github.com/acme/grants.git");
    p.ok(&["init"]);
    p.add(&["kept from others"]);
    let db = p.pg_database().unwrap().to_string();
    let port = postgres::cluster().port;
    let url = |user: &str, extra: &str| format!("postgres://{user}@127.0.0.1:{port}/{db}{extra}");
    let owner = url("gza", "");

    let unknown = format!("nosuch_{}", std::process::id());
    p.set_env("GZA_DATABASE_URL", &url(&unknown, ""));
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(&format!("has no user {unknown:?}"))
            && err.contains(&format!("CREATE ROLE {unknown} LOGIN")),
        "{err}"
    );

    p.set_env("GZA_DATABASE_URL", &url("gza", "?sslmode=require"));
    let err = p.user_error(&["history"]);
    assert!(
        err.contains("does not offer TLS, and sslmode=require asks for it")
            && err.contains("sslmode=prefer"),
        "{err}"
    );

    // A client certificate and key (for a server that asks for one) are read as libpq reads
    // them; they were refused as parameters gza does not read.
    let key = p.scratch().join("client.key");
    std::fs::write(&key, "not a key\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cert = p.scratch().join("missing.crt");
    p.set_env(
        "GZA_DATABASE_URL",
        &url(
            "gza",
            &format!(
                "?sslmode=require&sslcert={}&sslkey={}",
                cert.display(),
                key.display()
            ),
        ),
    );
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(&format!("sslkey {} can be read by others", key.display()))
            && err.contains("chmod 600"),
        "{err}"
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(&format!(
            "sslcert {}: cannot read a certificate",
            cert.display()
        )),
        "{err}"
    );

    let limited = format!("limited_{}", std::process::id());
    let mut admin = admin_of(&p);
    admin
        .batch_execute(&format!("CREATE ROLE {limited} LOGIN"))
        .unwrap();
    p.set_env("GZA_DATABASE_URL", &url(&limited, ""));
    let schema: String = admin
        .query_one(
            "SELECT schema_name FROM gza.projects WHERE name = 'github.com/acme/grants'",
            &[],
        )
        .unwrap()
        .get(0);
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(&format!("does not let user {limited} use schema {schema}"))
            && err.contains(&format!("GRANT USAGE ON SCHEMA {schema} TO {limited}"))
            && !err.contains("gza init"),
        "{err}"
    );
    // A register made without reads for every user (by an older gza).
    admin
        .batch_execute("REVOKE SELECT ON gza.projects FROM PUBLIC")
        .unwrap();
    let err = p.user_error(&["history"]);
    assert!(
        err.contains(&format!(
            "does not let user {limited} read the register of projects"
        )) && err.contains(&format!("GRANT SELECT ON gza.projects TO {limited}"))
            && !err.contains("gza init"),
        "{err}"
    );
    // The schema, but not its tables.
    admin
        .batch_execute(&format!(
            "GRANT SELECT ON gza.projects TO {limited}; GRANT USAGE ON SCHEMA {schema} TO {limited}"
        ))
        .unwrap();
    let err = p.user_error(&["history"]);
    assert!(
        err.contains("needs rights on the project's schema and tables")
            && !err.contains("gza init"),
        "{err}"
    );
    p.set_env("GZA_DATABASE_URL", &owner);
    assert!(p.ok(&["history"]).contains("kept from others"));
}

/// Clones made through another spelling of one repository join its project: GitHub's ssh over
/// port 443, an ssh `Host` alias of the person's `~/.ssh/config` (resolved by asking `ssh -G`),
/// a self-hosted forge's ssh on another port, and Azure DevOps' ssh and https forms. Each was
/// a project of its own, with none of the team's tasks.
#[test]
fn clones_through_other_spellings_of_one_repository_join_its_project() {
    let first = TestProject::empty_postgres();
    clone_with_origin(&first, "https://github.com/acme/app.git");
    first.ok(&["init"]);
    first.add(&["shared across the spellings"]);
    let join = |url: &str, expected: &str| -> TestProject {
        let other = TestProject::empty_sharing(&first);
        std::fs::create_dir_all(other.home().join(".ssh")).unwrap();
        std::fs::write(
            other.home().join(".ssh/config"),
            "Host github-work\n  HostName github.com\n  IdentityFile ~/.ssh/id_work\n",
        )
        .unwrap();
        clone_with_origin(&other, url);
        other.ok(&["init"]);
        assert_eq!(
            other.json(&["db", "status", "--json"])["project"],
            expected,
            "{url}"
        );
        other
    };
    for url in [
        "ssh://git@ssh.github.com:443/acme/app.git",
        "git@github-work:acme/app.git",
    ] {
        let other = join(url, "github.com/acme/app");
        let next = other.ok(&["next"]);
        assert!(
            next.contains("shared across the spellings"),
            "{url}: {next}"
        );
    }
    let forge = join(
        "https://gitlab.example.com/acme/app.git",
        "gitlab.example.com/acme/app",
    );
    forge.add(&["on the forge"]);
    let next = join(
        "ssh://git@gitlab.example.com:2222/acme/app.git",
        "gitlab.example.com/acme/app",
    )
    .ok(&["next"]);
    assert!(next.contains("on the forge"), "{next}");
    let azure = join(
        "https://org@dev.azure.com/org/proj/_git/repo",
        "dev.azure.com/org/proj/repo",
    );
    azure.add(&["on azure"]);
    let next = join(
        "git@ssh.dev.azure.com:v3/org/proj/repo",
        "dev.azure.com/org/proj/repo",
    )
    .ok(&["next"]);
    assert!(next.contains("on azure"), "{next}");
}

/// A clone that first used the shared database before it had an `origin` is named by its path
/// (`file://<host><path>`), and keeps that name once `origin` is added (what it made is under
/// it): `gza db status` now says so, with the name `origin` gives and how to join it.
#[test]
fn a_clone_named_by_its_path_before_it_had_an_origin_is_told_so_by_db_status() {
    let p = TestProject::empty_postgres();
    p.git(&["init", "--quiet", "--initial-branch=main"]);
    p.ok(&["init"]);
    let pinned = std::fs::read_to_string(p.path(".gza/project")).unwrap();
    let pinned = pinned.trim();
    assert!(pinned.starts_with("file://"), "{pinned}");
    assert!(!p.ok(&["db", "status"]).contains("warning"));
    p.git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/acme/pinned.git",
    ]);
    let status = p.ok(&["db", "status"]);
    assert!(
        status.contains(&format!("project         {pinned}"))
            && status.contains("origin names github.com/acme/pinned")
            && status.contains("delete .gza/project"),
        "{status}"
    );
    let json = p.json(&["db", "status", "--json"]);
    assert_eq!(json["origin_project"], "github.com/acme/pinned");
    std::fs::remove_file(p.path(".gza/project")).unwrap();
    p.ok(&["init"]);
    let status = p.ok(&["db", "status"]);
    assert!(
        status.contains("project         github.com/acme/pinned") && !status.contains("warning"),
        "{status}"
    );
}

/// `gza db status --json` with the database out of reach still prints JSON (what failed and
/// where), besides the one line on stderr and the exit status of any error.
#[test]
fn db_status_json_says_in_json_that_the_database_cannot_be_reached() {
    let mut p = TestProject::new_sqlite();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    p.set_env(
        "GZA_DATABASE_URL",
        &format!("postgres://gza@127.0.0.1:{closed}/nowhere?connect_timeout=2"),
    );
    let run = p.run(&["db", "status", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON on stdout");
    assert_eq!(json["backend"], "postgres");
    assert_eq!(json["connection"], "failed");
    assert!(
        json["error"].as_str().unwrap().contains(&format!(
            "cannot reach PostgreSQL at postgres://gza@127.0.0.1:{closed}/nowhere"
        )),
        "{json}"
    );
    let p = TestProject::empty_postgres();
    p.ok(&["init"]);
    assert_eq!(p.json(&["db", "status", "--json"])["connection"], "ok");
}

/// A proxy to the test cluster whose first connection is ended as a restarting server ends
/// its sessions, once the server has said it is ready for a query `answers` times: the next
/// thing gza sends is not passed on, and gza is told `FATAL 57P01 terminating connection due
/// to administrator command` (what `pg_ctl restart -m fast` sends to every session) and the
/// connection closed. Later connections pass untouched, as to the restarted server. Returns
/// its port. For connections without TLS (`sslmode=disable`).
fn ended_as_by_a_restart_after(answers: usize) -> u16 {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let first = Arc::new(AtomicBool::new(true));
    proxy_to_cluster(move |mut client, mut server| {
        if !first.swap(false, Ordering::SeqCst) {
            let (mut from_client, mut to_server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || std::io::copy(&mut from_client, &mut to_server));
            let _ = std::io::copy(&mut server, &mut client);
            return;
        }
        let ready = Arc::new(AtomicUsize::new(0));
        let (mut from_client, mut to_server, mut to_client) = (
            client.try_clone().unwrap(),
            server.try_clone().unwrap(),
            client.try_clone().unwrap(),
        );
        let seen = Arc::clone(&ready);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = match from_client.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if seen.load(Ordering::SeqCst) >= answers {
                    let mut fields = Vec::new();
                    for (code, text) in [
                        (b'S', "FATAL"),
                        (b'V', "FATAL"),
                        (b'C', "57P01"),
                        (b'M', "terminating connection due to administrator command"),
                    ] {
                        fields.push(code);
                        fields.extend_from_slice(text.as_bytes());
                        fields.push(0);
                    }
                    fields.push(0);
                    let mut message = vec![b'E'];
                    message.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
                    message.extend_from_slice(&fields);
                    let _ = to_client.write_all(&message);
                    break;
                }
                if to_server.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to_client.shutdown(std::net::Shutdown::Both);
            let _ = to_server.shutdown(std::net::Shutdown::Both);
        });
        let mut pending = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = match server.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            pending.extend_from_slice(&buf[..n]);
            while pending.len() >= 5 {
                let len = u32::from_be_bytes(pending[1..5].try_into().unwrap()) as usize;
                if pending.len() < 1 + len {
                    break;
                }
                let message: Vec<u8> = pending.drain(..1 + len).collect();
                // Counted before gza can see it, so what gza sends after is never passed on.
                if message[0] == b'Z' {
                    ready.fetch_add(1, Ordering::SeqCst);
                }
                if client.write_all(&message).is_err() {
                    return;
                }
            }
        }
    })
}

/// A server that restarts while a command opens its project ends the new connection at
/// whichever statement it is on: the lookup in the register of projects right after the
/// connection opened, or the statements setting up the store after it. The command waits the
/// restart out and does its work, as it does for a connection lost later. Only the connection
/// itself was waited for: a storm's worker started just before a restart ended at once with
/// "PostgreSQL … is shutting down or restarting" when the register's lookup was cut.
#[test]
fn a_restart_while_a_command_opens_its_project_is_waited_out_at_every_statement() {
    let mut p = TestProject::empty_postgres();
    p.ok(&["init"]);
    p.add(&["already there"]);
    let db = p.pg_database().unwrap().to_string();
    for answers in 1..=6 {
        for (n, args) in [&["history"][..], &["add", "added"]].iter().enumerate() {
            let port = ended_as_by_a_restart_after(answers);
            p.set_env(
                "GZA_DATABASE_URL",
                &format!("postgres://gza@127.0.0.1:{port}/{db}?sslmode=disable&connect_timeout=5"),
            );
            let run = p.run(args);
            assert!(run.code == 0, "{args:?} cut after {answers} answers: {run}");
            if n == 0 {
                assert!(run.stdout.contains("already there"), "{run}");
            }
        }
    }
    p.unset_env("GZA_DATABASE_URL");
    p.set_env("GZA_DATABASE_URL", &postgres::cluster().url(&db));
    let history = p.ok(&["history"]);
    // Each add stored once, whichever statement was cut.
    assert_eq!(history.matches("added").count(), 6, "{history}");
}
