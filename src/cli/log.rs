//! `gza log`: what an agent did, readable or raw, optionally as it happens.

use std::io::{BufRead, BufReader, Read, Write};
use std::time::Duration;

use clap::Args;

use super::{Context, output, usage};
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
    let mut out = output::stdout();
    let mut line = String::new();
    let mut polls = 0u32;
    loop {
        line.clear();
        let n = reader.read_line(&mut line)?;
        if n > 0 && line.ends_with('\n') {
            let text = line.trim_end_matches(['\n', '\r']);
            if args.raw {
                writeln!(out, "{text}")?;
            } else if let Some(rendered) = providers::render_line(kind, text) {
                writeln!(out, "{rendered}")?;
            }
            continue;
        }
        if n > 0 {
            // A partial line: wait for the rest of it.
            reader.seek_relative(-(n as i64))?;
        }
        if !args.follow {
            if n > 0 {
                writeln!(
                    out,
                    "{}",
                    if args.raw {
                        line.clone()
                    } else {
                        providers::render_line(kind, &line).unwrap_or_default()
                    }
                )?;
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
                if args.raw {
                    writeln!(out, "{l}")?;
                } else if let Some(rendered) = providers::render_line(kind, l) {
                    writeln!(out, "{rendered}")?;
                }
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}
