//! A read-only memory mapping of a file.

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
