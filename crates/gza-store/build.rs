// refinery's embed_migrations! reads migrations/ at compile time but cargo does not
// know that, so a newly added migration would otherwise be silently left out.
//
// The newest migration's version is also given to the crate as GZA_LATEST_MIGRATION: every
// open compares the database's version with it, and asking refinery's runner instead compiles
// the regex it parses file names with, a millisecond of every hook (issue 18's budgets).
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    let mut latest = 0u32;
    for entry in std::fs::read_dir("../../migrations").expect("migrations/ is readable") {
        let name = entry.expect("a migrations/ entry").file_name();
        let name = name.to_string_lossy();
        // V<n>__<name>.sql, as refinery reads them.
        if let Some(rest) = name.strip_prefix('V')
            && name.ends_with(".sql")
            && let Some((n, _)) = rest.split_once("__")
            && let Ok(n) = n.parse::<u32>()
        {
            latest = latest.max(n);
        }
    }
    println!("cargo:rustc-env=GZA_LATEST_MIGRATION={latest}");
}
