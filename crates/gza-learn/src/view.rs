//! learnings.md as a view of the records: rendering it with each line's id, reading it back,
//! and turning a person's edits into changes to the records.
//!
//! Each item line ends with `<!-- L42 -->` (invisible when the markdown is rendered) and the
//! header names the version gza wrote (`<!-- gza:version 7 -->`). Edits are found by comparing
//! the file with exactly that version, so a crash between recording a version and renaming the
//! file into place is never mistaken for a person's edit.

use std::collections::{HashMap, HashSet};

use gza_core::learning::{Learning, Priority, Status, label};
use gza_store::{FileEdits, LearningEdit};

pub use gza_core::learnings_md::{ParsedView, ViewLine, parse, strip_ids};

/// The ids a file's lines carry, in order, each once.
pub fn ids_in(text: &str) -> Vec<i64> {
    let mut seen = HashSet::new();
    parse(text)
        .lines
        .into_iter()
        .filter_map(|l| l.id)
        .filter(|id| seen.insert(*id))
        .collect()
}

/// Order for the file: validated (tier 2) first, then people's, then by priority, support and
/// recency.
pub fn rank_for_file(items: &mut [Learning], latest_source: &HashMap<i64, gza_core::task::TaskId>) {
    items.sort_by(|a, b| {
        let user = |l: &Learning| l.origin == gza_core::learning::Origin::User;
        let tier = |l: &Learning| l.lifecycle.tier;
        let evidence = |l: &Learning| l.lifecycle.evidence.as_ref().map_or(0, |e| e.count);
        // Validated expertise first, strongest evidence first (seed 002), then people's.
        tier(b)
            .cmp(&tier(a))
            .then(evidence(b).cmp(&evidence(a)))
            .then(user(b).cmp(&user(a)))
            .then(a.priority.cmp(&b.priority))
            .then(b.support.cmp(&a.support))
            .then(latest_source.get(&b.id).cmp(&latest_source.get(&a.id)))
            .then(a.id.cmp(&b.id))
    });
}

/// What to render: the header's facts.
pub struct Header<'a> {
    pub date: &'a str,
    pub window_tasks: usize,
    pub version: i64,
    /// Random per version (see [`header_of`]): what makes the header one a repository cannot
    /// write. Empty: none.
    pub mark: &'a str,
}

/// The file's header: everything up to and including the version marker's line, or `None`
/// when it names no version. A file whose header equals a version's this database holds is
/// the file gza wrote for it (edited below the header, perhaps); the header carries the date
/// and a random mark ([`Header::mark`]), which a repository cannot know, so a committed file
/// (a clone's, a teammate's, another database's) never passes for the person's own.
pub fn header_of(text: &str) -> Option<&str> {
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        end += line.len();
        if gza_core::learnings_md::version(line).is_some() {
            return Some(&text[..end]);
        }
    }
    None
}

/// Whether two headers are the same, byte for byte but for carriage returns (an editor that
/// saves with CRLF endings keeps the file the person's own; the mark is unchanged by it).
pub fn same_header(a: &str, b: &str) -> bool {
    a.bytes()
        .filter(|&c| c != b'\r')
        .eq(b.bytes().filter(|&c| c != b'\r'))
}

/// Whether `header` carries a mark (gza older than the mark wrote none).
pub fn has_mark(header: &str) -> bool {
    header.contains(" · mark ")
}

/// Render the file from ranked items, dropping the weakest until it fits `budget_chars`.
/// People's learnings and CRITICAL ones are never dropped. Returns the text and the ids kept.
pub fn render(
    ranked: &[Learning],
    sections: &[String],
    header: &Header,
    budget_chars: usize,
) -> (String, Vec<i64>) {
    let line = |l: &Learning| format!("- {} <!-- {} -->\n", l.text, label(l.id));
    let keep_always = |l: &Learning| {
        l.origin == gza_core::learning::Origin::User || l.priority == Priority::Critical
    };
    let mark = if header.mark.is_empty() {
        String::new()
    } else {
        format!(" · mark {}", header.mark)
    };
    let head = format!(
        "# Project Learnings\n\nLast updated: {} (from {} recent tasks)\n<!-- gza:version {}{mark} · the L-ids map lines to learnings; edit, move or delete lines freely -->\n",
        header.date, header.window_tasks, header.version
    );
    let mut used = head.len();
    let mut seen_sections: HashSet<&str> = HashSet::new();
    let section_cost = |s: &str| s.len() + 5;
    let mut keep = vec![false; ranked.len()];
    // Seed 002's caps: at most TIER2_CAP validated and TIER1_CAP other learnings besides those
    // that always stay.
    let mut taken = [0usize; 2];
    // Those that always stay are counted first; the rest fill what is left, strongest first.
    for pass in [true, false] {
        for (i, l) in ranked.iter().enumerate() {
            if keep_always(l) != pass {
                continue;
            }
            let mut cost = line(l).len();
            if !seen_sections.contains(l.section.as_str()) {
                cost += section_cost(&l.section);
            }
            let tier = usize::from(l.lifecycle.tier == 2);
            let cap = [gza_core::learning::TIER1_CAP, gza_core::learning::TIER2_CAP][tier];
            if !pass && taken[tier] >= cap {
                continue;
            }
            if pass || used + cost <= budget_chars {
                if !pass {
                    taken[tier] += 1;
                }
                used += cost;
                seen_sections.insert(&l.section);
                keep[i] = true;
            }
        }
    }
    let mut order: Vec<&str> = sections.iter().map(String::as_str).collect();
    for l in ranked {
        if !order.contains(&l.section.as_str()) {
            order.push(&l.section);
        }
    }
    let mut out = head;
    let mut ids = Vec::new();
    for section in order {
        let mut first = true;
        for (i, l) in ranked.iter().enumerate() {
            if !keep[i] || l.section != section {
                continue;
            }
            if first {
                out.push_str(&format!("\n## {section}\n"));
                first = false;
            }
            out.push_str(&line(l));
            ids.push(l.id);
        }
    }
    (out, ids)
}

/// The edits a person made: `file` as it is now, `base` the version gza wrote that it started
/// from (None: nothing to compare with, so nothing counts as deleted), `records` every stored
/// learning by id. Three-way: a line counts as edited only where it differs from `base`, so a
/// change made with `gza learnings edit` after the file was written is not undone.
pub fn diff(
    file: &ParsedView,
    base: Option<&ParsedView>,
    records: &HashMap<i64, Learning>,
    clean: impl Fn(&str) -> Option<String>,
    section_for: impl Fn(&str) -> String,
) -> FileEdits {
    let mut base_by_id: HashMap<i64, &ViewLine> = HashMap::new();
    if let Some(base) = base {
        for l in &base.lines {
            // A version written before ids existed maps its lines to records by text.
            let id =
                l.id.or_else(|| records.values().find(|r| r.text == l.text).map(|r| r.id));
            if let Some(id) = id {
                base_by_id.entry(id).or_insert(l);
            }
        }
    }
    let by_text: HashMap<&str, i64> = {
        let mut m = HashMap::new();
        // Active records win over archived ones with the same text.
        for r in records.values().filter(|r| r.status == Status::Archived) {
            m.insert(r.text.as_str(), r.id);
        }
        for r in records.values().filter(|r| r.status == Status::Active) {
            m.insert(r.text.as_str(), r.id);
        }
        m
    };

    let mut edits = FileEdits::default();
    let mut claimed: HashSet<i64> = HashSet::new();
    let mut added_texts: HashSet<String> = HashSet::new();
    for line in &file.lines {
        let by_id = line
            .id
            .filter(|id| records.contains_key(id) && !claimed.contains(id));
        let mapped = by_id.or_else(|| {
            by_text
                .get(line.text.as_str())
                .copied()
                .filter(|id| !claimed.contains(id))
        });
        let Some(id) = mapped else {
            // A line gza never wrote, or an id that names nothing: a person's new learning.
            if let Some(text) = clean(&line.text)
                && !by_text.contains_key(text.as_str())
                && added_texts.insert(text.clone())
            {
                edits.added.push((section_for(&line.section), text));
            }
            continue;
        };
        claimed.insert(id);
        let record = &records[&id];
        let was = base_by_id.get(&id);
        let mut edit = LearningEdit::default();
        let base_text = was.map(|w| w.text.as_str()).unwrap_or(record.text.as_str());
        if line.text != base_text
            && line.text != record.text
            && let Some(text) = clean(&line.text)
        {
            edit.text = Some(text);
        }
        let section = section_for(&line.section);
        let base_section = was
            .map(|w| section_for(&w.section))
            .unwrap_or_else(|| record.section.clone());
        if section != base_section && section != record.section {
            edit.section = Some(section);
        }
        if edit.text.is_some() || edit.section.is_some() {
            edits.edited.push((id, edit));
        }
        // Archived after the file was written (it was in the base): stays archived. Absent from
        // the base: a person put it back.
        if record.status == Status::Archived && was.is_none() {
            edits.restored.push(id);
        }
    }
    for (&id, _) in base_by_id.iter() {
        if !claimed.contains(&id) && records.get(&id).is_some_and(|r| r.status == Status::Active) {
            edits.deleted.push(id);
        }
    }
    edits.deleted.sort_unstable();
    edits
}

/// The new lines of a file gza did not write for this database (a cloned repository's,
/// another person's or another database's; see [`FileEdits::foreign`]), and how many of its
/// lines name a learning of this database with another text or section (not taken in).
///
/// Its ids are another database's (or made up), so a line is matched by its text alone: a
/// line whose text a record has (whatever its status: an archived one is not put back) is that
/// record, unchanged; any other clean line is new. Nothing is edited, moved, archived or
/// restored: a line missing from it is not a deletion, and a line under a known id with other
/// text is a new line, never a rewrite of that learning.
pub fn foreign_lines(
    file: &ParsedView,
    records: &HashMap<i64, Learning>,
    clean: impl Fn(&str) -> Option<String>,
    section_for: impl Fn(&str) -> String,
) -> (FileEdits, usize) {
    let known: HashSet<&str> = records.values().map(|r| r.text.as_str()).collect();
    let mut edits = FileEdits {
        foreign: Some(String::new()),
        ..FileEdits::default()
    };
    let mut refused = 0;
    let mut added_texts: HashSet<String> = HashSet::new();
    for line in &file.lines {
        let section = section_for(&line.section);
        if let Some(r) = line.id.and_then(|id| records.get(&id))
            && (r.text != line.text || r.section != section)
        {
            refused += 1;
        }
        if known.contains(line.text.as_str()) {
            continue;
        }
        if let Some(text) = clean(&line.text)
            && !known.contains(text.as_str())
            && added_texts.insert(text.clone())
        {
            edits.added.push((section, text));
        }
    }
    (edits, refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gza_core::learning::Origin;

    fn record(id: i64, section: &str, text: &str) -> Learning {
        Learning {
            id,
            section: section.into(),
            text: text.into(),
            insight: None,
            example: None,
            keywords: vec![],
            applies_when: vec![],
            kind: "learning".into(),
            triggers: Default::default(),
            checklist: vec![],
            confidence: 0.7,
            priority: Priority::Medium,
            status: Status::Active,
            status_reason: None,
            status_changed_at: None,
            origin: Origin::Llm,
            created_at: String::new(),
            updated_at: String::new(),
            confirmed_at: String::new(),
            support: 1,
            injected: 0,
            lifecycle: Default::default(),
        }
    }

    fn sections() -> Vec<String> {
        gza_core::config::DEFAULT_SECTIONS
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn records(list: &[Learning]) -> HashMap<i64, Learning> {
        list.iter().map(|l| (l.id, l.clone())).collect()
    }

    fn diff_of(file: &str, base: &str, recs: &[Learning]) -> FileEdits {
        diff(
            &parse(file),
            Some(&parse(base)),
            &records(recs),
            |t| Some(t.to_string()),
            |s| s.to_string(),
        )
    }

    #[test]
    fn renders_and_parses_back_with_ids() {
        let recs = vec![
            record(1, "Testing Patterns", "Run make test"),
            record(2, "Code Style", "Handlers live in api/"),
        ];
        let header = Header {
            date: "2026-11-22",
            window_tasks: 5,
            version: 9,
            mark: "00ff",
        };
        let (text, ids) = render(&recs, &sections(), &header, 10_000);
        assert_eq!(ids, vec![1, 2]);
        assert!(text.starts_with(
            "# Project Learnings\n\nLast updated: 2026-11-22 (from 5 recent tasks)\n"
        ));
        let view = parse(&text);
        assert_eq!(view.version, Some(9));
        assert_eq!(
            view.lines,
            vec![
                ViewLine {
                    section: "Testing Patterns".into(),
                    text: "Run make test".into(),
                    id: Some(1)
                },
                ViewLine {
                    section: "Code Style".into(),
                    text: "Handlers live in api/".into(),
                    id: Some(2)
                }
            ]
        );
        assert!(!strip_ids(&text).contains("<!--"));
        assert!(strip_ids(&text).contains("- Run make test\n"));
    }

    #[test]
    fn the_budget_drops_the_weakest_but_never_a_persons_line() {
        let mut recs: Vec<Learning> = (1..=40)
            .map(|i| {
                record(
                    i,
                    "General",
                    &format!("learning number {i} with some words"),
                )
            })
            .collect();
        recs[39].origin = Origin::User;
        let header = Header {
            date: "d",
            window_tasks: 1,
            version: 1,
            mark: "",
        };
        let (text, ids) = render(&recs, &sections(), &header, 400);
        assert!(ids.contains(&40));
        assert!(ids.len() < 40 && ids.len() > 1);
        assert!(ids.contains(&1), "the strongest stays");
        assert!(text.len() <= 450, "{}", text.len());
    }

    #[test]
    fn edits_deletions_moves_and_additions_are_found() {
        let recs = vec![
            record(1, "Testing Patterns", "Run make test"),
            record(2, "Code Style", "Handlers live in api/"),
            record(3, "General", "Deploys go through staging"),
        ];
        let base = "## Testing Patterns\n- Run make test <!-- L1 -->\n## Code Style\n- Handlers live in api/ <!-- L2 -->\n## General\n- Deploys go through staging <!-- L3 -->\n";
        let file = "## Testing Patterns\n- Run make test -q <!-- L1 -->\n- Always run the linter\n## Common Pitfalls\n- Handlers live in api/ <!-- L2 -->\n";
        let e = diff_of(file, base, &recs);
        assert_eq!(e.deleted, vec![3]);
        assert_eq!(
            e.added,
            vec![("Testing Patterns".into(), "Always run the linter".into())]
        );
        assert_eq!(e.edited.len(), 2);
        assert_eq!(e.edited[0].1.text.as_deref(), Some("Run make test -q"));
        assert_eq!(e.edited[1].1.section.as_deref(), Some("Common Pitfalls"));
    }

    #[test]
    fn an_unchanged_file_is_no_edit_even_after_a_cli_edit() {
        let mut recs = vec![record(1, "General", "Run make test")];
        let base = "## General\n- Run make test <!-- L1 -->\n";
        recs[0].text = "Run make test -q".into();
        assert!(diff_of(base, base, &recs).is_empty());
    }

    #[test]
    fn duplicated_unknown_and_moved_ids_are_handled() {
        let recs = vec![record(1, "General", "Run make test")];
        let base = "## General\n- Run make test <!-- L1 -->\n";
        // The same id on two lines: the first keeps it, the second is a new learning.
        let file = "## General\n- Run make test <!-- L1 -->\n- Use uv for Python <!-- L1 -->\n- Ghost line <!-- L999 -->\n";
        let e = diff_of(file, base, &recs);
        assert!(e.deleted.is_empty());
        assert_eq!(
            e.added,
            vec![
                ("General".into(), "Use uv for Python".into()),
                ("General".into(), "Ghost line".into())
            ]
        );
    }

    #[test]
    fn a_file_without_ids_is_imported() {
        let recs = vec![record(1, "General", "Run make test")];
        let file = "# Project Learnings\n\n## General\n- Run make test\r\n* Written by hand\n";
        let e = diff(
            &parse(file),
            None,
            &records(&recs),
            |t| Some(t.to_string()),
            |s| s.to_string(),
        );
        assert!(e.deleted.is_empty() && e.edited.is_empty());
        assert_eq!(e.added, vec![("General".into(), "Written by hand".into())]);
    }

    #[test]
    fn a_base_without_ids_still_finds_deletions_by_text() {
        let recs = vec![
            record(1, "General", "Run make test"),
            record(2, "General", "Keep it short"),
        ];
        let base = "## General\n- Run make test\n- Keep it short\n";
        let file = "## General\n- Run make test\n";
        assert_eq!(diff_of(file, base, &recs).deleted, vec![2]);
    }

    #[test]
    fn an_archived_line_put_back_is_restored_but_not_one_archived_since() {
        let mut recs = vec![
            record(1, "General", "Run make test"),
            record(2, "General", "Keep it short"),
        ];
        recs[0].status = Status::Archived;
        recs[1].status = Status::Archived;
        let base = "## General\n- Keep it short <!-- L2 -->\n";
        let file = "## General\n- Keep it short <!-- L2 -->\n- Run make test <!-- L1 -->\n";
        let e = diff_of(file, base, &recs);
        assert_eq!(e.restored, vec![1]);
    }

    #[test]
    fn the_header_ends_at_the_marker_and_carries_the_mark() {
        let recs = vec![record(1, "General", "Run make test")];
        let header = Header {
            date: "2026-11-22",
            window_tasks: 5,
            version: 9,
            mark: "00ff",
        };
        let (text, _) = render(&recs, &sections(), &header, 10_000);
        let head = header_of(&text).unwrap();
        assert!(head.ends_with("-->\n") && head.contains("gza:version 9 · mark 00ff ·"));
        assert!(has_mark(head));
        assert!(same_header(head, &head.replace('\n', "\r\n")));
        assert!(!same_header(head, &head.replace("00ff", "00fe")));
        assert!(text[head.len()..].starts_with("\n## General\n"));
        assert_eq!(header_of("## General\n- x y\n"), None);
        let unmarked = Header { mark: "", ..header };
        let (old, _) = render(&recs, &sections(), &unmarked, 10_000);
        assert!(!has_mark(header_of(&old).unwrap()));
    }

    #[test]
    fn a_foreign_file_only_adds_and_never_changes_a_known_learning() {
        let mut recs = vec![
            record(1, "Testing Patterns", "Run make test"),
            record(2, "Code Style", "Handlers live in api/"),
            record(3, "General", "Old advice"),
        ];
        recs[2].status = Status::Archived;
        // L1 rewritten, L2 missing, L3 put back, a line moved under a known text, new lines.
        let file = "## Testing Patterns\n- Skip the tests <!-- L1 -->\n- Old advice <!-- L3 -->\n\
                    ## General\n- Run make test\n- Brand new advice here <!-- L77 -->\n";
        let (e, refused) = foreign_lines(
            &parse(file),
            &records(&recs),
            |t| Some(t.to_string()),
            |s| s.to_string(),
        );
        assert!(e.foreign.is_some());
        assert!(e.edited.is_empty() && e.deleted.is_empty() && e.restored.is_empty());
        assert_eq!(
            e.added,
            vec![
                ("Testing Patterns".into(), "Skip the tests".into()),
                ("General".into(), "Brand new advice here".into())
            ]
        );
        // L1 with other text, L3 in another section.
        assert_eq!(refused, 2);
    }
}
