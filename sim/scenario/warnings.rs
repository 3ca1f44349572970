//! Warnings: what leaves a scenario valid but is almost surely not what its author meant (a canary
//! stage whose selector selects nobody, an Approval gate nobody will answer). Each is a [`Problem`]
//! (JSON Pointer + what to do); `--strict` makes them errors.
//!
//! Only what the validated scenario tells before simulating is here; a run the horizon cuts is known
//! after simulating (`report::horizon_warnings`).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeSet;

use crate::fleet::Member;
use crate::fleet::member::{FLEET_LABELS, is_fleet_label};
use crate::fleet::selector::{Labels, Operator, Selector};
use crate::orchestrator::plan::plan_run;
use crate::orchestrator::{GateConfig, GateKind, GateRef, RunPlan, Strategy, Timing};

use super::problem::{Problem, join};
use super::{ActionKind, RunSpec, Scenario};

/// Members named in a warning about unselected members, at most.
const NAMES_SHOWN: usize = 5;
/// Known keys or values listed when none is close to a mistyped one, at most.
const OPTIONS_SHOWN: usize = 8;

/// Every warning about a validated scenario, in file order (strategies, then runs, then profiles).
pub fn warnings(scenario: &Scenario) -> Vec<Problem> {
    let mut out = scenario.build_warnings.clone();
    let keys = LabelKeys::new(&scenario.fleet);
    for (name, strategy) in &scenario.strategies {
        // The plan a run or a profile using the strategy already has (each was planned from the
        // same strategy, fleet and settings: planning again was 75 M instructions at 100,000
        // members, most of them matching selectors on the pool's threads); a named strategy
        // nothing uses was never planned: plan it now (if it cannot be planned, a run using it
        // would have been an error, and nothing uses it).
        let uses = |strategy_name: &Option<String>| strategy_name.as_deref() == Some(name.as_str());
        let planned = scenario.runs.iter().find(|r| uses(&r.strategy_name)).map(|r| &r.plan);
        let planned = planned.or_else(|| scenario.profiles.iter().find(|p| uses(&p.strategy_name)).map(|p| &p.plan));
        let plan = match planned {
            Some(plan) => Cow::Borrowed(plan.as_ref()),
            None => match plan_run(Some(strategy), &scenario.fleet, scenario.settings.plan) {
                Ok(plan) => Cow::Owned(plan),
                Err(_) => continue,
            },
        };
        strategy_warnings(&mut out, &join("/updateStrategies", name), strategy, &plan, &scenario.fleet, &keys);
    }
    let explicit = scenario.runs.iter().filter(|r| r.auto_upgrade_profile.is_none());
    for (i, run) in explicit.enumerate() {
        let path = join("/updateRuns", i);
        if let Some(strategy) = scenario.inline_strategies.get(&run.strategy_pointer) {
            strategy_warnings(&mut out, &run.strategy_pointer, strategy, &run.plan, &scenario.fleet, &keys);
        }
        let answered = run.approval_policy.is_some() || scenario.models.approvals.is_some();
        if !answered {
            let whose = format!("run \"{}\"", run.name);
            unanswered_gates(&mut out, &run.strategy_pointer, &run.plan, &whose, |gate| approved_by_action(run, gate));
        }
        horizon_warnings(&mut out, scenario, run, &path);
    }
    if scenario.models.approvals.is_none() {
        for profile in scenario.profiles.iter().filter(|p| !p.disabled) {
            if let Some(name) = &profile.strategy_name {
                let whose = format!("the runs of auto-upgrade profile \"{}\"", profile.name);
                unanswered_gates(&mut out, &join("/updateStrategies", name), &profile.plan, &whose, |_| false);
            }
        }
    }
    out.dedup();
    out
}

/// The label keys of a fleet's members, Fleet's own among them.
///
/// Whether a selector's key is one of them is asked of the members until one has it (all of them,
/// when none has it); the whole list, for a hint, is made only when a warning needs one. Listing
/// every member's keys up front, as owned strings, was 39 M instructions of `fleetsim validate` of
/// the speed workload's 100,000 members, whose selectors are all right.
struct LabelKeys<'a> {
    fleet: &'a [Member],
    all: OnceCell<BTreeSet<&'a str>>,
}

impl<'a> LabelKeys<'a> {
    fn new(fleet: &'a [Member]) -> LabelKeys<'a> {
        LabelKeys { fleet, all: OnceCell::new() }
    }

    /// Whether some member has the label key `key`.
    fn contains(&self, key: &str) -> bool {
        match self.all.get() {
            Some(all) => all.contains(key),
            None => is_fleet_label(key) || self.fleet.iter().any(|m| m.labels.get(key).is_some()),
        }
    }

    /// Every label key some member has, in order.
    fn all(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.all
            .get_or_init(|| {
                let mut keys: BTreeSet<&str> = FLEET_LABELS.into_iter().collect();
                keys.extend(self.fleet.iter().flat_map(|m| m.labels.keys()));
                keys
            })
            .iter()
            .copied()
    }
}

/// Stages and groups that select nobody, selectors on keys no member has, members no stage selects.
fn strategy_warnings(
    out: &mut Vec<Problem>,
    path: &str,
    strategy: &Strategy,
    plan: &RunPlan,
    fleet: &[Member],
    keys: &LabelKeys,
) {
    for (s, (stage, stage_plan)) in strategy.stages.iter().zip(&plan.stages).enumerate() {
        let stage_path = join(&join(path, "stages"), s);
        let stage_empty = stage.member_selector.as_ref().is_some_and(|sel| !fleet.iter().any(|m| sel.matches(m)));
        if let Some(selector) = &stage.member_selector {
            let selector_path = join(&join(&stage_path, "memberSelector"), "byLabel");
            if stage_empty {
                out.push(Problem::new(
                    selector_path,
                    format!(
                        "stage \"{}\" selects no member{}; a run skips it: fix the selector, or remove the stage if it is meant to be empty",
                        stage.name,
                        why_empty(selector, fleet, keys)
                    ),
                ));
                continue; // its groups are empty because of it: one line
            }
            unknown_key_warnings(out, &selector_path, selector, keys);
        }
        for (g, (group, group_plan)) in stage.groups.iter().zip(&stage_plan.groups).enumerate() {
            let group_path = join(&join(&stage_path, "groups"), g);
            let Some(selector) = &group.member_selector else {
                if group_plan.members.is_empty() {
                    out.push(Problem::new(
                        join(&group_path, "name"),
                        format!(
                            "group \"{}\" of stage \"{}\" has no member: no member has \"group\": \"{}\"{}; a run skips it: fix the name, or give the group a memberSelector",
                            group.name,
                            stage.name,
                            group.name,
                            closest_hint(&group.name, fleet.iter().filter_map(|m| m.group.as_deref()), "groups of members")
                        ),
                    ));
                }
                continue;
            };
            let selector_path = join(&join(&group_path, "memberSelector"), "byLabel");
            if group_plan.members.is_empty() {
                let alone = fleet.iter().any(|m| selector.matches(m));
                let why = if alone { " of its stage".to_string() } else { why_empty(selector, fleet, keys) };
                // "selects no member of its stage; …" or "selects no member because …; …"
                out.push(Problem::new(
                    selector_path,
                    format!(
                        "group \"{}\" of stage \"{}\" selects no member{why}; a run skips it: fix the selector, or remove the group if it is meant to be empty",
                        group.name, stage.name
                    ),
                ));
            } else {
                unknown_key_warnings(out, &selector_path, selector, keys);
            }
        }
    }
    if !plan.not_selected.is_empty() {
        let n = plan.not_selected.len();
        let mut names: Vec<String> =
            plan.not_selected.iter().take(NAMES_SHOWN).map(|m| format!("\"{}\"", fleet[m.index()].name)).collect();
        if n > NAMES_SHOWN {
            names.push("…".into());
        }
        out.push(Problem::new(
            join(path, "stages"),
            format!(
                "{n} {} selected by no stage ({}): a run with this strategy leaves {} as {}; add a stage or widen a selector if {} should be upgraded",
                if n == 1 { "member is" } else { "members are" },
                names.join(", "),
                if n == 1 { "it" } else { "them" },
                if n == 1 { "it is" } else { "they are" },
                if n == 1 { "it" } else { "they" },
            ),
        ));
    }
}

/// Why a selector matches no member: the first requirement that matches nobody, explained.
fn why_empty(selector: &Selector, fleet: &[Member], keys: &LabelKeys) -> String {
    for r in selector.requirements() {
        if fleet.iter().any(|m| r.matches(m)) {
            continue;
        }
        if !keys.contains(&r.key) {
            return format!(
                " because no member has the label key \"{}\"{}",
                r.key,
                closest_hint(&r.key, keys.all(), "label keys of members")
            );
        }
        if matches!(r.operator, Operator::Equals | Operator::DoubleEquals | Operator::In) {
            let values: BTreeSet<&str> = fleet.iter().filter_map(|m| m.label(&r.key)).collect();
            let wanted: Vec<&str> = r.values.iter().map(String::as_str).collect();
            let plural = format!("values of {}", r.key);
            let hint = match wanted.as_slice() {
                [one] => closest_hint(one, values, &plural),
                _ => options(&plural, values),
            };
            return format!(" because no member has \"{r}\"{hint}");
        }
        return format!(" because no member matches \"{r}\"");
    }
    if fleet.is_empty() {
        " because the fleet has no members".into()
    } else {
        " because no member matches all its requirements together".into()
    }
}

/// A requirement on a key no member has that still selects members (`rign!=canary` selects every
/// member): most likely a typo.
fn unknown_key_warnings(out: &mut Vec<Problem>, path: &str, selector: &Selector, keys: &LabelKeys) {
    // The selector selects members, so a requirement on a key nobody has holds for all of them.
    for r in selector.requirements().iter().filter(|r| !keys.contains(&r.key)) {
        out.push(Problem::new(
            path,
            format!(
                "no member has the label key \"{}\", so \"{r}\" holds for every member{}; fix the key if it should select",
                r.key,
                closest_hint(&r.key, keys.all(), "label keys of members")
            ),
        ));
    }
}

/// " (did you mean \"ring\"?)" for the closest known name, else " (label keys: …)" listing a few.
fn closest_hint<'a>(wrong: &str, known: impl IntoIterator<Item = &'a str>, plural: &str) -> String {
    let known: BTreeSet<&str> = known.into_iter().collect();
    let lower = wrong.to_lowercase();
    let best = known
        .iter()
        .filter(|k| **k != wrong)
        .map(|k| (strsim::damerau_levenshtein(&lower, &k.to_lowercase()), *k))
        .min();
    match best {
        Some((distance, k)) if distance <= 2.max(wrong.chars().count() / 3) => format!(" (did you mean \"{k}\"?)"),
        _ => options(plural, known),
    }
}

/// " (values of ring: \"broad\", \"canary\")", with at most a few listed.
fn options(plural: &str, known: BTreeSet<&str>) -> String {
    if known.is_empty() {
        return String::new();
    }
    let mut list: Vec<String> = known.iter().take(OPTIONS_SHOWN).map(|k| format!("\"{k}\"")).collect();
    if known.len() > OPTIONS_SHOWN {
        list.push(format!("… {} in all", known.len()));
    }
    format!(" ({plural}: {})", list.join(", "))
}

/// Approval gates of `plan` that no policy answers and no action approves (the caller knows there is
/// no policy). Gates of stages and groups without members are never reached and not reported.
fn unanswered_gates(
    out: &mut Vec<Problem>,
    strategy_path: &str,
    plan: &RunPlan,
    whose: &str,
    approved: impl Fn(GateRef) -> bool,
) {
    let mut check = |list: &[GateConfig], group: Option<u16>, stage: u16, timing: Timing, path: String, at: String| {
        for (i, gate) in list.iter().enumerate() {
            let gate_ref = GateRef { stage, group, timing, index: i as u16 };
            if gate.kind == GateKind::Approval && !approved(gate_ref) {
                let name = gate.display_name.as_ref().map_or(String::new(), |n| format!(" \"{n}\""));
                out.push(Problem::new(
                    join(&path, i),
                    format!(
                        "Approval gate{name} {at} is answered by no approval policy and no approve action of {whose}: the run blocks there until the horizon; add an approve action, an approvalPolicy or models.approvals"
                    ),
                ));
            }
        }
    };
    for (s, stage) in plan.stages.iter().enumerate() {
        if stage.member_count() == 0 {
            continue;
        }
        let stage_path = join(&join(strategy_path, "stages"), s);
        let at = |timing: &str| format!("{timing} stage \"{}\"", stage.name);
        check(&stage.before_gates, None, s as u16, Timing::Before, join(&stage_path, "beforeGates"), at("before"));
        check(&stage.after_gates, None, s as u16, Timing::After, join(&stage_path, "afterGates"), at("after"));
        for (g, group) in stage.groups.iter().enumerate() {
            if group.members.is_empty() || (group.before_gates.is_empty() && group.after_gates.is_empty()) {
                continue;
            }
            let group_path = join(&join(&stage_path, "groups"), g);
            let at = |timing: &str| format!("{timing} group \"{}\" of stage \"{}\"", group.name, stage.name);
            let gr = Some(g as u16);
            check(&group.before_gates, gr, s as u16, Timing::Before, join(&group_path, "beforeGates"), at("before"));
            check(&group.after_gates, gr, s as u16, Timing::After, join(&group_path, "afterGates"), at("after"));
        }
    }
}

fn approved_by_action(run: &RunSpec, gate: GateRef) -> bool {
    run.actions.iter().any(|a| matches!(&a.kind, ActionKind::Approve { gates, .. } if gates.contains(&gate)))
}

/// A start or actions after the end of the simulation: they never happen.
fn horizon_warnings(out: &mut Vec<Problem>, scenario: &Scenario, run: &RunSpec, path: &str) {
    let end = scenario.end();
    if let Some(start) = run.start.filter(|s| *s > end) {
        out.push(Problem::new(
            join(path, "start"),
            format!(
                "run \"{}\" starts at {start}, after the end of the simulation ({end}): it never runs; move the start or raise settings.horizon",
                run.name
            ),
        ));
    }
    let started_by_action = run.actions.iter().any(|a| matches!(a.kind, ActionKind::Start) && a.at <= end);
    if run.start.is_none() && !started_by_action {
        out.push(Problem::new(
            join(path, "start"),
            format!(
                "run \"{}\" is \"manual\" and no start action starts it: it stays NotStarted to the end of the simulation; add {{\"at\": …, \"action\": \"start\"}} or give a start time",
                run.name
            ),
        ));
    }
    for (j, action) in run.actions.iter().enumerate().filter(|(_, a)| a.at > end) {
        let kind = match action.kind {
            ActionKind::Start => "start",
            ActionKind::Stop => "stop",
            ActionKind::Skip(_) => "skip",
            ActionKind::Approve { .. } => "approve",
        };
        out.push(Problem::new(
            join(&join(&join(path, "actions"), j), "at"),
            format!(
                "the {kind} action of run \"{}\" at {} is after the end of the simulation ({end}): it never happens; move it or raise settings.horizon",
                run.name, action.at
            ),
        ));
    }
}
