//! The `releases` section: Kubernetes versions and node images, each with a per-region availability
//! time (SEMANTICS §5.5c, §8; aks-models.md §2).
//!
//! A release is given either with explicit availability (`available`: one time everywhere, or per
//! region) or with the time it was `released`, which the regional rollout model (`rollout`, default
//! aks-models.md §2.4) spreads over the regions. `nodeImageSeries` generates a family's release
//! train (a release every `every`), each release spread the same way.
//!
//! Without a `releases` section every Kubernetes version is available everywhere, and each image
//! family's newest version named anywhere in the scenario (pools, custom selections) is its latest
//! release, available everywhere.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Duration, SeedTree, Time};
use crate::fleet::{KubernetesVersion, Member, NodeImageVersion};
use crate::world::rollout::{ForcedPause, PauseModel, Ring, RolloutModel, RolloutRelease};
use crate::world::{Availability, ImageRelease, KubernetesRelease, ReleaseCalendar};

use super::ctx::{Ctx, is_region_name};
use super::dto::{DurationDistSchema, ScenarioDto};
use super::problem::{echo, join};

/// Releases with their regional availability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleasesDto {
    /// How releases given with `released` reach the regions. Default: five rings over about 12 days
    /// (aks-models.md §2.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutDto>,
    /// Kubernetes versions. When given, runs may only target listed versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<Vec<KubernetesReleaseDto>>,
    /// Node image versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_images: Option<Vec<ImageReleaseDto>>,
    /// Node image release trains: one release of a family every `every`, each spread by `rollout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_series: Option<Vec<ImageSeriesDto>>,
    /// A generated release stream over the horizon (Kubernetes patches and minors, Linux and Windows
    /// images, the holiday freeze), each release spread by `rollout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<super::stream::ReleaseStreamDto>,
}

/// The regional rollout model (aks-models.md §2.3–2.4).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutDto {
    /// Rings in rollout order. Default: canary (day 0), pilot (1–2), early (3), medium (5–6), heavy
    /// (8–10) with the regions of aks-models.md §2.4. A region no ring lists rolls out with the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rings: Option<Vec<RingDto>>,
    /// Each region lags its ring by a uniform draw from 0 to this. Default `2d`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<String>,
    /// A wave that pauses: with `probability` per release, one ring (not the first) and every later
    /// one wait `duration` longer. Default `{"probability": 0.075, "duration": {"min": "3d", "max": "7d"}}`;
    /// `{"probability": 0}` turns pauses off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<PauseDto>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RingDto {
    pub name: String,
    /// Region names of this ring.
    pub regions: Vec<String>,
    /// When the ring starts after the release: `"3d"` or a distribution such as
    /// `{"min": "5d", "max": "6d"}`, drawn per release.
    #[schemars(with = "DurationDistSchema")]
    pub offset: Value,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PauseDto {
    /// Probability 0–1 that a release's rollout pauses once.
    pub probability: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub duration: Option<Value>,
}

/// A pause scripted for one release: ring `beforeRing` and every later one start `duration` late.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleasePauseDto {
    /// The name of the first ring that waits.
    pub before_ring: String,
    pub duration: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubernetesReleaseDto {
    /// `major.minor.patch`.
    pub version: String,
    /// When it reaches each region (exclusive with `released`). Default: everywhere from the start
    /// of time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<AvailabilityDto>,
    /// When its rollout starts: the rollout model spreads it over the regions (RFC 3339 or an offset
    /// from the scenario start such as `"+2d"` or `"-10d"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released: Option<String>,
    /// A scripted pause of this release's rollout (with `released`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<ReleasePauseDto>,
    /// Long-term-support clusters may skip minor versions only to an LTS-eligible release. Default
    /// true ("any supported version is LTS-eligible", aks-models.md §3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lts_eligible: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageReleaseDto {
    /// `<gallery>-<definition>-<version>` (aks-models.md §2.5).
    pub version: String,
    /// Publication: images stay valid 90 days from here (SEMANTICS §8). Default: `released`, else
    /// the first explicit availability, else the scenario start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// When it reaches each region (exclusive with `released`). Default: everywhere from the start
    /// of time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<AvailabilityDto>,
    /// When its rollout starts: the rollout model spreads it over the regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released: Option<String>,
    /// A scripted pause of this release's rollout (with `released`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<ReleasePauseDto>,
}

/// A node image release train. Versions follow aks-models.md §2.5 from the release date: Linux
/// families `YYYYMM.DD.0`; Windows families `<OS build>.<revision>.<YYMMDD>` (build 17763, 20348,
/// 25398 or 26100 from the family name; the revision counts days since 2021-01-01).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageSeriesDto {
    /// Image family, e.g. `AKSUbuntu-2204gen2containerd`, `AKSAzureLinux-V3gen2`,
    /// `AKSWindows-2022-containerd`.
    pub family: String,
    /// Release time of the first image (RFC 3339 or an offset such as `"-60d"`).
    pub first: String,
    /// Time between releases, at least `1d`. Default `7d` (Linux weekly, aks-models.md §2.2; use
    /// `"28d"` or so for Windows' monthly images).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// Number of releases, 1–1000.
    pub count: i64,
}

/// A time everywhere (`"2026-03-05T00:00:00Z"` or `"+3d"`), or `{"default": ..., "regions": {...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AvailabilityDto {
    Everywhere(String),
    PerRegion(PerRegionDto),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerRegionDto {
    /// Regions not listed; absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default)]
    pub regions: BTreeMap<String, String>,
}

pub(crate) fn lists_kubernetes(releases: &ReleasesDto) -> bool {
    releases.kubernetes.is_some()
}

pub(crate) fn mentions_kubernetes(releases: &ReleasesDto, version: KubernetesVersion) -> bool {
    releases.kubernetes.iter().flatten().any(|r| KubernetesVersion::parse(&r.version).ok() == Some(version))
}

fn availability(ctx: &mut Ctx, dto: &Option<AvailabilityDto>, path: &str) -> Availability {
    match dto {
        None => Availability::always(),
        Some(AvailabilityDto::Everywhere(t)) => {
            Availability { default: ctx.time(t, path), regions: BTreeMap::new(), anywhere: None }
        }
        Some(AvailabilityDto::PerRegion(per_region)) => Availability {
            default: per_region.default.as_ref().and_then(|t| ctx.time(t, &join(path, "default"))),
            regions: per_region
                .regions
                .iter()
                .filter_map(|(r, t)| ctx.time(t, &join(&join(path, "regions"), r)).map(|t| (r.clone(), t)))
                .collect(),
            anywhere: None,
        },
    }
}

fn rollout_model(ctx: &mut Ctx, dto: Option<&RolloutDto>) -> RolloutModel {
    let mut model = RolloutModel::default();
    let Some(dto) = dto else { return model };
    let p = "/releases/rollout";
    if let Some(rings) = &dto.rings {
        if rings.is_empty() {
            ctx.err(join(p, "rings"), "give at least one ring (or omit rings for the default ones)");
        }
        let mut names = BTreeSet::new();
        let mut placed: BTreeMap<&str, String> = BTreeMap::new();
        model.rings = rings
            .iter()
            .enumerate()
            .map(|(i, ring)| {
                let rp = join(&join(p, "rings"), i);
                if ring.name.is_empty() || !names.insert(ring.name.as_str()) {
                    ctx.err(join(&rp, "name"), format!("ring name {} is empty or used twice", echo(&ring.name)));
                }
                for (k, region) in ring.regions.iter().enumerate() {
                    let region_path = join(&join(&rp, "regions"), k);
                    if !is_region_name(region) {
                        ctx.err(
                            &region_path,
                            format!("{} is not an Azure region name like \"westeurope\"", echo(region)),
                        );
                    } else if let Some(previous) = placed.insert(region, region_path.clone()) {
                        ctx.err(&region_path, format!("region {} is already in a ring at {previous}", echo(region)));
                    }
                }
                let offset =
                    ctx.dist(&ring.offset, &join(&rp, "offset")).unwrap_or(DurationDist::Fixed(Duration::ZERO));
                Ring { name: ring.name.clone(), regions: ring.regions.clone(), offset }
            })
            .collect();
    }
    if let Some(jitter) = &dto.jitter
        && let Some(d) = ctx.duration(jitter, &join(p, "jitter"))
    {
        model.jitter = d;
    }
    if let Some(pause) = &dto.pause {
        let pp = join(p, "pause");
        let probability = ctx.probability(pause.probability, &join(&pp, "probability"));
        let duration = match &pause.duration {
            Some(v) => ctx.dist(v, &join(&pp, "duration")),
            None => model.pause.as_ref().map(|m| m.duration),
        };
        model.pause = (probability > 0.0)
            .then(|| PauseModel { probability, duration: duration.unwrap_or(DurationDist::Fixed(Duration::ZERO)) });
    }
    model
}

/// `released` and `pause` of one release → its rollout spec; `None` when it has explicit
/// availability.
fn rollout_release(
    ctx: &mut Ctx,
    model: &RolloutModel,
    released: &Option<String>,
    available: &Option<AvailabilityDto>,
    pause: &Option<ReleasePauseDto>,
    path: &str,
) -> Option<RolloutRelease> {
    if released.is_some() && available.is_some() {
        ctx.err(join(path, "released"), "give either released (spread by the rollout model) or available, not both");
    }
    if released.is_none() && pause.is_some() {
        ctx.err(join(path, "pause"), "a scripted pause needs released (it shapes the rollout model's spread)");
    }
    let released = ctx.time(released.as_ref()?, &join(path, "released"))?;
    let pause = pause.as_ref().and_then(|p| {
        let pp = join(path, "pause");
        let before_ring = model.rings.iter().position(|r| r.name == p.before_ring);
        if before_ring.is_none() {
            let names: Vec<&str> = model.rings.iter().map(|r| r.name.as_str()).collect();
            ctx.err(
                join(&pp, "beforeRing"),
                format!("no rollout ring {}; the rings are {}", echo(&p.before_ring), super::ctx::quoted(&names)),
            );
        }
        let duration = ctx.duration(&p.duration, &join(&pp, "duration"));
        Some(ForcedPause { before_ring: before_ring?, duration: duration? })
    });
    Some(RolloutRelease { released, pause })
}

use crate::world::DurationDist;

/// The calendar of the `releases` section; rollout releases are drawn for replication 0 of `seed`
/// over `regions` (those of the fleet; any other region gets the latest of their times).
pub(crate) fn build_releases(
    ctx: &mut Ctx,
    dto: Option<&ReleasesDto>,
    regions: BTreeSet<String>,
    seed: u64,
) -> ReleaseCalendar {
    let default_dto = ReleasesDto::default();
    let dto = dto.unwrap_or(&default_dto);
    let rollout = rollout_model(ctx, dto.rollout.as_ref());
    let mut calendar = ReleaseCalendar { kubernetes_implicit: dto.kubernetes.is_none(), ..ReleaseCalendar::default() };
    for (i, r) in dto.kubernetes.iter().flatten().enumerate() {
        let p = join("/releases/kubernetes", i);
        let Ok(version) = KubernetesVersion::parse(&r.version).map_err(|e| ctx.err(join(&p, "version"), e)) else {
            continue;
        };
        let spec = rollout_release(ctx, &rollout, &r.released, &r.available, &r.pause, &p);
        let availability = availability(ctx, &r.available, &join(&p, "available"));
        calendar.kubernetes.push(KubernetesRelease {
            version,
            availability,
            rollout: spec,
            lts_eligible: r.lts_eligible.unwrap_or(true),
        });
    }
    calendar.kubernetes.sort_by_key(|r| r.version);
    for pair in calendar.kubernetes.windows(2) {
        if pair[0].version == pair[1].version {
            ctx.err("/releases/kubernetes", format!("Kubernetes version {} is listed twice", pair[0].version));
        }
    }
    for (i, r) in dto.node_images.iter().flatten().enumerate() {
        let p = join("/releases/nodeImages", i);
        let Ok(version) = NodeImageVersion::parse(&r.version).map_err(|e| ctx.err(join(&p, "version"), e)) else {
            continue;
        };
        let spec = rollout_release(ctx, &rollout, &r.released, &r.available, &r.pause, &p);
        let availability = availability(ctx, &r.available, &join(&p, "available"));
        let published = match (&r.published, &spec) {
            (Some(t), _) => ctx.time(t, &join(&p, "published")).unwrap_or(ctx.start),
            (None, Some(spec)) => spec.released,
            // "Available since forever" says nothing about age: treat such an image as fresh.
            (None, None) => {
                availability.first().filter(|t| *t > Availability::always().default.unwrap()).unwrap_or(ctx.start)
            }
        };
        calendar.images.entry(version.family().to_string()).or_default().push(ImageRelease {
            version,
            published,
            availability,
            rollout: spec,
        });
    }
    for (i, series) in dto.node_image_series.iter().flatten().enumerate() {
        image_series(ctx, &mut calendar, series, &join("/releases/nodeImageSeries", i));
    }
    for (family, releases) in &mut calendar.images {
        releases.sort_by(|a, b| a.version.compare(&b.version).expect("one family per list"));
        for pair in releases.windows(2) {
            if pair[0].version == pair[1].version {
                ctx.err(
                    "/releases",
                    format!("node image version {} of family {family} is listed twice", pair[0].version),
                );
            }
        }
    }
    // Only the fleet's regions are ever asked about, and when a release is out anywhere (which
    // `RolloutModel::spread` finds from the first rings alone): drawing every region would cost
    // every replication a stream per release and region for nothing.
    calendar.rollout_regions = regions.into_iter().collect();
    calendar.rollout = rollout;
    calendar.realize(SeedTree::new(seed, 0));
    calendar
}

/// The Windows Server build of a Windows image family (aks-models.md §2.5).
fn windows_build(family: &str) -> Option<u32> {
    [("2019", 17763), ("2022", 20348), ("23H2", 25398), ("2025", 26100)]
        .iter()
        .find(|(name, _)| family.contains(name))
        .map(|(_, build)| *build)
}

/// The version string of an image of `family` released at `t` (aks-models.md §2.5 formats).
pub(crate) fn series_version(family: &str, t: Time) -> Option<String> {
    let date = t.to_datetime().date_naive();
    if family.starts_with("AKSWindows") {
        let build = windows_build(family)?;
        let base = NaiveDate::from_ymd_opt(2021, 1, 1)?;
        let revision = (date - base).num_days().max(0);
        Some(format!("{family}-{build}.{revision}.{:02}{:02}{:02}", date.year() % 100, date.month(), date.day()))
    } else {
        Some(format!("{family}-{}{:02}.{:02}.0", date.year(), date.month(), date.day()))
    }
}

fn image_series(ctx: &mut Ctx, calendar: &mut ReleaseCalendar, dto: &ImageSeriesDto, path: &str) {
    let before = ctx.problems.len();
    if NodeImageVersion::parse(&format!("{}-1.0", dto.family)).is_err() || dto.family.ends_with('-') {
        ctx.err(
            join(path, "family"),
            format!("{} is not an image family like \"AKSUbuntu-2204gen2containerd\"", echo(&dto.family)),
        );
    } else if dto.family.starts_with("AKSWindows") && windows_build(&dto.family).is_none() {
        ctx.err(
            join(path, "family"),
            format!("Windows family {} names no known OS build (2019, 2022, 23H2 or 2025)", echo(&dto.family)),
        );
    }
    let first = ctx.time(&dto.first, &join(path, "first"));
    let every = match &dto.every {
        None => Some(Duration::days(7)),
        Some(text) => ctx.duration(text, &join(path, "every")),
    };
    if every.is_some_and(|e| e < Duration::days(1)) {
        ctx.err(join(path, "every"), "releases of one series are at least 1d apart");
    }
    if !(1..=1000).contains(&dto.count) {
        ctx.err(join(path, "count"), format!("{} releases: a series has 1–1000", dto.count));
    }
    if ctx.problems.len() > before {
        return;
    }
    let (Some(first), Some(every)) = (first, every) else { return };
    for k in 0..dto.count {
        let released = first + Duration(every.as_seconds() * k);
        let Some(text) = series_version(&dto.family, released) else { continue };
        let Ok(version) = NodeImageVersion::parse(&text) else { continue };
        calendar.images.entry(dto.family.clone()).or_default().push(ImageRelease {
            version,
            published: released,
            availability: Availability::default(),
            rollout: Some(RolloutRelease { released, pause: None }),
        });
    }
}

/// Without `nodeImages` and `nodeImageSeries`, the newest version named anywhere in the scenario
/// is each family's latest release, available everywhere and published at the scenario start.
pub(crate) fn add_implicit_images(
    calendar: &mut ReleaseCalendar,
    fleet: &[Member],
    scenario: &ScenarioDto,
    start: Time,
) {
    if scenario.releases.as_ref().is_some_and(|r| r.node_images.is_some() || r.node_image_series.is_some()) {
        return;
    }
    let mut newest: BTreeMap<String, NodeImageVersion> = BTreeMap::new();
    let mut consider = |v: &NodeImageVersion| {
        let entry = newest.entry(v.family().to_string()).or_insert_with(|| v.clone());
        if v.compare(entry).is_some_and(|o| o.is_gt()) {
            *entry = v.clone();
        }
    };
    for member in fleet {
        for pool in &member.node_pools {
            if let Some(v) = &pool.node_image_version {
                consider(v);
            }
        }
    }
    for run in &scenario.update_runs {
        let custom = run
            .managed_cluster_update
            .node_image_selection
            .as_ref()
            .and_then(|s| s.custom_node_image_versions.as_ref());
        for v in custom.into_iter().flatten() {
            if let Ok(v) = NodeImageVersion::parse(&v.version) {
                consider(&v);
            }
        }
    }
    for (family, version) in newest {
        calendar.images.insert(
            family,
            vec![ImageRelease { version, published: start, availability: Availability::always(), rollout: None }],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_versions_follow_the_aks_formats() {
        let t = Time::parse_rfc3339("2026-03-05T00:00:00Z").unwrap();
        assert_eq!(
            series_version("AKSUbuntu-2204gen2containerd", t).unwrap(),
            "AKSUbuntu-2204gen2containerd-202603.05.0"
        );
        assert_eq!(
            series_version("AKSWindows-2022-containerd", t).unwrap(),
            "AKSWindows-2022-containerd-20348.1889.260305"
        );
        assert_eq!(series_version("AKSWindows-2025", t).unwrap(), "AKSWindows-2025-26100.1889.260305");
        assert!(series_version("AKSWindows-nt4", t).is_none());
    }
}
