//! The user's installed Claude Code as the extraction model: works with their existing login,
//! no key. Lean on purpose: no tools and gza's own system prompt, so a request is about 1 KB
//! instead of the ~89 KB a full agent turn sends.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Completion, ExtractionClient, LlmError};

pub struct ClaudeCliClient {
    path: String,
    model: String,
    timeout: Duration,
}

impl ClaudeCliClient {
    pub fn new(path: &str, model: &str, timeout: Duration) -> Self {
        ClaudeCliClient {
            path: path.into(),
            model: model.into(),
            timeout,
        }
    }
}

impl ExtractionClient for ClaudeCliClient {
    fn provider(&self) -> &'static str {
        "claude-cli"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, system: &str, user: &str) -> Result<Completion, LlmError> {
        use std::os::unix::process::CommandExt;
        // Run from an empty directory of its own, with the person's settings only and no MCP
        // server: Claude Code in -p mode skips its folder-trust check, so in the project it
        // would run the hooks and servers a cloned repository committed in .claude/ and
        // .mcp.json (outside any sandbox the agents get). Extraction needs none of them.
        // And in safe mode with every hook off: this runs on the host, unsandboxed, so no
        // hook, plugin, MCP server, skill or custom agent of the person's own configuration
        // runs either (whatever once wrote it); auth, model and the person's permissions
        // still apply (docs/security.md §2).
        let cwd = tempfile::Builder::new()
            .prefix("gza-extract")
            .tempdir()
            .map_err(|e| {
                LlmError::Cli(format!(
                    "cannot make a directory to run `{}` in: {e}",
                    self.path
                ))
            })?;
        let mut child = Command::new(&self.path)
            .current_dir(cwd.path())
            .args([
                "--setting-sources",
                "user",
                "--strict-mcp-config",
                "--safe-mode",
                "--settings",
                r#"{"disableAllHooks":true}"#,
                "-p",
                "--model",
                &self.model,
                "--output-format",
                "json",
                "--tools",
                "",
                "--max-turns",
                "1",
            ])
            .arg("--system-prompt")
            .arg(system)
            // gza's own extraction run must not feed gza's hooks (or learn from itself).
            .env("GZA_HOOKS", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| LlmError::Cli(format!("cannot start `{}`: {e}", self.path)))?;
        let mut stdin = child.stdin.take().expect("piped");
        let input = user.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let mut stdout = child.stdout.take().expect("piped");
        let reader = std::thread::spawn(move || {
            // Bounded like an HTTP body: the reply is a few kilobytes.
            let mut bytes = Vec::new();
            let _ = (&mut stdout).take(4 * 1024 * 1024).read_to_end(&mut bytes);
            // Drain the rest so the child is not blocked on a full pipe.
            let _ = std::io::copy(&mut stdout, &mut std::io::sink());
            String::from_utf8_lossy(&bytes).into_owned()
        });
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child
                .try_wait()
                .map_err(|e| LlmError::Cli(format!("cannot wait for `{}`: {e}", self.path)))?
            {
                break status;
            }
            if started.elapsed() > self.timeout {
                gza_core::process::terminate_group(i64::from(child.id()), Duration::from_secs(1));
                let _ = child.wait();
                return Err(LlmError::Timeout(self.timeout));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = reader.join().unwrap_or_default();
        let reply: Value = serde_json::from_str(out.trim()).map_err(|_| {
            LlmError::BadReply(format!("claude exited with {status} and no JSON result"))
        })?;
        if reply["is_error"] == true {
            return Err(LlmError::Cli(format!(
                "claude reported an error: {}",
                reply["result"].as_str().unwrap_or("unknown")
            )));
        }
        let usage = &reply["usage"];
        Ok(Completion {
            text: reply["result"].as_str().unwrap_or_default().to_string(),
            input_tokens: gza_core::wire::input_tokens(usage),
            output_tokens: usage["output_tokens"].as_i64().unwrap_or(0),
        })
    }
}
