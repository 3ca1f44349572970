//! The scenario file format: serde DTOs mirroring the JSON (SEMANTICS §1).
//!
//! Fleet Manager objects keep the REST API's shapes and camelCase names, so a user can paste the
//! `strategy` object of `az fleet updatestrategy show`. Simulator-only concepts (generators, release
//! calendars, models, timed actions) have their own clearly named sections.
//!
//! Values are kept as plain JSON types (strings, numbers) so that a wrong value becomes a problem
//! naming its field and the allowed values in `build`, rather than an opaque deserialization error.
//! Unknown fields are errors everywhere (`deny_unknown_fields`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::generate::GeneratorDto;
use super::releases::ReleasesDto;
use super::window_dto::MaintenanceWindowDto;

/// A read-only field of a pasted GET resource or of the az CLI's output: accepted and ignored.
/// Boxed: a record has dozens of these, almost always absent (a DTO of bare `Value`s was 5 KB).
pub type ReadOnly = Option<Box<Value>>;

/// The ARM form's `properties` wrapper: its fields are merged into the object that holds it before
/// the object is read (`scenario::envelope`).
pub type Properties = Option<Box<serde_json::Map<String, Value>>>;

/// An object that is also an Azure resource: the fields given first, then the read-only fields of
/// its GET resource and of an Azure Resource Graph row and the ARM form's `properties`, then the
/// fields given after. One definition, so every pasted resource accepts the same envelope.
macro_rules! arm_resource {
    ($(#[$meta:meta])* $vis:vis struct $name:ident { $($before:tt)* } { $($after:tt)* }) => {
        $(#[$meta])*
        $vis struct $name {
            $($before)*
            /// Read-only fields of the GET resource (`az … show`): accepted and ignored.
            #[serde(default, skip_serializing)]
            pub id: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing, rename = "type")]
            pub resource_type: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing, rename = "eTag")]
            pub e_tag: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub system_data: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub resource_group: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub provisioning_state: $crate::scenario::dto::ReadOnly,
            // The other columns of an Azure Resource Graph row (`az graph query`), accepted and ignored.
            #[serde(default, skip_serializing)]
            pub tenant_id: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub kind: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub location: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub subscription_id: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub managed_by: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub sku: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub plan: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub extended_location: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub tags: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub identity: $crate::scenario::dto::ReadOnly,
            #[serde(default, skip_serializing)]
            pub zones: $crate::scenario::dto::ReadOnly,
            /// The ARM form's `properties`: merged into this object before it is read.
            #[serde(default, skip_serializing)]
            pub properties: $crate::scenario::dto::Properties,
            $($after)*
        }
    };
}
pub(crate) use arm_resource;

/// A what-if scenario: a fleet, its world, and update runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioDto {
    /// Editors may point at the schema printed by `fleetsim schema`; ignored by the simulator.
    #[serde(default, rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Scenario name: the default report folder is `reports/<name>/`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Root of every random stream (SEMANTICS §10). `fleetsim run --seed` overrides it.
    #[serde(default)]
    pub seed: u64,
    /// Simulated start, RFC 3339 (any offset; outputs are UTC).
    pub start: String,
    #[serde(default)]
    pub settings: SettingsDto,
    /// Explicitly listed fleet members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberDto>,
    /// Members generated from distributions, added to the explicit ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_generators: Vec<GeneratorDto>,
    /// Kubernetes and node image releases with their regional availability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub releases: Option<ReleasesDto>,
    #[serde(default)]
    pub models: ModelsDto,
    /// Named update strategies: `UpdateRunStrategy` objects as the API shows them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub update_strategies: BTreeMap<String, StrategyDto>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub update_runs: Vec<UpdateRunDto>,
    /// Auto-upgrade profiles (SEMANTICS §9).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_upgrade_profiles: Vec<super::profiles::AutoUpgradeProfileDto>,
}

/// Every setting of SEMANTICS.md, each with its default.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsDto {
    /// How long to simulate after `start` (SEMANTICS §5.9). Default `90d`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon: Option<String>,
    /// Maintenance-window poll period (SEMANTICS §5). Default `60m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_poll_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsDto>,
    /// `reject` (default, the service's limits note) or `throttle` (the docs' Example 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["reject", "throttle"]))]
    pub group_above_stage_concurrency: Option<String>,
    /// `run` (default, the docs' cascade) or `segment` (only the tripped group or stage stops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["run", "segment"]))]
    pub failure_scope: Option<String>,
    /// Retry failed members when a run is restarted. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_failed_on_restart: Option<bool>,
    /// A ScheduledStart gate reached exactly at its instant: `completes` (default) or `nextWeek`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["completes", "nextWeek"]))]
    pub scheduled_start_at_exact_instant: Option<String>,
    /// Non-LTS member more than one minor behind the target: `fail` (default,
    /// `UpgradeVersionSkipNotAllowed`) or `skip` (Skipped when examined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["fail", "skip"]))]
    pub minor_version_skip: Option<String>,
    /// Node images older than this at upgrade fail (`NodeImageVersionExpired`). Default `90d`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_max_age: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitsDto {
    /// Upper bound of a stage's resolved `maxConcurrency`. Default 50 (the service before 2026-04-08: 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_max_concurrency: Option<i64>,
}

arm_resource! {
/// A fleet member: an AKS cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberDto {
    /// Fleet member name, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, 1–50 characters.
    pub name: String,
    /// Azure region (programmatic name, e.g. `westeurope`).
    pub region: String,
    /// Update group (`properties.group` of the fleet member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Labels of the fleet member. Fleet Manager adds `fleet.azure.com/location`, `member-name`,
    /// `cluster-name`, `resource-group` and `subscription-id` itself; they may be given only with
    /// the values the service would show.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The fleet member's `clusterResourceId`: the AKS cluster's ARM id. Its subscription, resource
    /// group and name become the member's `fleet.azure.com/*` labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_resource_id: Option<String>,
    /// Current Kubernetes version, e.g. `1.32.4`.
    pub kubernetes_version: String,
    /// Node pools. Default: one Ubuntu pool `nodepool1` of 3 nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_pools: Option<Vec<NodePoolDto>>,
    /// AKS `maintenanceWindow` consulted by Full and ControlPlaneOnly runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aks_managed_auto_upgrade_schedule: Option<Box<MaintenanceWindowDto>>,
    /// AKS `maintenanceWindow` consulted by NodeImageOnly runs.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "aksManagedNodeOSUpgradeSchedule")]
    pub aks_managed_node_os_upgrade_schedule: Option<Box<MaintenanceWindowDto>>,
    /// Long-term support (may skip minor versions).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub long_term_support: bool,
    /// A stopped (deallocated) cluster: any upgrade fails at once.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// This member's upgrade durations: fields given here replace those of `models.duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durations: Option<Box<DurationModelDto>>,
} {
    #[serde(default, skip_serializing)]
    pub status: ReadOnly,
    #[serde(default, skip_serializing)]
    pub mesh_properties: ReadOnly,
}
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodePoolDto {
    pub name: String,
    /// `Ubuntu`, `Ubuntu2204`, `Ubuntu2404`, `AzureLinux`, `AzureLinux3`, `Windows2022`, `Windows2025`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_sku: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_count: Option<i64>,
    /// Current node image, e.g. `AKSUbuntu-2204gen2containerd-202602.13.5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_version: Option<String>,
    /// `maxSurge`: node count (`"3"`) or percentage (`"33%"`). Default: 10 % from Kubernetes 1.32, else 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<StringOrInt>,
    /// Created from a node-pool snapshot.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_snapshot: bool,
    // An AKS `agentPoolProfiles` entry (`az aks show`) or agent pool resource, verbatim: its names
    // for the fields above, each an alternative to ours (both given: they must agree) …
    /// `count`: the AKS name of `nodeCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// `osSKU`: the ARM name of `osSku` (the az CLI prints `osSku`).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "osSKU")]
    pub os_sku_arm: Option<String>,
    /// `Linux` or `Windows`: must fit `osSku`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Linux", "Windows"]))]
    pub os_type: Option<String>,
    /// `upgradeSettings.maxSurge`: the AKS place of `maxSurge`; its other settings are ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_settings: Option<UpgradeSettingsDto>,
    /// The pool's Kubernetes version: a member has one version in the simulation (its
    /// `kubernetesVersion`); this one is accepted and not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orchestrator_version: Option<String>,
    /// The agent pool resource's name (`az aks nodepool show`).
    #[serde(default, skip_serializing)]
    pub properties: Properties,
    // … and the fields the simulation has no use for, accepted and ignored.
    #[serde(default, skip_serializing, rename = "currentOrchestratorVersion")]
    pub current_orchestrator_version: ReadOnly,
    #[serde(default, skip_serializing, rename = "vmSize")]
    pub vm_size: ReadOnly,
    #[serde(default, skip_serializing, rename = "osDiskSizeGB")]
    pub os_disk_size_gb: ReadOnly,
    #[serde(default, skip_serializing, rename = "osDiskType")]
    pub os_disk_type: ReadOnly,
    #[serde(default, skip_serializing, rename = "kubeletDiskType")]
    pub kubelet_disk_type: ReadOnly,
    #[serde(default, skip_serializing, rename = "workloadRuntime")]
    pub workload_runtime: ReadOnly,
    #[serde(default, skip_serializing, rename = "messageOfTheDay")]
    pub message_of_the_day: ReadOnly,
    #[serde(default, skip_serializing, rename = "vnetSubnetID")]
    pub vnet_subnet_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "podSubnetID")]
    pub pod_subnet_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "podIPAllocationMode")]
    pub pod_ipallocation_mode: ReadOnly,
    #[serde(default, skip_serializing, rename = "maxPods")]
    pub max_pods: ReadOnly,
    #[serde(default, skip_serializing, rename = "maxCount")]
    pub max_count: ReadOnly,
    #[serde(default, skip_serializing, rename = "minCount")]
    pub min_count: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableAutoScaling")]
    pub enable_auto_scaling: ReadOnly,
    #[serde(default, skip_serializing, rename = "scaleDownMode")]
    pub scale_down_mode: ReadOnly,
    #[serde(default, skip_serializing, rename = "type")]
    pub pool_type: ReadOnly,
    #[serde(default, skip_serializing, rename = "mode")]
    pub mode: ReadOnly,
    #[serde(default, skip_serializing, rename = "powerState")]
    pub power_state: ReadOnly,
    #[serde(default, skip_serializing, rename = "availabilityZones")]
    pub availability_zones: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableNodePublicIP")]
    pub enable_node_public_ip: ReadOnly,
    #[serde(default, skip_serializing, rename = "nodePublicIPPrefixID")]
    pub node_public_ipprefix_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "scaleSetPriority")]
    pub scale_set_priority: ReadOnly,
    #[serde(default, skip_serializing, rename = "scaleSetEvictionPolicy")]
    pub scale_set_eviction_policy: ReadOnly,
    #[serde(default, skip_serializing, rename = "spotMaxPrice")]
    pub spot_max_price: ReadOnly,
    #[serde(default, skip_serializing, rename = "tags")]
    pub tags: ReadOnly,
    #[serde(default, skip_serializing, rename = "nodeLabels")]
    pub node_labels: ReadOnly,
    #[serde(default, skip_serializing, rename = "nodeTaints")]
    pub node_taints: ReadOnly,
    #[serde(default, skip_serializing, rename = "nodeInitializationTaints")]
    pub node_initialization_taints: ReadOnly,
    #[serde(default, skip_serializing, rename = "proximityPlacementGroupID")]
    pub proximity_placement_group_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "kubeletConfig")]
    pub kubelet_config: ReadOnly,
    #[serde(default, skip_serializing, rename = "linuxOSConfig")]
    pub linux_osconfig: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableEncryptionAtHost")]
    pub enable_encryption_at_host: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableUltraSSD")]
    pub enable_ultra_ssd: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableFIPS")]
    pub enable_fips: ReadOnly,
    #[serde(default, skip_serializing, rename = "gpuInstanceProfile")]
    pub gpu_instance_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "gpuProfile")]
    pub gpu_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "creationData")]
    pub creation_data: ReadOnly,
    #[serde(default, skip_serializing, rename = "capacityReservationGroupID")]
    pub capacity_reservation_group_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "hostGroupID")]
    pub host_group_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "networkProfile")]
    pub network_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "windowsProfile")]
    pub windows_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "securityProfile")]
    pub security_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "virtualMachinesProfile")]
    pub virtual_machines_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "virtualMachineNodesStatus")]
    pub virtual_machine_nodes_status: ReadOnly,
    #[serde(default, skip_serializing, rename = "status")]
    pub status: ReadOnly,
    #[serde(default, skip_serializing, rename = "localDNSProfile")]
    pub local_dnsprofile: ReadOnly,
    #[serde(default, skip_serializing, rename = "nodeImageVersionStatus")]
    pub node_image_version_status: ReadOnly,
    #[serde(default, skip_serializing, rename = "upgradeStrategy")]
    pub upgrade_strategy: ReadOnly,
    #[serde(default, skip_serializing, rename = "upgradeSettingsBlueGreen")]
    pub upgrade_settings_blue_green: ReadOnly,
    #[serde(default, skip_serializing, rename = "artifactStreamingProfile")]
    pub artifact_streaming_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "gatewayProfile")]
    pub gateway_profile: ReadOnly,
    // The az CLI prints the SDK's attribute names in camelCase, which spell a few ARM names
    // differently (`osDiskSizeGB` → `osDiskSizeGb`, `vnetSubnetID` → `vnetSubnetId`, the pool's
    // `type` → `typePropertiesType`, formerly `agentPoolType`); accepted and ignored the same way.
    #[serde(default, skip_serializing, rename = "osDiskSizeGb")]
    pub az_os_disk_size_gb: ReadOnly,
    #[serde(default, skip_serializing, rename = "vnetSubnetId")]
    pub az_vnet_subnet_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "podSubnetId")]
    pub az_pod_subnet_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "podIpAllocationMode")]
    pub az_pod_ip_allocation_mode: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableNodePublicIp")]
    pub az_enable_node_public_ip: ReadOnly,
    #[serde(default, skip_serializing, rename = "nodePublicIpPrefixId")]
    pub az_node_public_ip_prefix_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "proximityPlacementGroupId")]
    pub az_proximity_placement_group_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "linuxOsConfig")]
    pub az_linux_os_config: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableUltraSsd")]
    pub az_enable_ultra_ssd: ReadOnly,
    #[serde(default, skip_serializing, rename = "enableFips")]
    pub az_enable_fips: ReadOnly,
    #[serde(default, skip_serializing, rename = "capacityReservationGroupId")]
    pub az_capacity_reservation_group_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "hostGroupId")]
    pub az_host_group_id: ReadOnly,
    #[serde(default, skip_serializing, rename = "localDnsProfile")]
    pub az_local_dns_profile: ReadOnly,
    #[serde(default, skip_serializing, rename = "typePropertiesType")]
    pub az_type_properties_type: ReadOnly,
    #[serde(default, skip_serializing, rename = "agentPoolType")]
    pub az_agent_pool_type: ReadOnly,
    #[serde(default, skip_serializing, rename = "eTag")]
    pub e_tag: ReadOnly,
    #[serde(default, skip_serializing, rename = "id")]
    pub id: ReadOnly,
    #[serde(default, skip_serializing, rename = "provisioningState")]
    pub provisioning_state: ReadOnly,
    #[serde(default, skip_serializing, rename = "resourceGroup")]
    pub resource_group: ReadOnly,
    #[serde(default, skip_serializing, rename = "systemData")]
    pub system_data: ReadOnly,
}

/// An agent pool's `upgradeSettings`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpgradeSettingsDto {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<StringOrInt>,
    #[serde(default, skip_serializing)]
    pub max_unavailable: ReadOnly,
    #[serde(default, skip_serializing)]
    pub drain_timeout_in_minutes: ReadOnly,
    #[serde(default, skip_serializing)]
    pub node_soak_duration_in_minutes: ReadOnly,
    #[serde(default, skip_serializing)]
    pub undrainable_node_behavior: ReadOnly,
}

/// A value the API types as a string but people often write as a number (`"3"` or `3`). Written
/// back as the API types it: a string.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(untagged)]
#[schemars(extend("examples" = ["25%", "3"]))]
pub enum StringOrInt {
    String(String),
    Int(i64),
}

/// What `#[serde(untagged)]` would accept (a string, or an integer that fits an `i64`), read
/// without buffering the value first: every limit of a strategy is one of these.
impl<'de> Deserialize<'de> for StringOrInt {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = StringOrInt;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<StringOrInt, E> {
                Ok(StringOrInt::String(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<StringOrInt, E> {
                Ok(StringOrInt::String(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<StringOrInt, E> {
                Ok(StringOrInt::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<StringOrInt, E> {
                i64::try_from(v)
                    .map(StringOrInt::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

impl Serialize for StringOrInt {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text())
    }
}

impl StringOrInt {
    pub fn text(&self) -> String {
        match self {
            StringOrInt::String(s) => s.clone(),
            StringOrInt::Int(i) => i.to_string(),
        }
    }
}

arm_resource! {
/// `UpdateRunStrategy`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StrategyDto {
    pub stages: Vec<StageDto>,
    /// The strategy resource's name: the name it is given in `updateStrategies`.
    #[serde(default, skip_serializing)]
    pub name: ReadOnly,
} {
    /// The strategy resource's `strategy` (az form): lifted into this object before it is read.
    #[serde(default, skip_serializing)]
    pub strategy: ReadOnly,
}
}

/// `UpdateStage`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StageDto {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<GroupDto>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_selector: Option<MemberSelectorDto>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_stage_wait_in_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<StringOrInt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_allowed_failures: Option<StringOrInt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_gates: Option<Vec<GateDto>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_gates: Option<Vec<GateDto>>,
}

/// `UpdateGroup`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupDto {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_selector: Option<MemberSelectorDto>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<StringOrInt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_allowed_failures: Option<StringOrInt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_gates: Option<Vec<GateDto>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_gates: Option<Vec<GateDto>>,
}

/// `memberSelector`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberSelectorDto {
    /// Kubernetes label-selector string, at most 512 characters.
    pub by_label: String,
}

/// `GateConfiguration`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateDto {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// `Approval` or `ScheduledStart`.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["Approval", "ScheduledStart"]))]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_start_configuration: Option<ScheduledStartDto>,
}

/// `ScheduledStartConfiguration`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduledStartDto {
    /// `Monday` … `Sunday`.
    pub start_day: String,
    /// Local `HH:mm`.
    pub start_time: String,
    /// `+HH:mm` / `-HH:mm`, −14:00…+14:00.
    pub utc_offset: String,
}

arm_resource! {
/// An update run: the API's `UpdateRun` properties plus a start time and timed user actions.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateRunDto {
    /// Run name, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, 1–50 characters.
    pub name: String,
    /// A strategy of `updateStrategies`, by name or by ARM id ending in `/updateStrategies/<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy_id: Option<String>,
    /// An inline `UpdateRunStrategy` (exclusive with `updateStrategyId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<StrategyDto>,
    pub managed_cluster_update: ManagedClusterUpdateDto,
    /// When the run is started: RFC 3339, an offset from the scenario start (`+2h`), or `manual` (only
    /// a `start` action starts it). Default: the scenario start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Timed user actions, applied in file order at equal times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionDto>,
    /// Approve each Approval gate this long after it opens (overrides `models.approvals`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<Value>,
} {
    /// The run's status when it was read (`fleetsim run` writes it in `status/<run>.json`).
    #[serde(default, skip_serializing)]
    pub status: ReadOnly,
    #[serde(default, skip_serializing)]
    pub auto_upgrade_profile_id: ReadOnly,
}
}

/// `ManagedClusterUpdate`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagedClusterUpdateDto {
    pub upgrade: UpgradeDto,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<NodeImageSelectionDto>,
}

/// `ManagedClusterUpgradeSpec`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpgradeDto {
    /// `Full`, `ControlPlaneOnly` or `NodeImageOnly`.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["Full", "ControlPlaneOnly", "NodeImageOnly"]))]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
}

/// `NodeImageSelection`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeImageSelectionDto {
    /// `Latest` (default), `Consistent` or `Custom`.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["Latest", "Consistent", "Custom"]))]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_node_image_versions: Option<Vec<NodeImageVersionDto>>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeImageVersionDto {
    pub version: String,
}

/// A timed user action on a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionDto {
    /// RFC 3339, or an offset from the scenario start such as `+2h30m`.
    pub at: String,
    /// `start`, `stop`, `skip` or `approve`.
    #[schemars(extend("enum" = ["start", "stop", "skip", "approve"]))]
    pub action: String,
    /// `skip`: the API's `SkipProperties.targets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<SkipTargetDto>>,
    /// `approve`: which gate(s); every Pending gate matching all given fields is approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateAddressDto>,
}

/// `SkipTarget`: `type` is `Member`, `Group`, `Stage` or `AfterStageWait` (name = the stage).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkipTargetDto {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["Member", "Group", "Stage", "AfterStageWait"]))]
    pub kind: String,
    pub name: String,
}

/// Addresses gates like the gate resource's `target.updateRunProperties`, or by display name.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateAddressDto {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `Before` or `After`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Before", "After"]))]
    pub timing: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// World models. Durations are strings like `"20m"` or distributions
/// `{"median": "10m", "p90": "25m"}` / `{"min": "5m", "max": "15m"}`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelsDto {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<DurationModelDto>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureModelDto>,
    /// What-ifs: per-member forced outcome and duration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<OverrideDto>,
    /// Approval policy for every run: approve each Approval gate this long after it opens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<Value>,
    /// Releases that fail a fraction of the members receiving them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bad_releases: Vec<BadReleaseDto>,
    /// Regional incidents: upgrades in a region fail or stall during an interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<IncidentDto>,
}

/// Upgrade durations (aks-models.md §4.2): the control plane, then each node pool in
/// ceil(nodes / maxSurge) batches, one pool after another.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DurationModelDto {
    /// Whole-upgrade duration per member; when set, the per-component model below is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub member: Option<Value>,
    /// Control-plane upgrade. Default `{"median": "8m", "p90": "20m"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub control_plane: Option<Value>,
    /// One surge batch of Linux nodes. Default `{"median": "10m", "p90": "25m"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub linux_node_batch: Option<Value>,
    /// One surge batch of Windows nodes. Default `{"median": "20m", "p90": "45m"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub windows_node_batch: Option<Value>,
    /// SecurityPatch live patch of one Linux pool. Default `{"median": "2m", "p90": "10m"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<DurationDistSchema>")]
    pub security_patch_pool: Option<Value>,
    /// A blocked drain fails this long after it starts. Default `30m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_timeout: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FailureModelDto {
    /// Sets both probabilities at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// Patch and node-image upgrades. Default 0.03.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_probability: Option<f64>,
    /// Minor-version upgrades. Default 0.06.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minor_probability: Option<f64>,
    /// Error-code mix. Default: aks-models.md §4.4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codes: Option<Vec<FailureCodeDto>>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FailureCodeDto {
    pub code: String,
    pub weight: i64,
    /// `preCheck`, `surgeAllocation`, `drain` or `anywhere`.
    #[schemars(extend("enum" = ["preCheck", "surgeAllocation", "drain", "anywhere"]))]
    pub point: String,
    #[serde(default)]
    pub minor_only: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OverrideDto {
    pub member: String,
    /// Only in this run; every run when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// `Completed` or `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Completed", "Failed"]))]
    pub outcome: Option<String>,
    /// How long the attempt takes (for a failure: when it fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BadReleaseDto {
    /// A Kubernetes version (`1.33.2`) or a node image version.
    pub version: String,
    /// Fraction 0–1 of receiving members that fail.
    pub failure_fraction: f64,
    /// Only members matching this label selector are hurt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IncidentDto {
    pub region: String,
    /// RFC 3339 or an offset from the scenario start.
    pub from: String,
    pub to: String,
    /// Probability 0–1 that an upgrade started in the interval fails.
    #[serde(default)]
    pub failure_probability: f64,
    /// Extra time upgrades started in the interval take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

/// The JSON Schema of a duration distribution (validation and error messages are `build`'s):
/// a duration `"20m"`, `{"fixed": "20m"}`, log-normal `{"median": "10m", "p90": "25m"}` or uniform
/// `{"min": "5m", "max": "15m"}`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum DurationDistSchema {
    /// A fixed duration such as `"20m"` or `"1h30m"`.
    Duration(String),
    Fixed {
        fixed: String,
    },
    LogNormal {
        median: String,
        p90: String,
    },
    Uniform {
        min: String,
        max: String,
    },
}

#[cfg(test)]
mod tests {
    use super::StringOrInt;
    use serde_json::json;

    /// What the hand-written reader accepts is what `#[serde(untagged)]` accepted: a string, or an
    /// integer that fits an `i64`; nothing else.
    #[test]
    fn a_limit_reads_as_untagged_did() {
        let read = |v: serde_json::Value| serde_json::from_value::<StringOrInt>(v).ok();
        assert_eq!(read(json!("25%")), Some(StringOrInt::String("25%".into())));
        assert_eq!(read(json!(3)), Some(StringOrInt::Int(3)));
        assert_eq!(read(json!(-3)), Some(StringOrInt::Int(-3)));
        assert_eq!(read(json!(i64::MAX)), Some(StringOrInt::Int(i64::MAX)));
        assert_eq!(read(json!(u64::MAX)), None);
        assert_eq!(read(json!(3.0)), None);
        assert_eq!(read(json!(true)), None);
        assert_eq!(read(json!(null)), None);
        assert_eq!(read(json!(["3"])), None);
        // From text too, as a derived reader of a type holding one would read it.
        assert_eq!(serde_json::from_str::<StringOrInt>("\"3\"").ok(), Some(StringOrInt::String("3".into())));
        assert_eq!(serde_json::from_str::<StringOrInt>("7").ok(), Some(StringOrInt::Int(7)));
    }
}
