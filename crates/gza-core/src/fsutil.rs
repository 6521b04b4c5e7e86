//! Small file-system helpers shared across rooms.
//!
//! Every file gza opens on a hook's path or in `gza work` goes through [`open_regular`] (or a
//! helper built on it): opened with `O_NONBLOCK`, so a FIFO, socket or device put in a file's
//! place is refused at once instead of blocking forever, and checked to be a regular file on the
//! opened descriptor, so it cannot be swapped in between.

use std::path::Path;

use crate::error::{Error, Result};

/// gza's folder in the person's cache: `$XDG_CACHE_HOME/gza`, else `~/.cache/gza`; `None`
/// without either. What gza keeps there is the person's own (never the project's): settings'
/// parsed values, what validation found in the tree.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .map(|c| c.join("gza"))
}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// crash never leaves half a file. The temporary file gets a fresh random name, created with
/// `O_EXCL` (never opening whatever was planted there: a FIFO, a symlink), so two writers of
/// one path (two validations rewriting expertise.yaml, say) never rename each other's file away.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replacing(path, bytes, true)
}

/// [`write_atomically`], with `sync` saying whether the data reaches the disk before the rename
/// (a spool a hook writes within its budget is not synced: a crash may lose it, never tear it).
pub fn write_replacing(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    // A directory where the file goes cannot be renamed over (a FIFO or a device can, and is):
    // it is the person's to remove, said in one line (exit 1), not as an internal fault.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_dir()
    {
        return Err(Error::Usage(format!(
            "cannot write {}: {}",
            path.display(),
            not_regular(&meta.file_type())
        )));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut partial = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        // As a plain create would (the umask applies), not tempfile's private 0600.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| Error::io(path, "create a temporary file for", e))?;
    if !sync {
        preallocate(partial.as_file(), bytes.len());
    }
    partial
        .write_all(bytes)
        .and_then(|()| {
            if sync {
                partial.as_file().sync_all()
            } else {
                Ok(())
            }
        })
        .map_err(|e| Error::io(partial.path(), "write", e))?;
    // A failed rename drops the temporary file, which removes it.
    partial
        .persist(path)
        .map(drop)
        .map_err(|e| Error::io(path, "replace", e.error))
}

/// Give `file` its blocks before it is written, so its data is not delayed-allocated. ext4
/// (default `auto_da_alloc`) flushes a file's delayed blocks when it is renamed over an existing
/// file, in the rename itself: 1.3 ms for the hooks' 23 KB snapshot on a quiet disk, far more
/// when other writers keep the disk busy, and all of it in the hook's wall time (the first
/// PreToolUse after a learning changed rewrites the snapshot). Blocks allocated beforehand
/// (unwritten extents) leave nothing to flush: the rename takes microseconds, and the file is
/// still written back later as any other. A file system without `fallocate` (tmpfs has it, some
/// network ones do not) just writes as before. Only for writes not synced: a synced write
/// flushes its data anyway.
fn preallocate(file: &std::fs::File, len: usize) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(len) = libc::off_t::try_from(len)
            && len > 0
        {
            // SAFETY: a valid open descriptor; mode 0 only allocates (and sets the size to
            // `len`, which the write then fills).
            let _ = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, len);
}

/// Open `path` for locking (created if missing, only as a regular file) and take an exclusive
/// lock on it without waiting: `Ok(None)` when another process holds it. The lock lasts while
/// the returned file is open.
pub fn try_lock_file(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let file = open_regular_here(
        path,
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    )?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Whether another process holds an exclusive lock on `path` now (a missing or unreadable
/// file is not held).
pub fn is_locked(path: &Path) -> bool {
    let Ok(file) = open_regular(path, std::fs::OpenOptions::new().read(true)) else {
        return false;
    };
    // A shared lock fails only while someone holds an exclusive one; closing the file drops it.
    matches!(
        file.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

/// Open `path` with `options` plus `O_NONBLOCK`, and refuse it unless it is a regular file (a
/// symlink to one is followed). The refusal is an [`std::io::ErrorKind::Other`] error whose
/// message says what the file is and what to do; NotFound and other OS errors pass through.
pub fn open_regular(
    path: &Path,
    options: &mut std::fs::OpenOptions,
) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = options
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| explain_open_error(path, e))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta.file_type()));
    }
    Ok(file)
}

/// [`open_regular`] for a file gza writes (or reads from its own state) that must be the file
/// itself at `path`: a symbolic link there is refused, never followed (`O_NOFOLLOW`), so a link
/// a repository committed under `.gza/` (or an agent planted) cannot send gza's writes to a file
/// of the person's elsewhere. The directories above are gza's own (`Project` refuses them as
/// links).
pub fn open_regular_here(
    path: &Path,
    options: &mut std::fs::OpenOptions,
) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match options
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
    {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(std::io::Error::other(
                "it is a symbolic link, and gza never writes through one; remove the link",
            ));
        }
        other => other.map_err(|e| explain_open_error(path, e))?,
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta.file_type()));
    }
    Ok(file)
}

/// Refuse `path` when something other than a regular file (or a symbolic link) stands there:
/// gza cannot read or replace it as the file it owns. Nothing there is fine (it is created).
pub fn refuse_unusable(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.file_type().is_symlink() => {
            Err(not_regular(&meta.file_type()))
        }
        _ => Ok(()),
    }
}

/// An open that failed because of what stands at `path` (a directory gives EISDIR, a FIFO
/// without a reader ENXIO, a socket ENXIO or EOPNOTSUPP) says so, as [`not_regular`] does, so
/// the person is told what to remove; any other failure passes through.
fn explain_open_error(path: &Path, e: std::io::Error) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        return e;
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => not_regular(&meta.file_type()),
        _ => e,
    }
}

fn not_regular(kind: &std::fs::FileType) -> std::io::Error {
    std::io::Error::other(format!(
        "it is {}, not a regular file; replace it with a regular file or remove it",
        describe_file_type(kind)
    ))
}

/// Append one line to a log file under `.gza/logs/`, creating it, secrets redacted (these logs
/// hold gza's own messages, which may quote an agent or a hook's input, and are always
/// redacted); failures are ignored, since logging must never change what gza does. A log that
/// is not a regular file (a FIFO, a device) is skipped rather than written, so it can never
/// stall a hook or a worker.
pub fn append_log(path: &Path, line: &str) {
    let line = one_line(&crate::redact::redact(line));
    use std::io::Write;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) =
        open_regular_here(path, std::fs::OpenOptions::new().create(true).append(true))
    {
        let _ = f.write_all(format!("{} {line}\n", crate::task::now_timestamp()).as_bytes());
    }
}

/// `text` as one line of a log: a newline, a carriage return or any other control character
/// (which a file name or an agent's text can carry) is written as an escape, so one entry is
/// one line and nothing in it can start a line of its own.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push(' '),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Create (or truncate) `path` for writing, refusing anything but a regular file, and never
/// writing through a symbolic link ([`open_regular_here`]).
pub fn create_regular(path: &Path) -> std::io::Result<std::fs::File> {
    open_regular_here(
        path,
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
    )
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
    let file = open_regular(path, std::fs::OpenOptions::new().read(true))?;
    let len = file.metadata()?.len();
    if len > max {
        return Err(std::io::Error::other(format!(
            "it is {len} bytes, more than the {max} gza reads; shorten it or remove it"
        )));
    }
    // Sized once from the file's length (one more byte, so a file grown since is still read to
    // its end without a copy): growing by doubling copied and faulted in the pages again.
    let mut bytes = Vec::with_capacity(len.min(max) as usize + 1);
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A text file a person named on the command line (`gza import FILE`, `gza ab FILE`,
/// `gza learnings import FILE`), called `what` in messages ("import file tasks.yaml"): read as
/// [`read_regular_file`] reads one, so a FIFO or a device is refused at once instead of blocking
/// (or, for /dev/zero, filling memory), and one larger than `max` is refused unread. Every
/// refusal is one line naming the file and what to do ([`Error::Usage`]).
pub fn read_named_text(path: &Path, what: &str, max: u64) -> Result<String> {
    // The type is looked at first for a message that says what the path is; the read below
    // checks it again on the opened file, so nothing swapped in between is read.
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Usage(format!("{what} does not exist")));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(Error::Usage(format!(
                "{what} is {}, not a regular file; give a file of text",
                describe_file_type(&meta.file_type())
            )));
        }
        Ok(meta) if meta.len() > max => {
            return Err(Error::Usage(format!(
                "{what} is {} bytes, more than the {max} gza reads; split it or shorten it",
                meta.len()
            )));
        }
        _ => {}
    }
    let bytes = read_regular_file(path, max + 1).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Usage(format!("{what} does not exist")),
        _ => Error::Usage(format!("cannot read {what}: {e}")),
    })?;
    if bytes.len() as u64 > max {
        return Err(Error::Usage(format!(
            "{what} is more than the {max} bytes gza reads; split it or shorten it"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::Usage(format!(
            "{what} is not UTF-8 text (bad byte at offset {}); convert it to UTF-8",
            e.utf8_error().valid_up_to()
        ))
    })
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

/// Copy a file of the project to `to` (created or truncated, only as a regular file), read as
/// [`read_project_file`] reads one but of any size: a link leading out of the project, or
/// anything but a regular file at `from`, is refused and nothing of it is read.
pub fn copy_project_file(root: &Path, from: &Path, to: &Path) -> std::io::Result<()> {
    let resolved = crate::confine::inside(root, from).map_err(|outside| {
        std::io::Error::other(format!(
            "it leads outside the project (to {})",
            outside.resolved.display()
        ))
    })?;
    let mut src = open_regular(&resolved, std::fs::OpenOptions::new().read(true))?;
    let mut dst = create_regular(to)?;
    std::io::copy(&mut src, &mut dst).map(|_| ())
}

/// The last `max` bytes of a regular file (all of it when it is shorter): a transcript or a log
/// of any size is read in bounded memory. Refused like [`read_regular_file`].
pub fn read_regular_tail(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = open_regular(path, std::fs::OpenOptions::new().read(true))?;
    let len = file.metadata()?.len();
    if len > max {
        file.seek(SeekFrom::Start(len - max))?;
    }
    let mut bytes = Vec::with_capacity(len.min(max) as usize);
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What a file that is not a regular one is, for a message ("a FIFO (named pipe)").
pub fn describe_file_type(kind: &std::fs::FileType) -> &'static str {
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

    /// A hook's unsynced write leaves no delayed-allocated blocks, which ext4 would flush in the
    /// rename over the previous file (the hook's wall time; see [`preallocate`]). Asked of the
    /// file system with FIEMAP, in the build's target directory: on the project's disk, not a
    /// tmpfs `/tmp` (which has no delayed allocation to see).
    #[cfg(target_os = "linux")]
    #[test]
    fn an_unsynced_write_leaves_no_delayed_blocks_for_the_rename_to_flush() {
        #[repr(C)]
        struct Fiemap {
            start: u64,
            length: u64,
            flags: u32,
            mapped: u32,
            count: u32,
            reserved: u32,
            extents: [[u64; 7]; 8],
        }
        const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
        const FIEMAP_EXTENT_DELALLOC: u64 = 0x4;
        let target = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target");
        std::fs::create_dir_all(target).unwrap();
        let dir = tempfile::tempdir_in(target).unwrap();
        let path = dir.path().join("hook-snapshot-v1.json");
        write_replacing(&path, &[b'x'; 23_046], false).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut map = Fiemap {
            start: 0,
            length: u64::MAX,
            flags: 0, // not FIEMAP_FLAG_SYNC: what the rename would meet
            mapped: 0,
            count: 8,
            reserved: 0,
            extents: [[0; 7]; 8],
        };
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor and a FIEMAP request with room for `count` extents.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, &mut map) };
        assert_eq!(rc, 0, "FIEMAP: {}", std::io::Error::last_os_error());
        assert!(map.mapped > 0, "the file's data has no extent");
        for extent in &map.extents[..map.mapped as usize] {
            // fe_flags: the low half of the sixth u64 (after logical, physical, length and
            // two reserved).
            let flags = extent[5] & 0xffff_ffff;
            assert_eq!(
                flags & FIEMAP_EXTENT_DELALLOC,
                0,
                "delayed allocation: {flags:#x}"
            );
        }
    }

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

    #[test]
    fn a_write_that_cannot_land_leaves_nothing_behind_and_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("expertise.yaml");
        std::fs::create_dir(&target).unwrap();
        let e = write_atomically(&target, b"x").unwrap_err();
        assert!(e.to_string().contains("expertise.yaml"), "{e}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "the temporary file was left behind");
    }

    #[test]
    fn a_directory_or_fifo_where_a_file_goes_is_named_and_the_persons_to_fix() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("learnings.lock");
        std::fs::create_dir(&lock).unwrap();
        let e = read_refused(&lock, try_lock_file(&lock).unwrap_err());
        assert!(
            e.is_user_error() && e.to_string().contains("a directory"),
            "{e}"
        );
        let fifo_lock = dir.path().join("embed.lock");
        fifo(&fifo_lock);
        let e = read_refused(&fifo_lock, try_lock_file(&fifo_lock).unwrap_err());
        assert!(e.is_user_error() && e.to_string().contains("a FIFO"), "{e}");
        let e = write_atomically(&lock, b"x").unwrap_err();
        assert!(
            e.is_user_error() && e.to_string().contains("remove it"),
            "{e}"
        );
    }

    #[test]
    fn a_lock_is_held_until_its_file_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("learnings.lock");
        assert!(!is_locked(&path));
        let held = try_lock_file(&path).unwrap().expect("free");
        assert!(try_lock_file(&path).unwrap().is_none(), "taken twice");
        assert!(is_locked(&path));
        drop(held);
        assert!(!is_locked(&path));
        assert!(try_lock_file(&path).unwrap().is_some());
        // A FIFO in the lock's place is refused at once.
        let fifo_path = dir.path().join("embed.lock");
        fifo(&fifo_path);
        assert!(try_lock_file(&fifo_path).is_err());
        assert!(!is_locked(&fifo_path));
    }

    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_fifo_in_place_of_a_file_is_refused_at_once_never_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.log");
        fifo(&path);
        let started = std::time::Instant::now();
        append_log(&path, "never written");
        let e = read_regular_file(&path, 100).unwrap_err();
        assert!(e.to_string().contains("a FIFO (named pipe)"), "{e}");
        assert!(read_regular_tail(&path, 100).is_err());
        assert!(create_regular(&path).is_err());
        // A FIFO planted at the file's own name is replaced, never opened.
        let target = dir.path().join("learnings.md");
        fifo(&target);
        write_atomically(&target, b"ok").unwrap();
        assert_eq!(read_regular_file(&target, 10).unwrap(), b"ok");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        // /dev/zero is never read to its (missing) end.
        assert!(read_regular_tail(Path::new("/dev/zero"), 100).is_err());
    }

    #[test]
    fn the_tail_of_a_file_is_its_last_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_regular_tail(&path, 4).unwrap(), b"6789");
        assert_eq!(read_regular_tail(&path, 40).unwrap(), b"0123456789");
        append_log(&path, "line");
        assert!(std::fs::read_to_string(&path).unwrap().ends_with(" line\n"));
    }
}
