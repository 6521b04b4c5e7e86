//! Hostile inputs that once crashed gza (exit 101/134) or blocked it: each must end in a one-line
//! message or be survived.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use crate::support::project::TestProject;

/// A loopback HTTP server that answers every request with `head` (status line and headers) and
/// `body`; returns its base URL.
pub fn raw_server(head: &'static str, body: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let body = body.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut request = vec![0; length];
                let _ = reader.read_exact(&mut request);
                let _ = write!(
                    stream,
                    "{head}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            });
        }
    });
    url
}

/// A project with one completed task, extracting with the anthropic client from `url`.
fn project_extracting_from(url: &str, extra: &str) -> TestProject {
    let mut p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho 'Tests pass.'\n",
        &format!(
            "learnings:\n  extraction_provider: anthropic\n  base_url: {url}\n  regenerate_every: 100\n{extra}"
        ),
    );
    p.set_env("ANTHROPIC_API_KEY", "sk-ant-api03-TESTKEYTESTKEYTESTKEY");
    p.add(&["Ship the release", "--type", "explore"]);
    p.ok(&["work"]);
    p
}

#[test]
fn a_timeout_of_1e18_minutes_is_rejected_by_validation() {
    let p = TestProject::new();
    p.add(&["anything"]);
    p.command_agent("cat > /dev/null\necho done\n", "timeout_minutes: 1e18\n");
    let err = p.user_error(&["work"]);
    assert!(err.contains("timeout_minutes must be 0"), "{err}");
    assert_eq!(p.task_field::<String>(1, "status"), "pending");
}

#[test]
fn an_extraction_timeout_of_u64_max_seconds_is_rejected_by_validation() {
    let p = TestProject::new();
    p.config("learnings:\n  timeout_seconds: 18446744073709551615\n");
    let err = p.user_error(&["learnings", "update"]);
    assert!(
        err.contains("learnings.timeout_seconds must be between 1 and"),
        "{err}"
    );
}

#[test]
fn hostile_retry_after_values_do_not_panic() {
    for value in ["-1", "inf", "NaN", "1e308"] {
        let head: &'static str = Box::leak(
            format!("HTTP/1.1 429 Too Many Requests\r\nretry-after: {value}").into_boxed_str(),
        );
        let url = raw_server(head, b"{\"error\":{\"message\":\"slow down\"}}".to_vec());
        // The header is read before the retry decision: no retries keeps the test fast.
        let p = project_extracting_from(&url, "  max_retries: 0\n");
        let run = p.run(&["learnings", "update"]);
        assert!(
            run.code == 0 || run.code == 1,
            "retry-after {value}:\n{run}"
        );
        assert!(
            !run.stderr.contains("panicked"),
            "retry-after {value}:\n{run}"
        );
    }
}

#[test]
fn a_project_path_that_is_not_utf8_works_in_the_background() {
    use std::os::unix::ffi::OsStrExt;
    let p = TestProject::new();
    p.command_agent("cat > /dev/null\necho done\n", "");
    p.add(&["anything"]);
    // The same project reached through a symlink whose name is not UTF-8.
    let link = p.scratch().join(std::ffi::OsStr::from_bytes(b"proj-\xff"));
    std::os::unix::fs::symlink(p.root(), &link).unwrap();
    let out = p
        .command(&["work", "--background"])
        .arg("-C")
        .arg(&link)
        .output()
        .unwrap();
    let run = p.finish(out);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("Started a background worker"), "{run}");
    crate::support::project::wait_until(20, "the background task to finish", || {
        p.task_field::<String>(1, "status") == "completed"
    });
}

/// Run `gza work`, killing it if it has not ended within `secs`; the run, or `None` if it hung.
fn work_within(p: &TestProject, secs: u64) -> Option<crate::support::project::Run> {
    let mut child = p
        .command(&["work"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(p.finish(child.wait_with_output().unwrap()))
}

#[test]
fn a_fifo_as_learnings_md_does_not_block_work() {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho done\n",
        "learnings:\n  extraction_provider: none\n",
    );
    p.add(&["anything"]);
    let fifo = p.path(".gza/learnings.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let run = work_within(&p, 20).expect("gza work blocked on a FIFO learnings.md");
    // The task runs without learnings; why is in the learnings log.
    assert_eq!(run.code, 0, "{run}");
    let log = std::fs::read_to_string(p.path(".gza/logs/learnings.log")).unwrap();
    assert!(log.contains("learnings not injected"), "{log}");
    assert!(
        log.contains("a FIFO (named pipe), not a regular file"),
        "{log}"
    );
}

#[test]
fn a_symlink_to_a_huge_file_as_learnings_md_is_not_read_whole() {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho done\n",
        "learnings:\n  extraction_provider: none\n",
    );
    p.add(&["anything"]);
    // A sparse 8 GB file: reading it whole would take minutes and all the memory. (Inside the
    // project: a link leading out is refused before its size matters.)
    let huge = p.path("huge");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    std::os::unix::fs::symlink(&huge, p.path(".gza/learnings.md")).unwrap();
    let run = work_within(&p, 20).expect("gza work read a huge learnings.md whole");
    assert_eq!(run.code, 0, "{run}");
    let log = std::fs::read_to_string(p.path(".gza/logs/learnings.log")).unwrap();
    assert!(log.contains("more than the 1048576 gza reads"), "{log}");
    let err = p.user_error(&["learnings", "show", "--file"]);
    assert!(err.contains("more than the 1048576 gza reads"), "{err}");
}

#[test]
fn log_raw_is_the_stream_byte_for_byte() {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\nprintf 'line one\\r\\nbad \\377\\376 bytes\\n\\033[31mred\\033[0m\\nno newline at the end'\n",
        "learnings:\n  extraction_provider: none\n",
    );
    p.add(&["print bytes"]);
    p.ok(&["work"]);
    let expected: &[u8] =
        b"line one\r\nbad \xff\xfe bytes\n\x1b[31mred\x1b[0m\nno newline at the end";
    let out = p.command(&["log", "1", "--raw"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, expected);
    // The rendered log copes with the same bytes.
    p.ok(&["log", "1"]);
}

/// A loopback server answering every request 200 with `chunks` MiB of text that never ends in
/// JSON; returns its base URL.
fn endless_body_server(chunks: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    line.clear();
                }
                let chunk = vec![b'x'; 1 << 20];
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    chunks << 20
                );
                for _ in 0..chunks {
                    if stream.write_all(&chunk).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

#[test]
fn an_endless_http_body_is_read_with_a_bound() {
    let url = endless_body_server(512);
    let p = project_extracting_from(&url, "  max_retries: 0\n");
    let (code, stdout, stderr, peak_kib) = p.run_measuring_rss(&["learnings", "update"]);
    assert!(code == Some(0) || code == Some(1), "{stdout}{stderr}");
    // gza's own peak memory: reading the 512 MiB body whole would take more than that.
    let peak_mib = peak_kib / 1024;
    assert!(
        peak_mib < 400,
        "gza peaked at {peak_mib} MiB\n{stdout}{stderr}"
    );
}

/// A loopback server that reads each request and never answers; returns its base URL.
fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut sink = [0u8; 4096];
                let mut stream = stream;
                while stream.read(&mut sink).unwrap_or(0) > 0 {}
            });
        }
    });
    url
}

#[test]
fn an_unresponsive_extraction_endpoint_costs_a_bounded_wait_and_says_so() {
    let url = silent_server();
    let mut p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho 'Tests pass.'\n",
        &format!(
            "learnings:\n  extraction_provider: anthropic\n  base_url: {url}\n  regenerate_every: 1\n  timeout_seconds: 2\n  max_retries: 5\n"
        ),
    );
    p.set_env("ANTHROPIC_API_KEY", "sk-ant-api03-TESTKEYTESTKEYTESTKEY");
    p.add(&["Ship the release", "--type", "explore"]);
    let started = std::time::Instant::now();
    let run = p.run(&["work"]);
    let took = started.elapsed();
    assert_eq!(run.code, 0, "{run}");
    // Six attempts of 2 s plus backoff took about 27 s; the budget is twice the timeout.
    assert!(
        took < std::time::Duration::from_secs(12),
        "took {took:?}\n{run}"
    );
    assert!(
        run.stderr
            .contains("waiting for the learnings regeneration"),
        "{run}"
    );
}

#[test]
fn what_gza_prints_carries_no_terminal_control_sequence_but_colour() {
    // An agent's output and a task's prompt (a repository's tasks file can set one) carry OSC 52
    // (clipboard), OSC 0 (title), a screen clear, a carriage return and C1's CSI. On a terminal
    // (CLICOLOR_FORCE: anstream passes escapes as it would to one) only colour gets through.
    let mut p = TestProject::in_git_repo();
    p.set_env("CLICOLOR_FORCE", "1");
    p.command_agent(
        "cat > /dev/null; printf 'done \\033]52;c;ZXZpbA==\\007 \\033]0;owned\\007 \\033[2J\\rhidden\\302\\23331m\\n'",
        "",
    );
    let id = p.add(&["Fix the bug \u{1b}]52;c;cHduZWQ=\u{7} now\r"]);
    p.ok(&["work"]);
    let bad = |text: &str| {
        text.chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\u{1b}'))
            || text.contains("\u{1b}]")
            || text.contains("\u{1b}[2J")
    };
    for args in [
        vec!["show", &*id.to_string()],
        vec!["show", &*id.to_string(), "--full"],
        vec!["show", &*id.to_string(), "--prompt"],
        vec!["history"],
        vec!["next"],
    ] {
        let run = p.run(&args);
        assert!(!bad(&run.stdout), "{args:?}: {:?}", run.stdout);
        assert!(!bad(&run.stderr), "{args:?}: {:?}", run.stderr);
    }
    let shown = p.run(&["show", &id.to_string()]).stdout;
    assert!(shown.contains("Fix the bug"), "{shown}");
    // An error line quoting the repository's configuration is printed the same way.
    p.config("\"bad\\e]52;c;eA==\\akey\": 1\n");
    let run = p.run(&["history"]);
    assert!(!bad(&run.stderr), "{:?}", run.stderr);
}

/// Make a FIFO at `path`.
fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn a_damaged_learnings_file_or_lock_refuses_a_change_before_anything_is_stored() {
    type Damage = fn(&std::path::Path);
    let damages: [(&str, Damage); 4] = [
        (".gza/learnings.md", |p| std::fs::create_dir(p).unwrap()),
        (".gza/learnings.md", mkfifo),
        (".gza/learnings.lock", |p| std::fs::create_dir(p).unwrap()),
        (".gza/learnings.lock", mkfifo),
    ];
    let changes: [&[&str]; 5] = [
        &["learnings", "add", "Run make test before pushing to main"],
        &[
            "learnings",
            "edit",
            "L1",
            "--text",
            "Run make lint before pushing to main",
        ],
        &["learnings", "archive", "L1"],
        &["learnings", "promote", "L1"],
        &["learnings", "update"],
    ];
    for (file, damage) in damages {
        let p = TestProject::new();
        p.ok(&[
            "learnings",
            "add",
            "Keep handlers thin and move logic into services",
        ]);
        let before = p.ok(&["learnings", "show", "--all", "--json"]);
        let path = p.path(file);
        let _ = std::fs::remove_file(&path);
        damage(&path);
        for args in changes {
            let said = p.user_error(args);
            assert!(said.contains(file), "{file} {args:?}: {said}");
            assert!(said.contains("remove it"), "{file} {args:?}: {said}");
            assert!(
                said.contains("nothing was changed"),
                "{file} {args:?}: {said}"
            );
        }
        assert_eq!(
            p.ok(&["learnings", "show", "--all", "--json"]),
            before,
            "{file}: a refused change stored something"
        );
    }
}

/// Deeply nested YAML: the parser's time grows faster than the input with depth (100,000
/// nested `[` took more than a minute), and a cloned repository's gza.yaml is read by every
/// hook. Every reader of YAML refuses it in one line, at once, naming the file.
#[test]
fn deeply_nested_yaml_is_refused_at_once_by_every_reader() {
    let p = TestProject::new();
    p.add(&["keep-me"]);
    let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let within = |args: &[&str]| {
        let started = std::time::Instant::now();
        let err = p.user_error(args);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{args:?} took {:?}",
            started.elapsed()
        );
        assert!(
            err.contains("nested more than 64 levels deep"),
            "{args:?}: {err}"
        );
        err
    };
    let config = std::fs::read_to_string(p.path("gza.yaml")).unwrap();
    std::fs::write(p.path("gza.yaml"), &deep).unwrap();
    assert!(within(&["history"]).contains("gza.yaml:1:1:"));
    std::fs::write(p.path("gza.yaml"), &config).unwrap();

    let user = p.home().join(".gza/config.yaml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, &deep).unwrap();
    assert!(within(&["history"]).contains("config.yaml:1:1:"));
    std::fs::remove_file(&user).unwrap();

    std::fs::write(p.path("tasks.yaml"), format!("tasks: {deep}")).unwrap();
    assert!(within(&["import", "tasks.yaml"]).contains("tasks.yaml:1:1:"));
    std::fs::write(p.path("expertise.yaml"), &deep).unwrap();
    within(&["learnings", "import", "expertise.yaml"]);
    assert!(p.ok(&["history"]).contains("keep-me"));
}

/// A gza.yaml that exists but is no file (a FIFO, a directory, a link to nothing) is an error
/// naming it: never treated as absent, which sent `gza add` to a parent project's database.
#[test]
fn a_gza_yaml_that_is_not_a_file_stops_gza_instead_of_climbing_to_a_parent() {
    let p = TestProject::new();
    p.add(&["parent's task"]);
    let child = p.path("child");
    std::fs::create_dir(&child).unwrap();
    let entry = child.join("gza.yaml");
    let in_child = |args: &[&str]| {
        let out = p.command(args).current_dir(&child).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    let made = std::process::Command::new("mkfifo")
        .arg(&entry)
        .status()
        .unwrap();
    assert!(made.success());
    for (what, remake) in [
        ("a FIFO (named pipe)", None),
        ("a directory", Some("dir")),
        (
            "a symbolic link to nowhere.yaml, which does not exist",
            Some("link"),
        ),
    ] {
        match remake {
            Some("dir") => {
                std::fs::remove_file(&entry).unwrap();
                std::fs::create_dir(&entry).unwrap();
            }
            Some(_) => {
                std::fs::remove_dir(&entry).unwrap();
                std::os::unix::fs::symlink("nowhere.yaml", &entry).unwrap();
            }
            None => {}
        }
        for args in [&["add", "lost"][..], &["history"]] {
            let err = in_child(args);
            assert!(
                err.contains(&format!(
                    "gza.yaml in {} is {what}, not a regular file",
                    child.display()
                )),
                "{args:?}: {err}"
            );
        }
    }
    let tasks = p.json(&["history", "--json"]);
    assert_eq!(tasks.as_array().unwrap().len(), 1, "{tasks}");
}
