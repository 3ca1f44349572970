//! `fleetsim import`: Azure objects as az, ARM and Resource Graph print them → a scenario's DTOs.
//!
//! A front end, not a validator: each object is read into the scenario's own DTO types (through the
//! same shape check a scenario file gets, so a wrong field is reported at its place in the input
//! file), the DTOs are assembled into a [`ScenarioDto`], and that goes through `scenario::build`
//! like any scenario. Problems of the assembled scenario are mapped back to the input object they
//! came from.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::scenario::dto::{MemberDto, NodePoolDto, ScenarioDto, StrategyDto, StringOrInt, UpdateRunDto};
use crate::scenario::envelope::{self, AUTO_UPGRADE_SCHEDULE, Moves, NODE_OS_UPGRADE_SCHEDULE};
use crate::scenario::profiles::AutoUpgradeProfileDto;
use crate::scenario::shape::Shape;
use crate::scenario::window_dto::MaintenanceWindowDto;
use crate::scenario::{self, Problem, problem::join};

/// One input file: how to name it in messages, and its JSON.
pub struct Input {
    pub file: String,
    pub value: Value,
}

/// What `import` may not guess.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The scenario's name (default: the fleet's name in the resources' ids, else `imported`).
    pub name: Option<String>,
    /// The scenario's start (default: the earliest start of an imported run, else the latest
    /// `systemData.lastModifiedAt`).
    pub start: Option<String>,
}

/// The scenario and what was imported and left out, one line each.
pub struct Imported {
    pub scenario: ScenarioDto,
    pub summary: Vec<String>,
}

/// Kubernetes version of a member whose cluster is missing, when no cluster gives one.
const DEFAULT_KUBERNETES_VERSION: &str = "1.33.0";
/// Region of a member whose cluster is missing and which has no `fleet.azure.com/location` label.
const DEFAULT_REGION: &str = "eastus";
/// Fields of a GET resource that are read-only or describe the resource, not the object.
const READ_ONLY: [&str; 9] =
    ["id", "type", "eTag", "etag", "systemData", "resourceGroup", "provisioningState", "status", "subscriptionId"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Member,
    Cluster,
    Window,
    Strategy,
    Run,
    Profile,
}

/// An object found in an input, flattened (`properties` merged in), with where it came from.
struct Object {
    file: String,
    pointer: String,
    map: Map<String, Value>,
    moves: Moves,
}

impl Object {
    fn str(&self, key: &str) -> Option<&str> {
        self.map.get(key).and_then(Value::as_str)
    }

    fn at(&self, key: &str) -> String {
        format!(
            "{}: {}",
            self.file,
            pointer_or_root(&format!("{}{}", self.pointer, self.moves.original(&join("", key))))
        )
    }
}

fn pointer_or_root(p: &str) -> &str {
    if p.is_empty() { "/" } else { p }
}

/// Builds a scenario from Azure objects. Errors: one line per problem, `FILE: /pointer: message`.
pub fn import(inputs: &[Input], options: &ImportOptions) -> Result<Imported, Vec<String>> {
    let mut errors = Vec::new();
    let mut summary = Vec::new();
    let mut objects: BTreeMap<Kind, Vec<Object>> = BTreeMap::new();
    let mut read_only = 0usize;
    let mut times = Vec::new();
    let mut fleet_names = Vec::new();
    for input in inputs {
        for (pointer, value) in items(&input.value) {
            let Value::Object(map) = value else {
                summary.push(format!("left out {}: {}: not an object", input.file, pointer_or_root(&pointer)));
                continue;
            };
            let mut map = map.clone();
            let mut moves = Moves::default();
            let mut problems = Vec::new();
            envelope::merge_properties(&mut map, "", &mut moves, &mut problems);
            errors.extend(problems.iter().map(|p| format!("{}: {pointer}{p}", input.file)));
            let Some(kind) = kind_of(&map) else {
                let what = map
                    .get("type")
                    .and_then(Value::as_str)
                    .map_or("an object of no kind fleetsim imports".into(), |t| {
                        format!("type {}: not a kind fleetsim imports", scenario::problem::echo(t))
                    });
                summary.push(format!("left out {}: {}: {what}", input.file, pointer_or_root(&pointer)));
                continue;
            };
            read_only += READ_ONLY.iter().filter(|k| map.contains_key(**k)).count();
            if let Some(t) = map.get("systemData").and_then(|s| s.get("lastModifiedAt")).and_then(Value::as_str) {
                times.push(t.to_string());
            }
            if let Some(name) = map.get("id").and_then(Value::as_str).and_then(fleet_of) {
                fleet_names.push(name);
            }
            objects.entry(kind).or_default().push(Object { file: input.file.clone(), pointer, map, moves });
        }
    }
    let take = |objects: &mut BTreeMap<Kind, Vec<Object>>, k| objects.remove(&k).unwrap_or_default();
    let clusters = take(&mut objects, Kind::Cluster);
    let windows = take(&mut objects, Kind::Window);
    let members = take(&mut objects, Kind::Member);
    let strategies = take(&mut objects, Kind::Strategy);
    let runs = take(&mut objects, Kind::Run);
    let profiles = take(&mut objects, Kind::Profile);

    let mut dto = ScenarioDto::default();
    let mut origins: Vec<(String, String)> = Vec::new();

    // Strategies first: runs and profiles refer to them by name.
    for (i, object) in strategies.iter().enumerate() {
        let mut map = object.map.clone();
        let mut moves = object.moves.clone();
        let mut problems = Vec::new();
        envelope::unwrap_strategy(&mut map, "", None, &mut moves, &mut problems);
        let name = object.str("name").map(str::to_string).unwrap_or_else(|| stem(&object.file, i));
        let at = Object { map, moves, file: object.file.clone(), pointer: object.pointer.clone() };
        match read::<StrategyDto>(&at, problems) {
            Ok(strategy) => {
                origins
                    .push((join("/updateStrategies", &name), format!("{}: {}", at.file, pointer_or_root(&at.pointer))));
                dto.update_strategies.insert(name, clean_strategy(strategy));
            }
            Err(e) => errors.extend(e),
        }
    }
    let strategy_count = dto.update_strategies.len();

    // Clusters by ARM id (ids compare case-insensitively), windows by the cluster their id names.
    let mut cluster_by_id: BTreeMap<String, &Object> = BTreeMap::new();
    for c in &clusters {
        if let Some(id) = c.str("id") {
            cluster_by_id.insert(id.to_ascii_lowercase(), c);
        }
    }
    let mut windows_by_cluster: BTreeMap<String, Vec<&Object>> = BTreeMap::new();
    for w in &windows {
        match w.str("id").and_then(|id| {
            id.to_ascii_lowercase().split_once("/maintenanceconfigurations/").map(|(c, _)| c.to_string())
        }) {
            Some(cluster) => windows_by_cluster.entry(cluster).or_default().push(w),
            None => summary
                .push(format!("left out {}: a maintenance configuration without the id of its cluster", w.at("id"))),
        }
    }
    let mut versions: BTreeMap<String, usize> = BTreeMap::new();
    for c in &clusters {
        if let Some(v) = cluster_version(c) {
            *versions.entry(v.to_string()).or_default() += 1;
        }
    }
    let common_version =
        versions.iter().max_by_key(|(v, n)| (**n, std::cmp::Reverse((*v).clone()))).map(|(v, _)| v.clone());

    let (mut joined, mut window_count) = (0, 0);
    let mut used_clusters = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let path = join("/members", i);
        origins.push((path.clone(), format!("{}: {}", m.file, pointer_or_root(&m.pointer))));
        let Some(name) = m.str("name") else {
            errors.push(format!("{}: a fleet member needs its name", m.at("name")));
            continue;
        };
        let labels: BTreeMap<String, String> = m
            .map
            .get("labels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| !k.starts_with("fleet.azure.com/"))
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect();
        let cluster_id = m.str("clusterResourceId").map(str::to_string);
        let mut member = MemberDto {
            name: name.to_string(),
            group: m.str("group").map(str::to_string),
            labels,
            cluster_resource_id: cluster_id.clone(),
            ..MemberDto::default()
        };
        let cluster = cluster_id.as_ref().and_then(|id| cluster_by_id.get(&id.to_ascii_lowercase()).copied());
        match cluster {
            Some(c) => {
                joined += 1;
                used_clusters.push(c.str("id").unwrap_or_default().to_ascii_lowercase());
                fill_from_cluster(&mut member, c, &mut summary);
                for &w in
                    windows_by_cluster.get(&c.str("id").unwrap_or_default().to_ascii_lowercase()).into_iter().flatten()
                {
                    match window(w) {
                        Ok((field, window)) => {
                            window_count += 1;
                            if field == AUTO_UPGRADE_SCHEDULE {
                                member.aks_managed_auto_upgrade_schedule = Some(Box::new(window));
                            } else {
                                member.aks_managed_node_os_upgrade_schedule = Some(Box::new(window));
                            }
                        }
                        Err(Ok(reason)) => summary.push(format!("left out {}: {reason}", w.at("name"))),
                        Err(Err(e)) => errors.extend(e),
                    }
                }
            }
            None => {
                let location = m
                    .map
                    .get("labels")
                    .and_then(|l| l.get("fleet.azure.com/location"))
                    .and_then(Value::as_str)
                    .map(normalize_region);
                let (region, region_why) = match location {
                    Some(r) => (r, "its fleet.azure.com/location label".to_string()),
                    None => (DEFAULT_REGION.to_string(), "a default".to_string()),
                };
                let (version, version_why) = match &common_version {
                    Some(v) => (v.clone(), "the most common version of the imported clusters".to_string()),
                    None => (DEFAULT_KUBERNETES_VERSION.to_string(), "a default".to_string()),
                };
                summary.push(format!(
                    "member {name}: its cluster {} is not among the inputs; imported with region {region} ({region_why}), kubernetesVersion {version} ({version_why}), one default node pool and no maintenance windows",
                    cluster_id.as_deref().unwrap_or("(no clusterResourceId)")
                ));
                member.region = region;
                member.kubernetes_version = version;
            }
        }
        dto.members.push(member);
    }
    for c in &clusters {
        if !used_clusters.contains(&c.str("id").unwrap_or_default().to_ascii_lowercase()) {
            summary.push(format!(
                "left out cluster {}: no fleet member among the inputs names it",
                c.str("name").unwrap_or("?")
            ));
        }
    }
    for (cluster, list) in &windows_by_cluster {
        if !used_clusters.contains(cluster) {
            for w in list {
                summary.push(format!("left out {}: its cluster is not a member among the inputs", w.at("name")));
            }
        }
    }

    let mut run_starts = Vec::new();
    for r in &runs {
        match read::<UpdateRunDto>(r, Vec::new()) {
            Ok(mut run) => {
                let status_start = r
                    .map
                    .get("status")
                    .and_then(|s| s.get("status"))
                    .and_then(|s| s.get("startTime"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let named =
                    run.update_strategy_id.as_deref().map(|id| scenario::build::strategy_name_of(id).to_string());
                match (run.strategy.take(), named) {
                    (Some(snapshot), Some(name))
                        if dto.update_strategies.get(&name).is_some_and(|s| same(s, &snapshot)) =>
                    {
                        run.update_strategy_id = Some(name);
                    }
                    (Some(snapshot), named) => {
                        if let Some(name) = named {
                            summary.push(format!(
                                "run {}: uses its strategy snapshot (what the service runs), not strategy {name}",
                                run.name
                            ));
                        }
                        run.update_strategy_id = None;
                        run.strategy = Some(clean_strategy(snapshot));
                    }
                    (None, Some(name)) if dto.update_strategies.contains_key(&name) => {
                        run.update_strategy_id = Some(name)
                    }
                    (None, Some(name)) => {
                        summary.push(format!("left out run {}: its strategy {name} is not among the inputs", run.name));
                        continue;
                    }
                    (None, None) => {}
                }
                match &status_start {
                    Some(t) => run_starts.push(t.clone()),
                    None => summary
                        .push(format!("run {}: not started in the inputs; it starts at the scenario start", run.name)),
                }
                run.start = status_start;
                origins.push((
                    join("/updateRuns", dto.update_runs.len()),
                    format!("{}: {}", r.file, pointer_or_root(&r.pointer)),
                ));
                dto.update_runs.push(UpdateRunDto { status: None, ..run });
            }
            Err(e) => errors.extend(e),
        }
    }
    for p in &profiles {
        match read::<AutoUpgradeProfileDto>(p, Vec::new()) {
            Ok(mut profile) => {
                if let Some(id) = profile.update_strategy_id.take() {
                    let name = scenario::build::strategy_name_of(&id).to_string();
                    if !dto.update_strategies.contains_key(&name) {
                        summary.push(format!(
                            "left out auto-upgrade profile {}: its strategy {name} is not among the inputs",
                            profile.name
                        ));
                        continue;
                    }
                    profile.update_strategy_id = Some(name);
                }
                origins.push((
                    join("/autoUpgradeProfiles", dto.auto_upgrade_profiles.len()),
                    format!("{}: {}", p.file, pointer_or_root(&p.pointer)),
                ));
                dto.auto_upgrade_profiles.push(profile);
            }
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    dto.name = match &options.name {
        Some(n) => n.clone(),
        None => fleet_names.iter().min().cloned().unwrap_or_else(|| "imported".to_string()),
    };
    dto.start = match (&options.start, run_starts.iter().min(), times.iter().max()) {
        (Some(s), _, _) => s.clone(),
        (None, Some(t), _) => {
            summary.push(format!("start: {t}, the earliest start of an imported run (--start sets it)"));
            t.clone()
        }
        (None, None, Some(t)) => {
            summary.push(format!("start: {t}, the latest change to an imported resource (--start sets it)"));
            t.clone()
        }
        (None, None, None) => {
            return Err(vec!["import: no time in the inputs to start the scenario at: give --start".to_string()]);
        }
    };
    let mut head = vec![format!(
        "imported {} members ({joined} joined to their clusters), {window_count} maintenance windows, {strategy_count} strategies, {} runs, {} auto-upgrade profiles; {read_only} read-only fields ignored",
        dto.members.len(),
        dto.update_runs.len(),
        dto.auto_upgrade_profiles.len()
    )];
    head.append(&mut summary);

    // The scenario goes through the same validation as any scenario file.
    if let Err(problems) = scenario::from_owned(serde_json::to_value(&dto).expect("DTOs serialize"), None) {
        return Err(problems.iter().map(|p| locate(&origins, p)).collect());
    }
    Ok(Imported { scenario: dto, summary: head })
}

/// A problem of the assembled scenario, named after the input object it came from.
fn locate(origins: &[(String, String)], p: &Problem) -> String {
    let found = origins
        .iter()
        .filter(|(prefix, _)| p.path == *prefix || p.path.starts_with(&format!("{prefix}/")))
        .max_by_key(|(prefix, _)| prefix.len());
    match found {
        Some((_, from)) => format!("{from}: imported as {}: {}", pointer_or_root(&p.path), p.message),
        None => format!("imported scenario: {p}"),
    }
}

/// The objects of an input: an array, an ARM list (`value`), a Resource Graph result (`data`), or one object.
fn items(value: &Value) -> Vec<(String, &Value)> {
    match value {
        Value::Array(a) => a.iter().enumerate().map(|(i, v)| (join("", i), v)).collect(),
        Value::Object(m) => {
            for key in ["value", "data"] {
                if let Some(Value::Array(a)) = m.get(key)
                    && !m.contains_key("stages")
                {
                    return a.iter().enumerate().map(|(i, v)| (join(&join("", key), i), v)).collect();
                }
            }
            vec![(String::new(), value)]
        }
        _ => vec![(String::new(), value)],
    }
}

/// The kind of an object: by its `type` (case-insensitive), else by its shape.
fn kind_of(map: &Map<String, Value>) -> Option<Kind> {
    if let Some(t) = map.get("type").and_then(Value::as_str).filter(|t| t.contains('/')) {
        return match t.to_ascii_lowercase().as_str() {
            "microsoft.containerservice/fleets/members" => Some(Kind::Member),
            "microsoft.containerservice/managedclusters" => Some(Kind::Cluster),
            "microsoft.containerservice/managedclusters/maintenanceconfigurations" => Some(Kind::Window),
            "microsoft.containerservice/fleets/updatestrategies" => Some(Kind::Strategy),
            "microsoft.containerservice/fleets/updateruns" => Some(Kind::Run),
            "microsoft.containerservice/fleets/autoupgradeprofiles" => Some(Kind::Profile),
            _ => None,
        };
    }
    let has = |k: &str| map.contains_key(k);
    if has("managedClusterUpdate") {
        Some(Kind::Run)
    } else if has("channel") {
        Some(Kind::Profile)
    } else if has("agentPoolProfiles") {
        Some(Kind::Cluster)
    } else if has("maintenanceWindow") || has("timeInWeek") {
        Some(Kind::Window)
    } else if has("clusterResourceId") {
        Some(Kind::Member)
    } else if has("stages") || has("strategy") {
        Some(Kind::Strategy)
    } else {
        None
    }
}

/// The shape of the DTO `T`, compiled once: an import reads many objects of a few kinds, and
/// compiling a schema costs more than checking an object.
fn shape_of<T: schemars::JsonSchema + 'static>() -> Arc<Shape> {
    static SHAPES: LazyLock<Mutex<FxHashMap<TypeId, Arc<Shape>>>> = LazyLock::new(Mutex::default);
    let mut shapes = SHAPES.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(shapes.entry(TypeId::of::<T>()).or_insert_with(|| Arc::new(Shape::of::<T>())))
}

/// Reads an object into a DTO through the scenario's shape check; problems point into its file.
fn read<T: DeserializeOwned + schemars::JsonSchema + 'static>(
    object: &Object,
    mut problems: Vec<Problem>,
) -> Result<T, Vec<String>> {
    let value = Value::Object(object.map.clone());
    problems.extend(shape_of::<T>().check(&value));
    let line = |p: &Problem| {
        format!(
            "{}: {}: {}",
            object.file,
            pointer_or_root(&format!("{}{}", object.pointer, object.moves.original(&p.path))),
            p.message
        )
    };
    if !problems.is_empty() {
        return Err(problems.iter().map(line).collect());
    }
    serde_json::from_value(value).map_err(|_| vec![line(&Problem::new("", scenario::NOT_ACCEPTED))])
}

fn cluster_version(c: &Object) -> Option<&str> {
    c.str("currentKubernetesVersion").or_else(|| c.str("kubernetesVersion"))
}

fn fill_from_cluster(member: &mut MemberDto, c: &Object, summary: &mut Vec<String>) {
    member.region = c.str("location").map(normalize_region).unwrap_or_default();
    member.kubernetes_version = cluster_version(c).unwrap_or_default().to_string();
    member.stopped = c.map.get("powerState").and_then(|p| p.get("code")).and_then(Value::as_str) == Some("Stopped");
    let pools = c.map.get("agentPoolProfiles").and_then(Value::as_array);
    member.node_pools = pools.map(|pools| {
        pools
            .iter()
            .filter_map(Value::as_object)
            .map(|p| {
                let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
                let os_sku = text("osSKU").or_else(|| text("osSku")).or_else(|| {
                    // AKS's default SKU of a Windows pool without one.
                    (text("osType").as_deref() == Some("Windows")).then(|| "Windows2022".to_string())
                });
                let name = text("name").unwrap_or_default();
                if let Some(v) = text("orchestratorVersion")
                    && v != member.kubernetes_version
                {
                    summary.push(format!(
                        "member {}: node pool {name} is on Kubernetes {v}, the control plane on {}; the simulation gives a member one version (the control plane's)",
                        member.name, member.kubernetes_version
                    ));
                }
                NodePoolDto {
                    name,
                    os_sku,
                    node_count: p.get("count").and_then(Value::as_i64),
                    node_image_version: text("nodeImageVersion"),
                    max_surge: p
                        .get("upgradeSettings")
                        .and_then(|u| u.get("maxSurge"))
                        .and_then(Value::as_str)
                        .map(|s| StringOrInt::String(s.to_string())),
                    ..NodePoolDto::default()
                }
            })
            .collect()
    });
}

/// A maintenance configuration: the field it fills and its window, or why it is left out
/// (`Err(Ok)`), or problems (`Err(Err)`).
fn window(w: &Object) -> Result<(&'static str, MaintenanceWindowDto), Result<String, Vec<String>>> {
    let name = w.str("name").unwrap_or_default();
    let field = if name.eq_ignore_ascii_case(AUTO_UPGRADE_SCHEDULE) {
        AUTO_UPGRADE_SCHEDULE
    } else if name.eq_ignore_ascii_case(NODE_OS_UPGRADE_SCHEDULE) {
        NODE_OS_UPGRADE_SCHEDULE
    } else {
        return Err(Ok(envelope::legacy_window_message(name)));
    };
    let Some(Value::Object(inner)) = w.map.get("maintenanceWindow") else {
        return Err(Ok("a maintenance configuration without a maintenanceWindow".to_string()));
    };
    let at = Object {
        file: w.file.clone(),
        pointer: format!("{}{}", w.pointer, w.moves.original("/maintenanceWindow")),
        map: inner.clone(),
        moves: Moves::default(),
    };
    read::<MaintenanceWindowDto>(&at, Vec::new()).map(|dto| (field, dto)).map_err(Err)
}

/// Azure regions as ARM writes them (`East US` → `eastus`).
fn normalize_region(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase()
}

/// The fleet a resource id is under.
fn fleet_of(id: &str) -> Option<String> {
    let lower = id.to_ascii_lowercase();
    let at = lower.find("/providers/microsoft.containerservice/fleets/")?
        + "/providers/microsoft.containerservice/fleets/".len();
    Some(id[at..].split('/').next()?.to_ascii_lowercase())
}

/// A bare strategy's name: its file's stem.
fn stem(file: &str, i: usize) -> String {
    let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("strategy");
    if i == 0 { stem.to_string() } else { format!("{stem}-{i}") }
}

/// A strategy without the read-only fields of its resource (they do not serialize anyway).
fn clean_strategy(s: StrategyDto) -> StrategyDto {
    StrategyDto { stages: s.stages, ..StrategyDto::default() }
}

fn same(a: &StrategyDto, b: &StrategyDto) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}
