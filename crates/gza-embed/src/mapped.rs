//! A read-only memory mapping of a file, and opening the model's files safely.

use std::path::Path;

/// Open a model file for reading: non-blocking, so a FIFO or device in its place is refused at
/// once rather than waited on forever, and only when it is a regular file (checked on the open
/// descriptor). The embedding code keeps this helper of its own, so it can move to a crate.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

/// A whole small model file (config, vocabulary) as text, read as [`open_regular`] opens it.
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::Read;
    let file = open_regular(path)?;
    if file.metadata()?.len() > max {
        return Err(std::io::Error::other(format!(
            "it is larger than {max} bytes"
        )));
    }
    let mut text = String::new();
    file.take(max).read_to_string(&mut text)?;
    Ok(text)
}

/// A mapped file, unmapped on drop.
pub struct Map {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and lives as long as the Map; it is never written.
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

impl Map {
    /// Map the first `len` bytes of `file` read-only.
    pub fn file(file: &std::fs::File, len: usize) -> std::io::Result<Map> {
        use std::os::unix::io::AsRawFd;
        if len == 0 {
            return Err(std::io::Error::other("the file is empty"));
        }
        // SAFETY: mapping a file we opened for reading, read-only and private.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Map { ptr, len })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: a live read-only mapping of len bytes.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: ptr and len are exactly what mmap returned.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}
