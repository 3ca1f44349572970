//! Invalid scenarios: each gives one clear line per problem naming the JSON path (and, through the
//! CLI, the file and exit code 2; see `cli.rs`).

use crate::support::problems;

/// A valid base scenario; each case patches it with a JSON merge patch.
const BASE: &str = r#"{
  "name": "base",
  "start": "2026-03-02T00:00:00Z",
  "members": [
    {"name": "m1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"},
    {"name": "m2", "region": "eastus", "group": "gb", "kubernetesVersion": "1.32.4"}
  ],
  "updateStrategies": {"s": {"stages": [{"name": "s1", "groups": [{"name": "ga"}, {"name": "gb"}]}]}},
  "updateRuns": [{"name": "r", "updateStrategyId": "s",
    "managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.33.2"}}}]
}"#;

fn patched(patch: &str) -> String {
    let mut base: serde_json::Value = serde_json::from_str(BASE).unwrap();
    merge_by_index(&mut base, serde_json::from_str(patch).unwrap());
    serde_json::to_string(&base).unwrap()
}

/// A merge patch that also merges arrays element by element, so a case can change one field of
/// `updateRuns[0]` without restating the run.
fn merge_by_index(target: &mut serde_json::Value, patch: serde_json::Value) {
    use serde_json::Value;
    match (target, patch) {
        (Value::Array(t), Value::Array(p)) if !p.is_empty() => {
            for (i, v) in p.into_iter().enumerate() {
                match t.get_mut(i) {
                    Some(slot) => merge_by_index(slot, v),
                    None => t.push(v),
                }
            }
        }
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(&k);
                } else {
                    merge_by_index(t.entry(k).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p,
    }
}

/// `(case, patch or whole text, expected "path: message" line fragments)`.
const CASES: &[(&str, &str, &[&str])] = &[
    ("malformed JSON", "{\"name\": \"x\",", &["malformed JSON"]),
    ("wrong type", r#"{"seed": "seven"}"#, &["/seed: must be a whole number ≥ 0, not the string \"seven\""]),
    (
        "unknown field",
        r#"{"settings": {"hoizon": "1d"}}"#,
        &["/settings/hoizon: unknown field \"hoizon\"; did you mean \"horizon\"?"],
    ),
    ("bad start time", r#"{"start": "yesterday"}"#, &["/start: \"yesterday\" is not an RFC 3339 time"]),
    (
        "invalid run name",
        r#"{"updateRuns": [{"name": "Run_1"}]}"#,
        &["/updateRuns/0/name: update run \"Run_1\" is not a valid name"],
    ),
    (
        "duplicate stage names",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "groups": [{"name": "ga"}]}, {"name": "s1", "groups": [{"name": "gb"}]}]}}}"#,
        &["/updateStrategies/s/stages/1/name: stage name \"s1\" is already used at /updateStrategies/s/stages/0"],
    ),
    (
        "group name used twice in a strategy",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "groups": [{"name": "ga"}]}, {"name": "s2", "groups": [{"name": "ga"}]}]}}}"#,
        &["/updateStrategies/s/stages/1/groups/0/name: group name \"ga\" is already used"],
    ),
    (
        "a group name used twice names where it was first used",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "groups": [{"name": "gx"}, {"name": "ga"}]}, {"name": "s2", "groups": [{"name": "ga"}]}]}}}"#,
        &[
            "/updateStrategies/s/stages/1/groups/0/name: group name \"ga\" is already used at /updateStrategies/s/stages/0/groups/1; a group appears at most once in a strategy",
        ],
    ),
    (
        "stage without groups or selector",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "groups": null}]}}}"#,
        &["/updateStrategies/s/stages/0/groups: a stage needs 1–50 groups"],
    ),
    (
        "no stages",
        r#"{"updateStrategies": {"s": {"stages": []}}}"#,
        &["/updateStrategies/s/stages: a strategy needs at least one stage"],
    ),
    (
        "maxConcurrency zero",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "maxConcurrency": "0", "groups": [{"name": "ga"}, {"name": "gb"}]}]}}}"#,
        &["/updateStrategies/s/stages/0/maxConcurrency: maxConcurrency \"0\" must be a whole number of at least 1"],
    ),
    (
        "maxAllowedFailures above 100%",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "groups": [{"name": "ga", "maxAllowedFailures": "101%"}, {"name": "gb"}]}]}}}"#,
        &["/updateStrategies/s/stages/0/groups/0/maxAllowedFailures: maxAllowedFailures \"101%\""],
    ),
    (
        "stage concurrency above the service limit",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "maxConcurrency": "51", "groups": [{"name": "ga"}, {"name": "gb"}]}]}}}"#,
        &["/updateStrategies/s/stages/0/maxConcurrency: stage \"s1\" maxConcurrency resolves to 51"],
    ),
    (
        "Full without kubernetesVersion",
        r#"{"updateRuns": [{"managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": null}}}]}"#,
        &["/updateRuns/0/managedClusterUpdate/upgrade/kubernetesVersion: Full upgrades require kubernetesVersion"],
    ),
    (
        "Custom without versions",
        r#"{"updateRuns": [{"managedClusterUpdate": {"nodeImageSelection": {"type": "Custom"}}}]}"#,
        &[
            "/updateRuns/0/managedClusterUpdate/nodeImageSelection/customNodeImageVersions: type Custom requires customNodeImageVersions",
        ],
    ),
    (
        "ScheduledStart gate after a stage",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "groups": [{"name": "ga"}, {"name": "gb"}], "afterGates": [{"type": "ScheduledStart", "scheduledStartConfiguration": {"startDay": "Friday", "startTime": "18:00", "utcOffset": "-05:00"}}]}]}}}"#,
        &["/updateStrategies/s/stages/0/afterGates/0/type: ScheduledStart gates are allowed only in beforeGates"],
    ),
    (
        "utcOffset out of range and bad time",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "groups": [{"name": "ga"}, {"name": "gb"}], "beforeGates": [{"type": "ScheduledStart", "scheduledStartConfiguration": {"startDay": "Fri", "startTime": "24:00", "utcOffset": "+14:30"}}]}]}}}"#,
        &[
            "/updateStrategies/s/stages/0/beforeGates/0/scheduledStartConfiguration/startDay: \"Fri\" is not a day",
            "/updateStrategies/s/stages/0/beforeGates/0/scheduledStartConfiguration/startTime: \"24:00\" is not a time",
            "/updateStrategies/s/stages/0/beforeGates/0/scheduledStartConfiguration/utcOffset: \"+14:30\" is not a UTC offset",
        ],
    ),
    (
        "invalid label selector",
        r#"{"updateStrategies": {"s": {"stages": [{"name": "s1", "memberSelector": {"byLabel": "env in (a b)"}}]}}}"#,
        &["/updateStrategies/s/stages/0/memberSelector/byLabel: invalid label selector \"env in (a b)\""],
    ),
    (
        "unknown strategy",
        r#"{"updateRuns": [{"updateStrategyId": "/subscriptions/x/resourceGroups/y/providers/Microsoft.ContainerService/fleets/f/updateStrategies/prod"}]}"#,
        &["/updateRuns/0/updateStrategyId: no strategy \"prod\" in updateStrategies"],
    ),
    (
        "skip target that does not exist",
        r#"{"updateRuns": [{"actions": [{"at": "+1h", "action": "skip", "targets": [{"type": "Group", "name": "gz"}]}]}]}"#,
        &["/updateRuns/0/actions/0/targets/0/name: this run has no group \"gz\""],
    ),
    (
        "approval of a gate that does not exist",
        r#"{"updateRuns": [{"actions": [{"at": "+1h", "action": "approve", "gate": {"displayName": "nope"}}]}]}"#,
        &["/updateRuns/0/actions/0/gate: no gate of this run matches \"nope\""],
    ),
    (
        "unknown override member",
        r#"{"models": {"overrides": [{"member": "m9", "outcome": "Failed"}]}}"#,
        &["/models/overrides/0/member: no member \"m9\" in the fleet"],
    ),
    (
        "duplicate member",
        r#"{"members": [{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.32.4"}, {"name": "m1", "region": "eastus", "kubernetesVersion": "1.32.4"}]}"#,
        &["/members/1: member \"m1\" is defined twice (also at /members/0)"],
    ),
    (
        "bad kubernetes version and label",
        r#"{"members": [{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.32", "labels": {"env": "a b"}}]}"#,
        &["/members/0/kubernetesVersion: \"1.32\" is not a Kubernetes version", "/members/0/labels/env:"],
    ),
    (
        "impossible probability",
        r#"{"models": {"failure": {"probability": 1.5}}}"#,
        &["/models/failure/probability: 1.5 is not a probability between 0 and 1"],
    ),
    (
        "zero poll interval",
        r#"{"settings": {"windowPollInterval": "0s"}}"#,
        &["/settings/windowPollInterval: must be longer than 0s"],
    ),
    (
        "a generator's label key that is not a label key",
        r#"{"memberGenerators": [{"count": 3, "namePattern": "g-{index}", "regions": {"westeurope": 1}, "kubernetesVersions": {"1.32.4": 1}, "labels": {"Bad Key!": "x", "ring": "r1"}}]}"#,
        &[
            "/memberGenerators/0/labels/Bad Key!: generated member 1 (\"g-1\", /labels/Bad Key!): the name \"Bad Key!\" of label key \"Bad Key!\" must consist of letters",
        ],
    ),
    (
        "maintenance window too short",
        r#"{"members": [{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.32.4", "aksManagedAutoUpgradeSchedule": {"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Sunday"}}, "durationHours": 2, "startTime": "01:00"}}]}"#,
        &["/members/0/aksManagedAutoUpgradeSchedule/durationHours:"],
    ),
];

#[test]
fn every_invalid_case_reports_its_path_and_message() {
    assert!(CASES.len() >= 15);
    for (case, patch, expected) in CASES {
        let text = if case.starts_with("malformed") { patch.to_string() } else { patched(patch) };
        let found = match fleetsim::scenario::parse_str(&text, None) {
            Ok(_) => panic!("case {case:?}: expected the scenario to be invalid"),
            Err(found) => found,
        };
        let lines: Vec<String> = found.iter().map(|p| p.to_string()).collect();
        for fragment in *expected {
            assert!(
                lines.iter().any(|l| l.contains(fragment)),
                "case {case:?}: expected a line containing {fragment:?}, got {lines:#?}"
            );
        }
        assert!(lines.iter().all(|l| !l.contains('\n')), "case {case:?}: one line per problem: {lines:#?}");
    }
}

#[test]
fn only_the_same_name_is_a_duplicate_not_the_same_first_16_bytes() {
    // The fleet is sorted and checked for duplicates by the first 16 bytes of each name, and by the
    // whole name only where those are equal: "cluster-production-a" and "-b" share them.
    let member = |name: &str| {
        format!(r#"{{"name": "{name}", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4"}}"#)
    };
    let names = ["cluster-production-a", "cluster-production-b", "cluster-production-a", "cluster-production-ab"];
    let members: Vec<String> = names.iter().map(|n| member(n)).collect();
    let text = patched(&format!(r#"{{"members": [{}]}}"#, members.join(", ")));
    let lines: Vec<String> = problems(&text).iter().map(|p| p.to_string()).collect();
    assert_eq!(lines, ["/members/2: member \"cluster-production-a\" is defined twice (also at /members/0)"]);
}

#[test]
fn problems_are_all_reported_not_just_the_first() {
    let text = patched(
        r#"{"updateStrategies": {"s": {"stages": [{"name": "S1", "maxConcurrency": "0", "groups": [{"name": "ga", "maxAllowedFailures": "-1"}, {"name": "gb"}]}]}}}"#,
    );
    assert_eq!(problems(&text).len(), 3, "{:#?}", problems(&text));
}

/// A key given twice in one object is an error (a plain JSON parse would keep the last silently),
/// naming the object and the key; sweep files get the same.
#[test]
fn a_key_given_twice_is_an_error() {
    let p = problems(r#"{"name": "dup", "seed": 42, "seed": 43, "start": "2026-03-02T00:00:00Z"}"#);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].message.starts_with("duplicate key \"seed\""), "{}", p[0].message);
    let p = problems(
        r#"{"name": "dup", "start": "2026-03-02T00:00:00Z", "updateStrategies": {"a": {"stages": []}, "a": {"stages": []}}}"#,
    );
    assert_eq!(p[0].path, "/updateStrategies");
    assert!(p[0].message.starts_with("duplicate key \"a\""), "{}", p[0].message);
    let sweep = fleetsim::sweep::from_text(
        r#"{"name": "s", "scenario": "base.json", "replications": 1, "replications": 2, "parameters": []}"#,
        "sweep.json",
        std::path::Path::new("."),
    );
    let Err(problems) = sweep else { panic!("a sweep with a key given twice is invalid") };
    assert!(problems[0].to_string().contains("duplicate key \"replications\""), "{:?}", problems[0].to_string());
}
