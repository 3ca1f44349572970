//! Update runs: each run's strategy, plan, upgrade, start and actions (start, stop, skip, approve
//! with their targets and gates resolved against the plan).

use std::collections::BTreeMap;

use crate::engine::Duration;
use crate::fleet::{KubernetesVersion, Member, NodeImageVersion};
use crate::orchestrator::plan::plan_run;
use crate::orchestrator::{GateConfig, GateRef, RunPlan, SkipTarget, Slot, Strategy, Timing};
use crate::world::{ImageSelection, UpgradeSpec, UpgradeType};

use super::ctx::{Ctx, check_name};
use super::dto::*;
use super::problem::{echo, join};
use super::strategies::{report_plan_problems, resolve_strategy};
use super::{Action, ActionKind, RunSpec, Settings};

pub(crate) fn build_runs(
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
        plan: plan.into(),
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

fn build_actions(ctx: &mut Ctx, run: &UpdateRunDto, path: &str, plan: &RunPlan, fleet: &[Member]) -> Vec<Action> {
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

fn skip_target(ctx: &mut Ctx, dto: &SkipTargetDto, path: &str, plan: &RunPlan, fleet: &[Member]) -> Option<SkipTarget> {
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

fn resolve_gates(ctx: &mut Ctx, address: &GateAddressDto, path: &str, plan: &RunPlan) -> Vec<GateRef> {
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
