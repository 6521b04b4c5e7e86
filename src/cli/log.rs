//! `gza log`: what an agent did, readable or raw, optionally as it happens.

use std::io::{BufRead, BufReader, Read, Write};
use std::time::Duration;

use clap::Args;

use super::{Context, output, usage};
use crate::config::ProviderKind;
use crate::error::Error;
use crate::runner::{provider_of, providers};
use crate::task::{TaskId, TaskStatus};

#[derive(Debug, Args)]
pub struct LogArgs {
    /// The task whose log to show.
    id: TaskId,
    /// Keep printing while the task runs.
    #[arg(long, short = 'f')]
    follow: bool,
    /// Print the agent's raw output stream as stored (redacted as it was written, unless
    /// `redact_raw_logs: false`; a note on stderr says when it was not).
    #[arg(long)]
    raw: bool,
}

pub fn cmd_log(ctx: &Context, args: LogArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let task = store.get_task(args.id)?;
    let Some(log_file) = &task.log_file else {
        return Err(usage(match task.state.result() {
            // Finished: its log was removed by `gza clean` (or it ended before an agent ran).
            Some(_) => format!(
                "task {} ({}) has no log: `gza clean` removes the logs of finished tasks, and a task that ended before its agent started has none; `gza show {}` still has its outcome",
                task.id,
                task.status(),
                task.id
            ),
            None => format!("task {} has no log yet (it is {})", task.id, task.status()),
        }));
    };
    let path = std::path::PathBuf::from(log_file);
    let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
        // Deleted by hand: the person knows why; not a fault of gza's.
        std::io::ErrorKind::NotFound => Error::Usage(format!(
            "the log of task {} ({}) was deleted; `gza show {}` still has its outcome",
            task.id,
            path.display(),
            task.id
        )),
        _ => Error::io(&path, "open log", e),
    })?;
    let kind = provider_of(&project, &task);
    let mut reader = BufReader::new(file);
    let task_running = || -> anyhow::Result<bool> {
        Ok(store.get_task(task.id)?.status() == TaskStatus::InProgress)
    };
    if args.raw {
        match store.log_redacted(task.id)? {
            Some(true) => {}
            Some(false) => eprintln!(
                "gza: the log of task {} was written unredacted (redact_raw_logs: false); it may hold secrets",
                task.id
            ),
            None => eprintln!(
                "gza: the log of task {} was written before gza redacted raw logs; it may hold secrets",
                task.id
            ),
        }
        // The stream byte for byte (invalid UTF-8 and \r included), in bounded chunks, bypassing
        // the colour-stripping writer.
        let mut out = std::io::stdout().lock();
        let mut buf = vec![0u8; 64 * 1024];
        let mut polls = 0u32;
        loop {
            let n = reader.read(&mut buf)?;
            if n > 0 {
                out.write_all(&buf[..n])?;
                continue;
            }
            if !args.follow {
                break;
            }
            out.flush()?;
            polls += 1;
            if polls.is_multiple_of(5) && !task_running()? {
                std::io::copy(&mut reader, &mut out)?;
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        out.flush()?;
        return Ok(());
    }
    let mut out = output::stdout();
    let mut line: Vec<u8> = Vec::new();
    let mut polls = 0u32;
    loop {
        line.clear();
        // A line is read up to a bound, so one endless line cannot take all the memory.
        let n = (&mut reader)
            .take(MAX_LOG_LINE)
            .read_until(b'\n', &mut line)?;
        if n > 0 && (line.ends_with(b"\n") || n as u64 == MAX_LOG_LINE) {
            print_line(&mut out, kind, &String::from_utf8_lossy(&line))?;
            continue;
        }
        if n > 0 {
            // A partial line: wait for the rest of it.
            reader.seek_relative(-(n as i64))?;
        }
        if !args.follow {
            if n > 0 {
                // The stream's last line, unterminated because the agent was cut off.
                print_line(&mut out, kind, &String::from_utf8_lossy(&line))?;
            }
            break;
        }
        out.flush()?;
        polls += 1;
        if polls.is_multiple_of(5) && !task_running()? {
            // One more pass picks up what was written before the task ended.
            loop {
                line.clear();
                let n = (&mut reader)
                    .take(MAX_LOG_LINE)
                    .read_until(b'\n', &mut line)?;
                if n == 0 {
                    break;
                }
                print_line(&mut out, kind, &String::from_utf8_lossy(&line))?;
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

/// Longest log line rendered as one; a longer one is cut into pieces (and not rendered).
const MAX_LOG_LINE: u64 = 8 * 1024 * 1024;

/// Print one logged line, rendered.
fn print_line(out: &mut impl Write, kind: ProviderKind, line: &str) -> std::io::Result<()> {
    match render_log_line(kind, line) {
        Some(clean) => writeln!(out, "{clean}"),
        None => Ok(()),
    }
}

/// One logged line as `gza log` shows it (the dashboard's log shows the same), or `None` for a
/// line the provider's renderer leaves out. Rendered text came from an agent, so secrets are
/// redacted (whether or not the log was) and control characters (terminal escape sequences
/// among them) are dropped; newlines and tabs stay.
pub(crate) fn render_log_line(kind: ProviderKind, line: &str) -> Option<String> {
    let line = line.trim_end_matches(['\n', '\r']);
    providers::render_line(kind, line).map(|text| {
        crate::redact::redact(&text)
            .chars()
            .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
            .collect()
    })
}
