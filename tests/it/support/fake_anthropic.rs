//! A fake Anthropic Messages API server for integration tests (std + serde_json only).
//!
//! `FakeAnthropic::start(script)` binds 127.0.0.1:0, serves HTTP/1.1 on background threads
//! and stops (closing every connection, also hung ones) when dropped. Every request is
//! recorded. `POST /v1/messages` requests made by the agent loop consume `Reply`s from the
//! script in order; once it is exhausted they get the default reply (`Reply::Text("done")`
//! unless `start_with_default` says otherwise).
//!
//! # What Claude Code 2.1.197 sends (observed by logging requests, `claude -p`)
//!
//! Needed env: `ANTHROPIC_BASE_URL=<url()>`, `ANTHROPIC_API_KEY=<anything>`,
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, `HOME=<temp dir>`; see `claude_env()`.
//!
//! * `HEAD /` once at start-up (a connectivity pre-flight, user agent `Bun/…`); answered 200.
//! * `POST /v1/messages?beta=true` for every model turn. Headers: `x-api-key`,
//!   `anthropic-version: 2023-06-01`, `anthropic-beta: claude-code-20250219,…`,
//!   `x-app: cli`, `user-agent: claude-cli/2.1.197 (external, sdk-cli)`,
//!   `X-Claude-Code-Session-Id` (= the stream-json `session_id`), `X-Stainless-Retry-Count`
//!   (stays "0" even on retries), `X-Stainless-Timeout: 600`. Body is plain JSON with
//!   `Content-Length` (not chunked, not compressed); connections are keep-alive.
//!   Body keys: `model` (default `claude-opus-4-8`, no `[1m]` suffix), `messages`, `system`
//!   (array of text blocks, the first is `x-anthropic-billing-header: cc_version=…`),
//!   `tools` (the `--tools` list: Bash, Edit, Glob, Grep, Read, Write), `metadata.user_id`
//!   (a JSON string with device_id/session_id), `max_tokens: 64000`,
//!   `thinking: {"type":"adaptive"}`, `context_management`, `output_config.effort`,
//!   `stream: true`. The user prompt is the last text block of the first user message;
//!   note `claude -p -` does NOT treat `-` as "stdin": the prompt arrives as "-\n<stdin>".
//!   After a tool call the next request's last user message holds a `tool_result` block.
//! * With the flags above no side request was seen: no `count_tokens`, no haiku calls for
//!   titles/topic/bash prefixes, no telemetry. Should one come anyway it is answered without
//!   consuming the script: `/v1/messages/count_tokens` gets `{"input_tokens": N}` and a
//!   `/v1/messages` call with no `tools` and a `haiku` model (how Claude Code's one-shot
//!   helper calls look) gets a short "done" reply (`RequestKind::SideMessage`).
//! * Errors and retries. HTTP 429/5xx are retried, re-sending the same body, each retry
//!   consuming the next scripted reply, each announced by a stream-json
//!   `{"type":"system","subtype":"api_retry","attempt":n,"max_retries":m,"retry_delay_ms":…,
//!   "error_status":500,"error":"server_error"}` line (`error` is "rate_limit" for 429,
//!   "overloaded" for 529; `error_status` null for timeouts). Retry count:
//!   `CLAUDE_CODE_MAX_RETRIES` (default 10, clamped to 15, 0 = no retry); backoff is ~0.5 s
//!   doubling with jitter (0.5, 1.1, 2, 4.7, 9.7, 17, 38, 39, 35 s… — the default 10 takes
//!   minutes). A 529 gives up after 3 attempts whatever that setting ("Repeated 529
//!   Overloaded errors"). `retry-after: N` sets the delay to N s; `x-should-retry: false`
//!   fails at once. When retries run out, Claude emits a synthetic assistant message
//!   (`model: "<synthetic>"`, text "API Error: 500 …") and a `result` with
//!   `subtype: "success"` but `is_error: true`, `api_error_status: 500` (null for 529),
//!   zero usage and `total_cost_usd: 0`; exit code 1.
//! * `API_TIMEOUT_MS` bounds each request: a `Hang` times out then is retried.
//! * A stream cut mid-way (`BrokenStream`) is not reported as a retry: Claude immediately
//!   re-sends the request without `stream` (non-streaming fallback). Quirk: the `result`
//!   event's `usage` is then all zeros while `modelUsage`/`total_cost_usd` do count it.
//!   An SSE `error` event (`StreamError`) is retried silently too, and the partial
//!   message_start usage of the failed attempt IS added to the result.
//! * Usage: the stream-json `assistant` event copies the `message_start` usage (so its
//!   `output_tokens` is the placeholder 1); the `result` event's `usage` sums
//!   message_start input/cache tokens and message_delta `output_tokens` over all turns, and
//!   `total_cost_usd` prices them (opus-4-8: $5/M in, $25/M out, $6.25/M cache write,
//!   $0.50/M cache read).
//! * Hooks: a UserPromptSubmit hook's `additionalContext` arrives in the request as an extra
//!   message `{"role":"system","content":"UserPromptSubmit hook additional context: …"}`
//!   after the user message (beta `mid-conversation-system-2026-04-07`).
//!
//! Usage is deterministic: the reply consuming script slot `i` (0-based, counting the
//! default replies after the script too) reports `Usage::for_reply(i)` unless wrapped in
//! `Reply::WithUsage`.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One scripted answer to a `POST /v1/messages` agent-loop request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A normal assistant text message, `stop_reason: "end_turn"`.
    Text(String),
    /// A single `tool_use` block, `stop_reason: "tool_use"`.
    ToolUse { name: String, input: Value },
    /// Arbitrary content blocks (`{"type":"text",…}` / `{"type":"tool_use",…}`; tool_use
    /// blocks get an `id` if they lack one). `stop_reason` is "tool_use" if any block is a
    /// tool use, else "end_turn".
    Blocks(Vec<Value>),
    /// Accept the request and never answer until the server is dropped.
    Hang,
    /// HTTP error `status` with an Anthropic-shaped error body. The `String` is sent as-is if
    /// it is a JSON object, otherwise used as the error message (type from the status).
    Status(u16, String),
    /// Like `Status` with control over headers: `retry_after` (seconds) sets `retry-after`,
    /// `should_retry` sets `x-should-retry`.
    Error {
        status: u16,
        message: String,
        retry_after: Option<u64>,
        should_retry: Option<bool>,
    },
    /// HTTP 200 SSE stream that sends message_start and part of a text block, then cuts the
    /// connection (no terminating chunk). For non-streaming requests: headers, half a body, cut.
    BrokenStream,
    /// HTTP 200 SSE stream that sends message_start then an SSE `error` event
    /// (e.g. `overloaded_error`) and ends the stream cleanly.
    StreamError { error_type: String, message: String },
    /// Wait (interruptibly) before giving the inner reply.
    Delayed(Duration, Box<Reply>),
    /// The inner reply, reporting this usage instead of `Usage::for_reply(i)`.
    WithUsage(Box<Reply>, Usage),
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::Text(text.into())
    }
    pub fn tool_use(name: impl Into<String>, input: Value) -> Reply {
        Reply::ToolUse {
            name: name.into(),
            input,
        }
    }
    /// A `Write` tool call creating `file_path` with `content`.
    pub fn write_file(file_path: impl AsRef<str>, content: impl AsRef<str>) -> Reply {
        Reply::tool_use(
            "Write",
            json!({"file_path": file_path.as_ref(), "content": content.as_ref()}),
        )
    }
    /// A `Bash` tool call.
    pub fn bash(command: impl AsRef<str>) -> Reply {
        Reply::tool_use(
            "Bash",
            json!({"command": command.as_ref(), "description": "run"}),
        )
    }
    pub fn status(status: u16) -> Reply {
        Reply::Status(status, default_error_message(status).to_string())
    }
    pub fn with_usage(self, usage: Usage) -> Reply {
        Reply::WithUsage(Box::new(self), usage)
    }
    pub fn delayed(self, delay: Duration) -> Reply {
        Reply::Delayed(delay, Box::new(self))
    }
}

/// Token usage reported for one reply (what the API puts in `usage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// Usage of the reply that consumed script slot `i` (0-based):
    /// input 100+i, output 20+i, cache creation 1000+i, cache read 2000+i.
    pub const fn for_reply(i: usize) -> Usage {
        let i = i as u64;
        Usage {
            input_tokens: 100 + i,
            output_tokens: 20 + i,
            cache_creation_input_tokens: 1000 + i,
            cache_read_input_tokens: 2000 + i,
        }
    }
    /// Usage reported to side requests (no script slot).
    pub const SIDE: Usage = Usage {
        input_tokens: 7,
        output_tokens: 3,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
    };
    /// Sum of `for_reply(i)` for i in `range`.
    pub fn sum_for_replies(range: std::ops::Range<usize>) -> Usage {
        range
            .map(Usage::for_reply)
            .fold(Usage::default(), |a, b| a.add(b))
    }
    pub const fn add(self, o: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + o.input_tokens,
            output_tokens: self.output_tokens + o.output_tokens,
            cache_creation_input_tokens: self.cache_creation_input_tokens
                + o.cache_creation_input_tokens,
            cache_read_input_tokens: self.cache_read_input_tokens + o.cache_read_input_tokens,
        }
    }
    fn to_json(self, output_tokens: u64) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_creation_input_tokens,
                "ephemeral_1h_input_tokens": 0
            },
            "output_tokens": output_tokens,
            "service_tier": "standard"
        })
    }
}

/// How the server classified a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `POST /v1/messages` from the agent loop: consumed script slot `slot`.
    Message { slot: usize },
    /// `POST /v1/messages` that looked like a one-shot helper call (no tools, haiku model):
    /// answered "done" with `Usage::SIDE`, not scripted.
    SideMessage,
    /// `POST /v1/messages/count_tokens`.
    CountTokens,
    /// Anything else (`HEAD /`, unknown paths).
    Other,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// Full request target including any query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The (de-chunked) body.
    pub body: String,
    /// The body parsed as JSON, `Value::Null` if empty or not JSON.
    pub json: Value,
    pub kind: RequestKind,
    /// Time since the server started when the request was fully read.
    pub at: Duration,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
    /// `path` without the query string.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("")
    }
    /// Text of the last user message (text blocks and tool_result contents joined by "\n").
    pub fn last_user_text(&self) -> String {
        let Some(msgs) = self.json.get("messages").and_then(Value::as_array) else {
            return String::new();
        };
        let Some(last) = msgs.iter().rev().find(|m| m["role"] == "user") else {
            return String::new();
        };
        content_text(&last["content"])
    }
    /// All text in all messages (not the system prompt): what hooks and the user added.
    pub fn messages_text(&self) -> String {
        let mut out = String::new();
        if let Some(msgs) = self.json.get("messages").and_then(Value::as_array) {
            for m in msgs {
                out.push('\n');
                out.push_str(&content_text(&m["content"]));
            }
        }
        out
    }

    /// All text in all messages and the system prompt (for "does X reach the model" checks).
    pub fn all_text(&self) -> String {
        let mut out = content_text(&self.json["system"]);
        if let Some(msgs) = self.json.get("messages").and_then(Value::as_array) {
            for m in msgs {
                out.push('\n');
                out.push_str(&content_text(&m["content"]));
            }
        }
        out
    }
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or("").to_string(),
                Some("tool_result") => content_text(&b["content"]),
                _ => String::new(),
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

struct Inner {
    /// Whether tool-less haiku requests are answered aside, without using up the script.
    side_messages: AtomicBool,
    script: Mutex<VecDeque<Reply>>,
    default: Reply,
    next_slot: Mutex<usize>,
    requests: Mutex<Vec<RecordedRequest>>,
    stopped: AtomicBool,
    stop_lock: Mutex<bool>,
    stop_cv: Condvar,
    conns: Mutex<Vec<TcpStream>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    ids: AtomicU64,
    started: Instant,
    port: u16,
}

impl Inner {
    fn stopping(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
    /// Sleep up to `d`; returns false if the server is stopping.
    fn sleep(&self, d: Duration) -> bool {
        let deadline = Instant::now() + d;
        let mut g = self.stop_lock.lock().unwrap();
        while !*g {
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            g = self.stop_cv.wait_timeout(g, deadline - now).unwrap().0;
        }
        false
    }
    fn next_id(&self, prefix: &str) -> String {
        let n = self.ids.fetch_add(1, Ordering::SeqCst);
        format!("{prefix}_01Fake{:05}{:010}", self.port, n)
    }
}

/// The fake server; stops when dropped.
pub struct FakeAnthropic {
    inner: Arc<Inner>,
    addr: SocketAddr,
    acceptor: Option<JoinHandle<()>>,
}

impl FakeAnthropic {
    /// Script every request, including tool-less haiku ones (for testing gza's own haiku calls).
    pub fn without_side_messages(self) -> FakeAnthropic {
        self.inner.side_messages.store(false, Ordering::SeqCst);
        self
    }

    /// Start serving `script`; the default reply after it is `Reply::Text("done")`.
    pub fn start(script: Vec<Reply>) -> FakeAnthropic {
        FakeAnthropic::start_with_default(script, Reply::text("done"))
    }

    /// Start serving `script`, answering `default` once it is exhausted.
    pub fn start_with_default(script: Vec<Reply>, default: Reply) -> FakeAnthropic {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let inner = Arc::new(Inner {
            script: Mutex::new(script.into()),
            default,
            next_slot: Mutex::new(0),
            side_messages: AtomicBool::new(true),
            requests: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            stop_lock: Mutex::new(false),
            stop_cv: Condvar::new(),
            conns: Mutex::new(Vec::new()),
            workers: Mutex::new(Vec::new()),
            ids: AtomicU64::new(1),
            started: Instant::now(),
            port: addr.port(),
        });
        let inner2 = inner.clone();
        let acceptor = thread::Builder::new()
            .name("fake-anthropic-accept".into())
            .spawn(move || accept_loop(listener, inner2))
            .unwrap();
        FakeAnthropic {
            inner,
            addr,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:PORT` (no trailing slash): use as `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Environment for running `claude` against this server (HOME is up to the caller).
    pub fn claude_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("ANTHROPIC_BASE_URL", self.url()),
            ("ANTHROPIC_API_KEY", "sk-ant-fake-key".to_string()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ]
    }

    /// Append a reply to the script.
    pub fn push(&self, reply: Reply) {
        self.inner.script.lock().unwrap().push_back(reply);
    }

    /// Scripted replies not consumed yet.
    pub fn remaining(&self) -> usize {
        self.inner.script.lock().unwrap().len()
    }

    /// Every request received so far, in order of completion of reading.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.inner.requests.lock().unwrap().clone()
    }

    /// Only the agent-loop `/v1/messages` requests (those that consumed a script slot).
    pub fn message_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| matches!(r.kind, RequestKind::Message { .. }))
            .collect()
    }
}

impl Drop for FakeAnthropic {
    fn drop(&mut self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        {
            let mut g = self.inner.stop_lock.lock().unwrap();
            *g = true;
            self.inner.stop_cv.notify_all();
        }
        // Wake the acceptor.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
        for c in self.inner.conns.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
        let workers: Vec<_> = self.inner.workers.lock().unwrap().drain(..).collect();
        for w in workers {
            let _ = w.join();
        }
    }
}

fn accept_loop(listener: TcpListener, inner: Arc<Inner>) {
    for conn in listener.incoming() {
        if inner.stopping() {
            break;
        }
        let Ok(stream) = conn else { continue };
        let _ = stream.set_nodelay(true);
        if let Ok(clone) = stream.try_clone() {
            inner.conns.lock().unwrap().push(clone);
        }
        let inner2 = inner.clone();
        let h = thread::Builder::new()
            .name("fake-anthropic-conn".into())
            .spawn(move || {
                let _ = serve_connection(stream, &inner2);
            })
            .unwrap();
        let mut workers = inner.workers.lock().unwrap();
        workers.retain(|w| !w.is_finished());
        workers.push(h);
    }
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Outcome of answering one request.
enum After {
    KeepAlive,
    Close,
}

fn serve_connection(stream: TcpStream, inner: &Inner) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let Some(req) = read_request(&mut reader, &mut writer)? else {
            return Ok(());
        };
        if inner.stopping() {
            return Ok(());
        }
        let client_close = req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        match respond(req, inner, &mut writer)? {
            After::KeepAlive if !client_close => continue,
            _ => {
                let _ = writer.flush();
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
        }
    }
}

fn read_line(r: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = r.by_ref().take(64 * 1024).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

fn bad_data(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

fn read_request(r: &mut impl BufRead, w: &mut TcpStream) -> io::Result<Option<Request>> {
    // Skip stray empty lines between keep-alive requests.
    let line = loop {
        match read_line(r)? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let l = read_line(r)?.ok_or_else(|| bad_data("eof in headers"))?;
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut req = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if req
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        loop {
            let size_line = read_line(r)?.ok_or_else(|| bad_data("eof in chunk size"))?;
            let size_hex = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_hex, 16).map_err(|_| bad_data("chunk size"))?;
            if size == 0 {
                // Trailers until the empty line.
                while let Some(l) = read_line(r)? {
                    if l.is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = req.body.len();
            req.body.resize(start + size, 0);
            r.read_exact(&mut req.body[start..])?;
            read_line(r)?; // CRLF after the chunk
        }
    } else if let Some(len) = req.header("content-length") {
        let len: usize = len.parse().map_err(|_| bad_data("content-length"))?;
        req.body.resize(len, 0);
        r.read_exact(&mut req.body)?;
    }
    Ok(Some(req))
}

fn status_text(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        504 => "timeout_error",
        _ => "api_error",
    }
}

fn default_error_message(status: u16) -> &'static str {
    match status {
        429 => "Number of request tokens has exceeded your per-minute rate limit",
        529 => "Overloaded",
        500 => "Internal server error",
        _ => "Error",
    }
}

fn write_head(
    w: &mut TcpStream,
    status: u16,
    inner: &Inner,
    headers: &[(&str, String)],
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", status_text(status));
    head.push_str(&format!("request-id: {}\r\n", inner.next_id("req")));
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())
}

fn write_json(w: &mut TcpStream, inner: &Inner, status: u16, body: &Value) -> io::Result<After> {
    let bytes = serde_json::to_vec(body).unwrap();
    write_json_bytes(w, inner, status, &bytes, &[])
}

fn write_json_bytes(
    w: &mut TcpStream,
    inner: &Inner,
    status: u16,
    bytes: &[u8],
    extra: &[(&str, String)],
) -> io::Result<After> {
    let mut headers = vec![
        ("content-type", "application/json".to_string()),
        ("content-length", bytes.len().to_string()),
    ];
    headers.extend(extra.iter().cloned());
    write_head(w, status, inner, &headers)?;
    w.write_all(bytes)?;
    w.flush()?;
    Ok(After::KeepAlive)
}

fn write_chunk(w: &mut TcpStream, data: &[u8]) -> io::Result<()> {
    w.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    w.write_all(data)?;
    w.write_all(b"\r\n")?;
    w.flush()
}

fn sse(event: &str, data: &Value) -> Vec<u8> {
    format!(
        "event: {event}\ndata: {}\n\n",
        serde_json::to_string(data).unwrap()
    )
    .into_bytes()
}

fn start_sse(w: &mut TcpStream, inner: &Inner) -> io::Result<()> {
    write_head(
        w,
        200,
        inner,
        &[
            (
                "content-type",
                "text/event-stream; charset=utf-8".to_string(),
            ),
            ("cache-control", "no-cache".to_string()),
            ("transfer-encoding", "chunked".to_string()),
        ],
    )
}

/// A one-shot helper call (title/topic/bash-prefix style): no tools and a haiku model.
/// Agent-loop requests always carry the `--tools` list (also in the non-streaming fallback).
fn is_side_message(json: &Value) -> bool {
    let has_tools = json
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let model = json.get("model").and_then(Value::as_str).unwrap_or("");
    !has_tools && model.contains("haiku")
}

/// Classify a request (and, for agent-loop messages, take its script slot).
fn classify(req: &Request, json: &Value, inner: &Inner) -> (RequestKind, Option<(usize, Reply)>) {
    let route = req.path.split('?').next().unwrap_or("");
    if req.method != "POST" {
        return (RequestKind::Other, None);
    }
    match route {
        "/v1/messages/count_tokens" => (RequestKind::CountTokens, None),
        "/v1/messages" => {
            if inner.side_messages.load(Ordering::SeqCst) && is_side_message(json) {
                return (RequestKind::SideMessage, None);
            }
            let mut slot = inner.next_slot.lock().unwrap();
            let i = *slot;
            *slot += 1;
            let reply = inner
                .script
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| inner.default.clone());
            (RequestKind::Message { slot: i }, Some((i, reply)))
        }
        _ => (RequestKind::Other, None),
    }
}

fn respond(req: Request, inner: &Inner, w: &mut TcpStream) -> io::Result<After> {
    let body = String::from_utf8_lossy(&req.body).into_owned();
    let json: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let (kind, scripted) = classify(&req, &json, inner);
    inner.requests.lock().unwrap().push(RecordedRequest {
        method: req.method.clone(),
        path: req.path.clone(),
        headers: req.headers.clone(),
        body,
        json: json.clone(),
        kind,
        at: inner.started.elapsed(),
    });
    match kind {
        RequestKind::Other => {
            let route = req.path.split('?').next().unwrap_or("");
            if (req.method == "HEAD" || req.method == "GET") && route == "/" {
                write_head(w, 200, inner, &[("content-length", "0".into())])?;
                w.flush()?;
                return Ok(After::KeepAlive);
            }
            let err = error_json(inner, 404, &format!("{} {} not found", req.method, route));
            if req.method == "HEAD" {
                write_head(w, 404, inner, &[("content-length", "0".into())])?;
                return Ok(After::KeepAlive);
            }
            write_json(w, inner, 404, &err)
        }
        RequestKind::CountTokens => {
            // Deterministic: a quarter of the body length, at least 1.
            let n = (req.body.len() / 4).max(1);
            write_json(w, inner, 200, &json!({"input_tokens": n}))
        }
        RequestKind::SideMessage => send_reply(w, inner, &json, Reply::text("done"), Usage::SIDE),
        RequestKind::Message { .. } => {
            let (i, reply) = scripted.unwrap();
            send_reply(w, inner, &json, reply, Usage::for_reply(i))
        }
    }
}

fn error_json(inner: &Inner, status: u16, message: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": error_type(status), "message": message},
        "request_id": inner.next_id("req"),
    })
}

fn send_reply(
    w: &mut TcpStream,
    inner: &Inner,
    req: &Value,
    reply: Reply,
    usage: Usage,
) -> io::Result<After> {
    let stream = req.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let model = req
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-fake")
        .to_string();
    match reply {
        Reply::WithUsage(inner_reply, u) => send_reply(w, inner, req, *inner_reply, u),
        Reply::Delayed(d, inner_reply) => {
            if !inner.sleep(d) {
                return Ok(After::Close);
            }
            send_reply(w, inner, req, *inner_reply, usage)
        }
        Reply::Hang => {
            while inner.sleep(Duration::from_secs(3600)) {}
            Ok(After::Close)
        }
        Reply::Status(status, body) => {
            let is_obj = serde_json::from_str::<Value>(&body).is_ok_and(|v| v.is_object());
            let bytes = if is_obj {
                body.into_bytes()
            } else {
                serde_json::to_vec(&error_json(inner, status, &body)).unwrap()
            };
            write_json_bytes(w, inner, status, &bytes, &[])
        }
        Reply::Error {
            status,
            message,
            retry_after,
            should_retry,
        } => {
            let mut extra = Vec::new();
            if let Some(s) = retry_after {
                extra.push(("retry-after", s.to_string()));
            }
            if let Some(b) = should_retry {
                extra.push(("x-should-retry", b.to_string()));
            }
            let bytes = serde_json::to_vec(&error_json(inner, status, &message)).unwrap();
            write_json_bytes(w, inner, status, &bytes, &extra)
        }
        Reply::BrokenStream => {
            let msg_id = inner.next_id("msg");
            if stream {
                start_sse(w, inner)?;
                write_chunk(
                    w,
                    &sse("message_start", &message_start(&msg_id, &model, usage)),
                )?;
                write_chunk(
                    w,
                    &sse(
                        "content_block_start",
                        &json!({"type":"content_block_start","index":0,
                                "content_block":{"type":"text","text":""}}),
                    ),
                )?;
                write_chunk(
                    w,
                    &sse(
                        "content_block_delta",
                        &json!({"type":"content_block_delta","index":0,
                                "delta":{"type":"text_delta","text":"This reply is cut "}}),
                    ),
                )?;
                // Half an event, then cut the connection.
                write_chunk(
                    w,
                    b"event: content_block_delta\ndata: {\"type\":\"content_blo",
                )?;
            } else {
                write_head(
                    w,
                    200,
                    inner,
                    &[
                        ("content-type", "application/json".into()),
                        ("content-length", "1000".into()),
                    ],
                )?;
                w.write_all(b"{\"id\":\"")?;
                w.flush()?;
            }
            // Give the client a moment to read what was sent, then cut.
            inner.sleep(Duration::from_millis(50));
            Ok(After::Close)
        }
        Reply::StreamError {
            error_type,
            message,
        } => {
            let msg_id = inner.next_id("msg");
            if !stream {
                let bytes = serde_json::to_vec(&json!({
                    "type":"error","error":{"type": error_type, "message": message}
                }))
                .unwrap();
                return write_json_bytes(w, inner, 529, &bytes, &[]);
            }
            start_sse(w, inner)?;
            write_chunk(
                w,
                &sse("message_start", &message_start(&msg_id, &model, usage)),
            )?;
            write_chunk(
                w,
                &sse(
                    "error",
                    &json!({"type":"error","error":{"type": error_type, "message": message}}),
                ),
            )?;
            write_chunk(w, b"")?;
            Ok(After::KeepAlive)
        }
        Reply::Text(text) => {
            let blocks = vec![json!({"type":"text","text": text})];
            send_message(w, inner, stream, &model, blocks, usage)
        }
        Reply::ToolUse { name, input } => {
            let blocks = vec![json!({"type":"tool_use","name": name,"input": input})];
            send_message(w, inner, stream, &model, blocks, usage)
        }
        Reply::Blocks(blocks) => send_message(w, inner, stream, &model, blocks, usage),
    }
}

fn message_start(msg_id: &str, model: &str, usage: Usage) -> Value {
    json!({
        "type": "message_start",
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": usage.to_json(1),
        }
    })
}

/// Split `s` into pieces of about `n` bytes on char boundaries.
fn pieces(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + n).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    if out.is_empty() {
        out.push("");
    }
    out
}

fn send_message(
    w: &mut TcpStream,
    inner: &Inner,
    stream: bool,
    model: &str,
    mut blocks: Vec<Value>,
    usage: Usage,
) -> io::Result<After> {
    let msg_id = inner.next_id("msg");
    for b in &mut blocks {
        if b["type"] == "tool_use" && b.get("id").is_none() {
            b["id"] = json!(inner.next_id("toolu"));
        }
    }
    let stop_reason = if blocks.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    };
    if !stream {
        let msg = json!({
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": usage.to_json(usage.output_tokens),
        });
        return write_json(w, inner, 200, &msg);
    }
    start_sse(w, inner)?;
    let mut out = sse("message_start", &message_start(&msg_id, model, usage));
    out.extend(sse("ping", &json!({"type": "ping"})));
    write_chunk(w, &out)?;
    for (index, block) in blocks.iter().enumerate() {
        let mut events = Vec::new();
        match block["type"].as_str() {
            Some("tool_use") => {
                events.push(sse(
                    "content_block_start",
                    &json!({"type":"content_block_start","index": index,
                            "content_block":{"type":"tool_use","id": block["id"],
                                             "name": block["name"],"input":{}}}),
                ));
                let input = serde_json::to_string(&block["input"]).unwrap();
                for p in pieces(&input, 40) {
                    events.push(sse(
                        "content_block_delta",
                        &json!({"type":"content_block_delta","index": index,
                                "delta":{"type":"input_json_delta","partial_json": p}}),
                    ));
                }
            }
            _ => {
                let text = block["text"].as_str().unwrap_or("");
                events.push(sse(
                    "content_block_start",
                    &json!({"type":"content_block_start","index": index,
                            "content_block":{"type":"text","text":""}}),
                ));
                for p in pieces(text, 24) {
                    events.push(sse(
                        "content_block_delta",
                        &json!({"type":"content_block_delta","index": index,
                                "delta":{"type":"text_delta","text": p}}),
                    ));
                }
            }
        }
        events.push(sse(
            "content_block_stop",
            &json!({"type":"content_block_stop","index": index}),
        ));
        for e in events {
            write_chunk(w, &e)?;
        }
    }
    let mut tail = sse(
        "message_delta",
        &json!({"type":"message_delta",
                "delta":{"stop_reason": stop_reason,"stop_sequence": null},
                "usage":{"output_tokens": usage.output_tokens}}),
    );
    tail.extend(sse("message_stop", &json!({"type":"message_stop"})));
    write_chunk(w, &tail)?;
    write_chunk(w, b"")?; // terminating chunk
    Ok(After::KeepAlive)
}
