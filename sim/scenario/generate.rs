//! Member generators: many members from a few lines (a minimal form; see `GeneratorDto`).

use std::collections::BTreeMap;

use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Purpose, SeedTree, Time};
use crate::fleet::Member;

use super::build::{Ctx, build_member};
use super::dto::{MemberDto, NodePoolDto};
use super::problem::join;

/// Generates `count` members. Names come from `namePattern` with `{index}` (1-based, zero-padded to
/// the width of `count`), `{region}` and `{group}`; regions, groups, labels and Kubernetes versions are
/// drawn by weight.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorDto {
    pub count: i64,
    /// Default `member-{index}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_pattern: Option<String>,
    /// Region → weight.
    pub regions: BTreeMap<String, f64>,
    /// Update group → weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<BTreeMap<String, f64>>,
    /// Label key → (value → weight).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, BTreeMap<String, f64>>,
    /// Kubernetes version → weight.
    pub kubernetes_versions: BTreeMap<String, f64>,
    /// Node pools every generated member gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_pools: Option<Vec<NodePoolDto>>,
}

/// Draws a key by weight with one uniform draw (keys in byte order, so the draw is reproducible).
pub(crate) fn pick<'m, R: Rng>(rng: &mut R, weights: &'m BTreeMap<String, f64>) -> Option<&'m str> {
    let total: f64 = weights.values().filter(|w| **w > 0.0).sum();
    if total <= 0.0 {
        return None;
    }
    let mut x = rng.random::<f64>() * total;
    let mut last = None;
    for (key, w) in weights.iter().filter(|(_, w)| **w > 0.0) {
        last = Some(key.as_str());
        if x < *w {
            return last;
        }
        x -= w;
    }
    last
}

fn check_weights(ctx: &mut Ctx, weights: &BTreeMap<String, f64>, path: &str) {
    if weights.is_empty() || !weights.values().any(|w| *w > 0.0) {
        ctx.err(path, "give at least one entry with a positive weight");
    }
    for (key, w) in weights {
        if !w.is_finite() || *w < 0.0 {
            ctx.err(join(path, key), format!("weight {w} must be a finite number ≥ 0"));
        }
    }
}

pub(crate) fn generate_members(ctx: &mut Ctx, generators: &[Value], seed: u64, _start: Time) -> Vec<(Member, String)> {
    let mut out = Vec::new();
    for (g, value) in generators.iter().enumerate() {
        let path = join("/memberGenerators", g);
        let dto: GeneratorDto = match serde_json::from_value(value.clone()) {
            Ok(d) => d,
            Err(e) => {
                ctx.err(&path, format!("invalid member generator: {e}"));
                continue;
            }
        };
        if !(1..=200_000).contains(&dto.count) {
            ctx.err(join(&path, "count"), format!("{} members: a generator makes 1–200000", dto.count));
            continue;
        }
        check_weights(ctx, &dto.regions, &join(&path, "regions"));
        check_weights(ctx, &dto.kubernetes_versions, &join(&path, "kubernetesVersions"));
        if let Some(groups) = &dto.groups {
            check_weights(ctx, groups, &join(&path, "groups"));
        }
        for (key, values) in &dto.labels {
            check_weights(ctx, values, &join(&join(&path, "labels"), key));
        }
        let before = ctx.problems.len();
        let tree = SeedTree::new(seed, 0);
        let width = dto.count.to_string().len();
        let pattern = dto.name_pattern.clone().unwrap_or_else(|| "member-{index}".to_string());
        for i in 0..dto.count as u64 {
            if ctx.problems.len() > before {
                break;
            }
            let mut rng = tree.stream(Purpose::FleetGenerator, [g as u64, i, 0]);
            let region = pick(&mut rng, &dto.regions).unwrap_or("eastus").to_string();
            let group = dto.groups.as_ref().and_then(|w| pick(&mut rng, w)).map(str::to_string);
            let labels =
                dto.labels.iter().filter_map(|(k, w)| pick(&mut rng, w).map(|v| (k.clone(), v.to_string()))).collect();
            let version = pick(&mut rng, &dto.kubernetes_versions).unwrap_or("1.33.0").to_string();
            let name = pattern
                .replace("{index}", &format!("{:0width$}", i + 1))
                .replace("{region}", &region)
                .replace("{group}", group.as_deref().unwrap_or("none"));
            let member = MemberDto {
                name,
                region,
                group,
                labels,
                kubernetes_version: version,
                node_pools: dto.node_pools.clone(),
                aks_managed_auto_upgrade_schedule: None,
                aks_managed_node_os_upgrade_schedule: None,
                long_term_support: false,
                stopped: false,
            };
            let member_path = format!("{path} (member {})", i + 1);
            if let Some(m) = build_member(ctx, &member, &member_path) {
                out.push((m, member_path));
            }
        }
    }
    out
}
