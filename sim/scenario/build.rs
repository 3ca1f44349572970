//! Validation and conversion: DTOs → a validated [`Scenario`] (SEMANTICS §2). Every problem is
//! collected with its JSON Pointer; nothing downstream sees raw JSON.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::Weekday;
use serde_json::Value;

use crate::engine::{Duration, Time};
use crate::fleet::member::{
    ClusterRef, DEFAULT_RESOURCE_GROUP, DEFAULT_SUBSCRIPTION_ID, FLEET_CLUSTER_NAME, FLEET_LABELS, FLEET_LOCATION,
    FLEET_MEMBER_NAME, FLEET_RESOURCE_GROUP, normalize_region,
};
use crate::fleet::selector::{Selector, validate_label_key, validate_label_value};
use crate::fleet::{KubernetesVersion, Member, MemberId, NodeImageVersion, NodePool, OsSku, Surge};
use crate::orchestrator::plan::{GroupAboveStage, PlanSettings, plan_run};
use crate::orchestrator::{
    FailureScope, GateConfig, GateKind, GateRef, Group, Limit, RunSettings, ScheduledStart, SkipTarget, Slot, Stage,
    Strategy, Timing,
};
use crate::world::{
    BadRelease, DurationDist, DurationModel, FailureCode, FailurePoint, ForcedOutcome, ImageSelection, MinorSkipRule,
    Models, Override, RegionalIncident, UpgradeSpec, UpgradeType, WorldSettings,
};

use super::dto::*;
use super::problem::{Problem, echo, join};
use super::{Action, ActionKind, RunSpec, Scenario, Settings};

/// The longest duration or time offset a scenario may give.
const MAX_DURATION: Duration = Duration::days(36_525);

/// Collects problems while converting.
pub(crate) struct Ctx {
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
    pub start: Time,
}

impl Ctx {
    pub fn err(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem::new(path, message));
    }

    /// RFC 3339, or `+<duration>` / `-<duration>` after / before the scenario start.
    pub fn time(&mut self, text: &str, path: &str) -> Option<Time> {
        for (sign, factor) in [('+', 1), ('-', -1)] {
            if let Some(offset) = text.strip_prefix(sign) {
                return match Duration::parse(offset) {
                    Ok(d) if d <= MAX_DURATION => Some(self.start + Duration(factor * d.as_seconds())),
                    Ok(d) => {
                        self.err(path, format!("offset {d} is longer than 100 years"));
                        None
                    }
                    Err(e) => {
                        self.err(path, format!("{e} (after \"{sign}\", an offset from the scenario start)"));
                        None
                    }
                };
            }
        }
        match Time::parse_rfc3339(text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.err(
                    path,
                    format!("{e}; use an RFC 3339 time like \"2026-03-02T08:00:00Z\" or an offset like \"+2h\""),
                );
                None
            }
        }
    }

    /// A duration of at most 100 years: longer ones are mistakes, and they would overflow the
    /// simulated clock (every instant must stay printable as RFC 3339).
    pub fn duration(&mut self, text: &str, path: &str) -> Option<Duration> {
        match Duration::parse(text) {
            Ok(d) if d <= MAX_DURATION => Some(d),
            Ok(d) => {
                self.err(path, format!("{d} is longer than 100 years"));
                None
            }
            Err(e) => {
                self.err(path, e);
                None
            }
        }
    }

    /// `"20m"`, `{"median": "10m", "p90": "25m"}`, `{"min": "5m", "max": "15m"}` or `{"fixed": "20m"}`.
    pub fn dist(&mut self, value: &Value, path: &str) -> Option<DurationDist> {
        let help = "a duration (\"20m\") or a distribution {\"median\": \"10m\", \"p90\": \"25m\"} / {\"min\": \"5m\", \"max\": \"15m\"}";
        match value {
            Value::String(s) => self.duration(s, path).map(DurationDist::Fixed),
            Value::Object(map) => {
                let mut fields = BTreeMap::new();
                for (key, v) in map {
                    if !["fixed", "median", "p90", "min", "max"].contains(&key.as_str()) {
                        self.err(join(path, key), format!("unknown field {}; expected {help}", echo(key)));
                        continue;
                    }
                    match v.as_str() {
                        Some(s) => {
                            if let Some(d) = self.duration(s, &join(path, key)) {
                                fields.insert(key.as_str(), d);
                            }
                        }
                        None => self.err(join(path, key), format!("must be a duration string like \"10m\", not {v}")),
                    }
                }
                let keys: Vec<&str> = map.keys().map(|k| k.as_str()).collect();
                let dist = match keys.as_slice() {
                    ["fixed"] => fields.get("fixed").map(|d| DurationDist::Fixed(*d)),
                    _ if keys.len() == 2 && map.contains_key("median") && map.contains_key("p90") => {
                        let (median, p90) = (fields.get("median")?, fields.get("p90")?);
                        if p90 < median {
                            self.err(join(path, "p90"), "p90 must be at least the median");
                            return None;
                        }
                        Some(DurationDist::LogNormal { median: *median, p90: *p90 })
                    }
                    _ if keys.len() == 2 && map.contains_key("min") && map.contains_key("max") => {
                        let (min, max) = (fields.get("min")?, fields.get("max")?);
                        if max < min {
                            self.err(join(path, "max"), "max must be at least min");
                            return None;
                        }
                        Some(DurationDist::Uniform { min: *min, max: *max })
                    }
                    _ => {
                        self.err(path, format!("expected {help}"));
                        None
                    }
                };
                if let Some(DurationDist::LogNormal { median, .. } | DurationDist::Fixed(median)) = dist
                    && median < Duration(0)
                {
                    self.err(path, "durations cannot be negative");
                }
                dist
            }
            other => {
                self.err(path, format!("expected {help}, not {other}"));
                None
            }
        }
    }

    pub fn probability(&mut self, value: f64, path: &str) -> f64 {
        if !(0.0..=1.0).contains(&value) || value.is_nan() {
            self.err(path, format!("{value} is not a probability between 0 and 1"));
        }
        value.clamp(0.0, 1.0)
    }
}

/// Resource names: `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, 1–50 characters (SEMANTICS §2).
pub(crate) fn check_name(ctx: &mut Ctx, name: &str, path: &str, what: &str) -> bool {
    let bytes = name.as_bytes();
    let ok_char = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let valid = !bytes.is_empty()
        && bytes.len() <= 50
        && ok_char(&bytes[0])
        && ok_char(&bytes[bytes.len() - 1])
        && bytes.iter().all(|b| ok_char(b) || *b == b'-');
    if !valid {
        ctx.err(
            path,
            format!("{what} {} is not a valid name: 1–50 lowercase letters, digits and '-', starting and ending with a letter or digit", echo(name)),
        );
    }
    valid
}

/// The longest name of an output folder, in bytes: file systems allow 255, and the staging folder
/// written beside it (`.NAME.partial-PID`) and a shard's suffix need the rest.
pub const MAX_FOLDER_NAME_BYTES: usize = 200;

/// Why `name` cannot name an output folder on Linux, macOS or Windows, if it cannot: the default
/// folder of a scenario or sweep is `reports/<name>/`, so a name that no file system takes would
/// pass validation and fail the run.
pub fn folder_name_problem(name: &str, what: &str, folder: &str) -> Option<String> {
    let shown = echo(name);
    let problem = if name.trim().is_empty() {
        format!("the {what} needs a name")
    } else if name.contains(['/', '\\']) {
        format!("{shown} cannot name {folder}: no '/' or '\\'")
    } else if name.chars().any(char::is_control) {
        format!("{shown} cannot name {folder}: no control characters (newlines, tabs, NUL)")
    } else if name == "." || name == ".." {
        format!("{shown} cannot name {folder}: it names a folder that exists already")
    } else if name.len() > MAX_FOLDER_NAME_BYTES {
        format!("a {what} name of {} bytes cannot name {folder}: at most {MAX_FOLDER_NAME_BYTES}", name.len())
    } else if is_reserved_device_name(name) {
        format!("{shown} cannot name {folder}: Windows reserves it for a device")
    } else {
        return None;
    };
    Some(problem)
}

/// `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`, in any case and with any extension
/// (`nul.json`): Windows opens the device instead of a folder.
fn is_reserved_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end().to_ascii_uppercase();
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || (stem.len() == 4
            && (stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.as_bytes()[3].is_ascii_digit())
}

/// One member of the fleet while the scenario is built.
pub(crate) struct FleetEntry {
    pub member: Member,
    /// Where it was defined, for problems: its JSON Pointer, or its generator's.
    pub path: String,
    /// For a generated member: its number in its generator (1-based).
    pub generated: Option<u64>,
    /// Its own duration model (`durations` of the member or its generator).
    pub durations: Option<Arc<DurationModel>>,
    /// Its DTO, kept only for `--dump-fleet`.
    pub dto: Option<MemberDto>,
}

/// Builds the validated scenario, or every problem found.
pub fn build(dto: &ScenarioDto, seed_override: Option<u64>) -> Result<Scenario, Vec<Problem>> {
    build_inner(dto, seed_override, false).map(|(scenario, _)| scenario)
}

/// Builds the scenario and returns every member (explicit and generated) in the scenario's member
/// format, sorted by name, as `fleetsim run --dump-fleet` writes them.
pub fn build_with_fleet(
    dto: &ScenarioDto,
    seed_override: Option<u64>,
) -> Result<(Scenario, Vec<MemberDto>), Vec<Problem>> {
    build_inner(dto, seed_override, true)
}

fn build_inner(
    dto: &ScenarioDto,
    seed_override: Option<u64>,
    keep_dtos: bool,
) -> Result<(Scenario, Vec<MemberDto>), Vec<Problem>> {
    let mut ctx = Ctx { problems: Vec::new(), warnings: Vec::new(), start: Time(0) };
    if let Some(problem) = folder_name_problem(&dto.name, "scenario", "a report folder") {
        ctx.err("/name", problem);
    }
    let start = match Time::parse_rfc3339(&dto.start) {
        Ok(t) => t,
        Err(e) => {
            ctx.err("/start", e);
            Time(0)
        }
    };
    ctx.start = start;
    let seed = seed_override.unwrap_or(dto.seed);
    let settings = build_settings(&mut ctx, &dto.settings);
    let base_durations = match &dto.models.duration {
        Some(d) => duration_model(&mut ctx, d, DurationModel::default(), "/models/duration"),
        None => DurationModel::default(),
    };

    let mut fleet = build_members(&mut ctx, dto, &base_durations, keep_dtos);
    // The calendar comes before generated members (they draw versions from it), so its rollout
    // covers every region a member can be in.
    let mut regions: BTreeSet<String> = fleet.iter().map(|e| e.member.region.clone()).collect();
    regions.extend(super::generate::generator_regions(&dto.member_generators));
    let mut releases = super::releases::build_releases(&mut ctx, dto.releases.as_ref(), regions, seed);
    let generated = super::generate::generate_members(
        &mut ctx,
        &dto.member_generators,
        seed,
        &releases,
        &base_durations,
        keep_dtos,
    );
    fleet.extend(generated);
    fleet.sort_by(|a, b| a.member.name.cmp(&b.member.name));
    for pair in fleet.windows(2) {
        if pair[0].member.name == pair[1].member.name {
            let which = |e: &FleetEntry| match e.generated {
                Some(n) => format!("as generated member {n} of {}", e.path),
                None => format!("at {}", e.path),
            };
            let this = pair[1].generated.map(|n| format!(" (generated member {n})")).unwrap_or_default();
            ctx.err(
                pair[1].path.clone(),
                format!("member {}{this} is defined twice (also {})", echo(&pair[1].member.name), which(&pair[0])),
            );
        }
    }
    let mut member_durations = Vec::new();
    if fleet.iter().any(|e| e.durations.is_some()) {
        member_durations = fleet.iter_mut().map(|e| e.durations.take()).collect();
    }
    let mut dtos = Vec::new();
    let fleet: Vec<Member> = fleet
        .into_iter()
        .map(|e| {
            // `--dump-fleet` shows every label as the service does, Fleet's own among them.
            dtos.extend(e.dto.map(|d| MemberDto { labels: e.member.all_labels(), ..d }));
            e.member
        })
        .collect();
    super::releases::add_implicit_images(&mut releases, &fleet, dto, start);
    if let Some(stream) = dto.releases.as_ref().and_then(|r| r.stream.as_ref()) {
        super::stream::add_stream(&mut ctx, stream, &mut releases, &fleet, start + settings.horizon, seed);
        for list in releases.images.values_mut() {
            list.sort_by(|a, b| a.version.compare(&b.version).expect("one family per list"));
        }
        releases.realize(crate::engine::SeedTree::new(seed, 0));
    }

    let mut models = build_models(&mut ctx, &dto.models, &fleet, dto);
    models.duration = base_durations;
    models.member_durations = member_durations;

    let mut strategies = BTreeMap::new();
    for (name, strategy) in &dto.update_strategies {
        let path = join("/updateStrategies", name);
        check_name(&mut ctx, name, &path, "strategy");
        if let Some(s) = build_strategy(&mut ctx, strategy, &path) {
            strategies.insert(name.clone(), s);
        }
    }
    let (runs, inline_strategies) = build_runs(&mut ctx, dto, &fleet, &strategies, &settings);
    let profiles = super::profiles::build_profiles(
        &mut ctx,
        &dto.auto_upgrade_profiles,
        &fleet,
        &strategies,
        &settings,
        dto,
        &releases,
        start,
    );

    if !ctx.problems.is_empty() {
        let mut problems = ctx.problems;
        problems.dedup();
        return Err(super::problem::collapse_problems(problems));
    }
    let scenario = Scenario {
        name: dto.name.clone(),
        description: dto.description.clone(),
        seed,
        start,
        settings,
        fleet,
        releases,
        models,
        strategies,
        inline_strategies,
        runs,
        profiles,
        build_warnings: ctx.warnings,
    };
    Ok((scenario, dtos))
}

fn build_settings(ctx: &mut Ctx, dto: &SettingsDto) -> Settings {
    let duration = |ctx: &mut Ctx, value: &Option<String>, path: &str, default: Duration| -> Duration {
        match value {
            None => default,
            Some(text) => match ctx.duration(text, path) {
                Some(d) if d > Duration::ZERO => d,
                Some(_) => {
                    ctx.err(path, "must be longer than 0s");
                    default
                }
                None => default,
            },
        }
    };
    let horizon = duration(ctx, &dto.horizon, "/settings/horizon", Duration::days(90));
    let poll = duration(ctx, &dto.window_poll_interval, "/settings/windowPollInterval", Duration::minutes(60));
    let max_age = duration(ctx, &dto.node_image_max_age, "/settings/nodeImageMaxAge", Duration::days(90));
    let stage_max = match dto.limits.as_ref().and_then(|l| l.stage_max_concurrency) {
        None => 50,
        Some(n) if (1..=10_000).contains(&n) => n as u32,
        Some(n) => {
            ctx.err("/settings/limits/stageMaxConcurrency", format!("{n} is not a stage limit between 1 and 10000"));
            50
        }
    };
    let mut choice = |value: &Option<String>, path: &str, options: &[&str]| -> usize {
        match value {
            None => 0,
            Some(v) => options.iter().position(|o| o == v).unwrap_or_else(|| {
                ctx.err(path, format!("{} is not one of {}", echo(v), quoted(options)));
                0
            }),
        }
    };
    let group_above =
        choice(&dto.group_above_stage_concurrency, "/settings/groupAboveStageConcurrency", &["reject", "throttle"]);
    let scope = choice(&dto.failure_scope, "/settings/failureScope", &["run", "segment"]);
    let exact = choice(
        &dto.scheduled_start_at_exact_instant,
        "/settings/scheduledStartAtExactInstant",
        &["completes", "nextWeek"],
    );
    let minor = choice(&dto.minor_version_skip, "/settings/minorVersionSkip", &["fail", "skip"]);
    Settings {
        horizon,
        plan: PlanSettings {
            stage_max_concurrency: stage_max,
            group_above_stage: if group_above == 0 { GroupAboveStage::Reject } else { GroupAboveStage::Throttle },
        },
        run: RunSettings {
            failure_scope: if scope == 0 { FailureScope::Run } else { FailureScope::Segment },
            retry_failed_on_restart: dto.retry_failed_on_restart.unwrap_or(false),
            scheduled_start_exact_instant_counts: exact == 0,
            window_poll_interval: poll,
        },
        world: WorldSettings {
            node_image_max_age: max_age,
            minor_skip: if minor == 0 { MinorSkipRule::Fail } else { MinorSkipRule::Skip },
            window_lookahead: Duration::hours(4),
        },
    }
}

pub(crate) fn quoted(options: &[&str]) -> String {
    options.iter().map(|o| format!("\"{o}\"")).collect::<Vec<_>>().join(", ")
}

fn build_members(ctx: &mut Ctx, dto: &ScenarioDto, base: &DurationModel, keep_dtos: bool) -> Vec<FleetEntry> {
    dto.members
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let path = join("/members", i);
            let durations =
                m.durations.as_ref().map(|d| Arc::new(duration_model(ctx, d, base.clone(), &join(&path, "durations"))));
            build_member(ctx, m, &path).map(|member| FleetEntry {
                member,
                path,
                generated: None,
                durations,
                dto: keep_dtos.then(|| m.clone()),
            })
        })
        .collect()
}

/// Converts one member DTO (explicit or generated).
pub(crate) fn build_member(ctx: &mut Ctx, m: &MemberDto, path: &str) -> Option<Member> {
    let before = ctx.problems.len();
    check_name(ctx, &m.name, &join(path, "name"), "member");
    if m.region.is_empty() || !m.region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        ctx.err(join(path, "region"), format!("{} is not an Azure region name like \"westeurope\"", echo(&m.region)));
    }
    if let Some(group) = &m.group {
        check_name(ctx, group, &join(path, "group"), "update group");
    }
    let cluster = m
        .cluster_resource_id
        .as_deref()
        .and_then(|id| ClusterRef::parse(id).map_err(|e| ctx.err(join(path, "clusterResourceId"), e)).ok());
    for (key, value) in &m.labels {
        let label_path = join(&join(path, "labels"), key);
        if FLEET_LABELS.contains(&key.as_str()) {
            check_fleet_label(ctx, m, cluster.as_ref(), key, value, &label_path);
            continue;
        }
        if let Err(e) = validate_label_key(key) {
            ctx.err(&label_path, e);
        }
        if let Err(e) = validate_label_value(value) {
            ctx.err(&label_path, e);
        }
    }
    let version =
        KubernetesVersion::parse(&m.kubernetes_version).map_err(|e| ctx.err(join(path, "kubernetesVersion"), e)).ok();
    let pools = match &m.node_pools {
        None => vec![default_pool(version)],
        Some(list) if list.is_empty() => {
            ctx.err(
                join(path, "nodePools"),
                "a member needs at least one node pool (or omit nodePools for the default pool)",
            );
            Vec::new()
        }
        Some(list) => {
            let mut names = BTreeSet::new();
            list.iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let pool_path = join(&join(path, "nodePools"), i);
                    if !names.insert(p.name.clone()) {
                        ctx.err(join(&pool_path, "name"), format!("node pool {} appears twice", echo(&p.name)));
                    }
                    build_pool(ctx, p, &pool_path, version)
                })
                .collect()
        }
    };
    let windows = [
        (&m.aks_managed_auto_upgrade_schedule, "aksManagedAutoUpgradeSchedule"),
        (&m.aks_managed_node_os_upgrade_schedule, "aksManagedNodeOSUpgradeSchedule"),
    ]
    .map(|(w, field)| {
        w.as_ref().and_then(|w| {
            let problems = w.validate(&join(path, field));
            let ok = problems.is_empty();
            ctx.problems.extend(problems);
            ok.then(|| w.compile(ctx.start))
        })
    });
    if ctx.problems.len() > before {
        return None;
    }
    let [auto_upgrade_window, node_os_window] = windows;
    Some(Member {
        name: m.name.clone(),
        region: m.region.clone(),
        group: m.group.clone(),
        labels: m
            .labels
            .iter()
            .filter(|(k, _)| !FLEET_LABELS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        cluster,
        kubernetes_version: version?,
        node_pools: pools,
        auto_upgrade_window,
        node_os_window,
        long_term_support: m.long_term_support,
        stopped: m.stopped,
    })
}

/// A `fleet.azure.com/*` label the scenario sets: the service owns it, so only the value it would
/// show is accepted (regions compare as Azure compares them: `East US` = `eastus`).
fn check_fleet_label(ctx: &mut Ctx, m: &MemberDto, cluster: Option<&ClusterRef>, key: &str, value: &str, path: &str) {
    let expected = match key {
        FLEET_LOCATION => {
            if normalize_region(value) == normalize_region(&m.region) {
                return;
            }
            m.region.clone()
        }
        FLEET_MEMBER_NAME => m.name.clone(),
        FLEET_CLUSTER_NAME => cluster.map_or(m.name.clone(), |c| c.name.clone()),
        FLEET_RESOURCE_GROUP => cluster.map_or(DEFAULT_RESOURCE_GROUP.to_string(), |c| c.resource_group.clone()),
        _ => cluster.map_or(DEFAULT_SUBSCRIPTION_ID.to_string(), |c| c.subscription_id.clone()),
    };
    // ARM names and ids compare case-insensitively; member names are lowercase already.
    let same = if key == FLEET_MEMBER_NAME { value == expected } else { value.eq_ignore_ascii_case(&expected) };
    if !same {
        ctx.err(
            path,
            format!("{key} is set by Fleet Manager: for this member it is {}, not {} (remove it, or give the service's value)", echo(&expected), echo(value)),
        );
    }
}

fn default_pool(version: Option<KubernetesVersion>) -> NodePool {
    let os = default_ubuntu(version);
    NodePool {
        name: "nodepool1".to_string(),
        os_sku: os,
        node_count: 3,
        image_family: os.default_image_family().to_string(),
        node_image_version: None,
        max_surge: None,
        from_snapshot: false,
    }
}

/// `Ubuntu` means 24.04 from Kubernetes 1.35, else 22.04 (aks-models.md §2.5).
fn default_ubuntu(version: Option<KubernetesVersion>) -> OsSku {
    if version.is_some_and(|v| v >= KubernetesVersion::new(1, 35, 0)) { OsSku::Ubuntu2404 } else { OsSku::Ubuntu2204 }
}

pub(crate) fn parse_os_sku(text: &str, version: Option<KubernetesVersion>) -> Result<OsSku, String> {
    Ok(match text {
        "Ubuntu" => default_ubuntu(version),
        "Ubuntu2204" => OsSku::Ubuntu2204,
        "Ubuntu2404" => OsSku::Ubuntu2404,
        "AzureLinux" | "AzureLinux3" => OsSku::AzureLinux3,
        "Windows2022" => OsSku::Windows2022,
        "Windows2025" => OsSku::Windows2025,
        other => {
            return Err(format!(
                "{} is not a supported osSku: {}",
                echo(other),
                quoted(&[
                    "Ubuntu",
                    "Ubuntu2204",
                    "Ubuntu2404",
                    "AzureLinux",
                    "AzureLinux3",
                    "Windows2022",
                    "Windows2025"
                ])
            ));
        }
    })
}

fn build_pool(ctx: &mut Ctx, p: &NodePoolDto, path: &str, version: Option<KubernetesVersion>) -> Option<NodePool> {
    let before = ctx.problems.len();
    let name_ok = !p.name.is_empty()
        && p.name.len() <= 12
        && p.name.as_bytes()[0].is_ascii_lowercase()
        && p.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !name_ok {
        ctx.err(
            join(path, "name"),
            format!(
                "{} is not an AKS node pool name: 1–12 lowercase letters and digits, starting with a letter",
                echo(&p.name)
            ),
        );
    }
    let image = p
        .node_image_version
        .as_ref()
        .and_then(|v| NodeImageVersion::parse(v).map_err(|e| ctx.err(join(path, "nodeImageVersion"), e)).ok());
    let (sku, sku_field) = match (&p.os_sku, &p.os_sku_arm) {
        (Some(a), Some(b)) if a != b => {
            ctx.err(join(path, "osSKU"), format!("osSKU {} and osSku {} disagree: keep one", echo(b), echo(a)));
            (None, "osSku")
        }
        (Some(a), _) => (Some(a), "osSku"),
        (None, b) => (b.as_ref(), "osSKU"),
    };
    let os = match sku {
        Some(text) => parse_os_sku(text, version).map_err(|e| ctx.err(join(path, sku_field), e)).ok(),
        None => Some(match &image {
            Some(i) if i.is_windows() => {
                if i.family().contains("2025") {
                    OsSku::Windows2025
                } else {
                    OsSku::Windows2022
                }
            }
            Some(i) if i.family().starts_with("AKSAzureLinux") => OsSku::AzureLinux3,
            Some(i) if i.family().contains("2404") => OsSku::Ubuntu2404,
            Some(i) if i.family().contains("2204") => OsSku::Ubuntu2204,
            _ => default_ubuntu(version),
        }),
    };
    if let (Some(os), Some(image)) = (os, &image)
        && os.is_windows() != image.is_windows()
    {
        ctx.err(
            join(path, "nodeImageVersion"),
            format!("image {} does not fit osSku {}", echo(&image.to_string()), os.api_name()),
        );
    }
    if let (Some(os), Some(os_type)) = (os, &p.os_type)
        && (os_type == "Windows") != os.is_windows()
    {
        ctx.err(join(path, "osType"), format!("osType {} does not fit osSku {}", echo(os_type), os.api_name()));
    }
    let (count, count_field) = match (p.node_count, p.count) {
        (Some(a), Some(b)) if a != b => {
            ctx.err(join(path, "count"), format!("count {b} and nodeCount {a} disagree: keep one"));
            (None, "nodeCount")
        }
        (Some(a), _) => (Some(a), "nodeCount"),
        (None, b) => (b, "count"),
    };
    let node_count = match count {
        None => 3,
        Some(n) if (1..=1000).contains(&n) => n as u32,
        Some(n) => {
            ctx.err(join(path, count_field), format!("{n} nodes: a pool has 1–1000 nodes"));
            1
        }
    };
    let aks_surge = p.upgrade_settings.as_ref().and_then(|u| u.max_surge.as_ref());
    let (surge, surge_field) = match (&p.max_surge, aks_surge) {
        (Some(a), Some(b)) if a.text() != b.text() => {
            ctx.err(
                join(&join(path, "upgradeSettings"), "maxSurge"),
                format!(
                    "upgradeSettings.maxSurge {} and maxSurge {} disagree: keep one",
                    echo(&b.text()),
                    echo(&a.text())
                ),
            );
            (None, join(path, "maxSurge"))
        }
        (Some(a), _) => (Some(a), join(path, "maxSurge")),
        (None, b) => (b, join(&join(path, "upgradeSettings"), "maxSurge")),
    };
    let max_surge = surge.and_then(|s| parse_surge(&s.text()).map_err(|e| ctx.err(&surge_field, e)).ok());
    if ctx.problems.len() > before {
        return None;
    }
    let os = os?;
    Some(NodePool {
        name: p.name.clone(),
        os_sku: os,
        node_count,
        image_family: image.as_ref().map_or_else(|| os.default_image_family().to_string(), |i| i.family().to_string()),
        node_image_version: image,
        max_surge,
        from_snapshot: p.from_snapshot,
    })
}

pub(crate) fn parse_surge(text: &str) -> Result<Surge, String> {
    let bad =
        || format!("maxSurge {} must be a node count (\"3\") or a percentage from 1% to 100% (\"33%\")", echo(text));
    match text.strip_suffix('%') {
        Some(p) => match p.parse::<u32>() {
            Ok(v) if (1..=100).contains(&v) => Ok(Surge::Percent(v)),
            _ => Err(bad()),
        },
        None => match text.parse::<u32>() {
            Ok(v) if v >= 1 => Ok(Surge::Nodes(v)),
            _ => Err(bad()),
        },
    }
}

// ----- strategies -----------------------------------------------------------------------------

/// `UpdateRunStrategy` → [`Strategy`] with SEMANTICS §2 checks.
pub(crate) fn build_strategy(ctx: &mut Ctx, dto: &StrategyDto, path: &str) -> Option<Strategy> {
    let before = ctx.problems.len();
    if dto.stages.is_empty() {
        ctx.err(join(path, "stages"), "a strategy needs at least one stage");
    }
    let mut stage_names = BTreeMap::new();
    let mut group_names: BTreeMap<String, String> = BTreeMap::new();
    let mut stages = Vec::new();
    for (s, stage) in dto.stages.iter().enumerate() {
        let stage_path = join(&join(path, "stages"), s);
        if check_name(ctx, &stage.name, &join(&stage_path, "name"), "stage")
            && let Some(previous) = stage_names.insert(stage.name.clone(), stage_path.clone())
        {
            ctx.err(
                join(&stage_path, "name"),
                format!("stage name {} is already used at {previous}", echo(&stage.name)),
            );
        }
        let selector = stage
            .member_selector
            .as_ref()
            .and_then(|sel| build_selector(ctx, sel, &join(&stage_path, "memberSelector")));
        let groups_dto = stage.groups.as_deref().unwrap_or(&[]);
        if groups_dto.is_empty() && stage.member_selector.is_none() {
            ctx.err(join(&stage_path, "groups"), "a stage needs 1–50 groups, or a memberSelector with no groups");
        }
        if groups_dto.len() > 50 {
            ctx.err(join(&stage_path, "groups"), format!("{} groups: a stage has at most 50", groups_dto.len()));
        }
        let mut groups = Vec::new();
        for (g, group) in groups_dto.iter().enumerate() {
            let group_path = join(&join(&stage_path, "groups"), g);
            if check_name(ctx, &group.name, &join(&group_path, "name"), "group")
                && let Some(previous) = group_names.insert(group.name.clone(), group_path.clone())
            {
                ctx.err(
                    join(&group_path, "name"),
                    format!(
                        "group name {} is already used at {previous}; a group appears at most once in a strategy",
                        echo(&group.name)
                    ),
                );
            }
            groups.push(Group {
                name: group.name.clone(),
                member_selector: group
                    .member_selector
                    .as_ref()
                    .and_then(|sel| build_selector(ctx, sel, &join(&group_path, "memberSelector"))),
                max_concurrency: limit(
                    ctx,
                    &group.max_concurrency,
                    &join(&group_path, "maxConcurrency"),
                    Limit::parse_max_concurrency,
                ),
                max_allowed_failures: limit(
                    ctx,
                    &group.max_allowed_failures,
                    &join(&group_path, "maxAllowedFailures"),
                    Limit::parse_max_allowed_failures,
                ),
                before_gates: gates(ctx, &group.before_gates, &join(&group_path, "beforeGates"), Timing::Before),
                after_gates: gates(ctx, &group.after_gates, &join(&group_path, "afterGates"), Timing::After),
            });
        }
        let wait = match stage.after_stage_wait_in_seconds {
            None => Duration::ZERO,
            Some(w) if (0..=i64::from(i32::MAX)).contains(&w) => Duration(w),
            Some(w) => {
                ctx.err(
                    join(&stage_path, "afterStageWaitInSeconds"),
                    format!("{w} is not a wait between 0 and 2147483647 seconds"),
                );
                Duration::ZERO
            }
        };
        stages.push(Stage {
            name: stage.name.clone(),
            groups,
            member_selector: selector,
            after_stage_wait: wait,
            max_concurrency: limit(
                ctx,
                &stage.max_concurrency,
                &join(&stage_path, "maxConcurrency"),
                Limit::parse_max_concurrency,
            ),
            max_allowed_failures: limit(
                ctx,
                &stage.max_allowed_failures,
                &join(&stage_path, "maxAllowedFailures"),
                Limit::parse_max_allowed_failures,
            ),
            before_gates: gates(ctx, &stage.before_gates, &join(&stage_path, "beforeGates"), Timing::Before),
            after_gates: gates(ctx, &stage.after_gates, &join(&stage_path, "afterGates"), Timing::After),
        });
    }
    (ctx.problems.len() == before).then_some(Strategy { stages })
}

fn build_selector(ctx: &mut Ctx, dto: &MemberSelectorDto, path: &str) -> Option<Selector> {
    let path = join(path, "byLabel");
    if dto.by_label.chars().count() > 512 {
        ctx.err(&path, "a label selector has at most 512 characters");
        return None;
    }
    Selector::parse(&dto.by_label)
        .map_err(|e| ctx.err(&path, format!("invalid label selector {}: {e}", echo(&dto.by_label))))
        .ok()
}

fn limit(
    ctx: &mut Ctx,
    value: &Option<StringOrInt>,
    path: &str,
    parse: fn(&str) -> Result<Limit, String>,
) -> Option<Limit> {
    let text = value.as_ref()?.text();
    parse(&text).map_err(|e| ctx.err(path, e)).ok()
}

fn gates(ctx: &mut Ctx, list: &Option<Vec<GateDto>>, path: &str, timing: Timing) -> Vec<GateConfig> {
    let Some(list) = list else { return Vec::new() };
    list.iter()
        .enumerate()
        .filter_map(|(i, gate)| {
            let gate_path = join(path, i);
            if let Some(name) = &gate.display_name {
                if !(1..=100).contains(&name.chars().count()) {
                    ctx.err(join(&gate_path, "displayName"), "displayName has 1–100 characters");
                } else if name.chars().any(char::is_control) {
                    // It is printed on the console and in every report: one line, no terminal codes.
                    ctx.err(
                        join(&gate_path, "displayName"),
                        format!(
                            "displayName {} has a control character (a newline, tab or escape); use plain text",
                            echo(name)
                        ),
                    );
                }
            }
            let kind = match gate.kind.as_str() {
                "Approval" => {
                    if gate.scheduled_start_configuration.is_some() {
                        ctx.err(
                            join(&gate_path, "scheduledStartConfiguration"),
                            "only ScheduledStart gates have a scheduledStartConfiguration",
                        );
                    }
                    GateKind::Approval
                }
                "ScheduledStart" => {
                    if timing == Timing::After {
                        ctx.err(join(&gate_path, "type"), "ScheduledStart gates are allowed only in beforeGates");
                    }
                    let Some(config) = &gate.scheduled_start_configuration else {
                        ctx.err(
                            join(&gate_path, "scheduledStartConfiguration"),
                            "a ScheduledStart gate needs scheduledStartConfiguration {startDay, startTime, utcOffset}",
                        );
                        return None;
                    };
                    GateKind::ScheduledStart(scheduled_start(
                        ctx,
                        config,
                        &join(&gate_path, "scheduledStartConfiguration"),
                    )?)
                }
                other => {
                    ctx.err(
                        join(&gate_path, "type"),
                        format!("{} is not a gate type: \"Approval\" or \"ScheduledStart\"", echo(other)),
                    );
                    return None;
                }
            };
            Some(GateConfig { display_name: gate.display_name.clone(), kind })
        })
        .collect()
}

fn scheduled_start(ctx: &mut Ctx, dto: &ScheduledStartDto, path: &str) -> Option<ScheduledStart> {
    let day = parse_weekday(&dto.start_day).map_err(|e| ctx.err(join(path, "startDay"), e)).ok();
    let minute = parse_hh_mm(&dto.start_time).map_err(|e| ctx.err(join(path, "startTime"), e)).ok();
    let offset = parse_utc_offset(&dto.utc_offset).map_err(|e| ctx.err(join(path, "utcOffset"), e)).ok();
    Some(ScheduledStart { start_day: day?, start_minute: minute?, utc_offset_minutes: offset? })
}

pub(crate) fn parse_weekday(text: &str) -> Result<Weekday, String> {
    const DAYS: [(&str, Weekday); 7] = [
        ("Monday", Weekday::Mon),
        ("Tuesday", Weekday::Tue),
        ("Wednesday", Weekday::Wed),
        ("Thursday", Weekday::Thu),
        ("Friday", Weekday::Fri),
        ("Saturday", Weekday::Sat),
        ("Sunday", Weekday::Sun),
    ];
    DAYS.iter().find(|(name, _)| *name == text).map(|(_, d)| *d).ok_or_else(|| {
        format!("{} is not a day: Monday, Tuesday, Wednesday, Thursday, Friday, Saturday or Sunday", echo(text))
    })
}

/// `^([01][0-9]|2[0-3]):[0-5][0-9]$` → minutes after midnight.
pub(crate) fn parse_hh_mm(text: &str) -> Result<u32, String> {
    let bad = || format!("{} is not a time HH:mm between 00:00 and 23:59", echo(text));
    let b = text.as_bytes();
    if b.len() != 5 || b[2] != b':' || !b.iter().enumerate().all(|(i, c)| i == 2 || c.is_ascii_digit()) {
        return Err(bad());
    }
    let hours = u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0');
    let minutes = u32::from(b[3] - b'0') * 10 + u32::from(b[4] - b'0');
    if hours > 23 || minutes > 59 {
        return Err(bad());
    }
    Ok(hours * 60 + minutes)
}

/// `^[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00)$` → minutes east of UTC.
pub(crate) fn parse_utc_offset(text: &str) -> Result<i32, String> {
    let bad = || format!("{} is not a UTC offset like \"+05:30\" or \"-08:00\" between -14:00 and +14:00", echo(text));
    let sign = match text.as_bytes().first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return Err(bad()),
    };
    let minutes = parse_hh_mm(&text[1..]).map_err(|_| bad())? as i32;
    if minutes > 14 * 60 {
        return Err(bad());
    }
    Ok(sign * minutes)
}

// ----- runs -----------------------------------------------------------------------------------

fn build_runs(
    ctx: &mut Ctx,
    dto: &ScenarioDto,
    fleet: &[Member],
    strategies: &BTreeMap<String, Strategy>,
    settings: &Settings,
) -> (Vec<RunSpec>, BTreeMap<String, Strategy>) {
    let mut names = BTreeMap::new();
    let mut runs = Vec::new();
    let mut inline = BTreeMap::new();
    for (i, run) in dto.update_runs.iter().enumerate() {
        let path = join("/updateRuns", i);
        if check_name(ctx, &run.name, &join(&path, "name"), "update run")
            && let Some(previous) = names.insert(run.name.clone(), path.clone())
        {
            ctx.err(join(&path, "name"), format!("run name {} is already used at {previous}", echo(&run.name)));
        }
        if let Some((spec, strategy)) = build_run(ctx, dto, run, &path, fleet, strategies, settings) {
            if let Some(strategy) = strategy.filter(|_| spec.strategy_name.is_none()) {
                inline.insert(spec.strategy_pointer.clone(), strategy);
            }
            runs.push(spec);
        }
    }
    (runs, inline)
}

/// The strategy a run uses: inline, named, or none (one by one).
pub(crate) fn resolve_strategy(
    ctx: &mut Ctx,
    inline: Option<(&StrategyDto, String)>,
    id: Option<&str>,
    id_path: &str,
    strategies: &BTreeMap<String, Strategy>,
    dto: &ScenarioDto,
) -> Result<(Option<Strategy>, Option<String>, String), ()> {
    match (inline, id) {
        // A run's GET carries both: the strategy it named and the snapshot taken of it at creation,
        // which is what the service runs (SEMANTICS §1.2).
        (Some((strategy, path)), Some(id)) => {
            let name = strategy_name_of(id);
            let named = dto.update_strategies.get(name);
            if named.is_some_and(|n| !same_strategy(n, strategy)) {
                ctx.warnings.push(Problem::new(
                    path.clone(),
                    format!(
                        "the run's strategy snapshot differs from strategy {} it names in updateStrategyId; the run uses the snapshot, as the service does (remove one of them to say which you mean)",
                        echo(name)
                    ),
                ));
            }
            build_strategy(ctx, strategy, &path).map(|s| (Some(s), None, path)).ok_or(())
        }
        (Some((strategy, path)), None) => build_strategy(ctx, strategy, &path).map(|s| (Some(s), None, path)).ok_or(()),
        (None, Some(id)) => {
            let name = strategy_name_of(id);
            match strategies.get(name) {
                Some(s) => Ok((Some(s.clone()), Some(name.to_string()), join("/updateStrategies", name))),
                None if dto.update_strategies.contains_key(name) => Err(()),
                None => {
                    let known: Vec<&str> = dto.update_strategies.keys().map(|k| k.as_str()).collect();
                    ctx.err(
                        id_path,
                        format!(
                            "no strategy {} in updateStrategies (known: {})",
                            echo(name),
                            if known.is_empty() { "none".to_string() } else { quoted(&known) }
                        ),
                    );
                    Err(())
                }
            }
        }
        (None, None) => Ok((None, None, String::new())),
    }
}

/// The strategy name of an `updateStrategyId`: a name, or an ARM id ending in `/updateStrategies/NAME`
/// (ARM ids compare case-insensitively).
pub fn strategy_name_of(id: &str) -> &str {
    let id = id.trim_end_matches('/');
    let lower = id.to_ascii_lowercase();
    match lower.rfind("/updatestrategies/") {
        Some(at) => &id[at + "/updatestrategies/".len()..],
        None => id,
    }
}

/// Two strategies alike as the API writes them (limits `3` and `"3"` are the same).
fn same_strategy(a: &StrategyDto, b: &StrategyDto) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

/// Maps plan problems (membership, resolved limits) to JSON Pointers under the strategy.
pub(crate) fn report_plan_problems(
    ctx: &mut Ctx,
    problems: Vec<crate::orchestrator::PlanProblem>,
    strategy_path: &str,
    strategy: &Strategy,
    run_name: &str,
) {
    for p in problems {
        let mut path = strategy_path.to_string();
        if let Some(s) = p.stage {
            path = join(&join(&path, "stages"), s);
            if let Some(g) = p.group.filter(|_| !strategy.stages[s].groups.is_empty()) {
                path = join(&join(&path, "groups"), g);
            }
        }
        let field = if p.field == "memberSelector" {
            join(&join(&path, "memberSelector"), "byLabel")
        } else {
            join(&path, p.field)
        };
        ctx.err(field, format!("{} (in run {})", p.message, echo(run_name)));
    }
}

fn build_run(
    ctx: &mut Ctx,
    dto: &ScenarioDto,
    run: &UpdateRunDto,
    path: &str,
    fleet: &[Member],
    strategies: &BTreeMap<String, Strategy>,
    settings: &Settings,
) -> Option<(RunSpec, Option<Strategy>)> {
    let before = ctx.problems.len();
    let inline = run.strategy.as_ref().map(|s| (s, join(path, "strategy")));
    let resolved = resolve_strategy(
        ctx,
        inline,
        run.update_strategy_id.as_deref(),
        &join(path, "updateStrategyId"),
        strategies,
        dto,
    );
    let upgrade = build_upgrade(ctx, &run.managed_cluster_update, &join(path, "managedClusterUpdate"), dto);
    let start = match run.start.as_deref() {
        None => Some(ctx.start),
        Some("manual") => None,
        Some(text) => {
            let at = ctx.time(text, &join(path, "start"));
            if let Some(at) = at
                && at < ctx.start
            {
                ctx.err(join(path, "start"), format!("{at} is before the scenario start {}", ctx.start));
            }
            at
        }
    };
    let approval_policy = run.approval_policy.as_ref().and_then(|v| ctx.dist(v, &join(path, "approvalPolicy")));
    let (strategy, strategy_name, strategy_path) = resolved.ok()?;
    let plan = match plan_run(strategy.as_ref(), fleet, settings.plan) {
        Ok(plan) => plan,
        Err(problems) => {
            report_plan_problems(
                ctx,
                problems,
                &strategy_path,
                strategy.as_ref().expect("one-by-one plans cannot fail"),
                &run.name,
            );
            return None;
        }
    };
    let actions = build_actions(ctx, run, path, &plan, fleet);
    if ctx.problems.len() > before {
        return None;
    }
    let spec = RunSpec {
        name: run.name.clone(),
        strategy_name,
        strategy_pointer: strategy_path,
        plan,
        upgrade: upgrade?,
        start: if run.start.as_deref() == Some("manual") { None } else { start },
        actions,
        approval_policy,
        auto_upgrade_profile: None,
    };
    Some((spec, strategy))
}

pub(crate) fn build_upgrade(
    ctx: &mut Ctx,
    dto: &ManagedClusterUpdateDto,
    path: &str,
    scenario: &ScenarioDto,
) -> Option<UpgradeSpec> {
    let before = ctx.problems.len();
    let upgrade_path = join(path, "upgrade");
    let kind = match dto.upgrade.kind.as_str() {
        "Full" => Some(UpgradeType::Full),
        "ControlPlaneOnly" => Some(UpgradeType::ControlPlaneOnly),
        "NodeImageOnly" => Some(UpgradeType::NodeImageOnly),
        other => {
            ctx.err(
                join(&upgrade_path, "type"),
                format!("{} is not an upgrade type: \"Full\", \"ControlPlaneOnly\" or \"NodeImageOnly\"", echo(other)),
            );
            None
        }
    };
    let version_path = join(&upgrade_path, "kubernetesVersion");
    let version = match (&dto.upgrade.kubernetes_version, kind) {
        (None, Some(UpgradeType::Full | UpgradeType::ControlPlaneOnly)) => {
            ctx.err(&version_path, format!("{} upgrades require kubernetesVersion", dto.upgrade.kind));
            None
        }
        (Some(_), Some(UpgradeType::NodeImageOnly)) => {
            ctx.err(&version_path, "NodeImageOnly upgrades must not set kubernetesVersion");
            None
        }
        (Some(v), _) => KubernetesVersion::parse(v).map_err(|e| ctx.err(&version_path, e)).ok(),
        (None, _) => None,
    };
    if let (Some(v), Some(releases)) = (version, scenario.releases.as_ref())
        && super::releases::lists_kubernetes(releases)
        && !super::releases::mentions_kubernetes(releases, v)
    {
        ctx.err(&version_path, format!("Kubernetes version {v} is not in releases.kubernetes; a run cannot target a version that was never released"));
    }
    let selection_path = join(path, "nodeImageSelection");
    let images = match &dto.node_image_selection {
        None => Some(ImageSelection::Latest),
        Some(sel) => {
            let custom = &sel.custom_node_image_versions;
            match (sel.kind.as_str(), custom) {
                ("Latest", None) => Some(ImageSelection::Latest),
                ("Consistent", None) => Some(ImageSelection::Consistent),
                ("Latest" | "Consistent", Some(_)) => {
                    ctx.err(
                        join(&selection_path, "customNodeImageVersions"),
                        "customNodeImageVersions is only allowed with type Custom",
                    );
                    None
                }
                ("Custom", None) => {
                    ctx.err(
                        join(&selection_path, "customNodeImageVersions"),
                        "type Custom requires customNodeImageVersions",
                    );
                    None
                }
                ("Custom", Some(list)) => {
                    let mut map = BTreeMap::new();
                    if list.is_empty() {
                        ctx.err(
                            join(&selection_path, "customNodeImageVersions"),
                            "list at least one node image version",
                        );
                    }
                    for (i, v) in list.iter().enumerate() {
                        let vp = join(&join(&join(&selection_path, "customNodeImageVersions"), i), "version");
                        if let Ok(image) = NodeImageVersion::parse(&v.version).map_err(|e| ctx.err(&vp, e)) {
                            let family = image.family().to_string();
                            if map.insert(family.clone(), image).is_some() {
                                ctx.err(
                                    &vp,
                                    format!("at most one version per image family; {} appears twice", echo(&family)),
                                );
                            }
                        }
                    }
                    Some(ImageSelection::Custom(map))
                }
                (other, _) => {
                    ctx.err(
                        join(&selection_path, "type"),
                        format!(
                            "{} is not a node image selection: \"Latest\", \"Consistent\" or \"Custom\"",
                            echo(other)
                        ),
                    );
                    None
                }
            }
        }
    };
    if ctx.problems.len() > before {
        return None;
    }
    Some(UpgradeSpec {
        kind: kind?,
        kubernetes_version: version,
        images: images?,
        security_patch: false,
        auto_upgrade: false,
        lts_only: false,
    })
}

fn build_actions(
    ctx: &mut Ctx,
    run: &UpdateRunDto,
    path: &str,
    plan: &crate::orchestrator::RunPlan,
    fleet: &[Member],
) -> Vec<Action> {
    let mut actions = Vec::new();
    for (i, action) in run.actions.iter().enumerate() {
        let action_path = join(&join(path, "actions"), i);
        let Some(at) = ctx.time(&action.at, &join(&action_path, "at")) else { continue };
        if at < ctx.start {
            ctx.err(join(&action_path, "at"), format!("{at} is before the scenario start"));
        }
        let expect_fields = |ctx: &mut Ctx, targets: bool, gate: bool| {
            if action.targets.is_some() && !targets {
                ctx.err(
                    join(&action_path, "targets"),
                    format!("{} takes no targets (only \"skip\" does)", echo(&action.action)),
                );
            }
            if action.gate.is_some() && !gate {
                ctx.err(
                    join(&action_path, "gate"),
                    format!("{} takes no gate (only \"approve\" does)", echo(&action.action)),
                );
            }
        };
        let kind = match action.action.as_str() {
            "start" => {
                expect_fields(ctx, false, false);
                ActionKind::Start
            }
            "stop" => {
                expect_fields(ctx, false, false);
                ActionKind::Stop
            }
            "skip" => {
                expect_fields(ctx, true, false);
                let Some(targets) = &action.targets else {
                    ctx.err(
                        join(&action_path, "targets"),
                        "skip needs targets [{\"type\": \"Group\", \"name\": \"...\"}]",
                    );
                    continue;
                };
                let resolved: Vec<SkipTarget> = targets
                    .iter()
                    .enumerate()
                    .filter_map(|(t, target)| {
                        skip_target(ctx, target, &join(&join(&action_path, "targets"), t), plan, fleet)
                    })
                    .collect();
                if targets.is_empty() {
                    ctx.err(join(&action_path, "targets"), "skip needs at least one target");
                }
                ActionKind::Skip(resolved)
            }
            "approve" => {
                expect_fields(ctx, false, true);
                let Some(address) = &action.gate else {
                    ctx.err(join(&action_path, "gate"), "approve needs a gate: {\"stage\": ..., \"group\": ..., \"timing\": \"Before\"} or {\"displayName\": ...}");
                    continue;
                };
                let gates = resolve_gates(ctx, address, &join(&action_path, "gate"), plan);
                ActionKind::Approve { gates, label: describe_address(address) }
            }
            other => {
                ctx.err(
                    join(&action_path, "action"),
                    format!("{} is not an action: \"start\", \"stop\", \"skip\" or \"approve\"", echo(other)),
                );
                continue;
            }
        };
        actions.push(Action { at, kind });
    }
    actions
}

fn describe_address(a: &GateAddressDto) -> String {
    let mut parts = Vec::new();
    if let Some(s) = &a.stage {
        parts.push(format!("stage {s}"));
    }
    if let Some(g) = &a.group {
        parts.push(format!("group {g}"));
    }
    if let Some(t) = &a.timing {
        parts.push(t.clone());
    }
    if let Some(d) = &a.display_name {
        parts.push(echo(d).to_string());
    }
    parts.join(" ")
}

fn skip_target(
    ctx: &mut Ctx,
    dto: &SkipTargetDto,
    path: &str,
    plan: &crate::orchestrator::RunPlan,
    fleet: &[Member],
) -> Option<SkipTarget> {
    let name = dto.name.as_str();
    let stage_index = |name: &str| plan.stages.iter().position(|s| s.name == name);
    let found = match dto.kind.as_str() {
        "Member" => plan.stages.iter().enumerate().find_map(|(s, stage)| {
            stage.groups.iter().enumerate().find_map(|(g, group)| {
                group
                    .members
                    .iter()
                    .position(|m| fleet[m.index()].name == name)
                    .map(|i| SkipTarget::Member(Slot { stage: s as u16, group: g as u16, index: i as u32 }))
            })
        }),
        "Group" => plan.stages.iter().enumerate().find_map(|(s, stage)| {
            stage
                .groups
                .iter()
                .position(|g| g.name == name)
                .map(|g| SkipTarget::Group { stage: s as u16, group: g as u16 })
        }),
        "Stage" => stage_index(name).map(|s| SkipTarget::Stage(s as u16)),
        "AfterStageWait" => match stage_index(name) {
            Some(s) if plan.stages[s].after_stage_wait > Duration::ZERO => Some(SkipTarget::AfterStageWait(s as u16)),
            Some(_) => {
                ctx.err(join(path, "name"), format!("stage {} has no afterStageWaitInSeconds to skip", echo(name)));
                return None;
            }
            None => None,
        },
        other => {
            ctx.err(
                join(path, "type"),
                format!(
                    "{} is not a skip target type: \"Member\", \"Group\", \"Stage\" or \"AfterStageWait\"",
                    echo(other)
                ),
            );
            return None;
        }
    };
    if found.is_none() {
        let what = match dto.kind.as_str() {
            "Member" => "member",
            "Group" => "group",
            _ => "stage",
        };
        ctx.err(join(path, "name"), format!("this run has no {what} {}", echo(name)));
    }
    found
}

fn resolve_gates(
    ctx: &mut Ctx,
    address: &GateAddressDto,
    path: &str,
    plan: &crate::orchestrator::RunPlan,
) -> Vec<GateRef> {
    let timing = match address.timing.as_deref() {
        None => None,
        Some("Before") => Some(Timing::Before),
        Some("After") => Some(Timing::After),
        Some(other) => {
            ctx.err(join(path, "timing"), format!("{} is not a timing: \"Before\" or \"After\"", echo(other)));
            return Vec::new();
        }
    };
    if address.stage.is_none() && address.group.is_none() && address.display_name.is_none() {
        ctx.err(path, "address a gate by stage, group, timing and/or displayName");
        return Vec::new();
    }
    let mut found = Vec::new();
    for (s, stage) in plan.stages.iter().enumerate() {
        if address.stage.as_ref().is_some_and(|n| *n != stage.name) {
            continue;
        }
        let mut consider = |group: Option<u16>, t: Timing, list: &[GateConfig]| {
            for (i, gate) in list.iter().enumerate() {
                let named = address.display_name.as_ref().is_none_or(|d| gate.display_name.as_ref() == Some(d));
                if named && timing.is_none_or(|want| want == t) {
                    found.push(GateRef { stage: s as u16, group, timing: t, index: i as u16 });
                }
            }
        };
        if address.group.is_none() {
            consider(None, Timing::Before, &stage.before_gates);
            consider(None, Timing::After, &stage.after_gates);
        }
        for (g, group) in stage.groups.iter().enumerate() {
            if address.group.as_ref().is_some_and(|n| *n == group.name)
                || (address.group.is_none() && address.stage.is_none())
            {
                consider(Some(g as u16), Timing::Before, &group.before_gates);
                consider(Some(g as u16), Timing::After, &group.after_gates);
            }
        }
    }
    if found.is_empty() {
        ctx.err(path, format!("no gate of this run matches {}", describe_address(address)));
    }
    found
}

// ----- models ---------------------------------------------------------------------------------

/// A duration model: the fields `dto` gives replace those of `base` (aks-models.md §4.2 defaults).
pub(crate) fn duration_model(ctx: &mut Ctx, dto: &DurationModelDto, base: DurationModel, path: &str) -> DurationModel {
    let mut model = base;
    let set = |ctx: &mut Ctx, value: &Option<Value>, field: &str, target: &mut DurationDist| {
        if let Some(v) = value
            && let Some(dist) = ctx.dist(v, &join(path, field))
        {
            *target = dist;
        }
    };
    set(ctx, &dto.control_plane, "controlPlane", &mut model.control_plane);
    set(ctx, &dto.linux_node_batch, "linuxNodeBatch", &mut model.linux_batch);
    set(ctx, &dto.windows_node_batch, "windowsNodeBatch", &mut model.windows_batch);
    set(ctx, &dto.security_patch_pool, "securityPatchPool", &mut model.security_patch_pool);
    if let Some(v) = &dto.member {
        model.member = ctx.dist(v, &join(path, "member"));
    } else if [&dto.control_plane, &dto.linux_node_batch, &dto.windows_node_batch, &dto.security_patch_pool]
        .iter()
        .any(|v| v.is_some())
    {
        // Components given here would be hidden by an inherited whole-upgrade duration.
        model.member = None;
    }
    if let Some(t) = &dto.drain_timeout
        && let Some(timeout) = ctx.duration(t, &join(path, "drainTimeout"))
    {
        model.drain_timeout = timeout;
    }
    model
}

fn build_models(ctx: &mut Ctx, dto: &ModelsDto, fleet: &[Member], scenario: &ScenarioDto) -> Models {
    let mut models = Models::default();
    if let Some(f) = &dto.failure {
        let p = "/models/failure";
        if let Some(v) = f.probability {
            let v = ctx.probability(v, &join(p, "probability"));
            models.failure.patch_probability = v;
            models.failure.minor_probability = v;
        }
        if let Some(v) = f.patch_probability {
            models.failure.patch_probability = ctx.probability(v, &join(p, "patchProbability"));
        }
        if let Some(v) = f.minor_probability {
            models.failure.minor_probability = ctx.probability(v, &join(p, "minorProbability"));
        }
        if let Some(codes) = &f.codes {
            models.failure.codes = codes
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let cp = join(&join(p, "codes"), i);
                    let point = match c.point.as_str() {
                        "preCheck" => FailurePoint::PreCheck,
                        "surgeAllocation" => FailurePoint::SurgeAllocation,
                        "drain" => FailurePoint::Drain,
                        "anywhere" => FailurePoint::Anywhere,
                        other => {
                            ctx.err(
                                join(&cp, "point"),
                                format!(
                                    "{} is not one of \"preCheck\", \"surgeAllocation\", \"drain\", \"anywhere\"",
                                    echo(other)
                                ),
                            );
                            return None;
                        }
                    };
                    if !(0..=1_000_000).contains(&c.weight) {
                        ctx.err(join(&cp, "weight"), "weight must be between 0 and 1000000");
                        return None;
                    }
                    Some(FailureCode {
                        code: c.code.clone(),
                        weight: c.weight as u32,
                        point,
                        minor_only: c.minor_only,
                        message: c.message.clone().unwrap_or_else(|| format!("the upgrade failed with {}", c.code)),
                    })
                })
                .collect();
        }
    }
    let member_index =
        |name: &str| fleet.binary_search_by(|m| m.name.as_str().cmp(name)).ok().map(|i| MemberId(i as u32));
    let run_names: BTreeSet<&str> = scenario.update_runs.iter().map(|r| r.name.as_str()).collect();
    for (i, o) in dto.overrides.iter().enumerate() {
        let p = join("/models/overrides", i);
        let Some(member) = member_index(&o.member) else {
            ctx.err(join(&p, "member"), format!("no member {} in the fleet", echo(&o.member)));
            continue;
        };
        if let Some(run) = &o.run
            && !run_names.contains(run.as_str())
        {
            ctx.err(join(&p, "run"), format!("no update run {}", echo(run)));
        }
        let outcome = match o.outcome.as_deref() {
            None => {
                if o.error_code.is_some() {
                    ctx.err(join(&p, "errorCode"), "errorCode needs outcome \"Failed\"");
                }
                None
            }
            Some("Completed") => Some(ForcedOutcome::Completed),
            Some("Failed") => {
                let code = o.error_code.clone().unwrap_or_else(|| "UpgradeFailed".to_string());
                let message =
                    o.message.clone().unwrap_or_else(|| format!("forced failure ({code}) from models.overrides"));
                Some(ForcedOutcome::Failed { code, message })
            }
            Some(other) => {
                ctx.err(join(&p, "outcome"), format!("{} is not an outcome: \"Completed\" or \"Failed\"", echo(other)));
                None
            }
        };
        let duration = o.duration.as_ref().and_then(|d| ctx.duration(d, &join(&p, "duration")));
        models.overrides.push(Override { member, run: o.run.clone(), outcome, duration });
    }
    models.approvals = dto.approvals.as_ref().and_then(|v| ctx.dist(v, "/models/approvals"));
    for (i, bad) in dto.bad_releases.iter().enumerate() {
        let p = join("/models/badReleases", i);
        let is_k8s = KubernetesVersion::parse(&bad.version).is_ok();
        if !is_k8s && NodeImageVersion::parse(&bad.version).is_err() {
            ctx.err(
                join(&p, "version"),
                format!("{} is neither a Kubernetes version nor a node image version", echo(&bad.version)),
            );
        }
        let fraction = ctx.probability(bad.failure_fraction, &join(&p, "failureFraction"));
        let selector = bad.member_selector.as_ref().and_then(|s| {
            Selector::parse(s)
                .map_err(|e| ctx.err(join(&p, "memberSelector"), format!("invalid label selector: {e}")))
                .ok()
        });
        models.bad_releases.push(BadRelease {
            version: bad.version.clone(),
            failure_fraction: fraction,
            selector,
            code: bad.error_code.clone().unwrap_or_else(|| "UpgradeFailed".to_string()),
            message: bad.message.clone().unwrap_or_else(|| {
                format!("the cluster became unhealthy after receiving {}, a release marked bad", bad.version)
            }),
        });
    }
    for (i, inc) in dto.incidents.iter().enumerate() {
        let p = join("/models/incidents", i);
        let from = ctx.time(&inc.from, &join(&p, "from"));
        let to = ctx.time(&inc.to, &join(&p, "to"));
        if let (Some(f), Some(t)) = (from, to)
            && t <= f
        {
            ctx.err(join(&p, "to"), "an incident ends after it starts");
        }
        let probability = ctx.probability(inc.failure_probability, &join(&p, "failureProbability"));
        let stall = inc.stall.as_ref().and_then(|s| ctx.duration(s, &join(&p, "stall")));
        if let (Some(from), Some(to)) = (from, to) {
            models.incidents.push(RegionalIncident {
                region: inc.region.clone(),
                from,
                to,
                failure_probability: probability,
                stall,
                code: inc.error_code.clone().unwrap_or_else(|| "InternalServerError".to_string()),
            });
        }
    }
    models
}
