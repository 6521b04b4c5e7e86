//! `gza config`: the effective settings and where each came from.

use std::io::Write;

use clap::Args;

use super::{Context, output};

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print JSON: each key with its value and source.
    #[arg(long, conflicts_with = "example")]
    json: bool,
    /// Print an example gza.yaml with every key, its default and what it does (no project needed).
    #[arg(long)]
    example: bool,
}

pub fn cmd_config(ctx: &Context, args: ConfigArgs) -> anyhow::Result<()> {
    if args.example {
        output::stdout().write_all(crate::config::EXAMPLE_YAML.as_bytes())?;
        return Ok(());
    }
    let project = ctx.project()?;
    let effective = crate::settings::load(&project.root)?;
    // Project files are named relative to the project root; the user file in full.
    let shown = |source: &crate::settings::Source| match source {
        crate::settings::Source::File { path, line } => {
            let path = path.strip_prefix(&project.root).unwrap_or(path);
            crate::settings::Source::File {
                path: path.to_path_buf(),
                line: *line,
            }
            .to_string()
        }
        other => other.to_string(),
    };
    let mut out = output::stdout();
    if args.json {
        let map: serde_json::Map<String, serde_json::Value> = effective
            .values
            .iter()
            .map(|(key, (value, source))| {
                let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
                (
                    key.clone(),
                    serde_json::json!({ "value": value, "source": shown(source) }),
                )
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&map)?)?;
        return Ok(());
    }
    let rows: Vec<(String, String, String)> = effective
        .values
        .iter()
        .map(|(key, (value, source))| {
            let value = serde_json::to_string(value).unwrap_or_default();
            (key.clone(), value, shown(source))
        })
        .collect();
    let key_width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let value_width = rows
        .iter()
        .map(|r| r.1.chars().count().min(40))
        .max()
        .unwrap_or(0);
    for (key, value, source) in rows {
        let source = if source == "default" {
            output::paint(output::DIM, &source)
        } else {
            source
        };
        writeln!(out, "{key:key_width$}  {value:value_width$}  {source}")?;
    }
    if !effective.ignored.is_empty() {
        writeln!(
            out,
            "\n{} (`gza trust` shows them and accepts them):",
            output::paint(output::YELLOW, "Set in gza.yaml but ignored until trusted")
        )?;
        for key in &effective.ignored {
            let value = effective
                .sensitive
                .get(key)
                .map(|(v, _)| serde_json::to_string(v).unwrap_or_default())
                .unwrap_or_default();
            writeln!(out, "  {key} = {}", output::one_line(&value, 80))?;
        }
    }
    Ok(())
}
