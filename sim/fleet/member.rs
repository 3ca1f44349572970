//! Fleet members (AKS clusters) and their node pools, as the simulator sees them.

use std::collections::BTreeMap;

use super::version::{KubernetesVersion, NodeImageVersion};
use super::window::MaintenanceWindow;

/// Index of a member in the fleet (its position after the fleet is sorted by name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberId(pub u32);

impl MemberId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The node pool OS, from AKS `osSKU` (aks-models.md §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OsSku {
    Ubuntu2204,
    Ubuntu2404,
    AzureLinux3,
    Windows2022,
    Windows2025,
}

impl OsSku {
    pub fn is_windows(self) -> bool {
        matches!(self, OsSku::Windows2022 | OsSku::Windows2025)
    }

    /// The default image family AKS uses for a gen2 VM of this OS (aks-models.md §2.5).
    pub fn default_image_family(self) -> &'static str {
        match self {
            OsSku::Ubuntu2204 => "AKSUbuntu-2204gen2containerd",
            OsSku::Ubuntu2404 => "AKSUbuntu-2404gen2containerd",
            OsSku::AzureLinux3 => "AKSAzureLinux-V3gen2",
            OsSku::Windows2022 => "AKSWindows-2022-containerd",
            OsSku::Windows2025 => "AKSWindows-2025",
        }
    }

    pub fn api_name(self) -> &'static str {
        match self {
            OsSku::Ubuntu2204 => "Ubuntu2204",
            OsSku::Ubuntu2404 => "Ubuntu2404",
            OsSku::AzureLinux3 => "AzureLinux3",
            OsSku::Windows2022 => "Windows2022",
            OsSku::Windows2025 => "Windows2025",
        }
    }
}

/// `maxSurge` of a node pool: a node count or a percentage of the pool (aks-models.md §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surge {
    Nodes(u32),
    Percent(u32),
}

impl Surge {
    /// Surge nodes per batch for a pool of `node_count` nodes: percentages round up, at least 1.
    pub fn nodes_for(self, node_count: u32) -> u32 {
        match self {
            Surge::Nodes(n) => n.max(1),
            Surge::Percent(p) => (u64::from(node_count) * u64::from(p)).div_ceil(100).max(1) as u32,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodePool {
    pub name: String,
    pub os_sku: OsSku,
    pub node_count: u32,
    /// The image family of the pool (e.g. `AKSUbuntu-2204gen2containerd`).
    pub image_family: String,
    /// The current node image; `None` when the scenario does not say (treated as older than any release).
    pub node_image_version: Option<NodeImageVersion>,
    /// `None`: the AKS default for the member's Kubernetes version (aks-models.md §4.1).
    pub max_surge: Option<Surge>,
    /// Created from a node-pool snapshot (SEMANTICS §8: `Latest` leaves such pools alone).
    pub from_snapshot: bool,
}

/// One fleet member: an AKS cluster with its update group, labels, versions and windows.
#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    pub region: String,
    /// The member's update group (`properties.group` of the fleet member), used by group-name mode.
    pub group: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub kubernetes_version: KubernetesVersion,
    pub node_pools: Vec<NodePool>,
    /// Consulted by `Full` and `ControlPlaneOnly` runs (SEMANTICS §5.4).
    pub auto_upgrade_window: Option<MaintenanceWindow>,
    /// Consulted by `NodeImageOnly` runs and SecurityPatch (SEMANTICS §5.4).
    pub node_os_window: Option<MaintenanceWindow>,
    /// LTS clusters may skip minors (SEMANTICS §8).
    pub long_term_support: bool,
    /// A stopped cluster fails any upgrade at once (azure-fleet-semantics.md §9).
    pub stopped: bool,
}
