//! A structured mutation test: the example scenarios and sweeps, mutated thousands of times (values
//! replaced by others of every JSON type, fields removed, renamed, added, arrays and objects swapped),
//! must each give a valid scenario or one clear line per problem: no panic, a valid JSON Pointer
//! (RFC 6901) that leads into the file, no Rust or serde terms, nothing raw from the file that could
//! break the line. The bulk runs in-process; a smaller set goes through the binary and checks exit
//! codes and that nothing is written after exit 2.
//!
//! Seeded and reproducible: `FLEETSIM_FUZZ_SEED=N` replays a run, `FLEETSIM_FUZZ_CASES=N` runs more
//! (a failure prints the seed and the case's text).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::Command;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use fleetsim::scenario::problem::is_pointer;
use fleetsim::sweep::plan::from_text;

use crate::support::{binary, root};

/// Words of Rust and serde that must never reach a user.
const INTERNALS: &[&str] = &[
    "untagged",
    "variant",
    "struct ",
    "Dto",
    "u64",
    "i64",
    "u32",
    "f64",
    "usize",
    "invalid type:",
    "invalid length",
    "data did not match",
    "expected one of `",
    "panicked",
    "Option<",
    "Vec<",
    "BTreeMap",
    fleetsim::scenario::NOT_ACCEPTED,
];

fn seed() -> u64 {
    std::env::var("FLEETSIM_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_f1ee)
}

fn cases(default: usize) -> usize {
    std::env::var("FLEETSIM_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// The example files, with generators cut to a dozen members so that thousands of cases stay fast
/// (the shapes and rules are the same), and sweeps with their base scenario inline.
fn corpus() -> (Vec<Value>, Vec<Value>) {
    let dir = root().join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let (mut scenarios, mut sweeps) = (Vec::new(), Vec::new());
    for file in files {
        let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        if value.get("space").is_some() {
            continue; // tune files: their checks are in tune.rs
        }
        shrink(&mut value);
        if value.get("parameters").is_some() {
            if let Some(base) = value["scenario"].as_str() {
                let mut inline: Value =
                    serde_json::from_str(&std::fs::read_to_string(dir.join(base)).unwrap()).unwrap();
                shrink(&mut inline);
                value["scenario"] = inline;
            }
            let mut sampled = value.clone();
            sampled["sample"] = json!({"method": "latinHypercube", "points": 3, "seed": 1});
            sampled["parameters"][0] = json!({"name": "c", "pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "range": {"from": 1, "to": 9}});
            sweeps.push(value);
            sweeps.push(sampled);
        } else {
            scenarios.push(value);
        }
    }
    assert!(scenarios.len() >= 5 && !sweeps.is_empty());
    (scenarios, sweeps)
}

fn shrink(value: &mut Value) {
    for key in ["memberGenerators", "scenario"] {
        let generators = match key {
            "scenario" => value.get_mut("scenario").and_then(|s| s.get_mut("memberGenerators")),
            _ => value.get_mut(key),
        };
        for generator in generators.and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(count) = generator.get("count").and_then(Value::as_i64) {
                generator["count"] = json!(count.min(12));
            }
        }
    }
}

/// Every JSON Pointer of a document (the root included).
fn pointers(value: &Value, here: String, out: &mut Vec<String>) {
    out.push(here.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(v, format!("{here}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A value of any JSON type, some of them the classic troublemakers.
fn any_value(rng: &mut ChaCha8Rng) -> Value {
    let long: String = "x".repeat(300);
    let choices = [
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(18_446_744_073_709_551_615u64),
        json!(1e300),
        json!(""),
        json!("3"),
        json!("25%"),
        json!("10m"),
        json!("+1h"),
        json!("line\nbreak\u{1b}[31m\u{202e}"),
        json!(long),
        json!(".."),
        json!("CON"),
        json!("env in (a b"),
        json!([]),
        json!(["10m"]),
        json!([1, "a", null]),
        json!({}),
        json!({"x": 1}),
        json!({"median": "1m", "p90": 5}),
        json!({"byLabel": "ring=canary"}),
    ];
    choices.choose(rng).unwrap().clone()
}

/// A near-miss of a key (a typo) or a foreign one.
fn typo(rng: &mut ChaCha8Rng, key: &str) -> String {
    let mut chars: Vec<char> = key.chars().collect();
    match rng.random_range(0..4) {
        0 if chars.len() > 1 => {
            chars.remove(rng.random_range(0..chars.len()));
        }
        1 if chars.len() > 1 => {
            let i = rng.random_range(0..chars.len() - 1);
            chars.swap(i, i + 1);
        }
        2 => chars.push('s'),
        _ => return ["colour", "sise", "a/b~c", "\u{0}", "$ref"].choose(rng).unwrap().to_string(),
    }
    chars.into_iter().collect()
}

fn mutate(rng: &mut ChaCha8Rng, doc: &mut Value) {
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    let target = all.choose(rng).unwrap().clone();
    let node = doc.pointer_mut(&target).unwrap();
    match rng.random_range(0..8) {
        // Another value (of any type) in its place.
        0..=2 => *node = any_value(rng),
        // A field removed, renamed or added.
        3 => {
            if let Value::Object(map) = node
                && let Some(key) = map.keys().cloned().collect::<Vec<_>>().choose(rng)
            {
                map.shift_remove(key);
            }
        }
        4 => {
            if let Value::Object(map) = node
                && let Some(key) = map.keys().cloned().collect::<Vec<_>>().choose(rng)
            {
                let value = map.shift_remove(key).unwrap();
                map.insert(typo(rng, key), value);
            }
        }
        5 => {
            if let Value::Object(map) = node {
                map.insert(typo(rng, "field"), any_value(rng));
            }
        }
        // An object as an array of its values, a value wrapped in an array, an array element twice.
        6 => {
            *node = match node.take() {
                Value::Object(map) => Value::Array(map.into_iter().map(|(_, v)| v).collect()),
                Value::Array(mut items) if !items.is_empty() => {
                    let i = rng.random_range(0..items.len());
                    items.push(items[i].clone());
                    Value::Array(items)
                }
                other => Value::Array(vec![other]),
            }
        }
        // A number as text, text as a number.
        _ => {
            *node = match node.take() {
                Value::Number(n) => Value::String(n.to_string()),
                Value::String(s) => s.parse::<f64>().map(|f| json!(f)).unwrap_or(json!(s.len())),
                other => Value::Object(Map::from_iter([("value".to_string(), other)])),
            }
        }
    }
}

/// Checks one problem line and its pointer; `doc` is the file the pointer is in.
fn check_problem(path: &str, line: &str, doc: Option<&Value>) -> Result<(), String> {
    if !is_pointer(path) {
        return Err(format!("not an RFC 6901 pointer: {path:?}"));
    }
    if let Some(doc) = doc {
        // The pointer leads to the value, or (for a missing field) to the object it is missing from.
        let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
        if doc.pointer(path).is_none() && doc.pointer(parent).is_none() {
            return Err(format!("pointer {path:?} leads nowhere in the file"));
        }
    }
    if line.chars().any(char::is_control) {
        return Err(format!("raw control character in {line:?}"));
    }
    if line.chars().count() > 700 {
        return Err(format!("a line of {} characters: {line}", line.chars().count()));
    }
    if let Some(word) = INTERNALS.iter().find(|w| line.contains(**w)) {
        return Err(format!("internal wording {word:?} in {line:?}"));
    }
    Ok(())
}

/// Mutated scenarios, in-process: a valid scenario or problems that pass [`check_problem`].
#[test]
fn mutated_scenarios_give_clear_problems_and_never_panic() {
    let (scenarios, _) = corpus();
    let seed = seed();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let started = std::time::Instant::now();
    let (mut valid, mut invalid) = (0, 0);
    for case in 0..cases(3000) {
        let mut doc = scenarios.choose(&mut rng).unwrap().clone();
        for _ in 0..rng.random_range(1..=3) {
            mutate(&mut rng, &mut doc);
        }
        let mut text = doc.to_string();
        // One case in ten is broken as text: cut short, or with a stray character.
        if rng.random_ratio(1, 10) {
            let at = rng.random_range(0..text.len());
            let at = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            match rng.random_range(0..2) {
                0 => text.truncate(at),
                _ => text.insert(at, *['"', ',', ']', '}', '\\', '\u{0}'].choose(&mut rng).unwrap()),
            }
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| fleetsim::scenario::parse_str(&text, None)));
        let fail = |why: String| panic!("case {case} of seed {seed}: {why}\n{text}");
        match outcome {
            Err(_) => fail("panicked".into()),
            Ok(Ok(_)) => valid += 1,
            Ok(Err(problems)) => {
                invalid += 1;
                assert!(!problems.is_empty());
                for p in &problems {
                    if let Err(why) = check_problem(&p.path, &p.to_string(), Some(&doc)) {
                        fail(why);
                    }
                }
            }
        }
    }
    eprintln!("{} mutated scenarios in {:.1?}: {valid} valid, {invalid} invalid", valid + invalid, started.elapsed());
    assert!(invalid > valid, "most mutations should break the file");
}

/// Mutated sweeps (the base scenario inline, so its fields are mutated too), in-process.
#[test]
fn mutated_sweeps_give_clear_problems_and_never_panic() {
    let (_, sweeps) = corpus();
    let seed = seed() ^ 1;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let started = std::time::Instant::now();
    let n = cases(600);
    for case in 0..n {
        let mut doc = sweeps.choose(&mut rng).unwrap().clone();
        for _ in 0..rng.random_range(1..=3) {
            mutate(&mut rng, &mut doc);
        }
        let text = doc.to_string();
        let outcome = catch_unwind(AssertUnwindSafe(|| from_text(&text, "sweep.json", &root().join("scenarios"))));
        let fail = |why: String| panic!("case {case} of seed {seed}: {why}\n{text}");
        match outcome {
            Err(_) => fail("panicked".into()),
            Ok(Ok(_)) => {}
            Ok(Err(problems)) => {
                for p in &problems {
                    let own = p.file == "sweep.json";
                    if !own && !p.file.ends_with(".json") {
                        fail(format!("problem names no file: {p}"));
                    }
                    if let Err(why) = check_problem(&p.path, &p.to_string(), own.then_some(&doc)) {
                        fail(why);
                    }
                }
            }
        }
    }
    eprintln!("{n} mutated sweeps in {:.1?}", started.elapsed());
}

fn fleetsim(args: &[&str], cwd: &Path) -> (i32, String) {
    let out = Command::new(binary()).args(args).current_dir(cwd).output().expect("fleetsim runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
}

/// A smaller set through the binary: exit 0 or 2, every line naming the file, nothing written on 2.
#[test]
fn mutated_files_through_the_cli_exit_0_or_2_and_leave_nothing_on_2() {
    let (scenarios, sweeps) = corpus();
    let seed = seed() ^ 2;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    for case in 0..cases(40) {
        let sweep = case % 4 == 3;
        let mut doc = if sweep { sweeps.choose(&mut rng) } else { scenarios.choose(&mut rng) }.unwrap().clone();
        if sweep {
            doc["replications"] = json!(1);
        }
        for _ in 0..rng.random_range(1..=2) {
            mutate(&mut rng, &mut doc);
        }
        let file = dir.path().join(format!("case-{case}.json"));
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = dir.path().join(format!("out-{case}"));
        let (file_arg, out_arg) = (file.to_str().unwrap(), out.to_str().unwrap());
        let command = if sweep { "sweep" } else { "run" };
        for args in [vec!["validate", file_arg], vec![command, file_arg, "--out", out_arg, "-q"]] {
            let (code, stderr) = fleetsim(&args, dir.path());
            let context = format!("case {case} of seed {seed}, {args:?}: exit {code}\n{stderr}\n{doc}");
            assert!(code == 0 || code == 2, "{context}");
            if code == 2 {
                assert!(!stderr.is_empty(), "{context}");
                for line in stderr.lines() {
                    assert!(line.starts_with(file_arg) || line.starts_with("error: "), "{context}");
                    let rest = line.strip_prefix(file_arg).and_then(|r| r.strip_prefix(": ")).unwrap_or(line);
                    // `/pointer: message`, or a line about the whole file (the kind of file, reading it).
                    if let Some((pointer, _)) = rest.split_once(": ").filter(|(p, _)| p.starts_with('/')) {
                        let pointer = if pointer == "/" { "" } else { pointer };
                        // A pointer with an escaped character (a key with a control character) is
                        // shown escaped, so it is checked for its syntax only.
                        let doc = (line.starts_with(file_arg) && !pointer.contains('\\')).then_some(&doc);
                        check_problem(pointer, line, doc).unwrap_or_else(|why| panic!("{why}: {context}"));
                    } else {
                        check_problem("", line, None).unwrap_or_else(|why| panic!("{why}: {context}"));
                    }
                }
                assert!(!out.exists(), "an output folder after exit 2: {context}");
            }
        }
    }
}
