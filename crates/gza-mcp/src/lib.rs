//! `gza mcp`: an MCP server over stdio, so that any agent that speaks MCP (Claude Code, Codex,
//! Gemini CLI, editors) can search this project's learnings, read one in full, add one as a
//! draft, and read and feed gza's task queue; and `gza mcp install`, which registers it with
//! each agent CLI in that CLI's own configuration.
//!
//! The protocol is rmcp's (the official Rust SDK): version negotiation, JSON-RPC framing and
//! the tools' input schemas. What the tools do is `desk.rs`, plain functions over the project
//! and its database; `server.rs` is the glue. The server keeps its ranker warm between calls
//! (the embedding model stays mapped), which is what keeps a search within its budget.

pub mod desk;
pub mod install;
pub mod server;

use std::path::Path;
use std::process::ExitCode;

pub use desk::Desk;
pub use server::GzaServer;

/// The session name drafts and injections are recorded under: one server process serves one
/// agent session.
fn session_name() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("mcp-{now}-{}", std::process::id())
}

/// Serve MCP on stdin and stdout until the client closes them. `dir` is where the session
/// runs (the project is found from it, on every call). Errors go to stderr, which MCP clients
/// keep as the server's log; stdout carries nothing but the protocol.
pub fn serve(dir: &Path) -> ExitCode {
    use rmcp::ServiceExt;
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gza mcp: cannot start: {e}");
            return ExitCode::from(255);
        }
    };
    let mut desk = Desk::new(dir, session_name());
    // Loaded before the first request, while the client is still starting up.
    desk.warm_up();
    let log = desk.project().ok().map(|p| p.logs_dir().join("mcp.log"));
    let server = GzaServer::new(desk);
    let outcome = runtime.block_on(async move {
        let (input, output, written) = answered_stdio(log);
        let running = server
            .serve((input, output))
            .await
            .map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())?;
        // Everything said is on stdout before the process ends.
        let _ = written.await;
        Ok::<(), String>(())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gza mcp: {e}");
            ExitCode::from(1)
        }
    }
}

/// Longest request line read; a longer one is answered as unreadable and skipped.
const MAX_LINE: usize = 16 << 20;

/// stdin and stdout as rmcp gets them, with the lines rmcp would drop answered here: rmcp
/// skips a line that is not JSON (or holds a lone surrogate escape, which is not JSON either)
/// without a word, and the client then waits for an answer forever. Each such line gets
/// JSON-RPC's parse error (-32700), with the request's id when it can still be read, and one
/// line in `log`. Both writers go through one task, a line at a time, so answers never mix.
/// Returns rmcp's input, its output, and the task that writes stdout (done once both end).
fn answered_stdio(
    log: Option<std::path::PathBuf>,
) -> (
    tokio::io::DuplexStream,
    tokio::io::DuplexStream,
    tokio::task::JoinHandle<()>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let (mut to_rmcp, rmcp_input) = tokio::io::duplex(1 << 16);
    let (rmcp_output, from_rmcp) = tokio::io::duplex(1 << 16);
    let (lines, mut queued) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let answers = lines.clone();
    tokio::spawn(async move {
        let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match (&mut stdin)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            let request = text.trim();
            if request.is_empty() {
                continue;
            }
            let whole = line.ends_with(b"\n") || line.len() <= MAX_LINE;
            if whole && serde_json::from_str::<serde_json::Value>(request).is_ok() {
                if to_rmcp.write_all(request.as_bytes()).await.is_err()
                    || to_rmcp.write_all(b"\n").await.is_err()
                {
                    break;
                }
                continue;
            }
            if !whole {
                // The rest of an overlong line is not a request either.
                let mut rest = Vec::new();
                let _ = stdin.read_until(b'\n', &mut rest).await;
            }
            let reply = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id_of(request),
                "error": {"code": -32700, "message": "Parse error: the request line is not JSON"},
            });
            if let Some(log) = &log {
                let shown: String = request.chars().take(100).collect();
                gza_core::fsutil::append_log(
                    log,
                    &format!(
                        "a request line that is not JSON was answered with a parse error: {shown}"
                    ),
                );
            }
            let _ = answers.send(format!("{reply}\n").into_bytes());
        }
        let _ = to_rmcp.shutdown().await;
    });
    tokio::spawn(async move {
        let mut from_rmcp = tokio::io::BufReader::new(from_rmcp);
        let mut line = Vec::new();
        while matches!(from_rmcp.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            if lines.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let written = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = queued.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    (rmcp_input, rmcp_output, written)
}

/// The `"id"` of a request line that is not JSON, when what follows it still reads as one
/// (a number or a string); null otherwise, as JSON-RPC has it.
fn id_of(line: &str) -> serde_json::Value {
    let Some(at) = line.find("\"id\"") else {
        return serde_json::Value::Null;
    };
    let rest = line[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return serde_json::Value::Null;
    };
    let rest = rest.trim_start();
    let end = if let Some(inside) = rest.strip_prefix('"') {
        inside.find('"').map(|i| i + 2)
    } else {
        rest.find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .or(Some(rest.len()))
    };
    end.and_then(|e| serde_json::from_str(&rest[..e]).ok())
        .unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::id_of;

    #[test]
    fn the_id_of_a_broken_request_is_read_when_it_can_be() {
        assert_eq!(
            id_of(r#"{"jsonrpc":"2.0","id":5,"params":{"q":"\udcff"}}"#),
            5
        );
        assert_eq!(id_of(r#"{"id": "a-1", "method": oops}"#), "a-1");
        assert_eq!(id_of("garbage line"), serde_json::Value::Null);
        assert_eq!(id_of(r#"{"id": {"x": 1}}"#), serde_json::Value::Null);
    }
}
