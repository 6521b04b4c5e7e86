//! Diagnostics with `tracing`: what gza does, step by step, for a person who asks.
//!
//! - Standard error gets nothing by default. `-v` shows gza's steps (info), `-vv` their
//!   details (debug), `-vvv` everything gza traces; `RUST_LOG`, when set, chooses instead
//!   (`RUST_LOG=gza_runner=debug`, in `tracing-subscriber`'s `EnvFilter` syntax).
//! - `gza work` also appends its steps (info, or more with `-vv`) to `.gza/logs/work.log`, so a
//!   night's run can be read the next morning.
//! - Every line is redacted on its way out (`gza_core::redact`): a step may quote a prompt, a
//!   command line or an agent's words.
//! - A hook handler logs only when `RUST_LOG` asks, and only to standard error: its standard
//!   output is what the agent takes as the hook's answer.
//!
//! With nothing asked for, no subscriber is installed at all: a command (and a hook within its
//! budget) pays one check per event and nothing more.

use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The crates whose events `-v` shows (others, such as an HTTP library's, only by `RUST_LOG`).
const GZA_CRATES: [&str; 8] = [
    "gza",
    "gza_core",
    "gza_store",
    "gza_llm",
    "gza_embed",
    "gza_learn",
    "gza_runner",
    "gza_hooks",
];

/// A work log past this size is moved to `work.log.1` (replacing the older one) when a worker
/// starts, so the logs of a project that runs every night stay bounded.
const MAX_WORK_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// The file `gza work` writes its steps to, once it knows its project.
static WORK_LOG: OnceLock<std::fs::File> = OnceLock::new();

/// Install the subscriber for a command: standard error as `-v` (`verbosity`) or `RUST_LOG`
/// ask, and for `gza work` (`work`) the work log too, once [`log_work_to`] names it.
pub fn init(verbosity: u8, work: bool) {
    let stderr = stderr_filter(verbosity).map(|filter| {
        tracing_subscriber::fmt::layer()
            .without_time()
            .with_target(verbosity >= 2)
            .with_ansi(colour_on_stderr())
            .with_writer(|| Redacted::new(std::io::stderr()))
            .with_filter(filter)
    });
    let file = work.then(|| {
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| Redacted::new(WorkLogFile))
            .with_filter(gza_at(level(verbosity).max(LevelFilter::INFO)))
    });
    if stderr.is_none() && file.is_none() {
        return;
    }
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
}

/// Install the subscriber for a hook handler: standard error, and only when `RUST_LOG` asks.
pub fn init_for_hook() {
    if let Some(filter) = rust_log() {
        let _ = tracing_subscriber::fmt()
            .without_time()
            .with_ansi(false)
            .with_writer(|| Redacted::new(std::io::stderr()))
            .with_env_filter(filter)
            .try_init();
    }
}

/// Append `gza work`'s steps to `path` from now on (created as a regular file; anything else
/// there, a FIFO say, is left alone and nothing is written). Only the first call counts.
pub fn log_work_to(path: &Path) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > MAX_WORK_LOG_BYTES) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        let _ = std::fs::rename(path, old);
    }
    let opened = gza_core::fsutil::open_regular_here(
        path,
        std::fs::OpenOptions::new().create(true).append(true),
    );
    if let Ok(file) = opened {
        let _ = WORK_LOG.set(file);
    }
}

/// What standard error shows: `RUST_LOG` when set, else gza's crates at `-v`'s level, else nothing.
fn stderr_filter(verbosity: u8) -> Option<EnvFilter> {
    if let Some(filter) = rust_log() {
        return Some(filter);
    }
    (verbosity > 0).then(|| {
        let level = level(verbosity);
        let directives: Vec<String> = GZA_CRATES.iter().map(|c| format!("{c}={level}")).collect();
        EnvFilter::new(directives.join(","))
    })
}

/// `RUST_LOG` as a filter, when it is set and not empty; a malformed one is said once and ignored.
fn rust_log() -> Option<EnvFilter> {
    let value = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())?;
    match EnvFilter::try_new(&value) {
        Ok(filter) => Some(filter),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "warning: RUST_LOG={value:?} is not a filter gza understands ({e}); ignored"
            );
            None
        }
    }
}

fn level(verbosity: u8) -> LevelFilter {
    match verbosity {
        0 => LevelFilter::OFF,
        1 => LevelFilter::INFO,
        2 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    }
}

fn gza_at(level: LevelFilter) -> Targets {
    Targets::new().with_targets(GZA_CRATES.map(|c| (c, level)))
}

fn colour_on_stderr() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The work log, or nowhere before [`log_work_to`] named it.
struct WorkLogFile;

impl Write for WorkLogFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match WORK_LOG.get() {
            Some(mut file) => file.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One event's text, held until it is complete, then redacted and written in one call (so
/// lines of two workers appending to one file never interleave).
struct Redacted<W: Write> {
    text: Vec<u8>,
    out: W,
}

impl<W: Write> Redacted<W> {
    fn new(out: W) -> Self {
        Redacted {
            text: Vec::with_capacity(256),
            out,
        }
    }
}

impl<W: Write> Write for Redacted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Drop for Redacted<W> {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.text);
        // Logging never changes what gza does: a failed write is dropped.
        let _ = self
            .out
            .write_all(gza_core::redact::redact(&text).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_redacted_and_written_whole() {
        let mut out = Vec::new();
        {
            let mut line = Redacted::new(&mut out);
            line.write_all(b"INFO spawned agent ").unwrap();
            line.write_all(
                b"ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789\n",
            )
            .unwrap();
            assert!(
                line.out.is_empty(),
                "nothing is written before the line is whole"
            );
        }
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("INFO spawned agent "), "{text}");
        assert!(!text.contains("abcdefghijklmnop"), "{text}");
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn verbosity_chooses_the_level_and_nothing_by_default() {
        assert_eq!(level(0), LevelFilter::OFF);
        assert_eq!(level(1), LevelFilter::INFO);
        assert_eq!(level(2), LevelFilter::DEBUG);
        assert_eq!(level(9), LevelFilter::TRACE);
    }
}
