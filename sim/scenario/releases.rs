//! The `releases` section: Kubernetes versions and node images with per-region availability.
//!
//! Without a `releases` section every Kubernetes version is available everywhere, and each image
//! family's newest version named anywhere in the scenario (pools, custom selections) is its latest
//! release, available everywhere.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::Time;
use crate::fleet::{KubernetesVersion, Member, NodeImageVersion};
use crate::world::{Availability, ImageRelease, KubernetesRelease, ReleaseCalendar};

use super::build::Ctx;
use super::dto::ScenarioDto;
use super::problem::join;

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleasesDto {
    /// Kubernetes versions. When given, runs may only target listed versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<Vec<KubernetesReleaseDto>>,
    /// Node image versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_images: Option<Vec<ImageReleaseDto>>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubernetesReleaseDto {
    pub version: String,
    /// When it reaches each region. Default: everywhere from the start of time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<AvailabilityDto>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageReleaseDto {
    pub version: String,
    /// Publication (the 90-day validity counts from here). Default: the first availability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<AvailabilityDto>,
}

/// A time everywhere (`"2026-03-05T00:00:00Z"` or `"+3d"`), or `{"default": ..., "regions": {...}}`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AvailabilityDto {
    Everywhere(String),
    PerRegion {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
        #[serde(default)]
        regions: BTreeMap<String, String>,
    },
}

pub(crate) fn lists_kubernetes(releases: &Value) -> bool {
    releases.get("kubernetes").is_some_and(|k| k.is_array())
}

pub(crate) fn mentions_kubernetes(releases: &Value, version: KubernetesVersion) -> bool {
    releases.get("kubernetes").and_then(|k| k.as_array()).is_some_and(|list| {
        list.iter().any(|r| {
            r.get("version").and_then(|v| v.as_str()).and_then(|v| KubernetesVersion::parse(v).ok()) == Some(version)
        })
    })
}

fn availability(ctx: &mut Ctx, dto: &Option<AvailabilityDto>, path: &str) -> Availability {
    match dto {
        None => Availability::always(),
        Some(AvailabilityDto::Everywhere(t)) => Availability { default: ctx.time(t, path), regions: BTreeMap::new() },
        Some(AvailabilityDto::PerRegion { default, regions }) => Availability {
            default: default.as_ref().and_then(|t| ctx.time(t, &join(path, "default"))),
            regions: regions
                .iter()
                .filter_map(|(r, t)| ctx.time(t, &join(&join(path, "regions"), r)).map(|t| (r.clone(), t)))
                .collect(),
        },
    }
}

pub(crate) fn build_releases(
    ctx: &mut Ctx,
    value: Option<&Value>,
    fleet: &[Member],
    scenario: &ScenarioDto,
    _seed: u64,
) -> ReleaseCalendar {
    let dto: ReleasesDto = match value {
        None => ReleasesDto::default(),
        Some(v) => match serde_json::from_value(v.clone()) {
            Ok(d) => d,
            Err(e) => {
                ctx.err("/releases", format!("invalid releases: {e}"));
                return ReleaseCalendar::default();
            }
        },
    };
    let mut calendar = ReleaseCalendar { kubernetes_implicit: dto.kubernetes.is_none(), ..ReleaseCalendar::default() };
    for (i, r) in dto.kubernetes.iter().flatten().enumerate() {
        let p = join("/releases/kubernetes", i);
        let Ok(version) = KubernetesVersion::parse(&r.version).map_err(|e| ctx.err(join(&p, "version"), e)) else {
            continue;
        };
        let availability = availability(ctx, &r.available, &join(&p, "available"));
        calendar.kubernetes.push(KubernetesRelease { version, availability });
    }
    calendar.kubernetes.sort_by_key(|r| r.version);
    match &dto.node_images {
        Some(list) => {
            for (i, r) in list.iter().enumerate() {
                let p = join("/releases/nodeImages", i);
                let Ok(version) = NodeImageVersion::parse(&r.version).map_err(|e| ctx.err(join(&p, "version"), e))
                else {
                    continue;
                };
                let availability = availability(ctx, &r.available, &join(&p, "available"));
                let published = match &r.published {
                    Some(t) => ctx.time(t, &join(&p, "published")).unwrap_or(ctx.start),
                    None => availability.first().map_or(ctx.start, |t| t.max(Time(ctx.start.0 - 365 * 86_400))),
                };
                calendar.images.entry(version.family().to_string()).or_default().push(ImageRelease {
                    version,
                    published,
                    availability,
                });
            }
        }
        None => implicit_images(&mut calendar, fleet, scenario, ctx.start),
    }
    for releases in calendar.images.values_mut() {
        releases.sort_by(|a, b| a.version.compare(&b.version).expect("one family per list"));
    }
    calendar
}

/// The newest version named anywhere in the scenario is each family's latest release.
fn implicit_images(calendar: &mut ReleaseCalendar, fleet: &[Member], scenario: &ScenarioDto, start: Time) {
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
        calendar
            .images
            .insert(family, vec![ImageRelease { version, published: start, availability: Availability::always() }]);
    }
}
