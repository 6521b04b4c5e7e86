//! The house has no circles: no room (a top-level module of `src/`) reaches itself through the
//! `crate::` paths its code uses. Test code is left out (`#[cfg(test)]` onwards).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn rooms() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let room = first.trim_end_matches(".rs").to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            let deps = graph.entry(room.clone()).or_default();
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let names: Vec<&str> = if let Some(list) = rest.strip_prefix('{') {
                    let list = &list[..list.find('}').unwrap_or(list.len())];
                    list.split(',')
                        .filter_map(|p| p.split("::").next())
                        .map(str::trim)
                        .collect()
                } else {
                    vec![
                        rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .next()
                            .unwrap(),
                    ]
                };
                for name in names {
                    if !name.is_empty()
                        && name != room
                        && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    {
                        deps.insert(name.to_string());
                    }
                }
            }
        }
    }
    graph
}

fn path_between(
    graph: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    to: &str,
) -> Option<Vec<String>> {
    let mut queue = std::collections::VecDeque::from([vec![from.to_string()]]);
    let mut seen = BTreeSet::new();
    while let Some(path) = queue.pop_front() {
        let last = path.last().unwrap();
        for next in graph.get(last).into_iter().flatten() {
            if next == to {
                let mut found = path.clone();
                found.push(next.clone());
                return Some(found);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                queue.push_back(longer);
            }
        }
    }
    None
}

#[test]
fn no_room_reaches_itself() {
    let graph = rooms();
    assert!(
        graph.contains_key("runner") && graph.contains_key("learn"),
        "{graph:?}"
    );
    let circles: Vec<String> = graph
        .keys()
        .filter_map(|room| path_between(&graph, room, room))
        .map(|p| p.join(" → "))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn leaf_rooms_import_no_other_room() {
    let graph = rooms();
    let leaves = BTreeSet::from([
        "error", "process", "text", "wire", "redact", "task", "git", "confine",
    ]);
    // fsutil (file helpers) and confine (paths inside the project) are leaves too, and git
    // reads its worktrees' `.git` files through fsutil.
    let helpers = ["error", "fsutil", "confine"];
    for leaf in &leaves {
        let deps: Vec<&String> = graph[*leaf]
            .iter()
            .filter(|d| !helpers.contains(&d.as_str()))
            .collect();
        assert!(deps.is_empty(), "{leaf} imports {deps:?}");
    }
    for room in ["runner", "llm"] {
        if let Some(deps) = graph.get(room) {
            assert!(!deps.contains("learn"), "{room} imports learn");
        }
    }
    assert!(!graph["llm"].contains("runner"), "llm imports runner");
}

/// Every file in tests/it/ is a module of the test binary: one left out of main.rs would never
/// be compiled, and its tests would silently not run.
#[test]
fn every_test_file_is_compiled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let declared: BTreeSet<String> = main
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let is_module = path.extension().is_some_and(|e| e == "rs") || path.join("mod.rs").exists();
        if is_module && name != "main" && !declared.contains(&name) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "not in tests/it/main.rs: {missing:?}");
}
