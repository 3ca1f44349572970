//! Azure objects pasted verbatim: the resource envelopes of ARM GET responses and the az CLI's
//! flattened form, taken off before the shape check.
//!
//! Wherever a scenario takes an API object (a strategy, an update run, an auto-upgrade profile, a
//! fleet member, a node pool, a maintenance window) it also takes the whole GET resource. The read-only
//! fields of the az CLI's flattened form (`id`, `type`, `eTag`, `systemData`, …) are declared in the
//! DTOs, so the schema `fleetsim schema` prints accepts them and they are ignored. What cannot be a
//! DTO field is undone here, on the JSON, before the shape check: the ARM form's `properties`
//! wrapper is merged into its object, a strategy resource's `strategy` and a maintenance
//! configuration's `maintenanceWindow` are lifted into their place. Every key moved is recorded, so
//! a problem found later points at the key where the file has it ([`Moves::original`]).

use serde_json::{Map, Value};

use super::problem::{Problem, echo, join};

/// Where keys moved: `(pointer after the move, pointer in the file)`, in the order of the moves.
#[derive(Clone, Debug, Default)]
pub struct Moves(Vec<(String, String)>);

impl Moves {
    /// The pointer in the file of a pointer into the unwrapped document.
    pub fn original(&self, pointer: &str) -> String {
        let mut out = pointer.to_string();
        for (moved, from) in self.0.iter().rev() {
            if out == *moved || out.strip_prefix(moved.as_str()).is_some_and(|rest| rest.starts_with('/')) {
                out = format!("{from}{}", &out[moved.len()..]);
            }
        }
        out
    }

    /// Problems with the pointers of the file.
    pub fn locate(&self, problems: Vec<Problem>) -> Vec<Problem> {
        if self.0.is_empty() {
            return problems;
        }
        problems.into_iter().map(|p| Problem { path: self.original(&p.path), ..p }).collect()
    }
}

/// Takes the envelopes off every API object of a scenario document, in place.
pub fn unwrap_scenario(doc: &mut Value) -> (Moves, Vec<Problem>) {
    let mut moves = Moves::default();
    let mut problems = Vec::new();
    let Some(root) = doc.as_object_mut() else { return (moves, problems) };
    if let Some(Value::Object(strategies)) = root.get_mut("updateStrategies") {
        for (name, strategy) in strategies.iter_mut() {
            let path = join("/updateStrategies", name);
            if let Value::Object(map) = strategy {
                unwrap_strategy(map, &path, Some(name), &mut moves, &mut problems);
            }
        }
    }
    for (list, what) in [("updateRuns", Kind::Run), ("autoUpgradeProfiles", Kind::Profile), ("members", Kind::Member)] {
        let Some(Value::Array(items)) = root.get_mut(list) else { continue };
        for (i, item) in items.iter_mut().enumerate() {
            let Value::Object(map) = item else { continue };
            // An item's pointer is made only where an envelope is taken off or a maintenance window
            // looked into: a fleet imported from Azure has thousands of members, most given bare.
            let path = || join(&format!("/{list}"), i);
            merge_properties_at(map, path, &mut moves, &mut problems);
            if what == Kind::Member {
                unwrap_member(map, path, &mut moves, &mut problems);
            }
        }
    }
    (moves, problems)
}

#[derive(PartialEq)]
enum Kind {
    Run,
    Profile,
    Member,
}

/// A strategy: the bare `UpdateRunStrategy`, the az form (`strategy` beside the read-only fields) or
/// the ARM form (`properties.strategy`). `name`, when the resource has one, must be the one the
/// scenario gives it.
pub fn unwrap_strategy(
    map: &mut Map<String, Value>,
    path: &str,
    expected_name: Option<&str>,
    moves: &mut Moves,
    problems: &mut Vec<Problem>,
) {
    merge_properties(map, path, moves, problems);
    if let Some(Value::Object(_)) = map.get("strategy")
        && !map.contains_key("stages")
        && let Some(Value::Object(inner)) = map.remove("strategy")
    {
        lift(map, inner, path, &join(path, "strategy"), moves, problems);
    }
    if let (Some(expected), Some(Value::String(name))) = (expected_name, map.get("name"))
        && !name.eq_ignore_ascii_case(expected)
    {
        problems.push(Problem::new(
            join(path, "name"),
            format!(
                "the resource is named {} but given as strategy {}: rename one so they agree",
                echo(name),
                echo(expected)
            ),
        ));
    }
}

/// A member's pools and maintenance windows; `path` makes the member's pointer, for a pool with an
/// envelope and for a maintenance window.
fn unwrap_member(
    map: &mut Map<String, Value>,
    path: impl Fn() -> String,
    moves: &mut Moves,
    problems: &mut Vec<Problem>,
) {
    if let Some(Value::Array(pools)) = map.get_mut("nodePools") {
        for (j, pool) in pools.iter_mut().enumerate() {
            if let Value::Object(pool) = pool {
                // An agent pool resource's own `type` (`Microsoft.ContainerService/managedClusters/
                // agentPools`) is read-only; `properties.type` is the pool's (`VirtualMachineScaleSets`).
                if pool.get("properties").is_some_and(Value::is_object)
                    && pool.get("type").and_then(Value::as_str).is_some_and(|t| t.contains('/'))
                {
                    pool.remove("type");
                }
                merge_properties_at(pool, || join(&join(&path(), "nodePools"), j), moves, problems);
            }
        }
    }
    for field in [AUTO_UPGRADE_SCHEDULE, NODE_OS_UPGRADE_SCHEDULE] {
        if let Some(Value::Object(window)) = map.get_mut(field) {
            unwrap_window(window, &join(&path(), field), field, moves, problems);
        }
    }
}

pub const AUTO_UPGRADE_SCHEDULE: &str = "aksManagedAutoUpgradeSchedule";
pub const NODE_OS_UPGRADE_SCHEDULE: &str = "aksManagedNodeOSUpgradeSchedule";

/// The message for the legacy `default` configuration, which Fleet update runs do not consult.
pub fn legacy_window_message(name: &str) -> String {
    format!(
        "{} is the legacy maintenance configuration (timeInWeek, notAllowedTime); Fleet update runs honour only aksManagedAutoUpgradeSchedule (Full and ControlPlaneOnly runs) and aksManagedNodeOSUpgradeSchedule (NodeImageOnly runs): convert it with `az aks maintenanceconfiguration add --name aksManagedAutoUpgradeSchedule --schedule-type Weekly --day-of-week … --start-time HH:mm --duration 8 --utc-offset +00:00` and give that configuration's maintenanceWindow",
        echo(name)
    )
}

/// A maintenance window: the `maintenanceWindow` object, or the whole maintenance configuration
/// (ARM or az form) it belongs to, whose `name` must be the field it is given as.
pub fn unwrap_window(
    map: &mut Map<String, Value>,
    path: &str,
    field: &str,
    moves: &mut Moves,
    problems: &mut Vec<Problem>,
) {
    merge_properties(map, path, moves, problems);
    let legacy = ["timeInWeek", "notAllowedTime"].into_iter().find(|k| map.get(*k).is_some_and(|v| !v.is_null()));
    let name = map.get("name").and_then(Value::as_str).map(str::to_string);
    if let Some(key) = legacy {
        problems.push(Problem::new(join(path, key), legacy_window_message(name.as_deref().unwrap_or("default"))));
        return;
    }
    if let Some(name) = &name
        && !name.eq_ignore_ascii_case(field)
    {
        let message = if name.eq_ignore_ascii_case("default") {
            legacy_window_message(name)
        } else {
            format!("maintenance configuration {} given as {field}: give it as its own field", echo(name))
        };
        problems.push(Problem::new(join(path, "name"), message));
    }
    if let Some(Value::Object(_)) = map.get("maintenanceWindow")
        && let Some(Value::Object(inner)) = map.remove("maintenanceWindow")
    {
        lift(map, inner, path, &join(path, "maintenanceWindow"), moves, problems);
    }
}

/// The ARM form: the object's `properties` merged into it.
pub fn merge_properties(map: &mut Map<String, Value>, path: &str, moves: &mut Moves, problems: &mut Vec<Problem>) {
    merge_properties_at(map, || path.to_string(), moves, problems);
}

/// [`merge_properties`] with the object's pointer made by `path`, only if there is an envelope.
fn merge_properties_at(
    map: &mut Map<String, Value>,
    path: impl FnOnce() -> String,
    moves: &mut Moves,
    problems: &mut Vec<Problem>,
) {
    if let Some(Value::Object(_)) = map.get("properties")
        && let Some(Value::Object(inner)) = map.remove("properties")
    {
        let path = path();
        lift(map, inner, &path, &join(&path, "properties"), moves, problems);
    }
}

fn lift(
    map: &mut Map<String, Value>,
    inner: Map<String, Value>,
    path: &str,
    from: &str,
    moves: &mut Moves,
    problems: &mut Vec<Problem>,
) {
    for (key, value) in inner {
        let original = join(from, &key);
        if map.contains_key(&key) {
            problems.push(Problem::new(
                original,
                format!("{} is given twice, here and at {}: keep one", echo(&key), join(path, &key)),
            ));
            continue;
        }
        moves.0.push((join(path, &key), original));
        map.insert(key, value);
    }
}
