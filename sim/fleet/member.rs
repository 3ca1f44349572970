//! Fleet members (AKS clusters) and their node pools, as the simulator sees them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::text::echo;

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
    /// Shared with the default pool's name (`nodepool1`) when it is that one, as
    /// [`image_family`](Self::image_family) is.
    pub name: Cow<'static, str>,
    pub os_sku: OsSku,
    pub node_count: u32,
    /// The image family of the pool (e.g. `AKSUbuntu-2204gen2containerd`).
    /// Shared with the OS SKU's default family when it is that one (most pools): a fleet of a
    /// million pools does not hold a million copies of one name.
    pub image_family: Cow<'static, str>,
    /// The current node image; `None` when the scenario does not say (treated as older than any release).
    pub node_image_version: Option<NodeImageVersion>,
    /// `None`: the AKS default for the member's Kubernetes version (aks-models.md §4.1).
    pub max_surge: Option<Surge>,
    /// Created from a node-pool snapshot (SEMANTICS §8: `Latest` leaves such pools alone).
    pub from_snapshot: bool,
}

/// A member's own labels, sorted by key: one allocation for the list (a map's node holds room for
/// eleven entries, and a fleet of a million members has a million of these).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemberLabels(Box<[(Box<str>, Box<str>)]>);

impl MemberLabels {
    /// The value of `key`. A member's few labels are compared with it one by one (each comparison
    /// of short keys a few loads, `same_text`); many are searched by halves. Plans ask this of
    /// every member for every stage, where `memcmp` calls were a fifth of matching a selector.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&str> {
        if self.0.len() <= FEW_LABELS {
            return self.0.iter().find(|(k, _)| same_text(k, key)).map(|(_, v)| &**v);
        }
        self.0.binary_search_by(|(k, _)| (**k).cmp(key)).ok().map(|i| &*self.0[i].1)
    }

    /// The labels in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| &**k)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// The labels of a list of pairs, as a map collects them: sorted by key, and of two entries
    /// with one key the later wins. A list already in key order, each key once (what a map gives,
    /// and what a member usually has), is kept as it is.
    pub fn from_pairs(mut list: Vec<(Box<str>, Box<str>)>) -> MemberLabels {
        if list.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            return MemberLabels(list.into_boxed_slice());
        }
        // Stable: entries of one key stay in their order, and the last of each run is kept.
        list.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(Box<str>, Box<str>)> = Vec::with_capacity(list.len());
        for entry in list {
            match kept.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => kept.push(entry),
            }
        }
        MemberLabels(kept.into_boxed_slice())
    }
}

/// Labels a member has at most for [`MemberLabels::get`] to compare its key with each of them.
const FEW_LABELS: usize = 8;

/// Whether two texts are equal, compared without a call where they are short: up to sixteen bytes
/// as two overlapping loads of eight bytes (or four, or three single bytes), which between them
/// hold every byte; longer ones as `==` compares them.
#[inline(always)]
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |bytes: &[u8], at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
    let half = |bytes: &[u8], at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"));
    match n {
        0 => true,
        1..4 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// As a map collects: sorted by key, and of two entries with one key the later wins.
impl FromIterator<(String, String)> for MemberLabels {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        // Room for every entry the iterator may give (a filtered map's upper bound is its length),
        // so that the list is not shrunk again when it is boxed.
        let mut list: Vec<(Box<str>, Box<str>)> = Vec::with_capacity(iter.size_hint().1.unwrap_or(0));
        list.extend(iter.map(|(k, v)| (k.into(), v.into())));
        MemberLabels::from_pairs(list)
    }
}

/// The labels Fleet Manager adds to every member, read-only (the REST API's FleetMembers examples).
pub const FLEET_LOCATION: &str = "fleet.azure.com/location";
pub const FLEET_MEMBER_NAME: &str = "fleet.azure.com/member-name";
pub const FLEET_CLUSTER_NAME: &str = "fleet.azure.com/cluster-name";
pub const FLEET_RESOURCE_GROUP: &str = "fleet.azure.com/resource-group";
pub const FLEET_SUBSCRIPTION_ID: &str = "fleet.azure.com/subscription-id";
pub const FLEET_LABELS: [&str; 5] =
    [FLEET_LOCATION, FLEET_MEMBER_NAME, FLEET_CLUSTER_NAME, FLEET_RESOURCE_GROUP, FLEET_SUBSCRIPTION_ID];

/// Whether `key` is one of [`FLEET_LABELS`] (their common prefix first: most keys are not).
pub fn is_fleet_label(key: &str) -> bool {
    key.starts_with("fleet.azure.com/") && FLEET_LABELS.contains(&key)
}

/// Resource group of a member without `clusterResourceId`.
pub const DEFAULT_RESOURCE_GROUP: &str = "fleetsim";
/// Subscription of a member without `clusterResourceId` (the placeholder of the API's examples).
pub const DEFAULT_SUBSCRIPTION_ID: &str = "00000000-0000-0000-0000-000000000000";

/// The managed cluster behind a member, from its `clusterResourceId`
/// (`/subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.ContainerService/managedClusters/{name}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterRef {
    pub subscription_id: String,
    pub resource_group: String,
    pub name: String,
}

impl ClusterRef {
    /// Parses an ARM managed-cluster id; segment names compare case-insensitively, as ARM ids do.
    pub fn parse(id: &str) -> Result<ClusterRef, String> {
        let parts: Vec<&str> = id.trim_start_matches('/').split('/').collect();
        let expected = ["subscriptions", "resourcegroups", "providers", "", "managedclusters"];
        let ok = parts.len() == 8
            && parts[0].eq_ignore_ascii_case(expected[0])
            && parts[2].eq_ignore_ascii_case(expected[1])
            && parts[4].eq_ignore_ascii_case(expected[2])
            && parts[5].eq_ignore_ascii_case("Microsoft.ContainerService")
            && parts[6].eq_ignore_ascii_case(expected[4])
            && [1, 3, 7].iter().all(|&i| !parts[i].is_empty());
        if !ok {
            return Err(format!(
                "{} is not a managed cluster id: /subscriptions/<id>/resourceGroups/<name>/providers/Microsoft.ContainerService/managedClusters/<name>",
                echo(id)
            ));
        }
        Ok(ClusterRef {
            subscription_id: parts[1].to_string(),
            resource_group: parts[3].to_string(),
            name: parts[7].to_string(),
        })
    }
}

/// Region names as Azure compares them: `East US` = `eastus`.
pub fn normalize_region(region: &str) -> String {
    region.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect()
}

/// One fleet member: an AKS cluster with its update group, labels, versions and windows.
#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    /// `name_key(name)`, worked out once when the member is built: its identity in the seed tree.
    pub name_key: u64,
    pub region: String,
    /// The member's update group (`properties.group` of the fleet member), used by group-name mode.
    pub group: Option<String>,
    /// The labels the scenario gives (without the Fleet-owned ones: [`Member::label`] adds those).
    pub labels: MemberLabels,
    /// From `clusterResourceId`, when the scenario gives one.
    pub cluster: Option<ClusterRef>,
    pub kubernetes_version: KubernetesVersion,
    pub node_pools: Vec<NodePool>,
    /// Consulted by `Full` and `ControlPlaneOnly` runs (SEMANTICS §5.4).
    pub auto_upgrade_window: Option<Arc<MaintenanceWindow>>,
    /// Consulted by `NodeImageOnly` runs and SecurityPatch (SEMANTICS §5.4).
    pub node_os_window: Option<Arc<MaintenanceWindow>>,
    /// LTS clusters may skip minors (SEMANTICS §8).
    pub long_term_support: bool,
    /// A stopped cluster fails any upgrade at once (azure-fleet-semantics.md §9).
    pub stopped: bool,
}

impl Member {
    /// The value of a Fleet-owned label (`fleet.azure.com/…`), derived from the member.
    #[inline]
    pub fn fleet_label(&self, key: &str) -> Option<&str> {
        Some(match key {
            FLEET_LOCATION => &self.region,
            FLEET_MEMBER_NAME => &self.name,
            FLEET_CLUSTER_NAME => self.cluster.as_ref().map_or(self.name.as_str(), |c| c.name.as_str()),
            FLEET_RESOURCE_GROUP => self.cluster.as_ref().map_or(DEFAULT_RESOURCE_GROUP, |c| c.resource_group.as_str()),
            FLEET_SUBSCRIPTION_ID => {
                self.cluster.as_ref().map_or(DEFAULT_SUBSCRIPTION_ID, |c| c.subscription_id.as_str())
            }
            _ => return None,
        })
    }

    /// Every label as the service shows it: the scenario's and Fleet's own.
    pub fn all_labels(&self) -> BTreeMap<String, String> {
        let mut labels = self.labels.to_map();
        for key in FLEET_LABELS {
            if let Some(value) = self.fleet_label(key) {
                labels.insert(key.to_string(), value.to_string());
            }
        }
        labels
    }
}

impl super::selector::Labels for Member {
    #[inline]
    fn label(&self, key: &str) -> Option<&str> {
        self.fleet_label(key).or_else(|| self.labels.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::super::selector::Labels;
    use super::*;

    fn member(cluster: Option<ClusterRef>) -> Member {
        Member {
            name: "m1".into(),
            name_key: crate::engine::name_key("m1"),
            region: "eastus".into(),
            group: None,
            labels: MemberLabels::from_iter([("ring".to_string(), "canary".to_string())]),
            cluster,
            kubernetes_version: KubernetesVersion::parse("1.30.1").unwrap(),
            node_pools: Vec::new(),
            auto_upgrade_window: None,
            node_os_window: None,
            long_term_support: false,
            stopped: false,
        }
    }

    #[test]
    fn same_text_is_equality_at_every_length_and_place() {
        for len in 0..=40usize {
            let text: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert!(same_text(&text, &text.clone()), "{len}");
            // One byte changed anywhere, and one byte more or less.
            for place in 0..len {
                let mut other = text.clone().into_bytes();
                other[place] = b'Z';
                let other = String::from_utf8(other).unwrap();
                assert!(!same_text(&text, &other) && !same_text(&other, &text), "{len} {place}");
            }
            assert!(!same_text(&text, &format!("{text}a")), "{len}");
            if len > 0 {
                assert!(!same_text(&text, &text[1..]), "{len}");
            }
        }
    }

    #[test]
    fn many_labels_read_like_the_map_they_replace() {
        // More than a member's few, so that they are searched by halves.
        let pairs: Vec<(String, String)> = (0..20).map(|i| (format!("key-{i:02}"), format!("value-{i}"))).collect();
        let labels: MemberLabels = pairs.iter().rev().cloned().collect();
        let map: BTreeMap<String, String> = pairs.into_iter().collect();
        for key in map.keys().map(String::as_str).chain(["", "key-", "key-20", "key-1", "zzz"]) {
            assert_eq!(labels.get(key), map.get(key).map(String::as_str), "{key}");
        }
    }

    #[test]
    fn labels_read_like_the_map_they_replace() {
        // Unsorted input with a repeated key: the same answers as a BTreeMap collected from it.
        let input = [("tier", "web"), ("env", "prod"), ("a", ""), ("tier", "db"), ("zone", "1")];
        let owned = || input.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        let labels: MemberLabels = owned().collect();
        let map: BTreeMap<String, String> = owned().collect();
        assert_eq!(labels.to_map(), map);
        assert_eq!(labels.len(), map.len());
        assert!(labels.keys().eq(map.keys().map(String::as_str)));
        for key in ["tier", "env", "a", "zone", "", "b", "tie", "tierx", "zzz"] {
            assert_eq!(labels.get(key), map.get(key).map(String::as_str), "{key}");
        }
        assert!(MemberLabels::default().is_empty());
        assert_eq!(MemberLabels::default().get("tier"), None);
    }

    const ID: &str =
        "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.ContainerService/managedClusters/aks-1";

    #[test]
    fn surge_counts_nodes_and_rounds_percentages_up_to_at_least_one() {
        assert_eq!(Surge::Nodes(3).nodes_for(10), 3);
        assert_eq!(Surge::Nodes(0).nodes_for(10), 1);
        assert_eq!(Surge::Percent(33).nodes_for(10), 4);
        assert_eq!(Surge::Percent(50).nodes_for(10), 5);
        assert_eq!(Surge::Percent(1).nodes_for(10), 1);
        assert_eq!(Surge::Percent(100).nodes_for(0), 1);
    }

    #[test]
    fn a_cluster_id_is_parsed_case_insensitively_and_every_malformed_one_refused() {
        let parsed = ClusterRef::parse(ID).unwrap();
        assert_eq!(
            parsed,
            ClusterRef { subscription_id: "sub-1".into(), resource_group: "rg-a".into(), name: "aks-1".into() }
        );
        let lower = ID.to_lowercase();
        assert_eq!(ClusterRef::parse(&lower).unwrap().name, "aks-1");
        for bad in [
            "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.ContainerService/managedClusters",
            "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.ContainerService/managedClusters/aks-1/x",
            "/subscription/sub-1/resourceGroups/rg-a/providers/Microsoft.ContainerService/managedClusters/aks-1",
            "/subscriptions/sub-1/resourceGroup/rg-a/providers/Microsoft.ContainerService/managedClusters/aks-1",
            "/subscriptions/sub-1/resourceGroups/rg-a/provider/Microsoft.ContainerService/managedClusters/aks-1",
            "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.Compute/managedClusters/aks-1",
            "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.ContainerService/fleets/aks-1",
            "/subscriptions//resourceGroups/rg-a/providers/Microsoft.ContainerService/managedClusters/aks-1",
            "/subscriptions/sub-1/resourceGroups//providers/Microsoft.ContainerService/managedClusters/aks-1",
            "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.ContainerService/managedClusters/",
        ] {
            let err = ClusterRef::parse(bad).unwrap_err();
            assert!(err.contains("is not a managed cluster id"), "{bad}: {err}");
        }
    }

    #[test]
    fn regions_compare_without_spaces_and_case() {
        assert_eq!(normalize_region("East US 2"), "eastus2");
        assert_eq!(normalize_region("westeurope"), "westeurope");
    }

    #[test]
    fn fleet_labels_come_from_the_cluster_id_or_the_defaults() {
        let plain = member(None);
        assert_eq!(plain.fleet_label(FLEET_LOCATION), Some("eastus"));
        assert_eq!(plain.fleet_label(FLEET_MEMBER_NAME), Some("m1"));
        assert_eq!(plain.fleet_label(FLEET_CLUSTER_NAME), Some("m1"));
        assert_eq!(plain.fleet_label(FLEET_RESOURCE_GROUP), Some(DEFAULT_RESOURCE_GROUP));
        assert_eq!(plain.fleet_label(FLEET_SUBSCRIPTION_ID), Some(DEFAULT_SUBSCRIPTION_ID));
        assert_eq!(plain.fleet_label("ring"), None);

        let backed = member(Some(ClusterRef::parse(ID).unwrap()));
        assert_eq!(backed.fleet_label(FLEET_CLUSTER_NAME), Some("aks-1"));
        assert_eq!(backed.fleet_label(FLEET_RESOURCE_GROUP), Some("rg-a"));
        assert_eq!(backed.fleet_label(FLEET_SUBSCRIPTION_ID), Some("sub-1"));
        assert_eq!(backed.fleet_label(FLEET_MEMBER_NAME), Some("m1"));
    }

    #[test]
    fn a_member_shows_its_own_labels_and_fleets_and_nothing_else() {
        let m = member(Some(ClusterRef::parse(ID).unwrap()));
        assert_eq!(m.label("ring"), Some("canary"));
        assert_eq!(m.label(FLEET_SUBSCRIPTION_ID), Some("sub-1"));
        assert_eq!(m.label("tier"), None);
        let all = m.all_labels();
        assert_eq!(all.len(), 6);
        assert_eq!(all["ring"], "canary");
        assert_eq!(all[FLEET_CLUSTER_NAME], "aks-1");
        assert_eq!(all[FLEET_LOCATION], "eastus");
    }
}
