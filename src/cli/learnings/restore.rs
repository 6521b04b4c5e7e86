//! `gza learnings restore`: bring archived learnings back.

use clap::Args;

use super::archive::set_status;
use crate::cli::Context;
use crate::learning::Status;

#[derive(Debug, Args)]
pub(super) struct RestoreArgs {
    /// Ids of the learnings (e.g. L12).
    #[arg(required = true)]
    ids: Vec<String>,
}

pub(super) fn restore(ctx: &Context, args: RestoreArgs) -> anyhow::Result<()> {
    set_status(ctx, &args.ids, Status::Active, None)
}
