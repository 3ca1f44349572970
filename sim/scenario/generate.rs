//! Member generators: thousands of members from a few lines (issue "world models" §6).
//!
//! A generator draws each member's region, update group, labels, Kubernetes version, node pools
//! (count, size, OS, surge, current image) and maintenance windows (from templates such as local
//! night or weekend, in the region's UTC offset) from distributions, and produces ordinary member
//! DTOs: generated members are validated exactly like explicit ones, mix with them, and can be
//! written out (`fleetsim run --dump-fleet`) in the scenario's member format.
//!
//! Determinism (SEMANTICS §10): every attribute of member `i` comes from its own stream keyed by the
//! generator's name pattern, `i` and the attribute's name, so adding a label or a second generator
//! changes no other draw. The seed is the generator's own `seed`, else the scenario's.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::{Purpose, SeedTree, Stream, StreamKey, name_key};
use crate::fleet::selector::validate_label_key;
use crate::fleet::{KubernetesVersion, MinorVersion, OsSku};
use crate::world::regions::{self, CATALOG};
use crate::world::{DurationModel, ReleaseCalendar};

use super::ctx::{Ctx, is_region_name, quoted};
use super::dto::{DurationModelDto, MemberDto, NodePoolDto, StringOrInt};
use super::models::duration_model;
use super::pools::{parse_os_sku, parse_surge};
use super::problem::{Problem, echo, join};
use super::window_dto::{DailyDto, MaintenanceWindowDto, ScheduleDto, WeeklyDto};

/// Generates `count` members. Names come from `namePattern` with `{index}` (1-based, zero-padded to
/// the width of `count`), `{region}`, `{geography}` and `{group}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorDto {
    /// How many members, 1–200000.
    pub count: i64,
    /// Default `member-{index}`. Must contain `{index}` when `count` > 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_pattern: Option<String>,
    /// Seed of this generator's draws. Default: the scenario's seed (so `fleetsim run --seed` also
    /// draws a new fleet; give a seed here to keep the fleet while varying the rest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Region → weight. Default: the public regions of aks-models.md §5 with its ESTIMATE shares
    /// (~40 % US, ~30 % Europe, ~20 % Asia Pacific, ~10 % other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<BTreeMap<String, f64>>,
    /// Update group (`properties.group`): group → weight, or a pattern such as `"{region}"`.
    /// Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<PickDto>,
    /// Label key → (value → weight), or a pattern such as `"{geography}"`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, PickDto>,
    /// Kubernetes version → weight. A minor (`"1.33"`) stands for the newest patch of that minor in
    /// `releases.kubernetes` available in the member's region at the scenario start.
    pub kubernetes_versions: BTreeMap<String, f64>,
    /// Node pools: a list every member gets, or a distribution. Default: one Ubuntu pool of 3 nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_pools: Option<PoolsDto>,
    /// Pools without a `nodeImageVersion` get the newest (weight 0), second newest (weight 1), …
    /// image of their family available in their region at the scenario start. Default `[4, 3, 2, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_image_age: Option<Vec<f64>>,
    /// Window templates for `aksManagedAutoUpgradeSchedule`, drawn by weight. Default: no window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aks_managed_auto_upgrade_schedule: Option<Vec<WindowTemplateDto>>,
    /// Window templates for `aksManagedNodeOSUpgradeSchedule`, drawn by weight. Default: no window.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "aksManagedNodeOSUpgradeSchedule")]
    pub aks_managed_node_os_upgrade_schedule: Option<Vec<WindowTemplateDto>>,
    /// Fraction 0–1 of members with long-term support. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_term_support: Option<f64>,
    /// Fraction 0–1 of stopped members. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<f64>,
    /// Upgrade durations of the generated members (fields replace those of `models.duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durations: Option<DurationModelDto>,
}

/// A text pattern (with `{index}`, `{region}`, `{geography}`, `{group}`) or value → weight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PickDto {
    Pattern(String),
    Weights(BTreeMap<String, f64>),
}

/// Node pools of generated members.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PoolsDto {
    /// Every member gets these pools.
    Templates(Vec<NodePoolDto>),
    Model(PoolModelDto),
}

/// Pools drawn from distributions. The first pool is the system pool (`system`, Linux); the others
/// are `user<n>` or, for Windows, `win<n>`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolModelDto {
    /// Pools per member, 1–100. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<IntDistDto>,
    /// Nodes per pool, 1–1000. Default `{"median": 5, "p90": 20}` (ESTIMATE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_count: Option<IntDistDto>,
    /// osSku → weight (`Ubuntu`, `Ubuntu2204`, `Ubuntu2404`, `AzureLinux`, `Windows2022`, …). The
    /// system pool draws among the Linux entries only. Default `{"Ubuntu": 1}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_sku: Option<BTreeMap<String, f64>>,
    /// `maxSurge` (`"33%"`) or maxSurge → weight. Default: the AKS default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<PickDto>,
}

/// An integer distribution: a number, `{"min": a, "max": b}` (uniform), `{"median": m, "p90": q}`
/// (log-normal, rounded) or value → weight (`{"3": 5, "10": 1}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IntDistDto {
    Fixed(i64),
    Range(IntRangeDto),
    LogNormal(IntLogNormalDto),
    Weights(BTreeMap<String, f64>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntRangeDto {
    pub min: i64,
    pub max: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntLogNormalDto {
    pub median: f64,
    pub p90: f64,
}

/// A maintenance window template. `localNight`: daily 22:00 for 6 h; `weekend`: every Saturday
/// 00:00 for 24 h; `none`: no window; or a verbatim AKS `maintenanceWindow`. Times are local to
/// the member's region unless `utcOffset` (or the window's own) says otherwise.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowTemplateDto {
    /// Relative weight among the templates of the list. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// `localNight`, `weekend` or `none`; omit it with `maintenanceWindow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["localNight", "weekend", "none"]))]
    pub template: Option<String>,
    /// Replaces the template's `startTime`: `"23:00"` or time → weight (to stagger windows, as
    /// aks-models.md §1.3 advises).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<PickDto>,
    /// Replaces the template's `durationHours` (4–24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_hours: Option<i64>,
    /// Replaces the day of a weekly or relative-monthly window: a day or day → weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_week: Option<PickDto>,
    /// `+HH:mm`/`-HH:mm`, or `region` (default): the standard-time offset of the member's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utc_offset: Option<String>,
    /// A verbatim AKS `maintenanceWindow`; without its own `utcOffset` it takes the template's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_window: Option<MaintenanceWindowDto>,
}

/// Draws a key by weight with one uniform draw (keys in byte order, so the draw is reproducible).
pub(crate) fn pick<'m, R: Rng>(rng: &mut R, weights: &'m BTreeMap<String, f64>) -> Option<&'m str> {
    pick_among(rng, weights.iter().map(|(key, w)| (key.as_str(), *w)))
}

/// [`pick`] among `(item, weight)` pairs in the order given, those whose weight is not positive
/// passed over.
fn pick_among<T, R: Rng>(rng: &mut R, weighted: impl Iterator<Item = (T, f64)> + Clone) -> Option<T> {
    let total: f64 = weighted.clone().map(|(_, w)| w).filter(|w| *w > 0.0).sum();
    if total <= 0.0 {
        return None;
    }
    let mut x = rng.random::<f64>() * total;
    let mut last = None;
    for (item, w) in weighted.filter(|(_, w)| *w > 0.0) {
        last = Some(item);
        if x < w {
            return last;
        }
        x -= w;
    }
    last
}

/// A generator's choice by weight, read once for all its members: the keys of positive weight in
/// key order, as [`pick`] goes through them, each with what the plan worked out for it.
struct Choices<T> {
    positive: Vec<(String, f64, T)>,
}

impl<T> Choices<T> {
    fn new(weights: &BTreeMap<String, f64>, mut value: impl FnMut(&str) -> T) -> Choices<T> {
        let positive = weights.iter().filter(|(_, w)| **w > 0.0).map(|(key, w)| (key.clone(), *w, value(key)));
        Choices { positive: positive.collect() }
    }

    /// [`pick`] from a stream of its own, made only when there is a choice: a single positive
    /// weight is what any draw would pick (no other draw comes from that stream, so skipping it
    /// changes nothing).
    fn pick_own(&self, stream: impl FnOnce() -> Stream) -> Option<(&str, &T)> {
        match self.positive.as_slice() {
            [] => None,
            [(key, _, value)] => Some((key, value)),
            all => pick_among(&mut stream(), all.iter().map(|(key, w, value)| ((key.as_str(), value), *w))),
        }
    }
}

/// An index by weight (`nodeImageAge`, window templates): [`pick_among`] of the indexes. Both lists
/// are checked to hold a positive weight, so it always draws.
fn pick_index<R: Rng>(rng: &mut R, weights: &[f64]) -> usize {
    pick_among(rng, weights.iter().copied().enumerate()).unwrap_or(0)
}

/// `path` makes the weights' JSON pointer, only for a problem (a fleet may have a generator per
/// region and stage, and a pointer costs more than the check).
fn check_weights(ctx: &mut Ctx, weights: &BTreeMap<String, f64>, path: &dyn Fn() -> String) {
    if weights.is_empty() || !weights.values().any(|w| *w > 0.0) {
        ctx.err(path(), "give at least one entry with a positive weight");
    }
    for (key, w) in weights {
        if !w.is_finite() || *w < 0.0 {
            ctx.err(join(&path(), key), format!("weight {w} must be a finite number ≥ 0"));
        }
    }
}

/// Checks a pattern or each key of weights with `check_value`, which is given the value and what
/// makes its pointer (as `path` makes the pick's, only for a problem).
fn check_pick(
    ctx: &mut Ctx,
    pick: &PickDto,
    path: &dyn Fn() -> String,
    mut check_value: impl FnMut(&mut Ctx, &str, &dyn Fn() -> String),
) {
    match pick {
        PickDto::Pattern(text) => check_value(ctx, text, path),
        PickDto::Weights(weights) => {
            check_weights(ctx, weights, path);
            for key in weights.keys() {
                check_value(ctx, key, &|| join(&path(), key));
            }
        }
    }
}

/// What placeholders of one member stand for.
struct Placeholders<'a> {
    index: &'a str,
    region: &'a str,
    geography: &'a str,
    group: Option<&'a str>,
}

/// The placeholders of a pattern, in the order they are replaced.
const PLACEHOLDERS: [&str; 4] = ["{index}", "{region}", "{geography}", "{group}"];

/// Where the placeholders of `text` are: each `{` with the placeholder it starts (an index into
/// [`PLACEHOLDERS`]); `None` when a `{` starts none.
fn places_of(text: &str) -> Option<Vec<(usize, usize)>> {
    // The `{`s of a pattern, found byte by byte: these texts are short, shorter than a searcher
    // takes to set up.
    text.bytes()
        .enumerate()
        .filter(|(_, b)| *b == b'{')
        .map(|(i, _)| PLACEHOLDERS.iter().position(|p| text[i..].starts_with(p)).map(|k| (i, k)))
        .collect()
}

/// A pattern every member of a generator fills (its name, a group or label pattern), read once.
struct Pattern {
    text: String,
    places: Option<Vec<(usize, usize)>>,
}

impl Pattern {
    fn new(text: String) -> Pattern {
        let places = places_of(&text);
        Pattern { text, places }
    }
}

/// A group or label value: a pattern read once, or value → weight.
enum Pick {
    Pattern(Pattern),
    Weights(Choices<()>),
}

impl Pick {
    fn new(dto: &PickDto) -> Pick {
        match dto {
            PickDto::Pattern(text) => Pick::Pattern(Pattern::new(text.clone())),
            PickDto::Weights(weights) => Pick::Weights(Choices::new(weights, |_| ())),
        }
    }
}

impl Placeholders<'_> {
    /// The placeholders and what they stand for, in the order they are replaced.
    fn values(&self) -> [(&'static str, &str); 4] {
        [
            (PLACEHOLDERS[0], self.index),
            (PLACEHOLDERS[1], self.region),
            (PLACEHOLDERS[2], self.geography),
            (PLACEHOLDERS[3], self.group.unwrap_or("none")),
        ]
    }

    fn fill(&self, pattern: &str) -> String {
        self.fill_at(pattern, places_of(pattern).as_deref())
    }

    fn fill_pattern(&self, pattern: &Pattern) -> String {
        self.fill_at(&pattern.text, pattern.places.as_deref())
    }

    /// `text` filled, its placeholders being at `places` ([`places_of`]).
    fn fill_at(&self, text: &str, places: Option<&[(usize, usize)]>) -> String {
        // The placeholders are replaced one after another, each in the text the previous left.
        // Patterns are filled for every member, so the usual case is done in one pass: when every
        // `{` of the pattern starts a placeholder and no value put in holds a `{`, a replacement
        // cannot make or break another's occurrence, and one pass left to right gives the same
        // text. (A value whose placeholder the pattern does not hold is never put in.)
        let Some(places) = places else { return self.fill_in_turn(text) };
        if places.is_empty() {
            return text.to_string();
        }
        let values = self.values();
        if places.iter().any(|&(_, k)| values[k].1.as_bytes().contains(&b'{')) {
            return self.fill_in_turn(text);
        }
        // Sized exactly: the text becomes a member's own and is kept as it is.
        let len = places.iter().fold(text.len(), |len, &(_, k)| len - values[k].0.len() + values[k].1.len());
        let mut out = String::with_capacity(len);
        let mut rest = 0;
        for &(i, k) in places {
            let (placeholder, value) = values[k];
            out.push_str(&text[rest..i]);
            out.push_str(value);
            rest = i + placeholder.len();
        }
        out.push_str(&text[rest..]);
        out
    }

    /// [`fill`](Self::fill) as the placeholders are defined: each replaced in the text the previous
    /// left.
    fn fill_in_turn(&self, pattern: &str) -> String {
        let mut text = Cow::Borrowed(pattern);
        for (placeholder, value) in self.values() {
            // A replacement is made only where its placeholder occurs.
            if let Some(replaced) = replace_placeholder(&text, placeholder, value) {
                text = Cow::Owned(replaced);
            }
        }
        text.into_owned()
    }
}

/// `number` in decimal, padded with zeros to `width` digits (as `format!("{number:0width$}")`),
/// written into `buffer`.
fn zero_padded(number: u64, width: usize, buffer: &mut [u8; 40]) -> &str {
    let mut digits = [0u8; 20];
    let mut n = number;
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let total = width.clamp(len, buffer.len());
    buffer[..total - len].fill(b'0');
    for (slot, digit) in buffer[total - len..total].iter_mut().zip(digits[..len].iter().rev()) {
        *slot = *digit;
    }
    std::str::from_utf8(&buffer[..total]).expect("ASCII digits")
}

/// `text` with every occurrence of `placeholder` (which starts with its only `{`) replaced by
/// `value`, left to right as `str::replace` does; `None` when it does not occur. Found by the `{`s
/// alone: a general substring search costs more to set up than these short patterns take.
fn replace_placeholder(text: &str, placeholder: &str, value: &str) -> Option<String> {
    let mut found = text.match_indices('{').map(|(i, _)| i).filter(|&i| text[i..].starts_with(placeholder));
    let first = found.next()?;
    let mut out = String::with_capacity(text.len() + value.len());
    out.push_str(&text[..first]);
    out.push_str(value);
    let mut rest = first + placeholder.len();
    for at in found {
        // Occurrences do not overlap: a placeholder holds no `{` after its first character.
        out.push_str(&text[rest..at]);
        out.push_str(value);
        rest = at + placeholder.len();
    }
    out.push_str(&text[rest..]);
    Some(out)
}

fn draw_pick(rng: &mut Stream, choice: &PickDto, places: &Placeholders) -> String {
    match choice {
        PickDto::Pattern(text) => places.fill(text),
        PickDto::Weights(weights) => pick(rng, weights).unwrap_or_default().to_string(),
    }
}

/// [`draw_pick`] from a stream of its own, made only when a draw decides something: a pattern
/// draws nothing, and weights only when there is a choice ([`Choices::pick_own`]).
fn draw_pick_own(stream: impl FnOnce() -> Stream, choice: &Pick, places: &Placeholders) -> String {
    match choice {
        Pick::Pattern(pattern) => places.fill_pattern(pattern),
        Pick::Weights(choices) => choices.pick_own(stream).map_or("", |(key, _)| key).to_string(),
    }
}

/// A validated integer distribution.
#[derive(Clone, Debug)]
enum IntDist {
    Fixed(i64),
    Range(i64, i64),
    LogNormal { mu: f64, sigma: f64 },
    Weights(BTreeMap<String, f64>),
}

impl IntDist {
    fn sample(&self, rng: &mut Stream, min: i64, max: i64) -> i64 {
        let value = match self {
            IntDist::Fixed(n) => *n,
            IntDist::Range(a, b) => rng.random_range(*a..=*b),
            IntDist::LogNormal { mu, sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                (mu + sigma * z).exp().round() as i64
            }
            IntDist::Weights(weights) => pick(rng, weights).and_then(|k| k.parse().ok()).unwrap_or(min),
        };
        value.clamp(min, max)
    }
}

fn int_dist(ctx: &mut Ctx, dto: &IntDistDto, path: &str, min: i64, max: i64) -> Option<IntDist> {
    let in_range = |ctx: &mut Ctx, n: i64, path: &str| {
        let ok = (min..=max).contains(&n);
        if !ok {
            ctx.err(path, format!("{n} is outside {min}–{max}"));
        }
        ok
    };
    match dto {
        IntDistDto::Fixed(n) => in_range(ctx, *n, path).then_some(IntDist::Fixed(*n)),
        IntDistDto::Range(r) => {
            let ok = in_range(ctx, r.min, &join(path, "min")) & in_range(ctx, r.max, &join(path, "max"));
            if r.max < r.min {
                ctx.err(join(path, "max"), "max must be at least min");
                return None;
            }
            ok.then_some(IntDist::Range(r.min, r.max))
        }
        IntDistDto::LogNormal(l) => {
            if !(l.median >= 1.0 && l.median.is_finite()) {
                ctx.err(join(path, "median"), format!("median {} must be at least 1", l.median));
                return None;
            }
            if !(l.p90 >= l.median && l.p90.is_finite()) {
                ctx.err(join(path, "p90"), "p90 must be at least the median");
                return None;
            }
            let sigma = (l.p90.ln() - l.median.ln()) / 1.281_551_565_544_600_4;
            Some(IntDist::LogNormal { mu: l.median.ln(), sigma })
        }
        IntDistDto::Weights(weights) => {
            check_weights(ctx, weights, &|| path.to_string());
            let mut ok = true;
            for key in weights.keys() {
                match key.parse::<i64>() {
                    Ok(n) => ok &= in_range(ctx, n, &join(path, key)),
                    Err(_) => {
                        ctx.err(join(path, key), format!("{} is not a whole number", echo(key)));
                        ok = false;
                    }
                }
            }
            ok.then(|| IntDist::Weights(weights.clone()))
        }
    }
}

/// A validated window template.
#[derive(Clone, Debug)]
struct Template {
    /// `None`: no window.
    window: Option<MaintenanceWindowDto>,
    /// `None`: the region's offset.
    utc_offset: Option<String>,
    start_time: Option<PickDto>,
    day_of_week: Option<PickDto>,
}

fn window_templates(ctx: &mut Ctx, list: &[WindowTemplateDto], path: &str) -> Vec<(f64, Template)> {
    if list.is_empty() {
        ctx.err(path, "give at least one template (or omit the field for no window)");
    }
    let mut out = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let tp = join(path, i);
        let before = ctx.problems.len();
        let weight = t.weight.unwrap_or(1.0);
        if !weight.is_finite() || weight < 0.0 {
            ctx.err(join(&tp, "weight"), format!("weight {weight} must be a finite number ≥ 0"));
        }
        let base = match (t.template.as_deref(), &t.maintenance_window) {
            (Some("localNight"), None) => Some(MaintenanceWindowDto {
                schedule: ScheduleDto { daily: Some(DailyDto { interval_days: 1 }), ..ScheduleDto::default() },
                duration_hours: 6,
                start_time: "22:00".to_string(),
                utc_offset: None,
                start_date: None,
                not_allowed_dates: None,
                ..MaintenanceWindowDto::default()
            }),
            (Some("weekend"), None) => Some(MaintenanceWindowDto {
                schedule: ScheduleDto {
                    weekly: Some(WeeklyDto { interval_weeks: 1, day_of_week: "Saturday".to_string() }),
                    ..ScheduleDto::default()
                },
                duration_hours: 24,
                start_time: "00:00".to_string(),
                utc_offset: None,
                start_date: None,
                not_allowed_dates: None,
                ..MaintenanceWindowDto::default()
            }),
            (Some("none"), None) => None,
            (None, Some(window)) => Some(window.clone()),
            (Some(_), Some(_)) => {
                ctx.err(join(&tp, "template"), "give either template or maintenanceWindow, not both");
                continue;
            }
            (None, None) => {
                ctx.err(&tp, "give a template (\"localNight\", \"weekend\", \"none\") or a maintenanceWindow");
                continue;
            }
            (Some(other), None) => {
                ctx.err(
                    join(&tp, "template"),
                    format!("{} is not a window template: {}", echo(other), quoted(&["localNight", "weekend", "none"])),
                );
                continue;
            }
        };
        let utc_offset = match t.utc_offset.as_deref() {
            None | Some("region") => None,
            Some(offset) => Some(offset.to_string()),
        };
        let Some(mut window) = base else {
            for (field, set) in [
                ("startTime", t.start_time.is_some()),
                ("durationHours", t.duration_hours.is_some()),
                ("dayOfWeek", t.day_of_week.is_some()),
                ("utcOffset", t.utc_offset.is_some()),
            ] {
                if set {
                    ctx.err(join(&tp, field), "the \"none\" template has no window to shape");
                }
            }
            out.push((weight, Template { window: None, utc_offset: None, start_time: None, day_of_week: None }));
            continue;
        };
        if let Some(hours) = t.duration_hours {
            window.duration_hours = hours;
        }
        let has_day = window.schedule.weekly.is_some() || window.schedule.relative_monthly.is_some();
        if t.day_of_week.is_some() && !has_day {
            ctx.err(join(&tp, "dayOfWeek"), "only weekly and relativeMonthly windows have a dayOfWeek");
        }
        // Validate every value the template can produce, with the offset it will get.
        let base_path = if t.maintenance_window.is_some() { join(&tp, "maintenanceWindow") } else { tp.clone() };
        let mut sample = window.clone();
        sample.utc_offset = Some(utc_offset.clone().or(window.utc_offset.clone()).unwrap_or("+00:00".to_string()));
        for problem in sample.validate(&base_path) {
            ctx.problems.push(problem);
        }
        let value_ok = |ctx: &mut Ctx, s: &MaintenanceWindowDto, at: &str| {
            if let Some(problem) = s.validate("").into_iter().next() {
                ctx.err(at, problem.message);
            }
        };
        if ctx.problems.len() == before
            && let Some(start) = &t.start_time
        {
            check_pick(ctx, start, &|| join(&tp, "startTime"), |ctx, value, at| {
                let mut s = sample.clone();
                s.start_time = value.to_string();
                value_ok(ctx, &s, &at());
            });
        }
        if ctx.problems.len() == before
            && has_day
            && let Some(day) = &t.day_of_week
        {
            check_pick(ctx, day, &|| join(&tp, "dayOfWeek"), |ctx, value, at| {
                let mut s = sample.clone();
                set_day(&mut s, value);
                value_ok(ctx, &s, &at());
            });
        }
        if ctx.problems.len() == before {
            window.utc_offset = window.utc_offset.take().or(utc_offset.clone());
            out.push((
                weight,
                Template {
                    window: Some(window),
                    utc_offset,
                    start_time: t.start_time.clone(),
                    day_of_week: t.day_of_week.clone(),
                },
            ));
        }
    }
    if !out.is_empty() && !out.iter().any(|(w, _)| *w > 0.0) {
        ctx.err(path, "give at least one template with a positive weight");
    }
    out
}

fn set_day(window: &mut MaintenanceWindowDto, day: &str) {
    if let Some(weekly) = &mut window.schedule.weekly {
        weekly.day_of_week = day.to_string();
    }
    if let Some(relative) = &mut window.schedule.relative_monthly {
        relative.day_of_week = day.to_string();
    }
}

fn draw_window(rng: &mut Stream, templates: &[(f64, Template)], places: &Placeholders) -> Option<MaintenanceWindowDto> {
    let weights: Vec<f64> = templates.iter().map(|(w, _)| *w).collect();
    let template = &templates[pick_index(rng, &weights)].1;
    let mut window = template.window.clone()?;
    if let Some(start) = &template.start_time {
        window.start_time = draw_pick(rng, start, places);
    }
    if let Some(day) = &template.day_of_week {
        set_day(&mut window, &draw_pick(rng, day, places));
    }
    if window.utc_offset.is_none() {
        window.utc_offset = Some(
            template
                .utc_offset
                .clone()
                .unwrap_or_else(|| regions::format_utc_offset(regions::utc_offset_minutes(places.region))),
        );
    }
    Some(window)
}

/// How a version key of `kubernetesVersions` resolves.
#[derive(Clone, Debug)]
enum VersionKey {
    /// The version's text as a member's DTO gives it, and the version read from that text.
    Exact(String, Option<KubernetesVersion>),
    /// The newest patch of this minor available in the member's region at the start.
    Minor(MinorVersion),
}

/// A generator checked once, before any member is drawn.
struct Plan<'g> {
    dto: &'g GeneratorDto,
    pattern: Pattern,
    /// `dto.groups`, its pattern read once.
    groups: Option<Pick>,
    /// The values of `dto.labels`, in its order, their patterns read once.
    labels: Vec<Pick>,
    /// The regions, each with its `{geography}`.
    regions: Choices<&'static str>,
    /// `dto.kubernetesVersions`, each key with how it resolves.
    versions: Choices<Option<VersionKey>>,
    pools: Option<PoolPlan>,
    image_age: Vec<f64>,
    auto_upgrade: Vec<(f64, Template)>,
    node_os: Vec<(f64, Template)>,
    long_term_support: f64,
    stopped: f64,
    durations: Option<Arc<DurationModel>>,
    /// The stream key of each label's draw (`label:<key>`), in the order of `dto.labels`.
    label_keys: Vec<u64>,
    /// The keys of `dto.labels` a member's label may have (`validate_label_key` accepts them):
    /// every member of the generator has them, and they are checked once here, not per member.
    valid_label_keys: Vec<String>,
}

/// The `{geography}` of a region: its geography's slug, `other` for a region the catalog lacks.
fn geography_of(region: &str) -> &'static str {
    regions::find(region).map_or("other", |r| r.geography.slug())
}

struct PoolPlan {
    count: IntDist,
    node_count: IntDist,
    os_sku: BTreeMap<String, f64>,
    linux_os_sku: BTreeMap<String, f64>,
    max_surge: Option<PickDto>,
}

fn plan<'g>(
    ctx: &mut Ctx,
    dto: &'g GeneratorDto,
    path: &str,
    calendar: &ReleaseCalendar,
    base_durations: &DurationModel,
) -> Option<Plan<'g>> {
    let before = ctx.problems.len();
    if !(1..=200_000).contains(&dto.count) {
        ctx.err(join(path, "count"), format!("{} members: a generator makes 1–200000", dto.count));
    }
    let pattern = dto.name_pattern.clone().unwrap_or_else(|| "member-{index}".to_string());
    if dto.count > 1 && !pattern.contains("{index}") {
        ctx.err(
            join(path, "namePattern"),
            format!("{} has no {{index}}, so {} members would share names", echo(&pattern), dto.count),
        );
    }
    let regions = match &dto.regions {
        Some(weights) => {
            check_weights(ctx, weights, &|| join(path, "regions"));
            for region in weights.keys() {
                if !is_region_name(region) {
                    ctx.err(
                        join(&join(path, "regions"), region),
                        format!("{} is not an Azure region name like \"westeurope\"", echo(region)),
                    );
                }
            }
            weights.clone()
        }
        None => CATALOG.iter().filter(|r| !r.canary).map(|r| (r.name.to_string(), r.weight)).collect(),
    };
    if let Some(groups) = &dto.groups {
        check_pick(ctx, groups, &|| join(path, "groups"), |_, _, _| {});
    }
    for (key, values) in &dto.labels {
        check_pick(ctx, values, &|| join(&join(path, "labels"), key), |_, _, _| {});
    }
    let versions_path = || join(path, "kubernetesVersions");
    check_weights(ctx, &dto.kubernetes_versions, &versions_path);
    let mut versions = BTreeMap::new();
    for key in dto.kubernetes_versions.keys() {
        let key_path = || join(&versions_path(), key);
        if let Ok(v) = KubernetesVersion::parse(key) {
            let text = v.to_string();
            let parsed = KubernetesVersion::parse(&text).ok();
            versions.insert(key.clone(), VersionKey::Exact(text, parsed));
        } else if let Ok(minor) = MinorVersion::parse(key) {
            if !calendar.kubernetes.iter().any(|r| r.version.minor_version() == minor) {
                ctx.err(
                    key_path(),
                    format!("minor {minor} stands for its newest released patch, but releases.kubernetes lists none"),
                );
            }
            versions.insert(key.clone(), VersionKey::Minor(minor));
        } else {
            ctx.err(
                key_path(),
                format!("{} is neither a Kubernetes version (\"1.33.2\") nor a minor (\"1.33\")", echo(key)),
            );
        }
    }
    let pools = match &dto.node_pools {
        Some(PoolsDto::Model(model)) => pool_plan(ctx, model, &join(path, "nodePools")),
        _ => None,
    };
    if let Some(PoolsDto::Templates(list)) = &dto.node_pools
        && list.is_empty()
    {
        ctx.err(join(path, "nodePools"), "give at least one node pool (or omit nodePools for the default pool)");
    }
    let image_age = dto.node_image_age.clone().unwrap_or_else(|| vec![4.0, 3.0, 2.0, 1.0]);
    let age_path = || join(path, "nodeImageAge");
    if image_age.is_empty() || image_age.len() > 100 || !image_age.iter().any(|w| *w > 0.0) {
        ctx.err(age_path(), "give 1–100 weights, at least one positive");
    }
    for (i, w) in image_age.iter().enumerate() {
        if !w.is_finite() || *w < 0.0 {
            ctx.err(join(&age_path(), i), format!("weight {w} must be a finite number ≥ 0"));
        }
    }
    let auto_upgrade = dto
        .aks_managed_auto_upgrade_schedule
        .as_deref()
        .map_or_else(Vec::new, |list| window_templates(ctx, list, &join(path, "aksManagedAutoUpgradeSchedule")));
    let node_os = dto
        .aks_managed_node_os_upgrade_schedule
        .as_deref()
        .map_or_else(Vec::new, |list| window_templates(ctx, list, &join(path, "aksManagedNodeOSUpgradeSchedule")));
    let long_term_support = dto.long_term_support.map_or(0.0, |p| ctx.probability(p, &join(path, "longTermSupport")));
    let stopped = dto.stopped.map_or(0.0, |p| ctx.probability(p, &join(path, "stopped")));
    let durations = dto
        .durations
        .as_ref()
        .map(|d| Arc::new(duration_model(ctx, d, base_durations.clone(), &join(path, "durations"))));
    (ctx.problems.len() == before).then_some(Plan {
        dto,
        pattern: Pattern::new(pattern),
        groups: dto.groups.as_ref().map(Pick::new),
        labels: dto.labels.values().map(Pick::new).collect(),
        versions: Choices::new(&dto.kubernetes_versions, |key| versions.remove(key)),
        pools,
        image_age,
        auto_upgrade,
        node_os,
        long_term_support,
        stopped,
        durations,
        label_keys: dto.labels.keys().map(|key| name_key(&format!("label:{key}"))).collect(),
        valid_label_keys: dto.labels.keys().filter(|key| validate_label_key(key).is_ok()).cloned().collect(),
        regions: Choices::new(&regions, geography_of),
    })
}

fn pool_plan(ctx: &mut Ctx, dto: &PoolModelDto, path: &str) -> Option<PoolPlan> {
    let count = match &dto.count {
        Some(d) => int_dist(ctx, d, &join(path, "count"), 1, 100),
        None => Some(IntDist::Fixed(1)),
    };
    let node_count = match &dto.node_count {
        Some(d) => int_dist(ctx, d, &join(path, "nodeCount"), 1, 1000),
        None => Some(IntDist::LogNormal { mu: 5f64.ln(), sigma: (20f64.ln() - 5f64.ln()) / 1.281_551_565_544_600_4 }),
    };
    let os_sku = dto.os_sku.clone().unwrap_or_else(|| BTreeMap::from([("Ubuntu".to_string(), 1.0)]));
    let os_path = join(path, "osSku");
    check_weights(ctx, &os_sku, &|| os_path.clone());
    let mut linux_os_sku = BTreeMap::new();
    for (sku, w) in &os_sku {
        match parse_os_sku(sku, None) {
            Ok(os) if !os.is_windows() => {
                linux_os_sku.insert(sku.clone(), *w);
            }
            Ok(_) => {}
            Err(e) => ctx.err(join(&os_path, sku), e),
        }
    }
    if linux_os_sku.values().all(|w| *w <= 0.0) {
        // The system pool must run Linux (AKS); without a Linux entry it is Ubuntu.
        linux_os_sku = BTreeMap::from([("Ubuntu".to_string(), 1.0)]);
    }
    if let Some(surge) = &dto.max_surge {
        check_pick(ctx, surge, &|| join(path, "maxSurge"), |ctx, value, path| {
            if let Err(e) = parse_surge(value) {
                ctx.err(path(), e);
            }
        });
    }
    Some(PoolPlan { count: count?, node_count: node_count?, os_sku, linux_os_sku, max_surge: dto.max_surge.clone() })
}

/// A generator whose fields are checked: it draws its members one at a time, as plain member DTOs
/// that `members::build_generated` converts like explicit ones.
pub(crate) struct Generator<'g> {
    plan: Plan<'g>,
    /// The ChaCha8 key of its members' draws (worked out once, not for every member).
    streams: StreamKey,
    key: u64,
    width: usize,
}

impl<'g> Generator<'g> {
    /// Checks the generator at `path`; `None` if it has problems (reported into `ctx`). `calendar`
    /// resolves minors.
    pub(crate) fn plan(
        ctx: &mut Ctx,
        dto: &'g GeneratorDto,
        path: &str,
        seed: u64,
        calendar: &ReleaseCalendar,
        base_durations: &DurationModel,
    ) -> Option<Generator<'g>> {
        let plan = plan(ctx, dto, path, calendar, base_durations)?;
        let key = name_key(&plan.pattern.text);
        Some(Generator {
            streams: SeedTree::new(dto.seed.unwrap_or(seed), 0).key(Purpose::FleetGenerator),
            key,
            width: dto.count.to_string().len(),
            plan,
        })
    }

    /// How many members it makes.
    pub(crate) fn count(&self) -> u64 {
        self.plan.dto.count as u64
    }

    /// Member `i` (0-based). `calendar` resolves minors and image ages; `keep_dtos` keeps the
    /// generator's `durations` in the DTO (for `--dump-fleet`).
    pub(crate) fn draw(&self, ctx: &Ctx, i: u64, calendar: &ReleaseCalendar, keep_dtos: bool) -> GeneratedMember {
        draw_member(ctx, &self.plan, &self.streams, self.key, i, self.width, calendar, keep_dtos)
    }

    /// The duration model its members share, if it gives one.
    pub(crate) fn durations(&self) -> Option<Arc<DurationModel>> {
        self.plan.durations.clone()
    }

    /// Label keys its members have that need no check (for [`build_member`](super::members::build_member)).
    pub(crate) fn valid_label_keys(&self) -> &[String] {
        &self.plan.valid_label_keys
    }
}

/// Problems of a generated member, checked at member pointers (`/name`), are reported at the
/// generator field that produced the value (`/memberGenerators/0/namePattern`); which member, and its
/// own field, go in the message, so the pointer stays one that resolves in the file.
pub(crate) fn locate_generated(problems: &mut [Problem], generator: &str, number: u64, name: &str) {
    const FIELDS: [(&str, &str); 9] = [
        ("/name", "namePattern"),
        ("/region", "regions"),
        ("/group", "groups"),
        ("/labels", "labels"),
        ("/kubernetesVersion", "kubernetesVersions"),
        ("/nodePools", "nodePools"),
        ("/aksManagedAutoUpgradeSchedule", "aksManagedAutoUpgradeSchedule"),
        ("/aksManagedNodeOSUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"),
        ("/durations", "durations"),
    ];
    for problem in problems {
        let member_path = std::mem::take(&mut problem.path);
        let field = FIELDS.iter().find(|(prefix, _)| {
            member_path == *prefix || member_path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'))
        });
        problem.path = match field {
            // A label keeps its key: `/memberGenerators/0/labels/ring`.
            Some(("/labels", field)) => format!("{generator}/{field}{}", &member_path["/labels".len()..]),
            Some((_, field)) => join(generator, field),
            None => generator.to_string(),
        };
        let at = if member_path.is_empty() { String::new() } else { format!(", {member_path}") };
        problem.message = format!("generated member {number} ({}{at}): {}", echo(name), problem.message);
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_member(
    ctx: &Ctx,
    plan: &Plan,
    streams: &StreamKey,
    generator_key: u64,
    i: u64,
    width: usize,
    calendar: &ReleaseCalendar,
    keep_dtos: bool,
) -> GeneratedMember {
    let keyed = |key: u64| streams.stream([generator_key, i, key]);
    let stream = |attribute: &str| keyed(name_key(attribute));
    let (region, geography) = match plan.regions.pick_own(|| stream("region")) {
        Some((region, geography)) => (region, *geography),
        None => ("eastus", geography_of("eastus")),
    };
    let mut index = [0u8; 40];
    let index = zero_padded(i + 1, width, &mut index);
    let mut places = Placeholders { index, region, geography, group: None };
    let group = plan.groups.as_ref().map(|g| draw_pick_own(|| stream("group"), g, &places));
    places.group = group.as_deref();
    // In key order (the generator's labels are a map), each key once.
    // Boxed as the member keeps them, in a list of their number: it becomes the member's own.
    let labels: Vec<(Box<str>, Box<str>)> = plan
        .dto
        .labels
        .keys()
        .zip(&plan.labels)
        .zip(&plan.label_keys)
        .map(|((key, values), &label)| (key.as_str().into(), draw_pick_own(|| keyed(label), values, &places).into()))
        .collect();
    let (version_key, version) = match plan.versions.pick_own(|| stream("kubernetesVersion")) {
        Some((key, version)) => (key, version.as_ref()),
        None => ("", None),
    };
    // An exact version was read once, by the plan. Its text goes into the DTO only when the DTO is
    // kept or the text does not parse: otherwise the member is built from the version as parsed.
    let (kubernetes_version, parsed_version) = match version {
        Some(VersionKey::Exact(text, parsed)) if keep_dtos || parsed.is_none() => (text.clone(), *parsed),
        Some(VersionKey::Exact(_, parsed)) => (String::new(), *parsed),
        other => {
            let text = match other {
                Some(VersionKey::Minor(minor)) => {
                    let newest =
                        calendar.kubernetes_available(region, ctx.start).find(|r| r.version.minor_version() == *minor);
                    // Not yet in this region: the oldest listed patch of the minor.
                    let fallback = || calendar.kubernetes.iter().find(|r| r.version.minor_version() == *minor);
                    newest.or_else(fallback).map_or_else(|| format!("{minor}.0"), |r| r.version.to_string())
                }
                _ => version_key.to_string(),
            };
            let parsed = KubernetesVersion::parse(&text).ok();
            (text, parsed)
        }
    };
    // The images of a drawing pool's OS available in the region, newest first. They are read only
    // as far as the age drawn (a family lists every weekly image, and a member takes one of the
    // newest few): listing them all would look every release up by region, for every member.
    let newest_first = |os: OsSku| calendar.images_available(os.default_image_family(), region, ctx.start);
    // The OS of a pool without `osSku` (the default pool's among them).
    let unnamed_os = || parse_os_sku("Ubuntu", parsed_version).ok();
    // No pool list or model: the default pool, as a member without `nodePools` has it.
    let default_pool = plan.dto.node_pools.is_none();
    let mut pools: Vec<NodePoolDto> = match (&plan.dto.node_pools, &plan.pools) {
        (Some(PoolsDto::Templates(list)), _) => list.clone(),
        (_, Some(model)) => {
            // Made only for a pool model: the other arms draw nothing from it.
            let mut pool_rng = stream("nodePools");
            let count = model.count.sample(&mut pool_rng, 1, 100);
            (0..count)
                .map(|j| {
                    let skus = if j == 0 { &model.linux_os_sku } else { &model.os_sku };
                    let sku = pick(&mut pool_rng, skus).unwrap_or("Ubuntu").to_string();
                    let windows = parse_os_sku(&sku, parsed_version).is_ok_and(OsSku::is_windows);
                    let name = match (j, windows) {
                        (0, _) => "system".to_string(),
                        (_, true) => format!("win{j}"),
                        (_, false) => format!("user{j}"),
                    };
                    NodePoolDto {
                        name,
                        os_sku: Some(sku),
                        node_count: Some(model.node_count.sample(&mut pool_rng, 1, 1000)),
                        node_image_version: None,
                        max_surge: model
                            .max_surge
                            .as_ref()
                            .map(|s| StringOrInt::String(draw_pick(&mut pool_rng, s, &places))),
                        from_snapshot: false,
                        ..NodePoolDto::default()
                    }
                })
                .collect()
        }
        // The default pool with no image to draw (none, at the scenario's start, of the family its
        // Ubuntu has at the member's version, in its region) is left out of the DTO: the member is
        // built with the same default pool, and no pool DTO is made and dropped for it.
        _ if default_pool && !keep_dtos && unnamed_os().is_none_or(|os| newest_first(os).next().is_none()) => {
            Vec::new()
        }
        _ => vec![NodePoolDto {
            name: "nodepool1".to_string(),
            os_sku: None,
            node_count: Some(3),
            node_image_version: None,
            max_surge: None,
            from_snapshot: false,
            ..NodePoolDto::default()
        }],
    };
    // A pool without an image takes one of the newest of its family in its region, by age. When no
    // pool has one to take, the draws would pick nothing: the stream is not made.
    let os_of = |pool: &NodePoolDto| match &pool.os_sku {
        Some(sku) => parse_os_sku(sku, parsed_version).ok(),
        None => unnamed_os(),
    };
    let drawing = |pool: &NodePoolDto| pool.node_image_version.is_none();
    let mut oses: Vec<OsSku> = Vec::new();
    for os in pools.iter().filter(|pool| drawing(pool)).filter_map(os_of) {
        if !oses.contains(&os) {
            oses.push(os);
        }
    }
    if oses.iter().any(|&os| newest_first(os).next().is_some()) {
        let mut age_rng = stream("nodeImageAge");
        for pool in pools.iter_mut().filter(|pool| drawing(pool)) {
            let Some(os) = os_of(pool) else { continue };
            let age = pick_index(&mut age_rng, &plan.image_age);
            // The `age`-th newest, or the oldest when there are fewer.
            if let Some(release) = newest_first(os).take(age + 1).last() {
                pool.node_image_version = Some(release.version.to_string());
            }
        }
    }
    let auto_upgrade = (!plan.auto_upgrade.is_empty())
        .then(|| draw_window(&mut stream("aksManagedAutoUpgradeSchedule"), &plan.auto_upgrade, &places))
        .flatten();
    let node_os = (!plan.node_os.is_empty())
        .then(|| draw_window(&mut stream("aksManagedNodeOSUpgradeSchedule"), &plan.node_os, &places))
        .flatten();
    let long_term_support =
        plan.long_term_support > 0.0 && stream("longTermSupport").random::<f64>() < plan.long_term_support;
    let stopped = plan.stopped > 0.0 && stream("stopped").random::<f64>() < plan.stopped;
    let name = places.fill_pattern(&plan.pattern);
    // The labels go into the DTO only when it is kept: the member is built from them as drawn.
    let (labels, drawn_labels) = if keep_dtos {
        (labels.into_iter().map(|(key, value)| (key.into_string(), value.into_string())).collect(), Vec::new())
    } else {
        (BTreeMap::new(), labels)
    };
    GeneratedMember {
        dto: MemberDto {
            cluster_resource_id: None,
            name,
            region: region.to_string(),
            group,
            labels,
            kubernetes_version,
            // Left out when it is the default pool as it stands, unless the DTO is kept to be shown.
            node_pools: (keep_dtos || !default_pool || pools.first().is_some_and(|p| p.node_image_version.is_some()))
                .then_some(pools),
            aks_managed_auto_upgrade_schedule: auto_upgrade.map(Box::new),
            aks_managed_node_os_upgrade_schedule: node_os.map(Box::new),
            long_term_support,
            stopped,
            durations: if keep_dtos { plan.dto.durations.clone().map(Box::new) } else { None },
            ..MemberDto::default()
        },
        labels: drawn_labels,
        kubernetes_version: parsed_version,
    }
}

/// A generated member as drawn: its DTO, with what is known of it already.
pub(crate) struct GeneratedMember {
    /// Its DTO; unless it is kept (`--dump-fleet`), without the labels and, when it parses, the
    /// Kubernetes version's text.
    pub dto: MemberDto,
    /// Its labels in key order, each key once, when the DTO does not hold them.
    pub labels: Vec<(Box<str>, Box<str>)>,
    /// Its Kubernetes version as it parses (`None` if it does not): converting the DTO does not
    /// parse it again.
    pub kubernetes_version: Option<KubernetesVersion>,
}

/// Regions a generator may place members in (for the release calendar, built before members).
pub(crate) fn generator_regions(generators: &[GeneratorDto]) -> BTreeSet<String> {
    generators.iter().filter_map(|g| g.regions.as_ref()).flat_map(|w| w.keys().cloned()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_placeholder_is_replaced_as_str_replace_replaces_it() {
        for (text, placeholder, value) in [
            ("m-{index}", "{index}", "007"),
            ("{index}{index}-{{index}}", "{index}", "1"),
            ("no braces", "{index}", "1"),
            ("{region}/{regio}/{region", "{region}", "west{group}"),
            ("{", "{group}", "x"),
            ("ünïcode-{group}-ß", "{group}", "g"),
        ] {
            let expected = text.contains(placeholder).then(|| text.replace(placeholder, value));
            assert_eq!(super::replace_placeholder(text, placeholder, value), expected, "{text}");
        }
    }

    #[test]
    fn a_pattern_filled_in_one_pass_reads_as_if_filled_placeholder_by_placeholder() {
        let groups = [None, Some("g1"), Some("{index}"), Some("x}"), Some("")];
        let regions = ["westeurope", "geography", "{group}"];
        let patterns = [
            "m-{index}",
            "{region}-{geography}-{group}-{index}",
            "{{region}}",
            "{{index}region}",
            "{group}{group}{index}",
            "plain",
            "{",
            "{regio}{region",
            "ü-{index}-ß-{group}",
        ];
        for group in groups {
            for region in regions {
                let places = super::Placeholders { index: "042", region, geography: "europe", group };
                for pattern in patterns {
                    let in_turn = places.fill_in_turn(pattern);
                    assert_eq!(places.fill(pattern), in_turn, "{pattern} {region} {group:?}");
                    // As a generator fills it: the pattern read once.
                    let read = super::Pattern::new(pattern.to_string());
                    assert_eq!(places.fill_pattern(&read), in_turn, "{pattern} {region} {group:?}");
                }
            }
        }
        // Where one pass could differ, the fill is the one placeholder by placeholder.
        let places = super::Placeholders { index: "1", region: "geography", geography: "eu", group: None };
        assert_eq!(places.fill("{{region}}"), "eu");
    }

    #[test]
    fn a_choice_read_once_picks_what_pick_picks_from_the_same_stream() {
        use std::collections::BTreeMap;

        use crate::engine::{Purpose, SeedTree};
        let weights: [&[(&str, f64)]; 7] = [
            &[],
            &[("a", 0.0)],
            &[("a", 2.0)],
            &[("a", 0.0), ("b", 3.0), ("c", 0.0)],
            &[("a", 1.0), ("b", 0.0), ("c", 2.0), ("d", 0.5)],
            &[("x", 0.1), ("y", 0.2), ("z", 0.3)],
            &[("eastus", 1.0), ("westeurope", 1.0)],
        ];
        let tree = SeedTree::new(7, 0);
        for list in weights {
            let map: BTreeMap<String, f64> = list.iter().map(|(k, w)| (k.to_string(), *w)).collect();
            let choices = super::Choices::new(&map, |key| key.len());
            for i in 0..200u64 {
                let stream = || tree.stream(Purpose::FleetGenerator, [1, i, 2]);
                let picked = choices.pick_own(stream);
                assert_eq!(picked.map(|(key, _)| key), super::pick(&mut stream(), &map), "{list:?} {i}");
                // Each key carries what the plan worked out for it.
                assert!(picked.is_none_or(|(key, len)| key.len() == *len));
            }
        }
    }

    #[test]
    fn an_index_is_zero_padded_as_format_pads_it() {
        let mut buffer = [0u8; 40];
        for (number, width) in [(1, 1), (7, 3), (1000, 4), (12345, 2), (0, 0), (u64::MAX, 25), (99, 6)] {
            assert_eq!(super::zero_padded(number, width, &mut buffer), format!("{number:0width$}"));
        }
    }
}
