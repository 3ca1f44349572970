//! Azure's shapes in and out: `fleetsim import` on the fixtures of `tests/fixtures/azure/` (az,
//! ARM and Resource Graph forms), objects pasted verbatim into scenarios, the run status in the
//! UpdateRun GET shape read back by import, and export → import.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{binary, root};

fn fleetsim(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = std::process::Command::new(binary()).args(args).current_dir(cwd).output().expect("fleetsim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/azure")
}

fn files(form: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(fixtures().join(form))
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

fn import(args: &[&str], dir: &Path) -> (Value, String) {
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = fleetsim(&all, dir);
    assert_eq!(code, 0, "{stderr}");
    (serde_json::from_str(&stdout).unwrap(), stderr)
}

#[test]
fn import_gives_the_same_scenario_from_az_arm_and_resource_graph() {
    let dir = tempfile::tempdir().unwrap();
    let az = files("az");
    let arm = files("arm");
    let graph = files("graph");
    let (from_az, summary) = import(&az.iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
    let (from_arm, _) = import(&arm.iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
    let (from_graph, _) = import(&graph.iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
    assert_eq!(from_az, from_arm);
    assert_eq!(from_az, from_graph);
    assert!(summary.starts_with("imported 4 members (3 joined to their clusters), 2 maintenance windows, 1 strategies, 1 runs, 1 auto-upgrade profiles;"), "{summary}");
    assert!(summary.contains("\"default\" is the legacy maintenance configuration"), "{summary}");
    assert!(summary.contains("member member-4: its cluster"), "{summary}");
    assert!(summary.contains("left out cluster aks-neu-9"), "{summary}");
    let s = &from_az;
    assert_eq!(s["name"], "fleet1");
    assert_eq!(s["start"], "2026-03-02T08:00:00Z");
    let m2 = &s["members"][1];
    assert_eq!(m2["region"], "westeurope");
    assert_eq!(
        m2["nodePools"][1],
        json!({"name": "win", "osSku": "Windows2022", "nodeCount": 2, "nodeImageVersion": "AKSWindows-2022-containerd-20348.3100.260201", "maxSurge": "1"})
    );
    assert_eq!(m2["aksManagedNodeOSUpgradeSchedule"]["schedule"]["daily"]["intervalDays"], 3);
    assert_eq!(s["members"][2]["stopped"], true);
    assert_eq!(s["members"][0]["labels"], json!({"env": "prod", "ring": "canary"}));
    assert_eq!(s["updateRuns"][0]["updateStrategyId"], "strategy1");
    assert_eq!(s["autoUpgradeProfiles"][0]["updateStrategyId"], "strategy1");
    // The imported scenario runs.
    let path = dir.path().join("fleet.json");
    std::fs::write(&path, serde_json::to_string(s).unwrap()).unwrap();
    let (code, _, stderr) = fleetsim(&["validate", path.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn import_writes_out_and_a_bare_stages_file_is_a_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.json");
    let stages = fixtures().join("stages.json");
    let (code, stdout, stderr) = fleetsim(
        &["import", stages.to_str().unwrap(), "--start", "2026-03-02T08:00:00Z", "--out", out.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    let s: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(s["updateStrategies"]["stages"]["stages"][1]["maxConcurrency"], "2");
}

#[test]
fn import_reports_bad_input_at_its_file_and_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    let mut run: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("arm/update-run.json")).unwrap()).unwrap();
    run["properties"]["strategy"]["stages"][0]["maxConcurency"] = json!("3");
    std::fs::write(&bad, run.to_string()).unwrap();
    let (code, _, stderr) = fleetsim(&["import", bad.to_str().unwrap(), "--start", "2026-03-02T08:00:00Z"], dir.path());
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim(),
        format!(
            "{}: /properties/strategy/stages/0/maxConcurency: unknown field \"maxConcurency\"; did you mean \"maxConcurrency\"?",
            bad.display()
        )
    );
    let (code, _, stderr) = fleetsim(&["import", fixtures().join("az/members.json").to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "{stderr}");
}

/// A scenario around the fixtures' objects pasted as they are, at `members`, `updateStrategies`,
/// `updateRuns` and `autoUpgradeProfiles`.
fn pasted(form: &str) -> Value {
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(fixtures().join(form).join(name)).unwrap()).unwrap()
    };
    let list = |v: Value| -> Vec<Value> {
        match v {
            Value::Array(a) => a,
            Value::Object(mut o) => match o.remove("value").or_else(|| o.remove("data")) {
                Some(Value::Array(a)) => a,
                _ => vec![Value::Object(o)],
            },
            other => vec![other],
        }
    };
    let all: Vec<Value> = if form == "graph" {
        list(read("fleet.json"))
    } else {
        [
            "members.json",
            "clusters.json",
            "maintenance-configurations.json",
            "update-strategy.json",
            "update-run.json",
            "auto-upgrade-profile.json",
        ]
        .iter()
        .flat_map(|f| list(read(f)))
        .collect()
    };
    let of = |t: &str| {
        all.iter().filter(|o| o["type"].as_str().unwrap().eq_ignore_ascii_case(t)).cloned().collect::<Vec<_>>()
    };
    let clusters = of("Microsoft.ContainerService/managedClusters");
    let configs = of("Microsoft.ContainerService/managedClusters/maintenanceConfigurations");
    let members: Vec<Value> = of("Microsoft.ContainerService/fleets/members")
        .into_iter()
        .take(2)
        .enumerate()
        .map(|(i, mut m)| {
            let cluster = &clusters[i];
            let props = cluster.get("properties").unwrap_or(cluster);
            let pool = props["agentPoolProfiles"][0].clone();
            // Fleet's own labels are kept: they agree with clusterResourceId.
            let o = m.as_object_mut().unwrap();
            o.insert("region".into(), cluster["location"].clone());
            o.insert("kubernetesVersion".into(), props["currentKubernetesVersion"].clone());
            o.insert("nodePools".into(), json!([pool]));
            if i == 0 {
                o.insert("aksManagedAutoUpgradeSchedule".into(), configs[0].clone());
            } else {
                o.insert("aksManagedNodeOSUpgradeSchedule".into(), configs[1].clone());
            }
            m
        })
        .collect();
    json!({
        "name": "pasted", "start": "2026-03-02T08:00:00Z",
        "members": members,
        "updateStrategies": { "strategy1": of("Microsoft.ContainerService/fleets/updateStrategies")[0] },
        "updateRuns": [ of("Microsoft.ContainerService/fleets/updateRuns")[0] ],
        "autoUpgradeProfiles": [ of("Microsoft.ContainerService/fleets/autoUpgradeProfiles")[0] ],
    })
}

#[test]
fn every_object_kind_is_accepted_verbatim_in_the_three_forms() {
    for form in ["az", "arm", "graph"] {
        let doc = pasted(form);
        let s = fleetsim::scenario::from_value(&doc, None)
            .unwrap_or_else(|p| panic!("{form}: {}", p.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n")));
        assert_eq!(s.fleet.len(), 2, "{form}");
        assert_eq!(s.fleet[0].region, "eastus");
        assert!(s.fleet[0].auto_upgrade_window.is_some() && s.fleet[1].node_os_window.is_some(), "{form}");
        assert_eq!(s.fleet[1].node_pools[0].node_count, 3);
        assert_eq!(s.runs.len(), 1);
        assert_eq!(s.profiles.len(), 1);
        assert!(fleetsim::scenario::warnings::warnings(&s).iter().all(|w| !w.message.contains("snapshot")), "{form}");
    }
}

#[test]
fn pasted_objects_report_problems_where_the_file_has_them() {
    let mut doc = pasted("arm");
    doc["updateStrategies"]["strategy1"]["properties"]["strategy"]["stages"][0]["name"] = json!("Canary");
    doc["members"][0]["aksManagedAutoUpgradeSchedule"]["properties"]["maintenanceWindow"]["durationHours"] = json!(2);
    doc["members"][1]["aksManagedNodeOSUpgradeSchedule"]["name"] = json!("default");
    let problems: Vec<String> =
        fleetsim::scenario::from_value(&doc, None).unwrap_err().iter().map(|p| p.to_string()).collect();
    let text = problems.join("\n");
    assert!(
        text.contains(
            "/members/1/aksManagedNodeOSUpgradeSchedule/name: \"default\" is the legacy maintenance configuration"
        ),
        "{text}"
    );
    // Once the legacy name is fixed, value problems point into `properties`.
    doc["members"][1]["aksManagedNodeOSUpgradeSchedule"]["name"] = json!("aksManagedNodeOSUpgradeSchedule");
    let problems: Vec<String> =
        fleetsim::scenario::from_value(&doc, None).unwrap_err().iter().map(|p| p.to_string()).collect();
    let text = problems.join("\n");
    assert!(text.contains("/updateStrategies/strategy1/properties/strategy/stages/0/name:"), "{text}");
    assert!(
        text.contains("/members/0/aksManagedAutoUpgradeSchedule/properties/maintenanceWindow/durationHours:"),
        "{text}"
    );
}

#[test]
fn a_run_snapshot_that_differs_from_its_named_strategy_is_used_with_a_warning() {
    let mut doc = pasted("az");
    doc["updateStrategies"]["strategy1"]["strategy"]["stages"][1]["maxAllowedFailures"] = json!("0");
    let s = fleetsim::scenario::from_value(&doc, None).unwrap();
    assert_eq!(s.runs[0].strategy_name, None);
    let warnings = fleetsim::scenario::warnings::warnings(&s);
    assert!(
        warnings.iter().any(|w| w.path == "/updateRuns/0/strategy" && w.message.contains("uses the snapshot")),
        "{warnings:?}"
    );
}

/// Writes `scenario` as `fleet.json` in `dir` and runs it into `dir/report`, which it returns.
fn run_report(scenario: &Value, dir: &Path) -> PathBuf {
    let path = dir.join("fleet.json");
    std::fs::write(&path, serde_json::to_string(scenario).unwrap()).unwrap();
    let out = dir.join("report");
    let (code, _, stderr) = fleetsim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"], dir);
    assert_eq!(code, 0, "{stderr}");
    out
}

#[test]
fn the_status_is_the_update_run_resource_and_imports_back() {
    let dir = tempfile::tempdir().unwrap();
    let (scenario, _) = import(&files("az").iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
    let out = run_report(&scenario, dir.path());
    let status_file = out.join("status/run1.json");
    let status: Value = serde_json::from_slice(&std::fs::read(&status_file).unwrap()).unwrap();
    assert_eq!(status["type"], "Microsoft.ContainerService/fleets/updateRuns");
    assert_eq!(status["properties"]["provisioningState"], "Succeeded");
    let member = &status["properties"]["status"]["stages"][0]["groups"][0]["members"][0];
    assert_eq!(member["clusterResourceId"], scenario["members"][0]["clusterResourceId"]);
    let op = member["operationId"].as_str().unwrap();
    assert_eq!(op.len(), 36);
    assert_eq!(op.matches('-').count(), 4);
    // An unreached gate has no gateId at all; lists of no gates are left out.
    let prod = &status["properties"]["status"]["stages"][1];
    assert!(prod.get("beforeGates").is_none() && prod.get("afterGates").is_none(), "{prod}");
    // Import reads the status file back: the run and its strategy.
    let (again, _) = import(&[status_file.to_str().unwrap(), "--start", "2026-03-02T08:00:00Z"], dir.path());
    assert_eq!(again["updateRuns"][0]["strategy"], scenario["updateStrategies"]["strategy1"]);
    assert_eq!(again["updateRuns"][0]["managedClusterUpdate"], scenario["updateRuns"][0]["managedClusterUpdate"]);
}

#[test]
fn export_then_import_gives_the_same_strategy() {
    let dir = tempfile::tempdir().unwrap();
    for scenario in ["scenarios/quickstart.json", "scenarios/example.json"] {
        let path = root().join(scenario);
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let (name, _) = doc["updateStrategies"].as_object().unwrap().iter().next().unwrap();
        let out = dir.path().join(format!("{name}.json"));
        let (code, _, stderr) = fleetsim(
            &["export", path.to_str().unwrap(), "--strategy", name, "--out", out.to_str().unwrap()],
            dir.path(),
        );
        assert_eq!(code, 0, "{stderr}");
        let exported: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(exported.as_object().unwrap().len(), 1, "only stages");
        let (imported, _) = import(&[out.to_str().unwrap(), "--start", "2026-03-02T08:00:00Z"], dir.path());
        let back = &imported["updateStrategies"][name.as_str()];
        assert_eq!(back, &exported, "{scenario}");
        // The same strategy as the scenario's, limits written as the API's strings.
        let (strategy, _) = fleetsim::scenario::parse_dto(&text).unwrap();
        assert_eq!(back, &serde_json::to_value(&strategy.update_strategies[name.as_str()]).unwrap());
        let (code, _, stderr) = fleetsim(&["export", path.to_str().unwrap(), "--strategy", "nope"], dir.path());
        assert_eq!(code, 2);
        assert!(stderr.contains("--strategy: no strategy \"nope\""), "{stderr}");
    }
}

/// A 20-member fleet with integer limits (they come out as the API's strings) and a small tune over
/// the broad stage's limits.
const TUNE_BASE: &str = r#"{
  "name": "export-base", "seed": 7, "start": "2026-03-02T08:00:00Z", "settings": { "horizon": "10d" },
  "memberGenerators": [{ "count": 20, "namePattern": "m-{index}", "regions": { "eastus": 1 },
    "labels": { "ring": { "canary": 1, "broad": 3 } }, "kubernetesVersions": { "1.33.1": 1 } }],
  "models": { "failure": { "patchProbability": 0.01 },
    "badReleases": [{ "version": "1.33.2", "failureFraction": 0.3 }] },
  "updateStrategies": { "prod": { "stages": [
    { "name": "canary", "memberSelector": { "byLabel": "ring=canary" }, "maxConcurrency": 2, "maxAllowedFailures": 0 },
    { "name": "broad", "memberSelector": { "byLabel": "ring=broad" }, "maxConcurrency": 2, "maxAllowedFailures": 1 }
  ] } },
  "updateRuns": [{ "name": "patch", "updateStrategyId": "prod",
    "managedClusterUpdate": { "upgrade": { "type": "Full", "kubernetesVersion": "1.33.2" } } }]
}"#;

const TUNE: &str = r#"{
  "name": "export-tune", "scenario": "base.json", "run": "patch",
  "worlds": [ { "name": "good", "overrides": [ { "pointer": "/models/badReleases", "value": [] },
                { "pointer": "/models/failure", "value": { "patchProbability": 0 } } ] },
              { "name": "bad" } ],
  "space": [ { "name": "broadConcurrency", "pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "values": [2, 5, 10] },
             { "name": "broadFailures", "pointer": "/updateStrategies/prod/stages/1/maxAllowedFailures", "values": [0, 2] } ],
  "objective": { "metric": "hoursTo100PctUpgraded", "statistic": "p90", "world": "good" },
  "constraints": [ { "metric": "blastRadius", "statistic": "mean", "world": "bad", "max": 20 },
                   { "metric": "hoursTo100PctUpgraded", "statistic": "p90", "world": "good", "max": MAX } ],
  "budget": { "replications": 200, "initial": 4, "maxPerCandidate": 16 }
}"#;

#[test]
fn a_tune_recommendation_exports_and_imports_back_as_the_same_strategy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.json"), TUNE_BASE).unwrap();
    std::fs::write(dir.path().join("tune.json"), TUNE.replace("MAX", "1000")).unwrap();
    let (code, _, stderr) = fleetsim(&["tune", "tune.json", "--out", "tuned", "-q"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    let recommendation: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("tuned/recommendation.json")).unwrap()).unwrap();
    for (args, key) in [
        (vec!["export", "tuned", "--out", "recommended.json"], "recommended"),
        (vec!["export", "tuned/recommendation.json", "--out", "recommended.json"], "recommended"),
        (vec!["export", "tuned", "--strategy", "baseline", "--out", "baseline.json"], "baseline"),
    ] {
        let (code, _, stderr) = fleetsim(&args, dir.path());
        assert_eq!(code, 0, "{args:?}: {stderr}");
        let file = dir.path().join(format!("{key}.json"));
        let exported: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(exported, recommendation[key]["strategy"], "{args:?}: the strategy the tune reports");
        let limits: Vec<&Value> = exported["stages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| [&s["maxConcurrency"], &s["maxAllowedFailures"]])
            .collect();
        assert!(limits.len() == 4 && limits.iter().all(|l| l.is_string()), "limits as strings: {exported}");
        let (imported, _) = import(&[file.to_str().unwrap(), "--start", "2026-03-02T08:00:00Z"], dir.path());
        assert_eq!(imported["updateStrategies"][key], exported, "{args:?}: export → import");
    }
    // The baseline is the base scenario's strategy, its integer limits as the API's strings.
    let (code, base_export, stderr) = fleetsim(&["export", "base.json", "--strategy", "prod"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("baseline.json")).unwrap(), base_export);

    // What cannot be exported is said with the file and the pointer.
    let (code, _, stderr) = fleetsim(&["export", "tuned", "--strategy", "nope"], dir.path());
    assert_eq!(
        (code, stderr.trim()),
        (
            2,
            "tuned/recommendation.json: --strategy \"nope\": a tune's recommendation has the strategies \"recommended\" (the default) and \"baseline\""
        )
    );
    let mut broken = recommendation.clone();
    broken["recommended"]["strategy"]["stages"][1]["maxConcurrency"] = json!("0");
    std::fs::write(dir.path().join("broken.json"), broken.to_string()).unwrap();
    let (code, _, stderr) = fleetsim(&["export", "broken.json"], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.starts_with("broken.json: /recommended/strategy/stages/1/maxConcurrency: "), "{stderr}");
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let (code, _, stderr) = fleetsim(&["export", "empty"], dir.path());
    assert_eq!(
        (code, stderr.trim()),
        (
            2,
            "empty: a folder without recommendation.json: give a scenario file, or a `fleetsim tune` folder or its recommendation.json"
        )
    );
    let (code, _, stderr) = fleetsim(&["export", "base.json"], dir.path());
    assert_eq!(
        (code, stderr.trim()),
        (2, "base.json: --strategy NAME is required for a scenario (its strategies: \"prod\")")
    );

    // A tune that recommends nothing (no candidate upgrades the fleet in a minute) says so.
    std::fs::write(dir.path().join("tune.json"), TUNE.replace("MAX", "0.01")).unwrap();
    let (code, _, stderr) = fleetsim(&["tune", "tune.json", "--out", "none", "-q"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    let none: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("none/recommendation.json")).unwrap()).unwrap();
    assert!(none["recommended"].is_null(), "{none}");
    let (code, _, stderr) = fleetsim(&["export", "none"], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.starts_with("none/recommendation.json: /recommended: the tune recommends no strategy"), "{stderr}");
}

/// Every property of `ManagedClusterAgentPoolProfile` in the AKS REST API (stable 2026-01-01,
/// `managedClusters.json`: `name` and `ManagedClusterAgentPoolProfileProperties`).
const AGENT_POOL_PROPERTIES: [&str; 55] = [
    "name",
    "eTag",
    "count",
    "vmSize",
    "osDiskSizeGB",
    "osDiskType",
    "kubeletDiskType",
    "workloadRuntime",
    "messageOfTheDay",
    "vnetSubnetID",
    "podSubnetID",
    "podIPAllocationMode",
    "maxPods",
    "osType",
    "osSKU",
    "maxCount",
    "minCount",
    "enableAutoScaling",
    "scaleDownMode",
    "type",
    "mode",
    "orchestratorVersion",
    "currentOrchestratorVersion",
    "nodeImageVersion",
    "upgradeSettings",
    "provisioningState",
    "powerState",
    "availabilityZones",
    "enableNodePublicIP",
    "nodePublicIPPrefixID",
    "scaleSetPriority",
    "scaleSetEvictionPolicy",
    "spotMaxPrice",
    "tags",
    "nodeLabels",
    "nodeTaints",
    "proximityPlacementGroupID",
    "kubeletConfig",
    "linuxOSConfig",
    "enableEncryptionAtHost",
    "enableUltraSSD",
    "enableFIPS",
    "gpuInstanceProfile",
    "creationData",
    "capacityReservationGroupID",
    "hostGroupID",
    "networkProfile",
    "windowsProfile",
    "securityProfile",
    "gpuProfile",
    "gatewayProfile",
    "virtualMachinesProfile",
    "virtualMachineNodesStatus",
    "status",
    "localDNSProfile",
];

#[test]
fn every_documented_agent_pool_field_is_accepted_in_arm_and_az_spelling() {
    let read = |f: &str| -> Value { serde_json::from_slice(&std::fs::read(fixtures().join(f)).unwrap()).unwrap() };
    let (arm, az) = (read("pools/arm.json"), read("pools/az.json"));
    let arm_pool = arm["properties"]["agentPoolProfiles"][0].clone();
    let keys: Vec<&str> = arm_pool.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), AGENT_POOL_PROPERTIES.len());
    assert!(AGENT_POOL_PROPERTIES.iter().all(|p| keys.contains(p)), "the fixture carries every documented field");
    // The agent pool resource (`az aks nodepool show`, its ARM GET): the same fields under `properties`.
    let mut properties = arm_pool.clone();
    properties.as_object_mut().unwrap().remove("name");
    let resource = json!({
        "id": format!("{}/agentPools/userpool", arm["id"].as_str().unwrap()),
        "name": "userpool",
        "type": "Microsoft.ContainerService/managedClusters/agentPools",
        "properties": properties,
    });
    for (form, pool) in [("arm", arm_pool), ("az", az["agentPoolProfiles"][0].clone()), ("resource", resource)] {
        let scenario = json!({
            "name": "pools", "start": "2026-03-02T08:00:00Z",
            "members": [{ "name": "member-9", "region": "eastus", "kubernetesVersion": "1.32.6", "nodePools": [pool] }],
        });
        let built = fleetsim::scenario::from_value(&scenario, None).unwrap_or_else(|p| panic!("{form}: {p:?}"));
        let pool = &built.fleet[0].node_pools[0];
        // The fields the simulation reads; every other one is accepted and ignored.
        assert_eq!(pool.name, "userpool", "{form}");
        assert_eq!(pool.node_count, 3, "{form}");
        assert_eq!(pool.os_sku, fleetsim::fleet::OsSku::AzureLinux3, "{form}");
        assert_eq!(pool.max_surge, Some(fleetsim::fleet::Surge::Percent(33)), "{form}");
        assert_eq!(pool.node_image_version.as_ref().unwrap().to_string(), "AKSAzureLinux-V3gen2-202602.13.0");
    }
    // Accepting every documented field is not accepting anything: a misspelt one is still an error.
    let scenario = json!({
        "name": "pools", "start": "2026-03-02T08:00:00Z",
        "members": [{ "name": "member-9", "region": "eastus", "kubernetesVersion": "1.32.6",
                      "nodePools": [{ "name": "userpool", "vmSizes": "Standard_D4s_v5" }] }],
    });
    let Err(problems) = fleetsim::scenario::from_value(&scenario, None) else { panic!("an unknown field is accepted") };
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, "/members/0/nodePools/0/vmSizes");
}

/// The keys of a JSON object, nested objects' keys under `outer.inner`.
fn shape(value: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(map) = value {
        for (k, v) in map {
            let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            out.push(key.clone());
            shape(v, &key, out);
        }
    }
    out.sort();
}

#[test]
fn pending_members_are_shown_as_the_service_shows_them() {
    // The fixture's member-4, Pending on regional availability, as the update-run monitoring docs and
    // the UpdateRuns_Get examples show such a member.
    let fixture: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("arm/update-run.json")).unwrap()).unwrap();
    let service = fixture["properties"]["status"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["groups"].as_array().unwrap())
        .flat_map(|g| g["members"].as_array().unwrap())
        .find(|m| m["status"]["state"] == "Pending")
        .unwrap()
        .clone();
    // Two members the horizon cuts while Pending: one whose release has not reached its region,
    // one whose maintenance window is closed.
    let scenario = json!({
        "name": "pending", "start": "2026-03-02T08:00:00Z", "settings": { "horizon": "4h" },
        "members": [
            { "name": "east1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4" },
            { "name": "west1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4" },
            { "name": "east2", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4",
              "aksManagedAutoUpgradeSchedule": { "schedule": { "daily": { "intervalDays": 1 } }, "durationHours": 4,
                                                 "startTime": "22:00", "utcOffset": "+00:00" } }
        ],
        "releases": { "kubernetes": [ { "version": "1.32.4" },
            { "version": "1.33.2", "available": { "default": "+0s", "regions": { "westeurope": "+10d" } } } ] },
        "updateStrategies": { "s": { "stages": [ { "name": "s1", "groups": [ { "name": "ga", "maxConcurrency": "3" } ] } ] } },
        "updateRuns": [ { "name": "r", "updateStrategyId": "s",
            "managedClusterUpdate": { "upgrade": { "type": "Full", "kubernetesVersion": "1.33.2" } } } ]
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pending.json"), scenario.to_string()).unwrap();
    let (code, _, stderr) = fleetsim(&["run", "pending.json", "--out", "report", "-q"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    let status: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report/status/r.json")).unwrap()).unwrap();
    let members = status["properties"]["status"]["stages"][0]["groups"][0]["members"].as_array().unwrap();
    let member = |name: &str| members.iter().find(|m| m["name"] == name).unwrap();

    let west = member("west1");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    shape(west, "", &mut ours);
    shape(&service, "", &mut theirs);
    assert_eq!(ours, theirs, "the fields of a Pending member: {west}");
    assert_eq!(west["status"]["startTime"], "2026-03-02T08:00:00Z", "when it became Pending");
    assert_eq!(west["status"]["error"]["code"], "KubernetesVersionNotAvailable");
    let error = west["status"]["error"]["message"].as_str().unwrap();
    assert_eq!(error, "target Kubernetes version \"1.33.2\" is not available in region \"westeurope\"");
    assert_eq!(
        west["message"].as_str().unwrap(),
        format!("set member: west1 to Pending due to failed validation err: {error}")
    );
    assert!(
        service["message"].as_str().unwrap().starts_with("set member: member-4 to Pending due to failed validation"),
        "the fixture's wording"
    );

    // A closed window: Pending since the run reached it, the next opening in the message, no error
    // (the service documents no code for it).
    let window = member("east2");
    assert_eq!(window["status"], json!({ "state": "Pending", "startTime": "2026-03-02T08:00:00Z" }));
    assert_eq!(
        window["message"],
        "maintenance window aksManagedAutoUpgradeSchedule is closed; it next opens at 2026-03-02T22:00:00Z"
    );
    assert!(window.get("operationId").is_none() && west.get("operationId").is_none(), "never started");
    // The member that ran has its attempt's times and an operation id, and no message.
    let ran = member("east1");
    assert_eq!(ran["status"]["state"], "Completed");
    assert!(ran["operationId"].is_string() && ran.get("message").is_none(), "{ran}");
}

#[test]
fn every_run_s_status_gives_each_member_its_own_cluster_id() {
    // With several runs the ids are made once and shared by the runs' files (ReportContext::cluster_ids).
    let dir = tempfile::tempdir().unwrap();
    let (mut scenario, _) = import(&files("az").iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
    let mut second = scenario["updateRuns"][0].clone();
    second["name"] = json!("run2");
    scenario["updateRuns"].as_array_mut().unwrap().push(second);
    let ids: std::collections::BTreeMap<String, Value> = scenario["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].as_str().unwrap().to_string(), m["clusterResourceId"].clone()))
        .collect();
    assert!(ids.len() > 1 && ids.values().all(Value::is_string), "{ids:?}");
    let out = run_report(&scenario, dir.path());
    for run in ["run1", "run2"] {
        let status: Value =
            serde_json::from_slice(&std::fs::read(out.join(format!("status/{run}.json"))).unwrap()).unwrap();
        let mut seen = 0;
        for stage in status["properties"]["status"]["stages"].as_array().unwrap() {
            for group in stage["groups"].as_array().unwrap() {
                for member in group["members"].as_array().unwrap() {
                    let name = member["name"].as_str().unwrap();
                    assert_eq!(member["clusterResourceId"], ids[name], "{run}: {name}");
                    seen += 1;
                }
            }
        }
        assert!(seen > 1, "{run}: {seen} members");
    }
}
