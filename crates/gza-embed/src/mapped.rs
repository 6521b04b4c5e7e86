//! Opening the model's files safely. (Mapping them is `memmap2`'s, at each call site, whose
//! `unsafe` block says what gza guarantees about the mapped file and what it cannot.)

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
    let len = file.metadata()?.len();
    // Sized once (a byte more, so reading to the end needs no copy).
    let mut text = String::with_capacity(len.min(max) as usize + 1);
    file.take(max).read_to_string(&mut text)?;
    Ok(text)
}
