//! `gza trust`: show the settings of this project's gza.yaml that run commands, widen what
//! agents may touch or direct the person's keys, and accept them (or `--revoke` them).

use std::io::{BufRead, IsTerminal, Write};

use clap::Args;

use super::{Context, output, usage};
use crate::project::CONFIG_FILE;

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Trust them without asking (for scripts).
    #[arg(long, short = 'y', conflicts_with = "revoke")]
    yes: bool,
    /// Forget what was trusted: those settings are ignored again.
    #[arg(long)]
    revoke: bool,
}

pub fn cmd_trust(ctx: &Context, args: TrustArgs) -> anyhow::Result<()> {
    let project = crate::project::Project::discover(ctx.dir())?;
    let root = &project.root;
    let mut out = output::stdout();
    if args.revoke {
        if crate::trust::revoke(root)? {
            writeln!(
                out,
                "{} {} is no longer trusted: the settings of its {CONFIG_FILE} that need trust are ignored again",
                output::paint(output::GREEN, "✓"),
                root.display()
            )?;
        } else {
            writeln!(out, "{} was not trusted; nothing changed", root.display())?;
        }
        return Ok(());
    }
    let effective = crate::settings::load(root)?;
    let trusted = crate::trust::trusted(root)?;
    // The agent CLIs' configuration in the project (committed, or written by anyone since),
    // trusted by content.
    const AGENT_CONFIG_WHY: &str = "an agent CLI's settings in the project (committed, or written there since): their hooks and MCP servers run commands when an agent starts";
    let mut rows: Vec<(String, serde_norway::Value, &str)> = effective
        .sensitive
        .iter()
        .map(|(k, (v, why))| (k.clone(), v.clone(), why.describe()))
        .collect();
    for (file, hash) in crate::trust::agent_configs(root) {
        rows.push((
            crate::trust::agent_config_key(&file),
            hash,
            AGENT_CONFIG_WHY,
        ));
    }
    if rows.is_empty() {
        crate::trust::record(root, &Default::default())?;
        writeln!(
            out,
            "{CONFIG_FILE} sets nothing that needs trust (no agent command or path, no sandbox \
             turned off, no extra variables, no extraction endpoint or key variable)"
        )?;
        return Ok(());
    }
    if rows.len() == effective.sensitive.len() {
        writeln!(
            out,
            "{} sets these, which run on this machine or reach beyond the project:",
            root.join(CONFIG_FILE).display()
        )?;
    } else {
        writeln!(
            out,
            "{} (its {CONFIG_FILE} and the agent settings in it) sets these, which run on this machine or reach beyond the project:",
            root.display()
        )?;
    }
    let width = rows
        .iter()
        .map(|(k, _, _)| crate::text::display_width(k))
        .max()
        .unwrap_or(0);
    for (key, value, why) in &rows {
        let shown = output::bidi_visible(
            &serde_json::to_string(&crate::trust::to_json(value)).unwrap_or_default(),
        );
        let state = if crate::trust::covers(trusted.as_ref(), key, value) {
            output::paint(output::DIM, "(trusted)")
        } else {
            output::paint(output::YELLOW, "(not trusted)")
        };
        writeln!(
            out,
            "  {}  {}  {state}\n  {:width$}  {}",
            output::pad(key, width),
            output::one_line(&shown, 200),
            "",
            output::paint(output::DIM, why)
        )?;
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(usage(
                "stdin is not a terminal, so gza cannot ask; run `gza trust --yes` to trust these settings",
            ));
        }
        write!(out, "Trust them? [y/N] ")?;
        out.flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            writeln!(out, "Not trusted; gza keeps ignoring them.")?;
            return Ok(());
        }
    }
    let values = rows.into_iter().map(|(k, v, _)| (k, v)).collect();
    let file = crate::trust::record(root, &values)?;
    writeln!(
        out,
        "{} Trusted (recorded in {}); a change to any of them makes gza ask again",
        output::paint(output::GREEN, "✓"),
        file.display()
    )?;
    Ok(())
}

/// An agent CLI's settings file of the project that `gza hook install` or `gza mcp install` is
/// about to change, as it was: whether gza's change keeps it trusted
/// (`gza_core::trust::keep_after_writing`).
pub(crate) struct AgentConfigWrite<'a> {
    root: &'a std::path::Path,
    rel: &'static str,
    before: Option<serde_norway::Value>,
}

impl<'a> AgentConfigWrite<'a> {
    /// The file at `path` before the change; `None` when it is no agent settings file of the
    /// project's (a user-scope file, say).
    pub(crate) fn before(
        root: &'a std::path::Path,
        path: &std::path::Path,
    ) -> Option<AgentConfigWrite<'a>> {
        let rel = crate::trust::agent_config_name(root, path)?;
        Some(AgentConfigWrite {
            root,
            rel,
            before: crate::trust::agent_config_hash(root, rel),
        })
    }

    /// After the change: keep the trust, or say in one line why the file stays untrusted.
    pub(crate) fn after(self, out: &mut impl Write) -> anyhow::Result<()> {
        if !crate::trust::keep_after_writing(self.root, self.rel, self.before.as_ref())? {
            writeln!(
                out,
                "  {} held settings you had not trusted, so gza's agents still leave it out: read it, then run `gza trust`",
                self.rel
            )?;
        }
        Ok(())
    }
}
