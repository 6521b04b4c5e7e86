//! The intervals `gza ab` prints: Wilson score intervals for rates, Newcombe's hybrid score
//! intervals for paired differences of rates, Student's t intervals for means. Written here because they are a dozen lines each and the quantiles needed are the
//! 97.5 % points of t, a table (no statistics crate gza would otherwise carry).

/// The 97.5 % point of the standard normal distribution (a two-sided 95 % interval).
const Z: f64 = 1.959_963_984_540_054;

/// The 97.5 % point of Student's t with 1 to 30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706_205, 4.302_653, 3.182_446, 2.776_445, 2.570_582, 2.446_912, 2.364_624, 2.306_004,
    2.262_157, 2.228_139, 2.200_985, 2.178_813, 2.160_369, 2.144_787, 2.131_450, 2.119_905,
    2.109_816, 2.100_922, 2.093_024, 2.085_963, 2.079_614, 2.073_873, 2.068_658, 2.063_899,
    2.059_539, 2.055_529, 2.051_831, 2.048_407, 2.045_230, 2.042_272,
];

/// Beyond 30 degrees of freedom: (df, quantile), interpolated linearly in 1/df, which is
/// within 0.001 of the exact value; ∞ is the normal's.
const T_975_TAIL: [(f64, f64); 4] = [
    (30.0, 2.042_272),
    (40.0, 2.021_075),
    (60.0, 2.000_298),
    (120.0, 1.979_930),
];

/// The exact two-sided sign test (McNemar's, exact) on paired outcomes: of the `better + worse`
/// pairs whose arms ended differently, is `better` against `worse` more lopsided than a fair coin
/// gives? The probability, under no effect, of a split at least this uneven; 1 when no pair
/// differed. (Pairs that ended alike say nothing about which arm is better and are left out.)
pub fn sign_test(better: usize, worse: usize) -> f64 {
    let n = better + worse;
    if n == 0 {
        return 1.0;
    }
    let k = better.min(worse);
    // ln C(n, i) - n ln 2, summed for i = 0..=k, in log space so no term underflows.
    let ln2 = std::f64::consts::LN_2;
    let mut ln_c = 0.0f64;
    let mut tail = 0.0f64;
    for i in 0..=k {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_c - n as f64 * ln2).exp();
    }
    (2.0 * tail).min(1.0)
}

/// The 97.5 % point of Student's t with `df` degrees of freedom (`df` ≥ 1).
pub fn t_975(df: usize) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    if df <= T_975.len() {
        return T_975[df - 1];
    }
    let x = 1.0 / df as f64;
    for pair in T_975_TAIL.windows(2) {
        let ((d0, q0), (d1, q1)) = (pair[0], pair[1]);
        if (df as f64) <= d1 {
            let (x0, x1) = (1.0 / d0, 1.0 / d1);
            return q0 + (q1 - q0) * (x - x0) / (x1 - x0);
        }
    }
    let (d0, q0) = T_975_TAIL[T_975_TAIL.len() - 1];
    let x0 = 1.0 / d0;
    q0 + (Z - q0) * (x - x0) / (0.0 - x0)
}

/// A rate with its 95 % Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Rate {
    pub successes: usize,
    pub n: usize,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// `successes` of `n` with the Wilson score interval (good at small n and at 0 % or 100 %,
/// where the normal approximation gives nonsense); `None` when n is 0.
pub fn wilson(successes: usize, n: usize) -> Option<Rate> {
    if n == 0 {
        return None;
    }
    let (k, n_f) = (successes.min(n) as f64, n as f64);
    let p = k / n_f;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n_f)) / (1.0 + z2 / n_f);
    let half = Z / (1.0 + z2 / n_f) * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    Some(Rate {
        successes: successes.min(n),
        n,
        rate: p,
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// A difference of two paired proportions (the first arm's rate minus the second's, over pairs
/// where both were judged) with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PairedRate {
    /// Pairs.
    pub n: usize,
    /// Pairs where only the first, or only the second, succeeded (the discordant pairs).
    pub first_only: usize,
    pub second_only: usize,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// The difference of paired proportions with Newcombe's hybrid score interval for paired data
/// (method 10 in Newcombe, Stat Med 1998;17:2635-50): the two Wilson intervals combined with the
/// pairs' correlation φ (a positive φ corrected as in his method 11, see below). Student's t on 0/1 differences gave intervals past ±100 points and of
/// zero width when every pair agreed (3 pairs all one way: "+100 (+100 to +100)"); this one
/// stays within ±1 and is wide with few pairs. `None` with no pairs.
pub fn paired_rates(
    both: usize,
    first_only: usize,
    second_only: usize,
    neither: usize,
) -> Option<PairedRate> {
    let n = both + first_only + second_only + neither;
    let (l1, u1) = wilson(both + first_only, n).map(|r| (r.low, r.high))?;
    let (l2, u2) = wilson(both + second_only, n).map(|r| (r.low, r.high))?;
    let (a, b, c, d) = (
        both as f64,
        first_only as f64,
        second_only as f64,
        neither as f64,
    );
    let n_f = n as f64;
    let (p1, p2) = ((a + b) / n_f, (a + c) / n_f);
    // φ is taken as 0 when a margin is empty (every pair alike in one arm), as Newcombe does.
    // A positive φ is shrunk by n/2 as in his method 11: plain φ is 1 whenever no pair differed
    // and both arms had successes and failures (2 pairs, one both won and one both lost), which
    // makes the interval "0 to 0"; shrunk, those 2 pairs give ±57 points and 100 such pairs ±2.
    // A negative φ, as in his worked example, is used as it is.
    let margins = (a + b) * (c + d) * (a + c) * (b + d);
    let mut cross = a * d - b * c;
    if cross > 0.0 {
        cross = (cross - n_f / 2.0).max(0.0);
    }
    let phi = if margins > 0.0 {
        cross / margins.sqrt()
    } else {
        0.0
    };
    let spread = |x: f64, y: f64| (x * x - 2.0 * phi * x * y + y * y).max(0.0).sqrt();
    let below = spread(p1 - l1, u2 - p2);
    let above = spread(u1 - p1, p2 - l2);
    let mean = p1 - p2;
    Some(PairedRate {
        n,
        first_only,
        second_only,
        mean,
        low: (mean - below).max(-1.0),
        high: (mean + above).min(1.0),
    })
}

/// A mean with its 95 % t interval (`None` bounds with a single value or no spread).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Mean {
    pub n: usize,
    pub mean: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// The mean of `values` with the Student's t interval mean ± t(n−1) · s/√n; `None` when there
/// are no values. With one value, or values all alike, there is no interval: a zero-width one
/// would claim a certainty that a handful of identical runs cannot give.
pub fn mean(values: &[f64]) -> Option<Mean> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let m = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(Mean {
            n,
            mean: m,
            low: None,
            high: None,
        });
    }
    let var = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    if var == 0.0 {
        return Some(Mean {
            n,
            mean: m,
            low: None,
            high: None,
        });
    }
    let half = t_975(n - 1) * (var / n as f64).sqrt();
    Some(Mean {
        n,
        mean: m,
        low: Some(m - half),
        high: Some(m + half),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn the_sign_test_matches_the_binomial() {
        // n = 10, 9 against 1: 2 · (1 + 10) / 1024.
        assert!(close(sign_test(9, 1), 22.0 / 1024.0, 1e-12));
        assert!(close(sign_test(1, 9), 22.0 / 1024.0, 1e-12));
        // Five pairs all one way: 2 / 32, never below 0.05 with so few.
        assert!(close(sign_test(5, 0), 0.0625, 1e-12));
        assert!(close(sign_test(6, 0), 2.0 / 64.0, 1e-12));
        assert_eq!(sign_test(3, 3), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        // Large: 600 against 400 is far from a coin (p ≈ 2.6e-10), and nothing underflows.
        let p = sign_test(600, 400);
        assert!(p > 1e-11 && p < 1e-9, "{p}");
        assert!(sign_test(5000, 5000) > 0.99);
    }

    #[test]
    fn wilson_matches_published_values() {
        // Newcombe (1998), and R's prop.test(correct = FALSE).
        let r = wilson(5, 10).unwrap();
        assert!(
            close(r.low, 0.2366, 1e-4) && close(r.high, 0.7634, 1e-4),
            "{r:?}"
        );
        let r = wilson(0, 10).unwrap();
        assert!(
            close(r.low, 0.0, 1e-12) && close(r.high, 0.2775, 1e-4),
            "{r:?}"
        );
        let r = wilson(10, 10).unwrap();
        assert!(
            close(r.low, 0.7225, 1e-4) && close(r.high, 1.0, 1e-12),
            "{r:?}"
        );
        let r = wilson(81, 263).unwrap();
        assert!(
            close(r.low, 0.2553, 1e-4) && close(r.high, 0.3662, 1e-4),
            "{r:?}"
        );
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn wilson_narrows_as_runs_grow() {
        let widths: Vec<f64> = [10, 40, 160]
            .iter()
            .map(|&n| {
                let r = wilson(n / 2, n).unwrap();
                r.high - r.low
            })
            .collect();
        // Four times the runs, half the width (roughly: ±31 points at 10, ±15 at 40, ±8 at 160).
        assert!(close(widths[0], 0.527, 1e-3), "{widths:?}");
        assert!(close(widths[1], 0.296, 1e-3), "{widths:?}");
        assert!(close(widths[2], 0.153, 1e-3), "{widths:?}");
    }

    #[test]
    fn t_quantiles_are_exact_in_the_table_and_close_beyond() {
        assert!(close(t_975(1), 12.7062, 1e-4));
        assert!(close(t_975(4), 2.7764, 1e-4));
        assert!(close(t_975(30), 2.0423, 1e-4));
        // Exact values: 45 → 2.0141, 100 → 1.9840, 1000 → 1.9623.
        assert!(close(t_975(45), 2.0141, 1e-3), "{}", t_975(45));
        assert!(close(t_975(100), 1.9840, 1e-3), "{}", t_975(100));
        assert!(close(t_975(1000), 1.9623, 1e-3), "{}", t_975(1000));
        // Decreasing towards the normal's.
        let mut last = f64::INFINITY;
        for df in 1..500 {
            let t = t_975(df);
            assert!(t < last && t > Z, "df {df}: {t}");
            last = t;
        }
    }

    #[test]
    fn a_mean_has_a_t_interval() {
        // 1..5: mean 3, s = 1.5811, s/√5 = 0.7071, t(4) = 2.7764: ± 1.9632.
        let m = mean(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!(close(m.mean, 3.0, 1e-12));
        assert!(close(m.low.unwrap(), 1.0368, 1e-4), "{m:?}");
        assert!(close(m.high.unwrap(), 4.9632, 1e-4), "{m:?}");
        let one = mean(&[7.0]).unwrap();
        assert_eq!((one.mean, one.low, one.high), (7.0, None, None));
        let same = mean(&[2.0, 2.0, 2.0]).unwrap();
        assert_eq!((same.mean, same.low, same.high), (2.0, None, None));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn a_paired_difference_of_rates_has_newcombes_interval() {
        // Newcombe (1998), table II, example (a): 36 pairs both, 12 first only, 2 second only,
        // none neither: 0.2 with 0.0569 to 0.3404 by method 10.
        let d = paired_rates(36, 12, 2, 0).unwrap();
        assert!(close(d.mean, 0.2, 1e-12), "{d:?}");
        assert!(
            close(d.low, 0.0569, 1e-4) && close(d.high, 0.3404, 1e-4),
            "{d:?}"
        );
        // By hand, 3 pairs all won by the first: p1 = 1, p2 = 0, φ = 0 (empty margins); Wilson's
        // low end for 3 of 3 is 3 / (3 + z²) = 0.4385, so the low end is
        // 1 − √(0.5615² + 0.5615²) = 0.2059 and the high end 1.
        let d = paired_rates(0, 3, 0, 0).unwrap();
        assert!(close(d.low, 0.2059, 1e-4) && d.high == 1.0, "{d:?}");
        // 3 pairs alike: 0, and wide (±0.5615), not "0 to 0".
        let d = paired_rates(3, 0, 0, 0).unwrap();
        assert!(
            d.mean == 0.0 && close(d.low, -0.5615, 1e-4) && close(d.high, 0.5615, 1e-4),
            "{d:?}"
        );
        // 2 won, 1 lost of 3: never past ±1 (t said −1.10 to +1.77).
        let d = paired_rates(0, 2, 1, 0).unwrap();
        assert!(
            close(d.low, -0.5847, 1e-4) && close(d.high, 0.8770, 1e-4),
            "{d:?}"
        );
        // 2 pairs alike, one both won and one both lost: wide, not "0 to 0" (plain φ = 1).
        let d = paired_rates(1, 0, 0, 1).unwrap();
        assert!(
            close(d.high, 0.5734, 1e-4) && close(d.low, -0.5734, 1e-4),
            "{d:?}"
        );
        // Every split of up to 12 pairs stays within ±1 and holds its own difference.
        for n in 1..=12 {
            for a in 0..=n {
                for b in 0..=n - a {
                    for c in 0..=n - a - b {
                        let d = paired_rates(a, b, c, n - a - b - c).unwrap();
                        assert!(
                            d.low >= -1.0
                                && d.high <= 1.0
                                && d.low < d.mean + 1e-12
                                && d.mean < d.high + 1e-12
                                && d.low < d.high,
                            "{a} {b} {c} {}: {d:?}",
                            n - a - b - c
                        );
                    }
                }
            }
        }
        assert_eq!(paired_rates(0, 0, 0, 0), None);
    }
}
