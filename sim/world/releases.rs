//! The release calendar: Kubernetes versions and node images, each with a per-region availability
//! time (SEMANTICS §5.5c, §8; aks-models.md §2).

use std::collections::BTreeMap;

use crate::engine::Time;
use crate::fleet::{KubernetesVersion, NodeImageVersion};

/// When a release reaches each region: `regions` overrides `default`; `None` everywhere = never.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Availability {
    pub default: Option<Time>,
    pub regions: BTreeMap<String, Time>,
}

impl Availability {
    /// Available in every region since the beginning of time.
    pub fn always() -> Availability {
        Availability { default: Some(Time(i64::MIN / 4)), regions: BTreeMap::new() }
    }

    pub fn at(&self, region: &str) -> Option<Time> {
        self.regions.get(region).copied().or(self.default)
    }

    pub fn is_available(&self, region: &str, now: Time) -> bool {
        self.at(region).is_some_and(|t| t <= now)
    }

    /// The first instant the release is in at least one region (auto-upgrade triggers, SEMANTICS §9).
    pub fn first(&self) -> Option<Time> {
        self.regions.values().copied().chain(self.default).min()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct KubernetesRelease {
    pub version: KubernetesVersion,
    pub availability: Availability,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ImageRelease {
    pub version: NodeImageVersion,
    /// Publication time: the 90-day validity counts from here (SEMANTICS §8).
    pub published: Time,
    pub availability: Availability,
}

/// All releases the simulated world knows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReleaseCalendar {
    /// Sorted by version.
    pub kubernetes: Vec<KubernetesRelease>,
    /// When true, versions absent from `kubernetes` are available everywhere (the scenario gave no
    /// Kubernetes releases).
    pub kubernetes_implicit: bool,
    /// Per image family, sorted by version.
    pub images: BTreeMap<String, Vec<ImageRelease>>,
}

impl ReleaseCalendar {
    pub fn kubernetes_release(&self, version: KubernetesVersion) -> Option<&KubernetesRelease> {
        self.kubernetes.binary_search_by(|r| r.version.cmp(&version)).ok().map(|i| &self.kubernetes[i])
    }

    /// When `version` reaches `region` (`None`: never).
    pub fn kubernetes_available_at(&self, version: KubernetesVersion, region: &str) -> Option<Time> {
        match self.kubernetes_release(version) {
            Some(release) => release.availability.at(region),
            None if self.kubernetes_implicit => Availability::always().default,
            None => None,
        }
    }

    pub fn image_release(&self, version: &NodeImageVersion) -> Option<&ImageRelease> {
        self.images.get(version.family())?.iter().find(|r| r.version == *version)
    }

    /// `Latest` (SEMANTICS §8): the newest image of `family` released in `region` at `now`.
    pub fn newest_image(&self, family: &str, region: &str, now: Time) -> Option<&ImageRelease> {
        self.images.get(family)?.iter().rev().find(|r| r.availability.is_available(region, now))
    }

    /// `Consistent` (SEMANTICS §8): the newest image of `family` released in every one of `regions`.
    pub fn newest_image_everywhere<'a>(
        &self,
        family: &str,
        regions: impl Iterator<Item = &'a str> + Clone,
        now: Time,
    ) -> Option<&ImageRelease> {
        self.images
            .get(family)?
            .iter()
            .rev()
            .find(|r| regions.clone().all(|region| r.availability.is_available(region, now)))
    }

    /// When `version` reaches `region` (`None`: never or unknown).
    pub fn image_available_at(&self, version: &NodeImageVersion, region: &str) -> Option<Time> {
        self.image_release(version).and_then(|r| r.availability.at(region))
    }
}
