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
    let status: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("status/upgrade-1-33.json")).unwrap()).unwrap();
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

/// The annotated example in the README is a valid scenario (comments stripped).
#[test]
fn the_readme_example_is_a_valid_scenario() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find("```jsonc\n").expect("README has a jsonc example") + "```jsonc\n".len();
    let end = start + readme[start..].find("\n```").unwrap();
    let json: String = readme[start..end]
        .lines()
        .map(|line| match line.find("  //").or_else(|| line.trim_start().starts_with("//").then_some(0)) {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if let Err(problems) = fleetsim::scenario::parse_str(&json, None) {
        panic!("README example is invalid: {problems:#?}");
    }
}
