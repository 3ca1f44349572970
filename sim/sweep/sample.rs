//! Random and Latin-hypercube sampling of sweep points.
//!
//! Each parameter is one dimension. A draw is a number u in [0, 1) per dimension, mapped to a listed
//! value (`floor(u × count)`) or into a continuous range. Latin-hypercube sampling splits every
//! dimension into `points` equal strata, takes one u in each, and pairs the strata of different
//! dimensions by an independent random permutation per dimension, so every stratum of every parameter
//! is covered exactly once.
//!
//! Why not `rand`'s `shuffle` or float sampling: their algorithms may change between versions
//! (des-anchors §6); the permutation and the unit draws here are written out and only use `next_u64`,
//! whose ChaCha output is fixed.

use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::plan::{Levels, Parameter, SampleMethod, Sampling, sweep_rng};

/// A uniform draw in [0, 1) with 53 random bits.
fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `0..n` by rejection (no modulo bias), from `next_u64` only.
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    assert!(n > 0);
    let zone = u64::MAX - u64::MAX % n;
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % n;
        }
    }
}

/// A number rounded to nine decimals, as a JSON value: ranges of decimals such as 0.1 … 0.5 give the
/// numbers a user would write (0.3, not 0.30000000000000004).
pub fn decimal_value(x: f64) -> Value {
    let rounded = (x * 1e9).round() / 1e9;
    // -0.0 prints as "-0"; a range through zero should print 0.
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    serde_json::Number::from_f64(rounded).map(Value::Number).unwrap_or(Value::Null)
}

/// The sampled points: `points[p][i]` is parameter `i` at point `p`.
pub fn sample_points(parameters: &[Parameter], sampling: Sampling) -> Vec<Vec<Value>> {
    let n = sampling.points;
    let mut rng = sweep_rng(sampling.seed);
    // Dimension by dimension, so adding a parameter at the end leaves the earlier columns unchanged.
    let columns: Vec<Vec<f64>> = parameters
        .iter()
        .map(|_| match sampling.method {
            SampleMethod::Random => (0..n).map(|_| unit(&mut rng)).collect(),
            SampleMethod::LatinHypercube => {
                let mut strata: Vec<u64> = (0..n).collect();
                for i in (1..n as usize).rev() {
                    let j = below(&mut rng, i as u64 + 1) as usize;
                    strata.swap(i, j);
                }
                strata.iter().map(|s| (*s as f64 + unit(&mut rng)) / n as f64).collect()
            }
        })
        .collect();
    (0..n as usize)
        .map(|p| parameters.iter().zip(&columns).map(|(param, col)| level(param, col[p])).collect())
        .collect()
}

fn level(parameter: &Parameter, u: f64) -> Value {
    match &parameter.levels {
        Levels::Values(values) => {
            let index = ((u * values.len() as f64) as usize).min(values.len() - 1);
            values[index].clone()
        }
        Levels::Continuous { from, to, integer: true } => {
            let (from, to) = (*from as i64, *to as i64);
            let span = (to - from + 1) as f64;
            Value::from((from + (u * span) as i64).min(to))
        }
        Levels::Continuous { from, to, integer: false } => decimal_value(from + u * (to - from)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parameter(levels: Levels) -> Parameter {
        Parameter { name: "x".into(), pointer: "/x".into(), levels, ranged: false }
    }

    #[test]
    fn latin_hypercube_covers_every_stratum_once() {
        let params = vec![
            parameter(Levels::Values((0..10).map(|i| json!(i)).collect())),
            parameter(Levels::Continuous { from: 0.0, to: 1.0, integer: false }),
        ];
        let points = sample_points(&params, Sampling { method: SampleMethod::LatinHypercube, points: 10, seed: 7 });
        let mut first: Vec<i64> = points.iter().map(|p| p[0].as_i64().unwrap()).collect();
        first.sort_unstable();
        assert_eq!(first, (0..10).collect::<Vec<_>>());
        let mut strata: Vec<usize> = points.iter().map(|p| (p[1].as_f64().unwrap() * 10.0) as usize).collect();
        strata.sort_unstable();
        assert_eq!(strata, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn sampling_is_reproducible_and_seeded() {
        let params = vec![parameter(Levels::Continuous { from: 1.0, to: 50.0, integer: true })];
        let draw = |seed| sample_points(&params, Sampling { method: SampleMethod::Random, points: 20, seed });
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        assert!(draw(3).iter().all(|p| (1..=50).contains(&p[0].as_i64().unwrap())));
    }

    #[test]
    fn decimals_print_as_written() {
        assert_eq!(decimal_value(0.1 + 0.2).to_string(), "0.3");
        assert_eq!(decimal_value(-0.0).to_string(), "0.0");
    }
}
