//! World models: how long upgrades take, how and when they fail, how fast people approve
//! (aks-models.md §4; the defaults are its ESTIMATE values, cited per field).

use std::sync::Arc;

use crate::engine::{Duration, Time};
use crate::fleet::MemberId;
use crate::fleet::selector::Selector;

use super::dist::DurationDist;

/// Upgrade durations (aks-models.md §4.2).
#[derive(Clone, Debug, PartialEq)]
pub struct DurationModel {
    /// When set, a member's whole upgrade takes this long, whatever its pools (the simple model).
    pub member: Option<DurationDist>,
    /// Control-plane upgrade: median 8 min, p90 20 min.
    pub control_plane: DurationDist,
    /// One surge batch of Linux nodes (provision, drain, reimage): median 10 min, p90 25 min.
    pub linux_batch: DurationDist,
    /// One surge batch of Windows nodes (larger images, slower drains): median 20 min, p90 45 min.
    pub windows_batch: DurationDist,
    /// A SecurityPatch live patch of one Linux pool: median 2 min, p90 10 min.
    pub security_patch_pool: DurationDist,
    /// `drainTimeoutInMinutes` default 30 (aks-models.md §4.1): a blocked drain fails this long after
    /// it starts.
    pub drain_timeout: Duration,
}

impl Default for DurationModel {
    fn default() -> Self {
        let lognormal = |median, p90| DurationDist::log_normal(Duration::minutes(median), Duration::minutes(p90));
        DurationModel {
            member: None,
            control_plane: lognormal(8, 20),
            linux_batch: lognormal(10, 25),
            windows_batch: lognormal(20, 45),
            security_patch_pool: lognormal(2, 10),
            drain_timeout: Duration::minutes(30),
        }
    }
}

/// When in an upgrade a failure surfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePoint {
    /// Pre-upgrade validation: within the first minute.
    PreCheck,
    /// Surge node allocation at the start of a node pool.
    SurgeAllocation,
    /// A drain that times out inside a node pool: late, after `drain_timeout`.
    Drain,
    /// Anywhere in the upgrade.
    Anywhere,
}

/// One AKS error code in the failure mix (aks-models.md §4.4).
#[derive(Clone, Debug, PartialEq)]
pub struct FailureCode {
    pub code: String,
    pub weight: u32,
    pub point: FailurePoint,
    /// Only minor-version upgrades hit it (deprecated-API block).
    pub minor_only: bool,
    pub message: String,
}

/// Random failures of upgrade attempts.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureModel {
    /// Probability that a patch or node image upgrade fails: 3 % (aks-models.md §4.4 ESTIMATE).
    pub patch_probability: f64,
    /// Probability that a minor-version upgrade fails: 6 %.
    pub minor_probability: f64,
    pub codes: Vec<FailureCode>,
}

impl FailureModel {
    pub fn none() -> FailureModel {
        FailureModel { patch_probability: 0.0, minor_probability: 0.0, codes: default_failure_codes() }
    }
}

impl Default for FailureModel {
    fn default() -> Self {
        FailureModel { patch_probability: 0.03, minor_probability: 0.06, codes: default_failure_codes() }
    }
}

/// The cause mix of aks-models.md §4.4: PDB/drain 45 %, capacity/quota 15 %, subnet 5 %, deprecated
/// API 10 % (minor only), throttling/transient/internal 20 %, other 5 %.
pub fn default_failure_codes() -> Vec<FailureCode> {
    let code = |code: &str, weight, point, minor_only, message: &str| FailureCode {
        code: code.to_string(),
        weight,
        point,
        minor_only,
        message: message.to_string(),
    };
    use FailurePoint::*;
    vec![
        code(
            "PodDrainFailure",
            45,
            Drain,
            false,
            "Drain did not complete within the drain timeout: cannot evict pod as it would violate the pod's disruption budget",
        ),
        code(
            "QuotaExceeded",
            10,
            SurgeAllocation,
            false,
            "Operation could not be completed as it results in exceeding approved vCPU quota for the surge nodes",
        ),
        code(
            "AllocationFailed",
            5,
            SurgeAllocation,
            false,
            "Allocation failed: the requested VM size for the surge node is not available in the zone",
        ),
        code("SubnetIsFull", 5, SurgeAllocation, false, "Subnet is full: no free IP addresses for the surge nodes"),
        code(
            "UpgradeBlockedOnDeprecatedAPIUsage",
            10,
            PreCheck,
            true,
            "Upgrade blocked: usage of APIs removed in the target version was detected in the last 12 hours",
        ),
        code("AKSRequestsThrottled", 10, Anywhere, false, "Requests to Azure Resource Manager were throttled (429)"),
        code(
            "AKSOperationPreempted",
            5,
            Anywhere,
            false,
            "The operation was preempted by another operation on the cluster",
        ),
        code("InternalServerError", 5, Anywhere, false, "An internal error occurred; retry the operation"),
        code(
            "VMExtensionProvisioningTimeout",
            5,
            Anywhere,
            false,
            "A node did not finish provisioning: VM extension timed out",
        ),
    ]
}

/// A what-if override for one member ("m7 fails after 20 min").
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub member: MemberId,
    /// Only in this run (by name); every run when `None`.
    pub run: Option<String>,
    pub outcome: Option<ForcedOutcome>,
    pub duration: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ForcedOutcome {
    Completed,
    Failed { code: String, message: String },
}

/// A release marked bad: members that receive it fail with probability `failure_fraction`
/// (optionally only those matching `selector`); issue "world models" §5.
#[derive(Clone, Debug)]
pub struct BadRelease {
    /// A Kubernetes version (`1.33.2`) or a node image version.
    pub version: String,
    pub failure_fraction: f64,
    pub selector: Option<Selector>,
    pub code: String,
    pub message: String,
}

/// During `[from, to)` upgrades in `region` fail with `failure_probability`, or take `stall` longer.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionalIncident {
    pub region: String,
    pub from: Time,
    pub to: Time,
    pub failure_probability: f64,
    pub stall: Option<Duration>,
    pub code: String,
}

/// All world models of a scenario.
#[derive(Clone, Debug, Default)]
pub struct Models {
    pub duration: DurationModel,
    pub failure: FailureModel,
    pub overrides: Vec<Override>,
    /// Default approval policy for every run's Approval gates (runs may override).
    pub approvals: Option<DurationDist>,
    pub bad_releases: Vec<BadRelease>,
    pub incidents: Vec<RegionalIncident>,
    /// Per member (by `MemberId`), its own duration model; empty when no member has one.
    pub member_durations: Vec<Option<Arc<DurationModel>>>,
}

impl Models {
    /// The duration model of `member`: its own (issue "world models" §4, per member or generator),
    /// else the scenario's.
    pub fn duration_for(&self, member: MemberId) -> &DurationModel {
        match self.member_durations.get(member.index()) {
            Some(Some(model)) => model,
            _ => &self.duration,
        }
    }
}
