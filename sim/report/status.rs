//! `status/<run>.json`: a run's final status in the API's `UpdateRunStatus` shape (SEMANTICS §1).

use serde::Serialize;

use crate::engine::Time;
use crate::engine::rng::{mix64, name_key};
use crate::fleet::Member;
use crate::orchestrator::run::{GateRt, GroupRt, MemberRt, StageRt, WaitRt};
use crate::orchestrator::{Note, UpdateRun, UpdateState};
use crate::world::ImageSelection;

use super::ReportContext;

/// The fake subscription every resource id uses: ids must look like ARM ids but point nowhere.
pub const SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000000";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunStatus {
    pub status: UpdateStatus,
    pub stages: Vec<UpdateStageStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<NodeImageSelectionStatus>,
    pub failure_count: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

#[derive(Serialize)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStageStatus {
    pub name: String,
    pub status: UpdateStatus,
    pub failure_count: u32,
    pub max_allowed_failures: u32,
    pub max_concurrency: u32,
    pub groups: Vec<UpdateGroupStatus>,
    pub before_gates: Vec<UpdateRunGateStatus>,
    pub after_gates: Vec<UpdateRunGateStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_stage_wait_status: Option<WaitStatus>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateGroupStatus {
    pub name: String,
    pub status: UpdateStatus,
    pub failure_count: u32,
    pub max_allowed_failures: u32,
    pub max_concurrency: u32,
    pub members: Vec<MemberUpdateStatus>,
    pub before_gates: Vec<UpdateRunGateStatus>,
    pub after_gates: Vec<UpdateRunGateStatus>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberUpdateStatus {
    pub name: String,
    pub cluster_resource_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    pub status: UpdateStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunGateStatus {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    pub gate_id: Option<String>,
    pub status: UpdateStatus,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitStatus {
    pub status: UpdateStatus,
    pub wait_duration_in_seconds: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageSelectionStatus {
    pub selected_node_image_versions: Vec<VersionEntry>,
}

#[derive(Serialize)]
pub struct VersionEntry {
    pub version: String,
}

fn time(t: Option<Time>) -> Option<String> {
    t.map(|t| t.to_rfc3339())
}

fn status(
    state: UpdateState,
    start: Option<Time>,
    completed: Option<Time>,
    error: Option<ErrorDetail>,
) -> UpdateStatus {
    UpdateStatus { state: state.api_name(), start_time: time(start), completed_time: time(completed), error }
}

fn error_of(note: &Note) -> Option<ErrorDetail> {
    let code = note.code.as_ref()?;
    Some(ErrorDetail { code: code.to_string(), message: note.message.as_deref().unwrap_or_default().to_string() })
}

/// ARM id of a member's AKS cluster.
pub fn cluster_resource_id(member: &Member) -> String {
    format!(
        "/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-{}/providers/Microsoft.ContainerService/managedClusters/{}",
        member.region, member.name
    )
}

/// ARM id of a gate resource.
pub fn gate_resource_id(fleet: &str, guid: &str) -> String {
    format!(
        "/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-fleet/providers/Microsoft.ContainerService/fleets/{fleet}/gates/{guid}"
    )
}

/// A stable operation id for the latest attempt.
fn operation_id(run: &str, member: &str, attempt: u32) -> String {
    let h = mix64(name_key(run) ^ mix64(name_key(member) ^ u64::from(attempt)));
    format!("{:016x}{:016x}", h, mix64(h))
}

pub fn run_status(ctx: &ReportContext, run_index: usize) -> UpdateRunStatus {
    let run = &ctx.result.runs[run_index];
    let error = if run.state == UpdateState::Failed {
        Some(ErrorDetail { code: "UpdateRunFailed".to_string(), message: run.note.text() })
    } else {
        None
    };
    let spec = &ctx.result.specs[run_index].upgrade;
    let node_image_selection = match (&spec.images, &ctx.result.selected_images[run_index]) {
        (ImageSelection::Consistent, Some(selected)) => {
            Some(selected.values().map(|v| VersionEntry { version: v.to_string() }).collect())
        }
        (ImageSelection::Custom(versions), _) => {
            Some(versions.values().map(|v| VersionEntry { version: v.to_string() }).collect())
        }
        _ => None,
    }
    .map(|selected_node_image_versions| NodeImageSelectionStatus { selected_node_image_versions });
    UpdateRunStatus {
        status: status(run.state, run.start_time, run.completed_time, error),
        stages: run.stages.iter().map(|s| stage_status(ctx, run, s)).collect(),
        node_image_selection,
        failure_count: run.failure_count,
    }
}

fn stage_status(ctx: &ReportContext, run: &UpdateRun, stage: &StageRt) -> UpdateStageStatus {
    UpdateStageStatus {
        name: stage.name.clone(),
        status: status(stage.state, stage.start_time, stage.completed_time, None),
        failure_count: stage.failure_count,
        max_allowed_failures: stage.max_allowed_failures,
        max_concurrency: stage.max_concurrency,
        groups: stage.groups.iter().map(|g| group_status(ctx, run, g)).collect(),
        before_gates: stage.before_gates.iter().map(|g| gate_status(ctx, g)).collect(),
        after_gates: stage.after_gates.iter().map(|g| gate_status(ctx, g)).collect(),
        after_stage_wait_status: stage.wait.as_ref().map(wait_status),
    }
}

fn group_status(ctx: &ReportContext, run: &UpdateRun, group: &GroupRt) -> UpdateGroupStatus {
    UpdateGroupStatus {
        name: group.name.clone(),
        status: status(group.state, group.start_time, group.completed_time, None),
        failure_count: group.failure_count,
        max_allowed_failures: group.max_allowed_failures,
        max_concurrency: group.max_concurrency,
        members: group.members.iter().map(|m| member_status(ctx, run, m)).collect(),
        before_gates: group.before_gates.iter().map(|g| gate_status(ctx, g)).collect(),
        after_gates: group.after_gates.iter().map(|g| gate_status(ctx, g)).collect(),
    }
}

fn member_status(ctx: &ReportContext, run: &UpdateRun, member: &MemberRt) -> MemberUpdateStatus {
    let m = &ctx.scenario.fleet[member.id.index()];
    let end = if member.state.is_finished() { member.end_time.or(member.start_time) } else { None };
    MemberUpdateStatus {
        name: m.name.clone(),
        cluster_resource_id: cluster_resource_id(m),
        operation_id: (member.attempts > 0).then(|| operation_id(&run.name, &m.name, member.attempts)),
        status: status(member.state, member.start_time, end, error_of(&member.note)),
        message: member.note.message.as_ref().map(|m| m.to_string()),
    }
}

fn gate_status(ctx: &ReportContext, gate: &GateRt) -> UpdateRunGateStatus {
    let reached = gate.state != UpdateState::NotStarted && gate.start_time.is_some();
    UpdateRunGateStatus {
        display_name: gate.config.display_name.clone(),
        gate_id: if reached { gate.gate_id.as_ref().map(|id| gate_resource_id(&ctx.fleet_name, id)) } else { None },
        status: status(gate.state, gate.start_time, gate.completed_time, None),
    }
}

fn wait_status(wait: &WaitRt) -> WaitStatus {
    WaitStatus {
        status: status(wait.state, wait.start_time, wait.completed_time, None),
        wait_duration_in_seconds: wait.duration.as_seconds(),
    }
}
