//! The command line: exit codes, error lines, report folders (PRODUCT.md).

use std::path::Path;
use std::process::Command;

use crate::support::{binary, root};

fn fleetsim(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = Command::new(binary()).args(args).current_dir(cwd).output().expect("fleetsim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn run_writes_the_report_folder_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("qs");
    let scenario = root().join("scenarios/quickstart.json");
    let (code, stdout, stderr) =
        fleetsim(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("run upgrade-1-33:"), "{stdout}");
    for file in ["members.csv", "timeline.csv", "summary.json", "status/upgrade-1-33.json"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let members = std::fs::read_to_string(out.join("members.csv")).unwrap();
    assert!(members.starts_with(
        "run,stage,group,member,region,state,start,end,from_version,to_version,node_images,failure_code,message\n"
    ));
    assert_eq!(members.lines().count(), 201);
    let timeline = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    assert!(timeline.starts_with("time,run,scope,stage,group,member,gate,from,to,message\n"));
    let resource: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("status/upgrade-1-33.json")).unwrap()).unwrap();
    assert_eq!(resource["type"], "Microsoft.ContainerService/fleets/updateRuns");
    assert!(resource["id"].as_str().unwrap().ends_with("/fleets/fleet/updateRuns/upgrade-1-33"));
    let status = &resource["properties"]["status"];
    assert!(
        status["stages"][0]["groups"][0]["members"][0]["clusterResourceId"]
            .as_str()
            .unwrap()
            .starts_with("/subscriptions/")
    );
    assert!(status["nodeImageSelection"]["selectedNodeImageVersions"][0]["version"].is_string());
    // No staging folders are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[test]
fn default_output_folder_is_reports_slash_name() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/quickstart.json");
    let (code, _, stderr) = fleetsim(&["run", scenario.to_str().unwrap(), "--quiet"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.path().join("reports/quickstart/summary.json").is_file());
}

#[test]
fn seed_flag_overrides_the_scenario_seed() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/quickstart.json");
    let s = scenario.to_str().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    assert_eq!(fleetsim(&["run", s, "--seed", "1", "--out", a.to_str().unwrap(), "-q"], dir.path()).0, 0);
    assert_eq!(fleetsim(&["run", s, "--seed", "2", "--out", b.to_str().unwrap(), "-q"], dir.path()).0, 0);
    let summary = |p: &Path| std::fs::read_to_string(p.join("summary.json")).unwrap();
    assert!(summary(&a).contains("\"seed\": 1"));
    assert_ne!(std::fs::read(a.join("timeline.csv")).unwrap(), std::fs::read(b.join("timeline.csv")).unwrap());
}

#[test]
fn invalid_input_exits_two_with_one_line_per_problem_naming_file_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    std::fs::write(
        &file,
        r#"{"name": "bad", "start": "2026-03-02T00:00:00Z",
            "members": [{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.32.4"}],
            "updateRuns": [{"name": "R1", "managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly", "kubernetesVersion": "1.33.2"}}}]}"#,
    )
    .unwrap();
    let out = dir.path().join("never");
    for args in
        [vec!["validate", file.to_str().unwrap()], vec!["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]]
    {
        let (code, _, stderr) = fleetsim(&args, dir.path());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{stderr}");
        assert!(lines[0].starts_with(&format!("{}: /updateRuns/0/", file.display())), "{stderr}");
        assert!(stderr.contains("/updateRuns/0/name: update run \"R1\" is not a valid name"), "{stderr}");
        assert!(stderr.contains("/updateRuns/0/managedClusterUpdate/upgrade/kubernetesVersion: NodeImageOnly upgrades must not set kubernetesVersion"), "{stderr}");
        assert!(!stderr.contains("panicked"));
    }
    assert!(!out.exists(), "no report for an invalid scenario");
}

#[test]
fn malformed_json_and_missing_files_exit_two() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.json");
    std::fs::write(&file, "{\"name\": \"x\", \"start\": ").unwrap();
    let (code, _, stderr) = fleetsim(&["validate", file.to_str().unwrap()], dir.path());
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!(
            "{}: /start: malformed JSON: EOF while parsing a value at line 1 column 23",
            file.display()
        )),
        "{stderr}"
    );
    let (code, _, stderr) = fleetsim(&["run", "does-not-exist.json"], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("does-not-exist.json: cannot read"), "{stderr}");
}

#[test]
fn validate_accepts_every_shipped_scenario() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let args: Vec<&str> = std::iter::once("validate").chain(files.iter().map(|s| s.as_str())).collect();
    let (code, stdout, stderr) = fleetsim(&args, &root());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
}

#[test]
fn an_unwritable_output_folder_is_an_error_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let out = blocker.join("report");
    let scenario = root().join("scenarios/quickstart.json");
    let (code, _, stderr) = fleetsim(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()], dir.path());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "not a folder");
}

#[test]
fn rerunning_into_an_existing_folder_replaces_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("qs");
    let scenario = root().join("scenarios/quickstart.json");
    assert_eq!(fleetsim(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"], dir.path()).0, 0);
    std::fs::write(out.join("status/stale-run.json"), "{}").unwrap();
    assert_eq!(fleetsim(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"], dir.path()).0, 0);
    assert!(!out.join("status/stale-run.json").exists());
}

#[test]
fn schema_prints_a_json_schema_of_the_scenario_format() {
    let (code, stdout, _) = fleetsim(&["schema"], &root());
    assert_eq!(code, 0);
    let schema: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let text = stdout.as_str();
    assert!(schema.is_object());
    for field in [
        "updateStrategies",
        "updateRuns",
        "maxConcurrency",
        "aksManagedAutoUpgradeSchedule",
        "scheduledStartConfiguration",
    ] {
        assert!(text.contains(field), "schema lacks {field}");
    }
}

#[test]
fn usage_errors_exit_two() {
    let (code, _, stderr) = fleetsim(&["run"], &root());
    assert_eq!(code, 2, "{stderr}");
}

/// The `jsonc` blocks of the README, with their `//` comments stripped.
fn readme_examples() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    readme
        .split("```jsonc\n")
        .skip(1)
        .map(|block| {
            let block = &block[..block.find("\n```").expect("a closed jsonc block")];
            block
                .lines()
                .map(|line| match line.find("  //").or_else(|| line.trim_start().starts_with("//").then_some(0)) {
                    Some(i) => &line[..i],
                    None => line,
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// The annotated examples in the README are valid scenarios (comments stripped).
#[test]
fn the_readme_examples_are_valid_scenarios() {
    let examples = readme_examples();
    assert!(examples.len() >= 2, "the README has the annotated quickstart and a second example");
    for (i, json) in examples.iter().enumerate() {
        if let Err(problems) = fleetsim::scenario::parse_str(json, None) {
            panic!("README example {i} is invalid: {problems:#?}");
        }
    }
}

/// The first annotated example is `scenarios/quickstart.json` itself, not a look-alike.
#[test]
fn the_readme_quickstart_is_the_real_quickstart_file() {
    let annotated: serde_json::Value = serde_json::from_str(&readme_examples()[0]).expect("JSON once uncommented");
    let file = std::fs::read_to_string(root().join("scenarios/quickstart.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(annotated, file, "the README's annotated quickstart differs from scenarios/quickstart.json");
}

/// Writes `text` as `name` in a fresh folder and runs `fleetsim validate` on it.
fn validate_text(name: &str, text: &str) -> (tempfile::TempDir, String, i32, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, text).unwrap();
    let shown = file.to_str().unwrap().to_string();
    let (code, _, stderr) = fleetsim(&["validate", &shown], dir.path());
    let lines = stderr.lines().map(|l| l.strip_prefix(&format!("{shown}: ")).unwrap_or(l).to_string()).collect();
    (dir, shown, code, lines)
}

const START: &str = r#""start": "2026-03-02T00:00:00Z""#;

#[test]
fn every_problem_of_shape_is_reported_in_one_pass() {
    let text = format!(
        r#"{{"name": "x", {START}, "colour": "red", "settings": ["10m"],
            "members": [{{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.32.4", "sise": 3}}]}}"#
    );
    let (_dir, _, code, lines) = validate_text("bad.json", &text);
    assert_eq!(code, 2);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(
        lines[0].starts_with("/colour: unknown field \"colour\"; the fields here are $schema, name,"),
        "{lines:#?}"
    );
    assert_eq!(lines[1], "/settings: must be an object, not an array [\"10m\"]");
    assert!(lines[2].starts_with("/members/0/sise: unknown field \"sise\"; the fields here are name, region"));
}

#[test]
fn types_are_described_in_the_api_s_terms_not_rust_s() {
    let text = format!(
        r#"{{"name": "x", {START}, "seed": "seven",
            "members": [{{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.32.4",
                "nodePools": [{{"name": "a", "maxSurge": {{"x": 1}}}}]}}],
            "memberGenerators": [{{"count": 2, "kubernetesVersions": {{"1.32.4": 1}}, "nodePools": {{"count": []}}}}],
            "updateStrategies": {{"s": {{"stages": [{{"name": "a", "memberSelector": "env=prod", "afterStageWaitInSeconds": "1h"}}]}}}}}}"#
    );
    let (_dir, _, code, lines) = validate_text("bad.json", &text);
    assert_eq!(code, 2);
    assert_eq!(
        lines,
        [
            "/seed: must be a whole number ≥ 0, not the string \"seven\"",
            "/members/0/nodePools/0/maxSurge: must be a string or a whole number, such as \"25%\" or \"3\", not an object {\"x\":1}",
            "/memberGenerators/0/nodePools/count: must be a whole number, an object with min and max, an object with median and p90 or an object of numbers, not an empty array",
            "/updateStrategies/s/stages/0/memberSelector: must be an object with byLabel, not the string \"env=prod\"",
            "/updateStrategies/s/stages/0/afterStageWaitInSeconds: must be a whole number of seconds, not the string \"1h\"",
        ]
    );
    for line in &lines {
        for internal in ["untagged", "Dto", "u64", "expected struct", "invalid length"] {
            assert!(!line.contains(internal), "{line}");
        }
    }
}

#[test]
fn arrays_are_not_objects_and_missing_fields_are_named() {
    let (_dir, _, code, lines) = validate_text("top.json", "[]");
    assert_eq!(code, 2);
    assert_eq!(lines, ["/: must be an object with name and start, not an empty array"]);
    let text = format!(r#"{{"name": "x", {START}, "members": [{{"name": "m1", "region": "westeurope"}}]}}"#);
    let (_dir, _, code, lines) = validate_text("missing.json", &text);
    assert_eq!(code, 2);
    assert_eq!(lines, ["/members/0/kubernetesVersion: missing; this field is required: a string"]);
}

#[test]
fn echoed_values_are_escaped_and_cut() {
    let long = "Q".repeat(5000);
    let text = format!(
        r#"{{"name": "x", {START}, "members": [{{"name": "bad\n\u001b[31mname", "region": "{long}", "kubernetesVersion": "1.32.4"}}]}}"#
    );
    let (_dir, _, code, lines) = validate_text("echo.json", &text);
    assert_eq!(code, 2);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].starts_with(r#"/members/0/name: member "bad\n\u{1b}[31mname" is not a valid name"#), "{lines:#?}");
    assert!(lines[1].starts_with(&format!("/members/0/region: \"{}…\" is not an Azure region", "Q".repeat(80))));
    assert!(lines.iter().all(|l| !l.chars().any(char::is_control) && l.len() < 300), "{lines:#?}");
}

#[test]
fn pointers_are_rfc_6901_and_generated_members_are_named_in_the_message() {
    let text = format!(
        r#"{{"name": "x", {START}, "memberGenerators": [{{"count": 3, "namePattern": "Bad_{{index}}", "kubernetesVersions": {{"1.32.4": 1}}}}],
            "members": [{{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.32.4", "labels": {{"a/b~c": "x y"}}}}]}}"#
    );
    let (_dir, _, code, lines) = validate_text("pointers.json", &text);
    assert_eq!(code, 2);
    // The key `a/b~c` is written `a~1b~0c` in a pointer.
    assert!(lines[0].starts_with("/members/0/labels/a~1b~0c: the name \"b~c\" of label key \"a/b~c\""), "{lines:#?}");
    assert!(lines[1].starts_with("/members/0/labels/a~1b~0c: label value \"x y\" must be empty"), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.starts_with(
            "/memberGenerators/0/namePattern: generated member 1 (\"Bad_1\", /name): member \"Bad_1\" is not a valid name"
        )),
        "{lines:#?}"
    );
    for line in &lines {
        let pointer = line.split(": ").next().unwrap();
        assert!(fleetsim::scenario::problem::is_pointer(pointer) && !pointer.contains(' '), "{line}");
    }
}

#[test]
fn names_that_cannot_name_a_folder_are_invalid() {
    let long = "a".repeat(256);
    for (name, expected) in [
        ("..", "\"..\" cannot name a report folder: it names a folder that exists already"),
        (".", "\".\" cannot name a report folder"),
        ("a\\nb", "\"a\\nb\" cannot name a report folder: no control characters"),
        ("nul\\u0000", "cannot name a report folder: no control characters"),
        ("CON", "\"CON\" cannot name a report folder: Windows reserves it for a device"),
        ("com1.json", "Windows reserves it"),
        ("a/b", "cannot name a report folder: no '/' or '\\'"),
        (long.as_str(), "a scenario name of 256 bytes cannot name a report folder: at most 200"),
    ] {
        let text = format!(r#"{{"name": "{name}", {START}}}"#);
        let (dir, file, code, lines) = validate_text("names.json", &text);
        assert_eq!(code, 2, "{name}: {lines:?}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("/name: ") && lines[0].contains(expected), "{name}: {lines:?}");
        let (code, _, _) = fleetsim(&["run", &file, "-q"], dir.path());
        assert_eq!(code, 2);
        assert!(!dir.path().join("reports").exists());
    }
    let sweep = r#"{"name": "CON", "scenario": "base.json", "parameters": [{"pointer": "/seed", "values": [1]}], "replications": 1}"#;
    let (_dir, _, code, lines) = validate_text("sweep.json", sweep);
    assert_eq!(code, 2);
    assert!(
        lines.contains(&"/name: \"CON\" cannot name an output folder: Windows reserves it for a device".to_string()),
        "{lines:?}"
    );
}

#[test]
fn sweep_of_a_scenario_says_to_use_run_and_deep_values_do_not_hide_the_kind() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/quickstart.json");
    let (code, _, stderr) = fleetsim(&["sweep", scenario.to_str().unwrap(), "--out", "never"], dir.path());
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!("{}: a scenario file: run it with `fleetsim run {}`", scenario.display(), scenario.display())
    );
    assert!(!dir.path().join("never").exists());
    // A value nested far deeper than serde_json parses does not make a sweep look like a scenario.
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let file = dir.path().join("deep.json");
    std::fs::write(&file, format!(r#"{{"name": "s", "description": {deep}, "parameters": [], "replications": 1}}"#))
        .unwrap();
    let (code, _, stderr) = fleetsim(&["run", file.to_str().unwrap()], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("a sweep file: run it with `fleetsim sweep"), "{stderr}");
    let (code, _, stderr) = fleetsim(&["validate", file.to_str().unwrap()], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("malformed JSON: values nested more than 128 levels deep at line 1"), "{stderr}");
}

#[test]
fn repeated_problems_collapse() {
    let generator = r#"{"count": 20000, "kubernetesVersions": {"1.32.4": 1}}"#;
    let text = format!(r#"{{"name": "dup", {START}, "memberGenerators": [{generator}, {generator}]}}"#);
    let (_dir, _, code, lines) = validate_text("dup.json", &text);
    assert_eq!(code, 2);
    assert_eq!(
        lines,
        [
            "/memberGenerators/1: member \"member-00001\" (generated member 1) is defined twice (also as generated member 1 of /memberGenerators/0)",
            "/memberGenerators/1: … and 19,999 more like this",
        ]
    );
}

#[test]
fn sweep_files_report_every_problem_of_shape_too() {
    let sweep = format!(
        r#"{{"name": "s", "replication": 2, "parameters": {{"pointer": "/seed"}},
            "scenario": {{"name": "b", {START}, "seed": -3}}}}"#
    );
    let (_dir, _, code, lines) = validate_text("sweep.json", &sweep);
    assert_eq!(code, 2);
    assert_eq!(
        lines,
        [
            "/replication: unknown field \"replication\"; did you mean \"replications\"?",
            "/parameters: must be an array of objects with pointer, not an object {\"pointer\":\"/seed\"}",
            "/scenario/seed: must be a whole number ≥ 0, not the number -3",
            "/replications: missing; this field is required: a whole number ≥ 0",
        ]
    );
}

#[test]
fn io_errors_of_a_sweep_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let out = blocker.join("sweep");
    let sweep = root().join("scenarios/sweep-concurrency.json");
    let (code, _, stderr) =
        fleetsim(&["sweep", sweep.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"], dir.path());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(&format!("`{}", blocker.display())), "{stderr}");
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "not a folder");
}
