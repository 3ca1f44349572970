//! Auto-upgrade profiles (SEMANTICS §9).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::fleet::Member;
use crate::orchestrator::Strategy;

use super::Settings;
use super::build::Ctx;

/// A validated auto-upgrade profile.
#[derive(Clone, Debug)]
pub struct ProfileSpec {
    pub name: String,
}

pub(crate) fn build_profiles(
    ctx: &mut Ctx,
    profiles: &[Value],
    _fleet: &[Member],
    _strategies: &BTreeMap<String, Strategy>,
    _settings: &Settings,
) -> Vec<ProfileSpec> {
    for (i, _) in profiles.iter().enumerate() {
        ctx.err(
            format!("/autoUpgradeProfiles/{i}"),
            "auto-upgrade profiles are not simulated by this version of fleetsim",
        );
    }
    Vec::new()
}
