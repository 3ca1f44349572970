//! Duration distributions for upgrade times and approval delays.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::engine::Duration;

/// z-score of the 90th percentile of the standard normal distribution.
const Z90: f64 = 1.281_551_565_544_600_4;

/// A distribution of durations, in whole seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DurationDist {
    Fixed(Duration),
    /// Log-normal with the given median and 90th percentile (aks-models.md §4.2 gives both); made
    /// by [`DurationDist::log_normal`], which works `sigma` out once rather than at every draw.
    LogNormal {
        median: Duration,
        p90: Duration,
        sigma: f64,
    },
    Uniform {
        min: Duration,
        max: Duration,
    },
}

/// `seconds` rounded half away from zero, at least 1: `seconds.round().max(1.0) as i64`. Below
/// 2^52 the rounding is done on the integer part, which the processor truncates in one
/// instruction, where `f64::round` is a library call on x86-64 processors without SSE4.1 (the
/// baseline target); larger, negative and non-finite values take `round` itself.
#[inline(always)]
fn whole_seconds(seconds: f64) -> i64 {
    if (0.0..4_503_599_627_370_496.0).contains(&seconds) {
        // Both exact: the integer part of a value below 2^52, and what is left of it.
        let whole = seconds as i64;
        let rounded = if seconds - whole as f64 >= 0.5 { whole + 1 } else { whole };
        rounded.max(1)
    } else {
        seconds.round().max(1.0) as i64
    }
}

impl DurationDist {
    /// The log-normal distribution with this median and 90th percentile.
    pub fn log_normal(median: Duration, p90: Duration) -> DurationDist {
        let median_s = median.as_seconds().max(1) as f64;
        let p90_s = p90.as_seconds().max(1) as f64;
        DurationDist::LogNormal { median, p90, sigma: ((p90_s / median_s).ln() / Z90).max(0.0) }
    }

    /// Draws one duration. Log-normal draws use `ln`/`exp`, whose last bits may differ between
    /// platforms' math libraries; results are byte-identical for the same binary and platform.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        match *self {
            DurationDist::Fixed(d) => d,
            DurationDist::LogNormal { median, sigma, .. } => {
                let median_s = median.as_seconds().max(1) as f64;
                let z: f64 = StandardNormal.sample(rng);
                Duration(whole_seconds(median_s * (sigma * z).exp()))
            }
            DurationDist::Uniform { min, max } => {
                let (lo, hi) = (min.as_seconds(), max.as_seconds().max(min.as_seconds()));
                Duration(rng.random_range(lo..=hi))
            }
        }
    }

    /// The sum of `n` draws: the same values, in the same order, as `n` calls of [`sample`](Self::sample),
    /// with the log-normal's parameters worked out once.
    pub fn sample_sum<R: Rng + ?Sized>(&self, rng: &mut R, n: u32) -> Duration {
        match *self {
            DurationDist::LogNormal { median, sigma, .. } => {
                let median_s = median.as_seconds().max(1) as f64;
                let mut total = 0;
                for _ in 0..n {
                    let z: f64 = StandardNormal.sample(rng);
                    total += whole_seconds(median_s * (sigma * z).exp());
                }
                Duration(total)
            }
            _ => (0..n).fold(Duration::ZERO, |sum, _| sum + self.sample(rng)),
        }
    }

    /// The median, for reports and rough estimates.
    pub fn median(&self) -> Duration {
        match *self {
            DurationDist::Fixed(d) => d,
            DurationDist::LogNormal { median, .. } => median,
            DurationDist::Uniform { min, max } => Duration((min.as_seconds() + max.as_seconds()) / 2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Purpose, SeedTree};

    #[test]
    fn lognormal_hits_its_median_and_p90() {
        let dist = DurationDist::log_normal(Duration::minutes(10), Duration::minutes(25));
        let mut rng = SeedTree::new(1, 0).stream(Purpose::UpgradeDuration, [0, 0, 0]);
        let mut draws: Vec<i64> = (0..20_000).map(|_| dist.sample(&mut rng).as_seconds()).collect();
        draws.sort_unstable();
        let median = draws[draws.len() / 2] as f64;
        let p90 = draws[draws.len() * 9 / 10] as f64;
        assert!((median - 600.0).abs() < 20.0, "median {median}");
        assert!((p90 - 1500.0).abs() < 60.0, "p90 {p90}");
    }

    #[test]
    fn a_sum_of_draws_equals_the_draws_one_by_one() {
        let dist = DurationDist::log_normal(Duration::minutes(10), Duration::minutes(25));
        let tree = SeedTree::new(3, 0);
        let mut one_by_one = tree.stream(Purpose::UpgradeDuration, [1, 2, 3]);
        let expected = (0..7).fold(Duration::ZERO, |sum, _| sum + dist.sample(&mut one_by_one));
        let mut at_once = tree.stream(Purpose::UpgradeDuration, [1, 2, 3]);
        assert_eq!(dist.sample_sum(&mut at_once, 7), expected);
    }

    #[test]
    fn whole_seconds_is_round_at_least_one() {
        let edges = [
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            0.5000000000000001,
            1.0,
            1.4999999999999998,
            1.5,
            2.5,
            1e-300,
            599.5,
            12_345.499999999998,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9.3e18,
            1e300,
            -3.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
        ];
        let mut rng = SeedTree::new(5, 0).stream(Purpose::UpgradeDuration, [0, 0, 0]);
        let drawn = (0..100_000).map(|_| {
            let z: f64 = StandardNormal.sample(&mut rng);
            2400.0 * (0.4 * z).exp()
        });
        for seconds in edges.into_iter().chain(drawn) {
            assert_eq!(whole_seconds(seconds), seconds.round().max(1.0) as i64, "{seconds:e}");
        }
    }

    #[test]
    fn fixed_and_uniform() {
        let mut rng = SeedTree::new(1, 0).stream(Purpose::Approval, [0, 0, 0]);
        assert_eq!(DurationDist::Fixed(Duration(42)).sample(&mut rng), Duration(42));
        let u = DurationDist::Uniform { min: Duration(10), max: Duration(20) };
        for _ in 0..100 {
            let d = u.sample(&mut rng).as_seconds();
            assert!((10..=20).contains(&d));
        }
    }
}
