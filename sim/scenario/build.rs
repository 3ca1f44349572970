//! The scenario's entry point: DTOs → a validated [`Scenario`] (SEMANTICS §2). Every problem is
//! collected with its JSON Pointer; nothing downstream sees raw JSON. This file runs the steps in
//! order (settings, members, releases, generated members, models, strategies, runs, profiles); each
//! step lives in its own module: `members`, `pools`, `generate`, `releases`, `stream`, `models`,
//! `strategies`, `runs`, `profiles`, all reporting into one [`Ctx`].

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::{Duration, Time};
use crate::orchestrator::plan::{GroupAboveStage, PlanSettings};
use crate::orchestrator::{FailureScope, RunSettings};
use crate::world::{DurationModel, MinorSkipRule, WorldSettings};

use super::ctx::{Ctx, check_name, quoted};
use super::dto::*;
use super::members::{NameOrder, build_generated, build_members, into_name_order};
use super::models::{build_models, duration_model};
use super::problem::{Problem, echo, join};
use super::runs::build_runs;
use super::strategies::build_strategy;
use super::{Scenario, Settings};

/// What other modules name by this path.
pub use super::strategies::strategy_name_of;

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
    let mut ctx = Ctx::new(Time(0));
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
    build_generated(&mut ctx, &dto.member_generators, seed, &releases, &base_durations, keep_dtos, &mut fleet);
    let NameOrder { members: fleet, durations: member_durations, dtos } = into_name_order(&mut ctx, fleet, keep_dtos);
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

#[cfg(test)]
mod tests {
    use crate::scenario::members::name_prefix;
    use proptest::prelude::*;

    proptest! {
        /// Names whose 16-byte prefixes differ are in the order of their prefixes: differing around
        /// the 16th byte, with zero bytes (which the padding also is), and one the start of the other.
        #[test]
        fn names_with_different_prefixes_compare_as_their_prefixes(
            a in "[a\x00\x01\x7f\u{e9}-]{0,20}",
            b in "[a\x00\x01\x7f\u{e9}-]{0,20}",
            common in "[a\x00-]{0,17}",
        ) {
            let pairs = [
                (a.clone(), b.clone()),
                (format!("{common}{a}"), format!("{common}{b}")),
                (common.clone(), format!("{common}{a}")),
            ];
            for (x, y) in pairs {
                let (px, py) = (name_prefix(&x), name_prefix(&y));
                if px != py {
                    prop_assert_eq!(px.cmp(&py), x.cmp(&y), "{:?} {:?}", x, y);
                }
            }
        }
    }

    #[test]
    fn the_fleet_is_in_name_order_when_names_share_their_first_16_bytes() {
        let names = [
            "cluster-production-eastus-10",
            "cluster-production-eastus-9",
            "cluster-production-eastus",
            "cluster-production-east",
            "cluster-production-eastus-1",
            "a",
            "cluster-production-eastus2-1",
            "cluster-production-eastus-1-0",
            "cluster-producti",
        ];
        let members: Vec<serde_json::Value> = names
            .iter()
            .map(|name| serde_json::json!({"name": name, "region": "eastus", "kubernetesVersion": "1.32.4"}))
            .collect();
        let doc = serde_json::json!({"name": "order", "start": "2026-03-02T00:00:00Z", "members": members});
        let scenario = crate::scenario::from_value(&doc, None).expect("the scenario is valid");
        let mut sorted = names.to_vec();
        sorted.sort();
        assert_eq!(scenario.fleet.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), sorted);
    }
}
