//! A read-only view of a `.safetensors` file: an 8-byte header length, a JSON header naming each
//! tensor's dtype, shape and byte range, then the data. The file is mmapped; F32 tensors are
//! read in place, F16 and BF16 ones converted once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ModelError;
use super::mapped::Map;

/// A header larger than this is not a model's.
const MAX_HEADER_BYTES: u64 = 100 * 1024 * 1024;

#[derive(Debug, Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: (usize, usize),
}

enum Tensor {
    /// f32 values in the file mapping, from this byte offset.
    Mapped { offset: usize, len: usize },
    /// Converted from a half-precision type.
    Owned(Vec<f32>),
}

/// An open safetensors file and the tensors taken from it.
pub struct SafeTensors {
    path: PathBuf,
    map: Map,
    data_start: usize,
    entries: HashMap<String, Entry>,
    tensors: Vec<Tensor>,
    fingerprint: u64,
    stamp: u64,
}

impl SafeTensors {
    pub fn open(path: &Path) -> Result<SafeTensors, ModelError> {
        let unreadable = |e: std::io::Error| ModelError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        let corrupt = |reason: String| ModelError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let file = super::mapped::open_regular(path).map_err(unreadable)?;
        let meta = file.metadata().map_err(unreadable)?;
        let len = meta.len();
        let stamp = {
            use std::os::unix::fs::MetadataExt;
            let fields = [
                meta.dev(),
                meta.ino(),
                len,
                meta.mtime() as u64,
                meta.mtime_nsec() as u64,
                meta.ctime() as u64,
                meta.ctime_nsec() as u64,
            ];
            let bytes: Vec<u8> = fields.iter().flat_map(|f| f.to_le_bytes()).collect();
            super::checksum::xxh64(&bytes, 0)
        };
        if len < 8 {
            return Err(corrupt("it is too short to be a safetensors file".into()));
        }
        let map = Map::file(&file, len as usize).map_err(unreadable)?;
        let bytes = map.bytes();
        let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        if header_len > MAX_HEADER_BYTES || 8 + header_len > len {
            return Err(corrupt(format!("its header claims {header_len} bytes")));
        }
        let header = &bytes[8..8 + header_len as usize];
        let mut raw: HashMap<String, serde_json::Value> = serde_json::from_slice(header)
            .map_err(|e| corrupt(format!("its header is not JSON: {e}")))?;
        raw.remove("__metadata__");
        let data_start = 8 + header_len as usize;
        let data_len = map.bytes().len() - data_start;
        let mut entries = HashMap::with_capacity(raw.len());
        for (name, value) in raw {
            let entry: Entry = serde_json::from_value(value)
                .map_err(|e| corrupt(format!("tensor {name} is described badly: {e}")))?;
            let (start, end) = entry.data_offsets;
            if start > end || end > data_len {
                return Err(corrupt(format!("tensor {name} lies outside the file")));
            }
            entries.insert(name, entry);
        }
        // FNV-1a over the header and the file's length: cheap, and changes with the weights' layout.
        let mut fingerprint: u64 = 0xcbf2_9ce4_8422_2325;
        for b in header.iter().chain(&len.to_le_bytes()) {
            fingerprint ^= u64::from(*b);
            fingerprint = fingerprint.wrapping_mul(0x0100_0000_01b3);
        }
        Ok(SafeTensors {
            path: path.to_path_buf(),
            map,
            data_start,
            entries,
            tensors: Vec::new(),
            fingerprint,
            stamp,
        })
    }

    pub fn has(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// This file as the file system knows it (device, inode, size, modification and change
    /// times): while it is unchanged, so are the weights, and a checksum made of them holds.
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Take a tensor of the expected shape (a 0 matches any size); returns its handle.
    pub fn tensor(&mut self, name: &str, shape: &[usize]) -> Result<usize, ModelError> {
        let corrupt = |reason: String| ModelError::Corrupt {
            path: self.path.clone(),
            reason,
        };
        let entry = self
            .entries
            .get(name)
            .ok_or_else(|| corrupt(format!("it has no tensor {name}")))?;
        let fits = entry.shape.len() == shape.len()
            && entry
                .shape
                .iter()
                .zip(shape)
                .all(|(a, b)| *b == 0 || a == b);
        if !fits || entry.shape.contains(&0) {
            return Err(corrupt(format!(
                "tensor {name} has shape {:?}, expected {shape:?}",
                entry.shape
            )));
        }
        let count: usize = entry.shape.iter().product();
        let (start, end) = entry.data_offsets;
        let offset = self.data_start + start;
        let bytes = &self.map.bytes()[offset..self.data_start + end];
        let width = match entry.dtype.as_str() {
            "F32" => 4,
            "F16" | "BF16" => 2,
            other => {
                return Err(corrupt(format!(
                    "tensor {name} is {other}; only F32, F16 and BF16 are supported"
                )));
            }
        };
        if bytes.len() != count * width {
            return Err(corrupt(format!(
                "tensor {name} has {} bytes for {count} values",
                bytes.len()
            )));
        }
        let tensor = match entry.dtype.as_str() {
            "F32" if offset.is_multiple_of(4) => Tensor::Mapped { offset, len: count },
            "F32" => Tensor::Owned(
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            "F16" => Tensor::Owned(
                bytes
                    .chunks_exact(2)
                    .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                    .collect(),
            ),
            _ => Tensor::Owned(
                bytes
                    .chunks_exact(2)
                    .map(|c| f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16))
                    .collect(),
            ),
        };
        self.tensors.push(tensor);
        Ok(self.tensors.len() - 1)
    }

    /// A tensor's values.
    pub fn get(&self, handle: usize) -> &[f32] {
        match &self.tensors[handle] {
            Tensor::Mapped { offset, len } => {
                // SAFETY: offset is 4-aligned (checked when taken) and offset + 4·len lies in
                // the mapping; any bit pattern is a valid f32.
                unsafe {
                    std::slice::from_raw_parts(
                        self.map.bytes().as_ptr().add(*offset) as *const f32,
                        *len,
                    )
                }
            }
            Tensor::Owned(v) => v,
        }
    }
}

/// IEEE half to single precision.
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut f = frac;
            while f & 0x400 == 0 {
                f <<= 1;
                e -= 1;
            }
            sign | ((e as u32) << 23) | ((f & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(header: &str, data: &[u8]) -> tempfile::NamedTempFile {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), bytes).unwrap();
        f
    }

    #[test]
    fn reads_f32_in_place_and_f16_converted() {
        let mut data = Vec::new();
        for v in [1.0f32, -2.5] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        data.extend_from_slice(&0x3c00u16.to_le_bytes());
        data.extend_from_slice(&0xc000u16.to_le_bytes());
        let header = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F16","shape":[1,2],"data_offsets":[8,12]},"__metadata__":{"format":"pt"}}"#;
        let pad = " ".repeat((8 - header.len() % 8) % 8);
        let f = file_with(&format!("{header}{pad}"), &data);
        let mut st = SafeTensors::open(f.path()).unwrap();
        let a = st.tensor("a", &[2]).unwrap();
        let b = st.tensor("b", &[0, 2]).unwrap();
        assert_eq!(st.get(a), &[1.0, -2.5]);
        assert_eq!(st.get(b), &[1.0, -2.0]);
    }

    #[test]
    fn every_kind_of_corruption_is_an_error_naming_the_file() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"abc".to_vec(), "too short"),
            (u64::MAX.to_le_bytes().to_vec(), "header claims"),
            (
                [&10u64.to_le_bytes()[..], b"{not json}"].concat(),
                "not JSON",
            ),
        ];
        for (bytes, want) in cases {
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &bytes).unwrap();
            let e = SafeTensors::open(f.path()).err().unwrap().to_string();
            assert!(
                e.contains(want) && e.contains(&f.path().display().to_string()),
                "{e}"
            );
        }
        let f = file_with(
            r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
            &[0; 8],
        );
        let e = SafeTensors::open(f.path()).err().unwrap().to_string();
        assert!(e.contains("lies outside the file"), "{e}");
        let f = file_with(
            r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
            &[0; 8],
        );
        let mut st = SafeTensors::open(f.path()).unwrap();
        assert!(
            st.tensor("a", &[3])
                .err()
                .unwrap()
                .to_string()
                .contains("expected [3]")
        );
        assert!(
            st.tensor("zzz", &[2])
                .err()
                .unwrap()
                .to_string()
                .contains("no tensor zzz")
        );
        let f = file_with(
            r#"{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}"#,
            &[0; 8],
        );
        let mut st = SafeTensors::open(f.path()).unwrap();
        assert!(
            st.tensor("a", &[1])
                .err()
                .unwrap()
                .to_string()
                .contains("only F32")
        );
    }
}
