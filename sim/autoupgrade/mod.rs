//! Auto-upgrade profiles: turn releases into generated update runs (SEMANTICS §9;
//! azure-fleet-semantics.md §7).
//!
//! A run is generated **and started** when a matching release first reaches at least one region,
//! never retroactively: the profile exists from the scenario start, and the channel's target at that
//! moment is its baseline. Kubernetes channels generate a `Full` run each time their target moves.
//! Image channels generate a `NodeImageOnly` run per image release, each family's release its own
//! trigger; the run targets the released image itself (`Custom`), so members whose region has not
//! received it yet wait `Pending` for it. `SecurityPatch` does the same for Linux images only.

pub mod channels;

use std::collections::BTreeMap;

use crate::engine::Time;
use crate::fleet::{KubernetesVersion, NodeImageVersion};
use crate::scenario::ProfileSpec;
use crate::world::{ImageSelection, ReleaseCalendar, UpgradeSpec, UpgradeType};

pub use channels::{Channel, is_supported, kubernetes_target};

/// An instant at which a profile looks for something new.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    pub time: Time,
    /// The image release first available at this instant (image channels).
    pub image: Option<NodeImageVersion>,
}

/// What a trigger generates.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub name: String,
    pub upgrade: UpgradeSpec,
    /// The channel's new target (Kubernetes channels).
    pub kubernetes_target: Option<KubernetesVersion>,
}

/// The answer of a profile to a trigger.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// A new run.
    Generate(Generated),
    /// Nothing new: the channel's target did not move.
    Unchanged,
    /// Nothing, for a reason the profile's report states (e.g. an LTS-only target without
    /// `longTermSupport`).
    Idle(String),
}

/// Kubernetes versions released (in at least one region) by `now`.
pub fn released_kubernetes(releases: &ReleaseCalendar, now: Time) -> Vec<KubernetesVersion> {
    releases.kubernetes.iter().filter(|r| r.availability.first().is_some_and(|t| t <= now)).map(|r| r.version).collect()
}

/// The channel's target when the profile comes into being (the scenario start): its baseline.
pub fn baseline_target(profile: &ProfileSpec, releases: &ReleaseCalendar, start: Time) -> Option<KubernetesVersion> {
    if !profile.channel.is_kubernetes() {
        return None;
    }
    kubernetes_target(
        profile.channel,
        &released_kubernetes(releases, start),
        profile.target_minor,
        profile.long_term_support,
    )
}

/// Why a Kubernetes-channel profile targets nothing given the versions released so far (`None`: it
/// has a target, or nothing is released yet). A `TargetKubernetesVersion` minor older than N−2 is
/// only supported with long-term support, and N only grows: such a profile never generates again.
pub fn idle_reason(profile: &ProfileSpec, released: &[KubernetesVersion]) -> Option<String> {
    let minor = profile.target_minor.filter(|_| profile.channel == Channel::TargetKubernetesVersion)?;
    let newest = channels::newest_minor(released)?;
    (!profile.long_term_support && !is_supported(minor, released)).then(|| {
        format!(
            "targetKubernetesVersion {minor} is older than N-2 (the newest minor is {newest}), so AKS supports it \
             only with long-term support; longTermSupport is false, so the profile generates no runs"
        )
    })
}

fn image_matches(profile: &ProfileSpec, version: &NodeImageVersion) -> bool {
    match profile.channel {
        Channel::NodeImage => true,
        Channel::SecurityPatch => !version.is_windows(),
        _ => false,
    }
}

/// The instants after `start` at which a release relevant to the profile first reaches a region:
/// for Kubernetes channels one per instant, for image channels one per image release (two families
/// released at one instant are two triggers, in version-text order).
pub fn triggers(profile: &ProfileSpec, releases: &ReleaseCalendar, start: Time) -> Vec<Trigger> {
    if profile.channel.is_kubernetes() {
        let mut times: Vec<Time> =
            releases.kubernetes.iter().filter_map(|r| r.availability.first()).filter(|t| *t > start).collect();
        times.sort_unstable();
        times.dedup();
        return times.into_iter().map(|time| Trigger { time, image: None }).collect();
    }
    let mut found: Vec<(Time, NodeImageVersion)> = releases
        .images
        .values()
        .flatten()
        .filter(|r| image_matches(profile, &r.version))
        .filter_map(|r| r.availability.first().filter(|t| *t > start).map(|t| (t, r.version.clone())))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_str().cmp(b.1.as_str())));
    found.into_iter().map(|(time, version)| Trigger { time, image: Some(version) }).collect()
}

/// A resource name derived from the profile and the target: lowercase, `-` for every other character,
/// at most 50 characters (the profile part is shortened first).
pub fn run_name(profile: &str, target: &str) -> String {
    let clean = |s: &str| -> String {
        let mapped: String =
            s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
        mapped.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
    };
    let target = clean(target);
    let room = 50usize.saturating_sub(target.len() + 1).max(1);
    let profile: String = clean(profile).chars().take(room).collect();
    format!("{}-{target}", profile.trim_end_matches('-'))
}

/// The target part of an image run's name: the whole image version, family included (a run's
/// identity is its whole target), the family without its `AKS` gallery prefix and separators so
/// that names stay within 50 characters: `ubuntu2204gen2containerd-202603.01.0`.
pub fn image_target_label(version: &NodeImageVersion) -> String {
    let family = version.family();
    let family = family.strip_prefix("AKS").filter(|f| !f.is_empty()).unwrap_or(family);
    let compact: String = family.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    format!("{compact}-{}", version.version())
}

/// What the profile does at a trigger.
pub fn generate(
    profile: &ProfileSpec,
    trigger: &Trigger,
    last_target: Option<KubernetesVersion>,
    releases: &ReleaseCalendar,
    now: Time,
) -> Decision {
    if profile.channel.is_kubernetes() {
        let released = released_kubernetes(releases, now);
        let Some(target) =
            kubernetes_target(profile.channel, &released, profile.target_minor, profile.long_term_support)
        else {
            return idle_reason(profile, &released).map_or(Decision::Unchanged, Decision::Idle);
        };
        if Some(target) == last_target {
            return Decision::Unchanged;
        }
        let lts_only = profile.channel == Channel::TargetKubernetesVersion
            && profile.long_term_support
            && !is_supported(target.minor_version(), &released);
        return Decision::Generate(Generated {
            name: run_name(&profile.name, &target.to_string()),
            upgrade: UpgradeSpec {
                kind: UpgradeType::Full,
                kubernetes_version: Some(target),
                images: profile.images.clone(),
                security_patch: false,
                auto_upgrade: true,
                lts_only,
            },
            kubernetes_target: Some(target),
        });
    }
    let Some(image) = &trigger.image else { return Decision::Unchanged };
    // SEMANTICS §9: the released image itself, as `Custom` would name it.
    let images = ImageSelection::Custom(BTreeMap::from([(image.family().to_string(), image.clone())]));
    Decision::Generate(Generated {
        name: run_name(&profile.name, &image_target_label(image)),
        upgrade: UpgradeSpec {
            kind: UpgradeType::NodeImageOnly,
            kubernetes_version: None,
            images,
            security_patch: profile.channel == Channel::SecurityPatch,
            auto_upgrade: true,
            lts_only: false,
        },
        kubernetes_target: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_names_are_valid_resource_names() {
        assert_eq!(run_name("stable", "1.33.4"), "stable-1-33-4");
        assert_eq!(run_name("Node_Image", "202603.10.0"), "node-image-202603-10-0");
        let long = run_name(&"p".repeat(60), "20348.3207.250214");
        assert!(long.len() <= 50, "{long}");
        assert!(long.ends_with("-20348-3207-250214"));
    }

    #[test]
    fn image_run_names_name_the_family_and_fit() {
        let label = |s: &str| image_target_label(&NodeImageVersion::parse(s).unwrap());
        let names: Vec<String> = [
            "AKSUbuntu-2204gen2containerd-202603.01.0",
            "AKSAzureLinux-V3gen2-202603.01.0",
            "AKSWindows-2022-containerd-20348.3207.250214",
        ]
        .iter()
        .map(|v| run_name("node-image", &label(v)))
        .collect();
        assert_eq!(
            names,
            [
                "node-image-ubuntu2204gen2containerd-202603-01-0",
                "node-image-azurelinuxv3gen2-202603-01-0",
                "node-image-windows2022containerd-20348-3207-250214"
            ]
        );
        assert!(names.iter().all(|n| n.len() <= 50));
    }
}
