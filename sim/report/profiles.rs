//! Auto-upgrade outputs (SEMANTICS §9): the index of runs, every member's version history, fleet
//! metrics over time and how long each release took to reach the fleet.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use crate::autoupgrade::released_kubernetes;
use crate::engine::{Duration, Time};
use crate::fleet::{KubernetesVersion, MinorVersion, NodeImageVersion};
use crate::orchestrator::UpdateState;
use crate::simulation::VersionValue;

use super::ReportContext;
use super::rows::Rows;
use super::tables::count_state;

/// Members whose oldest node image is older than this count as running an old image.
pub const OLD_IMAGE_DAYS: i64 = 30;

/// `runs.csv`: one row per run, scenario runs first, then generated ones in generation order.
pub fn runs_csv(ctx: &ReportContext) -> csv::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "run",
        "profile",
        "type",
        "target",
        "start",
        "end",
        "state",
        "members",
        "completed",
        "failed",
        "skipped",
        "failure_count",
    ])?;
    for (run, spec) in ctx.result.runs.iter().zip(&ctx.result.specs) {
        let total: usize = run.stages.iter().flat_map(|s| &s.groups).map(|g| g.members.len()).sum();
        let target = match spec.upgrade.kubernetes_version {
            Some(v) => v.to_string(),
            None if spec.upgrade.security_patch => "security patch".to_string(),
            None => "node image".to_string(),
        };
        w.write_record([
            run.name.clone(),
            spec.auto_upgrade_profile.clone().unwrap_or_default(),
            spec.upgrade.kind.api_name().to_string(),
            target,
            run.start_time.map(|t| t.to_rfc3339()).unwrap_or_default(),
            run.completed_time.map(|t| t.to_rfc3339()).unwrap_or_default(),
            run.state.api_name().to_string(),
            total.to_string(),
            count_state(run, UpdateState::Completed).to_string(),
            count_state(run, UpdateState::Failed).to_string(),
            count_state(run, UpdateState::Skipped).to_string(),
            run.failure_count.to_string(),
        ])?;
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// `versions.csv`: every member's version history (Kubernetes and per-pool node images), written
/// to `out` as it is made.
pub fn write_versions_csv(ctx: &ReportContext, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = Rows::new(out);
    w.row(&["time", "member", "component", "from", "to", "run"])?;
    // A row per change of every member: texts made on the stack or in one reused buffer.
    let mut component = String::new();
    for c in &ctx.result.version_changes {
        component.clear();
        match c.pool_name(&ctx.scenario.fleet) {
            Some(pool) => {
                component.push_str("pool ");
                component.push_str(pool);
            }
            None => component.push_str("kubernetes"),
        }
        c.from.with_text(|from| {
            c.to.with_text(|to| {
                w.row(&[
                    c.time.rfc3339().as_str(),
                    &ctx.scenario.fleet[c.member.index()].name,
                    &component,
                    from,
                    to,
                    &ctx.result.runs[c.run as usize].name,
                ])
            })
        })?;
    }
    w.finish()
}

/// Every member's versions, replayed over time from the initial fleet and the version changes.
struct Replay<'a, 'c> {
    ctx: &'a ReportContext<'c>,
    kubernetes: Vec<KubernetesVersion>,
    /// Per member and pool, when its current image was published (`None`: no image, or one the
    /// calendar does not list): all that the image ages need, looked up once per change.
    published: Vec<Vec<Option<Time>>>,
    /// Per member, the earliest of `published`: its oldest known image, kept as images change
    /// (the fleet's days ask for every member's every day).
    oldest: Vec<Option<Time>>,
    next: usize,
    /// The image of the last change and when it was published: a run gives many members the same
    /// image, one after the other, and the calendar is looked up once for them.
    last_image: Option<(NodeImageVersion, Option<Time>)>,
}

impl<'a, 'c> Replay<'a, 'c> {
    fn new(ctx: &'a ReportContext<'c>) -> Replay<'a, 'c> {
        let releases = &ctx.scenario.releases;
        let published: Vec<Vec<Option<Time>>> = ctx
            .scenario
            .fleet
            .iter()
            .map(|m| {
                m.node_pools
                    .iter()
                    .map(|p| p.node_image_version.as_ref().and_then(|v| releases.image_release(v)).map(|r| r.published))
                    .collect()
            })
            .collect();
        Replay {
            ctx,
            kubernetes: ctx.scenario.fleet.iter().map(|m| m.kubernetes_version).collect(),
            oldest: published.iter().map(|pools| earliest(pools)).collect(),
            published,
            next: 0,
            last_image: None,
        }
    }

    /// Applies every change at or before `t`.
    fn advance_to(&mut self, t: Time) {
        let changes = &self.ctx.result.version_changes;
        while self.next < changes.len() && changes[self.next].time <= t {
            let c = &changes[self.next];
            let m = c.member.index();
            match (&c.pool, &c.to) {
                (None, VersionValue::Kubernetes(v)) => self.kubernetes[m] = *v,
                (Some(pool), VersionValue::NodeImage(v)) => {
                    let published = match &self.last_image {
                        Some((image, published)) if image == v => *published,
                        _ => {
                            let published = self.ctx.scenario.releases.image_release(v).map(|r| r.published);
                            self.last_image = Some((v.clone(), published));
                            published
                        }
                    };
                    self.published[m][*pool] = published;
                    self.oldest[m] = earliest(&self.published[m]);
                }
                _ => {}
            }
            self.next += 1;
        }
    }

    /// Age in days of the member's oldest known pool image at `t` (`None` when unknown): the
    /// largest of its pools' ages, which is the age of the earliest published.
    fn oldest_image_age_days(&self, m: usize, t: Time) -> Option<f64> {
        self.oldest[m].map(|published| (t - published).as_seconds() as f64 / 86_400.0)
    }
}

/// The earliest of the pools' known publication times.
fn earliest(published: &[Option<Time>]) -> Option<Time> {
    published.iter().flatten().min().copied()
}

/// The members' lag behind a channel at `t` (`known`: what [`targets_by`] gives for `t`): how many
/// are behind, and the mean and largest [`days_behind`]. The days depend on a member's version
/// alone, and a fleet has a few versions: worked out once per version, summed in member order.
fn day_lag(known: &[(Time, KubernetesVersion)], versions: &[KubernetesVersion], t: Time) -> DayLag {
    let mut by_version: Vec<(KubernetesVersion, f64)> = Vec::new();
    let lags: Vec<f64> = versions
        .iter()
        .map(|v| match by_version.iter().find(|(seen, _)| seen == v) {
            Some(&(_, lag)) => lag,
            None => {
                let lag = days_behind(known, *v, t);
                by_version.push((*v, lag));
                lag
            }
        })
        .collect();
    DayLag {
        behind: lags.iter().filter(|l| **l > 0.0).count(),
        mean: if lags.is_empty() { 0.0 } else { lags.iter().sum::<f64>() / lags.len() as f64 },
        max: lags.iter().cloned().fold(0.0, f64::max),
    }
}

/// The targets a channel had chosen by `t`: a prefix, as they are recorded in time order.
fn targets_by(targets: &[(Time, KubernetesVersion)], t: Time) -> &[(Time, KubernetesVersion)] {
    debug_assert!(targets.windows(2).all(|w| w[0].0 <= w[1].0), "targets are recorded in time order");
    &targets[..targets.partition_point(|(at, _)| *at <= t)]
}

/// Days since the channel's target first moved beyond `version`, at `t` (0 when at or ahead);
/// `known` is what [`targets_by`] gives for `t`.
fn days_behind(known: &[(Time, KubernetesVersion)], version: KubernetesVersion, t: Time) -> f64 {
    match known.last() {
        Some((_, current)) if *current > version => {
            let mut since = known.last().map(|(at, _)| *at).unwrap_or(t);
            for (at, target) in known.iter().rev() {
                if *target > version {
                    since = *at;
                } else {
                    break;
                }
            }
            (t - since).as_seconds() as f64 / 86_400.0
        }
        _ => 0.0,
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The fleet on one day of the simulation, sampled at the scenario start's time of day: the rows of
/// `fleet-metrics.csv` and `kubernetes-versions.csv`, and the data of the auto-upgrade charts.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetDay {
    pub time: Time,
    /// Members on a minor at most two behind the newest released one.
    pub supported: usize,
    /// Members whose oldest pool image is older than [`OLD_IMAGE_DAYS`].
    pub old_images: usize,
    /// Mean age in days of the members' oldest pool image (over members with a known image).
    pub mean_image_age: f64,
    /// Per Kubernetes-channel profile ([`FleetDays::kubernetes_profiles`]): how far members are behind.
    pub lag: Vec<DayLag>,
    /// Members per Kubernetes minor version, oldest minor first (minors with no member left out).
    pub per_minor: Vec<(MinorVersion, usize)>,
}

/// Members behind a Kubernetes channel's target on one day.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DayLag {
    pub behind: usize,
    pub mean: f64,
    pub max: f64,
}

/// The fleet day by day, from the scenario start to the end of the simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetDays {
    pub members: usize,
    /// Indices (in the scenario's profiles) of the Kubernetes-channel profiles, the order of `lag`.
    pub kubernetes_profiles: Vec<usize>,
    pub days: Vec<FleetDay>,
}

impl FleetDays {
    /// Every minor version some member was on during the simulation, oldest first.
    pub fn minors(&self) -> Vec<MinorVersion> {
        let all: std::collections::BTreeSet<MinorVersion> =
            self.days.iter().flat_map(|d| d.per_minor.iter().map(|(m, _)| *m)).collect();
        all.into_iter().collect()
    }
}

/// Replays the version changes day by day: the one computation behind `fleet-metrics.csv`,
/// `kubernetes-versions.csv` and the charts drawn from them.
pub fn fleet_days(ctx: &ReportContext) -> FleetDays {
    let kubernetes_profiles: Vec<usize> =
        ctx.scenario.profiles.iter().enumerate().filter(|(_, p)| p.channel.is_kubernetes()).map(|(i, _)| i).collect();
    let mut replay = Replay::new(ctx);
    let members = ctx.scenario.fleet.len();
    let mut days = Vec::new();
    let mut t = ctx.scenario.start;
    let end = ctx.result.end.max(ctx.scenario.start);
    while t <= end {
        replay.advance_to(t);
        let released = released_kubernetes(&ctx.scenario.releases, t);
        let newest = released.iter().map(|v| v.minor_version()).max();
        let supported = replay
            .kubernetes
            .iter()
            .filter(|v| newest.is_none_or(|n: MinorVersion| v.minor_version().minors_behind(n) <= 2))
            .count();
        let ages: Vec<f64> = (0..members).filter_map(|m| replay.oldest_image_age_days(m, t)).collect();
        let old_images = ages.iter().filter(|a| **a > OLD_IMAGE_DAYS as f64).count();
        let mean_image_age = if ages.is_empty() { 0.0 } else { ages.iter().sum::<f64>() / ages.len() as f64 };
        let lag = kubernetes_profiles
            .iter()
            .map(|&p| day_lag(targets_by(&ctx.result.profiles[p].targets, t), &replay.kubernetes, t))
            .collect();
        let mut per_minor: Vec<(MinorVersion, usize)> = Vec::new();
        for v in &replay.kubernetes {
            let minor = v.minor_version();
            match per_minor.iter_mut().find(|(m, _)| *m == minor) {
                Some((_, count)) => *count += 1,
                None => per_minor.push((minor, 1)),
            }
        }
        per_minor.sort_unstable_by_key(|&(minor, _)| minor);
        days.push(FleetDay { time: t, supported, old_images, mean_image_age, lag, per_minor });
        t = t + Duration::days(1);
    }
    FleetDays { members, kubernetes_profiles, days }
}

fn date(t: Time) -> String {
    t.to_rfc3339()[..10].to_string()
}

/// `fleet-metrics.csv`: one row per day of [`fleet_days`].
pub fn fleet_metrics_csv(ctx: &ReportContext, fleet: &FleetDays) -> csv::Result<Vec<u8>> {
    let mut metrics = csv::Writer::from_writer(Vec::new());
    let mut header = vec![
        "date".to_string(),
        "members".to_string(),
        "supported_share".to_string(),
        format!("image_older_than_{OLD_IMAGE_DAYS}d"),
        "mean_image_age_days".to_string(),
    ];
    for &p in &fleet.kubernetes_profiles {
        let name = &ctx.scenario.profiles[p].name;
        header.push(format!("{name}_members_behind"));
        header.push(format!("{name}_mean_days_behind"));
        header.push(format!("{name}_max_days_behind"));
    }
    metrics.write_record(&header)?;
    let members = fleet.members;
    for day in &fleet.days {
        let share = if members == 0 { 1.0 } else { day.supported as f64 / members as f64 };
        let mut row = vec![
            date(day.time),
            members.to_string(),
            format!("{}", round(share)),
            day.old_images.to_string(),
            format!("{}", round(day.mean_image_age)),
        ];
        for lag in &day.lag {
            row.extend([lag.behind.to_string(), format!("{}", round(lag.mean)), format!("{}", round(lag.max))]);
        }
        metrics.write_record(&row)?;
    }
    metrics.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// `kubernetes-versions.csv`: members per minor version per day of [`fleet_days`].
pub fn kubernetes_versions_csv(fleet: &FleetDays) -> csv::Result<Vec<u8>> {
    let mut versions = csv::Writer::from_writer(Vec::new());
    versions.write_record(["date", "minor", "members"])?;
    for day in &fleet.days {
        for (minor, n) in &day.per_minor {
            versions.write_record([date(day.time), minor.to_string(), n.to_string()])?;
        }
    }
    versions.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// `release-latency.csv`: per release that first reached a region during the simulation, how many
/// members received it and how long the last one took.
pub fn release_latency_csv(ctx: &ReportContext) -> csv::Result<Vec<u8>> {
    let mut received: BTreeMap<String, (usize, Time)> = BTreeMap::new();
    for c in &ctx.result.version_changes {
        let entry = received.entry(c.to.to_string()).or_insert((0, c.time));
        entry.0 += 1;
        entry.1 = entry.1.max(c.time);
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["release", "kind", "first_available", "members_received", "last_received", "days_to_last"])?;
    let mut rows: Vec<(Time, String, &str)> = Vec::new();
    for r in &ctx.scenario.releases.kubernetes {
        if let Some(t) = r.availability.first().filter(|t| *t >= ctx.scenario.start && *t <= ctx.result.end) {
            rows.push((t, r.version.to_string(), "kubernetes"));
        }
    }
    for r in ctx.scenario.releases.images.values().flatten() {
        if let Some(t) = r.availability.first().filter(|t| *t >= ctx.scenario.start && *t <= ctx.result.end) {
            rows.push((t, r.version.to_string(), "node image"));
        }
    }
    rows.sort();
    for (first, version, kind) in rows {
        let (count, last) = received.get(version.as_str()).copied().unwrap_or((0, first));
        let days =
            if count > 0 { format!("{}", round((last - first).as_seconds() as f64 / 86_400.0)) } else { String::new() };
        w.write_record([
            version.as_str(),
            kind,
            &first.to_rfc3339(),
            &count.to_string(),
            &if count > 0 { last.to_rfc3339() } else { String::new() },
            &days,
        ])?;
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// Per profile in `summary.json`: the runs it generated and the members' lag at the end.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileSummary {
    pub name: String,
    pub channel: &'static str,
    pub disabled: bool,
    pub runs_generated: usize,
    pub runs: Vec<String>,
    /// Kubernetes channels: the target at the end of the simulation.
    pub final_target: Option<String>,
    /// Kubernetes channels: days each member was behind the target at the end.
    pub lag_days: Option<LagSummary>,
    /// Why the profile generates nothing, from when (e.g. an LTS-only target without
    /// `longTermSupport`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LagSummary {
    pub members_behind: usize,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
}

impl LagSummary {
    /// The summary of days behind, `sorted` ascending (one value per member).
    pub fn of(sorted: &[f64]) -> LagSummary {
        LagSummary {
            members_behind: sorted.iter().filter(|l| **l > 0.0).count(),
            mean: round(if sorted.is_empty() { 0.0 } else { sorted.iter().sum::<f64>() / sorted.len() as f64 }),
            p50: round(quantile(sorted, 0.5)),
            p90: round(quantile(sorted, 0.9)),
            max: round(sorted.last().copied().unwrap_or(0.0)),
        }
    }
}

/// The `q` quantile of ascending values by the nearest-rank rule (0 when empty).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted.get(((sorted.len() as f64 * q).ceil() as usize).saturating_sub(1)).copied().unwrap_or(0.0)
}

/// The fleet at the end of the simulation: the distributions behind `lagDays` in `summary.json` and
/// the lag chart.
#[derive(Clone, Debug, PartialEq)]
pub struct EndState {
    pub time: Time,
    /// Per scenario profile, Kubernetes channels only: days each member is behind the channel's
    /// target, ascending.
    pub lags: Vec<Option<Vec<f64>>>,
    /// Age in days of each member's oldest pool image (members with a known image), ascending.
    pub image_ages: Vec<f64>,
}

pub fn end_state(ctx: &ReportContext) -> EndState {
    let end = ctx.result.end;
    let mut replay = Replay::new(ctx);
    replay.advance_to(end);
    let lags = ctx
        .scenario
        .profiles
        .iter()
        .enumerate()
        .map(|(p, spec)| {
            spec.channel.is_kubernetes().then(|| {
                let known = targets_by(&ctx.result.profiles[p].targets, end);
                let mut lags: Vec<f64> = replay.kubernetes.iter().map(|v| days_behind(known, *v, end)).collect();
                lags.sort_by(f64::total_cmp);
                lags
            })
        })
        .collect();
    let mut image_ages: Vec<f64> =
        (0..ctx.scenario.fleet.len()).filter_map(|m| replay.oldest_image_age_days(m, end)).collect();
    image_ages.sort_by(f64::total_cmp);
    EndState { time: end, lags, image_ages }
}

pub fn profile_summaries(ctx: &ReportContext) -> Vec<ProfileSummary> {
    let end = end_state(ctx);
    ctx.scenario
        .profiles
        .iter()
        .zip(&end.lags)
        .enumerate()
        .map(|(p, (spec, lags))| {
            let outcome = &ctx.result.profiles[p];
            ProfileSummary {
                name: spec.name.clone(),
                channel: spec.channel.api_name(),
                disabled: spec.disabled,
                runs_generated: outcome.runs.len(),
                runs: outcome.runs.iter().map(|r| ctx.result.runs[*r as usize].name.clone()).collect(),
                final_target: outcome.targets.last().map(|(_, v)| v.to_string()),
                lag_days: lags.as_deref().map(LagSummary::of),
                note: outcome.idle.as_ref().map(|(at, why)| format!("from {}: {why}", at.to_rfc3339())),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The lag worked out once per version is each member's own, to the bit: members on versions
        /// of one minor and of several, behind targets that moved at various times.
        #[test]
        fn a_day_s_lag_is_each_member_s_days_behind(
            patches in proptest::collection::vec((30u32..=33, 0u32..4), 0..40),
            moves in proptest::collection::vec((0i64..20 * 86_400, 30u32..=33, 0u32..4), 0..6),
            now in 0i64..30 * 86_400,
        ) {
            let version = |(minor, patch): (u32, u32)| KubernetesVersion::parse(&format!("1.{minor}.{patch}")).unwrap();
            let versions: Vec<KubernetesVersion> = patches.into_iter().map(version).collect();
            let mut targets: Vec<(Time, KubernetesVersion)> =
                moves.into_iter().map(|(at, minor, patch)| (Time(at), version((minor, patch)))).collect();
            targets.sort_by_key(|(at, _)| *at);
            let t = Time(now);
            let known = targets_by(&targets, t);
            let lags: Vec<f64> = versions.iter().map(|v| days_behind(known, *v, t)).collect();
            let lag = day_lag(known, &versions, t);
            prop_assert_eq!(lag.behind, lags.iter().filter(|l| **l > 0.0).count());
            let mean = if lags.is_empty() { 0.0 } else { lags.iter().sum::<f64>() / lags.len() as f64 };
            prop_assert_eq!(lag.mean.to_bits(), mean.to_bits());
            prop_assert_eq!(lag.max.to_bits(), lags.iter().cloned().fold(0.0, f64::max).to_bits());
        }
    }
}
