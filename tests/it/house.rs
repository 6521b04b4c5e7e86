//! The house: the workspace's crates are its rooms and their dependencies are the layering
//! (data flows one way: cli → runner / learn / hooks → store → core), which the compiler
//! enforces. This test pins the graph, so that a new dependency between rooms is a decision
//! made here, not an accident of an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each crate of the workspace and the gza crates it depends on (normal dependencies).
fn crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut manifests = vec![root.join("Cargo.toml")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        manifests.push(entry.unwrap().path().join("Cargo.toml"));
    }
    manifests
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let manifest: toml::Table = text.parse().unwrap();
            let name = manifest["package"]["name"].as_str().unwrap().to_string();
            let deps = manifest
                .get("dependencies")
                .and_then(toml::Value::as_table)
                .map(|deps| {
                    deps.keys()
                        .filter(|k| k.starts_with("gza-"))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            (name, deps)
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_layering() {
    let graph = crate_graph();
    let want: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("gza-core", &[][..]),
        ("gza-embed", &[][..]),
        ("gza-store", &["gza-core"][..]),
        ("gza-llm", &["gza-core"][..]),
        (
            "gza-learn",
            &["gza-core", "gza-embed", "gza-llm", "gza-store"][..],
        ),
        ("gza-runner", &["gza-core", "gza-store"][..]),
        (
            "gza-hooks",
            &["gza-core", "gza-embed", "gza-learn", "gza-llm", "gza-store"][..],
        ),
        (
            "gza-mcp",
            &["gza-core", "gza-hooks", "gza-learn", "gza-store"][..],
        ),
        (
            "gza",
            &[
                "gza-core",
                "gza-embed",
                "gza-hooks",
                "gza-learn",
                "gza-llm",
                "gza-mcp",
                "gza-runner",
                "gza-store",
            ][..],
        ),
    ]);
    let got: BTreeMap<&str, Vec<&str>> = graph
        .iter()
        .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
        .collect();
    let want: BTreeMap<&str, Vec<&str>> = want.into_iter().map(|(k, v)| (k, v.to_vec())).collect();
    assert_eq!(got, want);
    // The rules the graph keeps: the runner never reaches learnings (it gets them through the
    // Teacher trait), learnings never reach the runner, the store and core reach nothing above.
    assert!(!graph["gza-runner"].contains("gza-learn"));
    assert!(!graph["gza-learn"].contains("gza-runner"));
    assert!(!graph["gza-store"].iter().any(|d| d != "gza-core"));
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

/// Every `GZA_*` variable the code reads is one `gza` knows (a setting's own, or in
/// `settings::OTHER_ENV`), so that setting it never draws the warning meant for a misspelling.
#[test]
fn every_variable_gza_reads_is_one_it_does_not_warn_about() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read =
        regex::Regex::new(r#"(?:env::var|env::var_os|var_os|var)\(\s*"(GZA_[A-Z0-9_]+)""#).unwrap();
    let mut dirs = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        dirs.push(entry.unwrap().path().join("src"));
    }
    let mut found = BTreeSet::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for c in read.captures_iter(&text) {
                    found.insert((c[1].to_string(), path.display().to_string()));
                }
            }
        }
    }
    assert!(found.len() >= 5, "the scan found too little: {found:?}");
    let unknown: Vec<_> = found
        .into_iter()
        .filter(|(var, _)| {
            let notices = gza::settings::unknown_env_notices(std::iter::once(var.clone()), &[]);
            !notices.is_empty()
        })
        .collect();
    assert!(unknown.is_empty(), "read but warned about: {unknown:?}");
}
