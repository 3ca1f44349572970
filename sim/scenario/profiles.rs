//! Auto-upgrade profiles (SEMANTICS §9): the API's `AutoUpgradeProfile` properties, validated.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::autoupgrade::Channel;
use crate::fleet::{Member, MinorVersion};
use crate::orchestrator::{RunPlan, Strategy, plan_run};
use crate::world::ImageSelection;

use super::Settings;
use super::build::{Ctx, check_name, report_plan_problems};
use super::problem::join;

/// `AutoUpgradeProfile` properties plus a name.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AutoUpgradeProfileDto {
    /// Profile name, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, 1–50 characters; generated runs are named after it.
    pub name: String,
    /// `Rapid`, `Stable`, `TargetKubernetesVersion`, `NodeImage` or `SecurityPatch`.
    #[schemars(extend("enum" = ["Rapid", "Stable", "TargetKubernetesVersion", "NodeImage", "SecurityPatch"]))]
    pub channel: String,
    /// `major.minor`; required with channel `TargetKubernetesVersion`, forbidden otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kubernetes_version: Option<String>,
    /// Keep following an LTS minor older than N−2 (only with `TargetKubernetesVersion`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_term_support: Option<bool>,
    /// `{"type": "Latest"}` (default) or `{"type": "Consistent"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<ProfileImageSelectionDto>,
    /// No new runs are generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// A strategy of `updateStrategies` by name or ARM id; absent: every member one by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy_id: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileImageSelectionDto {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["Latest", "Consistent"]))]
    pub kind: String,
}

/// A validated auto-upgrade profile.
#[derive(Clone, Debug)]
pub struct ProfileSpec {
    pub name: String,
    pub channel: Channel,
    pub target_minor: Option<MinorVersion>,
    pub long_term_support: bool,
    pub images: ImageSelection,
    pub disabled: bool,
    pub strategy_name: Option<String>,
    /// Membership and limits, resolved once (the fleet's labels do not change during a simulation).
    pub plan: RunPlan,
}

pub(crate) fn build_profiles(
    ctx: &mut Ctx,
    profiles: &[AutoUpgradeProfileDto],
    fleet: &[Member],
    strategies: &BTreeMap<String, Strategy>,
    settings: &Settings,
    scenario: &super::dto::ScenarioDto,
) -> Vec<ProfileSpec> {
    let mut names = BTreeMap::new();
    let mut out = Vec::new();
    for (i, dto) in profiles.iter().enumerate() {
        let path = join("/autoUpgradeProfiles", i);
        let before = ctx.problems.len();
        if check_name(ctx, &dto.name, &join(&path, "name"), "auto-upgrade profile")
            && let Some(previous) = names.insert(dto.name.clone(), path.clone())
        {
            ctx.err(join(&path, "name"), format!("profile name \"{}\" is already used at {previous}", dto.name));
        }
        let channel = Channel::parse(&dto.channel).map_err(|e| ctx.err(join(&path, "channel"), e)).ok();
        let target_minor = match (&dto.target_kubernetes_version, channel) {
            (Some(t), Some(Channel::TargetKubernetesVersion)) => {
                MinorVersion::parse(t).map_err(|e| ctx.err(join(&path, "targetKubernetesVersion"), e)).ok()
            }
            (None, Some(Channel::TargetKubernetesVersion)) => {
                ctx.err(
                    join(&path, "targetKubernetesVersion"),
                    "channel TargetKubernetesVersion requires targetKubernetesVersion (\"major.minor\")",
                );
                None
            }
            (Some(_), _) => {
                ctx.err(
                    join(&path, "targetKubernetesVersion"),
                    "targetKubernetesVersion is only allowed with channel TargetKubernetesVersion",
                );
                None
            }
            (None, _) => None,
        };
        let lts = dto.long_term_support.unwrap_or(false);
        if lts && channel.is_some_and(|c| c != Channel::TargetKubernetesVersion) {
            ctx.err(
                join(&path, "longTermSupport"),
                "longTermSupport must be false unless the channel is TargetKubernetesVersion",
            );
        }
        let images = match dto.node_image_selection.as_ref().map(|s| s.kind.as_str()) {
            None | Some("Latest") => ImageSelection::Latest,
            Some("Consistent") => ImageSelection::Consistent,
            Some(other) => {
                ctx.err(
                    join(&join(&path, "nodeImageSelection"), "type"),
                    format!("\"{other}\" is not a profile node image selection: \"Latest\" or \"Consistent\""),
                );
                ImageSelection::Latest
            }
        };
        let resolved = super::build::resolve_strategy(
            ctx,
            None,
            dto.update_strategy_id.as_deref(),
            &join(&path, "updateStrategyId"),
            strategies,
            scenario,
        );
        let Ok((strategy, strategy_name, strategy_path)) = resolved else { continue };
        let plan = match plan_run(strategy.as_ref(), fleet, settings.plan) {
            Ok(plan) => plan,
            Err(problems) => {
                let strategy = strategy.as_ref().expect("one-by-one plans cannot fail");
                report_plan_problems(ctx, problems, &strategy_path, strategy, &format!("profile {}", dto.name));
                continue;
            }
        };
        if ctx.problems.len() > before {
            continue;
        }
        let Some(channel) = channel else { continue };
        out.push(ProfileSpec {
            name: dto.name.clone(),
            channel,
            target_minor,
            long_term_support: lts,
            images,
            disabled: dto.disabled.unwrap_or(false),
            strategy_name,
            plan,
        });
    }
    out
}
