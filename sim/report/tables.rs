//! `members.csv` and `timeline.csv` (PRODUCT.md report contract).

use std::borrow::Cow;
use std::io::Write;

use crate::engine::Time;
use crate::fleet::KubernetesVersion;
use crate::orchestrator::run::GateRt;
use crate::orchestrator::{Entity, GateRef, UpdateState};
use crate::world::UpgradeRecord;

use super::ReportContext;
use super::rows::Rows;

/// `pool: from -> to` for every pool whose image changed, joined by `; ` (the `node_images` of a
/// member row): the record it is made from, written out only when a row is (the page's pass over
/// the rows keeps the first ten thousand).
#[derive(Clone, Copy, Debug)]
pub struct NodeImages<'a>(pub Option<(&'a UpgradeRecord, &'a crate::fleet::Member)>);

impl NodeImages<'_> {
    /// Appends the text to `out`.
    pub fn write_to(&self, out: &mut String) {
        let Some((record, member)) = self.0 else { return };
        for (i, c) in record.pools.iter().filter(|c| c.from != c.to).enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            out.push_str(&member.node_pools[c.pool].name);
            out.push_str(": ");
            out.push_str(c.from.as_ref().map_or("unknown", |v| v.as_str()));
            out.push_str(" -> ");
            out.push_str(c.to.as_ref().map_or("unknown", |v| v.as_str()));
        }
    }
}

/// One row of `members.csv` (and of the member table in `index.html`). Names and notes are
/// borrowed from the scenario and the result, and times and versions are kept as values and written
/// as text only when the row is: a report holds one row per member and run.
#[derive(Clone, Debug)]
pub struct MemberRow<'a> {
    pub run: &'a str,
    pub stage: &'a str,
    pub group: &'a str,
    pub member: &'a str,
    pub region: &'a str,
    pub state: &'static str,
    pub start: Option<Time>,
    pub end: Option<Time>,
    pub from_version: KubernetesVersion,
    pub to_version: Option<KubernetesVersion>,
    pub node_images: NodeImages<'a>,
    pub failure_code: &'a str,
    pub message: &'a str,
}

impl MemberRow<'_> {
    /// Writes the row; `images` is a buffer for its node-image changes.
    fn write(&self, w: &mut Rows, images: &mut String) -> std::io::Result<()> {
        // Times and versions formatted on the stack: a report writes a row per member and run.
        let (start, end) = (self.start.map(Time::rfc3339), self.end.map(Time::rfc3339));
        images.clear();
        self.node_images.write_to(images);
        let (from, to) = (self.from_version.text(), self.to_version.map(KubernetesVersion::text));
        w.row(&[
            self.run,
            self.stage,
            self.group,
            self.member,
            self.region,
            self.state,
            start.as_ref().map_or("", |t| t.as_str()),
            end.as_ref().map_or("", |t| t.as_str()),
            from.as_str(),
            to.as_ref().map_or("", |t| t.as_str()),
            images,
            self.failure_code,
            self.message,
        ])
    }
}

/// Hands `f` every run's members in tree order (stage, group, member), then the members no stage
/// selected, one row at a time (a report of a large fleet never holds them all); stops at the
/// first error `f` returns.
pub fn each_member_row<'a, E>(
    ctx: &ReportContext<'a>,
    mut f: impl FnMut(MemberRow<'a>) -> Result<(), E>,
) -> Result<(), E> {
    let (scenario, result) = (ctx.scenario, ctx.result);
    for (r, run) in result.runs.iter().enumerate() {
        for (s, stage) in run.stages.iter().enumerate() {
            for (g, group) in stage.groups.iter().enumerate() {
                for (i, member) in group.members.iter().enumerate() {
                    let m = &scenario.fleet[member.id.index()];
                    let slot = crate::orchestrator::Slot { stage: s as u16, group: g as u16, index: i as u32 };
                    let record = result.records.get(&(r as u32, slot));
                    let end = if member.state.is_finished() { member.end_time().or(member.start_time()) } else { None };
                    f(MemberRow {
                        run: &run.name,
                        stage: &stage.name,
                        group: &group.name,
                        member: &m.name,
                        region: &m.region,
                        state: member.state.api_name(),
                        start: member.start_time(),
                        end,
                        from_version: record.map_or(m.kubernetes_version, |rec| rec.from_version),
                        to_version: record.map(|rec| rec.to_version),
                        node_images: NodeImages(record.map(|rec| (rec, m))),
                        failure_code: member.note.code.as_deref().unwrap_or_default(),
                        message: member.note.message.as_deref().unwrap_or_default(),
                    })?;
                }
            }
        }
        for id in &run.not_selected {
            let m = &scenario.fleet[id.index()];
            f(MemberRow {
                run: &run.name,
                stage: "",
                group: "",
                member: &m.name,
                region: &m.region,
                state: "NotSelected",
                start: None,
                end: None,
                from_version: m.kubernetes_version,
                to_version: None,
                node_images: NodeImages(None),
                failure_code: "",
                message: "not selected by any stage of the run",
            })?;
        }
    }
    Ok(())
}

pub fn members_csv(ctx: &ReportContext) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_members_csv(ctx, &mut bytes)?;
    Ok(bytes)
}

/// `members.csv`, written to `out` as it is made.
pub fn write_members_csv(ctx: &ReportContext, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = Rows::new(out);
    w.row(&[
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
    let mut images = String::new();
    each_member_row(ctx, |row| row.write(&mut w, &mut images))?;
    w.finish()
}

/// The label of a gate in the timeline: its display name, else its position.
pub fn gate_label(gate: &GateRt, r: GateRef) -> String {
    gate_label_ref(gate, r).into_owned()
}

fn gate_label_ref(gate: &GateRt, r: GateRef) -> Cow<'_, str> {
    match &gate.config.display_name {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(format!("{} gate {}", r.timing.api_name(), r.index + 1)),
    }
}

pub fn timeline_csv(ctx: &ReportContext) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_timeline_csv(ctx, &mut bytes)?;
    Ok(bytes)
}

/// `timeline.csv`, written to `out` as it is made.
pub fn write_timeline_csv(ctx: &ReportContext, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = Rows::new(out);
    w.row(&["time", "run", "scope", "stage", "group", "member", "gate", "from", "to", "message"])?;
    // Names are borrowed and times formatted on the stack: a timeline has rows by the hundred
    // thousand.
    for row in &ctx.result.timeline {
        let run = &ctx.result.runs[row.run as usize];
        let t = &row.transition;
        let stage_name = |s: u16| run.stages[s as usize].name.as_str();
        let group_name = |s: u16, g: u16| run.stages[s as usize].groups[g as usize].name.as_str();
        let none = Cow::Borrowed("");
        let (scope, stage, group, member, gate) = match t.entity {
            Entity::Run => ("run", "", "", "", none),
            Entity::Stage(s) => ("stage", stage_name(s), "", "", none),
            Entity::Group(s, g) => ("group", stage_name(s), group_name(s, g), "", none),
            Entity::Member(slot) => {
                let id = run.member(slot).id;
                let name = ctx.scenario.fleet[id.index()].name.as_str();
                ("member", stage_name(slot.stage), group_name(slot.stage, slot.group), name, none)
            }
            Entity::Gate(r) => {
                let group = r.group.map(|g| group_name(r.stage, g)).unwrap_or_default();
                ("gate", stage_name(r.stage), group, "", gate_label_ref(run.gate(r), r))
            }
            Entity::Wait(s) => ("wait", stage_name(s), "", "", none),
        };
        w.row(&[
            row.time.rfc3339().as_str(),
            &run.name,
            scope,
            stage,
            group,
            member,
            &gate,
            t.from.api_name(),
            t.to.api_name(),
            &t.note.text_ref(),
        ])?;
    }
    w.finish()
}

/// Members of a run in a given state.
pub fn count_state(run: &crate::orchestrator::UpdateRun, state: UpdateState) -> usize {
    run.stages.iter().flat_map(|s| s.groups.iter()).flat_map(|g| g.members.iter()).filter(|m| m.state == state).count()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::NodeImages;
    use crate::fleet::member::{MemberLabels, NodePool, OsSku};
    use crate::fleet::{KubernetesVersion, Member, NodeImageVersion};
    use crate::world::{PoolChange, UpgradeRecord};

    #[test]
    fn node_images_name_every_changed_pool_in_order() {
        let pool = |name: &str| NodePool {
            name: name.to_string().into(),
            os_sku: OsSku::Ubuntu2204,
            node_count: 3,
            image_family: Cow::Borrowed("AKSUbuntu-2204gen2containerd"),
            node_image_version: None,
            max_surge: None,
            from_snapshot: false,
        };
        let member = Member {
            name: "m1".into(),
            name_key: crate::engine::name_key("m1"),
            region: "eastus".into(),
            group: None,
            labels: MemberLabels::default(),
            cluster: None,
            kubernetes_version: KubernetesVersion::new(1, 33, 1),
            node_pools: vec![pool("system"), pool("user1"), pool("user2"), pool("user3")],
            auto_upgrade_window: None,
            node_os_window: None,
            long_term_support: false,
            stopped: false,
        };
        let image = |v: &str| Some(NodeImageVersion::parse(v).unwrap());
        let change = |pool, from, to| PoolChange { pool, from, to };
        let record = UpgradeRecord {
            from_version: KubernetesVersion::new(1, 33, 1),
            to_version: KubernetesVersion::new(1, 33, 1),
            pools: vec![
                change(
                    0,
                    image("AKSUbuntu-2204gen2containerd-202602.09.0"),
                    image("AKSUbuntu-2204gen2containerd-202603.01.0"),
                ),
                change(
                    1,
                    image("AKSUbuntu-2204gen2containerd-202603.01.0"),
                    image("AKSUbuntu-2204gen2containerd-202603.01.0"),
                ),
                change(2, None, image("AKSUbuntu-2204gen2containerd-202603.01.0")),
                change(3, image("AKSUbuntu-2204gen2containerd-202603.01.0"), None),
            ],
            received_bad_release: false,
            failed_by_bad_release: false,
        };
        let mut text = String::from("kept|");
        NodeImages(Some((&record, &member))).write_to(&mut text);
        assert_eq!(
            text,
            "kept|system: AKSUbuntu-2204gen2containerd-202602.09.0 -> AKSUbuntu-2204gen2containerd-202603.01.0; \
             user2: unknown -> AKSUbuntu-2204gen2containerd-202603.01.0; \
             user3: AKSUbuntu-2204gen2containerd-202603.01.0 -> unknown"
        );
        let mut none = String::new();
        NodeImages(None).write_to(&mut none);
        assert_eq!(none, "");
    }
}
