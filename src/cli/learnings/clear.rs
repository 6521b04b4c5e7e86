//! `gza learnings clear`: delete the file, every learning and the regeneration history.

use std::io::{IsTerminal, Write};

use clap::Args;

use super::wait_for_regeneration;
use crate::cli::{Context, output, usage};
use crate::error::Error;

#[derive(Debug, Args)]
pub(super) struct ClearArgs {
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    yes: bool,
}

pub(super) fn clear(ctx: &Context, args: ClearArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    if !args.yes {
        let term = dialoguer::console::Term::stderr();
        if !std::io::stdin().is_terminal() || !term.is_term() {
            return Err(usage("clearing learnings needs confirmation; pass --yes"));
        }
        // y or n answers at once; Enter keeps the default, no.
        let sure = dialoguer::Confirm::new()
            .with_prompt("Delete .gza/learnings.md and every stored learning?")
            .default(false)
            .interact_on(&term)?;
        if !sure {
            writeln!(output::stdout(), "Cancelled")?;
            return Ok(());
        }
    }
    let _lock = wait_for_regeneration(&project)?;
    store.clear_learnings()?;
    let path = project.learnings_path();
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&path, "delete", e).into()),
    }
    writeln!(
        output::stdout(),
        "{} Cleared learnings",
        output::paint(output::GREEN, "✓")
    )?;
    Ok(())
}
