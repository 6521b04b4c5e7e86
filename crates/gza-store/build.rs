// refinery's embed_migrations! reads migrations/ (SQLite's) and migrations-postgres/ at compile
// time but cargo does not know that, so a newly added migration would otherwise be silently
// left out.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    println!("cargo:rerun-if-changed=../../migrations-postgres");
}
