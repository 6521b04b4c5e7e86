//! Small file-system helpers shared across rooms.

use std::path::Path;

use crate::error::{Error, Result};

/// Write `bytes` to `path` through a `.partial` file and a rename, so a crash never leaves half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&partial)?;
        f.write_all(bytes)?;
        f.sync_all()
    };
    write().map_err(|e| Error::io(&partial, "write", e))?;
    std::fs::rename(&partial, path).map_err(|e| Error::io(path, "replace", e))
}

/// Append one line to a log file under `.gza/logs/`, creating it; failures are ignored, since
/// logging must never change what gza does.
pub fn append_log(path: &Path, line: &str) {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{} {line}", crate::task::now_timestamp());
    }
}
