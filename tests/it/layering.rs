//! The layering ARCHITECTURE.md states, checked on the source: a module names only modules below it
//! (`crate::NAME`), and inside `scenario` the steps of the build depend one way.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Bottom to top; a module may use those before it.
const LAYERS: [&[&str]; 10] = [
    &["engine", "text", "output"],
    &["fleet"],
    &["orchestrator"],
    &["world"],
    &["scenario"],
    &["autoupgrade", "azure"],
    &["simulation"],
    &["report"],
    &["sweep", "forecast"],
    &["tune"],
];

fn layer(module: &str) -> usize {
    LAYERS.iter().position(|l| l.contains(&module)).unwrap_or_else(|| panic!("module {module} has no layer"))
}

fn sources(at: &Path, out: &mut Vec<PathBuf>) {
    if at.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(at).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for e in entries {
            sources(&e, out);
        }
    } else if at.extension().is_some_and(|e| e == "rs") {
        out.push(at.to_path_buf());
    }
}

/// The names after `prefix` (`crate::`, `super::`) in code lines of `text`, doc comments left out.
fn named(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            rest = &rest[at + prefix.len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sim");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap();
        let module = relative.components().next().unwrap().as_os_str().to_str().unwrap().trim_end_matches(".rs");
        if ["lib", "main"].contains(&module) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for used in named(&text, "crate::") {
            if used != module && layer(&used) >= layer(module) {
                wrong.push(format!("{}: {module} uses crate::{used}", relative.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn the_scenario_build_steps_depend_one_way() {
    // Each step may use only those before it (`dto`, `problem` and the DTO files are shared); the
    // release calendar's two files (explicit releases, the generated stream) are one step.
    const ORDER: [&[&str]; 9] = [
        &["ctx"],
        &["pools"],
        &["models"],
        &["generate"],
        &["members"],
        &["releases", "stream"],
        &["strategies"],
        &["runs"],
        &["profiles"],
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sim/scenario");
    let mut wrong = Vec::new();
    for (i, step) in ORDER.iter().enumerate() {
        for file in *step {
            let text = std::fs::read_to_string(dir.join(format!("{file}.rs"))).unwrap();
            for used in named(&text, "super::") {
                let later = ORDER[i + 1..].iter().any(|s| s.contains(&used.as_str()));
                if later || used == "build" || (used == *file) {
                    wrong.push(format!("scenario/{file}.rs uses super::{used}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "scenario build steps reach up:\n{}", wrong.join("\n"));
}
