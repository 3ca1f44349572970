//! Auto-upgrade profiles: turn releases into generated update runs (SEMANTICS §9;
//! azure-fleet-semantics.md §7).
//!
//! A run is generated **and started** when a matching release first reaches at least one region,
//! never retroactively: the profile exists from the scenario start, and the channel's target at that
//! moment is its baseline. Kubernetes channels generate a `Full` run each time their target moves;
//! `NodeImage` generates a `NodeImageOnly` run per new image release (several families released at
//! the same instant share one run); `SecurityPatch` does the same for Linux images only and leaves
//! Windows pools untouched.

pub mod channels;

use crate::engine::Time;
use crate::fleet::{KubernetesVersion, NodeImageVersion};
use crate::scenario::ProfileSpec;
use crate::world::{ImageSelection, ReleaseCalendar, UpgradeSpec, UpgradeType};

pub use channels::{Channel, is_supported, kubernetes_target};

/// An instant at which a profile looks for something new.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    pub time: Time,
    /// Image releases first available at this instant (image channels).
    pub images: Vec<NodeImageVersion>,
}

/// What a trigger generates.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub name: String,
    pub upgrade: UpgradeSpec,
    /// The channel's new target (Kubernetes channels).
    pub kubernetes_target: Option<KubernetesVersion>,
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

fn image_matches(profile: &ProfileSpec, version: &NodeImageVersion) -> bool {
    match profile.channel {
        Channel::NodeImage => true,
        Channel::SecurityPatch => !version.is_windows(),
        _ => false,
    }
}

/// The instants after `start` at which a release relevant to the profile first reaches a region.
pub fn triggers(profile: &ProfileSpec, releases: &ReleaseCalendar, start: Time) -> Vec<Trigger> {
    let mut out: Vec<Trigger> = Vec::new();
    if profile.channel.is_kubernetes() {
        let mut times: Vec<Time> =
            releases.kubernetes.iter().filter_map(|r| r.availability.first()).filter(|t| *t > start).collect();
        times.sort_unstable();
        times.dedup();
        out.extend(times.into_iter().map(|time| Trigger { time, images: Vec::new() }));
    } else {
        let mut found: Vec<(Time, NodeImageVersion)> = releases
            .images
            .values()
            .flatten()
            .filter(|r| image_matches(profile, &r.version))
            .filter_map(|r| r.availability.first().filter(|t| *t > start).map(|t| (t, r.version.clone())))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_str().cmp(b.1.as_str())));
        for (time, version) in found {
            match out.last_mut() {
                Some(last) if last.time == time => last.images.push(version),
                _ => out.push(Trigger { time, images: vec![version] }),
            }
        }
    }
    out
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

/// What the profile does at a trigger (`None`: nothing, e.g. the target did not move).
pub fn generate(
    profile: &ProfileSpec,
    trigger: &Trigger,
    last_target: Option<KubernetesVersion>,
    releases: &ReleaseCalendar,
    now: Time,
) -> Option<Generated> {
    if profile.channel.is_kubernetes() {
        let released = released_kubernetes(releases, now);
        let target = kubernetes_target(profile.channel, &released, profile.target_minor, profile.long_term_support)?;
        if Some(target) == last_target {
            return None;
        }
        let lts_only = profile.channel == Channel::TargetKubernetesVersion
            && profile.long_term_support
            && !is_supported(target.minor_version(), &released);
        return Some(Generated {
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
    // Name after the newest Linux image of the trigger (Windows versions when only Windows shipped).
    let newest = trigger
        .images
        .iter()
        .filter(|v| !v.is_windows())
        .max_by(|a, b| a.version().cmp(b.version()))
        .or_else(|| trigger.images.iter().max_by(|a, b| a.version().cmp(b.version())))?;
    Some(Generated {
        name: run_name(&profile.name, newest.version()),
        upgrade: UpgradeSpec {
            kind: UpgradeType::NodeImageOnly,
            kubernetes_version: None,
            images: match profile.images {
                ImageSelection::Consistent => ImageSelection::Consistent,
                _ => ImageSelection::Latest,
            },
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
}
