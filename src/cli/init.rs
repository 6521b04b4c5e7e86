//! `gza init`: set up a project.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{Context, output, usage};
use crate::config::EXAMPLE_YAML;
use crate::error::Error;
use crate::project::{CONFIG_FILE, STATE_DIR};
use crate::store::Store;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing gza.yaml (the task database is kept).
    #[arg(long)]
    force: bool,
}

/// Lines `gza init` makes sure .gitignore has: everything gza keeps in `.gza/` is this
/// machine's (the database and its journals, logs, worktrees, reports, locks, spooled drafts,
/// caches, partial files), except `learnings.md`, which the team shares; and the person's
/// `gza.local.yaml`. An allow-list, so a file a later gza adds is ignored from the start.
const GITIGNORE_LINES: [&str; 3] = ["/.gza/*", "!/.gza/learnings.md", "/gza.local.yaml"];

pub fn cmd_init(ctx: &Context, args: InitArgs) -> anyhow::Result<()> {
    let root = ctx.dir();
    if !root.is_dir() {
        return Err(usage(format!(
            "{} is not a directory; create it first",
            root.display()
        )));
    }
    let root = std::path::absolute(root).map_err(|e| Error::io(root, "resolve", e))?;
    let config_path = root.join(CONFIG_FILE);
    let db_path = root.join(STATE_DIR).join("gza.db");
    // An existing gza.yaml is read as every command reads it: a settings error (in whichever
    // file holds the key) is refused here in its one line, rather than setting up a database
    // the settings do not name.
    let existing = if config_path.exists() && !args.force {
        let project = crate::project::Project::discover(&root)?;
        let database = project.database()?;
        Some((project, database))
    } else {
        None
    };
    // A project whose records are in a shared database (team mode): its schema there is what
    // `gza init` makes, once for the team; every later clone finds it.
    if let Some((project, database @ crate::database::Database::Postgres { .. })) = &existing {
        let joined = root.join(STATE_DIR).is_dir();
        let (made, store) = match Store::open_project(project) {
            // This clone has it already: as with SQLite, say how to start over.
            Ok(_) if joined => {
                return Err(usage(format!(
                    "{} already exists; pass --force to overwrite it (tasks are kept)",
                    config_path.display()
                )));
            }
            Ok(store) => (false, store),
            Err(Error::MissingProject { .. }) => (true, Store::create_project(project)?),
            Err(e) => return Err(e.into()),
        };
        drop(store);
        ensure_gitignore(&root.join(".gitignore"))?;
        writeln!(
            output::stdout(),
            "{} {} PostgreSQL database {}; {CONFIG_FILE} was kept",
            output::paint(output::GREEN, "✓"),
            if made {
                "Created the project in the"
            } else {
                "Using the"
            },
            database.describe(),
        )?;
        return Ok(());
    }
    let db_missing = std::fs::metadata(&db_path).map_or(true, |m| m.len() == 0);
    if let Some((project, _)) = &existing
        && db_missing
    {
        // An initialised project whose database is gone (or a fresh clone): make only that.
        drop(Store::create(&db_path)?);
        let mut out = output::stdout();
        writeln!(
            out,
            "{} Created an empty task database {STATE_DIR}/gza.db (SQLite); {CONFIG_FILE} was kept",
            output::paint(output::GREEN, "✓"),
        )?;
        if let Some(why) = database_ignored(project) {
            writeln!(out, "  {why}")?;
        }
        return Ok(());
    }
    if let Some((project, _)) = &existing {
        let why = database_ignored(project)
            .map(|why| format!("; {why}"))
            .unwrap_or_default();
        return Err(usage(format!(
            "{} already exists; pass --force to overwrite it (tasks are kept){why}",
            config_path.display()
        )));
    }
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "project".into());
    // Every other setting is written commented out, at its default: what the project does not
    // set comes from ~/.gza/config.yaml, then the defaults (gza.local.yaml and GZA_* override).
    let yaml: String = EXAMPLE_YAML
        .lines()
        .map(|line| {
            if line.starts_with("project_name:") {
                format!(
                    "project_name: {}\n",
                    serde_json::to_string(&name).unwrap_or_default()
                )
            } else if line.trim().is_empty() || line.starts_with('#') {
                format!("{line}\n")
            } else {
                format!("# {line}\n")
            }
        })
        .collect();
    crate::fsutil::write_atomically(&config_path, yaml.as_bytes())?;
    // gza wrote it, so it is the person's own: trusted as it is (with nothing in it that needs
    // trust yet; a later change to such a setting asks for `gza trust` like any other).
    let _ = crate::trust::record(&root, &Default::default());

    let state = root.join(STATE_DIR);
    // gza's state lives here whichever database keeps the records.
    std::fs::create_dir_all(&state).map_err(|e| Error::io(&state, "create directory", e))?;
    // The database the new settings (with gza.local.yaml, ~/.gza/config.yaml and the
    // environment: GZA_DATABASE_URL) name. Settings that are not valid leave no gza.yaml
    // behind: the error names the file that holds the key.
    let discovered = crate::project::Project::discover(&root).and_then(|p| {
        let database = p.database()?;
        Ok((p, database))
    });
    let (project, database) = match discovered {
        Ok(found) => found,
        Err(e) => {
            let _ = std::fs::remove_file(&config_path);
            return Err(e.into());
        }
    };
    let store = Store::create_project(&project)?;
    drop(store);
    let added = ensure_gitignore(&root.join(".gitignore"))?;

    let mut out = output::stdout();
    writeln!(
        out,
        "{} Initialized gza in {}",
        output::paint(output::GREEN, "✓"),
        root.display()
    )?;
    writeln!(
        out,
        "  {CONFIG_FILE}     configuration (every key documented)"
    )?;
    match &database {
        crate::database::Database::Sqlite(_) => {
            writeln!(out, "  {STATE_DIR}/gza.db  task database (SQLite)")?;
            if let Some(why) = database_ignored(&project) {
                writeln!(out, "  {why}")?;
            }
        }
        shared => writeln!(out, "  task database (PostgreSQL) {}", shared.describe())?,
    }
    if added > 0 {
        writeln!(
            out,
            "  .gitignore   {added} entries for gza's runtime files"
        )?;
    }
    writeln!(out, "Next: gza add \"describe a task\" && gza work")?;
    Ok(())
}

/// Why the project's records are in SQLite although gza.yaml names a database: the setting
/// waits for the person's trust (a cloned repository must not send this machine's records, or
/// its credentials, to a server of its choosing).
fn database_ignored(project: &crate::project::Project) -> Option<String> {
    project.ignored_settings.iter().any(|k| k == "database").then(|| {
        format!(
            "{CONFIG_FILE}'s database setting is ignored until you trust it, so this is SQLite:              run `gza trust`, then `gza init` again (or set database: in gza.local.yaml, or              GZA_DATABASE_URL)"
        )
    })
}

/// Append the runtime-file entries .gitignore lacks; returns how many were added.
pub(crate) fn ensure_gitignore(path: &Path) -> Result<usize, Error> {
    // A repository may commit .gitignore as a link to a file of the person's elsewhere: gza
    // neither reads nor writes through it (the person adds the lines, if they want them).
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        eprintln!(
            "warning: {} is a symbolic link; gza does not write through links, so add its runtime entries yourself: {}",
            path.display(),
            GITIGNORE_LINES.join(" ")
        );
        return Ok(0);
    }
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(path, "read", e)),
    };
    let missing: Vec<&str> = GITIGNORE_LINES
        .iter()
        .copied()
        .filter(|line| !existing.lines().any(|l| l.trim() == *line))
        .collect();
    if missing.is_empty() {
        return Ok(0);
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# gza runtime files\n");
    for line in &missing {
        text.push_str(line);
        text.push('\n');
    }
    use std::io::Write;
    gza_core::fsutil::create_regular(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Error::io(path, "write", e))?;
    Ok(missing.len())
}
