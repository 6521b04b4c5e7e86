//! An int8 copy of the model's big matrices, made once and kept beside the model.
//!
//! Every embedding reads each layer matrix in full. As f32 they are 42 MB, and a fresh process
//! pays for mapping them in (page faults) more than for the arithmetic; as int8 with one scale
//! per row they are a quarter of that, and the sentence embeddings stay within 0.2 % cosine of
//! the f32 ones (tested). The copy is rebuilt whenever the weights' fingerprint changes.

use std::path::{Path, PathBuf};

use super::mapped::Map;

const MAGIC: &[u8; 8] = b"GZAQ8v01";
const ALIGN: usize = 64;

/// Where one matrix lies in the copy.
#[derive(Debug, Clone, Copy)]
pub struct QMatrix {
    pub rows: usize,
    pub cols: usize,
    scales: usize,
    data: usize,
}

enum Storage {
    Mapped(Map),
    Owned(Vec<u8>),
}

/// The int8 matrices.
pub struct Quantized {
    storage: Storage,
    pub matrices: Vec<QMatrix>,
}

impl Quantized {
    fn bytes(&self) -> &[u8] {
        match &self.storage {
            Storage::Mapped(m) => m.bytes(),
            Storage::Owned(v) => v,
        }
    }

    pub fn scales(&self, m: &QMatrix) -> &[f32] {
        let b = &self.bytes()[m.scales..m.scales + m.rows * 4];
        // SAFETY: 64-aligned within a 64-aligned buffer (page-aligned map or checked Vec),
        // and any bit pattern is an f32.
        unsafe { std::slice::from_raw_parts(b.as_ptr() as *const f32, m.rows) }
    }

    pub fn data(&self, m: &QMatrix) -> &[i8] {
        let b = &self.bytes()[m.data..m.data + m.rows * m.cols];
        // SAFETY: i8 and u8 have the same layout.
        unsafe { std::slice::from_raw_parts(b.as_ptr() as *const i8, b.len()) }
    }

    /// The copy for weights with `fingerprint`: read from the first of `paths` that holds a
    /// valid one, else built from `sources` (each an f32 `[rows × cols]` matrix) and written to
    /// the first of `paths` that accepts it (or kept in memory when none does).
    pub fn load_or_build(
        paths: &[PathBuf],
        fingerprint: u64,
        sources: &[(&[f32], usize, usize)],
    ) -> Quantized {
        let shapes: Vec<(usize, usize)> = sources.iter().map(|(_, r, c)| (*r, *c)).collect();
        for p in paths {
            if let Some(q) = Self::read(p, fingerprint, &shapes) {
                return q;
            }
        }
        let bytes = build(fingerprint, sources);
        for p in paths {
            if write(p, &bytes).is_ok()
                && let Some(q) = Self::read(p, fingerprint, &shapes)
            {
                return q;
            }
        }
        let matrices = layout(&shapes).1;
        let mut owned: Vec<u8> = Vec::with_capacity(bytes.len() + ALIGN);
        // Align the owned copy's start like a mapping's.
        let pad = owned.as_ptr().align_offset(ALIGN);
        owned.resize(pad, 0);
        owned.extend_from_slice(&bytes);
        let matrices = matrices
            .into_iter()
            .map(|m| QMatrix {
                scales: m.scales + pad,
                data: m.data + pad,
                ..m
            })
            .collect();
        Quantized {
            storage: Storage::Owned(owned),
            matrices,
        }
    }

    fn read(path: &Path, fingerprint: u64, shapes: &[(usize, usize)]) -> Option<Quantized> {
        let file = std::fs::File::open(path).ok()?;
        let len = file.metadata().ok()?.len() as usize;
        let (total, matrices) = layout(shapes);
        if len != total {
            return None;
        }
        let map = Map::file(&file, len).ok()?;
        let b = map.bytes();
        let header_ok = &b[..8] == MAGIC
            && b[8..16] == fingerprint.to_le_bytes()
            && b[16..20] == (shapes.len() as u32).to_le_bytes();
        let shapes_ok = shapes.iter().enumerate().all(|(i, (r, c))| {
            let at = 24 + i * 8;
            b[at..at + 4] == (*r as u32).to_le_bytes()
                && b[at + 4..at + 8] == (*c as u32).to_le_bytes()
        });
        (header_ok && shapes_ok).then_some(Quantized {
            storage: Storage::Mapped(map),
            matrices,
        })
    }
}

/// The file's size and each matrix's place in it.
fn layout(shapes: &[(usize, usize)]) -> (usize, Vec<QMatrix>) {
    let mut at = (24 + shapes.len() * 8).next_multiple_of(ALIGN);
    let mut matrices = Vec::with_capacity(shapes.len());
    for &(rows, cols) in shapes {
        let scales = at;
        let data = (scales + rows * 4).next_multiple_of(ALIGN);
        at = (data + rows * cols).next_multiple_of(ALIGN);
        matrices.push(QMatrix {
            rows,
            cols,
            scales,
            data,
        });
    }
    (at, matrices)
}

/// Quantize each row symmetrically: scale = max |w| / 127, w ≈ scale · q.
fn build(fingerprint: u64, sources: &[(&[f32], usize, usize)]) -> Vec<u8> {
    let shapes: Vec<(usize, usize)> = sources.iter().map(|(_, r, c)| (*r, *c)).collect();
    let (total, matrices) = layout(&shapes);
    let mut out = vec![0u8; total];
    out[..8].copy_from_slice(MAGIC);
    out[8..16].copy_from_slice(&fingerprint.to_le_bytes());
    out[16..20].copy_from_slice(&(shapes.len() as u32).to_le_bytes());
    for (i, (r, c)) in shapes.iter().enumerate() {
        let at = 24 + i * 8;
        out[at..at + 4].copy_from_slice(&(*r as u32).to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&(*c as u32).to_le_bytes());
    }
    for ((w, rows, cols), m) in sources.iter().zip(&matrices) {
        for r in 0..*rows {
            let row = &w[r * cols..(r + 1) * cols];
            let max = row.iter().fold(0f32, |a, v| a.max(v.abs()));
            let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
            out[m.scales + r * 4..m.scales + r * 4 + 4].copy_from_slice(&scale.to_le_bytes());
            for (j, v) in row.iter().enumerate() {
                out[m.data + r * cols + j] = (v / scale).round().clamp(-127.0, 127.0) as i8 as u8;
            }
        }
    }
    out
}

/// Write through a temporary file and a rename, so a reader never sees half a copy.
fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_a_file_and_rebuilds_for_other_weights() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.bin");
        let w: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
        let q = Quantized::load_or_build(std::slice::from_ref(&path), 7, &[(&w, 2, 3)]);
        let m = q.matrices[0];
        let first: Vec<i8> = q.data(&m).to_vec();
        let back: Vec<f32> = (0..6)
            .map(|i| q.scales(&m)[i / 3] * f32::from(q.data(&m)[i]))
            .collect();
        for (a, b) in w.iter().zip(&back) {
            assert!((a - b).abs() < 0.02, "{a} {b}");
        }
        assert!(path.exists());
        assert!(Quantized::read(&path, 7, &[(2, 3)]).is_some());
        assert!(
            Quantized::read(&path, 8, &[(2, 3)]).is_none(),
            "other weights"
        );
        assert!(
            Quantized::read(&path, 7, &[(3, 2)]).is_none(),
            "other shapes"
        );
        drop(q);
        std::fs::write(&path, b"garbage").unwrap();
        let again = Quantized::load_or_build(std::slice::from_ref(&path), 7, &[(&w, 2, 3)]);
        assert_eq!(again.data(&again.matrices[0]), first);
        // Nowhere to write: kept in memory.
        let nowhere = Quantized::load_or_build(
            &[PathBuf::from("/proc/no/such/dir/q.bin")],
            7,
            &[(&w, 2, 3)],
        );
        assert_eq!(nowhere.data(&nowhere.matrices[0]), first);
    }
}
