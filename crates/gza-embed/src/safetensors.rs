//! A read-only view of a `.safetensors` file, on the maintained `safetensors` crate: it checks
//! the header (its length, its JSON, every tensor's offsets lying end to end and covering the
//! data, every shape's element count and byte length computed with overflow checks) before gza
//! takes any tensor. The file is mapped with `memmap2`; F32 tensors are read in place, F16 and
//! BF16 ones converted once.

use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::Dtype;
use safetensors::tensor::Metadata;

use super::ModelError;

enum Tensor {
    /// f32 values in the file mapping: this byte range, 4-aligned (checked when taken).
    Mapped { start: usize, end: usize },
    /// Converted from a half-precision type (or an f32 tensor the file left unaligned).
    Owned(Vec<f32>),
}

/// An open safetensors file and the tensors taken from it.
pub struct SafeTensors {
    path: PathBuf,
    file: std::fs::File,
    map: Mmap,
    data_start: usize,
    metadata: Metadata,
    tensors: Vec<Tensor>,
}

impl SafeTensors {
    pub fn open(path: &Path) -> Result<SafeTensors, ModelError> {
        let unreadable = |e: std::io::Error| ModelError::read_failed(path, e);
        let corrupt = |reason: String| ModelError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let file = super::mapped::open_regular(path).map_err(unreadable)?;
        if file.metadata().map_err(unreadable)?.len() < 8 {
            return Err(corrupt("it is too short to be a safetensors file".into()));
        }
        // SAFETY: a private read-only mapping of a regular file gza opened for reading. What gza
        // guarantees: it never writes this file, and every byte read through the map is checked
        // (the header by the safetensors crate, each tensor's range and length below) before it
        // is used, so its contents cannot make gza read outside the map. What gza cannot
        // guarantee: that no other process truncates or rewrites the file while it is mapped.
        // Rewritten in place, the weights read may mix old and new values (wrong embeddings,
        // never out-of-bounds reads); truncated, a read past the new end raises SIGBUS. Tools
        // that install models (scripts/fetch-model, Hugging Face's) write a new file and rename
        // it over the old one, which leaves this mapping on the old file.
        let map = unsafe { Mmap::map(&file) }.map_err(unreadable)?;
        let (header_len, metadata) =
            safetensors::SafeTensors::read_metadata(&map).map_err(|e| corrupt(e.to_string()))?;
        Ok(SafeTensors {
            path: path.to_path_buf(),
            file,
            data_start: 8 + header_len,
            metadata,
            map,
            tensors: Vec::new(),
        })
    }

    pub fn has(&self, name: &str) -> bool {
        self.metadata.info(name).is_some()
    }

    /// The open file (for its metadata) and its whole contents (for the content fingerprint).
    pub fn file(&self) -> (&std::fs::File, &[u8]) {
        (&self.file, &self.map)
    }

    /// Take a tensor of the expected shape (a 0 matches any size); returns its handle.
    pub fn tensor(&mut self, name: &str, shape: &[usize]) -> Result<usize, ModelError> {
        let corrupt = |reason: String| ModelError::Corrupt {
            path: self.path.clone(),
            reason,
        };
        let info = self
            .metadata
            .info(name)
            .ok_or_else(|| corrupt(format!("it has no tensor {name}")))?;
        let fits = info.shape.len() == shape.len()
            && info.shape.iter().zip(shape).all(|(a, b)| *b == 0 || a == b);
        if !fits || info.shape.contains(&0) {
            return Err(corrupt(format!(
                "tensor {name} has shape {:?}, expected {shape:?}",
                info.shape
            )));
        }
        // The crate checked that the offsets lie within the data and that their span is the
        // shape's element count times the dtype's width, without overflow; the range is still
        // taken with `get`, so nothing here can index outside the map.
        let (start, end) = info.data_offsets;
        let range = self
            .data_start
            .checked_add(start)
            .zip(self.data_start.checked_add(end));
        let Some((start, end)) = range.filter(|(s, e)| s <= e && *e <= self.map.len()) else {
            return Err(corrupt(format!("tensor {name} lies outside the file")));
        };
        let bytes = &self.map[start..end];
        let tensor = match info.dtype {
            Dtype::F32 => match bytemuck::try_cast_slice::<u8, f32>(bytes) {
                Ok(_) => Tensor::Mapped { start, end },
                Err(_) => Tensor::Owned(
                    bytes
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                ),
            },
            Dtype::F16 => Tensor::Owned(
                bytes
                    .chunks_exact(2)
                    .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                    .collect(),
            ),
            Dtype::BF16 => Tensor::Owned(
                bytes
                    .chunks_exact(2)
                    .map(|c| f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16))
                    .collect(),
            ),
            other => {
                return Err(corrupt(format!(
                    "tensor {name} is {other}; only F32, F16 and BF16 are supported"
                )));
            }
        };
        self.tensors.push(tensor);
        Ok(self.tensors.len() - 1)
    }

    /// A tensor's values.
    pub fn get(&self, handle: usize) -> &[f32] {
        match &self.tensors[handle] {
            // Aligned and a whole number of f32s: checked when the tensor was taken.
            Tensor::Mapped { start, end } => bytemuck::cast_slice(&self.map[*start..*end]),
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
        // An unaligned f32 tensor (a header of odd length) is copied, not read in place.
        let header = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} "#;
        let f = file_with(header, &data[..8]);
        let mut st = SafeTensors::open(f.path()).unwrap();
        let a = st.tensor("a", &[2]).unwrap();
        assert_eq!(st.get(a), &[1.0, -2.5]);
    }

    #[test]
    fn every_kind_of_corruption_is_an_error_naming_the_file() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"abc".to_vec(), "too short"),
            (u64::MAX.to_le_bytes().to_vec(), "header"),
            (
                [&10u64.to_le_bytes()[..], b"{not json}"].concat(),
                "invalid JSON in header",
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
            assert!(!e.contains('\n'), "{e}");
        }
        let f = file_with(
            r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
            &[0; 8],
        );
        let e = SafeTensors::open(f.path()).err().unwrap().to_string();
        assert!(e.contains("is corrupt"), "{e}");
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

    /// Issue 19: a shape whose element count overflows once multiplied (here to 2^62 + 768
    /// f32s, whose byte length wraps round to the 3,072 bytes given) is refused when the file
    /// is opened, before any tensor is taken.
    #[test]
    fn a_shape_that_overflows_is_refused() {
        let header = r#"{"token_type_embeddings.weight":{"dtype":"F32","shape":[108086391056891906,384],"data_offsets":[0,3072]}}"#;
        let f = file_with(header, &[0; 3072]);
        let e = SafeTensors::open(f.path()).err().unwrap().to_string();
        assert!(e.contains("overflow"), "{e}");
        assert!(e.contains(&f.path().display().to_string()), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
