//! expertise.yaml (seed 002): validated (tier 2) learnings exported in seed 002's schema, and
//! read back without duplicates.
//!
//! Reading is safe YAML only: the file is at most [`MAX_BYTES`], and anchors, aliases and tags
//! are refused before the parser sees the text, so nothing can expand into a bomb or name a
//! type.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use gza_core::error::{Error, Result};
use gza_core::learning::{NewLearning, Origin};
use gza_core::project::Project;
use gza_store::Store;

/// The largest expertise file gza reads.
pub const MAX_BYTES: u64 = 1024 * 1024;

const VERSION: &str = "0.2.0";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpertiseFile {
    pub version: String,
    #[serde(default)]
    pub patterns: Vec<Pattern>,
    #[serde(default)]
    pub evolution_log: Vec<LogEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Pattern {
    pub pattern: String,
    /// `high` or `medium`.
    pub confidence: String,
    #[serde(default)]
    pub occurrences: usize,
    /// The evidence files, comma-separated.
    #[serde(default)]
    pub evidence: String,
    #[serde(default)]
    pub learned_from: String,
    #[serde(default)]
    pub promoted_at: String,
    /// The learnings.md section it belongs in (gza's own addition to seed 002's schema, left
    /// out when empty; a file without it imports into the first configured section).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub section: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct LogEntry {
    pub date: String,
    pub change: String,
    #[serde(default)]
    pub patterns_added: i64,
}

/// The configured export path, under the project root (confined to it when an untrusted
/// gza.yaml sets it).
pub fn default_path(project: &Project) -> Result<PathBuf> {
    let configured = &project.config.learnings.expertise_path;
    let mut path = project.setting_path("learnings.expertise_path", configured)?;
    // Nobody chose the default place: it must stay in the project once links are followed, or
    // a link the repository committed on the way (`.claude -> ~/.claude`) would send the export
    // out of it. A path someone set (their own layers, or the repository's once trusted) is
    // theirs, links included.
    if *configured == gza_core::config::LearningsConfig::default().expertise_path {
        path = gza_core::confine::inside_or_error(
            &project.root,
            configured,
            "learnings.expertise_path",
            &project.root.join(gza_core::project::CONFIG_FILE),
            "That is the default path, and a link in the project leads out of it: gza does not \
             follow links out of the project. Remove the link, or set learnings.expertise_path \
             in gza.local.yaml to where the export should go.",
        )?;
    }
    // The setting may come from the repository's file: inside the project it needs no trust,
    // so it must not name a file of git's or of gza's own (`.git/config`, `.gza/gza.db`).
    // Judged where it really leads (a link inside the project may lead into .git).
    let root = std::fs::canonicalize(&project.root).unwrap_or_else(|_| project.root.clone());
    let real = gza_core::confine::inside(&project.root, &path).unwrap_or_else(|_| path.clone());
    let relative = real
        .strip_prefix(&root)
        .or_else(|_| path.strip_prefix(&project.root))
        .unwrap_or(&path);
    if relative
        .components()
        .any(|c| matches!(c.as_os_str().to_str(), Some(".git" | ".gza")))
    {
        return Err(Error::Usage(format!(
            "learnings.expertise_path ({}) is inside .git or .gza, where gza never writes an export: name a file elsewhere in the project",
            relative.display()
        )));
    }
    Ok(path)
}

/// Refuse to replace a file at the configured path that is not an expertise file: the path
/// may be the repository's choice, and whatever it names (a script, a config) must not be
/// overwritten by an export nobody asked for by name.
fn replaceable(path: &Path) -> Result<()> {
    let bytes = match gza_core::fsutil::read_regular_file(path, 16 * 1024 * 1024) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(gza_core::fsutil::read_refused(path, e)),
    };
    let text = String::from_utf8_lossy(&bytes);
    let ours = unsafe_construct(&text).is_none()
        && gza_core::yaml::from_str::<ExpertiseFile>(&text).is_ok_and(|f| !f.version.is_empty());
    if ours {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "{} is not an expertise file, so the export would replace it: move it aside, or set learnings.expertise_path to another file",
            path.display()
        )))
    }
}

/// Write every tier 2 learning in use to `path` (default: `learnings.expertise_path`); returns
/// the path written.
pub fn export(project: &Project, store: &Store, path: Option<&Path>) -> Result<String> {
    let path = match path {
        Some(path) => path.to_path_buf(),
        None if project
            .config
            .learnings
            .expertise_path
            .as_os_str()
            .is_empty() =>
        {
            return Err(gza_core::error::Error::Usage(
                "learnings.expertise_path is empty (no automatic export); name a file: `gza learnings export PATH`".into(),
            ));
        }
        None => {
            let path = default_path(project)?;
            replaceable(&path)?;
            path
        }
    };
    let patterns = store
        .tier2_learnings()?
        .into_iter()
        .map(|l| {
            let ev = l.lifecycle.evidence.clone().unwrap_or_default();
            Pattern {
                pattern: l.text,
                confidence: l.lifecycle.tier_level.unwrap_or_else(|| "medium".into()),
                occurrences: ev.count,
                evidence: ev.files.join(", "),
                learned_from: format!("gza {}", gza_core::learning::label(l.id)),
                promoted_at: l.lifecycle.validated_at.unwrap_or_default(),
                section: l.section,
            }
        })
        .collect();
    let evolution_log = store
        .evolution_log()?
        .into_iter()
        .map(|e| LogEntry {
            date: e.at.chars().take(10).collect(),
            change: format!(
                "{} {}{}: {}",
                gza_core::learning::label(e.id),
                e.event,
                e.detail.map(|d| format!(" ({d})")).unwrap_or_default(),
                e.text
            ),
            patterns_added: i64::from(e.event == "tier 2" || e.event == "imported"),
        })
        .collect();
    let file = ExpertiseFile {
        version: VERSION.into(),
        patterns,
        evolution_log,
    };
    let text = serde_norway::to_string(&file)
        .map_err(|e| Error::Usage(format!("cannot write expertise YAML: {e}")))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create directory", e))?;
    }
    gza_core::fsutil::write_atomically(&path, text.as_bytes())?;
    Ok(path.to_string_lossy().into_owned())
}

/// Where the text uses an anchor (`&a`), an alias (`*a`) or a tag (`!t`, `!!t`): the line.
fn unsafe_construct(text: &str) -> Option<usize> {
    for (n, line) in text.lines().enumerate() {
        let mut quote: Option<char> = None;
        // The last character that was not a space: a node starts after `:`, `-`, `[`, `{`, `,`
        // or at the start of a line.
        let mut last: Option<char> = None;
        let mut prev = ' ';
        let chars: Vec<char> = line.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if let Some(q) = quote {
                if c == q {
                    quote = None;
                }
                prev = c;
                last = Some(c);
                continue;
            }
            let node_start = (prev.is_whitespace() || "[{,".contains(prev))
                && last.is_none_or(|l| ":-[{,".contains(l));
            if c == '#' && prev.is_whitespace() {
                break;
            }
            if (c == '"' || c == '\'') && node_start {
                quote = Some(c);
            } else if matches!(c, '&' | '*' | '!')
                && node_start
                && chars.get(i + 1).is_some_and(|n| !n.is_whitespace())
            {
                return Some(n + 1);
            }
            prev = c;
            if !c.is_whitespace() {
                last = Some(c);
            }
        }
    }
    None
}

/// Read an expertise file, refusing anything but plain safe YAML.
pub fn read(path: &Path) -> Result<ExpertiseFile> {
    let shown = path.display();
    // Checked on the opened file, so a FIFO swapped in after a look at the path cannot block.
    let text =
        gza_core::fsutil::read_named_text(path, &format!("expertise file {shown}"), MAX_BYTES)?;
    if let Some(line) = unsafe_construct(&text) {
        return Err(Error::Usage(format!(
            "{shown}:{line}: YAML anchors, aliases and tags are not read; quote the value or write it out"
        )));
    }
    let file: ExpertiseFile = gza_core::yaml::from_str(&text).map_err(|e| {
        let at = e
            .location
            .map(|(line, _)| format!(":{line}"))
            .unwrap_or_default();
        let message = e.message;
        Error::Usage(format!(
            "{shown}{at}: not an expertise file ({message}); expected version, patterns, evolution_log"
        ))
    })?;
    Ok(file)
}

/// What an import did.
#[derive(Debug, Default)]
pub struct Imported {
    /// Each learning added: its id, its text and the tier the project's own code earned it.
    pub added: Vec<(i64, String, u8)>,
    pub skipped: usize,
}

/// A field of an imported file as it may be stored: secrets redacted, one line, bounded.
fn clean_field(text: &str, max: usize) -> String {
    let clean = gza_core::redact::one_clean_line(&gza_core::redact::redact_secrets(text));
    gza_core::text::head(&clean, max).to_string()
}

/// What a pattern says about itself (confidence, occurrences, evidence, origin), recorded as a
/// claim in the learning's history; none of it is believed.
fn claim(p: &Pattern) -> String {
    let mut parts = vec![format!(
        "claimed confidence {}",
        clean_field(p.confidence.trim(), 20)
    )];
    if p.occurrences > 0 {
        parts.push(format!("{} occurrences", p.occurrences));
    }
    let evidence = clean_field(&p.evidence, 300);
    if !evidence.is_empty() {
        parts.push(format!("evidence {evidence}"));
    }
    let from = clean_field(&p.learned_from, 80);
    if !from.is_empty() {
        parts.push(format!("learned from {from}"));
    }
    let at = clean_field(&p.promoted_at, 40);
    if !at.is_empty() {
        parts.push(format!("promoted {at}"));
    }
    parts.join(", ")
}

/// Read `path` and store each pattern not already known. Every field is redacted; what the
/// file claims (confidence, occurrences, evidence files) is recorded as a claim, and the tier
/// comes only from the evidence gza finds in this project's tree (seed 002's validation, run on
/// the imported learnings at once). Text that reads like an instruction to the agent is held
/// by the quarantine like any other.
pub fn import(project: &Project, store: &Store, path: &Path) -> Result<Imported> {
    let file = read(path)?;
    let sections = &project.config.learnings.sections;
    let mut result = Imported::default();
    let shown = clean_field(&path.display().to_string(), 200);
    for p in &file.patterns {
        let Some(text) = crate::items::clean_person_item(&p.pattern) else {
            result.skipped += 1;
            continue;
        };
        // Its section, when the file names one this project has; else the first.
        let section = crate::items::section_named(&clean_field(&p.section, 100), sections);
        let learning = NewLearning::new(&section, &text, Origin::User);
        let source = format!("from {shown}; {}", claim(p));
        match store.import_learning(&learning, None, &source)? {
            Some(id) => result.added.push((id, text, 1)),
            None => result.skipped += 1,
        }
    }
    if !result.added.is_empty() {
        let ids: Vec<i64> = result.added.iter().map(|(id, _, _)| *id).collect();
        let report = super::validate::search(project, store, Some(&ids), true)?;
        for (id, _, tier) in &mut result.added {
            let label = gza_core::learning::label(*id);
            if let Some(c) = report.checked.iter().find(|c| c.id == label) {
                *tier = c.tier;
            }
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_aliases_and_tags_are_found_outside_quotes() {
        assert_eq!(unsafe_construct("a: &x [1]\nb: *x\n"), Some(1));
        assert_eq!(unsafe_construct("a: 1\nb: !!python/object x\n"), Some(2));
        assert_eq!(unsafe_construct("- pattern: \"use *args & !x\"\n"), None);
        assert_eq!(unsafe_construct("pattern: rock & roll # &c\n"), None);
        assert_eq!(unsafe_construct("pattern: 'Never run rm -rf *'\n"), None);
        assert_eq!(unsafe_construct("pattern: Don't use *args\n"), None);
        assert_eq!(unsafe_construct("- &a\n"), Some(1));
        assert_eq!(unsafe_construct("x: [*a, *a]\n"), Some(1));
    }
}
