//! Tests: warnings. What is valid but most likely a mistake is printed by `validate`, `run` and
//! `sweep` as `warning: FILE: /pointer: message`, kept in `summary.json` and `index.html`, and made
//! an error (exit 2, nothing written) by `--strict` (README, "Warnings").

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::binary;

/// Ten members: m01–m02 ring canary, m03–m10 ring broad; m01–m05 in westeurope, the rest in eastus.
fn fleet() -> Vec<Value> {
    (1..=10)
        .map(|i| {
            json!({
                "name": format!("m{i:02}"),
                "region": if i <= 5 { "westeurope" } else { "eastus" },
                "labels": {"ring": if i <= 2 { "canary" } else { "broad" }, "env": "prod"},
                "kubernetesVersion": "1.32.4"
            })
        })
        .collect()
}

/// A scenario with strategy `s` of the given stages and one run `r` using it; `extra` is merged into
/// the top level and `run_extra` into the run.
fn scenario(stages: Value, run_extra: Value, extra: Value) -> Value {
    let mut run = json!({
        "name": "r", "updateStrategyId": "s",
        "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.2"}}
    });
    merge(&mut run, run_extra);
    let mut doc = json!({
        "name": "w", "seed": 1, "start": "2026-03-02T00:00:00Z",
        "models": {"duration": {"member": "1h"}, "failure": {"probability": 0.0}},
        "members": fleet(),
        "updateStrategies": {"s": {"stages": stages}},
        "updateRuns": [run]
    });
    merge(&mut doc, extra);
    doc
}

fn merge(into: &mut Value, extra: Value) {
    if let Value::Object(map) = extra {
        for (k, v) in map {
            into[k] = v;
        }
    }
}

/// Both rings in two stages: no warning.
fn clean_stages() -> Value {
    json!([
        {"name": "canary", "memberSelector": {"byLabel": "ring=canary"}},
        {"name": "broad", "memberSelector": {"byLabel": "ring=broad"}}
    ])
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new(files: &[(&str, &Value)]) -> Files {
        let dir = tempfile::tempdir().unwrap();
        for (name, value) in files {
            std::fs::write(dir.path().join(name), serde_json::to_string_pretty(value).unwrap()).unwrap();
        }
        Files { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn fleetsim(&self, args: &[&str]) -> Output {
        Command::new(binary()).args(args).current_dir(self.path()).output().expect("fleetsim runs")
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The warning lines `validate` prints for a scenario (asserting it is still valid, exit 0).
fn warnings_of(doc: &Value) -> Vec<String> {
    let files = Files::new(&[("w.json", doc)]);
    let out = files.fleetsim(&["validate", "w.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("w.json: valid scenario"), "{}", stdout(&out));
    stderr(&out).lines().map(str::to_string).collect()
}

#[test]
fn a_clean_scenario_has_no_warning() {
    assert_eq!(warnings_of(&scenario(clean_stages(), json!({}), json!({}))), Vec::<String>::new());
}

#[test]
fn a_mistyped_label_key_is_a_warning_with_the_closest_key_and_strict_makes_it_an_error() {
    let stages = json!([
        {"name": "canary", "memberSelector": {"byLabel": "rign=canary"}},
        {"name": "broad", "memberSelector": {"byLabel": "ring in (broad, canary)"}}
    ]);
    let doc = scenario(stages, json!({}), json!({}));
    let expected = "w.json: /updateStrategies/s/stages/0/memberSelector/byLabel: stage \"canary\" selects no member because no member has the label key \"rign\" (did you mean \"ring\"?); a run skips it: fix the selector, or remove the stage if it is meant to be empty";
    assert_eq!(warnings_of(&doc), [format!("warning: {expected}")]);

    let files = Files::new(&[("w.json", &doc)]);
    for args in [&["validate", "--strict", "w.json"][..], &["run", "w.json", "--strict", "--out", "out"][..]] {
        let out = files.fleetsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out), format!("{expected}\n"), "{args:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    assert!(!files.path().join("out").exists(), "--strict writes nothing");
}

#[test]
fn an_empty_stage_or_group_gets_one_line_each() {
    let stages = json!([
        {"name": "canary", "memberSelector": {"byLabel": "ring=canray"}},
        {"name": "placeholder", "memberSelector": {"byLabel": "ring=none"},
         "groups": [{"name": "a", "memberSelector": {"byLabel": "env=prod"}}, {"name": "b"}]},
        {"name": "broad", "memberSelector": {"byLabel": "ring in (broad, canary)"},
         "groups": [{"name": "eu", "memberSelector": {"byLabel": "fleet.azure.com/location=westeurope"}},
                    {"name": "us", "memberSelector": {"byLabel": "fleet.azure.com/location=eastus"}},
                    {"name": "asia", "memberSelector": {"byLabel": "fleet.azure.com/location=japaneast"}}]}
    ]);
    let lines = warnings_of(&scenario(stages, json!({}), json!({})));
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(lines[0].contains("stages/0/memberSelector/byLabel: stage \"canary\" selects no member because no member has \"ring=canray\" (did you mean \"canary\"?)"), "{}", lines[0]);
    assert!(lines[1].contains("stages/1/memberSelector/byLabel: stage \"placeholder\" selects no member because no member has \"ring=none\" (values of ring: \"broad\", \"canary\")"), "{}", lines[1]);
    assert!(lines[2].contains("stages/2/groups/2/memberSelector/byLabel: group \"asia\" of stage \"broad\" selects no member because no member has \"fleet.azure.com/location=japaneast\""), "{}", lines[2]);
}

#[test]
fn fleet_labels_are_keys_every_member_has() {
    let stages = json!([
        {"name": "eu", "memberSelector": {"byLabel": "fleet.azure.com/location=westeurope,fleet.azure.com/resource-group!=other"}},
        {"name": "rest", "memberSelector": {"byLabel": "fleet.azure.com/member-name notin (m01, m02, m03, m04, m05),fleet.azure.com/subscription-id,fleet.azure.com/cluster-name"}}
    ]);
    assert_eq!(warnings_of(&scenario(stages.clone(), json!({}), json!({}))), Vec::<String>::new());
    // And a mistyped one is told with the one it is closest to.
    let mut mistyped = stages;
    mistyped[1]["memberSelector"]["byLabel"] = json!("fleet.azure.com/location!=westeurope,fleet.azure.com/locaton!=x");
    let lines = warnings_of(&scenario(mistyped, json!({}), json!({})));
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("/updateStrategies/s/stages/1/memberSelector/byLabel: no member has the label key \"fleet.azure.com/locaton\", so \"fleet.azure.com/locaton!=x\" holds for every member (did you mean \"fleet.azure.com/location\"?)"), "{}", lines[0]);
}

#[test]
fn a_key_no_member_has_in_a_selector_that_still_selects_is_a_warning() {
    let stages = json!([
        {"name": "canary", "memberSelector": {"byLabel": "ring=canary"}},
        {"name": "broad", "memberSelector": {"byLabel": "ring=broad,evn!=staging"}}
    ]);
    let lines = warnings_of(&scenario(stages, json!({}), json!({})));
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("/updateStrategies/s/stages/1/memberSelector/byLabel: no member has the label key \"evn\", so \"evn!=staging\" holds for every member (did you mean \"env\"?)"), "{}", lines[0]);
}

#[test]
fn a_key_only_the_last_member_has_is_known_before_and_after_a_mistyped_one_lists_the_keys() {
    // "tier" is on m10 alone. It is asked of the members (canary), then a mistyped key makes the
    // list of every member's keys (which must hold m10's for the hint), and "tier" is asked again.
    let stages = json!([
        {"name": "canary", "memberSelector": {"byLabel": "ring=canary,tier!=db"}},
        {"name": "broad", "memberSelector": {"byLabel": "ring=broad,teir!=db,tier!=db"}}
    ]);
    let mut doc = scenario(stages, json!({}), json!({}));
    doc["members"][9]["labels"]["tier"] = json!("web");
    let lines = warnings_of(&doc);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("/updateStrategies/s/stages/1/memberSelector/byLabel: no member has the label key \"teir\", so \"teir!=db\" holds for every member (did you mean \"tier\"?)"), "{}", lines[0]);
}

#[test]
fn every_named_strategy_is_checked_with_its_own_plan_whether_a_run_a_profile_or_nothing_uses_it() {
    // "s" is planned for run "r", "auto" for a profile, "spare" for nobody; each leaves other
    // members unselected.
    let canary = json!({"name": "canary", "memberSelector": {"byLabel": "ring=canary"}});
    let broad = json!({"name": "broad", "memberSelector": {"byLabel": "ring=broad"}});
    let mistyped = json!({"name": "canary", "memberSelector": {"byLabel": "ring=canray"}});
    let extra = json!({
        "updateStrategies": {
            "s": {"stages": [canary]},
            "auto": {"stages": [broad]},
            "spare": {"stages": [mistyped, broad]}
        },
        "autoUpgradeProfiles": [{"name": "p", "channel": "Stable", "updateStrategyId": "auto"}]
    });
    let lines = warnings_of(&scenario(json!([]), json!({}), extra));
    let expected = [
        "/updateStrategies/auto/stages: 2 members are selected by no stage (\"m01\", \"m02\")",
        "/updateStrategies/s/stages: 8 members are selected by no stage (\"m03\", \"m04\", \"m05\", \"m06\", \"m07\", …)",
        "/updateStrategies/spare/stages/0/memberSelector/byLabel: stage \"canary\" selects no member because no member has \"ring=canray\"",
        "/updateStrategies/spare/stages: 2 members are selected by no stage (\"m01\", \"m02\")",
    ];
    assert_eq!(lines.len(), expected.len(), "{lines:#?}");
    for (line, expected) in lines.iter().zip(expected) {
        assert!(line.starts_with(&format!("warning: w.json: {expected}")), "{line}");
    }
}

#[test]
fn members_selected_by_no_stage_are_counted_and_named() {
    let stages = json!([{"name": "canary", "memberSelector": {"byLabel": "ring=canary"}}]);
    let lines = warnings_of(&scenario(stages, json!({}), json!({})));
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("w.json: /updateStrategies/s/stages: 8 members are selected by no stage (\"m03\", \"m04\", \"m05\", \"m06\", \"m07\", …)"), "{}", lines[0]);
}

#[test]
fn an_approval_gate_nobody_answers_is_a_warning() {
    let mut stages = clean_stages();
    stages[0]["afterGates"] = json!([{"type": "Approval", "displayName": "canary ok"}]);
    stages[1]["groups"] =
        json!([{"name": "all", "memberSelector": {"byLabel": "env=prod"}, "beforeGates": [{"type": "Approval"}]}]);
    let lines = warnings_of(&scenario(stages.clone(), json!({}), json!({})));
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].contains("/updateStrategies/s/stages/0/afterGates/0: Approval gate \"canary ok\" after stage \"canary\" is answered by no approval policy and no approve action of run \"r\""), "{}", lines[0]);
    assert!(
        lines[1].contains(
            "/updateStrategies/s/stages/1/groups/0/beforeGates/0: Approval gate before group \"all\" of stage \"broad\""
        ),
        "{}",
        lines[1]
    );

    // An approve action answers the gate it addresses; a policy answers every gate.
    let approve = json!({"actions": [{"at": "+1h", "action": "approve", "gate": {"displayName": "canary ok"}}]});
    let lines = warnings_of(&scenario(stages.clone(), approve, json!({})));
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("groups/0/beforeGates/0"), "{}", lines[0]);
    assert_eq!(
        warnings_of(&scenario(stages.clone(), json!({"approvalPolicy": "30m"}), json!({}))),
        Vec::<String>::new()
    );
    let models = json!({"models": {"duration": {"member": "1h"}, "approvals": "1h"}});
    assert_eq!(warnings_of(&scenario(stages, json!({}), models)), Vec::<String>::new());
}

#[test]
fn a_start_or_an_action_after_the_horizon_is_a_warning() {
    let run = json!({"start": "+3d", "actions": [{"at": "+1d", "action": "stop"}, {"at": "+4d", "action": "start"}]});
    let lines = warnings_of(&scenario(clean_stages(), run, json!({"settings": {"horizon": "2d"}})));
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].contains("/updateRuns/0/start: run \"r\" starts at 2026-03-05T00:00:00Z, after the end of the simulation (2026-03-04T00:00:00Z): it never runs"), "{}", lines[0]);
    assert!(lines[1].contains("/updateRuns/0/actions/1/at: the start action of run \"r\" at 2026-03-06T00:00:00Z is after the end of the simulation"), "{}", lines[1]);
}

#[test]
fn a_run_the_horizon_cuts_is_a_warning_of_run_in_the_summary_and_at_the_top_of_the_page() {
    // Canary then broad at 1 h each need 2 h; the horizon is 90 minutes.
    let doc = scenario(clean_stages(), json!({}), json!({"settings": {"horizon": "90m"}}));
    assert_eq!(warnings_of(&doc), Vec::<String>::new(), "known only after simulating");
    let files = Files::new(&[("w.json", &doc)]);
    let out = files.fleetsim(&["run", "w.json", "--out", "out"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let expected = "/settings/horizon: run \"r\" is still Running at the end of the simulation (2026-03-02T01:30:00Z, horizon 1h30m): its figures stop there; raise settings.horizon to see it finish";
    assert_eq!(stderr(&out), format!("warning: w.json: {expected}\n"));

    let summary: Value =
        serde_json::from_slice(&std::fs::read(files.path().join("out/summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["warnings"],
        json!([{"pointer": "/settings/horizon", "message": expected.split_once(": ").unwrap().1}])
    );
    let page = std::fs::read_to_string(files.path().join("out/index.html")).unwrap();
    let warnings_at = page.find("<section class=\"warnings\"").expect("a warnings section");
    assert!(warnings_at < page.find("id=\"summary\"").unwrap(), "warnings come first");
    assert!(page[warnings_at..].contains("still Running at the end of the simulation"));

    // --strict: exit 2 after simulating, nothing written.
    let out = files.fleetsim(&["run", "w.json", "--strict", "--out", "strict"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), format!("w.json: {expected}\n"));
    assert!(!files.path().join("strict").exists());
    // -q keeps the terminal quiet; the summary still has the warning.
    let out = files.fleetsim(&["run", "w.json", "-q", "--out", "quiet"]);
    assert_eq!((out.status.code(), stderr(&out).as_str()), (Some(0), ""));
    assert!(std::fs::read_to_string(files.path().join("quiet/summary.json")).unwrap().contains("still Running"));
}

#[test]
fn sweep_warnings_name_the_base_file_and_the_points_they_concern() {
    let base = scenario(clean_stages(), json!({}), json!({}));
    let sweep = json!({
        "name": "sw", "scenario": "base.json", "replications": 2,
        "parameters": [{"name": "canarySelector", "pointer": "/updateStrategies/s/stages/0/memberSelector/byLabel",
                        "values": ["ring=canary", "ring=canray", "ring=canary"]}]
    });
    let files = Files::new(&[("base.json", &base), ("sweep.json", &sweep)]);
    let out = files.fleetsim(&["validate", "sweep.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<String> = stderr(&out).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].starts_with("warning: base.json: /updateStrategies/s/stages/0/memberSelector/byLabel: stage \"canary\" selects no member because no member has \"ring=canray\""), "{}", lines[0]);
    assert!(lines[0].ends_with("(at 1 of 3 points: 1)"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("warning: base.json: /updateStrategies/s/stages: 2 members are selected by no stage"),
        "{}",
        lines[1]
    );

    let out = files.fleetsim(&["sweep", "sweep.json", "--strict", "--out", "out"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 2);
    assert!(!files.path().join("out").exists(), "--strict runs nothing");
    let out = files.fleetsim(&["sweep", "sweep.json", "--quiet", "--out", "out"]);
    assert_eq!((out.status.code(), stderr(&out).as_str()), (Some(0), ""));
    let out = files.fleetsim(&["sweep", "sweep.json", "--out", "out2"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out).lines().filter(|l| l.starts_with("warning: base.json: ")).count(), 2);
}

/// A manual run that no action starts never runs: one warning at its `start`.
#[test]
fn a_manual_run_nobody_starts_is_a_warning() {
    let doc = scenario(clean_stages(), json!({"start": "manual"}), json!({}));
    let files = Files::new(&[("m.json", &doc)]);
    let out = files.fleetsim(&["validate", "m.json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: m.json: /updateRuns/0/start: run \"r\" is \"manual\" and no start action starts it"),
        "{err}"
    );
    let started =
        scenario(clean_stages(), json!({"start": "manual", "actions": [{"at": "+1h", "action": "start"}]}), json!({}));
    let files = Files::new(&[("m.json", &started)]);
    let out = files.fleetsim(&["validate", "m.json"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A run the horizon cuts while a ScheduledStart gate is due later is not "blocked for good": the
/// warning says a longer horizon lets it go on, and `blockedOn.until` gives the gate's time.
#[test]
fn a_scheduled_gate_after_the_horizon_is_cut_not_blocked_for_good() {
    let stages = json!([{"name": "canary", "memberSelector": {"byLabel": "ring=canary"},
        "beforeGates": [{"type": "ScheduledStart", "displayName": "Tuesday",
            "scheduledStartConfiguration": {"startDay": "Tuesday", "startTime": "09:00", "utcOffset": "+00:00"}}]},
        {"name": "broad", "memberSelector": {"byLabel": "ring=broad"}}]);
    let doc = scenario(stages, json!({}), json!({"settings": {"horizon": "20h"}}));
    let files = Files::new(&[("g.json", &doc)]);
    let out = files.fleetsim(&["run", "g.json", "--out", "rep"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("raise settings.horizon to see it go on"), "{err}");
    assert!(!err.contains("a longer horizon would not finish it"), "{err}");
    let summary: Value =
        serde_json::from_slice(&std::fs::read(files.path().join("rep/summary.json")).unwrap()).unwrap();
    let blocked = &summary["runs"][0]["blockedOn"];
    assert_eq!((blocked["reason"].as_str(), blocked["gate"].as_str()), (Some("gate"), Some("Tuesday")));
    assert_eq!(blocked["until"], "2026-03-03T09:00:00Z");
}
