//! Reading a run's status as `az fleet updaterun show` prints it (the UpdateRun GET resource,
//! `properties` flattened by the az CLI or nested as ARM and `status/<run>.json` have it): every
//! problem with the JSON Pointer of the value it is about.

use serde_json::{Map, Value};

use crate::engine::Time;
use crate::orchestrator::UpdateState;
use crate::scenario::Problem;
use crate::scenario::problem::{echo, join};

/// `status` of a run, stage, group, member, gate or wait.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusTimes {
    pub state: UpdateState,
    pub start: Option<Time>,
    pub completed: Option<Time>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GateStatus {
    pub pointer: String,
    pub display_name: Option<String>,
    pub status: StatusTimes,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WaitStatus {
    pub pointer: String,
    pub status: StatusTimes,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MemberStatus {
    pub pointer: String,
    pub name: String,
    pub status: StatusTimes,
    pub message: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupStatus {
    pub pointer: String,
    pub name: String,
    pub status: StatusTimes,
    pub failure_count: u32,
    pub max_concurrency: Option<u32>,
    pub max_allowed_failures: Option<u32>,
    pub members: Vec<MemberStatus>,
    /// `None`: the list is absent (the service omits empty lists).
    pub before_gates: Option<Vec<GateStatus>>,
    pub after_gates: Option<Vec<GateStatus>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StageStatus {
    pub pointer: String,
    pub name: String,
    pub status: StatusTimes,
    pub failure_count: u32,
    pub max_concurrency: Option<u32>,
    pub max_allowed_failures: Option<u32>,
    pub groups: Vec<GroupStatus>,
    pub before_gates: Option<Vec<GateStatus>>,
    pub after_gates: Option<Vec<GateStatus>>,
    pub wait: Option<WaitStatus>,
}

/// A run's status as read from the file.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStatus {
    pub name: String,
    /// Pointer of the run's `name`.
    pub name_pointer: String,
    /// Pointer of the `UpdateRunStatus` object (`/properties/status` or `/status`).
    pub pointer: String,
    pub status: StatusTimes,
    pub failure_count: u32,
    pub stages: Vec<StageStatus>,
}

impl RunStatus {
    /// The latest instant the status names: the moment it was read, as far as it tells.
    pub fn latest_time(&self) -> Option<Time> {
        let mut all = vec![&self.status];
        for stage in &self.stages {
            all.push(&stage.status);
            all.extend(stage.before_gates.iter().flatten().map(|g| &g.status));
            all.extend(stage.after_gates.iter().flatten().map(|g| &g.status));
            all.extend(stage.wait.iter().map(|w| &w.status));
            for group in &stage.groups {
                all.push(&group.status);
                all.extend(group.before_gates.iter().flatten().map(|g| &g.status));
                all.extend(group.after_gates.iter().flatten().map(|g| &g.status));
                all.extend(group.members.iter().map(|m| &m.status));
            }
        }
        all.iter().flat_map(|s| [s.start, s.completed]).flatten().max()
    }
}

const UPDATE_RUN_TYPE: &str = "microsoft.containerservice/fleets/updateruns";

/// The one UpdateRun resource in `value` with its pointer: the value itself, or the only run of a
/// list (`az fleet updaterun list`, ARM's `{"value": [...]}`, a Resource Graph `{"data": [...]}`).
fn the_run(value: &Value) -> Result<(&Value, String), Problem> {
    let (items, at) = match value {
        Value::Array(items) => (items, String::new()),
        Value::Object(map) => match (map.get("data"), map.get("value")) {
            (Some(Value::Array(items)), _) => (items, "/data".to_string()),
            (None, Some(Value::Array(items))) => (items, "/value".to_string()),
            _ => return Ok((value, String::new())),
        },
        _ => return Ok((value, String::new())),
    };
    let runs: Vec<(usize, &Value)> = items
        .iter()
        .enumerate()
        .filter(|(_, v)| v.get("type").and_then(Value::as_str).is_some_and(|t| t.eq_ignore_ascii_case(UPDATE_RUN_TYPE)))
        .collect();
    match runs.as_slice() {
        [(i, run)] => Ok((run, join(&at, i))),
        [] => Err(Problem::new(at, "the list has no update run (type Microsoft.ContainerService/fleets/updateRuns)")),
        many => Err(Problem::new(
            at,
            format!("the list has {} update runs; give the one to forecast (`az fleet updaterun show`)", many.len()),
        )),
    }
}

/// Reads the UpdateRun resource in `value` (or the only one of a list).
pub fn read(value: &Value) -> Result<RunStatus, Vec<Problem>> {
    let mut r = Reader::default();
    let (value, base) = the_run(value).map_err(|p| vec![p])?;
    let Some(top) = r.object(value, &base) else { return Err(r.problems) };
    // ARM, Resource Graph and status/<run>.json nest the resource's properties; the az CLI
    // flattens them.
    let (body, prefix) = match top.get("properties") {
        Some(p) => match r.object(p, &join(&base, "properties")) {
            Some(body) => (body, join(&base, "properties")),
            None => return Err(r.problems),
        },
        None => (top, base.clone()),
    };
    let name = match top.get("name") {
        Some(Value::String(name)) => Some(name.clone()),
        Some(_) => {
            r.problem(&join(&base, "name"), "must be the run's name, a string");
            None
        }
        None => top
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| id.rsplit('/').next())
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .or_else(|| {
                r.problem(&base, "the run's \"name\" is missing (an `az fleet updaterun show` resource has it)");
                None
            }),
    };
    let pointer = format!("{prefix}/status");
    let Some(status) = body.get("status") else {
        r.problem(&prefix, "no \"status\": give the output of `az fleet updaterun show` (the run's GET resource)");
        return Err(r.problems);
    };
    let Some(status) = r.object(status, &pointer) else { return Err(r.problems) };
    let run_status = r.status(status.get("status"), &join(&pointer, "status"));
    let failure_count = r.count(status, &pointer, "failureCount").unwrap_or(0);
    let stages = r.list(status, &pointer, "stages", true).unwrap_or_default();
    let stages: Vec<StageStatus> = stages.into_iter().filter_map(|(p, v)| r.stage(v, &p)).collect();
    match (name, run_status) {
        (Some(name), Some(status)) if r.problems.is_empty() => {
            Ok(RunStatus { name, name_pointer: join(&base, "name"), pointer, status, failure_count, stages })
        }
        _ => Err(r.problems),
    }
}

#[derive(Default)]
struct Reader {
    problems: Vec<Problem>,
}

impl Reader {
    fn problem(&mut self, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem::new(pointer, message));
    }

    fn object<'v>(&mut self, value: &'v Value, pointer: &str) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(map) => Some(map),
            other => {
                self.problem(pointer, format!("must be an object, not {}", crate::text::json_kind(other)));
                None
            }
        }
    }

    /// The array `key` of `map` with each element's pointer; `required` says whether its absence is
    /// a problem (`None` then), else absence is `None` without one.
    fn list<'v>(
        &mut self,
        map: &'v Map<String, Value>,
        pointer: &str,
        key: &str,
        required: bool,
    ) -> Option<Vec<(String, &'v Value)>> {
        let at = join(pointer, key);
        match map.get(key) {
            Some(Value::Array(items)) => Some(items.iter().enumerate().map(|(i, v)| (join(&at, i), v)).collect()),
            Some(other) => {
                self.problem(&at, format!("must be an array, not {}", crate::text::json_kind(other)));
                None
            }
            None if required => {
                self.problem(pointer, format!("\"{key}\" is missing"));
                None
            }
            None => None,
        }
    }

    fn string(&mut self, map: &Map<String, Value>, pointer: &str, key: &str) -> Option<String> {
        match map.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.problem(&join(pointer, key), format!("must be a string, not {}", crate::text::json_kind(other)));
                None
            }
            None => {
                self.problem(pointer, format!("\"{key}\" is missing"));
                None
            }
        }
    }

    fn optional_string(&mut self, map: &Map<String, Value>, pointer: &str, key: &str) -> Option<String> {
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(_) => self.string(map, pointer, key),
        }
    }

    /// A whole number ≥ 0 (counts and resolved limits), absent → `None`.
    fn count(&mut self, map: &Map<String, Value>, pointer: &str, key: &str) -> Option<u32> {
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) => Some(n),
                None => {
                    self.problem(
                        &join(pointer, key),
                        format!("must be a whole number of at least 0, not {}", echo(&v.to_string())),
                    );
                    None
                }
            },
        }
    }

    fn time(&mut self, map: &Map<String, Value>, pointer: &str, key: &str) -> Option<Time> {
        let text = self.optional_string(map, pointer, key)?;
        match Time::parse_rfc3339(&text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.problem(&join(pointer, key), e);
                None
            }
        }
    }

    /// An `UpdateStatus` object (`state`, `startTime`, `completedTime`, `error`).
    fn status(&mut self, value: Option<&Value>, pointer: &str) -> Option<StatusTimes> {
        let Some(value) = value else {
            let parent = pointer.rsplit_once('/').map_or("", |(p, _)| p);
            self.problem(parent, "\"status\" is missing");
            return None;
        };
        let map = self.object(value, pointer)?;
        let state = self.string(map, pointer, "state").and_then(|s| match state_of(&s) {
            Some(state) => Some(state),
            None => {
                let names: Vec<&str> = UpdateState::ALL.iter().map(|s| s.api_name()).collect();
                self.problem(
                    &join(pointer, "state"),
                    format!("{} is not a state; states are {}", echo(&s), names.join(", ")),
                );
                None
            }
        });
        let start = self.time(map, pointer, "startTime");
        let completed = self.time(map, pointer, "completedTime");
        let (mut error_code, mut error_message) = (None, None);
        if let Some(error) = map.get("error").filter(|e| !e.is_null()) {
            let at = join(pointer, "error");
            if let Some(e) = self.object(error, &at) {
                error_code = self.optional_string(e, &at, "code");
                error_message = self.optional_string(e, &at, "message");
            }
        }
        Some(StatusTimes { state: state?, start, completed, error_code, error_message })
    }

    fn gates(&mut self, map: &Map<String, Value>, pointer: &str, key: &str) -> Option<Vec<GateStatus>> {
        let items = self.list(map, pointer, key, false)?;
        Some(
            items
                .into_iter()
                .filter_map(|(p, v)| {
                    let gate = self.object(v, &p)?;
                    let display_name = self.optional_string(gate, &p, "displayName");
                    let status = self.status(gate.get("status"), &join(&p, "status"))?;
                    Some(GateStatus { pointer: p, display_name, status })
                })
                .collect(),
        )
    }

    fn stage(&mut self, value: &Value, pointer: &str) -> Option<StageStatus> {
        let map = self.object(value, pointer)?;
        let name = self.string(map, pointer, "name");
        let status = self.status(map.get("status"), &join(pointer, "status"));
        let failure_count = self.count(map, pointer, "failureCount").unwrap_or(0);
        let max_concurrency = self.count(map, pointer, "maxConcurrency");
        let max_allowed_failures = self.count(map, pointer, "maxAllowedFailures");
        let groups = self.list(map, pointer, "groups", false).unwrap_or_default();
        let groups: Vec<GroupStatus> = groups.into_iter().filter_map(|(p, v)| self.group(v, &p)).collect();
        let before_gates = self.gates(map, pointer, "beforeGates");
        let after_gates = self.gates(map, pointer, "afterGates");
        let wait = match map.get("afterStageWaitStatus").filter(|w| !w.is_null()) {
            None => None,
            Some(w) => {
                let p = join(pointer, "afterStageWaitStatus");
                let wait = self.object(w, &p)?;
                let status = self.status(wait.get("status"), &join(&p, "status"))?;
                Some(WaitStatus { pointer: p, status })
            }
        };
        Some(StageStatus {
            pointer: pointer.to_string(),
            name: name?,
            status: status?,
            failure_count,
            max_concurrency,
            max_allowed_failures,
            groups,
            before_gates,
            after_gates,
            wait,
        })
    }

    fn group(&mut self, value: &Value, pointer: &str) -> Option<GroupStatus> {
        let map = self.object(value, pointer)?;
        let name = self.string(map, pointer, "name");
        let status = self.status(map.get("status"), &join(pointer, "status"));
        let failure_count = self.count(map, pointer, "failureCount").unwrap_or(0);
        let max_concurrency = self.count(map, pointer, "maxConcurrency");
        let max_allowed_failures = self.count(map, pointer, "maxAllowedFailures");
        let members = self.list(map, pointer, "members", false).unwrap_or_default();
        let members: Vec<MemberStatus> = members
            .into_iter()
            .filter_map(|(p, v)| {
                let m = self.object(v, &p)?;
                let name = self.string(m, &p, "name");
                let status = self.status(m.get("status"), &join(&p, "status"));
                let message = self.optional_string(m, &p, "message");
                Some(MemberStatus { pointer: p, name: name?, status: status?, message })
            })
            .collect();
        let before_gates = self.gates(map, pointer, "beforeGates");
        let after_gates = self.gates(map, pointer, "afterGates");
        Some(GroupStatus {
            pointer: pointer.to_string(),
            name: name?,
            status: status?,
            failure_count,
            max_concurrency,
            max_allowed_failures,
            members,
            before_gates,
            after_gates,
        })
    }
}

fn state_of(name: &str) -> Option<UpdateState> {
    UpdateState::ALL.into_iter().find(|s| s.api_name() == name)
}
