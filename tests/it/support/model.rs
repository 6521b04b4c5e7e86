//! The sentence-embedding model the ranker tests need.

use std::path::PathBuf;

/// The model folder: `$GZA_MODEL_DIR`, else where `scripts/fetch-model` installs it. A missing
/// model fails the test (it never passes without ranking by meaning): run scripts/fetch-model.
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("GZA_MODEL_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            let data = std::env::var_os("XDG_DATA_HOME")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share"))
                })?;
            Some(data.join("gza/models/all-MiniLM-L6-v2"))
        })
        .expect("HOME or GZA_MODEL_DIR is set");
    assert!(
        dir.join("model.safetensors").is_file(),
        "the embedding model is not at {}; run scripts/fetch-model (scripts/test does)",
        dir.display()
    );
    dir
}
