//! The release calendar: Kubernetes versions and node images, each with a per-region availability
//! time (SEMANTICS §5.5c, §8; aks-models.md §2).

use std::collections::BTreeMap;

use crate::engine::{SeedTree, Time};
use crate::fleet::{KubernetesVersion, MinorVersion, NodeImageVersion};

use super::rollout::{RolloutModel, RolloutRelease};

/// When a release reaches each region: `regions` overrides `default`; `None` everywhere = never.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Availability {
    pub default: Option<Time>,
    pub regions: BTreeMap<String, Time>,
    /// The first instant the release is in some region outside `regions` that no member is in
    /// (the rollout model draws the fleet's regions only), when that is earlier than the others.
    pub anywhere: Option<Time>,
}

impl Availability {
    /// Available in every region since the beginning of time.
    pub fn always() -> Availability {
        Availability { default: Some(Time(i64::MIN / 4)), regions: BTreeMap::new(), anywhere: None }
    }

    pub fn at(&self, region: &str) -> Option<Time> {
        self.regions.get(region).copied().or(self.default)
    }

    pub fn is_available(&self, region: &str, now: Time) -> bool {
        self.at(region).is_some_and(|t| t <= now)
    }

    /// The first instant the release is in at least one region (auto-upgrade triggers, SEMANTICS §9).
    pub fn first(&self) -> Option<Time> {
        self.regions.values().copied().chain(self.default).chain(self.anywhere).min()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct KubernetesRelease {
    pub version: KubernetesVersion,
    pub availability: Availability,
    /// Set when the availability comes from the rollout model (it is drawn again per replication).
    pub rollout: Option<RolloutRelease>,
    /// LTS clusters may skip minors only to an LTS-eligible release (aks-models.md §3).
    pub lts_eligible: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ImageRelease {
    pub version: NodeImageVersion,
    /// Publication time: the 90-day validity counts from here (SEMANTICS §8).
    pub published: Time,
    pub availability: Availability,
    /// Set when the availability comes from the rollout model (it is drawn again per replication).
    pub rollout: Option<RolloutRelease>,
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
    /// Spreads the releases that have a `rollout` over regions (aks-models.md §2.4).
    pub rollout: RolloutModel,
    /// The regions rollout releases are spread over (every other region gets the latest time).
    pub rollout_regions: Vec<String>,
    /// The seed tree the rollout releases were last drawn with (`None`: not drawn yet).
    pub realized_for: Option<SeedTree>,
}

impl ReleaseCalendar {
    /// Whether any availability comes from the rollout model.
    pub fn has_rollouts(&self) -> bool {
        self.kubernetes.iter().any(|r| r.rollout.is_some())
            || self.images.values().flatten().any(|r| r.rollout.is_some())
    }

    /// Whether the availability times are those of `tree` (no new draw needed).
    pub fn is_realized_for(&self, tree: SeedTree) -> bool {
        !self.has_rollouts() || self.realized_for == Some(tree)
    }

    /// Draws the availability of every rollout release from `tree` (one replication's world).
    pub fn realize(&mut self, tree: SeedTree) {
        let regions = self.rollout_regions.iter().map(String::as_str);
        for release in &mut self.kubernetes {
            if let Some(spec) = &release.rollout {
                release.availability = self.rollout.spread(&release.version.to_string(), spec, regions.clone(), &tree);
            }
        }
        for release in self.images.values_mut().flatten() {
            if let Some(spec) = &release.rollout {
                release.availability = self.rollout.spread(release.version.as_str(), spec, regions.clone(), &tree);
            }
        }
        self.realized_for = Some(tree);
    }

    /// This calendar as replication `tree` sees it: borrowed when already drawn for it.
    pub fn for_replication(&self, tree: SeedTree) -> std::borrow::Cow<'_, ReleaseCalendar> {
        if self.is_realized_for(tree) {
            std::borrow::Cow::Borrowed(self)
        } else {
            let mut copy = self.clone();
            copy.realize(tree);
            std::borrow::Cow::Owned(copy)
        }
    }

    /// Kubernetes releases available in `region` at `now`, newest first.
    pub fn kubernetes_available(&self, region: &str, now: Time) -> impl Iterator<Item = &KubernetesRelease> {
        self.kubernetes.iter().rev().filter(move |r| r.availability.is_available(region, now))
    }

    /// Image releases of `family` available in `region` at `now`, newest first.
    pub fn images_available(&self, family: &str, region: &str, now: Time) -> impl Iterator<Item = &ImageRelease> {
        self.images
            .get(family)
            .into_iter()
            .flat_map(|list| list.iter().rev())
            .filter(move |r| r.availability.is_available(region, now))
    }

    /// The newest Kubernetes minor released in at least one region by `now` (N of the AKS support
    /// window and of the auto-upgrade channels, SEMANTICS §9); `None` when the calendar lists none.
    pub fn newest_minor(&self, now: Time) -> Option<MinorVersion> {
        self.kubernetes
            .iter()
            .filter(|r| r.availability.first().is_some_and(|t| t <= now))
            .map(|r| r.version.minor_version())
            .max()
    }

    /// Whether `minor` is an LTS minor: one of its releases is LTS-eligible, or the calendar lists
    /// none of its releases (every supported minor is LTS-eligible by default, aks-models.md §3).
    pub fn is_lts_minor(&self, minor: MinorVersion) -> bool {
        let mut releases = self.kubernetes.iter().filter(|r| r.version.minor_version() == minor).peekable();
        releases.peek().is_none() || releases.any(|r| r.lts_eligible)
    }

    pub fn kubernetes_release(&self, version: KubernetesVersion) -> Option<&KubernetesRelease> {
        self.kubernetes.binary_search_by(|r| r.version.cmp(&version)).ok().map(|i| &self.kubernetes[i])
    }

    /// When `version` reaches `region` (`None`: never).
    pub fn kubernetes_available_at(&self, version: KubernetesVersion, region: &str) -> Option<Time> {
        self.read_kubernetes_availability(version, |a| a.at(region))
    }

    /// The instant from which `version` is available in every region, when there is one (a release
    /// without per-region times; see [`kubernetes_available_at`](Self::kubernetes_available_at)).
    pub fn kubernetes_everywhere_at(&self, version: KubernetesVersion) -> Option<Time> {
        self.read_kubernetes_availability(version, |a| a.regions.is_empty().then_some(a.default).flatten())
    }

    /// `read` of the availability of `version`: its release's, or, for a version the calendar does
    /// not list, "always" when unlisted versions count as released and "never" otherwise.
    fn read_kubernetes_availability(
        &self,
        version: KubernetesVersion,
        read: impl Fn(&Availability) -> Option<Time>,
    ) -> Option<Time> {
        match self.kubernetes_release(version) {
            Some(release) => read(&release.availability),
            None if self.kubernetes_implicit => read(&Availability::always()),
            None => None,
        }
    }

    pub fn image_release(&self, version: &NodeImageVersion) -> Option<&ImageRelease> {
        let list = self.images.get(version.family())?;
        // Sorted by version within the family.
        let i = list.binary_search_by(|r| r.version.compare(version).unwrap_or(std::cmp::Ordering::Less)).ok()?;
        Some(&list[i])
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
