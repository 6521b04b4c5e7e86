// refinery's embed_migrations! reads migrations/ (SQLite's) and migrations-postgres/ at compile
// time but cargo does not know that, so a newly added migration would otherwise be silently
// left out.
//
// The newest migration's version of each folder is also given to the crate
// (GZA_LATEST_MIGRATION, GZA_LATEST_PG_MIGRATION): every open compares the database's version
// with it, and asking refinery's runner instead compiles the regex it parses file names with, a
// millisecond of every hook (issue 18's budgets).
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    println!("cargo:rerun-if-changed=../../migrations-postgres");
    println!(
        "cargo:rustc-env=GZA_LATEST_MIGRATION={}",
        latest("../../migrations")
    );
    println!(
        "cargo:rustc-env=GZA_LATEST_PG_MIGRATION={}",
        latest("../../migrations-postgres")
    );
}

/// The highest version among a folder's `V<n>__<name>.sql` files, as refinery reads them.
fn latest(folder: &str) -> u32 {
    let mut latest = 0u32;
    for entry in std::fs::read_dir(folder).unwrap_or_else(|e| panic!("{folder} is readable: {e}")) {
        let name = entry.expect("a migrations entry").file_name();
        let name = name.to_string_lossy();
        if let Some(rest) = name.strip_prefix('V')
            && name.ends_with(".sql")
            && let Some((n, _)) = rest.split_once("__")
            && let Ok(n) = n.parse::<u32>()
        {
            latest = latest.max(n);
        }
    }
    latest
}
