//! `status/<run>.json`: a run as `az fleet updaterun show` prints its ARM GET resource, with its final
//! status in the API's `UpdateRunStatus` shape (SEMANTICS §1; the REST API's `UpdateRuns_Get` examples).

use std::borrow::Cow;
use std::fmt;
use std::io::Write;

use anyhow::Context;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::engine::Time;
use crate::engine::rng::{mix64, name_key};
use crate::fleet::Member;
use crate::orchestrator::run::{GateRt, GroupRt, MemberRt, StageRt, WaitRt};
use crate::orchestrator::strategy::{GateConfig, GateKind, Limit};
use crate::orchestrator::{Note, Strategy, UpdateRun, UpdateState};
use crate::world::ImageSelection;

use super::ReportContext;
use super::rows::FLUSH_AT;

/// The fake subscription every resource id uses: ids must look like ARM ids but point nowhere.
pub const SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000000";

/// The UpdateRun GET resource.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunResource<'a> {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub resource_type: &'static str,
    pub properties: UpdateRunProperties<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunProperties<'a> {
    pub provisioning_state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_strategy_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Value>,
    pub managed_cluster_update: Value,
    pub status: UpdateRunStatus<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_upgrade_profile_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunStatus<'a> {
    pub status: UpdateStatus,
    pub stages: Vec<UpdateStageStatus<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_image_selection: Option<NodeImageSelectionStatus>,
    pub failure_count: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<TimeText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_time: Option<TimeText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// A time as the API writes it (RFC 3339, whole seconds, `Z`), formatted as it is serialized.
#[derive(Clone, Copy, Debug)]
pub struct TimeText(pub Time);

impl Serialize for TimeText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.rfc3339().as_str())
    }
}

#[derive(Serialize)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStageStatus<'a> {
    pub name: String,
    pub status: UpdateStatus,
    pub failure_count: u32,
    pub max_allowed_failures: u32,
    pub max_concurrency: u32,
    pub groups: Vec<UpdateGroupStatus<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before_gates: Vec<UpdateRunGateStatus>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after_gates: Vec<UpdateRunGateStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_stage_wait_status: Option<WaitStatus>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateGroupStatus<'a> {
    pub name: String,
    pub status: UpdateStatus,
    pub failure_count: u32,
    pub max_allowed_failures: u32,
    pub max_concurrency: u32,
    /// Made one by one as they are written: a group may hold a million members.
    pub members: MemberStatuses<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before_gates: Vec<UpdateRunGateStatus>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after_gates: Vec<UpdateRunGateStatus>,
}

/// A group's members as the service shows them, serialized one at a time. Report folders write
/// them with [`write_run_resource`]; serializing them here is the reference it is tested against,
/// and what any other serializer of [`UpdateRunResource`] gets.
pub struct MemberStatuses<'a> {
    fleet: &'a [Member],
    /// The members' cluster ids, escaped once for every run's file ([`ReportContext::cluster_ids`]).
    cluster_ids: Option<&'a [Box<RawValue>]>,
    run: &'a UpdateRun,
    group: &'a GroupRt,
    /// Serialized as an empty list, for [`write_run_resource`] to write the members in its place.
    written_apart: bool,
}

impl Serialize for MemberStatuses<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.written_apart {
            return serializer.collect_seq(std::iter::empty::<()>());
        }
        serializer.collect_seq(self.statuses())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberUpdateStatus<'a> {
    pub name: &'a str,
    pub cluster_resource_id: ClusterResourceId<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<OperationId>,
    pub status: UpdateStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Cow<'a, str>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunGateStatus {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Absent until the run reaches the gate, as the service shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
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

fn status(
    state: UpdateState,
    start: Option<Time>,
    completed: Option<Time>,
    error: Option<ErrorDetail>,
) -> UpdateStatus {
    UpdateStatus {
        state: state.api_name(),
        start_time: start.map(TimeText),
        completed_time: completed.map(TimeText),
        error,
    }
}

fn error_of(note: &Note) -> Option<ErrorDetail> {
    let code = note.code.as_ref()?;
    Some(ErrorDetail { code: code.to_string(), message: note.message.as_deref().unwrap_or_default().to_string() })
}

/// ARM id of a member's AKS cluster: its `clusterResourceId` when the scenario gives one. Written as
/// it is displayed or serialized (a status file has one per member and run), or, with the id already
/// serialized (a JSON string), as that.
#[derive(Clone, Copy)]
pub struct ClusterResourceId<'a>(pub &'a Member, pub Option<&'a RawValue>);

impl ClusterResourceId<'_> {
    /// The id's text in pieces.
    fn pieces(&self) -> [&str; 6] {
        let member = self.0;
        match &member.cluster {
            Some(c) => [
                "/subscriptions/",
                &c.subscription_id,
                "/resourceGroups/",
                &c.resource_group,
                "/providers/Microsoft.ContainerService/managedClusters/",
                &c.name,
            ],
            None => [
                "/subscriptions/",
                SUBSCRIPTION,
                "/resourceGroups/rg-",
                &member.region,
                "/providers/Microsoft.ContainerService/managedClusters/",
                &member.name,
            ],
        }
    }
}

impl fmt::Display for ClusterResourceId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pieces().iter().try_for_each(|piece| f.write_str(piece))
    }
}

impl Serialize for ClusterResourceId<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.1 {
            Some(escaped) => escaped.serialize(serializer),
            // Made whole first: a serializer escapes each piece it is handed.
            None => serializer.serialize_str(&self.pieces().concat()),
        }
    }
}

/// ARM id of a resource of the simulated fleet (`updateRuns`, `updateStrategies`, `autoUpgradeProfiles`).
pub fn fleet_resource_id(fleet: &str, kind: &str, name: &str) -> String {
    format!(
        "/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-fleet/providers/Microsoft.ContainerService/fleets/{fleet}/{kind}/{name}"
    )
}

/// ARM id of a gate resource.
pub fn gate_resource_id(fleet: &str, guid: &str) -> String {
    format!(
        "/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-fleet/providers/Microsoft.ContainerService/fleets/{fleet}/gates/{guid}"
    )
}

/// A stable operation id for the latest attempt: a GUID, as the service's (`8-4-4-4-12` hex digits of
/// a hash of the run, the member and the attempt).
#[derive(Clone, Copy, Debug)]
pub struct OperationId([u8; 36]);

impl OperationId {
    fn new(run: &str, member: &str, attempt: u32) -> OperationId {
        let h = mix64(name_key(run) ^ mix64(name_key(member) ^ u64::from(attempt)));
        let digits = (u128::from(h) << 64) | u128::from(mix64(h));
        let mut text = [b'-'; 36];
        let mut nibble = 32;
        for (i, byte) in text.iter_mut().enumerate() {
            if ![8, 13, 18, 23].contains(&i) {
                nibble -= 1;
                *byte = b"0123456789abcdef"[(digits >> (4 * nibble)) as usize & 0xf];
            }
        }
        OperationId(text)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits and hyphens")
    }
}

impl Serialize for OperationId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Writes `status/<run>.json`: the bytes [`super::write_json`] makes of [`run_resource`] (pretty,
/// and a final newline), with every group's members written here rather than by the serializer.
///
/// serde_json escapes every key and string it is handed byte by byte, and a status file is mostly
/// its members (a year of 1,000 clusters writes 70 files, 35 MB of them): so the resource is
/// serialized with its member lists left empty, and each list is written into its place, the keys
/// and indentation of an entry as lines made once per group ([`EntryLayout`]), the strings checked
/// for what needs escaping 16 bytes at a time, and times, GUIDs and states copied as they are.
/// Tests compare the two writings on the examples, and the strings with serde_json's on random text.
pub fn write_run_resource(ctx: &ReportContext, run_index: usize, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut resource = run_resource(ctx, run_index);
    let stages = &mut resource.properties.status.stages;
    stages.iter_mut().flat_map(|stage| &mut stage.groups).for_each(|group| group.members.written_apart = true);
    let skeleton = super::to_json(&resource)?;
    let mut buffer = Vec::with_capacity(FLUSH_AT + (1 << 12));
    let mut flush = |buffer: &mut Vec<u8>| -> std::io::Result<()> {
        out.write_all(buffer)?;
        buffer.clear();
        Ok(())
    };
    let mut rest = skeleton.as_slice();
    for group in resource.properties.status.stages.iter().flat_map(|stage| &stage.groups) {
        // Every list is the first left after the one before: JSON text has the key `"members"`
        // followed by `": []` nowhere else (a string's quotes are escaped), which is checked below.
        let at = find(rest, EMPTY_MEMBERS).context("a status file's member list is not where it was serialized")?;
        let open = at + EMPTY_MEMBERS.len() - 1;
        let line = rest[..at].iter().rposition(|&b| b == b'\n').map_or(0, |newline| newline + 1);
        buffer.extend_from_slice(&rest[..open]);
        group.members.write_pretty(&mut buffer, at - line, &mut flush)?;
        rest = &rest[open..];
    }
    anyhow::ensure!(find(rest, EMPTY_MEMBERS).is_none(), "a status file has more member lists than groups");
    buffer.extend_from_slice(rest);
    flush(&mut buffer)?;
    Ok(())
}

/// A member list as the resource is serialized for [`write_run_resource`].
const EMPTY_MEMBERS: &[u8] = b"\"members\": []";

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window[0] == needle[0] && window == needle)
}

/// The text of a member's entry between its values, at one indentation, made once for a group,
/// as [`super::pretty`] writes it: line breaks, indentation, keys, braces and commas. Each piece
/// ends where a value starts (`name` with the entry's `{`, `state` and `error_code` with the
/// object they open) or where the entry goes on (the `*_end` pieces close an object).
struct EntryLayout {
    /// Before the first entry.
    first: Vec<u8>,
    /// Between two entries.
    next: Vec<u8>,
    name: Vec<u8>,
    cluster_resource_id: Vec<u8>,
    operation_id: Vec<u8>,
    state: Vec<u8>,
    start_time: Vec<u8>,
    completed_time: Vec<u8>,
    error_code: Vec<u8>,
    error_message: Vec<u8>,
    error_end: Vec<u8>,
    status_end: Vec<u8>,
    message: Vec<u8>,
    end: Vec<u8>,
}

impl EntryLayout {
    /// Entries whose `{` is at `indent` spaces.
    fn new(indent: usize) -> EntryLayout {
        let line = |comma: bool, spaces: usize, text: &str| {
            let mut bytes = if comma { b",\n".to_vec() } else { b"\n".to_vec() };
            bytes.resize(bytes.len() + spaces, b' ');
            bytes.extend_from_slice(text.as_bytes());
            bytes
        };
        let (member, status, error) = (indent + 2, indent + 4, indent + 6);
        EntryLayout {
            first: line(false, indent, ""),
            next: line(true, indent, ""),
            name: [b"{".as_slice(), &line(false, member, "\"name\": ")].concat(),
            cluster_resource_id: line(true, member, "\"clusterResourceId\": "),
            operation_id: line(true, member, "\"operationId\": "),
            state: [line(true, member, "\"status\": {"), line(false, status, "\"state\": ")].concat(),
            start_time: line(true, status, "\"startTime\": "),
            completed_time: line(true, status, "\"completedTime\": "),
            error_code: [line(true, status, "\"error\": {"), line(false, error, "\"code\": ")].concat(),
            error_message: line(true, error, "\"message\": "),
            error_end: line(false, status, "}"),
            status_end: line(false, member, "}"),
            message: line(true, member, "\"message\": "),
            end: line(false, indent, "}"),
        }
    }
}

/// A JSON string as serde_json writes it: whole when nothing in it needs escaping (control
/// characters, `"` and `\`), else with each of those escaped by serde_json's formatter.
fn string(out: &mut Vec<u8>, pieces: &[&str]) {
    out.push(b'"');
    for piece in pieces {
        let mut rest = piece.as_bytes();
        loop {
            let plain = plain_prefix(rest);
            out.extend_from_slice(&rest[..plain]);
            let Some(&b) = rest.get(plain) else { break };
            let escape = match b {
                b'"' => CharEscape::Quote,
                b'\\' => CharEscape::ReverseSolidus,
                b'\n' => CharEscape::LineFeed,
                b'\r' => CharEscape::CarriageReturn,
                b'\t' => CharEscape::Tab,
                0x08 => CharEscape::Backspace,
                0x0c => CharEscape::FormFeed,
                _ => CharEscape::AsciiControl(b),
            };
            CompactFormatter.write_char_escape(out, escape).expect("writing to memory");
            rest = &rest[plain + 1..];
        }
    }
    out.push(b'"');
}

/// How many bytes at the start of `bytes` serde_json writes as they are (checked 16 at a time).
fn plain_prefix(bytes: &[u8]) -> usize {
    super::scan::first(bytes, escaped).unwrap_or(bytes.len())
}

/// Whether serde_json escapes the byte in a string.
#[inline(always)]
fn escaped(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\')
}

/// Text that needs no escaping (times, GUIDs, state names), as a JSON string.
fn plain_string(out: &mut Vec<u8>, text: &str) {
    debug_assert_eq!(plain_prefix(text.as_bytes()), text.len(), "{text:?} needs escaping");
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
}

impl MemberUpdateStatus<'_> {
    /// The member as [`super::pretty`] writes it, in `layout`.
    fn write_pretty(&self, out: &mut Vec<u8>, layout: &EntryLayout) {
        out.extend_from_slice(&layout.name);
        string(out, &[self.name]);
        out.extend_from_slice(&layout.cluster_resource_id);
        match self.cluster_resource_id.1 {
            Some(escaped) => out.extend_from_slice(escaped.get().as_bytes()),
            None => string(out, &self.cluster_resource_id.pieces()),
        }
        if let Some(operation) = &self.operation_id {
            out.extend_from_slice(&layout.operation_id);
            plain_string(out, operation.as_str());
        }
        let status = &self.status;
        out.extend_from_slice(&layout.state);
        plain_string(out, status.state);
        for (line, time) in [(&layout.start_time, status.start_time), (&layout.completed_time, status.completed_time)] {
            if let Some(time) = time {
                out.extend_from_slice(line);
                plain_string(out, time.0.rfc3339().as_str());
            }
        }
        if let Some(error) = &status.error {
            out.extend_from_slice(&layout.error_code);
            string(out, &[&error.code]);
            out.extend_from_slice(&layout.error_message);
            string(out, &[&error.message]);
            out.extend_from_slice(&layout.error_end);
        }
        out.extend_from_slice(&layout.status_end);
        if let Some(message) = &self.message {
            out.extend_from_slice(&layout.message);
            string(out, &[message]);
        }
        out.extend_from_slice(&layout.end);
    }
}

/// The run as its GET resource.
pub fn run_resource<'a>(ctx: &'a ReportContext<'_>, run_index: usize) -> UpdateRunResource<'a> {
    let run = &ctx.result.runs[run_index];
    let spec = &ctx.result.specs[run_index];
    let strategy = match &spec.strategy_name {
        Some(name) => ctx.scenario.strategies.get(name),
        None => ctx.scenario.inline_strategies.get(&spec.strategy_pointer),
    };
    let upgrade = &spec.upgrade;
    let mut managed_cluster_update = json!({ "upgrade": { "type": upgrade.kind.api_name() } });
    if let Some(v) = &upgrade.kubernetes_version {
        managed_cluster_update["upgrade"]["kubernetesVersion"] = json!(v.to_string());
    }
    if !upgrade.auto_upgrade
        || ctx
            .scenario
            .profiles
            .iter()
            .any(|p| Some(&p.name) == spec.auto_upgrade_profile.as_ref() && p.channel.is_kubernetes())
    {
        let mut selection = json!({ "type": upgrade.images.api_name() });
        if let crate::world::ImageSelection::Custom(versions) = &upgrade.images {
            selection["customNodeImageVersions"] =
                versions.values().map(|v| json!({ "version": v.to_string() })).collect();
        }
        managed_cluster_update["nodeImageSelection"] = selection;
    }
    UpdateRunResource {
        id: fleet_resource_id(&ctx.fleet_name, "updateRuns", &run.name),
        name: run.name.clone(),
        resource_type: "Microsoft.ContainerService/fleets/updateRuns",
        properties: UpdateRunProperties {
            provisioning_state: "Succeeded",
            update_strategy_id: spec
                .strategy_name
                .as_ref()
                .map(|n| fleet_resource_id(&ctx.fleet_name, "updateStrategies", n)),
            strategy: strategy.map(strategy_json),
            managed_cluster_update,
            status: run_status(ctx, run_index),
            auto_upgrade_profile_id: spec
                .auto_upgrade_profile
                .as_ref()
                .map(|p| fleet_resource_id(&ctx.fleet_name, "autoUpgradeProfiles", p)),
        },
    }
}

/// A validated strategy in the API's `UpdateRunStrategy` shape (the snapshot a run GET carries).
pub fn strategy_json(strategy: &Strategy) -> Value {
    fn limit(l: &Option<Limit>) -> Option<String> {
        l.map(|l| match l {
            Limit::Count(n) => n.to_string(),
            Limit::Percent(p) => format!("{p}%"),
        })
    }
    fn gates(list: &[GateConfig]) -> Option<Vec<Value>> {
        (!list.is_empty()).then(|| {
            list.iter()
                .map(|g| {
                    let mut v = json!({});
                    if let Some(name) = &g.display_name {
                        v["displayName"] = json!(name);
                    }
                    match &g.kind {
                        GateKind::Approval => v["type"] = json!("Approval"),
                        GateKind::ScheduledStart(s) => {
                            v["type"] = json!("ScheduledStart");
                            let o = s.utc_offset_minutes;
                            v["scheduledStartConfiguration"] = json!({
                                "startDay": weekday(s.start_day),
                                "startTime": format!("{:02}:{:02}", s.start_minute / 60, s.start_minute % 60),
                                "utcOffset": format!("{}{:02}:{:02}", if o < 0 { '-' } else { '+' }, o.abs() / 60, o.abs() % 60),
                            });
                        }
                    }
                    v
                })
                .collect()
        })
    }
    fn put(v: &mut Value, key: &str, value: Option<impl Serialize>) {
        if let Some(x) = value {
            v[key] = json!(x);
        }
    }
    let stages: Vec<Value> = strategy
        .stages
        .iter()
        .map(|s| {
            let mut v = json!({ "name": s.name });
            let groups: Vec<Value> = s
                .groups
                .iter()
                .map(|g| {
                    let mut gv = json!({ "name": g.name });
                    put(
                        &mut gv,
                        "memberSelector",
                        g.member_selector.as_ref().map(|m| json!({ "byLabel": m.to_string() })),
                    );
                    put(&mut gv, "maxConcurrency", limit(&g.max_concurrency));
                    put(&mut gv, "maxAllowedFailures", limit(&g.max_allowed_failures));
                    put(&mut gv, "beforeGates", gates(&g.before_gates));
                    put(&mut gv, "afterGates", gates(&g.after_gates));
                    gv
                })
                .collect();
            put(&mut v, "groups", (!groups.is_empty()).then_some(groups));
            put(&mut v, "memberSelector", s.member_selector.as_ref().map(|m| json!({ "byLabel": m.to_string() })));
            put(
                &mut v,
                "afterStageWaitInSeconds",
                (s.after_stage_wait.as_seconds() > 0).then(|| s.after_stage_wait.as_seconds()),
            );
            put(&mut v, "maxConcurrency", limit(&s.max_concurrency));
            put(&mut v, "maxAllowedFailures", limit(&s.max_allowed_failures));
            put(&mut v, "beforeGates", gates(&s.before_gates));
            put(&mut v, "afterGates", gates(&s.after_gates));
            v
        })
        .collect();
    json!({ "stages": stages })
}

fn weekday(day: chrono::Weekday) -> &'static str {
    use chrono::Weekday::*;
    match day {
        Mon => "Monday",
        Tue => "Tuesday",
        Wed => "Wednesday",
        Thu => "Thursday",
        Fri => "Friday",
        Sat => "Saturday",
        Sun => "Sunday",
    }
}

pub fn run_status<'a>(ctx: &'a ReportContext<'_>, run_index: usize) -> UpdateRunStatus<'a> {
    let result: &'a crate::simulation::SimResult = ctx.result;
    let run = &result.runs[run_index];
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

fn stage_status<'a>(ctx: &'a ReportContext<'_>, run: &'a UpdateRun, stage: &'a StageRt) -> UpdateStageStatus<'a> {
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

fn group_status<'a>(ctx: &'a ReportContext<'_>, run: &'a UpdateRun, group: &'a GroupRt) -> UpdateGroupStatus<'a> {
    UpdateGroupStatus {
        name: group.name.clone(),
        status: status(group.state, group.start_time, group.completed_time, None),
        failure_count: group.failure_count,
        max_allowed_failures: group.max_allowed_failures,
        max_concurrency: group.max_concurrency,
        members: MemberStatuses {
            fleet: &ctx.scenario.fleet,
            cluster_ids: ctx.cluster_ids(),
            run,
            group,
            written_apart: false,
        },
        before_gates: group.before_gates.iter().map(|g| gate_status(ctx, g)).collect(),
        after_gates: group.after_gates.iter().map(|g| gate_status(ctx, g)).collect(),
    }
}

impl<'a> MemberStatuses<'a> {
    /// The group's members' statuses, in the group's order.
    fn statuses(&self) -> impl Iterator<Item = MemberUpdateStatus<'a>> + '_ {
        let members = self.group.members.iter().enumerate();
        members.map(|(i, m)| self.member_status(m, self.group.pending_since(i)))
    }

    /// Writes the members' list after its `[` (the `members` key at `indent` spaces), as
    /// [`super::pretty`] writes it: each member on its lines, then the line of the closing bracket.
    fn write_pretty(
        &self,
        out: &mut Vec<u8>,
        indent: usize,
        flush: &mut impl FnMut(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let layout = EntryLayout::new(indent + 2);
        let mut any = false;
        for status in self.statuses() {
            out.extend_from_slice(if any { &layout.next } else { &layout.first });
            any = true;
            status.write_pretty(out, &layout);
            if out.len() >= FLUSH_AT {
                flush(out)?;
            }
        }
        if any {
            out.push(b'\n');
            out.resize(out.len() + indent, b' ');
        }
        Ok(())
    }

    /// A member as the service shows it. A `Pending` member's `startTime` is when its current
    /// `Pending` spell began; one held by a failed validation (its release not yet in its region)
    /// has the error and the service's message around it, as the update-run monitoring docs' sample
    /// shows (`"set member: NAME to Pending due to failed validation err: …"`).
    /// `pending`: when its current `Pending` spell began, if it is `Pending`.
    fn member_status(&self, member: &'a MemberRt, pending: Option<Time>) -> MemberUpdateStatus<'a> {
        let m = &self.fleet[member.id.index()];
        let end = if member.state.is_finished() { member.end_time().or(member.start_time()) } else { None };
        let error = error_of(&member.note);
        let message = match (&error, pending) {
            (Some(error), Some(_)) => Some(Cow::Owned(format!(
                "set member: {} to Pending due to failed validation err: {}",
                m.name, error.message
            ))),
            _ => member.note.message.as_deref().map(Cow::Borrowed),
        };
        let escaped_id = self.cluster_ids.map(|ids| &*ids[member.id.index()]);
        MemberUpdateStatus {
            name: &m.name,
            cluster_resource_id: ClusterResourceId(m, escaped_id),
            operation_id: (member.attempts > 0).then(|| OperationId::new(&self.run.name, &m.name, member.attempts)),
            status: status(member.state, pending.or(member.start_time()), end, error),
            message,
        }
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn strings_are_written_as_serde_json_writes_them(
            pieces in proptest::collection::vec("\\PC{0,12}|([a-zé .]{0,37}[\"\\\\\\x00-\\x1f\\x7f]?){0,4}", 0..4)
        ) {
            // Runs of plain text longer and shorter than the 16 bytes checked at once, with
            // what needs escaping between them.
            let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let mut ours = Vec::new();
            string(&mut ours, &pieces);
            prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&pieces.concat()).unwrap());
        }
    }

    #[test]
    fn an_operation_id_is_a_guid_of_the_hash_of_run_member_and_attempt() {
        for (run, member, attempt) in [("run-a", "m-001", 1), ("k8s-1-34-2", "aks-eastus-0042", 3), ("", "", 0)] {
            let h = mix64(name_key(run) ^ mix64(name_key(member) ^ u64::from(attempt)));
            let hex = format!("{:016x}{:016x}", h, mix64(h));
            let guid = format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]);
            assert_eq!(OperationId::new(run, member, attempt).as_str(), guid);
        }
    }
}
