//! Statistics over replications: mean, standard deviation, 95 % confidence intervals, percentiles.
//!
//! Only additions, multiplications, divisions and square roots, which IEEE 754 rounds exactly the same
//! everywhere, so `summary.csv` is byte-identical across machines (no `libm` transcendental functions,
//! des-anchors §1.3). Inputs are always in replication order, so sums do not depend on thread timing.

/// Two-sided 95 % quantiles of Student's t distribution, t(0.975; ν) for ν = 1…30.
const T_975: [f64; 30] = [
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139, 2.200985,
    2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873,
    2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
];

/// z(0.975), the standard normal quantile the t quantiles approach.
pub const Z_975: f64 = 1.959_963_984_540_054;

/// t(0.975; ν): the table up to 30 degrees of freedom, above it the Cornish–Fisher expansion of t
/// around z (Abramowitz & Stegun 26.7.5), which is accurate to better than 1e-6 there.
pub fn t_975(degrees_of_freedom: u64) -> f64 {
    assert!(degrees_of_freedom >= 1, "t needs at least one degree of freedom");
    if degrees_of_freedom <= 30 {
        return T_975[degrees_of_freedom as usize - 1];
    }
    let v = degrees_of_freedom as f64;
    let z = Z_975;
    let z2 = z * z;
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
}

/// What `summary.csv` reports about one metric at one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Replications in which the metric had a value.
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` for a single value.
    pub sd: Option<f64>,
    /// 95 % confidence interval of the mean; `None` for a single value.
    pub ci95: Option<(f64, f64)>,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    /// 95 % confidence intervals of p50, p90, p95 and p99 ([`quantile_ci`]).
    pub quantile_ci: [(f64, f64); 4],
}

/// The percentiles `summary.csv` reports, in the order of [`Summary::quantile_ci`].
pub const PERCENTILES: [u32; 4] = [50, 90, 95, 99];

/// Summarises values given in replication order; `None` when there are none. The confidence
/// interval is Student's t interval of the mean.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let (sd, ci95) = if n >= 2 {
        let ss: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
        let sd = (ss / (n - 1) as f64).sqrt();
        let half = t_975(n as u64 - 1) * sd / (n as f64).sqrt();
        (Some(sd), Some((mean - half, mean + half)))
    } else {
        (None, None)
    };
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(Summary {
        n,
        mean,
        sd,
        ci95,
        p50: percentile(&sorted, 50),
        p90: percentile(&sorted, 90),
        p95: percentile(&sorted, 95),
        p99: percentile(&sorted, 99),
        quantile_ci: PERCENTILES.map(|q| quantile_ci(&sorted, q)),
    })
}

/// A distribution-free 95 % confidence interval of the `percent` percentile of sorted values: the
/// order statistics x₍l₎ and x₍u₎ with l, u = nq ∓ z·√(nq(1 − q)) rounded outwards (the normal
/// approximation of the binomial count below the quantile), clamped to the sample. Few values give
/// a wide interval, as they should; one value gives a point.
pub fn quantile_ci(sorted: &[f64], percent: u32) -> (f64, f64) {
    assert!(!sorted.is_empty() && percent <= 100);
    let n = sorted.len() as f64;
    let q = f64::from(percent) / 100.0;
    let half = Z_975 * (n * q * (1.0 - q)).sqrt();
    let low = ((n * q - half).floor() as i64).clamp(1, sorted.len() as i64) as usize;
    let high = ((n * q + half).ceil() as i64).clamp(1, sorted.len() as i64) as usize;
    (sorted[low - 1], sorted[high - 1])
}

/// Summarises a 0/1 indicator (e.g. "the run ended `Failed`"): the mean is the probability, and the
/// interval is Wilson's score interval, which unlike the t interval stays meaningful at 0 and 1.
pub fn summarize_indicator(hits: &[bool]) -> Option<Summary> {
    let values: Vec<f64> = hits.iter().map(|h| if *h { 1.0 } else { 0.0 }).collect();
    let mut summary = summarize(&values)?;
    let n = values.len() as f64;
    let p = summary.mean;
    let z2 = Z_975 * Z_975;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z_975 / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    summary.ci95 = Some(((centre - half).max(0.0), (centre + half).min(1.0)));
    Some(summary)
}

/// The `percent` percentile of sorted values by linear interpolation between closest ranks (the
/// default of numpy's `percentile` and R's `quantile`, "type 7").
pub fn percentile(sorted: &[f64], percent: u32) -> f64 {
    assert!(!sorted.is_empty() && percent <= 100);
    let position = (sorted.len() - 1) as f64 * f64::from(percent) / 100.0;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn t_quantiles_join_the_expansion_smoothly() {
        assert_eq!(t_975(1), 12.706205);
        assert_eq!(t_975(30), 2.042272);
        // Published values: t(0.975; 40) = 2.021075, 60 → 2.000298, 120 → 1.979930, 1000 → 1.962339.
        for (v, t) in [(31, 2.039513), (40, 2.021075), (60, 2.000298), (120, 1.979930), (1000, 1.962339)] {
            assert!(close(t_975(v), t, 2e-6), "ν = {v}: {} vs {t}", t_975(v));
        }
        assert!(close(t_975(u64::MAX), Z_975, 1e-12));
        // The expansion is accurate enough that the table and the series agree at the seam.
        let mut previous = t_975(1);
        for v in 2..200 {
            assert!(t_975(v) < previous, "t quantiles decrease with ν");
            previous = t_975(v);
        }
    }

    #[test]
    fn summary_of_a_small_sample() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert!(close(s.sd.unwrap(), 2.138090, 1e-6));
        let (low, high) = s.ci95.unwrap();
        // 5 ± 2.364624 × 2.138090 / √8
        assert!(close(low, 3.212512, 1e-6) && close(high, 6.787488, 1e-6), "{low} {high}");
        assert_eq!(s.p50, 4.5);
        assert_eq!(s.quantile_ci[0], (2.0, 7.0), "ranks 1 and 7 of 8 around the median");
        assert!(close(s.p90, 7.6, 1e-12));
        assert!(close(s.p99, 8.86, 1e-12));
    }

    #[test]
    fn one_value_has_no_spread() {
        let s = summarize(&[3.0]).unwrap();
        assert_eq!((s.mean, s.sd, s.ci95, s.p50, s.p99), (3.0, None, None, 3.0, 3.0));
        assert_eq!(s.quantile_ci, [(3.0, 3.0); 4]);
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn quantile_intervals_cover_the_true_quantile() {
        // 1..=1000: the true p90 is about 900; the interval is narrow and holds it.
        let values: Vec<f64> = (1..=1000).map(f64::from).collect();
        let (low, high) = quantile_ci(&values, 90);
        assert!(low < 900.5 && 900.5 < high && high - low < 50.0, "{low} {high}");
        assert_eq!(quantile_ci(&values, 100), (1000.0, 1000.0));
    }

    #[test]
    fn wilson_interval_for_probabilities() {
        let none = summarize_indicator(&[false; 200]).unwrap();
        assert_eq!(none.mean, 0.0);
        let (low, high) = none.ci95.unwrap();
        assert_eq!(low, 0.0);
        assert!(close(high, 0.018845, 1e-6), "{high}");
        let some = summarize_indicator(&[true, false, false, false]).unwrap();
        let (low, high) = some.ci95.unwrap();
        assert!(close(low, 0.045587, 1e-6) && close(high, 0.699358, 1e-6), "{low} {high}");
    }
}
