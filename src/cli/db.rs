//! `gza db status`: where the project's records are (the SQLite file, or its schema in a shared
//! PostgreSQL database, shown without a password), the schema's version, and that the
//! connection works. `gza db copy --to URL`: the project's SQLite records into its project in a
//! shared PostgreSQL database (moving in to team mode; see gza-store's `copy.rs`).

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
    /// Copy this project's SQLite records (.gza/gza.db: tasks, outcomes, learnings with their
    /// history) into its project in a PostgreSQL database, keeping every id. Running it again
    /// copies only what is new; it refuses, copying nothing, when the project there holds
    /// other data under the same ids. The password comes from PGPASSWORD, ~/.pgpass or a
    /// service file, never the command line. The SQLite file is left as it was.
    Copy(CopyArgs),
}

#[derive(Debug, Args)]
struct CopyArgs {
    /// The PostgreSQL database: a URL (postgres://user@host:5432/db?sslmode=require) or
    /// key=value words (service=team). The project there is named by the `project` setting,
    /// else `origin`'s URL, as every clone names it.
    #[arg(long, value_name = "URL")]
    to: String,
    /// Check everything and print what would be copied; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Where a row changed both here and in PostgreSQL since the last copy, write this store's
    /// version over PostgreSQL's (without it the copy stops, naming the row). A row changed on
    /// one side only needs no flag: this store's change is brought across, PostgreSQL's kept.
    #[arg(long)]
    overwrite: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
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
        DbCommand::Copy(args) => copy(ctx, args),
    }
}

fn status(ctx: &Context, args: StatusArgs) -> anyhow::Result<()> {
    let project = ctx.project()?;
    let mut out = output::stdout();
    // Opening checks the connection and the schema (and migrates it, as any command would).
    let store = match Store::open_project_for_reading(&project) {
        Ok(store) => store,
        Err(e) => {
            // A script asking for JSON gets JSON, saying what failed (and the one line on
            // stderr, and exit status, of any error).
            if args.json
                && let Ok(crate::database::Database::Postgres {
                    spec,
                    project: name,
                }) = project.database()
            {
                let json = serde_json::json!({
                    "backend": "postgres",
                    "location": spec.display(),
                    "project": name,
                    "connection": "failed",
                    "error": e.to_string(),
                });
                writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
            }
            return Err(e.into());
        }
    };
    let status = store.status()?;
    let not_used = project.origin_name_not_used();
    if args.json {
        let mut json = serde_json::to_value(&status)?;
        json["connection"] = "ok".into();
        if let Some(name) = &not_used {
            json["origin_project"] = name.clone().into();
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    writeln!(out, "backend         {}", status.backend)?;
    writeln!(out, "location        {}", status.location)?;
    if let Some(name) = &status.project {
        writeln!(out, "project         {name}")?;
    }
    if let Some(name) = &not_used {
        writeln!(
            out,
            "                {} named by this clone's path before it had an origin; origin names {name}, the project its other clones use: to join it, delete .gza/project (tasks made under this name stay there), or set `project:` to keep this one",
            output::paint(output::YELLOW, "warning:")
        )?;
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
    match status.tls.as_deref() {
        None | Some("socket") => {}
        Some("none") => writeln!(
            out,
            "tls             {} (as the server sees this connection: not encrypted, unless a proxy between encrypts it)",
            output::paint(output::YELLOW, "none")
        )?,
        Some(how) => writeln!(
            out,
            "tls             {how} (as the server sees this connection)"
        )?,
    }
    writeln!(
        out,
        "connection      {}",
        output::paint(output::GREEN, "ok")
    )?;
    Ok(())
}

/// The one line `gza db copy` refuses with while `live` workers run on the SQLite store: which
/// worker runs which task (or none), and the commands that clear the way.
fn workers_in_the_way(
    source: &Store,
    live: &[crate::store::Lease],
    to: &str,
) -> anyhow::Result<String> {
    let running = source.in_progress_tasks()?;
    let mut tasks = Vec::new();
    let said: Vec<String> = live
        .iter()
        .map(|lease| {
            let ids: Vec<String> = running
                .iter()
                .filter(|t| t.state.worker().is_some_and(|w| w.pid == lease.pid))
                .map(|t| t.id.to_string())
                .collect();
            let what = match ids.len() {
                0 => "waiting for work".to_string(),
                1 => format!("running task {}", ids[0]),
                _ => format!("running tasks {}", ids.join(", ")),
            };
            tasks.extend(ids);
            format!("worker {} ({what})", lease.pid)
        })
        .collect();
    let pids: Vec<String> = live.iter().map(|l| l.pid.to_string()).collect();
    let finish = if tasks.is_empty() {
        String::new()
    } else {
        format!(
            "let {} finish (or stop {} now: `gza kill {}`), then ",
            if tasks.len() == 1 { "it" } else { "them" },
            if tasks.len() == 1 { "it" } else { "them" },
            tasks.join(" ")
        )
    };
    // The URL is the one given (a password in it was refused above).
    let again = shell_words(&["gza", "db", "copy", "--to", to]);
    Ok(format!(
        "not copied: gza {} {} on this project's SQLite store, and what {} records after the copy would not reach PostgreSQL; {finish}stop {} (Ctrl-C where {} runs, or `kill {}`) and run `{again}`",
        said.join(" and "),
        if live.len() == 1 { "works" } else { "work" },
        if live.len() == 1 { "it" } else { "they" },
        if live.len() == 1 {
            "the worker"
        } else {
            "the workers"
        },
        if live.len() == 1 { "it" } else { "they" },
        pids.join(" ")
    ))
}

/// `words` as one shell command line, each quoted when it needs to be.
fn shell_words(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:@=,+%".contains(c))
            {
                w.to_string()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn copy(ctx: &Context, args: CopyArgs) -> anyhow::Result<()> {
    use crate::database::{Database, DatabaseSpec};
    use crate::error::Error;
    let project = ctx.project()?;
    let spec =
        DatabaseSpec::parse(&args.to, None).map_err(|e| Error::Usage(format!("--to: {e}")))?;
    if spec.password.is_some() {
        return Err(Error::Usage(
            "--to holds a password, which a command line shows to others (ps, shell history): remove it and give it in PGPASSWORD, ~/.pgpass or a service file (service=…)".into(),
        )
        .into());
    }
    let source_path = project.db_path();
    if !source_path.exists() {
        return Err(Error::Usage(format!(
            "there is no SQLite store at {} to copy; `gza db copy` moves a project's records from there into PostgreSQL",
            source_path.display()
        ))
        .into());
    }
    let name = project.shared_name();
    let target_db = Database::Postgres {
        spec: Box::new(spec),
        project: name.clone(),
    };
    let source = Store::open_project_sqlite(&project)?;
    // A worker still running here would record its tasks' endings in the SQLite file after
    // the copy read them: they would never reach the shared database. Nor would the tasks an
    // idle `gza work --watch` claims later. So the copy refuses, in one line naming each
    // worker and what it runs, and what to do about it.
    let live: Vec<_> = source
        .leases()?
        .into_iter()
        .filter(|l| !l.expired())
        .collect();
    if !live.is_empty() {
        return Err(Error::Busy(workers_in_the_way(&source, &live, &args.to)?).into());
    }
    // A dry run makes nothing, not even the project's schema: into a project not there yet,
    // every row would be copied.
    let (tables, location, schema) = if args.dry_run {
        match Store::open_database(&target_db) {
            Ok(target) => {
                let status = target.status()?;
                (
                    source.copy_into_with(&target, true, args.overwrite)?,
                    status.location,
                    status.schema,
                )
            }
            Err(Error::MissingProject { database, .. }) => (source.copy_counts()?, database, None),
            Err(e) => return Err(e.into()),
        }
    } else {
        let target = Store::create_database(&target_db)?;
        let status = target.status()?;
        let tables = source.copy_into_with(&target, false, args.overwrite)?;
        // The clone keeps the name its records went under, as a clone that first opens a
        // shared database does: an `origin` added or changed later does not move it.
        if project.config.project.is_none() && project.recorded_project_name().is_none() {
            let _ = crate::fsutil::write_atomically(
                &project.project_name_file(),
                format!("{name}\n").as_bytes(),
            );
        }
        (tables, status.location, status.schema)
    };
    let mut out = output::stdout();
    if args.json {
        let json = serde_json::json!({
            "from": source_path.display().to_string(),
            "to": location,
            "project": name,
            "schema": schema,
            "dry_run": args.dry_run,
            "tables": tables,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    let verb = if args.dry_run { "Would copy" } else { "Copied" };
    writeln!(
        out,
        "{verb} .gza/gza.db into project {name:?} in {location}{}",
        schema.map(|s| format!(" (schema {s})")).unwrap_or_default()
    )?;
    let mut table = output::Table::new(vec!["TABLE", "ROWS", "COPIED", "ALREADY THERE"]);
    let (mut rows, mut copied, mut present) = (0, 0, 0);
    for t in &tables {
        rows += t.rows;
        copied += t.copied;
        present += t.present;
        table.row(vec![
            t.table.to_string(),
            t.rows.to_string(),
            t.copied.to_string(),
            t.present.to_string(),
        ]);
    }
    table.row(vec![
        "total".into(),
        rows.to_string(),
        copied.to_string(),
        present.to_string(),
    ]);
    table.print(&mut out)?;
    let deleted: Vec<String> = tables
        .iter()
        .filter(|t| t.deleted > 0)
        .map(|t| format!("{} {}", t.table, t.deleted))
        .collect();
    if !deleted.is_empty() {
        writeln!(
            out,
            "{} there as well, as they were deleted here since the last copy: {}",
            if args.dry_run {
                "Would delete"
            } else {
                "Deleted"
            },
            deleted.join(", ")
        )?;
    }
    if args.dry_run {
        writeln!(out, "Nothing was written (--dry-run).")?;
    } else {
        writeln!(
            out,
            ".gza/gza.db is left as it was. To work from the shared database, set `database:` in gza.local.yaml (or GZA_DATABASE_URL) to it; other clones of this repository find the same project."
        )?;
    }
    Ok(())
}
