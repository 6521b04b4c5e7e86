//! A fake OpenAI Responses API and Gemini API for the real Codex and Gemini CLIs (std +
//! serde_json only), the sibling of `fake_anthropic`.
//!
//! `FakeLlm::start(script)` binds 127.0.0.1:0 and serves HTTP/1.1 (one request per connection,
//! `connection: close`) until dropped; dropping it also closes connections it holds open. Every
//! request is recorded. Agent-loop requests consume `Reply`s from the script in order, then get
//! `Reply::Text("done")`. The reply that consumes slot `i` reports input 100+i and output 20+i
//! tokens (Codex: cached 10+i of the input).
//!
//! # What Codex CLI 0.169.0 sends (observed by logging its requests, `codex exec --json`)
//!
//! Config: `$HOME/.codex/config.toml` with `model_provider = "<id>"` and
//! `[model_providers.<id>]` `base_url = "<url()>/v1"`, `env_key = "<VAR>"`,
//! `wire_api = "responses"`; `request_max_retries = 0` and `stream_max_retries = 0` there stop
//! its retries (see `codex_config`). One `POST /v1/responses` per model call with `stream: true`,
//! `authorization: Bearer <$VAR>`, `originator: codex_exec`, and a body of `model`, `input`
//! (developer messages, then the user prompt as `input_text`; later calls append the
//! `function_call` and its `function_call_output`), `tools` (`exec_command` with `{"cmd": …}`,
//! `write_stdin`, `view_image`, …), `store: false`. It reads SSE `response.output_item.done`
//! items (`message` with `output_text`, `function_call` with `call_id`, `name`, `arguments`) and
//! `response.completed` with `usage` (`input_tokens`, `input_tokens_details.cached_tokens`,
//! `output_tokens`); `response.failed` ends the turn with "stream disconnected before completion:
//! <message>". An HTTP 4xx is reported as a `turn.failed` whose message is the body (401: "unexpected
//! status 401 Unauthorized: …"); 5xx is retried unless the retries are 0. `turn.completed` sums the
//! usage of all calls in the turn. An unknown model only logs an `error` item ("Model metadata …
//! not found"); the turn goes on.
//!
//! # What Gemini CLI 0.61.0 sends
//!
//! Env: `GEMINI_API_KEY`, `GOOGLE_GEMINI_BASE_URL=<url()>`; and `$HOME/.gemini/settings.json`
//! with `security.auth.selectedType = "gemini-api-key"` (a base URL alone selects the "gateway"
//! auth, which non-interactive mode rejects: "Invalid auth method selected.") and
//! `general.maxAttempts = 1` (no retries: a 5xx is otherwise retried with backoff for minutes); see
//! `gemini_settings`. Model calls are `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
//! with `x-goog-api-key`, a body of `contents` (`role` user/model, `parts` with `text`,
//! `functionCall`, `functionResponse`), `systemInstruction`, `tools[0].functionDeclarations`
//! (`write_file` {file_path, content}, `run_shell_command` {command}, `read_file`, …) and
//! `generationConfig`. Each SSE `data:` chunk is a `GenerateContentResponse`: `candidates[0].content.parts`,
//! `finishReason`, `usageMetadata` (`promptTokenCount`, `candidatesTokenCount`). With the model
//! "auto" (no `-m`) it first routes with a non-streaming `:generateContent` call to a flash-lite
//! model expecting JSON `{complexity_reasoning, complexity_score}`; that side call is answered
//! without consuming the script. An HTTP 4xx ends the run with a `result` of status "error" and
//! "[API Error: <body>]", exit status 144.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted answer to an agent-loop request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// An assistant text message that ends the turn.
    Text(String),
    /// A tool call that writes `content` to `path` (Codex: a shell command; Gemini: write_file).
    WriteFile { path: String, content: String },
    /// A shell command (Codex: exec_command; Gemini: run_shell_command).
    Shell(String),
    /// HTTP error `status` with the API's error body.
    Status(u16, String),
    /// A 200 stream that fails: Codex `response.failed`; Gemini a chunk with an `error` object.
    StreamFailed(String),
    /// Accept and never answer until the server is dropped.
    Hang,
    /// A call of the tool the request offers whose name ends with `name_ends_with` (an MCP
    /// tool's name carries its server's prefix, spelled differently by each CLI), with `args`.
    /// No such tool offered: the reply is a text saying so, which the test then sees.
    CallTool { name_ends_with: String, args: Value },
    /// `CallTool` resolved against the request: the tool's namespace, when it has one.
    Call {
        namespace: Option<String>,
        name: String,
        args: Value,
    },
}

impl Reply {
    pub fn text(t: impl Into<String>) -> Reply {
        Reply::Text(t.into())
    }
    pub fn write_file(path: impl AsRef<str>, content: impl AsRef<str>) -> Reply {
        Reply::WriteFile {
            path: path.as_ref().into(),
            content: content.as_ref().into(),
        }
    }
    pub fn shell(cmd: impl Into<String>) -> Reply {
        Reply::Shell(cmd.into())
    }
    pub fn call_tool(name_ends_with: impl Into<String>, args: Value) -> Reply {
        Reply::CallTool {
            name_ends_with: name_ends_with.into(),
            args,
        }
    }
}

/// The first tool in `tools` whose name ends with `suffix`, and the namespace it is offered in
/// (Codex 0.169 offers an MCP server's tools as `{"type": "namespace", "name": "mcp__gza",
/// "tools": [{"name": "search_learnings", …}]}`, and its call names both).
fn offered_tool(tools: &Value, suffix: &str) -> Option<(Option<String>, String)> {
    let list = tools.as_array()?;
    for t in list {
        if t["type"] == "namespace" {
            if let Some((_, name)) = offered_tool(&t["tools"], suffix) {
                return Some((t["name"].as_str().map(str::to_string), name));
            }
            continue;
        }
        // Gemini: `[{"functionDeclarations": [...]}]`.
        if let Some(found) = offered_tool(&t["functionDeclarations"], suffix) {
            return Some(found);
        }
        if let Some(name) = t["name"].as_str().filter(|n| n.ends_with(suffix)) {
            return Some((None, name.to_string()));
        }
    }
    None
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// Whether this request consumed the script (a model call of the agent loop).
    pub fn is_agent_call(&self) -> bool {
        self.path.ends_with("/responses") || self.path.contains(":streamGenerateContent")
    }
}

struct Inner {
    script: Mutex<VecDeque<Reply>>,
    consumed: Mutex<usize>,
    requests: Mutex<Vec<Recorded>>,
    stopping: AtomicBool,
    open: Mutex<Vec<TcpStream>>,
}

pub struct FakeLlm {
    inner: Arc<Inner>,
    port: u16,
}

impl FakeLlm {
    pub fn start(script: Vec<Reply>) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let inner = Arc::new(Inner {
            script: Mutex::new(script.into()),
            consumed: Mutex::new(0),
            requests: Mutex::new(Vec::new()),
            stopping: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
        });
        let accept = Arc::clone(&inner);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if accept.stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                if let Ok(clone) = stream.try_clone() {
                    accept.open.lock().unwrap().push(clone);
                }
                let inner = Arc::clone(&accept);
                thread::spawn(move || {
                    let _ = serve(stream, &inner);
                });
            }
        });
        FakeLlm { inner, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn push(&self, reply: Reply) {
        self.inner.script.lock().unwrap().push_back(reply);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.inner.requests.lock().unwrap().clone()
    }

    pub fn agent_calls(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(Recorded::is_agent_call)
            .collect()
    }

    /// `config.toml` for Codex: this server as the model provider, no retries.
    pub fn codex_config(&self, key_env: &str) -> String {
        format!(
            "model = \"gpt-fake\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{}/v1\"\nenv_key = \"{key_env}\"\nwire_api = \"responses\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n",
            self.url()
        )
    }

    /// `settings.json` for Gemini CLI: API-key auth, no retries.
    pub fn gemini_settings() -> String {
        json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"maxAttempts": 1}
        })
        .to_string()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        for s in self.inner.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        // Wake the accept loop so it sees `stopping`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(stream: TcpStream, inner: &Inner) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut w = stream;
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(());
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body)?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let rec = Recorded {
        method,
        path: path.clone(),
        headers,
        body,
    };
    let agent_call = rec.is_agent_call();
    // What tools this request offers (a scripted `CallTool` picks its name from them).
    let tools = rec.body["tools"].clone();
    inner.requests.lock().unwrap().push(rec);

    if !agent_call {
        if path.contains(":generateContent") {
            // Gemini's model router.
            let text =
                json!({"complexity_reasoning": "simple", "complexity_score": 10}).to_string();
            let body = json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 5, "totalTokenCount": 10}
            });
            return write_body(&mut w, 200, "application/json", body.to_string().as_bytes());
        }
        return write_body(&mut w, 404, "application/json", b"{}");
    }
    let (i, reply) = {
        let mut consumed = inner.consumed.lock().unwrap();
        let reply = inner
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Reply::Text("done".into()));
        *consumed += 1;
        (*consumed - 1, reply)
    };
    let reply = match reply {
        Reply::CallTool {
            name_ends_with,
            args,
        } => match offered_tool(&tools, &name_ends_with) {
            Some((namespace, name)) => Reply::Call {
                namespace,
                name,
                args,
            },
            None => Reply::Text(format!("no tool named *{name_ends_with} was offered")),
        },
        other => other,
    };
    if path.ends_with("/responses") {
        respond_openai(&mut w, inner, i, reply)
    } else {
        respond_gemini(&mut w, inner, i, reply)
    }
}

fn write_body(w: &mut TcpStream, status: u16, ctype: &str, body: &[u8]) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Error",
    };
    write!(
        w,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )?;
    w.write_all(body)?;
    w.flush()
}

fn hang(inner: &Inner) -> io::Result<()> {
    while !inner.stopping.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn respond_openai(w: &mut TcpStream, inner: &Inner, i: usize, reply: Reply) -> io::Result<()> {
    let id = format!("resp_{i}");
    let usage = json!({
        "input_tokens": 100 + i, "input_tokens_details": {"cached_tokens": 10 + i},
        "output_tokens": 20 + i, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 120 + 2 * i
    });
    let call = |cmd: String| {
        json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"),
               "name": "exec_command", "arguments": json!({"cmd": cmd}).to_string()})
    };
    let item = match reply {
        Reply::Hang => return hang(inner),
        Reply::Status(status, message) => {
            let body = json!({"error": {"message": message, "type": "invalid_request_error", "code": null}});
            return write_body(w, status, "application/json", body.to_string().as_bytes());
        }
        Reply::StreamFailed(message) => {
            let events = [
                (
                    "response.created",
                    json!({"type": "response.created", "response": {"id": id}}),
                ),
                (
                    "response.failed",
                    json!({"type": "response.failed",
                    "response": {"id": id, "error": {"code": "server_error", "message": message}}}),
                ),
            ];
            return write_body(w, 200, "text/event-stream", &sse(&events));
        }
        Reply::Text(text) => json!({
            "type": "message", "id": format!("msg_{i}"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]
        }),
        Reply::WriteFile { path, content } => call(format!(
            "printf '%s' {} > {}",
            shell_quote(&content),
            shell_quote(&path)
        )),
        Reply::Shell(cmd) => call(cmd),
        Reply::Call {
            namespace,
            name,
            args,
        } => {
            let mut call = json!({"type": "function_call", "id": format!("fc_{i}"),
                "call_id": format!("call_{i}"), "name": name, "arguments": args.to_string()});
            if let Some(ns) = namespace {
                call["namespace"] = json!(ns);
            }
            call
        }
        Reply::CallTool { .. } => unreachable!("resolved against the request in serve"),
    };
    let events = [
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": id}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": id, "usage": usage}}),
        ),
    ];
    write_body(w, 200, "text/event-stream", &sse(&events))
}

fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in events {
        out.extend_from_slice(format!("event: {name}\ndata: {data}\n\n").as_bytes());
    }
    out
}

fn respond_gemini(w: &mut TcpStream, inner: &Inner, i: usize, reply: Reply) -> io::Result<()> {
    let usage = json!({"promptTokenCount": 100 + i, "candidatesTokenCount": 20 + i, "totalTokenCount": 120 + 2 * i});
    let parts = match reply {
        Reply::Hang => return hang(inner),
        Reply::Status(status, message) => {
            let body = json!({"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}});
            return write_body(w, status, "application/json", body.to_string().as_bytes());
        }
        Reply::StreamFailed(message) => {
            let chunk = json!({"error": {"code": 500, "message": message, "status": "INTERNAL"}});
            return write_body(
                w,
                200,
                "text/event-stream",
                format!("data: {chunk}\n\n").as_bytes(),
            );
        }
        Reply::Text(text) => json!([{"text": text}]),
        Reply::WriteFile { path, content } => {
            json!([{"functionCall": {"name": "write_file", "args": {"file_path": path, "content": content}}}])
        }
        Reply::Shell(cmd) => {
            json!([{"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}}])
        }
        Reply::Call { name, args, .. } => json!([{"functionCall": {"name": name, "args": args}}]),
        Reply::CallTool { .. } => unreachable!("resolved against the request in serve"),
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage,
        "modelVersion": "gemini-fake"
    });
    write_body(
        w,
        200,
        "text/event-stream",
        format!("data: {chunk}\n\n").as_bytes(),
    )
}
