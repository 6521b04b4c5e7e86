//! The one hot loop of the model: a linear layer over a handful of tokens.
//!
//! Each weight row is dotted with every token vector; sixteen independent accumulators let the
//! compiler use SIMD lanes without reordering a single running sum. The weights are f32, or
//! int8 with one scale per row. On x86-64 an AVX2+FMA build of the same code is chosen at run
//! time.

/// A weight type the kernel reads.
pub trait Weight: Copy {
    fn value(self) -> f32;
}

impl Weight for f32 {
    #[inline(always)]
    fn value(self) -> f32 {
        self
    }
}

impl Weight for i8 {
    #[inline(always)]
    fn value(self) -> f32 {
        f32::from(self)
    }
}

/// `out[t][r] = b[r] + scale[r] · Σ_c input[t][c] · w[r][c]` for t < n, r < rows; without
/// `scales` every scale is 1.
pub fn linear<W: Weight>(
    input: &[f32],
    n: usize,
    cols: usize,
    w: &[W],
    scales: Option<&[f32]>,
    b: &[f32],
    out: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has the features the function was compiled for.
            unsafe { linear_avx2(input, n, cols, w, scales, b, out) };
            return;
        }
    }
    linear_portable(input, n, cols, w, scales, b, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn linear_avx2<W: Weight>(
    input: &[f32],
    n: usize,
    cols: usize,
    w: &[W],
    scales: Option<&[f32]>,
    b: &[f32],
    out: &mut [f32],
) {
    linear_portable(input, n, cols, w, scales, b, out);
}

#[inline(always)]
fn linear_portable<W: Weight>(
    input: &[f32],
    n: usize,
    cols: usize,
    w: &[W],
    scales: Option<&[f32]>,
    b: &[f32],
    out: &mut [f32],
) {
    let rows = b.len();
    // Tokens in blocks that stay in L1 (32 KiB) while the weight rows stream past them.
    let block = (8192 / cols).max(1);
    // Each weight row as f32, converted once per block rather than once per token; then four
    // tokens at a time share each load of it. Every (token, row) sum is still accumulated in
    // the same order as `dot` does, so the results are the same bits as one token at a time.
    let mut row_f32 = vec![0f32; cols];
    let mut t0 = 0;
    while t0 < n {
        let t1 = (t0 + block).min(n);
        for (r, (row, bias)) in w.chunks_exact(cols).zip(b).enumerate() {
            let scale = scales.map_or(1.0, |s| s[r]);
            for (f, v) in row_f32.iter_mut().zip(row) {
                *f = v.value();
            }
            let row = &row_f32[..];
            let mut t = t0;
            while t + 4 <= t1 {
                let x = |k: usize| &input[(t + k) * cols..(t + k + 1) * cols];
                let sums = dot4([x(0), x(1), x(2), x(3)], row);
                for (k, sum) in sums.iter().enumerate() {
                    out[(t + k) * rows + r] = bias + scale * sum;
                }
                t += 4;
            }
            while t < t1 {
                out[t * rows + r] = bias + scale * dot(&input[t * cols..(t + 1) * cols], row);
                t += 1;
            }
        }
        t0 = t1;
    }
}

const LANES: usize = 16;

#[inline(always)]
fn dot<W: Weight>(a: &[f32], b: &[W]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = a.len() / LANES;
    for i in 0..chunks {
        let (x, y) = (
            &a[i * LANES..(i + 1) * LANES],
            &b[i * LANES..(i + 1) * LANES],
        );
        for l in 0..LANES {
            acc[l] = x[l].mul_add(y[l].value(), acc[l]);
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * LANES..a.len() {
        sum += a[i] * b[i].value();
    }
    sum
}

/// Four of [`dot`] against the same `b`, each summed exactly as `dot` sums it.
#[inline(always)]
fn dot4(a: [&[f32]; 4], b: &[f32]) -> [f32; 4] {
    let (mut a0, mut a1, mut a2, mut a3) =
        ([0f32; LANES], [0f32; LANES], [0f32; LANES], [0f32; LANES]);
    let len = b.len();
    let whole = len / LANES * LANES;
    let rows = b[..whole]
        .chunks_exact(LANES)
        .zip(a[0][..whole].chunks_exact(LANES))
        .zip(a[1][..whole].chunks_exact(LANES))
        .zip(a[2][..whole].chunks_exact(LANES))
        .zip(a[3][..whole].chunks_exact(LANES));
    for ((((y, x0), x1), x2), x3) in rows {
        for l in 0..LANES {
            a0[l] = x0[l].mul_add(y[l], a0[l]);
            a1[l] = x1[l].mul_add(y[l], a1[l]);
            a2[l] = x2[l].mul_add(y[l], a2[l]);
            a3[l] = x3[l].mul_add(y[l], a3[l]);
        }
    }
    let mut sums = [0f32; 4];
    for (k, acc) in [a0, a1, a2, a3].iter().enumerate() {
        let mut sum: f32 = acc.iter().sum();
        for i in whole..len {
            sum += a[k][i] * b[i];
        }
        sums[k] = sum;
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_plain_definition() {
        let (n, cols, rows) = (13, 37, 5);
        let input: Vec<f32> = (0..n * cols).map(|i| (i as f32 * 0.37).sin()).collect();
        let w: Vec<f32> = (0..rows * cols).map(|i| (i as f32 * 0.11).cos()).collect();
        let b: Vec<f32> = (0..rows).map(|i| i as f32).collect();
        let mut out = vec![0f32; n * rows];
        linear(&input, n, cols, &w, None, &b, &mut out);
        for t in 0..n {
            for r in 0..rows {
                let want: f32 = b[r]
                    + (0..cols)
                        .map(|c| input[t * cols + c] * w[r * cols + c])
                        .sum::<f32>();
                assert!((out[t * rows + r] - want).abs() < 1e-4, "{t} {r}");
            }
        }
        // The int8 kernel agrees with the same arithmetic done plainly.
        let wq: Vec<i8> = w.iter().map(|v| (v * 100.0) as i8).collect();
        let scales: Vec<f32> = (0..rows).map(|r| 0.01 + r as f32 * 0.001).collect();
        linear(&input, n, cols, &wq, Some(&scales), &b, &mut out);
        for t in 0..n {
            for r in 0..rows {
                let dot: f32 = (0..cols)
                    .map(|c| input[t * cols + c] * f32::from(wq[r * cols + c]))
                    .sum();
                let want = b[r] + scales[r] * dot;
                assert!((out[t * rows + r] - want).abs() < 1e-3, "{t} {r}");
            }
        }
        // Four tokens at a time give the same bits as one at a time (embeddings, and so the
        // stored vectors and their fingerprint rules, are unchanged by the blocking).
        let mut one = vec![0f32; rows];
        for t in 0..n {
            linear(
                &input[t * cols..(t + 1) * cols],
                1,
                cols,
                &wq,
                Some(&scales),
                &b,
                &mut one,
            );
            for r in 0..rows {
                assert_eq!(one[r].to_bits(), out[t * rows + r].to_bits(), "{t} {r}");
            }
        }
    }
}
