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
    let server = GzaServer::new(desk);
    let outcome = runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio_pipes())
            .await
            .map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())?;
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
