//! `gza stats`: counts by status and what the tasks cost.

use std::io::Write;

use clap::Args;

use super::{Context, output};

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn cmd_stats(ctx: &Context, args: StatsArgs) -> anyhow::Result<()> {
    let (_, store) = ctx.open_for_reading()?;
    let stats = store.stats()?;
    let mut out = output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &stats)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        output::paint(output::BOLD, format!("Tasks: {}", stats.total))
    )?;
    for (status, n) in stats.by_status.iter() {
        let name = format!("{:<12}", status.as_str());
        writeln!(
            out,
            "  {} {n:>7}",
            output::paint(output::status_style(status), name)
        )?;
    }
    writeln!(out, "{}", output::paint(output::BOLD, "Cost"))?;
    writeln!(
        out,
        "  total        {:>9}",
        output::cost(Some(stats.cost_usd.total))
    )?;
    writeln!(
        out,
        "  mean/task    {:>9}",
        output::cost(stats.cost_usd.mean)
    )?;
    writeln!(out, "{}", output::paint(output::BOLD, "Tokens"))?;
    writeln!(out, "  input        {:>9}", stats.tokens.input)?;
    writeln!(out, "  output       {:>9}", stats.tokens.output)?;
    writeln!(out, "{}", output::paint(output::BOLD, "Duration"))?;
    writeln!(
        out,
        "  total        {:>9}",
        output::duration(Some(stats.duration_seconds.total))
    )?;
    writeln!(
        out,
        "  mean/task    {:>9}",
        output::duration(stats.duration_seconds.mean)
    )?;
    let ab = stats.ab_runs;
    if ab.runs > 0 {
        writeln!(
            out,
            "{}",
            output::paint(output::BOLD, "A/B runs (not counted above)")
        )?;
        writeln!(out, "  runs         {:>9}", ab.runs)?;
        writeln!(out, "  cost         {:>9}", output::cost(Some(ab.cost_usd)))?;
        writeln!(
            out,
            "  time         {:>9}",
            output::duration(Some(ab.duration_seconds))
        )?;
    }
    Ok(())
}
