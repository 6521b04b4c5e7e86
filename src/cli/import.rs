//! `gza import`: queue the tasks of a task file written for Python gza.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::{Context, output, usage};
use crate::import::{self, Skipped, preview};

/// Lines of skipped entries (and of problems) printed before the rest are counted.
const LINES_SHOWN: usize = 10;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A YAML task file in Python gza's import format.
    file: PathBuf,
    /// Only show what would be queued and every problem found; queue nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn cmd_import(ctx: &Context, args: ImportArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let path = import::resolve(ctx.dir(), &args.file);
    let name = args.file.display().to_string();
    let plan = import::plan(&project, &path, &name)?;
    let mut out = output::stdout();
    if args.dry_run {
        if plan.problems.is_empty() {
            writeln!(
                out,
                "{name}: {} to queue (if not queued already), {} skipped",
                plan.entries.len(),
                plan.skipped.len()
            )?;
        } else {
            writeln!(
                out,
                "{name}: {} {}; nothing is queued until {} fixed",
                plan.problems.len(),
                if plan.problems.len() == 1 {
                    "problem"
                } else {
                    "problems"
                },
                if plan.problems.len() == 1 {
                    "it is"
                } else {
                    "they are"
                }
            )?;
        }
        // Every entry in the file's order: those that read well, and those with a problem of
        // their own beside it.
        let mut lines: Vec<(usize, String)> = plan
            .entries
            .iter()
            .map(|e| {
                let dep = e
                    .depends_on
                    .map(|d| format!(", after entry {d}"))
                    .unwrap_or_default();
                let group = e
                    .group
                    .as_deref()
                    .map(|g| format!(", group {g}"))
                    .unwrap_or_default();
                let review = if e.review { ", then a review" } else { "" };
                let line = format!(
                    "  entry {}: {} \"{}\"{group}{dep}{review}",
                    e.position,
                    e.task_type,
                    preview(&crate::redact::redact(&e.prompt))
                );
                (e.position, line)
            })
            .collect();
        lines.extend(plan.rejected.iter().map(|r| {
            let line = format!(
                "  entry {}: \"{}\" {} {}",
                r.position,
                preview(&crate::redact::redact(&r.prompt)),
                output::paint(output::RED, "problem:"),
                r.reason
            );
            (r.position, line)
        }));
        lines.sort_by_key(|(position, _)| *position);
        for (_, line) in lines.iter().take(LINES_SHOWN) {
            writeln!(out, "{line}")?;
        }
        if lines.len() > LINES_SHOWN {
            writeln!(out, "  … and {} more", lines.len() - LINES_SHOWN)?;
        }
        // Problems of the file as a whole (no tasks, a default spec, a cycle), every one.
        let own: std::collections::HashSet<usize> =
            plan.rejected.iter().map(|r| r.position).collect();
        for problem in &plan.problems {
            let of_entry = own
                .iter()
                .any(|p| problem.starts_with(&format!("entry {p}: ")));
            if !of_entry {
                writeln!(
                    out,
                    "  {} {problem}",
                    output::paint(output::RED, "problem:")
                )?;
            }
        }
        print_skipped(&mut out, &plan.skipped)?;
        if !plan.problems.is_empty() {
            return Err(usage(format!(
                "{name} has {} problem(s); nothing was queued",
                plan.problems.len()
            )));
        }
        return Ok(());
    }
    if let Some(first) = plan.problems.first() {
        let more = match plan.problems.len() {
            1 => String::new(),
            n => format!(
                " (and {} more problems: `gza import {name} --dry-run` lists them)",
                n - 1
            ),
        };
        return Err(usage(format!("{name}: {first}{more}; nothing was queued")));
    }
    let report = import::apply(&store, plan)?;
    if report.queued.is_empty() {
        writeln!(
            out,
            "Nothing new to queue from {name}: {} task(s) were queued by an earlier import",
            report.already.len()
        )?;
    } else {
        let ids: Vec<i64> = report.queued.iter().map(|(_, id)| id.0).collect();
        let reviews = match report.reviews.len() {
            0 => String::new(),
            n => format!(", and {n} review(s) that run after their task"),
        };
        writeln!(
            out,
            "{} Queued {} task(s) from {name}: {}{reviews}",
            output::paint(output::GREEN, "✓"),
            ids.len(),
            id_ranges(&ids)
        )?;
        if !report.already.is_empty() {
            writeln!(
                out,
                "  {} were queued by an earlier import and were left as they are",
                report.already.len()
            )?;
        }
    }
    print_skipped(&mut out, &report.skipped)?;
    Ok(())
}

fn print_skipped(out: &mut impl Write, skipped: &[Skipped]) -> std::io::Result<()> {
    if skipped.is_empty() {
        return Ok(());
    }
    writeln!(out, "Skipped {}:", skipped.len())?;
    for s in skipped.iter().take(LINES_SHOWN) {
        writeln!(
            out,
            "  entry {} \"{}\": {}",
            s.position,
            preview(&crate::redact::redact(&s.prompt)),
            s.reason
        )?;
    }
    if skipped.len() > LINES_SHOWN {
        writeln!(out, "  … and {} more", skipped.len() - LINES_SHOWN)?;
    }
    Ok(())
}

/// Ids as ranges: `3-7, 9, 12-13`.
fn id_ranges(ids: &[i64]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::id_ranges;

    #[test]
    fn ids_read_as_ranges() {
        assert_eq!(id_ranges(&[3, 4, 5, 7, 9, 10]), "3-5, 7, 9-10");
        assert_eq!(id_ranges(&[1]), "1");
        assert_eq!(id_ranges(&[]), "");
    }
}
