//! `members.csv` and `timeline.csv` (PRODUCT.md report contract).

use std::io::Write;

use crate::engine::Time;
use crate::orchestrator::run::GateRt;
use crate::orchestrator::{Entity, GateRef, UpdateState};
use crate::world::UpgradeRecord;

use super::ReportContext;

fn time(t: Option<Time>) -> String {
    t.map(|t| t.to_rfc3339()).unwrap_or_default()
}

/// `pool: from -> to` for every pool whose image changed.
pub fn image_changes(record: &UpgradeRecord, member: &crate::fleet::Member) -> String {
    record
        .pools
        .iter()
        .filter(|c| c.from != c.to)
        .map(|c| {
            format!(
                "{}: {} -> {}",
                member.node_pools[c.pool].name,
                c.from.as_ref().map_or("unknown", |v| v.as_str()),
                c.to.as_ref().map_or("unknown", |v| v.as_str())
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One row of `members.csv` (and of the member table in `index.html`), as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberRow {
    pub run: String,
    pub stage: String,
    pub group: String,
    pub member: String,
    pub region: String,
    pub state: &'static str,
    pub start: String,
    pub end: String,
    pub from_version: String,
    pub to_version: String,
    pub node_images: String,
    pub failure_code: String,
    pub message: String,
}

impl MemberRow {
    fn fields(&self) -> [&str; 13] {
        [
            &self.run,
            &self.stage,
            &self.group,
            &self.member,
            &self.region,
            self.state,
            &self.start,
            &self.end,
            &self.from_version,
            &self.to_version,
            &self.node_images,
            &self.failure_code,
            &self.message,
        ]
    }
}

/// Every run's members in tree order (stage, group, member), then the members no stage selected.
pub fn member_rows(ctx: &ReportContext) -> Vec<MemberRow> {
    let mut rows = Vec::new();
    for (r, run) in ctx.result.runs.iter().enumerate() {
        for (s, stage) in run.stages.iter().enumerate() {
            for (g, group) in stage.groups.iter().enumerate() {
                for (i, member) in group.members.iter().enumerate() {
                    let m = &ctx.scenario.fleet[member.id.index()];
                    let slot = crate::orchestrator::Slot { stage: s as u16, group: g as u16, index: i as u32 };
                    let record = ctx.result.records.get(&(r as u32, slot));
                    let end = if member.state.is_finished() { member.end_time.or(member.start_time) } else { None };
                    rows.push(MemberRow {
                        run: run.name.clone(),
                        stage: stage.name.clone(),
                        group: group.name.clone(),
                        member: m.name.clone(),
                        region: m.region.clone(),
                        state: member.state.api_name(),
                        start: time(member.start_time),
                        end: time(end),
                        from_version: record.map_or(m.kubernetes_version, |rec| rec.from_version).to_string(),
                        to_version: record.map(|rec| rec.to_version.to_string()).unwrap_or_default(),
                        node_images: record.map(|rec| image_changes(rec, m)).unwrap_or_default(),
                        failure_code: member.note.code.as_deref().unwrap_or_default().to_string(),
                        message: member.note.message.as_deref().unwrap_or_default().to_string(),
                    });
                }
            }
        }
        for id in &run.not_selected {
            let m = &ctx.scenario.fleet[id.index()];
            rows.push(MemberRow {
                run: run.name.clone(),
                stage: String::new(),
                group: String::new(),
                member: m.name.clone(),
                region: m.region.clone(),
                state: "NotSelected",
                start: String::new(),
                end: String::new(),
                from_version: m.kubernetes_version.to_string(),
                to_version: String::new(),
                node_images: String::new(),
                failure_code: String::new(),
                message: "not selected by any stage of the run".to_string(),
            });
        }
    }
    rows
}

pub fn members_csv(ctx: &ReportContext) -> csv::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_members_csv(ctx, &mut bytes)?;
    Ok(bytes)
}

/// `members.csv`, written to `out` as it is made.
pub fn write_members_csv(ctx: &ReportContext, out: &mut dyn Write) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "run",
        "stage",
        "group",
        "member",
        "region",
        "state",
        "start",
        "end",
        "from_version",
        "to_version",
        "node_images",
        "failure_code",
        "message",
    ])?;
    for row in ctx.member_rows() {
        w.write_record(row.fields())?;
    }
    w.flush()?;
    Ok(())
}

/// The label of a gate in the timeline: its display name, else its position.
pub fn gate_label(gate: &GateRt, r: GateRef) -> String {
    match &gate.config.display_name {
        Some(name) => name.clone(),
        None => format!("{} gate {}", r.timing.api_name(), r.index + 1),
    }
}

pub fn timeline_csv(ctx: &ReportContext) -> csv::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_timeline_csv(ctx, &mut bytes)?;
    Ok(bytes)
}

/// `timeline.csv`, written to `out` as it is made.
pub fn write_timeline_csv(ctx: &ReportContext, out: &mut dyn Write) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["time", "run", "scope", "stage", "group", "member", "gate", "from", "to", "message"])?;
    for row in &ctx.result.timeline {
        let run = &ctx.result.runs[row.run as usize];
        let t = &row.transition;
        let stage_name = |s: u16| run.stages[s as usize].name.clone();
        let group_name = |s: u16, g: u16| run.stages[s as usize].groups[g as usize].name.clone();
        let (scope, stage, group, member, gate) = match t.entity {
            Entity::Run => ("run", String::new(), String::new(), String::new(), String::new()),
            Entity::Stage(s) => ("stage", stage_name(s), String::new(), String::new(), String::new()),
            Entity::Group(s, g) => ("group", stage_name(s), group_name(s, g), String::new(), String::new()),
            Entity::Member(slot) => {
                let id = run.member(slot).id;
                (
                    "member",
                    stage_name(slot.stage),
                    group_name(slot.stage, slot.group),
                    ctx.scenario.fleet[id.index()].name.clone(),
                    String::new(),
                )
            }
            Entity::Gate(r) => {
                let group = r.group.map(|g| group_name(r.stage, g)).unwrap_or_default();
                ("gate", stage_name(r.stage), group, String::new(), gate_label(run.gate(r), r))
            }
            Entity::Wait(s) => ("wait", stage_name(s), String::new(), String::new(), String::new()),
        };
        w.write_record([
            row.time.to_rfc3339().as_str(),
            &run.name,
            scope,
            &stage,
            &group,
            &member,
            &gate,
            t.from.api_name(),
            t.to.api_name(),
            &t.note.text(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// Members of a run in a given state.
pub fn count_state(run: &crate::orchestrator::UpdateRun, state: UpdateState) -> usize {
    run.stages.iter().flat_map(|s| s.groups.iter()).flat_map(|g| g.members.iter()).filter(|m| m.state == state).count()
}
