//! Tests: output paths. fleetsim writes whole outputs or nothing, never over a file or folder it did
//! not write, never into the working directory, and leaves no staging folder behind after a signal
//! or a kill (README, "Outputs").

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{binary, members, scenario_json};

/// A temporary folder holding `small.json`: three members upgraded one by one.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.json");
    std::fs::write(&scenario, scenario_json(members("m", "g", 3), json!(null), json!({}), json!({}))).unwrap();
    (dir, scenario)
}

fn fleetsim(args: &[&str], cwd: &Path) -> Output {
    Command::new(binary()).args(args).current_dir(cwd).output().expect("fleetsim runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// Every name in `dir`, hidden ones included, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    names.sort();
    names
}

fn run_into(dir: &Path, scenario: &Path, out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", scenario.to_str().unwrap(), "--out", out, "-q"];
    args.extend_from_slice(extra);
    fleetsim(&args, dir)
}

#[test]
fn a_folder_fleetsim_did_not_write_is_refused_and_kept() {
    let (dir, scenario) = workspace();
    let keep = dir.path().join("keep");
    std::fs::create_dir(&keep).unwrap();
    std::fs::write(keep.join("notes.txt"), "x").unwrap();
    let out = run_into(dir.path(), &scenario, "keep", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("keep: ") && text.contains(".fleetsim-report") && text.contains("--force"), "{text}");
    assert_eq!(listing(&keep), ["notes.txt"]);
    assert_eq!(listing(dir.path()), ["keep", "small.json"], "no staging folder left");

    // --force replaces any folder.
    let out = run_into(dir.path(), &scenario, "keep", &["--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!keep.join("notes.txt").exists());
    assert!(keep.join(".fleetsim-report").is_file() && keep.join("summary.json").is_file());
}

#[test]
fn an_empty_folder_or_a_report_folder_is_replaced_whole() {
    let (dir, scenario) = workspace();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    assert_eq!(run_into(dir.path(), &scenario, "empty", &[]).status.code(), Some(0));
    let report = dir.path().join("empty");
    assert!(report.join(".fleetsim-report").is_file());
    // A second run replaces the report, stale files and all.
    std::fs::write(report.join("status/stale-run.json"), "{}").unwrap();
    assert_eq!(run_into(dir.path(), &scenario, "empty", &[]).status.code(), Some(0));
    assert!(!report.join("status/stale-run.json").exists());
    assert!(report.join("members.csv").is_file());
    assert_eq!(listing(dir.path()), ["empty", "small.json"]);
}

#[test]
fn the_working_directory_and_its_parents_are_refused() {
    let (dir, scenario) = workspace();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "x").unwrap();
    let real_work = work.canonicalize().unwrap();
    let parent_of_work = format!("../{}", real_work.file_name().unwrap().to_string_lossy());
    for target in [".", "..", "./", "../..", "/", parent_of_work.as_str(), real_work.to_str().unwrap()] {
        for force in [&[][..], &["--force"][..]] {
            let out = run_into(&work, &scenario, target, force);
            assert_eq!(out.status.code(), Some(2), "--out {target:?}: {}", stderr(&out));
            let text = stderr(&out);
            assert_eq!(text.lines().count(), 1, "{text}");
            assert!(text.contains("give a"), "{text}");
        }
    }
    assert_eq!(listing(&work), ["notes.txt"]);
    assert_eq!(listing(dir.path()), ["small.json", "work"], "no .partial debris");
}

#[test]
fn an_existing_file_as_out_is_refused_untouched() {
    let (dir, scenario) = workspace();
    std::fs::write(dir.path().join("afile"), "mine").unwrap();
    for force in [&[][..], &["--force"][..]] {
        let out = run_into(dir.path(), &scenario, "afile", force);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(stderr(&out), "afile: exists and is not a folder; choose another --out\n");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("afile")).unwrap(), "mine");
    assert_eq!(listing(dir.path()), ["afile", "small.json"]);
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_to_a_report_folder_is_followed_and_kept() {
    let (dir, scenario) = workspace();
    assert_eq!(run_into(dir.path(), &scenario, "real", &[]).status.code(), Some(0));
    std::os::unix::fs::symlink("real", dir.path().join("link")).unwrap();
    assert_eq!(run_into(dir.path(), &scenario, "link", &[]).status.code(), Some(0));
    assert!(std::fs::symlink_metadata(dir.path().join("link")).unwrap().file_type().is_symlink());
    assert!(dir.path().join("real/.fleetsim-report").is_file());
    assert_eq!(listing(dir.path()), ["link", "real", "small.json"]);
}

// ----- single files --------------------------------------------------------------------------------

fn dump_into(dir: &Path, scenario: &Path, target: &str) -> Output {
    run_into(dir, scenario, "report", &["--dump-fleet", target])
}

#[test]
fn dump_fleet_replaces_a_regular_file_atomically() {
    let (dir, scenario) = workspace();
    let fleet = dir.path().join("fleet.json");
    std::fs::write(&fleet, "old").unwrap();
    let out = dump_into(dir.path(), &scenario, "fleet.json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let members: serde_json::Value = serde_json::from_slice(&std::fs::read(&fleet).unwrap()).unwrap();
    assert_eq!(members.as_array().unwrap().len(), 3);
    assert_eq!(listing(dir.path()), ["fleet.json", "report", "small.json"], "no temporary file left");

    // A folder is not a file.
    let out = dump_into(dir.path(), &scenario, "report");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), "report: is a folder; give a file name\n");
}

#[cfg(unix)]
#[test]
fn dump_fleet_writes_devices_pipes_and_links_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, scenario) = workspace();
    // A character device (as root, the old code replaced it with a regular file).
    let out = dump_into(dir.path(), &scenario, "/dev/null");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    // A full device is an error naming it, and stays a device.
    if Path::new("/dev/full").exists() {
        let out = dump_into(dir.path(), &scenario, "/dev/full");
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr(&out), "error: /dev/full: No space left on device (os error 28)\n");
        assert!(std::fs::metadata("/dev/full").unwrap().file_type().is_char_device());
    }
    // A symbolic link to a device stays a link.
    std::os::unix::fs::symlink("/dev/null", dir.path().join("null-link")).unwrap();
    assert_eq!(dump_into(dir.path(), &scenario, "null-link").status.code(), Some(0));
    assert!(std::fs::symlink_metadata(dir.path().join("null-link")).unwrap().file_type().is_symlink());
    // A symbolic link to a regular file stays a link; its target gets the fleet.
    std::fs::write(dir.path().join("target.json"), "old").unwrap();
    std::os::unix::fs::symlink("target.json", dir.path().join("file-link")).unwrap();
    assert_eq!(dump_into(dir.path(), &scenario, "file-link").status.code(), Some(0));
    assert!(std::fs::symlink_metadata(dir.path().join("file-link")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(dir.path().join("target.json")).unwrap().starts_with('['));
    // A FIFO is written to, not replaced.
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let out = dump_into(dir.path(), &scenario, "fifo");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(reader.join().unwrap().starts_with(b"["));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(listing(dir.path()), ["fifo", "file-link", "null-link", "report", "small.json", "target.json"]);
}

#[test]
fn dump_fleet_to_a_closed_pipe_ends_quietly() {
    let (dir, scenario) = workspace();
    let mut child = Command::new(binary())
        .args(["run", scenario.to_str().unwrap(), "--out", "report", "--dump-fleet", "-"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // like `| head` that has read enough
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

// ----- signals and kills ---------------------------------------------------------------------------

/// Starts `run --out report` with each staged file delayed, and waits until its staging folder
/// exists. Returns the child and the staging folder.
fn start_slow_run(dir: &Path, scenario: &Path) -> (std::process::Child, PathBuf) {
    let child = Command::new(binary())
        .args(["run", scenario.to_str().unwrap(), "--out", "report", "-q"])
        .env("FLEETSIM_TEST_WRITE_DELAY_MS", "300")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let staging = dir.join(format!(".report.partial-{}", child.id()));
    let started = Instant::now();
    while !staging.exists() {
        assert!(started.elapsed() < Duration::from_secs(30), "the report was never staged");
        std::thread::sleep(Duration::from_millis(10));
    }
    (child, staging)
}

#[cfg(unix)]
fn send(child: &std::process::Child, signal: i32) {
    // SAFETY: signalling a child process we started and have not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

#[cfg(unix)]
#[test]
fn sigint_and_sigterm_remove_the_staging_folder_and_keep_the_old_report() {
    let (dir, scenario) = workspace();
    assert_eq!(run_into(dir.path(), &scenario, "report", &[]).status.code(), Some(0));
    let before = std::fs::read(dir.path().join("report/members.csv")).unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (child, staging) = start_slow_run(dir.path(), &scenario);
        send(&child, signal);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(128 + signal), "{}", stderr(&out));
        assert!(!staging.exists(), "the staging folder is removed");
        assert_eq!(listing(dir.path()), ["report", "small.json"]);
        assert_eq!(std::fs::read(dir.path().join("report/members.csv")).unwrap(), before);
    }
}

#[cfg(unix)]
#[test]
fn the_next_run_removes_the_staging_folder_of_a_killed_one() {
    let (dir, scenario) = workspace();
    let (mut child, staging) = start_slow_run(dir.path(), &scenario);
    child.kill().unwrap(); // SIGKILL: nothing can clean up
    child.wait().unwrap();
    assert!(staging.exists());
    // A staging folder of a live process (this test) is left alone.
    let live = dir.path().join(format!(".report.partial-{}", std::process::id()));
    std::fs::create_dir(&live).unwrap();
    assert_eq!(run_into(dir.path(), &scenario, "report", &[]).status.code(), Some(0));
    assert!(!staging.exists(), "the dead process's staging folder is gone");
    assert!(live.exists(), "a live process's staging folder is kept");
    assert!(dir.path().join("report/.fleetsim-report").is_file());
}

// ----- command-line details ------------------------------------------------------------------------

#[test]
fn threads_zero_is_rejected() {
    let (dir, _) = workspace();
    let out = fleetsim(&["sweep", "sweep.json", "--threads", "0"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("give a whole number of at least 1"), "{}", stderr(&out));
}

/// `--dump-fleet` never replaces the scenario it runs, never lands in the report folder (which the
/// report replaces whole), and names a missing folder: exit 2 before anything is simulated.
#[test]
fn dump_fleet_never_takes_the_scenario_or_the_report_folder() {
    let (dir, scenario) = workspace();
    let before = std::fs::read(&scenario).unwrap();
    let out = run_into(dir.path(), &scenario, "report", &["--dump-fleet", "small.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("names the scenario file itself"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&scenario).unwrap(), before, "the scenario is kept");
    let out = run_into(dir.path(), &scenario, "report", &["--dump-fleet", "report/fleet.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("inside the report folder"), "{}", stderr(&out));
    let out = run_into(dir.path(), &scenario, "report", &["--dump-fleet", "nowhere/fleet.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("the folder nowhere does not exist"), "{}", stderr(&out));
    assert_eq!(listing(dir.path()), ["small.json"], "nothing written");
}
