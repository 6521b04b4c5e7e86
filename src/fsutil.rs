//! Small file-system helpers shared across rooms.

use std::path::Path;

use crate::error::{Error, Result};

/// Write `bytes` to `path` through a `.partial` file and a rename, so a crash never leaves half a file.
/// The partial file's name is this writer's own (process and a counter), so two writers of one
/// path (two validations rewriting expertise.yaml, say) never rename each other's file away.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".partial-{}-{n}", std::process::id()));
    let partial = std::path::PathBuf::from(partial);
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&partial)?;
        f.write_all(bytes)?;
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&partial);
        return Err(Error::io(&partial, "write", e));
    }
    std::fs::rename(&partial, path).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        Error::io(path, "replace", e)
    })
}

/// Append one line to a log file under `.gza/logs/`, creating it, secrets redacted (these logs
/// hold gza's own messages, which may quote an agent or a hook's input, and are always
/// redacted); failures are ignored, since logging must never change what gza does.
pub fn append_log(path: &Path, line: &str) {
    let line = crate::redact::redact(line);
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

/// The error for a failed [`read_regular_file`]: its refusals (not a regular file, too large)
/// say what to do and are the person's to fix ([`Error::Usage`]); an error from the OS is an
/// internal fault ([`Error::Io`]).
pub fn read_refused(path: &Path, e: std::io::Error) -> Error {
    if e.raw_os_error().is_none() && e.kind() == std::io::ErrorKind::Other {
        Error::Usage(format!("cannot read {}: {e}", path.display()))
    } else {
        Error::io(path, "read", e)
    }
}

/// Read a file that a person or an agent may have replaced with something hostile: only a
/// regular file (a symlink to one is followed) of at most `max` bytes. Opened non-blocking, so a
/// FIFO with no writer is refused at once instead of blocking forever; the type is checked on the
/// opened file, so it cannot be swapped in between. NotFound is passed through as such.
pub fn read_regular_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "it is {}, not a regular file; replace it with a regular file or remove it",
            describe_file_type(&meta.file_type())
        )));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!(
            "it is {} bytes, more than the {max} gza reads; shorten it or remove it",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_regular_file`] for a file of the project's that a repository or an agent could have
/// replaced with a symbolic link (`.gza/learnings.md`, a spec): a link is followed only when it
/// leads to a file inside the project `root`; one leading out is refused like a FIFO.
pub fn read_project_file(root: &Path, path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let resolved = crate::confine::inside(root, path).map_err(|outside| {
        std::io::Error::other(format!(
            "it leads outside the project (to {}); gza reads only files inside the project: replace the link with a file",
            outside.resolved.display()
        ))
    })?;
    read_regular_file(&resolved, max)
}

fn describe_file_type(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_file_is_the_persons_to_fix_an_os_failure_is_internal() {
        let dir = tempfile::tempdir().unwrap();
        let refused = read_regular_file(dir.path(), 10).unwrap_err();
        let e = read_refused(dir.path(), refused);
        assert!(e.is_user_error(), "{e}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let eio = std::io::Error::from_raw_os_error(libc::EIO);
        assert!(!read_refused(dir.path(), eio).is_user_error());
    }

    #[test]
    fn two_writers_of_one_path_never_take_each_others_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("expertise.yaml");
        std::thread::scope(|scope| {
            for who in [b'a', b'b'] {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..200 {
                        write_atomically(path, &[who; 4096]).unwrap();
                    }
                });
            }
        });
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "partial files left behind");
        let text = std::fs::read(&path).unwrap();
        assert!(text == [b'a'; 4096] || text == [b'b'; 4096]);
    }
}
