//! End-to-end checks that the real Claude Code CLI runs against `FakeAnthropic`, plus
//! raw-HTTP checks of the fixture itself.
//!
//! The binary is `$GZA_TEST_CLAUDE` or `<repo>/.tools/node_modules/.bin/claude` (installed by
//! `scripts/test`); a missing binary fails the tests.
//! `GZA_UPDATE_CLAUDE_SAMPLES=1` rewrites `tests/it/support/claude_samples/*.ndjson`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::claude::claude_bin;
use crate::support::fake_anthropic::{FakeAnthropic, Reply, RequestKind, Usage};

const TIMEOUT: Duration = Duration::from_secs(30);

struct ClaudeRun {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    events: Vec<Value>,
    elapsed: Duration,
    server_url: String,
    /// Temp root: `work/` is the cwd, `home/` is HOME.
    dir: tempfile::TempDir,
}

impl ClaudeRun {
    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }
    fn result(&self) -> &Value {
        self.events
            .iter()
            .rev()
            .find(|e| e["type"] == "result")
            .unwrap_or_else(|| {
                panic!(
                    "no result event\nstdout:\n{}\nstderr:\n{}",
                    self.stdout, self.stderr
                )
            })
    }
    fn of_type(&self, ty: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == ty).collect()
    }
    fn retries(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "system" && e["subtype"] == "api_retry")
            .collect()
    }
    /// stdout with temp paths and the port replaced by placeholders.
    fn redacted_stdout(&self) -> String {
        let root = std::fs::canonicalize(self.dir.path()).unwrap();
        let work = root.join("work").to_string_lossy().into_owned();
        let home = root.join("home").to_string_lossy().into_owned();
        let key: String = work
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let hostport = self.server_url.trim_start_matches("http://").to_string();
        self.stdout
            .replace(&work, "{WORKDIR}")
            .replace(&home, "{HOME}")
            .replace(&key, "{PROJECT_KEY}")
            .replace(&hostport, "127.0.0.1:{PORT}")
    }
    fn debug(&self) -> String {
        format!(
            "{:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Run `claude -p` with `prompt` on stdin in a fresh temp dir against `server`.
/// `setup` gets the work dir (the cwd) before the run.
fn run_claude(
    bin: &Path,
    server: &FakeAnthropic,
    prompt: &str,
    max_turns: u32,
    extra_env: &[(&str, &str)],
    setup: impl FnOnce(&Path),
) -> ClaudeRun {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    setup(&work);
    let mut cmd = Command::new(bin);
    // `-p` without an argument reads the prompt from stdin; `-p -` would send "-\n<stdin>".
    cmd.args(["-p", "--output-format", "stream-json", "--verbose"]);
    cmd.args(["--max-turns", &max_turns.to_string()]);
    cmd.args([
        "--allowedTools",
        "Read",
        "Write",
        "Edit",
        "Glob",
        "Grep",
        "Bash",
    ]);
    cmd.args(["--tools", "Read,Write,Edit,Glob,Grep,Bash"]);
    cmd.current_dir(&work).env_clear();
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd.env("HOME", &home);
    for (k, v) in server.claude_env() {
        cmd.env(k, v);
    }
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn claude");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(prompt.as_bytes()).unwrap();
    drop(stdin);
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let st = child.wait().unwrap();
            let (o, e) = (t_out.join().unwrap(), t_err.join().unwrap());
            panic!("claude timed out after {TIMEOUT:?} ({st})\nstdout:\n{o}\nstderr:\n{e}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let stdout = t_out.join().unwrap();
    let stderr = t_err.join().unwrap();
    let events = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad NDJSON line {l:?}: {e}")))
        .collect();
    ClaudeRun {
        status,
        stdout,
        stderr,
        events,
        elapsed,
        server_url: server.url(),
        dir,
    }
}

fn save_sample(name: &str, run: &ClaudeRun) {
    if !std::env::var("GZA_UPDATE_CLAUDE_SAMPLES").is_ok_and(|v| v == "1") {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/claude_samples");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), run.redacted_stdout()).unwrap();
}

fn assert_usage(v: &Value, u: Usage) {
    assert_eq!(v["input_tokens"], u.input_tokens, "usage {v}");
    assert_eq!(v["output_tokens"], u.output_tokens, "usage {v}");
    assert_eq!(
        v["cache_creation_input_tokens"], u.cache_creation_input_tokens,
        "usage {v}"
    );
    assert_eq!(
        v["cache_read_input_tokens"], u.cache_read_input_tokens,
        "usage {v}"
    );
}

/// Opus 4.8 list prices per token, which Claude Code applies to the default model.
fn opus_cost(u: Usage) -> f64 {
    (u.input_tokens as f64 * 5.0
        + u.output_tokens as f64 * 25.0
        + u.cache_creation_input_tokens as f64 * 6.25
        + u.cache_read_input_tokens as f64 * 0.5)
        / 1e6
}

// ---------------------------------------------------------------------------------------
// (a) text reply → success
// ---------------------------------------------------------------------------------------

#[test]
fn fake_claude_text_reply_succeeds() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start(vec![Reply::text("Hello from the fake server.")]);
    let run = run_claude(&bin, &server, "Say hello.", 5, &[], |_| {});
    assert!(run.status.success(), "{}", run.debug());

    let init = &run.events[0];
    assert_eq!(
        (&init["type"], &init["subtype"]),
        (&json!("system"), &json!("init")),
        "{}",
        run.debug()
    );
    let session = init["session_id"].as_str().unwrap().to_string();
    assert_eq!(
        init["tools"],
        json!(["Bash", "Edit", "Glob", "Grep", "Read", "Write"])
    );
    assert!(init["claude_code_version"].is_string());

    let assistants = run.of_type("assistant");
    assert_eq!(assistants.len(), 1, "{}", run.debug());
    assert_eq!(
        assistants[0]["message"]["content"][0]["text"],
        "Hello from the fake server."
    );

    let result = run.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 1);
    assert_eq!(result["result"], "Hello from the fake server.");
    assert_eq!(result["session_id"], session.as_str());
    assert_usage(&result["usage"], Usage::for_reply(0));
    let cost = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (cost - opus_cost(Usage::for_reply(0))).abs() < 1e-9,
        "cost {cost}"
    );

    // What reached the server.
    let reqs = server.message_requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.route(), "/v1/messages");
    assert_eq!(req.json["stream"], true);
    assert_eq!(req.header("x-api-key"), Some("sk-ant-fake-key"));
    assert_eq!(
        req.header("x-claude-code-session-id"),
        Some(session.as_str())
    );
    assert!(
        req.last_user_text().ends_with("Say hello."),
        "{}",
        req.last_user_text()
    );
    assert!(!req.last_user_text().contains("-\nSay"));
    assert_eq!(server.remaining(), 0);
}

// ---------------------------------------------------------------------------------------
// (b) Write tool call → file on disk, success
// ---------------------------------------------------------------------------------------

#[test]
fn fake_claude_tool_use_write_creates_file() {
    let Some(bin) = claude_bin() else { return };
    // An absolute path inside the run's work dir (known only in `setup`).
    let server = FakeAnthropic::start(vec![]);
    let run = run_claude(&bin, &server, "Create hello.txt.", 5, &[], |work| {
        let target = work.join("hello.txt");
        server.push(Reply::write_file(
            target.to_str().unwrap(),
            "hello, world\n",
        ));
        server.push(Reply::text("Created hello.txt."));
    });
    assert!(run.status.success(), "{}", run.debug());
    let file = run.work().join("hello.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello, world\n");

    let result = run.result();
    assert_eq!(result["subtype"], "success", "{}", run.debug());
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["result"], "Created hello.txt.");
    let total = Usage::sum_for_replies(0..2);
    assert_usage(&result["usage"], total);
    let cost = result["total_cost_usd"].as_f64().unwrap();
    assert!((cost - opus_cost(total)).abs() < 1e-9, "cost {cost}");

    // Stream: assistant(tool_use) → user(tool_result) → assistant(text) → result.
    let kinds: Vec<&str> = run
        .events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["system", "assistant", "user", "assistant", "result"],
        "{}",
        run.debug()
    );
    let tool_use = &run.events[1]["message"]["content"][0];
    assert_eq!(tool_use["type"], "tool_use");
    assert_eq!(tool_use["name"], "Write");
    let tool_result = &run.events[2]["message"]["content"][0];
    assert_eq!(tool_result["type"], "tool_result");
    assert_eq!(tool_result["tool_use_id"], tool_use["id"]);

    let reqs = server.message_requests();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[1]
            .last_user_text()
            .contains("File created successfully"),
        "{}",
        reqs[1].last_user_text()
    );
    save_sample("success.ndjson", &run);
}

#[test]
fn fake_claude_max_turns_reports_error_max_turns() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start(vec![]);
    let run = run_claude(&bin, &server, "Create a.txt.", 1, &[], |work| {
        server.push(Reply::write_file(
            work.join("a.txt").to_str().unwrap(),
            "a\n",
        ));
        server.push(Reply::text("never sent"));
    });
    assert_eq!(run.status.code(), Some(1), "{}", run.debug());
    // The tool of the last allowed turn still ran.
    assert!(run.work().join("a.txt").exists());
    let result = run.result();
    assert_eq!(result["subtype"], "error_max_turns", "{}", run.debug());
    assert_eq!(result["is_error"], true);
    assert_eq!(result["terminal_reason"], "max_turns");
    assert_eq!(result["num_turns"], 2);
    assert!(result.get("result").is_none());
    assert_eq!(
        result["errors"],
        json!(["Reached maximum number of turns (1)"])
    );
    assert_usage(&result["usage"], Usage::for_reply(0));
    assert_eq!(server.message_requests().len(), 1);
    assert_eq!(server.remaining(), 1);
    save_sample("error_max_turns.ndjson", &run);
}

// ---------------------------------------------------------------------------------------
// (c) HTTP errors, retries, timeouts
// ---------------------------------------------------------------------------------------

#[test]
fn fake_claude_http_500_retries_then_fails() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start_with_default(vec![], Reply::Status(500, "boom".into()));
    // Default is 10 retries with exponential backoff (minutes); 2 takes ~2 s.
    let run = run_claude(
        &bin,
        &server,
        "hi",
        5,
        &[("CLAUDE_CODE_MAX_RETRIES", "2")],
        |_| {},
    );
    assert_eq!(run.status.code(), Some(1), "{}", run.debug());
    assert_eq!(server.message_requests().len(), 3);
    let retries = run.retries();
    assert_eq!(retries.len(), 2, "{}", run.debug());
    for (i, r) in retries.iter().enumerate() {
        assert_eq!(r["attempt"], i + 1);
        assert_eq!(r["max_retries"], 2);
        assert_eq!(r["error_status"], 500);
        assert_eq!(r["error"], "server_error");
        assert!(r["retry_delay_ms"].as_f64().unwrap() > 0.0);
    }
    let last = run.of_type("assistant").pop().unwrap();
    assert_eq!(last["message"]["model"], "<synthetic>");
    assert_eq!(last["error"], "server_error");
    let result = run.result();
    // Not an error subtype: "success" with is_error.
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["api_error_status"], 500);
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .starts_with("API Error: 500 boom")
    );
    assert_eq!(result["total_cost_usd"], 0.0);
    assert_usage(&result["usage"], Usage::default());
    save_sample("error_api_500.ndjson", &run);
}

#[test]
fn fake_claude_http_529_gives_up_after_three_attempts() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start_with_default(vec![], Reply::status(529));
    // No CLAUDE_CODE_MAX_RETRIES: 529 has its own limit of 3 attempts.
    let run = run_claude(&bin, &server, "hi", 5, &[], |_| {});
    assert_eq!(run.status.code(), Some(1), "{}", run.debug());
    assert_eq!(server.message_requests().len(), 3);
    let retries = run.retries();
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0]["max_retries"], 10);
    assert_eq!(retries[0]["error"], "overloaded");
    let result = run.result();
    assert_eq!(result["is_error"], true);
    assert_eq!(result["api_error_status"], Value::Null);
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("Repeated 529 Overloaded errors")
    );
}

#[test]
fn fake_claude_429_retry_after_then_success() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start(vec![
        Reply::Error {
            status: 429,
            message: "slow down".into(),
            retry_after: Some(1),
            should_retry: None,
        },
        Reply::text("ok now"),
    ]);
    let run = run_claude(&bin, &server, "hi", 5, &[], |_| {});
    assert!(run.status.success(), "{}", run.debug());
    let retries = run.retries();
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0]["error_status"], 429);
    assert_eq!(retries[0]["error"], "rate_limit");
    assert_eq!(retries[0]["retry_delay_ms"], 1000.0);
    let reqs = server.message_requests();
    assert!(reqs[1].at - reqs[0].at >= Duration::from_millis(950));
    assert_eq!(reqs[0].body, reqs[1].body, "a retry re-sends the same body");
    let result = run.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    // The failed attempt costs nothing: only slot 1 counts.
    assert_usage(&result["usage"], Usage::for_reply(1));
}

#[test]
fn fake_claude_no_retry_when_disabled() {
    let Some(bin) = claude_bin() else { return };
    // Both ways of switching retries off.
    let s1 = FakeAnthropic::start_with_default(vec![], Reply::status(500));
    let r1 = run_claude(
        &bin,
        &s1,
        "hi",
        5,
        &[("CLAUDE_CODE_MAX_RETRIES", "0")],
        |_| {},
    );
    let s2 = FakeAnthropic::start_with_default(
        vec![],
        Reply::Error {
            status: 500,
            message: "nope".into(),
            retry_after: None,
            should_retry: Some(false),
        },
    );
    let r2 = run_claude(&bin, &s2, "hi", 5, &[], |_| {});
    for (s, r) in [(&s1, &r1), (&s2, &r2)] {
        assert_eq!(r.status.code(), Some(1), "{}", r.debug());
        assert_eq!(s.message_requests().len(), 1, "{}", r.debug());
        assert!(r.retries().is_empty());
        assert_eq!(r.result()["api_error_status"], 500);
    }
}

#[test]
fn fake_claude_hang_times_out_and_retries() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start(vec![Reply::Hang, Reply::text("after the hang")]);
    let run = run_claude(
        &bin,
        &server,
        "hi",
        5,
        &[("API_TIMEOUT_MS", "2000")],
        |_| {},
    );
    assert!(run.status.success(), "{}", run.debug());
    let retries = run.retries();
    assert_eq!(retries.len(), 1, "{}", run.debug());
    assert_eq!(retries[0]["error_status"], Value::Null);
    assert!(run.elapsed >= Duration::from_secs(2));
    assert_eq!(run.result()["result"], "after the hang");
}

#[test]
fn fake_claude_broken_stream_falls_back_to_non_streaming() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start(vec![Reply::BrokenStream, Reply::text("recovered")]);
    let run = run_claude(&bin, &server, "hi", 5, &[], |_| {});
    assert!(run.status.success(), "{}", run.debug());
    assert!(
        run.retries().is_empty(),
        "no api_retry event for the fallback"
    );
    let reqs = server.message_requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].json["stream"], true);
    assert_eq!(
        reqs[1].json.get("stream"),
        None,
        "fallback request is non-streaming"
    );
    let result = run.result();
    assert_eq!(result["result"], "recovered");
    // Quirk of Claude Code 2.1.x: result.usage is zero after the fallback, while
    // modelUsage and total_cost_usd count the non-streaming reply.
    assert_usage(&result["usage"], Usage::default());
    let model_usage = result["modelUsage"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(model_usage["inputTokens"], Usage::for_reply(1).input_tokens);
    assert_eq!(
        model_usage["outputTokens"],
        Usage::for_reply(1).output_tokens
    );
    let cost = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (cost - opus_cost(Usage::for_reply(1))).abs() < 1e-9,
        "cost {cost}"
    );
}

#[test]
fn fake_claude_user_prompt_submit_hook_context_reaches_the_model() {
    let Some(bin) = claude_bin() else { return };
    let server = FakeAnthropic::start(vec![Reply::text("seen")]);
    let run = run_claude(&bin, &server, "hi", 5, &[], |work| {
        let output = json!({"hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit", "additionalContext": "MARKER-7f3a"}});
        let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{
            "type": "command", "command": format!("echo '{output}'")}]}]}});
        std::fs::create_dir_all(work.join(".claude")).unwrap();
        std::fs::write(work.join(".claude/settings.json"), settings.to_string()).unwrap();
    });
    assert!(run.status.success(), "{}", run.debug());
    let req = &server.message_requests()[0];
    let messages = req.json["messages"].as_array().unwrap();
    assert!(
        messages.contains(&json!({"role": "system",
            "content": "UserPromptSubmit hook additional context: MARKER-7f3a"})),
        "{messages:#?}"
    );
    assert!(req.all_text().contains("MARKER-7f3a"));
}

// ---------------------------------------------------------------------------------------
// The fixture itself over raw HTTP (no claude needed)
// ---------------------------------------------------------------------------------------

struct RawResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
    /// SSE events as (event, data).
    fn events(&self) -> Vec<(String, Value)> {
        self.body
            .split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .map(|b| {
                let ev = b
                    .lines()
                    .find_map(|l| l.strip_prefix("event: "))
                    .unwrap()
                    .to_string();
                let data = b.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
                (ev, serde_json::from_str(data).unwrap())
            })
            .collect()
    }
}

/// Minimal HTTP/1.1 client: reads one response (content-length or chunked).
fn read_response(r: &mut BufReader<TcpStream>) -> std::io::Result<RawResponse> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status: u16 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            line.clear();
            r.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16)
                .map_err(|_| std::io::Error::other(format!("bad chunk size {line:?}")))?;
            if size == 0 {
                line.clear();
                r.read_line(&mut line)?;
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])?;
            line.clear();
            r.read_line(&mut line)?;
        }
    } else if let Some(n) = get("content-length") {
        body.resize(n.parse().unwrap(), 0);
        r.read_exact(&mut body)?;
    }
    Ok(RawResponse {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    })
}

fn connect(server: &FakeAnthropic) -> (TcpStream, BufReader<TcpStream>) {
    let s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let r = BufReader::new(s.try_clone().unwrap());
    (s, r)
}

fn post(w: &mut TcpStream, path: &str, body: &Value) {
    let b = body.to_string();
    write!(w, "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}", b.len()).unwrap();
}

fn req_body(stream: bool) -> Value {
    json!({"model": "claude-test-1", "max_tokens": 100, "stream": stream,
           "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
           "messages": [{"role": "user", "content": "hi"}]})
}

#[test]
fn fake_claude_fixture_speaks_messages_api() {
    let server = FakeAnthropic::start(vec![
        Reply::text("hello there, this text is long enough to be split into deltas"),
        Reply::tool_use(
            "Write",
            json!({"file_path": "/tmp/x", "content": "é ünïcode"}),
        ),
        Reply::text("plain json"),
    ]);
    let (mut w, mut r) = connect(&server);
    // Keep-alive: three requests plus side requests on one connection.
    post(&mut w, "/v1/messages?beta=true", &req_body(true));
    let sse = read_response(&mut r).unwrap();
    assert_eq!(sse.status, 200);
    assert!(
        sse.header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = sse.events();
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    assert!(
        names
            .iter()
            .filter(|n| **n == "content_block_delta")
            .count()
            > 1
    );
    for (e, d) in &events {
        assert_eq!(d["type"], e.as_str());
    }
    let start = &events[0].1["message"];
    assert_eq!(start["model"], "claude-test-1");
    assert!(start["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(start["usage"]["input_tokens"], 100);
    assert_eq!(start["usage"]["cache_read_input_tokens"], 2000);
    let text: String = events
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(
        text,
        "hello there, this text is long enough to be split into deltas"
    );
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 20);

    // count_tokens and a haiku side call don't consume the script.
    post(
        &mut w,
        "/v1/messages/count_tokens?beta=true",
        &json!({"model": "m", "messages": []}),
    );
    let ct = read_response(&mut r).unwrap();
    assert_eq!(ct.status, 200);
    assert!(ct.json()["input_tokens"].as_u64().unwrap() > 0);
    post(
        &mut w,
        "/v1/messages",
        &json!({"model": "claude-haiku-4-5", "max_tokens": 10, "messages": []}),
    );
    let side = read_response(&mut r).unwrap().json();
    assert_eq!(side["content"][0]["text"], "done");

    post(&mut w, "/v1/messages?beta=true", &req_body(true));
    let events = read_response(&mut r).unwrap().events();
    let block = &events
        .iter()
        .find(|(e, _)| e == "content_block_start")
        .unwrap()
        .1;
    assert_eq!(block["content_block"]["type"], "tool_use");
    assert_eq!(block["content_block"]["name"], "Write");
    assert!(
        block["content_block"]["id"]
            .as_str()
            .unwrap()
            .starts_with("toolu_")
    );
    let partial: String = events
        .iter()
        .filter_map(|(_, d)| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&partial).unwrap(),
        json!({"file_path": "/tmp/x", "content": "é ünïcode"})
    );
    let delta = &events.iter().find(|(e, _)| e == "message_delta").unwrap().1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 21);

    // Non-streaming, chunked request body.
    let b = req_body(false).to_string();
    let (a, c) = b.split_at(10);
    write!(w, "POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{c}\r\n0\r\n\r\n", a.len(), c.len()).unwrap();
    let msg = read_response(&mut r).unwrap();
    assert_eq!(msg.header("content-type"), Some("application/json"));
    let msg = msg.json();
    assert_eq!(msg["type"], "message");
    assert_eq!(
        msg["content"],
        json!([{"type": "text", "text": "plain json"}])
    );
    assert_eq!(msg["stop_reason"], "end_turn");
    assert_eq!(msg["usage"]["output_tokens"], 22);

    // Exhausted: default "done".
    post(&mut w, "/v1/messages", &req_body(false));
    assert_eq!(
        read_response(&mut r).unwrap().json()["content"][0]["text"],
        "done"
    );

    let reqs = server.requests();
    let kinds: Vec<RequestKind> = reqs.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RequestKind::Message { slot: 0 },
            RequestKind::CountTokens,
            RequestKind::SideMessage,
            RequestKind::Message { slot: 1 },
            RequestKind::Message { slot: 2 },
            RequestKind::Message { slot: 3 },
        ]
    );
    assert_eq!(
        reqs[4].json,
        req_body(false),
        "chunked body recorded de-chunked"
    );
    assert_eq!(reqs[1].path, "/v1/messages/count_tokens?beta=true");
}

#[test]
fn fake_claude_fixture_errors_hang_and_broken_stream() {
    let server = FakeAnthropic::start(vec![
        Reply::Error {
            status: 429,
            message: "slow".into(),
            retry_after: Some(7),
            should_retry: None,
        },
        Reply::status(529),
        Reply::Status(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"raw"}}"#.into(),
        ),
        Reply::BrokenStream,
        Reply::Hang,
    ]);
    let (mut w, mut r) = connect(&server);
    post(&mut w, "/v1/messages", &req_body(true));
    let e = read_response(&mut r).unwrap();
    assert_eq!(e.status, 429);
    assert_eq!(e.header("retry-after"), Some("7"));
    assert_eq!(e.json()["error"]["type"], "rate_limit_error");
    assert_eq!(e.json()["error"]["message"], "slow");
    post(&mut w, "/v1/messages", &req_body(true));
    let e = read_response(&mut r).unwrap();
    assert_eq!(e.status, 529);
    assert_eq!(e.json()["type"], "error");
    assert_eq!(e.json()["error"]["type"], "overloaded_error");
    post(&mut w, "/v1/messages", &req_body(true));
    let e = read_response(&mut r).unwrap();
    assert_eq!(
        (e.status, e.json()["error"]["message"].clone()),
        (500, json!("raw"))
    );

    post(&mut w, "/v1/messages", &req_body(true));
    let broken = read_response(&mut r);
    assert!(broken.is_err(), "stream must be cut before its last chunk");

    // Hang: no answer until the server drops.
    let (mut w, mut r) = connect(&server);
    post(&mut w, "/v1/messages", &req_body(true));
    r.get_ref()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 1];
    let err = r.get_mut().read(&mut buf).unwrap_err();
    assert!(matches!(
        err.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ));
    assert_eq!(server.requests().len(), 5);
    let t = Instant::now();
    drop(server);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "drop must not wait for hung replies"
    );
    r.get_ref()
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    assert_eq!(
        r.get_mut().read(&mut buf).unwrap_or(0),
        0,
        "connection closed on drop"
    );
}
