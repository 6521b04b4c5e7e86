//! The one hot loop of the model: a linear layer over a handful of tokens.
//!
//! Each weight row is dotted with every token vector; sixteen independent accumulators let the
//! compiler use SIMD lanes without reordering a single running sum. The weights are f32, or
//! int8 with one scale per row.
//!
//! On x86-64 a register-blocked kernel is chosen at run time: with AVX-512, four weight rows
//! against six tokens at a time, each (token, row) sum one 16-lane register (24 accumulators),
//! so each weight chunk is converted from int8 once for six tokens and each token chunk loaded
//! once for four rows; with AVX2+FMA, two rows against three tokens (two 8-lane registers a
//! sum). Every (token, row) sum is still the same sixteen running sums in column order, added
//! lane by lane in the same order at the end, so every kernel gives the same bits as
//! [`linear_portable`] (tested): the stored vectors, made by any of them, stay comparable.

/// A weight type the kernel reads.
pub trait Weight: Copy {
    /// Whether it is `i8` (else `f32`): the blocked kernels load sixteen of it as one
    /// register, converting int8 exactly.
    const INT8: bool;
    fn value(self) -> f32;
}

impl Weight for f32 {
    const INT8: bool = false;
    #[inline(always)]
    fn value(self) -> f32 {
        self
    }
}

impl Weight for i8 {
    const INT8: bool = true;
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
        if blocked::fits(input, n, cols, w, scales, b, out) {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F, and `fits` checked every length the kernel
                // reads or writes through pointers.
                unsafe { blocked::linear_avx512(input, n, cols, w, scales, b, out) };
                return;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: as above, with AVX2 and FMA.
                unsafe { blocked::linear_avx2_blocked(input, n, cols, w, scales, b, out) };
                return;
            }
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has the features the function was compiled for.
            unsafe { linear_avx2(input, n, cols, w, scales, b, out) };
            return;
        }
    }
    linear_portable(input, n, cols, w, scales, b, out);
}

/// The register-blocked kernels (x86-64). Their results are [`linear_portable`]'s bits: each
/// (token, row) pair has sixteen accumulators, lane `l` summing columns `l, l + 16, …` in order
/// with one fused multiply-add each, and the sixteen are added as `dot` adds them.
#[cfg(target_arch = "x86_64")]
mod blocked {
    use std::arch::x86_64::*;

    use super::{LANES, Weight};

    /// Tokens a tile of the AVX-512 kernel takes at most; rows per tile.
    const T512: usize = 6;
    const R512: usize = 4;
    const T256: usize = 3;
    const R256: usize = 2;

    /// Whether the blocked kernels apply: whole 16-column chunks, and every slice as long as
    /// the pointers below read or write (so they never leave it).
    pub fn fits<W: Weight>(
        input: &[f32],
        n: usize,
        cols: usize,
        w: &[W],
        scales: Option<&[f32]>,
        b: &[f32],
        out: &[f32],
    ) -> bool {
        let rows = b.len();
        cols > 0
            && cols.is_multiple_of(LANES)
            && n.checked_mul(cols).is_some_and(|l| input.len() >= l)
            && rows.checked_mul(cols).is_some_and(|l| w.len() >= l)
            && n.checked_mul(rows).is_some_and(|l| out.len() >= l)
            && scales.is_none_or(|s| s.len() >= rows)
    }

    /// The sum of the sixteen lanes, in `dot`'s order.
    #[inline(always)]
    fn lanes_sum(lanes: &[f32; LANES]) -> f32 {
        lanes.iter().sum()
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn linear_avx512<W: Weight>(
        input: &[f32],
        n: usize,
        cols: usize,
        w: &[W],
        scales: Option<&[f32]>,
        b: &[f32],
        out: &mut [f32],
    ) {
        let rows = b.len();
        let mut r = 0;
        while r < rows {
            let take = (rows - r).min(R512);
            let mut t = 0;
            while t < n {
                let tt = (n - t).min(T512);
                // SAFETY: r + take <= rows and t + tt <= n, within what `fits` checked.
                unsafe {
                    match (take, tt) {
                        (4, 6) => tile512::<W, 4, 6>(input, cols, w, scales, b, out, r, t),
                        (4, 5) => tile512::<W, 4, 5>(input, cols, w, scales, b, out, r, t),
                        (4, 4) => tile512::<W, 4, 4>(input, cols, w, scales, b, out, r, t),
                        (4, 3) => tile512::<W, 4, 3>(input, cols, w, scales, b, out, r, t),
                        (4, 2) => tile512::<W, 4, 2>(input, cols, w, scales, b, out, r, t),
                        (4, _) => tile512::<W, 4, 1>(input, cols, w, scales, b, out, r, t),
                        (_, _) => {
                            // Fewer than four rows left: one row at a time, one token a tile.
                            for i in r..r + take {
                                for k in t..t + tt {
                                    tile512::<W, 1, 1>(input, cols, w, scales, b, out, i, k);
                                }
                            }
                        }
                    }
                }
                t += tt;
            }
            r += take;
        }
    }

    /// Rows `r0..r0 + R` against tokens `t0..t0 + T`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    // The accumulators are indexed [row][token] in the inner loop, across both dimensions.
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    unsafe fn tile512<W: Weight, const R: usize, const T: usize>(
        input: &[f32],
        cols: usize,
        w: &[W],
        scales: Option<&[f32]>,
        b: &[f32],
        out: &mut [f32],
        r0: usize,
        t0: usize,
    ) {
        let rows = b.len();
        let mut acc = [[_mm512_setzero_ps(); T]; R];
        let wp = w.as_ptr();
        let xp = input.as_ptr();
        for c in (0..cols).step_by(LANES) {
            let mut wv = [_mm512_setzero_ps(); R];
            for (i, v) in wv.iter_mut().enumerate() {
                // SAFETY: (r0 + i) * cols + c + 16 <= rows * cols <= w.len().
                let p = unsafe { wp.add((r0 + i) * cols + c) };
                *v = if W::INT8 {
                    // SAFETY: sixteen i8 at p; an exact conversion to f32.
                    unsafe { _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(p.cast()))) }
                } else {
                    // SAFETY: sixteen f32 at p.
                    unsafe { _mm512_loadu_ps(p.cast()) }
                };
            }
            for t in 0..T {
                // SAFETY: (t0 + t) * cols + c + 16 <= n * cols <= input.len().
                let x = unsafe { _mm512_loadu_ps(xp.add((t0 + t) * cols + c)) };
                for i in 0..R {
                    acc[i][t] = _mm512_fmadd_ps(x, wv[i], acc[i][t]);
                }
            }
        }
        let mut lanes = [0f32; LANES];
        for (i, acc) in acc.iter().enumerate() {
            let r = r0 + i;
            let scale = scales.map_or(1.0, |s| s[r]);
            for (t, a) in acc.iter().enumerate() {
                // SAFETY: sixteen f32 into a 16-element array.
                unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), *a) };
                out[(t0 + t) * rows + r] = b[r] + scale * lanes_sum(&lanes);
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn linear_avx2_blocked<W: Weight>(
        input: &[f32],
        n: usize,
        cols: usize,
        w: &[W],
        scales: Option<&[f32]>,
        b: &[f32],
        out: &mut [f32],
    ) {
        let rows = b.len();
        let mut r = 0;
        while r < rows {
            let take = (rows - r).min(R256);
            let mut t = 0;
            while t < n {
                let tt = (n - t).min(T256);
                // SAFETY: r + take <= rows and t + tt <= n, within what `fits` checked.
                unsafe {
                    match (take, tt) {
                        (2, 3) => tile256::<W, 2, 3>(input, cols, w, scales, b, out, r, t),
                        (2, 2) => tile256::<W, 2, 2>(input, cols, w, scales, b, out, r, t),
                        (2, _) => tile256::<W, 2, 1>(input, cols, w, scales, b, out, r, t),
                        (_, _) => {
                            for k in t..t + tt {
                                tile256::<W, 1, 1>(input, cols, w, scales, b, out, r, k);
                            }
                        }
                    }
                }
                t += tt;
            }
            r += take;
        }
    }

    /// Rows `r0..r0 + R` against tokens `t0..t0 + T`, each sum two 8-lane registers.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    // The accumulators are indexed [row][token] in the inner loop, across both dimensions.
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    unsafe fn tile256<W: Weight, const R: usize, const T: usize>(
        input: &[f32],
        cols: usize,
        w: &[W],
        scales: Option<&[f32]>,
        b: &[f32],
        out: &mut [f32],
        r0: usize,
        t0: usize,
    ) {
        let rows = b.len();
        let mut acc = [[[_mm256_setzero_ps(); 2]; T]; R];
        let wp = w.as_ptr();
        let xp = input.as_ptr();
        for c in (0..cols).step_by(LANES) {
            let mut wv = [[_mm256_setzero_ps(); 2]; R];
            for (i, v) in wv.iter_mut().enumerate() {
                for (h, half) in v.iter_mut().enumerate() {
                    // SAFETY: (r0 + i) * cols + c + 16 <= rows * cols <= w.len().
                    let p = unsafe { wp.add((r0 + i) * cols + c + h * 8) };
                    *half = if W::INT8 {
                        // SAFETY: eight i8 at p; an exact conversion to f32.
                        unsafe {
                            _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(p.cast())))
                        }
                    } else {
                        // SAFETY: eight f32 at p.
                        unsafe { _mm256_loadu_ps(p.cast()) }
                    };
                }
            }
            for t in 0..T {
                for h in 0..2 {
                    // SAFETY: (t0 + t) * cols + c + 16 <= n * cols <= input.len().
                    let x = unsafe { _mm256_loadu_ps(xp.add((t0 + t) * cols + c + h * 8)) };
                    for i in 0..R {
                        acc[i][t][h] = _mm256_fmadd_ps(x, wv[i][h], acc[i][t][h]);
                    }
                }
            }
        }
        let mut lanes = [0f32; LANES];
        for (i, acc) in acc.iter().enumerate() {
            let r = r0 + i;
            let scale = scales.map_or(1.0, |s| s[r]);
            for (t, a) in acc.iter().enumerate() {
                // SAFETY: eight f32 into each half of a 16-element array.
                unsafe {
                    _mm256_storeu_ps(lanes.as_mut_ptr(), a[0]);
                    _mm256_storeu_ps(lanes.as_mut_ptr().add(8), a[1]);
                }
                out[(t0 + t) * rows + r] = b[r] + scale * lanes_sum(&lanes);
            }
        }
    }
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

    /// Every kernel this CPU can run gives [`linear_portable`]'s bits, int8 and f32, across
    /// token counts and row counts that leave every tile size and tail, and whole matrices of
    /// the model's shapes.
    #[test]
    fn every_kernel_gives_the_portable_bits() {
        let shapes = [
            (1, 16, 1),
            (2, 32, 3),
            (5, 32, 7),
            (6, 48, 4),
            (7, 64, 9),
            (13, 48, 10),
            (20, 384, 13),
            (23, 1536, 6),
            (4, 40, 5),
        ];
        for (n, cols, rows) in shapes {
            let input: Vec<f32> = (0..n * cols)
                .map(|i| (i as f32 * 0.37).sin() * 3.0)
                .collect();
            let w: Vec<f32> = (0..rows * cols).map(|i| (i as f32 * 0.11).cos()).collect();
            let wq: Vec<i8> = (0..rows * cols)
                .map(|i| ((i * 37 % 255) as i32 - 127) as i8)
                .collect();
            let scales: Vec<f32> = (0..rows).map(|r| 0.01 + r as f32 * 0.003).collect();
            let b: Vec<f32> = (0..rows).map(|i| i as f32 * 0.5 - 1.0).collect();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            let mut want = vec![0f32; n * rows];
            let mut want_q = vec![0f32; n * rows];
            linear_portable(&input, n, cols, &w, None, &b, &mut want);
            linear_portable(&input, n, cols, &wq, Some(&scales), &b, &mut want_q);
            let mut got = vec![0f32; n * rows];
            linear(&input, n, cols, &w, None, &b, &mut got);
            assert_eq!(bits(&got), bits(&want), "f32 {n}x{cols}x{rows}");
            linear(&input, n, cols, &wq, Some(&scales), &b, &mut got);
            assert_eq!(bits(&got), bits(&want_q), "int8 {n}x{cols}x{rows}");
            #[cfg(target_arch = "x86_64")]
            if blocked::fits(&input, n, cols, &wq, Some(&scales), &b, &got) {
                let avx512 = std::arch::is_x86_feature_detected!("avx512f");
                let avx2 = std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma");
                if avx512 {
                    // SAFETY: the CPU has AVX-512F; `fits` held.
                    unsafe { blocked::linear_avx512(&input, n, cols, &w, None, &b, &mut got) };
                    assert_eq!(bits(&got), bits(&want), "avx512 f32 {n}x{cols}x{rows}");
                    let s = Some(&scales[..]);
                    // SAFETY: as above.
                    unsafe { blocked::linear_avx512(&input, n, cols, &wq, s, &b, &mut got) };
                    assert_eq!(bits(&got), bits(&want_q), "avx512 int8 {n}x{cols}x{rows}");
                }
                if avx2 {
                    // SAFETY: the CPU has AVX2 and FMA; `fits` held.
                    unsafe {
                        blocked::linear_avx2_blocked(&input, n, cols, &w, None, &b, &mut got)
                    };
                    assert_eq!(bits(&got), bits(&want), "avx2 f32 {n}x{cols}x{rows}");
                    let s = Some(&scales[..]);
                    // SAFETY: as above.
                    unsafe { blocked::linear_avx2_blocked(&input, n, cols, &wq, s, &b, &mut got) };
                    assert_eq!(bits(&got), bits(&want_q), "avx2 int8 {n}x{cols}x{rows}");
                }
            }
        }
    }

    /// A slice shorter than the shapes say sends the call to the checked kernel.
    #[test]
    fn short_slices_never_reach_the_blocked_kernels() {
        #[cfg(target_arch = "x86_64")]
        {
            let input = vec![0f32; 2 * 16];
            let w = vec![0i8; 3 * 16];
            let b = vec![0f32; 3];
            let out = vec![0f32; 6];
            assert!(blocked::fits(&input, 2, 16, &w, None, &b, &out));
            assert!(!blocked::fits(&input, 3, 16, &w, None, &b, &out));
            assert!(!blocked::fits(&input, 2, 16, &w[..47], None, &b, &out));
            assert!(!blocked::fits(&input, 2, 16, &w, Some(&[1.0; 2]), &b, &out));
            assert!(!blocked::fits(&input, 2, 16, &w, None, &b, &out[..5]));
            assert!(!blocked::fits(&input, 2, 8, &w, None, &b, &out));
        }
    }

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
