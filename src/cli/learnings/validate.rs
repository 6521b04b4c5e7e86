//! `gza learnings validate`: the evidence in the project tree that makes a learning tier 2.

use std::io::Write;

use clap::Args;

use super::{learning_by_id, rewrite_file};
use crate::cli::{Context, output, usage};
use crate::learn::validate;

#[derive(Debug, Args)]
pub(super) struct ValidateArgs {
    /// Only these learnings (default: every one not archived).
    ids: Vec<String>,
    /// Show what would change; record nothing, write no expertise.yaml.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub(super) fn validate_cmd(ctx: &Context, args: ValidateArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let ids = args
        .ids
        .iter()
        .map(|id| learning_by_id(&store, id).map(|l| l.id))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let report = validate::validate(
        &project,
        &store,
        (!ids.is_empty()).then_some(ids.as_slice()),
        args.dry_run,
    )?;
    if !args.dry_run {
        // Tier 2 goes first in the file: rewrite it with the new tiers.
        rewrite_file(&project, &store, None)?;
    }
    let mut out = output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    if args.dry_run {
        writeln!(
            out,
            "{}",
            output::paint(output::BOLD, "Dry run: nothing was recorded.")
        )?;
    }
    writeln!(
        out,
        "Searched {} files{} for {} learnings{}",
        report.files_searched,
        report
            .commit
            .as_deref()
            .map(|c| format!(" at commit {}", &c[..c.len().min(12)]))
            .unwrap_or_default(),
        report.checked.len(),
        if report.unreadable > 0 {
            format!(" ({} could not be read)", report.unreadable)
        } else {
            String::new()
        }
    )?;
    for c in &report.checked {
        let tier = match (&c.level, c.terms.is_empty()) {
            (_, true) => "no distinctive terms".to_string(),
            (Some(level), _) => format!("tier 2 ({level}, {} files)", c.files),
            (None, _) => format!(
                "tier 1 ({} file{})",
                c.files,
                if c.files == 1 { "" } else { "s" }
            ),
        };
        let padded = format!("{:<9}", c.change);
        let change = match c.change {
            "promoted" => output::paint(output::GREEN, padded),
            "stale" => output::paint(output::YELLOW, padded),
            _ => padded,
        };
        writeln!(
            out,
            "  {:<5} {tier:<24} {change} {}",
            c.id,
            output::one_line(&c.text, 60)
        )?;
        if let Some(reason) = c.stale_reason.as_ref().filter(|_| c.change == "stale") {
            writeln!(out, "        {reason}")?;
        }
    }
    if let Some(path) = &report.exported {
        let shown = std::path::Path::new(path)
            .strip_prefix(&project.root)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| path.clone());
        writeln!(out, "Wrote {shown}")?;
    }
    if let Some(e) = report.export_error {
        return Err(usage(e));
    }
    Ok(())
}
