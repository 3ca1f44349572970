//! Auto-upgrade profiles (SEMANTICS §9): the API's `AutoUpgradeProfile` properties, validated.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::fleet::{Member, MinorVersion};
use crate::orchestrator::{RunPlan, Strategy, plan_run};
use crate::world::{ImageSelection, ReleaseCalendar};

use super::Settings;
use super::ctx::{Ctx, check_name};
use super::dto::{ReadOnly, arm_resource};
use super::problem::{echo, join};
use super::strategies::{report_plan_problems, resolve_strategy};

arm_resource! {
/// `AutoUpgradeProfile` properties plus a name.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AutoUpgradeProfileDto {
    /// Profile name, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, 1–50 characters; generated runs are named after it.
    pub name: String,
    /// `Rapid`, `Stable`, `TargetKubernetesVersion`, `NodeImage` or `SecurityPatch`.
    #[schemars(extend("enum" = ["Rapid", "Stable", "TargetKubernetesVersion", "NodeImage", "SecurityPatch"]))]
    pub channel: String,
    /// `major.minor`, a minor released by the scenario start; required with channel
    /// `TargetKubernetesVersion`, forbidden otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kubernetes_version: Option<String>,
    /// Keep following an LTS minor older than N−2 (only with `TargetKubernetesVersion`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_term_support: Option<bool>,
    /// `{"type": "Latest"}` (default) or `{"type": "Consistent"}`; Kubernetes channels only
    /// (`NodeImage` and `SecurityPatch` runs target the released image itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<ProfileImageSelectionDto>,
    /// No new runs are generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// A strategy of `updateStrategies` by name or ARM id; absent: every member one by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy_id: Option<String>,
} {
    #[serde(default, skip_serializing)]
    pub auto_upgrade_profile_status: ReadOnly,
}
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileImageSelectionDto {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["Latest", "Consistent"]))]
    pub kind: String,
}

/// `AutoUpgradeProfile.channel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// Latest patch of the newest minor N.
    Rapid,
    /// Latest patch of minor N−1.
    Stable,
    /// Latest patch of a given `major.minor`.
    TargetKubernetesVersion,
    /// A `NodeImageOnly` run per new node image.
    NodeImage,
    /// Linux-only security patches.
    SecurityPatch,
}

impl Channel {
    pub fn parse(text: &str) -> Result<Channel, String> {
        Ok(match text {
            "Rapid" => Channel::Rapid,
            "Stable" => Channel::Stable,
            "TargetKubernetesVersion" => Channel::TargetKubernetesVersion,
            "NodeImage" => Channel::NodeImage,
            "SecurityPatch" => Channel::SecurityPatch,
            other => {
                return Err(format!(
                    "\"{other}\" is not a channel: \"Rapid\", \"Stable\", \"TargetKubernetesVersion\", \"NodeImage\" or \"SecurityPatch\""
                ));
            }
        })
    }

    pub fn api_name(self) -> &'static str {
        match self {
            Channel::Rapid => "Rapid",
            Channel::Stable => "Stable",
            Channel::TargetKubernetesVersion => "TargetKubernetesVersion",
            Channel::NodeImage => "NodeImage",
            Channel::SecurityPatch => "SecurityPatch",
        }
    }

    /// Kubernetes channels generate `Full` runs; the others node image runs.
    pub fn is_kubernetes(self) -> bool {
        matches!(self, Channel::Rapid | Channel::Stable | Channel::TargetKubernetesVersion)
    }
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
    pub plan: Arc<RunPlan>,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn build_profiles(
    ctx: &mut Ctx,
    profiles: &[AutoUpgradeProfileDto],
    fleet: &[Member],
    strategies: &BTreeMap<String, Strategy>,
    settings: &Settings,
    scenario: &super::dto::ScenarioDto,
    releases: &ReleaseCalendar,
    start: Time,
) -> Vec<ProfileSpec> {
    let mut names = BTreeMap::new();
    let mut out = Vec::new();
    for (i, dto) in profiles.iter().enumerate() {
        let path = join("/autoUpgradeProfiles", i);
        let before = ctx.problems.len();
        if check_name(ctx, &dto.name, &join(&path, "name"), "auto-upgrade profile")
            && let Some(previous) = names.insert(dto.name.clone(), path.clone())
        {
            ctx.err(join(&path, "name"), format!("profile name {} is already used at {previous}", echo(&dto.name)));
        }
        let channel = Channel::parse(&dto.channel).map_err(|e| ctx.err(join(&path, "channel"), e)).ok();
        let target_minor = match (&dto.target_kubernetes_version, channel) {
            (Some(t), Some(Channel::TargetKubernetesVersion)) => {
                let pointer = join(&path, "targetKubernetesVersion");
                let minor = MinorVersion::parse(t).map_err(|e| ctx.err(pointer.clone(), e)).ok();
                // AKS does not let a profile target a version it has not released.
                if let Some(minor) = minor
                    && let Some(why) = unreleased(minor, releases, start)
                {
                    ctx.err(pointer, why);
                }
                minor
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
        if dto.node_image_selection.is_some() && channel.is_some_and(|c| !c.is_kubernetes()) {
            // SEMANTICS §9: their runs target the released image itself.
            ctx.err(
                join(&path, "nodeImageSelection"),
                format!(
                    "nodeImageSelection is not allowed with channel {}: its runs target the released node image itself",
                    dto.channel
                ),
            );
        }
        let images = match dto.node_image_selection.as_ref().map(|s| s.kind.as_str()) {
            None | Some("Latest") => ImageSelection::Latest,
            Some("Consistent") => ImageSelection::Consistent,
            Some(other) => {
                ctx.err(
                    join(&join(&path, "nodeImageSelection"), "type"),
                    format!("{} is not a profile node image selection: \"Latest\" or \"Consistent\"", echo(other)),
                );
                ImageSelection::Latest
            }
        };
        let resolved = resolve_strategy(
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
            plan: plan.into(),
        });
    }
    out
}

/// Why `minor` is not a valid `targetKubernetesVersion` at `start` (`None`: a release of it had
/// started by then). A release spread by the rollout model counts from its `released` time, so the
/// answer does not depend on the replication's draw.
fn unreleased(minor: MinorVersion, releases: &ReleaseCalendar, start: Time) -> Option<String> {
    let released_by_start = |r: &crate::world::KubernetesRelease| {
        r.rollout.as_ref().map(|spec| spec.released).or(r.availability.first()).is_some_and(|t| t <= start)
    };
    if releases.kubernetes.iter().any(|r| r.version.minor_version() == minor && released_by_start(r)) {
        return None;
    }
    let newest = releases.kubernetes.iter().filter(|r| released_by_start(r)).map(|r| r.version.minor_version()).max();
    Some(match newest {
        Some(n) => format!(
            "Kubernetes {minor} is not released by the scenario start (the newest released minor is {n}); a profile can only target a version AKS has released"
        ),
        None => format!(
            "Kubernetes {minor} is not released by the scenario start (releases.kubernetes lists no release by then); a profile can only target a version AKS has released"
        ),
    })
}
