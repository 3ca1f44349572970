//! A generated release stream over the horizon (the auto-upgrade issue, §1; aks-models.md §2.2–2.5,
//! §3): Linux node images about weekly, Windows images monthly around the 10th–17th, Kubernetes
//! patches about monthly per supported minor, a new minor about every four months with the N−2
//! support window (LTS minors keep getting patches for a year after leaving it), and a holiday
//! freeze from late October to early January. Every release reaches the regions through the
//! rollout model.
//!
//! The stream is drawn once per scenario seed (replications see the same releases; the rollout of each
//! release is drawn again per replication like any other `released` release).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, NaiveDate};
use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Duration, Purpose, SeedTree, Stream, Time, name_key};
use crate::fleet::{KubernetesVersion, Member, NodeImageVersion};
use crate::world::rollout::RolloutRelease;
use crate::world::{Availability, DurationDist, ImageRelease, KubernetesRelease, ReleaseCalendar};

use super::ctx::Ctx;
use super::dto::DurationDistSchema;
use super::problem::{echo, join};
use super::releases::series_version;

/// `releases.stream`: releases generated from the scenario start to `until`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseStreamDto {
    /// Last release time (RFC 3339 or an offset). Default: the end of the horizon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Kubernetes minors and patches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<KubernetesStreamDto>,
    /// Linux node images (one build for every Linux family, aks-models.md §2.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux_images: Option<LinuxImageStreamDto>,
    /// Windows node images, monthly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows_images: Option<WindowsImageStreamDto>,
    /// No release from 25 October to 6 January (aks-models.md §2.2); a release that would fall inside
    /// ships on 6 January. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holiday_freeze: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubernetesStreamDto {
    /// The latest patch of each supported minor at the start, oldest first (the last is N), e.g.
    /// `["1.31.9", "1.32.6", "1.33.2"]`; they are released everywhere before the start.
    pub current: Vec<String>,
    /// Time between patches of one minor. Default `{"median": "30d", "p90": "45d"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub patch_every: Option<Value>,
    /// Time between minors. Default `{"median": "120d", "p90": "140d"}` (three a year).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub minor_every: Option<Value>,
    /// When the next minor ships (RFC 3339 or an offset). Default: drawn from `minorEvery`, counted
    /// from half a period before the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_minor: Option<String>,
    /// How long a minor keeps getting (LTS) patches after leaving the N−2 window. Default `365d`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lts_for: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinuxImageStreamDto {
    /// Families that get each build. Default: the Linux families of the fleet's pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub families: Option<Vec<String>>,
    /// Time between builds. Default `{"median": "11d", "p90": "16d"}` (measured, aks-models.md §2.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub every: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowsImageStreamDto {
    /// Families released monthly. Default: the Windows families of the fleet's pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub families: Option<Vec<String>>,
    /// Days of the month a release falls on, inclusive. Default `[10, 17]` (Patch Tuesday cadence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<[u32; 2]>,
}

/// The freeze rule: a time inside [25 Oct, 6 Jan) moves to 6 January 00:00 UTC.
fn after_freeze(t: Time, freeze: bool) -> Time {
    if !freeze {
        return t;
    }
    let date = t.to_datetime().date_naive();
    let (month, day) = (date.month(), date.day());
    let in_freeze = (month == 10 && day >= 25) || month == 11 || month == 12 || (month == 1 && day < 6);
    if !in_freeze {
        return t;
    }
    let year = if month == 1 { date.year() } else { date.year() + 1 };
    let end = NaiveDate::from_ymd_opt(year, 1, 6).expect("6 January exists").and_hms_opt(0, 0, 0).expect("midnight");
    Time(end.and_utc().timestamp())
}

fn rollout(released: Time) -> Option<RolloutRelease> {
    Some(RolloutRelease { released, pause: None })
}

fn dist(ctx: &mut Ctx, value: &Option<Value>, path: &str, median_days: i64, p90_days: i64) -> DurationDist {
    let default = DurationDist::log_normal(Duration::days(median_days), Duration::days(p90_days));
    match value {
        None => default,
        Some(v) => match ctx.dist(v, path) {
            Some(d) if d.median() >= Duration::days(1) => d,
            Some(_) => {
                ctx.err(path, "releases of one train are at least 1d apart");
                default
            }
            None => default,
        },
    }
}

/// A gap of at least one day.
fn gap(d: &DurationDist, rng: &mut Stream) -> Duration {
    d.sample(rng).max(Duration::days(1))
}

/// Adds the stream's releases to the calendar (their rollout is drawn by the caller).
pub(crate) fn add_stream(
    ctx: &mut Ctx,
    dto: &ReleaseStreamDto,
    calendar: &mut ReleaseCalendar,
    fleet: &[Member],
    horizon_end: Time,
    seed: u64,
) {
    let path = "/releases/stream";
    let start = ctx.start;
    let until = match &dto.until {
        None => horizon_end,
        Some(t) => ctx.time(t, &join(path, "until")).unwrap_or(horizon_end),
    };
    let freeze = dto.holiday_freeze.unwrap_or(true);
    let tree = SeedTree::new(seed, 0);
    if let Some(k) = &dto.kubernetes {
        kubernetes_stream(ctx, k, calendar, &join(path, "kubernetes"), start, until, freeze, &tree);
    }
    let families = |windows: bool| -> BTreeSet<String> {
        fleet
            .iter()
            .flat_map(|m| &m.node_pools)
            .filter(|p| p.os_sku.is_windows() == windows)
            .map(|p| p.image_family.to_string())
            .collect()
    };
    if let Some(l) = &dto.linux_images {
        let p = join(path, "linuxImages");
        let families = l.families.clone().map_or_else(|| families(false), |f| f.into_iter().collect());
        check_families(ctx, &families, false, &join(&p, "families"));
        let every = dist(ctx, &l.every, &join(&p, "every"), 11, 16);
        let mut rng = tree.stream(Purpose::ReleaseStream, [name_key("linux-images"), 0, 0]);
        let mut t = after_freeze(start + gap(&every, &mut rng), freeze);
        while t <= until {
            for family in &families {
                push_image(calendar, family, t);
            }
            t = after_freeze(t + gap(&every, &mut rng), freeze);
        }
    }
    if let Some(w) = &dto.windows_images {
        let p = join(path, "windowsImages");
        let families = w.families.clone().map_or_else(|| families(true), |f| f.into_iter().collect());
        check_families(ctx, &families, true, &join(&p, "families"));
        let [first, last] = w.days.unwrap_or([10, 17]);
        if !(1..=28).contains(&first) || !(first..=28).contains(&last) {
            ctx.err(join(&p, "days"), "days are [first, last] with 1 ≤ first ≤ last ≤ 28");
            return;
        }
        for family in &families {
            let mut rng = tree.stream(Purpose::ReleaseStream, [name_key(family), 1, 0]);
            let mut month = start.to_datetime().date_naive().with_day(1).expect("day 1 exists");
            let mut last_release = None;
            loop {
                let day = rng.random_range(first..=last);
                let date = month.with_day(day).expect("days ≤ 28 exist in every month");
                let t = after_freeze(Time(date.and_hms_opt(0, 0, 0).expect("midnight").and_utc().timestamp()), freeze);
                if t > until {
                    break;
                }
                if t > start && last_release != Some(t) {
                    push_image(calendar, family, t);
                    last_release = Some(t);
                }
                month = month.checked_add_months(chrono::Months::new(1)).expect("within chrono's range");
            }
        }
    }
}

fn check_families(ctx: &mut Ctx, families: &BTreeSet<String>, windows: bool, path: &str) {
    for family in families {
        let probe = series_version(family, ctx.start).and_then(|v| NodeImageVersion::parse(&v).ok());
        match probe {
            Some(v) if v.is_windows() == windows => {}
            _ => ctx.err(
                path,
                format!("{} is not a {} image family", echo(family), if windows { "Windows" } else { "Linux" }),
            ),
        }
    }
}

fn push_image(calendar: &mut ReleaseCalendar, family: &str, t: Time) {
    let Some(version) = series_version(family, t).and_then(|v| NodeImageVersion::parse(&v).ok()) else { return };
    let list = calendar.images.entry(family.to_string()).or_default();
    if list.iter().any(|r| r.version == version) {
        return;
    }
    list.push(ImageRelease { version, published: t, availability: Availability::default(), rollout: rollout(t) });
}

#[allow(clippy::too_many_arguments)]
fn kubernetes_stream(
    ctx: &mut Ctx,
    dto: &KubernetesStreamDto,
    calendar: &mut ReleaseCalendar,
    path: &str,
    start: Time,
    until: Time,
    freeze: bool,
    tree: &SeedTree,
) {
    let mut current: Vec<KubernetesVersion> = Vec::new();
    for (i, text) in dto.current.iter().enumerate() {
        match KubernetesVersion::parse(text) {
            Ok(v) => current.push(v),
            Err(e) => ctx.err(join(&join(path, "current"), i), e),
        }
    }
    if current.is_empty() {
        ctx.err(join(path, "current"), "list the latest patch of each supported minor, e.g. [\"1.32.6\", \"1.33.2\"]");
        return;
    }
    current.sort();
    let patch_every = dist(ctx, &dto.patch_every, &join(path, "patchEvery"), 30, 45);
    let minor_every = dist(ctx, &dto.minor_every, &join(path, "minorEvery"), 120, 140);
    let lts_for = match &dto.lts_for {
        None => Duration::days(365),
        Some(t) => ctx.duration(t, &join(path, "ltsFor")).unwrap_or(Duration::days(365)),
    };
    let mut minor_rng = tree.stream(Purpose::ReleaseStream, [name_key("kubernetes-minors"), 0, 0]);
    let mut next_minor = match &dto.next_minor {
        Some(t) => ctx.time(t, &join(path, "nextMinor")).unwrap_or(start),
        None => start + Duration(gap(&minor_every, &mut minor_rng).as_seconds() / 2),
    };
    next_minor = after_freeze(next_minor, freeze);
    // Per minor: latest patch, when its next patch is due, and when it stops getting patches.
    struct Train {
        latest: KubernetesVersion,
        next: Time,
        ends: Option<Time>,
        rng: Stream,
    }
    let mut trains: BTreeMap<(u32, u32), Train> = BTreeMap::new();
    let before = Availability { default: Some(start - Duration::days(1)), regions: BTreeMap::new(), anywhere: None };
    let add = |calendar: &mut ReleaseCalendar, version: KubernetesVersion, released: Option<Time>| {
        if calendar.kubernetes.iter().any(|r| r.version == version) {
            return;
        }
        calendar.kubernetes.push(KubernetesRelease {
            version,
            availability: if released.is_some() { Availability::default() } else { before.clone() },
            rollout: released.and_then(rollout),
            lts_eligible: true,
        });
    };
    let new_train = |version: KubernetesVersion, from: Time| {
        let mut rng = tree.stream(Purpose::ReleaseStream, [name_key(&version.minor_version().to_string()), 2, 0]);
        let next = after_freeze(from + gap(&patch_every, &mut rng), freeze);
        Train { latest: version, next, ends: None, rng }
    };
    for v in &current {
        add(calendar, *v, None);
        trains.insert(
            (v.major, v.minor),
            new_train(*v, start - Duration(gap(&patch_every, &mut minor_rng).as_seconds() / 2)),
        );
    }
    let supported = current.len().clamp(1, 3);
    loop {
        // The earliest next event: a patch of some minor, or the next minor.
        let patch = trains.iter().filter(|(_, t)| t.ends.is_none_or(|e| t.next <= e)).map(|(k, t)| (t.next, *k)).min();
        let next = match patch {
            Some((t, _)) if t < next_minor => t,
            _ => next_minor,
        };
        if next > until {
            break;
        }
        if next == next_minor && patch.is_none_or(|(t, _)| t >= next_minor) {
            let newest = trains.keys().next_back().copied().expect("at least one minor");
            let version = KubernetesVersion::new(newest.0, newest.1 + 1, 1);
            add(calendar, version, Some(next_minor));
            trains.insert((version.major, version.minor), new_train(version, next_minor));
            // The minor that falls out of N−2 keeps LTS patches for `lts_for`.
            let in_support: Vec<(u32, u32)> =
                trains.iter().filter(|(_, t)| t.ends.is_none()).map(|(k, _)| *k).collect();
            if in_support.len() > supported {
                for key in &in_support[..in_support.len() - supported] {
                    if let Some(t) = trains.get_mut(key) {
                        t.ends = Some(next_minor + lts_for);
                    }
                }
            }
            next_minor = after_freeze(next_minor + gap(&minor_every, &mut minor_rng), freeze);
        } else if let Some((t, key)) = patch {
            let train = trains.get_mut(&key).expect("the train exists");
            let version = KubernetesVersion::new(train.latest.major, train.latest.minor, train.latest.patch + 1);
            train.latest = version;
            train.next = after_freeze(t + gap(&patch_every, &mut train.rng), freeze);
            add(calendar, version, Some(t));
        }
    }
    calendar.kubernetes.sort_by_key(|r| r.version);
    calendar.kubernetes_implicit = false;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_freeze_moves_releases_to_the_sixth_of_january() {
        let t = |s| Time::parse_rfc3339(s).unwrap();
        assert_eq!(after_freeze(t("2026-10-24T12:00:00Z"), true), t("2026-10-24T12:00:00Z"));
        assert_eq!(after_freeze(t("2026-10-25T00:00:00Z"), true), t("2027-01-06T00:00:00Z"));
        assert_eq!(after_freeze(t("2026-12-31T23:00:00Z"), true), t("2027-01-06T00:00:00Z"));
        assert_eq!(after_freeze(t("2027-01-05T23:59:00Z"), true), t("2027-01-06T00:00:00Z"));
        assert_eq!(after_freeze(t("2027-01-06T00:00:00Z"), true), t("2027-01-06T00:00:00Z"));
        assert_eq!(after_freeze(t("2026-11-10T00:00:00Z"), false), t("2026-11-10T00:00:00Z"));
    }
}
