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
        let by_status: serde_json::Map<String, serde_json::Value> = stats
            .by_status
            .iter()
            .map(|(s, n)| (s.as_str().to_string(), (*n).into()))
            .collect();
        let json = serde_json::json!({
            "total": stats.total,
            "by_status": by_status,
            "cost_usd": { "total": stats.total_cost_usd, "mean": stats.mean_cost_usd },
            "tokens": { "input": stats.total_input_tokens, "output": stats.total_output_tokens },
            "duration_seconds": { "total": stats.total_duration_seconds, "mean": stats.mean_duration_seconds },
        });
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        output::paint(output::BOLD, format!("Tasks: {}", stats.total))
    )?;
    for (status, n) in &stats.by_status {
        let name = format!("{:<12}", status.as_str());
        writeln!(
            out,
            "  {} {n:>7}",
            output::paint(output::status_style(*status), name)
        )?;
    }
    writeln!(out, "{}", output::paint(output::BOLD, "Cost"))?;
    writeln!(
        out,
        "  total        {:>9}",
        output::cost(Some(stats.total_cost_usd))
    )?;
    writeln!(
        out,
        "  mean/task    {:>9}",
        output::cost(stats.mean_cost_usd)
    )?;
    writeln!(out, "{}", output::paint(output::BOLD, "Tokens"))?;
    writeln!(out, "  input        {:>9}", stats.total_input_tokens)?;
    writeln!(out, "  output       {:>9}", stats.total_output_tokens)?;
    writeln!(out, "{}", output::paint(output::BOLD, "Duration"))?;
    writeln!(
        out,
        "  total        {:>9}",
        output::duration(Some(stats.total_duration_seconds))
    )?;
    writeln!(
        out,
        "  mean/task    {:>9}",
        output::duration(stats.mean_duration_seconds)
    )?;
    Ok(())
}
