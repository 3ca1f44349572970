//! Node pools: a pool DTO → [`NodePool`], and the OS SKU and surge parsers the member generators
//! check their models with.

use std::borrow::Cow;

use crate::fleet::{KubernetesVersion, NodeImageVersion, NodePool, OsSku, Surge};

use super::ctx::{Ctx, quoted};
use super::dto::NodePoolDto;
use super::problem::{echo, join};

pub(crate) fn default_pool(version: Option<KubernetesVersion>) -> NodePool {
    let os = default_ubuntu(version);
    NodePool {
        name: Cow::Borrowed("nodepool1"),
        os_sku: os,
        node_count: 3,
        image_family: Cow::Borrowed(os.default_image_family()),
        node_image_version: None,
        max_surge: None,
        from_snapshot: false,
    }
}

/// `Ubuntu` means 24.04 from Kubernetes 1.35, else 22.04 (aks-models.md §2.5).
fn default_ubuntu(version: Option<KubernetesVersion>) -> OsSku {
    if version.is_some_and(|v| v >= KubernetesVersion::new(1, 35, 0)) { OsSku::Ubuntu2404 } else { OsSku::Ubuntu2204 }
}

pub(crate) fn parse_os_sku(text: &str, version: Option<KubernetesVersion>) -> Result<OsSku, String> {
    Ok(match text {
        "Ubuntu" => default_ubuntu(version),
        "Ubuntu2204" => OsSku::Ubuntu2204,
        "Ubuntu2404" => OsSku::Ubuntu2404,
        "AzureLinux" | "AzureLinux3" => OsSku::AzureLinux3,
        "Windows2022" => OsSku::Windows2022,
        "Windows2025" => OsSku::Windows2025,
        other => {
            return Err(format!(
                "{} is not a supported osSku: {}",
                echo(other),
                quoted(&[
                    "Ubuntu",
                    "Ubuntu2204",
                    "Ubuntu2404",
                    "AzureLinux",
                    "AzureLinux3",
                    "Windows2022",
                    "Windows2025"
                ])
            ));
        }
    })
}

pub(crate) fn build_pool(
    ctx: &mut Ctx,
    p: &NodePoolDto,
    path: &dyn Fn() -> String,
    version: Option<KubernetesVersion>,
) -> Option<NodePool> {
    let before = ctx.problems.len();
    let name_ok = !p.name.is_empty()
        && p.name.len() <= 12
        && p.name.as_bytes()[0].is_ascii_lowercase()
        && p.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !name_ok {
        ctx.err(
            join(&path(), "name"),
            format!(
                "{} is not an AKS node pool name: 1–12 lowercase letters and digits, starting with a letter",
                echo(&p.name)
            ),
        );
    }
    let image = p
        .node_image_version
        .as_ref()
        .and_then(|v| NodeImageVersion::parse(v).map_err(|e| ctx.err(join(&path(), "nodeImageVersion"), e)).ok());
    let (sku, sku_field) = match (&p.os_sku, &p.os_sku_arm) {
        (Some(a), Some(b)) if a != b => {
            ctx.err(join(&path(), "osSKU"), format!("osSKU {} and osSku {} disagree: keep one", echo(b), echo(a)));
            (None, "osSku")
        }
        (Some(a), _) => (Some(a), "osSku"),
        (None, b) => (b.as_ref(), "osSKU"),
    };
    let os = match sku {
        Some(text) => parse_os_sku(text, version).map_err(|e| ctx.err(join(&path(), sku_field), e)).ok(),
        None => Some(match &image {
            Some(i) if i.is_windows() => {
                if i.family().contains("2025") {
                    OsSku::Windows2025
                } else {
                    OsSku::Windows2022
                }
            }
            Some(i) if i.family().starts_with("AKSAzureLinux") => OsSku::AzureLinux3,
            Some(i) if i.family().contains("2404") => OsSku::Ubuntu2404,
            Some(i) if i.family().contains("2204") => OsSku::Ubuntu2204,
            _ => default_ubuntu(version),
        }),
    };
    if let (Some(os), Some(image)) = (os, &image)
        && os.is_windows() != image.is_windows()
    {
        ctx.err(
            join(&path(), "nodeImageVersion"),
            format!("image {} does not fit osSku {}", echo(&image.to_string()), os.api_name()),
        );
    }
    if let (Some(os), Some(os_type)) = (os, &p.os_type)
        && (os_type == "Windows") != os.is_windows()
    {
        ctx.err(join(&path(), "osType"), format!("osType {} does not fit osSku {}", echo(os_type), os.api_name()));
    }
    let (count, count_field) = match (p.node_count, p.count) {
        (Some(a), Some(b)) if a != b => {
            ctx.err(join(&path(), "count"), format!("count {b} and nodeCount {a} disagree: keep one"));
            (None, "nodeCount")
        }
        (Some(a), _) => (Some(a), "nodeCount"),
        (None, b) => (b, "count"),
    };
    let node_count = match count {
        None => 3,
        Some(n) if (1..=1000).contains(&n) => n as u32,
        Some(n) => {
            ctx.err(join(&path(), count_field), format!("{n} nodes: a pool has 1–1000 nodes"));
            1
        }
    };
    let aks_surge = p.upgrade_settings.as_ref().and_then(|u| u.max_surge.as_ref());
    let (surge, surge_field) = match (&p.max_surge, aks_surge) {
        (Some(a), Some(b)) if a.text() != b.text() => {
            ctx.err(
                join(&join(&path(), "upgradeSettings"), "maxSurge"),
                format!(
                    "upgradeSettings.maxSurge {} and maxSurge {} disagree: keep one",
                    echo(&b.text()),
                    echo(&a.text())
                ),
            );
            (None, false)
        }
        (Some(a), _) => (Some(a), false),
        (None, b) => (b, true),
    };
    // The field the surge came from, as a path made only for its problem.
    let surge_path = |in_upgrade_settings: bool| match in_upgrade_settings {
        true => join(&join(&path(), "upgradeSettings"), "maxSurge"),
        false => join(&path(), "maxSurge"),
    };
    let max_surge = surge.and_then(|s| parse_surge(&s.text()).map_err(|e| ctx.err(surge_path(surge_field), e)).ok());
    if ctx.problems.len() > before {
        return None;
    }
    let os = os?;
    Some(NodePool {
        name: Cow::Owned(p.name.clone()),
        os_sku: os,
        node_count,
        image_family: match &image {
            Some(i) if i.family() != os.default_image_family() => Cow::Owned(i.family().to_string()),
            _ => Cow::Borrowed(os.default_image_family()),
        },
        node_image_version: image,
        max_surge,
        from_snapshot: p.from_snapshot,
    })
}

pub(crate) fn parse_surge(text: &str) -> Result<Surge, String> {
    let bad =
        || format!("maxSurge {} must be a node count (\"3\") or a percentage from 1% to 100% (\"33%\")", echo(text));
    match text.strip_suffix('%') {
        Some(p) => match p.parse::<u32>() {
            Ok(v) if (1..=100).contains(&v) => Ok(Surge::Percent(v)),
            _ => Err(bad()),
        },
        None => match text.parse::<u32>() {
            Ok(v) if v >= 1 => Ok(Surge::Nodes(v)),
            _ => Err(bad()),
        },
    }
}
