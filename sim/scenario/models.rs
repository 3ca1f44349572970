//! World models: duration models, failures, overrides, approvals, bad releases and regional
//! incidents.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::fleet::selector::Selector;
use crate::fleet::{KubernetesVersion, Member, MemberId, NodeImageVersion};
use crate::world::{
    BadRelease, DurationDist, DurationModel, FailureCode, FailurePoint, ForcedOutcome, Models, Override,
    RegionalIncident,
};

use super::ctx::Ctx;
use super::dto::*;
use super::problem::{echo, join};

/// A duration model: the fields `dto` gives replace those of `base` (aks-models.md §4.2 defaults).
pub(crate) fn duration_model(ctx: &mut Ctx, dto: &DurationModelDto, base: DurationModel, path: &str) -> DurationModel {
    let mut model = base;
    let set = |ctx: &mut Ctx, value: &Option<Value>, field: &str, target: &mut DurationDist| {
        if let Some(v) = value
            && let Some(dist) = ctx.dist(v, &join(path, field))
        {
            *target = dist;
        }
    };
    set(ctx, &dto.control_plane, "controlPlane", &mut model.control_plane);
    set(ctx, &dto.linux_node_batch, "linuxNodeBatch", &mut model.linux_batch);
    set(ctx, &dto.windows_node_batch, "windowsNodeBatch", &mut model.windows_batch);
    set(ctx, &dto.security_patch_pool, "securityPatchPool", &mut model.security_patch_pool);
    if let Some(v) = &dto.member {
        model.member = ctx.dist(v, &join(path, "member"));
    } else if [&dto.control_plane, &dto.linux_node_batch, &dto.windows_node_batch, &dto.security_patch_pool]
        .iter()
        .any(|v| v.is_some())
    {
        // Components given here would be hidden by an inherited whole-upgrade duration.
        model.member = None;
    }
    if let Some(t) = &dto.drain_timeout
        && let Some(timeout) = ctx.duration(t, &join(path, "drainTimeout"))
    {
        model.drain_timeout = timeout;
    }
    model
}

pub(crate) fn build_models(ctx: &mut Ctx, dto: &ModelsDto, fleet: &[Member], scenario: &ScenarioDto) -> Models {
    let mut models = Models::default();
    if let Some(f) = &dto.failure {
        let p = "/models/failure";
        if let Some(v) = f.probability {
            let v = ctx.probability(v, &join(p, "probability"));
            models.failure.patch_probability = v;
            models.failure.minor_probability = v;
        }
        if let Some(v) = f.patch_probability {
            models.failure.patch_probability = ctx.probability(v, &join(p, "patchProbability"));
        }
        if let Some(v) = f.minor_probability {
            models.failure.minor_probability = ctx.probability(v, &join(p, "minorProbability"));
        }
        if let Some(codes) = &f.codes {
            models.failure.codes = codes
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let cp = join(&join(p, "codes"), i);
                    let point = match c.point.as_str() {
                        "preCheck" => FailurePoint::PreCheck,
                        "surgeAllocation" => FailurePoint::SurgeAllocation,
                        "drain" => FailurePoint::Drain,
                        "anywhere" => FailurePoint::Anywhere,
                        other => {
                            ctx.err(
                                join(&cp, "point"),
                                format!(
                                    "{} is not one of \"preCheck\", \"surgeAllocation\", \"drain\", \"anywhere\"",
                                    echo(other)
                                ),
                            );
                            return None;
                        }
                    };
                    if !(0..=1_000_000).contains(&c.weight) {
                        ctx.err(join(&cp, "weight"), "weight must be between 0 and 1000000");
                        return None;
                    }
                    Some(FailureCode {
                        code: c.code.clone(),
                        weight: c.weight as u32,
                        point,
                        minor_only: c.minor_only,
                        message: c.message.clone().unwrap_or_else(|| format!("the upgrade failed with {}", c.code)),
                    })
                })
                .collect();
        }
    }
    let member_index =
        |name: &str| fleet.binary_search_by(|m| m.name.as_str().cmp(name)).ok().map(|i| MemberId(i as u32));
    let run_names: BTreeSet<&str> = scenario.update_runs.iter().map(|r| r.name.as_str()).collect();
    for (i, o) in dto.overrides.iter().enumerate() {
        let p = join("/models/overrides", i);
        let Some(member) = member_index(&o.member) else {
            ctx.err(join(&p, "member"), format!("no member {} in the fleet", echo(&o.member)));
            continue;
        };
        if let Some(run) = &o.run
            && !run_names.contains(run.as_str())
        {
            ctx.err(join(&p, "run"), format!("no update run {}", echo(run)));
        }
        let outcome = match o.outcome.as_deref() {
            None => {
                if o.error_code.is_some() {
                    ctx.err(join(&p, "errorCode"), "errorCode needs outcome \"Failed\"");
                }
                None
            }
            Some("Completed") => Some(ForcedOutcome::Completed),
            Some("Failed") => {
                let code = o.error_code.clone().unwrap_or_else(|| "UpgradeFailed".to_string());
                let message =
                    o.message.clone().unwrap_or_else(|| format!("forced failure ({code}) from models.overrides"));
                Some(ForcedOutcome::Failed { code, message })
            }
            Some(other) => {
                ctx.err(join(&p, "outcome"), format!("{} is not an outcome: \"Completed\" or \"Failed\"", echo(other)));
                None
            }
        };
        let duration = o.duration.as_ref().and_then(|d| ctx.duration(d, &join(&p, "duration")));
        models.overrides.push(Override { member, run: o.run.clone(), outcome, duration });
    }
    models.approvals = dto.approvals.as_ref().and_then(|v| ctx.dist(v, "/models/approvals"));
    for (i, bad) in dto.bad_releases.iter().enumerate() {
        let p = join("/models/badReleases", i);
        let is_k8s = KubernetesVersion::parse(&bad.version).is_ok();
        if !is_k8s && NodeImageVersion::parse(&bad.version).is_err() {
            ctx.err(
                join(&p, "version"),
                format!("{} is neither a Kubernetes version nor a node image version", echo(&bad.version)),
            );
        }
        let fraction = ctx.probability(bad.failure_fraction, &join(&p, "failureFraction"));
        let selector = bad.member_selector.as_ref().and_then(|s| {
            Selector::parse(s)
                .map_err(|e| ctx.err(join(&p, "memberSelector"), format!("invalid label selector: {e}")))
                .ok()
        });
        models.bad_releases.push(BadRelease {
            version: bad.version.clone(),
            failure_fraction: fraction,
            selector,
            code: bad.error_code.clone().unwrap_or_else(|| "UpgradeFailed".to_string()),
            message: bad.message.clone().unwrap_or_else(|| {
                format!("the cluster became unhealthy after receiving {}, a release marked bad", bad.version)
            }),
        });
    }
    for (i, inc) in dto.incidents.iter().enumerate() {
        let p = join("/models/incidents", i);
        let from = ctx.time(&inc.from, &join(&p, "from"));
        let to = ctx.time(&inc.to, &join(&p, "to"));
        if let (Some(f), Some(t)) = (from, to)
            && t <= f
        {
            ctx.err(join(&p, "to"), "an incident ends after it starts");
        }
        let probability = ctx.probability(inc.failure_probability, &join(&p, "failureProbability"));
        let stall = inc.stall.as_ref().and_then(|s| ctx.duration(s, &join(&p, "stall")));
        if let (Some(from), Some(to)) = (from, to) {
            models.incidents.push(RegionalIncident {
                region: inc.region.clone(),
                from,
                to,
                failure_probability: probability,
                stall,
                code: inc.error_code.clone().unwrap_or_else(|| "InternalServerError".to_string()),
            });
        }
    }
    models
}
