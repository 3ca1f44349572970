//! `fleetsim forecast`: a run taken up from its status. Exact answers where the remaining work is
//! known (fixed durations), members already upgrading not restarted, gates and waits keeping their
//! state, determinism at any thread count, the Azure fixtures' run in its three forms, a status
//! fleetsim wrote itself, and bad input.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use fleetsim::engine::Time;
use fleetsim::forecast::{self, Prepared, Setup};

use crate::support::{START, binary, members, root, scenario, scenario_json};

fn fleetsim(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = std::process::Command::new(binary()).args(args).current_dir(cwd).output().expect("fleetsim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn t(text: &str) -> Time {
    Time::parse_rfc3339(text).unwrap()
}

fn status(state: &str, start: Option<&str>, end: Option<&str>) -> Value {
    let mut s = json!({ "state": state });
    if let Some(start) = start {
        s["startTime"] = json!(start);
    }
    if let Some(end) = end {
        s["completedTime"] = json!(end);
    }
    s
}

/// An `az fleet updaterun show` resource (az-flattened) of run `r` with one stage `st` and one
/// group `g`, the members given as (name, state, start, end).
fn one_group_status(
    run_state: &str,
    members: &[(&str, &str, Option<&str>, Option<&str>)],
    extra_stage: Value,
) -> Value {
    let members: Vec<Value> = members
        .iter()
        .map(|(name, state, start, end)| json!({"name": name, "status": status(state, *start, *end)}))
        .collect();
    let mut stage = json!({
        "name": "st",
        "status": status("Running", Some(START), None),
        "failureCount": 0,
        "groups": [{"name": "g", "status": status("Running", Some(START), None), "failureCount": 0, "members": members}]
    });
    crate::support::merge(&mut stage, extra_stage);
    json!({
        "name": "r",
        "type": "Microsoft.ContainerService/fleets/updateRuns",
        "status": {"status": status(run_state, Some(START), None), "stages": [stage], "failureCount": 0}
    })
}

fn one_group_scenario(n: usize, models: Value) -> fleetsim::scenario::Scenario {
    let strategy = json!({"stages": [{"name": "st", "groups": [{"name": "g"}]}]});
    let mut extra = json!({});
    if !models.is_null() {
        extra = json!({"models": models});
    }
    scenario(&scenario_json(members("m", "g", n), strategy, json!({}), extra))
}

fn setup(scenario: &fleetsim::scenario::Scenario, status: &Value, now: Option<&str>) -> Setup {
    let run = forecast::status::read(status).unwrap_or_else(|p| panic!("{p:?}"));
    match forecast::prepare(scenario, &run, now.map(t)).unwrap_or_else(|p| panic!("{p:?}")) {
        Prepared::InProgress(setup) => *setup,
        Prepared::Finished(f) => panic!("finished: {f:?}"),
    }
}

#[test]
fn a_one_group_run_with_fixed_durations_has_an_exact_eta() {
    // Four members one at a time, 1 h each: m01 done, m02 upgrading since 01:00; at 01:30 the
    // rest is known exactly: m02 ends 02:00, m03 03:00, m04 04:00.
    let s = one_group_scenario(4, Value::Null);
    let st = one_group_status(
        "Running",
        &[
            ("m01", "Completed", Some(START), Some("2026-03-02T01:00:00Z")),
            ("m02", "Running", Some("2026-03-02T01:00:00Z"), None),
            ("m03", "NotStarted", None, None),
            ("m04", "NotStarted", None, None),
        ],
        json!({}),
    );
    let setup = setup(&s, &st, Some("2026-03-02T01:30:00Z"));
    let reps = forecast::replicate(&setup, 20, 2).unwrap();
    let f = forecast::report::forecast(&setup, &reps);
    let finish = f.finish.as_ref().unwrap();
    for p in [&finish.p10, &finish.p50, &finish.p90] {
        assert_eq!(p.as_deref(), Some("2026-03-02T04:00:00Z"), "{f:?}");
    }
    assert_eq!(finish.p50_hours, Some(2.5));
    assert_eq!((finish.completed, finish.failed, finish.unfinished), (20, 0, 0));
    assert_eq!(finish.failure_probability, 0.0);
    assert_eq!(f.stages[0].p50.as_deref(), Some("2026-03-02T04:00:00Z"));
    assert_eq!(f.status.running, 1);
    assert_eq!(f.status.completed, 1);
    // The fan: one member done now, all four at the end.
    assert_eq!(f.members_done.first().unwrap().p50, 1.0);
    assert_eq!(f.members_done.last().unwrap().p50, 4.0);
    assert!(f.waits.iter().all(|w| w.what == "upgrading"), "{:?}", f.waits);
    assert_eq!(f.waits[0].mean_hours, 2.5);
}

#[test]
fn a_running_member_goes_on_with_the_time_it_spent_and_is_not_restarted() {
    let s = one_group_scenario(2, Value::Null);
    let running = one_group_status(
        "Running",
        &[("m01", "Running", Some(START), None), ("m02", "NotStarted", None, None)],
        json!({}),
    );
    // 50 minutes spent of 1 h: m01 ends at 01:00, not at 01:50 as a fresh start would.
    let setup = setup(&s, &running, Some("2026-03-02T00:50:00Z"));
    let reps = forecast::replicate(&setup, 5, 1).unwrap();
    for r in &reps {
        assert_eq!(r.done_changes.first(), Some(&(t("2026-03-02T01:00:00Z"), 1)));
        assert_eq!(r.completed, Some(t("2026-03-02T02:00:00Z")));
    }
    // With durations drawn from a distribution, the attempt is conditioned on having lasted 50
    // minutes already: it never ends before now, and it ends later than an unconditioned draw would
    // in some replications.
    let s = one_group_scenario(
        2,
        json!({"duration": {"member": {"median": "40m", "p90": "80m"}}, "failure": {"probability": 0.0}}),
    );
    let setup = setup_for(&s, &running, "2026-03-02T00:50:00Z");
    let reps = forecast::replicate(&setup, 100, 2).unwrap();
    let now = t("2026-03-02T00:50:00Z");
    let firsts: Vec<Time> = reps.iter().map(|r| r.done_changes[0].0).collect();
    assert!(firsts.iter().all(|&f| f >= now), "{firsts:?}");
    let mut spread = firsts.clone();
    spread.sort();
    spread.dedup();
    assert!(spread.len() > 50, "the remaining durations are drawn, one per replication: {spread:?}");
}

fn setup_for(s: &fleetsim::scenario::Scenario, status: &Value, now: &str) -> Setup {
    setup(s, status, Some(now))
}

#[test]
fn a_gate_pending_at_the_status_time_keeps_blocking() {
    let strategy = json!({"stages": [{"name": "st", "groups": [{"name": "g"}],
        "beforeGates": [{"displayName": "go", "type": "Approval"}]}]});
    let pending_gate = json!({
        "status": status("Pending", Some(START), None),
        "beforeGates": [{"displayName": "go", "status": status("Pending", Some(START), None)}]
    });
    let mut st = one_group_status(
        "Pending",
        &[("m01", "NotStarted", None, None), ("m02", "NotStarted", None, None)],
        pending_gate,
    );
    st["status"]["stages"][0]["groups"][0]["status"] = json!({"state": "NotStarted"});
    // Nobody approves: the run never completes, and the replications say why.
    let s = scenario(&scenario_json(
        members("m", "g", 2),
        strategy.clone(),
        json!({}),
        json!({"settings": {"horizon": "10d"}}),
    ));
    let setup = setup(&s, &st, Some("2026-03-02T03:00:00Z"));
    let reps = forecast::replicate(&setup, 10, 2).unwrap();
    let f = forecast::report::forecast(&setup, &reps);
    let finish = f.finish.as_ref().unwrap();
    assert_eq!((finish.p50.as_ref(), finish.unfinished), (None, 10), "{f:?}");
    assert_eq!(f.unfinished.len(), 1);
    assert!(f.unfinished[0].what.contains("blocked on gate \"go\" since 2026-03-02T00:00:00Z"), "{:?}", f.unfinished);
    assert_eq!(f.waits[0].what, "gate");
    assert_eq!(f.waits[0].gate.as_deref(), Some("\"go\""));
    // An approval after the status time still happens; one before it already did (or not) and is not
    // repeated: approved at 05:00, two members of 1 h each → 07:00.
    let actions = json!({"actions": [
        {"at": "+1h", "action": "approve", "gate": {"displayName": "go"}},
        {"at": "+5h", "action": "approve", "gate": {"displayName": "go"}}]});
    let s = scenario(&scenario_json(members("m", "g", 2), strategy, actions, json!({})));
    let setup = setup_for(&s, &st, "2026-03-02T03:00:00Z");
    let f = forecast::report::forecast(&setup, &forecast::replicate(&setup, 4, 1).unwrap());
    assert_eq!(f.finish.unwrap().p90.as_deref(), Some("2026-03-02T07:00:00Z"));
}

#[test]
fn an_after_stage_wait_keeps_its_elapsed_time() {
    let strategy = json!({"stages": [
        {"name": "a", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 7200},
        {"name": "b", "groups": [{"name": "gb"}]}]});
    let mut fleet = members("a", "ga", 1);
    fleet.extend(members("b", "gb", 1));
    let s = scenario(&scenario_json(fleet, strategy, json!({}), json!({})));
    let st = json!({
        "name": "r",
        "status": {"status": status("Pending", Some(START), None), "failureCount": 0, "stages": [
            {"name": "a", "status": status("Pending", Some(START), None), "groups": [
                {"name": "ga", "status": status("Completed", Some(START), Some("2026-03-02T01:00:00Z")),
                 "members": [{"name": "a01", "status": status("Completed", Some(START), Some("2026-03-02T01:00:00Z"))}]}],
             "afterStageWaitStatus": {"status": status("Running", Some("2026-03-02T01:00:00Z"), None), "waitDurationInSeconds": 7200}},
            {"name": "b", "status": {"state": "NotStarted"}, "groups": [
                {"name": "gb", "status": {"state": "NotStarted"}, "members": [{"name": "b01", "status": {"state": "NotStarted"}}]}]}
        ]}
    });
    // At 02:00 one hour of the wait is left: stage b is reached at 03:00 and done at 04:00.
    let setup = setup(&s, &st, Some("2026-03-02T02:00:00Z"));
    let f = forecast::report::forecast(&setup, &forecast::replicate(&setup, 3, 1).unwrap());
    assert_eq!(f.stages[0].p50.as_deref(), Some("2026-03-02T03:00:00Z"));
    assert_eq!(f.stages[1].p50.as_deref(), Some("2026-03-02T04:00:00Z"));
    assert_eq!(f.finish.unwrap().p50.as_deref(), Some("2026-03-02T04:00:00Z"));
    let wait = f.waits.iter().find(|w| w.what == "afterStageWait").unwrap();
    assert_eq!((wait.stage.as_str(), wait.mean_hours), ("a", 1.0));
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/azure")
}

/// The fixtures' fleet imported as a scenario, in `dir`.
fn imported(dir: &Path) -> PathBuf {
    let mut args = vec!["import".to_string()];
    let mut files: Vec<String> = std::fs::read_dir(fixtures().join("az"))
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_string())
        .collect();
    files.sort();
    args.extend(files);
    args.extend(["--out".to_string(), "scenario.json".to_string(), "-q".to_string()]);
    let (code, _, stderr) = fleetsim(&args.iter().map(String::as_str).collect::<Vec<_>>(), dir);
    assert_eq!(code, 0, "{stderr}");
    dir.join("scenario.json")
}

#[test]
fn the_fixture_run_caught_mid_way_forecasts_in_all_three_forms() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = imported(dir.path());
    let scenario = scenario.to_str().unwrap();
    let mut answers = Vec::new();
    for (form, file) in [("az", "az/update-run.json"), ("arm", "arm/update-run.json"), ("graph", "graph/fleet.json")] {
        let status = fixtures().join(file);
        let out = format!("out-{form}");
        let (code, stdout, stderr) = fleetsim(
            &["forecast", scenario, "--status", status.to_str().unwrap(), "--replications", "40", "--out", &out],
            dir.path(),
        );
        assert_eq!(code, 0, "{form}: {stderr}");
        assert!(stdout.starts_with("forecast of run run1 (scenario fleet1, seed 0): 40 replications from 2026-03-02T09:58:12Z (the latest time in the status)"), "{stdout}");
        assert!(stdout.contains("1 Running, 1 Pending, 1 NotStarted"), "{stdout}");
        assert!(stdout.contains("run completes: p10 2026-03-02T"), "{stdout}");
        let json: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(&out).join("forecast.json")).unwrap()).unwrap();
        assert_eq!(json["status"]["members"], 4);
        assert_eq!(json["stages"][0]["completedTime"], "2026-03-02T09:58:12Z", "canary is done");
        assert!(json["stages"][1]["p50"].is_string(), "{json}");
        assert!(dir.path().join(&out).join("index.html").is_file());
        assert!(dir.path().join(&out).join("charts/fan.svg").is_file());
        answers.push(json);
    }
    assert_eq!(answers[0], answers[1], "az and ARM forms give the same forecast");
    assert_eq!(answers[0], answers[2], "az and Resource Graph forms give the same forecast");
}

#[test]
fn a_forecast_is_the_same_at_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = imported(dir.path());
    let status = fixtures().join("az/update-run.json");
    for threads in ["1", "2"] {
        let out = format!("out-{threads}");
        let args = [
            "forecast",
            scenario.to_str().unwrap(),
            "--status",
            status.to_str().unwrap(),
            "--replications",
            "60",
            "--threads",
            threads,
            "--out",
            &out,
            "-q",
        ];
        let (code, stdout, stderr) = fleetsim(&args, dir.path());
        assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    }
    let one = crate::support::folder_files(&dir.path().join("out-1"));
    assert_eq!(one, crate::support::folder_files(&dir.path().join("out-2")));
    assert!(one.iter().any(|(name, _)| name == "forecast.json"));
}

#[test]
fn a_status_fleetsim_wrote_can_be_forecast() {
    // The run is cut by the horizon mid-way: status/r.json shows m01 done and m02 upgrading.
    let dir = tempfile::tempdir().unwrap();
    let strategy = json!({"stages": [{"name": "st", "groups": [{"name": "g"}]}]});
    let text = scenario_json(members("m", "g", 4), strategy, json!({}), json!({"settings": {"horizon": "1h30m"}}));
    std::fs::write(dir.path().join("cut.json"), &text).unwrap();
    // The forecast's horizon is the scenario's counted from the status time: the same scenario
    // without the cut.
    let mut whole: Value = serde_json::from_str(&text).unwrap();
    whole.as_object_mut().unwrap().remove("settings");
    std::fs::write(dir.path().join("whole.json"), whole.to_string()).unwrap();
    let (code, _, stderr) = fleetsim(&["run", "cut.json", "--out", "report", "-q"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    let written: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report/status/r.json")).unwrap()).unwrap();
    assert_eq!(written["properties"]["status"]["stages"][0]["groups"][0]["members"][1]["status"]["state"], "Running");
    // The forecast takes the run up where the status leaves it (the horizon now counts from the
    // status time): m02 ends at 02:00, m03 at 03:00, m04 at 04:00.
    let (code, stdout, stderr) = fleetsim(
        &["forecast", "whole.json", "--status", "report/status/r.json", "--replications", "8", "--out", "fc"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("run completes: p10 2026-03-02T04:00:00Z (+3.0 h), p50 2026-03-02T04:00:00Z (+3.0 h), p90 2026-03-02T04:00:00Z (+3.0 h)"), "{stdout}");
    // The same with --now at the horizon: 1.5 h were left of the work, the ETA is the same instant.
    let (code, stdout, stderr) = fleetsim(
        &[
            "forecast",
            "whole.json",
            "--status",
            "report/status/r.json",
            "--replications",
            "8",
            "--out",
            "fc",
            "--now",
            "2026-03-02T01:30:00Z",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("from 2026-03-02T01:30:00Z (--now)"), "{stdout}");
    assert!(stdout.contains("p50 2026-03-02T04:00:00Z (+2.5 h)"), "{stdout}");
}

#[test]
fn bad_status_input_is_one_line_per_problem_with_file_and_pointer_and_exit_two() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = imported(dir.path());
    let scenario = scenario.to_str().unwrap();
    let base: Value = serde_json::from_slice(&std::fs::read(fixtures().join("az/update-run.json")).unwrap()).unwrap();
    let try_status = |name: &str, value: &str| {
        std::fs::write(dir.path().join(name), value).unwrap();
        fleetsim(&["forecast", scenario, "--status", name, "--out", &format!("out-{name}")], dir.path())
    };
    // A run the scenario does not have.
    let mut other = base.clone();
    other["name"] = json!("run9");
    let (code, _, stderr) = try_status("other.json", &other.to_string());
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("other.json: /name: run \"run9\" is not in the scenario (its runs: \"run1\")"),
        "{stderr}"
    );
    // Members the fleet does not have.
    let mut stranger = base.clone();
    stranger["status"]["stages"][1]["groups"][0]["members"][1]["name"] = json!("member-9");
    let (code, _, stderr) = try_status("stranger.json", &stranger.to_string());
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "stranger.json: /status/stages/1/groups/0/members/1/name: member \"member-9\" is not in the scenario's fleet; import its member and cluster with the others"
    );
    // Malformed JSON and shapes that are not a run's status.
    let (code, _, stderr) = try_status("broken.json", "{\"name\": \"run1\", \"status\": {");
    assert_eq!(code, 2);
    assert!(stderr.starts_with("broken.json: /status: "), "{stderr}");
    let mut wrong = base.clone();
    wrong["status"]["stages"][1]["status"]["state"] = json!("Done");
    wrong["status"]["stages"][1]["groups"][0]["members"][0]["status"]["startTime"] = json!("yesterday");
    let (code, _, stderr) = try_status("wrong.json", &wrong.to_string());
    assert_eq!(code, 2);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("wrong.json: /status/stages/1/status/state: \"Done\" is not a state"), "{stderr}");
    assert!(lines[1].starts_with("wrong.json: /status/stages/1/groups/0/members/0/status/startTime: "), "{stderr}");
    let (code, _, stderr) =
        try_status("members.json", &std::fs::read_to_string(fixtures().join("az/members.json")).unwrap());
    assert_eq!(
        (code, stderr.trim_end()),
        (2, "members.json: /: the list has no update run (type Microsoft.ContainerService/fleets/updateRuns)")
    );
    // A status that is already finished: said so, and the finished facts are written.
    let mut done = base.clone();
    done["status"]["status"] =
        json!({"state": "Completed", "startTime": "2026-03-02T08:00:00Z", "completedTime": "2026-03-02T12:00:00Z"});
    let (code, stdout, stderr) = try_status("done.json", &done.to_string());
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "done.json: /status/status/state: run \"run1\" already finished: Completed at 2026-03-02T12:00:00Z; there is nothing left to forecast (forecast.json has the finished facts)"
    );
    assert!(stdout.contains("already finished: Completed at 2026-03-02T12:00:00Z"), "{stdout}");
    let facts: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out-done.json/forecast.json")).unwrap()).unwrap();
    assert_eq!(facts["finished"]["state"], "Completed");
    assert_eq!(facts["finished"]["hours"], 4.0);
    assert!(facts.get("finish").is_none());
    // --now before the status's own times.
    let (code, _, stderr) = fleetsim(
        &[
            "forecast",
            scenario,
            "--status",
            fixtures().join("az/update-run.json").to_str().unwrap(),
            "--now",
            "2026-03-02T09:00:00Z",
            "--out",
            "early",
        ],
        dir.path(),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "/status: --now 2026-03-02T09:00:00Z is before the latest time in the status (2026-03-02T09:58:12Z)"
        ),
        "{stderr}"
    );
}

/// A status with groups `ga` (a01 Failed, over its allowance of 0: tripped) and `gb` (b01 upgrading
/// since 01:00, b02 not started), taken up at 01:30 under `failureScope` `scope`.
fn tripped_sibling(scope: &str, run_state: &str) -> (fleetsim::scenario::Scenario, Value) {
    let strategy =
        json!({"stages": [{"name": "st", "maxConcurrency": "2", "groups": [{"name": "ga"}, {"name": "gb"}]}]});
    let mut fleet = members("a", "ga", 1);
    fleet.extend(members("b", "gb", 2));
    let extra = json!({"settings": {"failureScope": scope}});
    let s = scenario(&scenario_json(fleet, strategy, json!({}), extra));
    let st = json!({
        "name": "r",
        "status": {"status": status(run_state, Some(START), None), "failureCount": 1, "stages": [
            {"name": "st", "status": status(run_state, Some(START), None), "failureCount": 1, "groups": [
                {"name": "ga", "status": status("Failed", Some(START), Some("2026-03-02T01:00:00Z")), "failureCount": 1,
                 "members": [{"name": "a01", "status": status("Failed", Some(START), Some("2026-03-02T01:00:00Z"))}]},
                {"name": "gb", "status": status("Running", Some(START), None), "failureCount": 0, "members": [
                    {"name": "b01", "status": status("Running", Some("2026-03-02T01:00:00Z"), None)},
                    {"name": "b02", "status": {"state": "NotStarted"}}]}]}]}
    });
    (s, st)
}

/// SEMANTICS §6 taken up from a status: under `run` scope a tripped group halts the run (the member
/// upgrading finishes, nothing else starts); under `segment` its sibling goes on.
#[test]
fn a_tripped_group_in_the_status_halts_the_run_only_under_run_scope() {
    let (s, st) = tripped_sibling("run", "Stopping");
    let up = setup(&s, &st, Some("2026-03-02T01:30:00Z"));
    let f = forecast::report::forecast(&up, &forecast::replicate(&up, 3, 1).unwrap());
    let finish = f.finish.as_ref().unwrap();
    assert_eq!((finish.completed, finish.failed), (0, 3), "{f:?}");
    // a01 is done (Failed); b01 finishes at 02:00; b02 never starts.
    assert_eq!(f.members_done.last().map(|p| p.p50), Some(2.0));

    let (s, st) = tripped_sibling("segment", "Running");
    let up = setup(&s, &st, Some("2026-03-02T01:30:00Z"));
    let f = forecast::report::forecast(&up, &forecast::replicate(&up, 3, 1).unwrap());
    let finish = f.finish.as_ref().unwrap();
    assert_eq!((finish.completed, finish.failed), (0, 3), "{f:?}");
    // b01 at 02:00, then b02 02:00–03:00: the stage still ends Failed.
    assert_eq!(f.members_done.last().map(|p| p.p50), Some(3.0));
}

/// A group's own before-gate still `Pending` in the status keeps its members waiting.
#[test]
fn a_group_gate_pending_in_the_status_keeps_its_members_waiting() {
    let strategy = json!({"stages": [{"name": "st", "groups": [{"name": "g", "beforeGates": [{"displayName": "go", "type": "Approval"}]}]}]});
    let s = scenario(&scenario_json(
        members("m", "g", 2),
        strategy,
        json!({"actions": [{"at": "+4h", "action": "approve", "gate": {"displayName": "go"}}]}),
        json!({}),
    ));
    let mut st =
        one_group_status("Running", &[("m01", "NotStarted", None, None), ("m02", "NotStarted", None, None)], json!({}));
    st["status"]["stages"][0]["groups"][0]["status"] = status("Pending", Some(START), None);
    st["status"]["stages"][0]["groups"][0]["beforeGates"] =
        json!([{"displayName": "go", "status": status("Pending", Some(START), None)}]);
    let setup = setup(&s, &st, Some("2026-03-02T01:00:00Z"));
    let f = forecast::report::forecast(&setup, &forecast::replicate(&setup, 2, 1).unwrap());
    // Approved at 04:00: m01 04:00–05:00, m02 05:00–06:00.
    assert_eq!(f.finish.unwrap().p50.as_deref(), Some("2026-03-02T06:00:00Z"));
}

/// Contradictions between the status and the strategy are reported, one problem each.
#[test]
fn a_status_that_contradicts_the_strategy_is_refused_naming_each_contradiction() {
    let strategy = json!({"stages": [{"name": "st", "beforeGates": [{"type": "Approval"}], "groups": [
        {"name": "g", "beforeGates": [{"type": "Approval"}]}]}]});
    let s = scenario(&scenario_json(members("m", "g", 2), strategy, json!({}), json!({})));
    let problems = |st: &Value| -> Vec<String> {
        let run = forecast::status::read(st).unwrap_or_else(|p| panic!("{p:?}"));
        match forecast::prepare(&s, &run, None) {
            Err(problems) => problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect(),
            Ok(_) => Vec::new(),
        }
    };
    let gate = |state: &str| json!([{"status": status(state, Some(START), None)}]);
    let mut st = one_group_status(
        "Running",
        &[("m01", "Running", Some(START), None), ("m02", "NotStarted", None, None)],
        json!({}),
    );
    st["status"]["stages"][0]["beforeGates"] = gate("Completed");
    st["status"]["stages"][0]["groups"][0]["beforeGates"] = gate("Completed");
    assert_eq!(problems(&st), Vec::<String>::new());
    // The restore API itself refuses a snapshot whose gates differ from the plan's, at the stage or
    // at the group (the status reader already checks the counts it reads).
    let up = setup(&s, &st, Some("2026-03-02T00:30:00Z"));
    let restore = |snapshot: &fleetsim::orchestrator::RunSnapshot| -> Vec<String> {
        match restore_run(&up, snapshot) {
            Err(problems) => problems.into_iter().map(|p| p.message).collect(),
            Ok(_) => Vec::new(),
        }
    };
    assert_eq!(restore(&up.snapshot), Vec::<String>::new());
    let mut no_stage_gate = up.snapshot.clone();
    no_stage_gate.stages[0].before_gates.clear();
    assert_eq!(restore(&no_stage_gate), ["the stage's gates differ from the strategy's"]);
    let mut extra_stage_gate = up.snapshot.clone();
    let gate = extra_stage_gate.stages[0].before_gates[0].clone();
    extra_stage_gate.stages[0].after_gates.push(gate);
    assert_eq!(restore(&extra_stage_gate), ["the stage's gates differ from the strategy's"]);
    let mut no_group_gate = up.snapshot.clone();
    no_group_gate.stages[0].groups[0].before_gates.clear();
    assert_eq!(restore(&no_group_gate), ["the group's gates differ from the strategy's"]);
    let mut extra_group_gate = up.snapshot.clone();
    let gate = extra_group_gate.stages[0].groups[0].before_gates[0].clone();
    extra_group_gate.stages[0].groups[0].after_gates.push(gate);
    assert_eq!(restore(&extra_group_gate), ["the group's gates differ from the strategy's"]);
    // Members active in a group that has not started.
    let mut early = up.snapshot.clone();
    early.stages[0].groups[0].state = fleetsim::orchestrator::UpdateState::NotStarted;
    early.stages[0].groups[0].members[1].state = fleetsim::orchestrator::UpdateState::Completed;
    assert_eq!(
        restore(&early),
        [
            "the member is Running in a group that is NotStarted",
            "the member is Completed in a group that is NotStarted"
        ]
    );
}

/// `UpdateRun::restore` of the setup's run from `snapshot`, in a fresh world.
fn restore_run(
    up: &Setup,
    snapshot: &fleetsim::orchestrator::RunSnapshot,
) -> Result<fleetsim::orchestrator::UpdateRun, Vec<fleetsim::orchestrator::RestoreProblem>> {
    let spec = &up.scenario.runs[0];
    let mut world = fleetsim::world::World::new(
        &up.scenario.fleet,
        &up.scenario.releases,
        &up.scenario.models,
        up.scenario.settings.world,
        fleetsim::engine::SeedTree::new(up.scenario.seed, 0),
    );
    let id = world.add_run(&spec.name, spec.upgrade.clone(), None);
    fleetsim::orchestrator::UpdateRun::restore(
        id,
        &spec.name,
        up.plan.clone(),
        up.scenario.settings.run,
        &mut world,
        false,
        snapshot,
        up.now,
    )
    .map(|restored| restored.run)
}

/// A restored member has had one attempt when the status shows it started (and it was not skipped):
/// the next attempt's operation id counts on from there. It keeps the message the status shows.
#[test]
fn restored_members_keep_the_attempts_and_messages_the_status_shows() {
    let s = one_group_scenario(4, Value::Null);
    let st = one_group_status(
        "Running",
        &[
            ("m01", "Completed", Some(START), Some("2026-03-02T01:00:00Z")),
            ("m02", "Running", Some("2026-03-02T01:00:00Z"), None),
            ("m03", "Skipped", Some("2026-03-02T01:00:00Z"), Some("2026-03-02T01:00:00Z")),
            ("m04", "NotStarted", None, None),
        ],
        json!({}),
    );
    let up = setup(&s, &st, Some("2026-03-02T01:30:00Z"));
    // The message the status shows for a member is kept, also for one still upgrading.
    let mut snapshot = up.snapshot.clone();
    for (i, member) in snapshot.stages[0].groups[0].members.iter_mut().enumerate() {
        member.note = fleetsim::orchestrator::Note::message(format!("shown for m0{}", i + 1));
    }
    let run = restore_run(&up, &snapshot).unwrap_or_else(|p| panic!("{p:?}"));
    let attempts: Vec<u32> = run.stages[0].groups[0].members.iter().map(|m| m.attempts).collect();
    assert_eq!(attempts, [1, 1, 0, 0]);
    let notes: Vec<String> = run.stages[0].groups[0].members.iter().map(|m| m.note.text()).collect();
    assert_eq!(notes, ["shown for m01", "shown for m02", "shown for m03", ""]);
}

/// A run the user stopped stays stopped: nothing starts until a `start` after the status time.
#[test]
fn a_run_stopped_by_the_user_in_the_status_stays_stopped() {
    let mut st = one_group_status(
        "Stopped",
        &[("m01", "Completed", Some(START), Some("2026-03-02T01:00:00Z")), ("m02", "NotStarted", None, None)],
        json!({"status": {"state": "Stopped"}}),
    );
    st["status"]["stages"][0]["groups"][0]["status"] = status("Stopped", Some(START), None);
    let stopped = scenario(&scenario_json(
        members("m", "g", 2),
        json!({"stages": [{"name": "st", "groups": [{"name": "g"}]}]}),
        json!({}),
        json!({"settings": {"horizon": "2d"}}),
    ));
    let up = setup(&stopped, &st, Some("2026-03-02T02:00:00Z"));
    let f = forecast::report::forecast(&up, &forecast::replicate(&up, 2, 1).unwrap());
    assert_eq!(f.finish.as_ref().unwrap().unfinished, 2, "{:?}", f.finish);
    let restarted = scenario(&scenario_json(
        members("m", "g", 2),
        json!({"stages": [{"name": "st", "groups": [{"name": "g"}]}]}),
        json!({"actions": [{"at": "+4h", "action": "start"}]}),
        json!({}),
    ));
    let up = setup(&restarted, &st, Some("2026-03-02T02:00:00Z"));
    let f = forecast::report::forecast(&up, &forecast::replicate(&up, 2, 1).unwrap());
    assert_eq!(f.finish.unwrap().p50.as_deref(), Some("2026-03-02T05:00:00Z"));
}

/// A group not yet reached in the status (its stage waits on a gate) is reached later as usual: its
/// own before gate opens and its approval is honoured.
#[test]
fn a_group_not_reached_in_the_status_opens_its_gates_when_reached() {
    let strategy = json!({"stages": [{"name": "st", "beforeGates": [{"displayName": "stage", "type": "Approval"}],
        "groups": [{"name": "g", "beforeGates": [{"displayName": "group", "type": "Approval"}]}]}]});
    let s = scenario(&scenario_json(
        members("m", "g", 2),
        strategy,
        json!({"actions": [
            {"at": "+2h", "action": "approve", "gate": {"displayName": "stage"}},
            {"at": "+3h", "action": "approve", "gate": {"displayName": "group"}}]}),
        json!({}),
    ));
    let mut st = one_group_status(
        "Pending",
        &[("m01", "NotStarted", None, None), ("m02", "NotStarted", None, None)],
        json!({
            "status": status("Pending", Some(START), None),
            "beforeGates": [{"displayName": "stage", "status": status("Pending", Some(START), None)}]
        }),
    );
    st["status"]["stages"][0]["groups"][0]["status"] = json!({"state": "NotStarted"});
    st["status"]["stages"][0]["groups"][0]["beforeGates"] =
        json!([{"displayName": "group", "status": {"state": "NotStarted"}}]);
    let up = setup(&s, &st, Some("2026-03-02T01:00:00Z"));
    let f = forecast::report::forecast(&up, &forecast::replicate(&up, 2, 1).unwrap());
    // Group gate approved at 03:00: m01 03:00–04:00, m02 04:00–05:00.
    assert_eq!(f.finish.unwrap().p50.as_deref(), Some("2026-03-02T05:00:00Z"));
}

/// A run stopped before one of its stage's groups was reached (as a status can show it) reaches
/// that group only at the restart: an approval of the group's gate during the stop finds the gate
/// not yet open and is refused, so the gate waits on.
#[test]
fn a_group_not_reached_in_a_stopped_run_is_reached_only_at_the_restart() {
    let strategy = json!({"stages": [{"name": "st", "maxConcurrency": "2", "groups": [
        {"name": "ga"}, {"name": "gb", "beforeGates": [{"displayName": "g", "type": "Approval"}]}]}]});
    let mut fleet = members("a", "ga", 1);
    fleet.extend(members("b", "gb", 1));
    let actions = json!({"actions": [
        {"at": "+1h30m", "action": "approve", "gate": {"displayName": "g"}},
        {"at": "+3h", "action": "start"}]});
    let s = scenario(&scenario_json(fleet, strategy, actions, json!({"settings": {"horizon": "2d"}})));
    let st = json!({
        "name": "r",
        "status": {"status": status("Stopped", Some(START), None), "failureCount": 0, "stages": [
            {"name": "st", "status": status("Stopped", Some(START), None), "failureCount": 0, "groups": [
                {"name": "ga", "status": status("Completed", Some(START), Some("2026-03-02T01:00:00Z")),
                 "members": [{"name": "a01", "status": status("Completed", Some(START), Some("2026-03-02T01:00:00Z"))}]},
                {"name": "gb", "status": {"state": "NotStarted"}, "beforeGates": [{"displayName": "g", "status": {"state": "NotStarted"}}],
                 "members": [{"name": "b01", "status": {"state": "NotStarted"}}]}]}]}
    });
    let up = setup(&s, &st, Some("2026-03-02T01:00:00Z"));
    let f = forecast::report::forecast(&up, &forecast::replicate(&up, 2, 1).unwrap());
    let finish = f.finish.as_ref().unwrap();
    assert_eq!(finish.unfinished, 2, "{finish:?}");
    assert!(f.unfinished[0].what.contains("blocked on gate \"g\" since 2026-03-02T03:00:00Z"), "{:?}", f.unfinished);
}

/// A group taken up from its status can still trip: m02 fails as it starts, over the group's
/// allowance of 0, and the run fails (a group the user skipped could not trip; this one was not).
#[test]
fn a_group_taken_up_from_its_status_can_still_trip() {
    let overrides = json!({"overrides": [{"member": "m02", "outcome": "Failed", "errorCode": "PodDrainFailure"}],
        "duration": {"member": "1h"}, "failure": {"probability": 0.0}});
    // The stage allows failures, so only the group's own threshold can stop m03.
    let strategy = json!({"stages": [{"name": "st", "maxAllowedFailures": "5", "groups": [{"name": "g", "maxAllowedFailures": "0"}]}]});
    let s = scenario(&scenario_json(members("m", "g", 3), strategy, json!({}), json!({"models": overrides})));
    let st = one_group_status(
        "Running",
        &[
            ("m01", "Completed", Some(START), Some("2026-03-02T01:00:00Z")),
            ("m02", "NotStarted", None, None),
            ("m03", "NotStarted", None, None),
        ],
        json!({}),
    );
    let up = setup(&s, &st, Some("2026-03-02T01:00:00Z"));
    let f = forecast::report::forecast(&up, &forecast::replicate(&up, 2, 1).unwrap());
    let finish = f.finish.as_ref().unwrap();
    assert_eq!((finish.completed, finish.failed), (0, 2), "{finish:?}");
    // m03 never starts: two members done (m01 Completed, m02 Failed).
    assert_eq!(f.members_done.last().map(|p| p.p50), Some(2.0));
}

/// A wait skipped before it began (`Skipped`, no start time) in a stage whose after gate is not
/// reached yet: the stage still enters its after phase, so the gate opens and its approval counts.
#[test]
fn a_wait_skipped_before_it_began_still_lets_the_after_gates_open() {
    let strategy = json!({"stages": [
        {"name": "a", "groups": [{"name": "ga"}], "afterStageWaitInSeconds": 7200,
         "afterGates": [{"displayName": "check", "type": "Approval"}]},
        {"name": "b", "groups": [{"name": "gb"}]}]});
    let mut fleet = members("a", "ga", 1);
    fleet.extend(members("b", "gb", 1));
    let actions = json!({"actions": [{"at": "+3h", "action": "approve", "gate": {"displayName": "check"}}]});
    let s = scenario(&scenario_json(fleet, strategy, actions, json!({})));
    let st = json!({
        "name": "r",
        "status": {"status": status("Running", Some(START), None), "failureCount": 0, "stages": [
            {"name": "a", "status": status("Running", Some(START), None), "groups": [
                {"name": "ga", "status": status("Completed", Some(START), Some("2026-03-02T01:00:00Z")),
                 "members": [{"name": "a01", "status": status("Completed", Some(START), Some("2026-03-02T01:00:00Z"))}]}],
             "afterGates": [{"displayName": "check", "status": {"state": "NotStarted"}}],
             "afterStageWaitStatus": {"status": {"state": "Skipped"}, "waitDurationInSeconds": 7200}},
            {"name": "b", "status": {"state": "NotStarted"}, "groups": [
                {"name": "gb", "status": {"state": "NotStarted"}, "members": [{"name": "b01", "status": {"state": "NotStarted"}}]}]}
        ]}
    });
    // The gate opens at the status time (02:00), is approved at 03:00; b01 runs 03:00–04:00.
    let setup = setup(&s, &st, Some("2026-03-02T02:00:00Z"));
    let f = forecast::report::forecast(&setup, &forecast::replicate(&setup, 3, 1).unwrap());
    assert_eq!(f.stages[0].p50.as_deref(), Some("2026-03-02T03:00:00Z"), "{f:?}");
    assert_eq!(f.finish.unwrap().p50.as_deref(), Some("2026-03-02T04:00:00Z"));
}
