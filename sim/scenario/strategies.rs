//! Strategies: `UpdateRunStrategy` DTOs → [`Strategy`] (stages, groups, limits, gates), which
//! strategy a run or profile uses, and plan problems mapped back under the strategy.

use std::collections::BTreeMap;

use chrono::Weekday;

use crate::engine::Duration;
use crate::fleet::selector::Selector;
use crate::orchestrator::{GateConfig, GateKind, Group, Limit, ScheduledStart, Stage, Strategy, Timing};

use super::ctx::{Ctx, check_name, is_resource_name, quoted};
use super::dto::*;
use super::problem::{Problem, echo, join};

/// `UpdateRunStrategy` → [`Strategy`] with SEMANTICS §2 checks.
pub(crate) fn build_strategy(ctx: &mut Ctx, dto: &StrategyDto, path: &str) -> Option<Strategy> {
    let before = ctx.problems.len();
    if dto.stages.is_empty() {
        ctx.err(join(path, "stages"), "a strategy needs at least one stage");
    }
    let mut stage_names = BTreeMap::new();
    // Where each group name was first used: (stage, group).
    let mut group_names: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let stage_path_of = |s: usize| join(&join(path, "stages"), s);
    // Group `g` of stage `s`'s pointer, made only for a problem: a strategy may have a group per
    // region in each of its stages.
    let group_path = |s: usize, g: usize| join(&join(&stage_path_of(s), "groups"), g);
    let mut stages = Vec::new();
    for (s, stage) in dto.stages.iter().enumerate() {
        let stage_path = stage_path_of(s);
        if check_name(ctx, &stage.name, &join(&stage_path, "name"), "stage")
            && let Some(previous) = stage_names.insert(stage.name.clone(), stage_path.clone())
        {
            ctx.err(
                join(&stage_path, "name"),
                format!("stage name {} is already used at {previous}", echo(&stage.name)),
            );
        }
        let selector = stage
            .member_selector
            .as_ref()
            .and_then(|sel| build_selector(ctx, sel, &join(&stage_path, "memberSelector")));
        let groups_dto = stage.groups.as_deref().unwrap_or(&[]);
        if groups_dto.is_empty() && stage.member_selector.is_none() {
            ctx.err(join(&stage_path, "groups"), "a stage needs 1–50 groups, or a memberSelector with no groups");
        }
        if groups_dto.len() > 50 {
            ctx.err(join(&stage_path, "groups"), format!("{} groups: a stage has at most 50", groups_dto.len()));
        }
        let mut groups = Vec::new();
        for (g, group) in groups_dto.iter().enumerate() {
            let field = |name: &str| join(&group_path(s, g), name);
            let named = is_resource_name(&group.name) || check_name(ctx, &group.name, &field("name"), "group");
            if named && let Some((first_s, first_g)) = group_names.insert(group.name.clone(), (s, g)) {
                let previous = group_path(first_s, first_g);
                ctx.err(
                    field("name"),
                    format!(
                        "group name {} is already used at {previous}; a group appears at most once in a strategy",
                        echo(&group.name)
                    ),
                );
            }
            groups.push(Group {
                name: group.name.clone(),
                member_selector: group
                    .member_selector
                    .as_ref()
                    .and_then(|sel| build_selector(ctx, sel, &field("memberSelector"))),
                max_concurrency: limit(
                    ctx,
                    &group.max_concurrency,
                    || field("maxConcurrency"),
                    Limit::parse_max_concurrency,
                ),
                max_allowed_failures: limit(
                    ctx,
                    &group.max_allowed_failures,
                    || field("maxAllowedFailures"),
                    Limit::parse_max_allowed_failures,
                ),
                before_gates: gates(ctx, &group.before_gates, || field("beforeGates"), Timing::Before),
                after_gates: gates(ctx, &group.after_gates, || field("afterGates"), Timing::After),
            });
        }
        let wait = match stage.after_stage_wait_in_seconds {
            None => Duration::ZERO,
            Some(w) if (0..=i64::from(i32::MAX)).contains(&w) => Duration(w),
            Some(w) => {
                ctx.err(
                    join(&stage_path, "afterStageWaitInSeconds"),
                    format!("{w} is not a wait between 0 and 2147483647 seconds"),
                );
                Duration::ZERO
            }
        };
        stages.push(Stage {
            name: stage.name.clone(),
            groups,
            member_selector: selector,
            after_stage_wait: wait,
            max_concurrency: limit(
                ctx,
                &stage.max_concurrency,
                || join(&stage_path, "maxConcurrency"),
                Limit::parse_max_concurrency,
            ),
            max_allowed_failures: limit(
                ctx,
                &stage.max_allowed_failures,
                || join(&stage_path, "maxAllowedFailures"),
                Limit::parse_max_allowed_failures,
            ),
            before_gates: gates(ctx, &stage.before_gates, || join(&stage_path, "beforeGates"), Timing::Before),
            after_gates: gates(ctx, &stage.after_gates, || join(&stage_path, "afterGates"), Timing::After),
        });
    }
    (ctx.problems.len() == before).then_some(Strategy { stages })
}

fn build_selector(ctx: &mut Ctx, dto: &MemberSelectorDto, path: &str) -> Option<Selector> {
    let path = join(path, "byLabel");
    if dto.by_label.chars().count() > 512 {
        ctx.err(&path, "a label selector has at most 512 characters");
        return None;
    }
    Selector::parse(&dto.by_label)
        .map_err(|e| ctx.err(&path, format!("invalid label selector {}: {e}", echo(&dto.by_label))))
        .ok()
}

/// `path` makes the limit's JSON pointer, only for a problem.
fn limit(
    ctx: &mut Ctx,
    value: &Option<StringOrInt>,
    path: impl FnOnce() -> String,
    parse: fn(&str) -> Result<Limit, String>,
) -> Option<Limit> {
    let text = value.as_ref()?.text();
    parse(&text).map_err(|e| ctx.err(path(), e)).ok()
}

/// `path` makes the list's JSON pointer, only when there is a list.
fn gates(ctx: &mut Ctx, list: &Option<Vec<GateDto>>, path: impl FnOnce() -> String, timing: Timing) -> Vec<GateConfig> {
    let Some(list) = list else { return Vec::new() };
    let path = path();
    let path = path.as_str();
    list.iter()
        .enumerate()
        .filter_map(|(i, gate)| {
            let gate_path = join(path, i);
            if let Some(name) = &gate.display_name {
                if !(1..=100).contains(&name.chars().count()) {
                    ctx.err(join(&gate_path, "displayName"), "displayName has 1–100 characters");
                } else if name.chars().any(char::is_control) {
                    // It is printed on the console and in every report: one line, no terminal codes.
                    ctx.err(
                        join(&gate_path, "displayName"),
                        format!(
                            "displayName {} has a control character (a newline, tab or escape); use plain text",
                            echo(name)
                        ),
                    );
                }
            }
            let kind = match gate.kind.as_str() {
                "Approval" => {
                    if gate.scheduled_start_configuration.is_some() {
                        ctx.err(
                            join(&gate_path, "scheduledStartConfiguration"),
                            "only ScheduledStart gates have a scheduledStartConfiguration",
                        );
                    }
                    GateKind::Approval
                }
                "ScheduledStart" => {
                    if timing == Timing::After {
                        ctx.err(join(&gate_path, "type"), "ScheduledStart gates are allowed only in beforeGates");
                    }
                    let Some(config) = &gate.scheduled_start_configuration else {
                        ctx.err(
                            join(&gate_path, "scheduledStartConfiguration"),
                            "a ScheduledStart gate needs scheduledStartConfiguration {startDay, startTime, utcOffset}",
                        );
                        return None;
                    };
                    GateKind::ScheduledStart(scheduled_start(
                        ctx,
                        config,
                        &join(&gate_path, "scheduledStartConfiguration"),
                    )?)
                }
                other => {
                    ctx.err(
                        join(&gate_path, "type"),
                        format!("{} is not a gate type: \"Approval\" or \"ScheduledStart\"", echo(other)),
                    );
                    return None;
                }
            };
            Some(GateConfig { display_name: gate.display_name.clone(), kind })
        })
        .collect()
}

fn scheduled_start(ctx: &mut Ctx, dto: &ScheduledStartDto, path: &str) -> Option<ScheduledStart> {
    let day = parse_weekday(&dto.start_day).map_err(|e| ctx.err(join(path, "startDay"), e)).ok();
    let minute = parse_hh_mm(&dto.start_time).map_err(|e| ctx.err(join(path, "startTime"), e)).ok();
    let offset = parse_utc_offset(&dto.utc_offset).map_err(|e| ctx.err(join(path, "utcOffset"), e)).ok();
    Some(ScheduledStart { start_day: day?, start_minute: minute?, utc_offset_minutes: offset? })
}

pub(crate) fn parse_weekday(text: &str) -> Result<Weekday, String> {
    const DAYS: [(&str, Weekday); 7] = [
        ("Monday", Weekday::Mon),
        ("Tuesday", Weekday::Tue),
        ("Wednesday", Weekday::Wed),
        ("Thursday", Weekday::Thu),
        ("Friday", Weekday::Fri),
        ("Saturday", Weekday::Sat),
        ("Sunday", Weekday::Sun),
    ];
    DAYS.iter().find(|(name, _)| *name == text).map(|(_, d)| *d).ok_or_else(|| {
        format!("{} is not a day: Monday, Tuesday, Wednesday, Thursday, Friday, Saturday or Sunday", echo(text))
    })
}

/// `^([01][0-9]|2[0-3]):[0-5][0-9]$` → minutes after midnight.
pub(crate) fn parse_hh_mm(text: &str) -> Result<u32, String> {
    let bad = || format!("{} is not a time HH:mm between 00:00 and 23:59", echo(text));
    let b = text.as_bytes();
    if b.len() != 5 || b[2] != b':' || !b.iter().enumerate().all(|(i, c)| i == 2 || c.is_ascii_digit()) {
        return Err(bad());
    }
    let hours = u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0');
    let minutes = u32::from(b[3] - b'0') * 10 + u32::from(b[4] - b'0');
    if hours > 23 || minutes > 59 {
        return Err(bad());
    }
    Ok(hours * 60 + minutes)
}

/// `^[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00)$` → minutes east of UTC.
pub(crate) fn parse_utc_offset(text: &str) -> Result<i32, String> {
    let bad = || format!("{} is not a UTC offset like \"+05:30\" or \"-08:00\" between -14:00 and +14:00", echo(text));
    let sign = match text.as_bytes().first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return Err(bad()),
    };
    let minutes = parse_hh_mm(&text[1..]).map_err(|_| bad())? as i32;
    if minutes > 14 * 60 {
        return Err(bad());
    }
    Ok(sign * minutes)
}

/// The strategy a run uses: inline, named, or none (one by one).
pub(crate) fn resolve_strategy(
    ctx: &mut Ctx,
    inline: Option<(&StrategyDto, String)>,
    id: Option<&str>,
    id_path: &str,
    strategies: &BTreeMap<String, Strategy>,
    dto: &ScenarioDto,
) -> Result<(Option<Strategy>, Option<String>, String), ()> {
    match (inline, id) {
        // A run's GET carries both: the strategy it named and the snapshot taken of it at creation,
        // which is what the service runs (SEMANTICS §1.2).
        (Some((strategy, path)), Some(id)) => {
            let name = strategy_name_of(id);
            let named = dto.update_strategies.get(name);
            if named.is_some_and(|n| !same_strategy(n, strategy)) {
                ctx.warnings.push(Problem::new(
                    path.clone(),
                    format!(
                        "the run's strategy snapshot differs from strategy {} it names in updateStrategyId; the run uses the snapshot, as the service does (remove one of them to say which you mean)",
                        echo(name)
                    ),
                ));
            }
            build_strategy(ctx, strategy, &path).map(|s| (Some(s), None, path)).ok_or(())
        }
        (Some((strategy, path)), None) => build_strategy(ctx, strategy, &path).map(|s| (Some(s), None, path)).ok_or(()),
        (None, Some(id)) => {
            let name = strategy_name_of(id);
            match strategies.get(name) {
                Some(s) => Ok((Some(s.clone()), Some(name.to_string()), join("/updateStrategies", name))),
                None if dto.update_strategies.contains_key(name) => Err(()),
                None => {
                    let known: Vec<&str> = dto.update_strategies.keys().map(|k| k.as_str()).collect();
                    ctx.err(
                        id_path,
                        format!(
                            "no strategy {} in updateStrategies (known: {})",
                            echo(name),
                            if known.is_empty() { "none".to_string() } else { quoted(&known) }
                        ),
                    );
                    Err(())
                }
            }
        }
        (None, None) => Ok((None, None, String::new())),
    }
}

/// The strategy name of an `updateStrategyId`: a name, or an ARM id ending in `/updateStrategies/NAME`
/// (ARM ids compare case-insensitively).
pub fn strategy_name_of(id: &str) -> &str {
    let id = id.trim_end_matches('/');
    let lower = id.to_ascii_lowercase();
    match lower.rfind("/updatestrategies/") {
        Some(at) => &id[at + "/updatestrategies/".len()..],
        None => id,
    }
}

/// Two strategies alike as the API writes them (limits `3` and `"3"` are the same).
fn same_strategy(a: &StrategyDto, b: &StrategyDto) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

/// Maps plan problems (membership, resolved limits) to JSON Pointers under the strategy.
pub(crate) fn report_plan_problems(
    ctx: &mut Ctx,
    problems: Vec<crate::orchestrator::PlanProblem>,
    strategy_path: &str,
    strategy: &Strategy,
    run_name: &str,
) {
    for p in problems {
        let mut path = strategy_path.to_string();
        if let Some(s) = p.stage {
            path = join(&join(&path, "stages"), s);
            if let Some(g) = p.group.filter(|_| !strategy.stages[s].groups.is_empty()) {
                path = join(&join(&path, "groups"), g);
            }
        }
        let field = if p.field == "memberSelector" {
            join(&join(&path, "memberSelector"), "byLabel")
        } else {
            join(&path, p.field)
        };
        ctx.err(field, format!("{} (in run {})", p.message, echo(run_name)));
    }
}
