//! Auto-upgrade channel targets (SEMANTICS §9; azure-fleet-semantics.md §7).
//!
//! Pure functions of the Kubernetes versions released so far: which version a channel points at.

use crate::fleet::{KubernetesVersion, MinorVersion};

pub use crate::scenario::profiles::Channel;

/// The newest minor among `released` (N).
pub fn newest_minor(released: &[KubernetesVersion]) -> Option<MinorVersion> {
    released.iter().map(|v| v.minor_version()).max()
}

/// Whether `minor` is inside AKS's standard support window N, N−1, N−2 (aks-models.md §3).
pub fn is_supported(minor: MinorVersion, released: &[KubernetesVersion]) -> bool {
    newest_minor(released).is_some_and(|n| minor.minors_behind(n) <= 2 && minor <= n)
}

fn latest_patch(minor: MinorVersion, released: &[KubernetesVersion]) -> Option<KubernetesVersion> {
    released.iter().copied().filter(|v| v.minor_version() == minor).max()
}

/// The version a Kubernetes channel targets given the versions released so far (`None`: nothing to
/// target yet). `target_minor` and `long_term_support` apply to `TargetKubernetesVersion` only:
/// without LTS, a target minor older than N−2 is out of support and generates nothing.
pub fn kubernetes_target(
    channel: Channel,
    released: &[KubernetesVersion],
    target_minor: Option<MinorVersion>,
    long_term_support: bool,
) -> Option<KubernetesVersion> {
    let n = newest_minor(released)?;
    match channel {
        Channel::Rapid => latest_patch(n, released),
        Channel::Stable => {
            // Minor N−1 exactly: a calendar without a release of it gives Stable nothing to target
            // (not N, and not an older minor across a gap).
            let previous = MinorVersion { major: n.major, minor: n.minor.checked_sub(1)? };
            latest_patch(previous, released)
        }
        Channel::TargetKubernetesVersion => {
            let minor = target_minor?;
            if !long_term_support && !is_supported(minor, released) {
                return None;
            }
            latest_patch(minor, released)
        }
        Channel::NodeImage | Channel::SecurityPatch => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(list: &[&str]) -> Vec<KubernetesVersion> {
        list.iter().map(|v| KubernetesVersion::parse(v).unwrap()).collect()
    }

    fn target(channel: Channel, released: &[&str], minor: Option<&str>, lts: bool) -> Option<String> {
        kubernetes_target(channel, &versions(released), minor.map(|m| MinorVersion::parse(m).unwrap()), lts)
            .map(|v| v.to_string())
    }

    /// (channel, released versions, target minor, LTS, expected target)
    type Case<'a> = (Channel, &'a [&'a str], Option<&'a str>, bool, Option<&'a str>);

    #[test]
    fn channel_target_table() {
        let docs = ["1.17.7", "1.17.9", "1.18.4", "1.18.6", "1.19.1"];
        let cases: &[Case] = &[
            // The docs' Stable example: 1.17.7 with 1.17.9, 1.18.4, 1.18.6, 1.19.1 available → 1.18.6.
            (Channel::Stable, &docs, None, false, Some("1.18.6")),
            (Channel::Rapid, &docs, None, false, Some("1.19.1")),
            // A new minor ships: Rapid moves to it, Stable to the previous Rapid minor.
            (Channel::Rapid, &["1.29.9", "1.30.5", "1.31.1"], None, false, Some("1.31.1")),
            (Channel::Stable, &["1.29.9", "1.30.5", "1.31.1"], None, false, Some("1.30.5")),
            (Channel::Stable, &["1.29.9", "1.30.5"], None, false, Some("1.29.9")),
            // Without a release of N−1 Stable targets nothing, also across a gap in the minors.
            (Channel::Stable, &["1.30.5"], None, false, None),
            (Channel::Stable, &["1.29.9", "1.31.1"], None, false, None),
            (Channel::TargetKubernetesVersion, &docs, Some("1.18"), false, Some("1.18.6")),
            (Channel::TargetKubernetesVersion, &docs, Some("1.20"), false, None),
            // Target 1.29 with the community at 1.33: only LTS keeps following it.
            (
                Channel::TargetKubernetesVersion,
                &["1.29.5", "1.31.4", "1.32.3", "1.33.1"],
                Some("1.29"),
                true,
                Some("1.29.5"),
            ),
            (Channel::TargetKubernetesVersion, &["1.29.5", "1.31.4", "1.32.3", "1.33.1"], Some("1.29"), false, None),
            (Channel::NodeImage, &docs, None, false, None),
            (Channel::Rapid, &[], None, false, None),
        ];
        for (channel, released, minor, lts, expected) in cases {
            assert_eq!(
                target(*channel, released, *minor, *lts).as_deref(),
                *expected,
                "{channel:?} {released:?} {minor:?} lts={lts}"
            );
        }
    }

    #[test]
    fn support_window_is_n_to_n_minus_two() {
        let released = versions(&["1.30.1", "1.31.1", "1.32.1", "1.33.1"]);
        let m = |s| MinorVersion::parse(s).unwrap();
        assert!(is_supported(m("1.31"), &released));
        assert!(!is_supported(m("1.30"), &released));
        assert!(!is_supported(m("1.34"), &released));
    }
}
