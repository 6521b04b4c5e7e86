//! `gza learnings search`: the learnings that matter for a text, by meaning and by words.

use std::io::Write;

use clap::Args;

use crate::cli::{Context, output, usage};
use crate::learn::rank::{self, Ranker};

#[derive(Debug, Args)]
pub(super) struct SearchArgs {
    /// What to find learnings for: a task, a question, some words (`-` reads standard input).
    query: String,
    /// Return at most this many.
    #[arg(short = 'k', long, default_value_t = 3)]
    k: usize,
    /// Print JSON for scripts: a list of {id, text, section, score, …}, best first.
    #[arg(long)]
    json: bool,
    /// Show how each score was made, including the best items below the cut.
    #[arg(long)]
    explain: bool,
    /// Skip the floor and the relative cut: always the best k (for tuning the ranker).
    #[arg(long, hide = true)]
    raw: bool,
}

/// The longest query read from standard input (`gza learnings search -`): 4 MiB, a whole
/// document pasted in, never an endless stream.
const MAX_QUERY_BYTES: u64 = 4 << 20;

pub(super) fn search(ctx: &Context, args: SearchArgs) -> anyhow::Result<()> {
    let (project, store) = super::open_with_edits(ctx)?;
    let _snapshot = super::SnapshotAfter::new(&project, &store);
    if args.k == 0 {
        return Err(usage("-k must be at least 1"));
    }
    let query = if args.query == "-" {
        // Bounded: stdin may be /dev/zero or a stream with no end, and no query is this long.
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin().lock(), MAX_QUERY_BYTES + 1),
            &mut bytes,
        )?;
        if bytes.len() as u64 > MAX_QUERY_BYTES {
            return Err(usage(format!(
                "the query on standard input is more than {MAX_QUERY_BYTES} bytes; give a few words or a short passage"
            )));
        }
        // Text in a mixed encoding (a pasted log) is searched for what reads as text.
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        args.query.clone()
    };
    if query.trim().is_empty() {
        return Err(usage(
            "nothing to search for; give some words, or `-` to read them from standard input",
        ));
    }
    let ranker = Ranker::load(&project);
    if let Some(notice) = ranker.model_notice() {
        writeln!(
            output::stderr(),
            "{} {notice}",
            output::paint(output::YELLOW, "warning:")
        )?;
    }
    if let Some(problem) = ranker.model_problem() {
        writeln!(
            output::stderr(),
            "{} {problem}; ranking by words only",
            output::paint(output::YELLOW, "warning:")
        )?;
    }
    let q = rank::Query {
        text: &query,
        k: args.k,
        calibrated: !args.raw,
        drafts: true,
    };
    let (hits, below) = if args.explain {
        ranker.search_with_rest(&store, q)?
    } else {
        (ranker.search(&store, q)?, Vec::new())
    };
    let found = rank::hits_with_records(&store, &hits)?;
    let mut out = output::stdout();
    if args.json {
        let list: Vec<serde_json::Value> = found
            .iter()
            .map(|(h, l)| {
                serde_json::json!({
                    "id": l.label(),
                    "text": l.text,
                    "section": l.section,
                    "score": (h.score * 1000.0).round() / 1000.0,
                    "semantic": h.semantic.map(|s| (s * 1000.0).round() / 1000.0),
                    "lexical": (h.lexical * 1000.0).round() / 1000.0,
                    "priority": l.priority,
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    if found.is_empty() {
        writeln!(out, "No learning matches.")?;
    }
    for (h, l) in &found {
        writeln!(
            out,
            "{:<5} {:.2}  {} {}",
            l.label(),
            h.score,
            l.text,
            output::paint(output::DIM, format!("[{}]", l.section))
        )?;
        if args.explain {
            explain(&mut out, h)?;
        }
    }
    // Only `--explain` asks for what lies below the cut.
    if !below.is_empty() {
        // The cut, `--k` and the near-duplicates of what was returned all leave learnings here.
        writeln!(
            out,
            "Below the cut, beyond --k, or saying what a returned one says:"
        )?;
        for (h, l) in rank::hits_with_records(&store, &below)? {
            writeln!(out, "{:<5} {:.2}  {}", l.label(), h.score, l.text)?;
            explain(&mut out, &h)?;
        }
    }
    Ok(())
}

fn explain(out: &mut impl Write, h: &rank::Hit) -> std::io::Result<()> {
    writeln!(out, "      {}", h.explanation())
}
