//! The regional rollout model: how a release spreads over regions after it is released
//! (aks-models.md §2.3–2.4).
//!
//! Regions are grouped into rings; each ring starts a drawn offset after the release, each region a
//! drawn jitter after its ring, and a wave may pause (a regression found mid-rollout), delaying
//! that ring and every later one. Draws come from streams keyed by the release's name and the
//! ring's or region's name (SEMANTICS §10), so adding a region or a release changes no other draw.

use std::collections::BTreeMap;

use rand::Rng;

use crate::engine::{Duration, Purpose, SeedTree, Time, name_key};

use super::dist::DurationDist;
use super::regions::{CATALOG, RING_NAMES};
use super::releases::Availability;

/// One ring of the rollout: its regions start `offset` after the release.
#[derive(Clone, Debug, PartialEq)]
pub struct Ring {
    pub name: String,
    pub regions: Vec<String>,
    /// Drawn once per release.
    pub offset: DurationDist,
}

/// A wave that pauses: with `probability` per release, a ring (drawn among all but the first) and
/// every later one are delayed by `duration`.
#[derive(Clone, Debug, PartialEq)]
pub struct PauseModel {
    pub probability: f64,
    pub duration: DurationDist,
}

/// A pause scripted for one release: ring `before_ring` and every later one start `duration` late.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForcedPause {
    pub before_ring: usize,
    pub duration: Duration,
}

/// What the model needs of one release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutRelease {
    /// When the release starts rolling out (its first ring's offset counts from here).
    pub released: Time,
    /// A scripted pause; replaces the random one of the model for this release.
    pub pause: Option<ForcedPause>,
}

/// Rings with day offsets, a per-region jitter and an optional paused wave.
#[derive(Clone, Debug, PartialEq)]
pub struct RolloutModel {
    pub rings: Vec<Ring>,
    /// Each region lags its ring by a uniform draw in `[0, jitter]`.
    pub jitter: Duration,
    pub pause: Option<PauseModel>,
}

impl Default for RolloutModel {
    /// aks-models.md §2.4 ESTIMATE: rings at days 0, 1–2, 3, 5–6 and 8–10, +0–2 d per region (about
    /// 12 days in all), and a 7.5 % chance (the middle of "5–10 %") that a wave pauses 3–7 days.
    fn default() -> Self {
        let days = |from: i64, to: i64| {
            if from == to {
                DurationDist::Fixed(Duration::days(from))
            } else {
                DurationDist::Uniform { min: Duration::days(from), max: Duration::days(to) }
            }
        };
        let offsets = [days(0, 0), days(1, 2), days(3, 3), days(5, 6), days(8, 10)];
        let rings = RING_NAMES
            .iter()
            .zip(offsets)
            .enumerate()
            .map(|(i, (name, offset))| Ring {
                name: (*name).to_string(),
                regions: CATALOG.iter().filter(|r| usize::from(r.ring) == i).map(|r| r.name.to_string()).collect(),
                offset,
            })
            .collect();
        RolloutModel {
            rings,
            jitter: Duration::days(2),
            pause: Some(PauseModel {
                probability: 0.075,
                duration: DurationDist::Uniform { min: Duration::days(3), max: Duration::days(7) },
            }),
        }
    }
}

impl RolloutModel {
    /// The ring of `region`: the first ring listing it, else the last ring (a region nobody placed
    /// gets the release last).
    pub fn ring_of(&self, region: &str) -> usize {
        self.rings
            .iter()
            .position(|ring| ring.regions.iter().any(|r| r == region))
            .unwrap_or(self.rings.len().saturating_sub(1))
    }

    /// Every region any ring names.
    pub fn regions(&self) -> impl Iterator<Item = &str> {
        self.rings.iter().flat_map(|ring| ring.regions.iter().map(String::as_str))
    }

    /// When `release` (named `name`) reaches each of `regions`, in whole minutes after its release.
    /// Regions not listed get the latest of those times.
    pub fn spread<'r>(
        &self,
        name: &str,
        release: &RolloutRelease,
        regions: impl Iterator<Item = &'r str>,
        tree: &SeedTree,
    ) -> Availability {
        let key = name_key(name);
        let ring_starts: Vec<Duration> = self
            .rings
            .iter()
            .map(|ring| {
                let mut rng = tree.stream(Purpose::ReleaseRollout, [key, name_key(&ring.name), 0]);
                ring.offset.sample(&mut rng)
            })
            .collect();
        let pause = match release.pause {
            Some(forced) => Some(forced),
            None => self.pause.as_ref().and_then(|model| {
                let mut rng = tree.stream(Purpose::ReleaseRollout, [key, 0, 2]);
                let draw: f64 = rng.random();
                if draw >= model.probability || self.rings.len() < 2 {
                    return None;
                }
                let before_ring = rng.random_range(1..self.rings.len() as u32) as usize;
                Some(ForcedPause { before_ring, duration: model.duration.sample(&mut rng) })
            }),
        };
        // A ring's start, delayed by the pause when the pause comes before it.
        let ring_lag = |ring: usize| {
            let lag = ring_starts.get(ring).copied().unwrap_or(Duration::ZERO);
            match pause {
                Some(p) if ring >= p.before_ring => Duration(lag.as_seconds().saturating_add(p.duration.as_seconds())),
                _ => lag,
            }
        };
        // The release's time plus `lag`, in whole minutes.
        let after = |lag: Duration| Time(release.released.0.saturating_add(lag.as_seconds().max(0) / 60 * 60));
        // When the release reaches `region`, in its ring.
        let reaches = |region: &str| {
            let mut lag = ring_lag(self.ring_of(region));
            if self.jitter > Duration::ZERO {
                let mut rng = tree.stream(Purpose::ReleaseRollout, [key, name_key(region), 1]);
                lag = Duration(lag.as_seconds().saturating_add(rng.random_range(0..=self.jitter.as_seconds())));
            }
            after(lag)
        };
        let mut times = BTreeMap::new();
        for region in regions {
            times.insert(region.to_string(), reaches(region));
        }
        let default = times.values().copied().max().or(Some(release.released));
        // SEMANTICS §9: a release is out when it first reaches a region, any region the model
        // knows, not only the fleet's. Jitter only delays, so a ring that starts after the earliest
        // time found cannot be earlier: only the first rings' regions are drawn.
        let in_fleet = times.values().copied().min();
        let mut anywhere = in_fleet;
        let mut rings: Vec<usize> = (0..self.rings.len()).collect();
        rings.sort_by_key(|&ring| ring_lag(ring));
        for ring in rings {
            if anywhere.is_some_and(|t| t <= after(ring_lag(ring))) {
                break;
            }
            for region in &self.rings[ring].regions {
                let t = reaches(region);
                anywhere = Some(anywhere.map_or(t, |a| a.min(t)));
            }
        }
        let anywhere = anywhere.filter(|t| in_fleet.is_none_or(|f| *t < f));
        Availability { default, regions: times, anywhere }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(day: i64) -> RolloutRelease {
        RolloutRelease { released: Time(day * 86_400), pause: None }
    }

    #[test]
    fn default_rings_spread_a_release_over_about_twelve_days() {
        let model = RolloutModel { pause: None, ..RolloutModel::default() };
        let tree = SeedTree::new(1, 0);
        let regions: Vec<&str> = CATALOG.iter().map(|r| r.name).collect();
        let mut latest = Duration::ZERO;
        for n in 0..50 {
            let a = model.spread(&format!("release-{n}"), &release(0), regions.iter().copied(), &tree);
            for region in &CATALOG {
                let lag = a.at(region.name).unwrap() - Time(0);
                let (lo, hi) = [(0, 2), (1, 4), (3, 5), (5, 8), (8, 12)][usize::from(region.ring)];
                assert!(Duration::days(lo) <= lag && lag <= Duration::days(hi), "{} {lag}", region.name);
                assert_eq!(lag.as_seconds() % 60, 0, "whole minutes");
                latest = latest.max(lag);
            }
        }
        assert!(latest > Duration::days(11), "{latest}");
    }

    #[test]
    fn draws_are_keyed_by_release_and_region_names() {
        let model = RolloutModel::default();
        let tree = SeedTree::new(9, 0);
        let a = model.spread("v1", &release(0), ["eastus", "westeurope"].into_iter(), &tree);
        let b = model.spread("v1", &release(0), ["westeurope", "eastus", "uksouth"].into_iter(), &tree);
        assert_eq!(a.at("eastus"), b.at("eastus"));
        assert_eq!(a.at("westeurope"), b.at("westeurope"));
        let c = model.spread("v2", &release(0), ["eastus"].into_iter(), &tree);
        assert_ne!(a.at("eastus"), c.at("eastus"));
        let d = model.spread("v1", &release(0), ["eastus"].into_iter(), &SeedTree::new(9, 1));
        assert_ne!(a.at("eastus"), d.at("eastus"), "replications differ");
    }

    #[test]
    fn a_paused_wave_delays_its_ring_and_the_later_ones() {
        let model = RolloutModel { jitter: Duration::ZERO, pause: None, ..RolloutModel::default() };
        let tree = SeedTree::new(3, 0);
        let regions = ["eastus2euap", "uksouth", "eastus", "northeurope", "westeurope"];
        let plain = model.spread("v", &release(0), regions.into_iter(), &tree);
        let paused = RolloutRelease {
            released: Time(0),
            pause: Some(ForcedPause { before_ring: 3, duration: Duration::days(5) }),
        };
        let late = model.spread("v", &paused, regions.into_iter(), &tree);
        for region in regions {
            let shift = late.at(region).unwrap() - plain.at(region).unwrap();
            let expected = if model.ring_of(region) >= 3 { Duration::days(5) } else { Duration::ZERO };
            assert_eq!(shift, expected, "{region}");
        }
        assert_eq!(model.ring_of("mars"), 4, "unknown regions come last");
        assert_eq!(late.at("mars"), late.at("westeurope").max(late.at("northeurope")));
    }

    #[test]
    fn random_pauses_happen_at_about_their_probability() {
        let model = RolloutModel {
            jitter: Duration::ZERO,
            pause: Some(PauseModel { probability: 0.5, duration: DurationDist::Fixed(Duration::days(30)) }),
            ..RolloutModel::default()
        };
        let tree = SeedTree::new(5, 0);
        let paused = (0..400)
            .filter(|n| {
                let a = model.spread(&format!("r{n}"), &release(0), ["westeurope"].into_iter(), &tree);
                a.at("westeurope").unwrap() - Time(0) > Duration::days(20)
            })
            .count();
        assert!((160..240).contains(&paused), "{paused}");
    }
}
