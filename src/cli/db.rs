//! `gza db status`: where the project's records are (the SQLite file, or its schema in a shared
//! PostgreSQL database, shown without a password), the schema's version, and that the
//! connection works.

use std::io::Write;

use clap::{Args, Subcommand};

use super::{Context, output};
use crate::store::Store;

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    command: DbCommand,
}

#[derive(Debug, Subcommand)]
enum DbCommand {
    /// The backend (sqlite or postgres), where the records are (never the password), the
    /// project's name and schema in a shared database, the schema version, and the server.
    Status(StatusArgs),
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_db(ctx: &Context, args: DbArgs) -> anyhow::Result<()> {
    match args.command {
        DbCommand::Status(args) => status(ctx, args),
    }
}

fn status(ctx: &Context, args: StatusArgs) -> anyhow::Result<()> {
    let project = ctx.project()?;
    // Opening checks the connection and the schema (and migrates it, as any command would).
    let store = Store::open_project_for_reading(&project)?;
    let status = store.status()?;
    let mut out = output::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
        return Ok(());
    }
    writeln!(out, "backend         {}", status.backend)?;
    writeln!(out, "location        {}", status.location)?;
    if let Some(name) = &status.project {
        writeln!(out, "project         {name}")?;
    }
    if let Some(schema) = &status.schema {
        writeln!(out, "schema          {schema}")?;
    }
    writeln!(
        out,
        "schema version  {} (this gza knows {})",
        status.schema_version, status.known_version
    )?;
    writeln!(out, "server          {}", status.server)?;
    writeln!(
        out,
        "connection      {}",
        output::paint(output::GREEN, "ok")
    )?;
    Ok(())
}
