//! Labels the tuner assigns: a space field such as `{"label": "ring", "assign": [{"canary": 0.01,
//! "early": 0.2, "broad": "rest"}, …]}` gives every member of the fleet, explicit and generated, a
//! value of the label by the fractions of the candidate's alternative.
//!
//! Members are ranked by a hash of the label key and their name (never by their place in a list or
//! a random stream), and the values take the ranks in order: the first value the first
//! ⌈f₁ × N⌉ members, the second the members up to ⌈(f₁ + f₂) × N⌉, and so on, `rest` the others.
//! So the same members get a value whatever else varies, and a 1 % canary is inside a 2 % one.
//!
//! Generated members cannot carry a label of their own, so a candidate with an assignment has its
//! fleet written out: the generators are replaced by their members in the scenario's member format
//! (what `fleetsim run --dump-fleet` prints), each with the assigned label. That scenario simulates
//! exactly like the generated one (the same members, names and attributes), and is what
//! `recommended/<world>.json` holds.

use serde_json::{Map, Value};

use crate::engine::name_key;
use crate::engine::rng::mix64;
use crate::scenario;
use crate::text::echo;

/// Alternatives of a label field, each the values in order with their share.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelField {
    pub key: String,
    pub sets: Vec<Vec<(String, Share)>>,
}

/// A value's share of the fleet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Share {
    Fraction(f64),
    /// The members the values before it left.
    Rest,
}

/// The place of a member in the ranking of a label key.
pub fn rank(key: &str, member: &str) -> u64 {
    mix64(name_key(key) ^ mix64(name_key(member).wrapping_add(0x5455_4e45_4c41_424c)))
}

/// How many members (of `n`) each value of `set` gets, in order.
pub fn counts(set: &[(String, Share)], n: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(set.len());
    let (mut cumulative, mut given) = (0.0f64, 0usize);
    for (_, share) in set {
        let upto = match share {
            Share::Fraction(f) => {
                cumulative += f;
                // A little slack so that 0.1 + 0.2 of 10 members is 3, not 4.
                (((cumulative * n as f64) - 1e-9).ceil().max(0.0) as usize).min(n)
            }
            Share::Rest => n,
        };
        let upto = upto.max(given);
        out.push(upto - given);
        given = upto;
    }
    out
}

/// The value of the label each member gets, by member name (members in any order).
pub fn assignment<'a>(key: &str, set: &'a [(String, Share)], members: &[&str]) -> Vec<(usize, &'a str)> {
    let mut ranked: Vec<(u64, &str, usize)> = members.iter().enumerate().map(|(i, m)| (rank(key, m), *m, i)).collect();
    ranked.sort_unstable();
    let counts = counts(set, members.len());
    let mut out = Vec::with_capacity(members.len());
    let mut position = 0;
    for ((value, _), count) in set.iter().zip(counts) {
        for &(_, _, i) in &ranked[position..position + count] {
            out.push((i, value.as_str()));
        }
        position += count;
    }
    out
}

/// Checks one alternative of a label field; problems as (path suffix, message).
/// Problems of a label alternative: (path inside it, message).
pub type SetProblems = Vec<(String, String)>;

pub fn check_set(map: &Map<String, Value>) -> Result<Vec<(String, Share)>, SetProblems> {
    let mut problems = Vec::new();
    let mut set = Vec::new();
    if map.is_empty() {
        problems.push((
            String::new(),
            "no label values: give at least one, such as {\"canary\": 0.02, \"broad\": \"rest\"}".into(),
        ));
    }
    let mut sum = 0.0;
    for (i, (value, share)) in map.iter().enumerate() {
        let at = format!("/{}", value.replace('~', "~0").replace('/', "~1"));
        if let Err(e) = crate::fleet::selector::validate_label_value(value) {
            problems.push((at.clone(), format!("{} is not a label value: {e}", echo(value))));
        }
        match share {
            Value::Number(n) if n.as_f64().is_some_and(|f| f > 0.0 && f <= 1.0) => {
                let f = n.as_f64().expect("checked");
                sum += f;
                set.push((value.clone(), Share::Fraction(f)));
            }
            Value::String(s) if s == "rest" => {
                if i + 1 != map.len() {
                    problems.push((at.clone(), "\"rest\" must be the last value (it takes the members left)".into()));
                }
                set.push((value.clone(), Share::Rest));
            }
            other => problems.push((
                at.clone(),
                format!(
                    "{} is not a share: give a fraction of the fleet above 0 and at most 1, or \"rest\"",
                    crate::text::echo_value(other)
                ),
            )),
        }
    }
    let has_rest = set.iter().any(|(_, s)| *s == Share::Rest);
    if sum > 1.0 + 1e-9 {
        problems.push((String::new(), format!("the fractions add up to {}, more than the whole fleet", round(sum))));
    } else if !has_rest && problems.is_empty() && (sum - 1.0).abs() > 1e-9 {
        problems.push((
            String::new(),
            format!("the fractions add up to {}: make them add up to 1, or give the last value \"rest\"", round(sum)),
        ));
    }
    if problems.is_empty() { Ok(set) } else { Err(problems) }
}

fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Writes the fleet of `doc` out as explicit members with the assigned labels (see the module
/// documentation). A scenario that does not build is left as it is: building it reports why.
pub fn apply(doc: &mut Value, assignments: &[(&str, &[(String, Share)])], seed_override: Option<u64>) {
    if assignments.is_empty() {
        return;
    }
    let Ok((dto, _)) = scenario::dto_from_value(doc) else { return };
    let Ok((_, fleet)) = scenario::build::build_with_fleet(&dto, seed_override) else { return };
    let mut members: Vec<Value> = fleet.iter().map(|m| serde_json::to_value(m).expect("members serialize")).collect();
    let names: Vec<&str> = fleet.iter().map(|m| m.name.as_str()).collect();
    for (key, set) in assignments {
        for (i, value) in assignment(key, set, &names) {
            let member = members[i].as_object_mut().expect("a member is an object");
            let labels = member.entry("labels").or_insert_with(|| Value::Object(Map::new()));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert((*key).to_string(), Value::String(value.to_string()));
            }
        }
    }
    let Some(object) = doc.as_object_mut() else { return };
    object.remove("memberGenerators");
    object.insert("members".into(), Value::Array(members));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(shares: &[(&str, Share)]) -> Vec<(String, Share)> {
        shares.iter().map(|(v, s)| (v.to_string(), *s)).collect()
    }

    #[test]
    fn counts_round_up_and_rest_takes_the_others() {
        let s = set(&[("canary", Share::Fraction(0.01)), ("early", Share::Fraction(0.2)), ("broad", Share::Rest)]);
        assert_eq!(counts(&s, 1000), vec![10, 200, 790]);
        assert_eq!(counts(&s, 40), vec![1, 8, 31]);
        let exact = set(&[("a", Share::Fraction(0.1)), ("b", Share::Fraction(0.2)), ("c", Share::Fraction(0.7))]);
        assert_eq!(counts(&exact, 10), vec![1, 2, 7]);
    }

    #[test]
    fn a_smaller_first_value_is_inside_a_larger_one() {
        let names: Vec<String> = (0..500).map(|i| format!("aks-eastus-{i:03}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let canary = |f: f64| -> Vec<usize> {
            let s = set(&[("canary", Share::Fraction(f)), ("broad", Share::Rest)]);
            let mut v: Vec<usize> =
                assignment("ring", &s, &refs).into_iter().filter(|(_, v)| *v == "canary").map(|(i, _)| i).collect();
            v.sort_unstable();
            v
        };
        let (one, two, five) = (canary(0.01), canary(0.02), canary(0.05));
        assert_eq!((one.len(), two.len(), five.len()), (5, 10, 25));
        assert!(one.iter().all(|i| two.contains(i)) && two.iter().all(|i| five.contains(i)));
        // The ranking does not depend on the order members are listed in.
        let reversed: Vec<&str> = refs.iter().rev().copied().collect();
        let s = set(&[("canary", Share::Fraction(0.02)), ("broad", Share::Rest)]);
        let mut names_a: Vec<&str> =
            assignment("ring", &s, &refs).into_iter().filter(|(_, v)| *v == "canary").map(|(i, _)| refs[i]).collect();
        let mut names_b: Vec<&str> = assignment("ring", &s, &reversed)
            .into_iter()
            .filter(|(_, v)| *v == "canary")
            .map(|(i, _)| reversed[i])
            .collect();
        names_a.sort_unstable();
        names_b.sort_unstable();
        assert_eq!(names_a, names_b);
    }

    #[test]
    fn sets_are_checked() {
        let check = |v: serde_json::Value| check_set(v.as_object().unwrap());
        assert!(check(serde_json::json!({"canary": 0.02, "broad": "rest"})).is_ok());
        assert!(check(serde_json::json!({"a": 0.5, "b": 0.5})).is_ok());
        let problems = |v| check(v).unwrap_err();
        assert_eq!(problems(serde_json::json!({"a": 0.5, "b": 0.4}))[0].0, "");
        assert_eq!(problems(serde_json::json!({"a": "rest", "b": 0.4}))[0].0, "/a");
        assert_eq!(problems(serde_json::json!({"a": 0, "b": "rest"}))[0].0, "/a");
        assert_eq!(problems(serde_json::json!({"a": 0.8, "b": 0.8, "c": "rest"}))[0].0, "");
        assert_eq!(problems(serde_json::json!({"bad value!": 0.5, "c": "rest"}))[0].0, "/bad value!");
        assert!(!problems(serde_json::json!({})).is_empty());
    }
}
