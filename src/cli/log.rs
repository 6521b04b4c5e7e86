//! `gza log`: what an agent did, readable or raw, optionally as it happens.

use std::io::{BufRead, BufReader, Read, Write};
use std::time::Duration;

use clap::Args;

use super::{Context, output, usage};
use crate::config::ProviderKind;
use crate::error::Error;
use crate::runner::{provider_of, providers};
use crate::task::TaskStatus;

#[derive(Debug, Args)]
pub struct LogArgs {
    /// The task whose log to show.
    id: i64,
    /// Keep printing while the task runs.
    #[arg(long, short = 'f')]
    follow: bool,
    /// Print the agent's raw output stream.
    #[arg(long)]
    raw: bool,
}

pub fn cmd_log(ctx: &Context, args: LogArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let task = store.get_task(args.id)?;
    let Some(log_file) = &task.log_file else {
        return Err(usage(format!(
            "task {} has no log yet (it is {})",
            task.id, task.status
        )));
    };
    let path = std::path::PathBuf::from(log_file);
    let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, "open log", e))?;
    let kind = provider_of(&project, &task);
    let mut reader = BufReader::new(file);
    // --raw is the stream byte for byte, so it bypasses the colour-stripping writer.
    let mut out: Box<dyn Write> = if args.raw {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(output::stdout())
    };
    let mut line = String::new();
    let mut polls = 0u32;
    loop {
        line.clear();
        let n = reader.read_line(&mut line)?;
        if n > 0 && line.ends_with('\n') {
            print_line(&mut out, kind, args.raw, &line)?;
            continue;
        }
        if n > 0 {
            // A partial line: wait for the rest of it.
            reader.seek_relative(-(n as i64))?;
        }
        if !args.follow {
            if n > 0 {
                // The stream's last line, unterminated because the agent was cut off.
                print_line(&mut out, kind, args.raw, &line)?;
            }
            break;
        }
        out.flush()?;
        polls += 1;
        if polls.is_multiple_of(5) && store.get_task(task.id)?.status != TaskStatus::InProgress {
            // One more pass picks up what was written before the task ended.
            let mut rest = String::new();
            reader.read_to_string(&mut rest)?;
            for l in rest.lines() {
                print_line(&mut out, kind, args.raw, l)?;
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

/// Print one logged line: as written with `--raw`, else rendered. Rendered text came from an
/// agent, so control characters (terminal escape sequences among them) are dropped; newlines
/// and tabs stay.
fn print_line(
    out: &mut impl Write,
    kind: ProviderKind,
    raw: bool,
    line: &str,
) -> std::io::Result<()> {
    let line = line.trim_end_matches(['\n', '\r']);
    if raw {
        return writeln!(out, "{line}");
    }
    match providers::render_line(kind, line) {
        Some(text) => {
            let clean: String = text
                .chars()
                .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
                .collect();
            writeln!(out, "{clean}")
        }
        None => Ok(()),
    }
}
