//! Members: explicit member DTOs and the generators' drawn ones → [`Member`]s, each with where it
//! was defined. Generated members go through the same [`build_member`] as explicit ones.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use rayon::prelude::*;

use crate::engine::name_key;
use crate::fleet::member::{
    ClusterRef, DEFAULT_RESOURCE_GROUP, DEFAULT_SUBSCRIPTION_ID, FLEET_CLUSTER_NAME, FLEET_LOCATION, FLEET_MEMBER_NAME,
    FLEET_RESOURCE_GROUP, is_fleet_label, normalize_region,
};
use crate::fleet::selector::{validate_label_key, validate_label_value};
use crate::fleet::{KubernetesVersion, Member};
use crate::world::{DurationModel, ReleaseCalendar};

use super::ctx::{Ctx, check_name, is_resource_name};
use super::dto::{MemberDto, ScenarioDto};
use super::generate::{GeneratedMember, Generator, GeneratorDto, locate_generated};
use super::models::duration_model;
use super::pools::{build_pool, default_pool};
use super::problem::{Problem, echo, join};

/// One member of the fleet while the scenario is built.
pub(crate) struct FleetEntry {
    pub member: Member,
    /// [`name_prefix`] of its name.
    pub name_prefix: u128,
    /// Where it was defined, for problems.
    pub origin: Origin,
    /// Its own duration model (`durations` of the member or its generator).
    pub durations: Option<Arc<DurationModel>>,
    /// Its DTO, kept only for `--dump-fleet` (boxed: a DTO is large and usually absent).
    pub dto: Option<Box<MemberDto>>,
}

/// Where a member was defined.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Origin {
    /// `/members/<index>`.
    Explicit(usize),
    /// Member `number` (1-based) of `/memberGenerators/<generator>`.
    Generated { generator: usize, number: u64 },
}

impl Origin {
    /// Its JSON Pointer, or its generator's.
    pub fn path(self) -> String {
        match self {
            Origin::Explicit(i) => join("/members", i),
            Origin::Generated { generator, .. } => join("/memberGenerators", generator),
        }
    }
}

/// Converts the scenario's explicit `members`, each with its own duration model if it gives one.
pub(crate) fn build_members(
    ctx: &mut Ctx,
    dto: &ScenarioDto,
    base: &DurationModel,
    keep_dtos: bool,
) -> Vec<FleetEntry> {
    dto.members
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let path = join("/members", i);
            let durations =
                m.durations.as_ref().map(|d| Arc::new(duration_model(ctx, d, base.clone(), &join(&path, "durations"))));
            build_member(ctx, Cow::Borrowed(m), &path, Known::NOTHING).map(|member| FleetEntry {
                name_prefix: name_prefix(&member.name),
                member,
                origin: Origin::Explicit(i),
                durations,
                dto: keep_dtos.then(|| Box::new(m.clone())),
            })
        })
        .collect()
}

/// Generates the members of every generator, converts them and adds them to `out`. `calendar`
/// resolves minors and image ages; `keep_dtos` keeps each member's DTO (for `--dump-fleet`). A
/// generator stops at its first member with a problem.
pub(crate) fn build_generated(
    ctx: &mut Ctx,
    generators: &[GeneratorDto],
    seed: u64,
    calendar: &ReleaseCalendar,
    base_durations: &DurationModel,
    keep_dtos: bool,
    out: &mut Vec<FleetEntry>,
) {
    // Room for what the generators ask (their counts are checked later; a wrong one only costs room).
    let asked = generators.iter().map(|g| g.count.clamp(0, 1 << 20) as usize).fold(0usize, usize::saturating_add);
    out.reserve(asked.min(1 << 20));
    // Every generator is planned first, its problems kept apart so that they are told in the order
    // of one generator after the other: its plan's, then its first member's with a problem. Plans
    // are independent: made on the pool's threads, each into a context of its own, and taken in
    // generator order (a file of many small generators spends as much planning as drawing).
    let start = ctx.start;
    let plans: Vec<(Planned, Told, Vec<Problem>)> = generators
        .par_iter()
        .enumerate()
        .map(|(g, dto)| {
            let path = join("/memberGenerators", g);
            let mut own = Ctx::new(start);
            let generator = Generator::plan(&mut own, dto, &path, seed, calendar, base_durations);
            (Planned { path, generator }, Told { problems: own.problems, stopped: false }, own.warnings)
        })
        .collect();
    let mut planned: Vec<Planned> = Vec::with_capacity(plans.len());
    let mut told: Vec<Told> = Vec::with_capacity(plans.len());
    for (plan, its_problems, warnings) in plans {
        planned.push(plan);
        told.push(its_problems);
        ctx.warnings.extend(warnings);
    }
    // The members of all generators, in order, are one sequence drawn and converted in parallel a
    // chunk at a time (each member's draws come from its own streams, so the order of the work
    // changes nothing), then taken in order: a fleet of many small generators keeps every thread
    // busy as one large generator does.
    let start = ctx.start;
    let draw = |(g, i): (usize, u64)| -> Drawn {
        let Planned { path, generator, .. } = &planned[g];
        let generator = generator.as_ref().expect("only planned generators draw");
        let mut own = Ctx::new(start);
        let GeneratedMember { dto: member, kubernetes_version } = generator.draw(&own, i, calendar, keep_dtos);
        let known = Known { valid_label_keys: generator.valid_label_keys(), kubernetes_version };
        // The DTO's text moves into the member unless `--dump-fleet` keeps the DTO.
        let (built, dto) = if keep_dtos {
            (build_member(&mut own, Cow::Borrowed(&member), "", known), Some(Box::new(member)))
        } else {
            (build_member(&mut own, Cow::Owned(member), "", known), None)
        };
        match built {
            Some(m) if own.problems.is_empty() => (dto, Ok((name_prefix(&m.name), m))),
            _ => {
                // Drawn again for its name (a member with problems is rare).
                let name = generator.draw(&own, i, calendar, false).dto.name;
                locate_generated(&mut own.problems, path, i + 1, &name);
                (dto, Err(own.problems))
            }
        }
    };
    // A chunk is drawn on the pool's threads while the one before it is taken into `out` (moving a
    // million members' records into place, page by fresh page, was about a fifth of loading them,
    // and the threads waited for it). The next chunk is chosen before the one before it is taken,
    // so it may hold members of a generator that this taking stops: they are drawn for nothing and
    // not taken, as the members after a stop always are.
    let draw_chunk = |chunk: &[(usize, u64)], drawn: &mut Vec<Drawn>| {
        // A few members are drawn here: handing them to the thread pool would cost more.
        if chunk.len() < PARALLEL_FROM {
            drawn.extend(chunk.iter().copied().map(draw));
        } else {
            chunk.par_iter().copied().map(draw).collect_into_vec(drawn);
        }
    };
    let take = |chunk: &[(usize, u64)], drawn: &mut Vec<Drawn>, told: &mut [Told], out: &mut Vec<FleetEntry>| {
        for (&(g, i), (dto, built)) in chunk.iter().zip(drawn.drain(..)) {
            let t = &mut told[g];
            if t.stopped {
                continue;
            }
            match built {
                Ok((name_prefix, member)) => out.push(FleetEntry {
                    member,
                    name_prefix,
                    origin: Origin::Generated { generator: g, number: i + 1 },
                    durations: planned[g].generator.as_ref().and_then(Generator::durations),
                    dto,
                }),
                Err(problems) => {
                    t.problems.extend(problems);
                    t.stopped = true;
                }
            }
        }
    };
    // The members to draw next, in order, from where the last chunk ended: members of the
    // generators that have not stopped.
    let (mut g, mut next) = (0usize, 0usize);
    let mut fill = |chunk: &mut Vec<(usize, u64)>, told: &[Told]| {
        chunk.clear();
        while chunk.len() < GENERATED_CHUNK && g < planned.len() {
            let count = planned[g].count();
            if told[g].stopped || next >= count {
                (g, next) = (g + 1, 0);
                continue;
            }
            let end = count.min(next + GENERATED_CHUNK - chunk.len());
            chunk.extend((next..end).map(|i| (g, i as u64)));
            next = end;
        }
    };
    // Two buffers of each, used in turn: a fresh one would be fresh pages each time.
    let room = asked.min(GENERATED_CHUNK);
    let (mut chunk, mut drawn) = (Vec::with_capacity(room), Vec::with_capacity(room));
    let (mut next_chunk, mut next_drawn) = (Vec::with_capacity(room), Vec::with_capacity(room));
    fill(&mut chunk, &told);
    draw_chunk(&chunk, &mut drawn);
    while !chunk.is_empty() {
        fill(&mut next_chunk, &told);
        if next_chunk.len() < PARALLEL_FROM {
            take(&chunk, &mut drawn, &mut told, out);
            draw_chunk(&next_chunk, &mut next_drawn);
        } else {
            rayon::join(|| draw_chunk(&next_chunk, &mut next_drawn), || take(&chunk, &mut drawn, &mut told, out));
        }
        std::mem::swap(&mut chunk, &mut next_chunk);
        std::mem::swap(&mut drawn, &mut next_drawn);
    }
    for t in told {
        ctx.problems.extend(t.problems);
    }
}

/// A generator once planned: what its members are drawn with.
struct Planned<'g> {
    /// `/memberGenerators/<g>`.
    path: String,
    /// `None` if its plan has problems: it draws nothing.
    generator: Option<Generator<'g>>,
}

impl Planned<'_> {
    /// How many members it draws.
    fn count(&self) -> usize {
        self.generator.as_ref().map_or(0, |g| g.count() as usize)
    }
}

/// What a generator has to tell, in order: its plan's problems, then its first member's with one.
struct Told {
    problems: Vec<Problem>,
    /// It met a member with a problem: the members after it are not taken.
    stopped: bool,
}

/// A generated member drawn and converted: its DTO if kept, and the member (with its name's
/// [`name_prefix`], made while the name is at hand on the thread that drew it) or its problems.
type Drawn = (Option<Box<MemberDto>>, Result<(u128, Member), Vec<Problem>>);

/// Generated members drawn in parallel before they are taken in order (large enough to keep every
/// thread busy, small enough that a generator with a bad first member does not draw them all).
const GENERATED_CHUNK: usize = 8192;

/// Fewer generated members than this are drawn on the calling thread.
const PARALLEL_FROM: usize = 256;

/// What is already known of a member DTO's fields, so that converting it does not work it out again.
#[derive(Clone, Copy)]
pub(crate) struct Known<'a> {
    /// Label keys known to pass `validate_label_key` (a generator's, checked once for all its
    /// members): theirs is not checked again.
    pub valid_label_keys: &'a [String],
    /// `kubernetesVersion` as it parses, when it does (a generator parsed it as it drew it);
    /// `None`: parsed here, and its problem told.
    pub kubernetes_version: Option<KubernetesVersion>,
}

impl Known<'_> {
    /// Nothing known: every field is checked (an explicit member).
    pub(crate) const NOTHING: Known<'static> = Known { valid_label_keys: &[], kubernetes_version: None };
}

/// Converts one member DTO (explicit or generated), with what is [`Known`] of it.
pub(crate) fn build_member(ctx: &mut Ctx, dto: Cow<'_, MemberDto>, path: &str, known: Known) -> Option<Member> {
    let m = dto.as_ref();
    let before = ctx.problems.len();
    // Paths are made only for a problem: this runs for every generated member.
    if !is_resource_name(&m.name) {
        check_name(ctx, &m.name, &join(path, "name"), "member");
    }
    if m.region.is_empty() || !m.region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        ctx.err(join(path, "region"), format!("{} is not an Azure region name like \"westeurope\"", echo(&m.region)));
    }
    if let Some(group) = m.group.as_ref().filter(|g| !is_resource_name(g)) {
        check_name(ctx, group, &join(path, "group"), "update group");
    }
    let cluster = m
        .cluster_resource_id
        .as_deref()
        .and_then(|id| ClusterRef::parse(id).map_err(|e| ctx.err(join(path, "clusterResourceId"), e)).ok());
    for (key, value) in &m.labels {
        let label_path = || join(&join(path, "labels"), key);
        if is_fleet_label(key) {
            check_fleet_label(ctx, m, cluster.as_ref(), key, value, label_path);
            continue;
        }
        if !known.valid_label_keys.contains(key)
            && let Err(e) = validate_label_key(key)
        {
            ctx.err(label_path(), e);
        }
        if let Err(e) = validate_label_value(value) {
            ctx.err(label_path(), e);
        }
    }
    let version = known.kubernetes_version.or_else(|| {
        KubernetesVersion::parse(&m.kubernetes_version).map_err(|e| ctx.err(join(path, "kubernetesVersion"), e)).ok()
    });
    let pools = match &m.node_pools {
        None => vec![default_pool(version)],
        Some(list) if list.is_empty() => {
            ctx.err(
                join(path, "nodePools"),
                "a member needs at least one node pool (or omit nodePools for the default pool)",
            );
            Vec::new()
        }
        Some(list) => {
            // Names are compared only between pools (a member usually has one).
            let mut names = BTreeSet::new();
            // Sized to the list: a member keeps its pools for the whole run, and a list grown
            // from empty would keep room for four.
            let mut pools = Vec::with_capacity(list.len());
            for (i, p) in list.iter().enumerate() {
                // Made only for a problem, like the member's own paths.
                let pool_path = || join(&join(path, "nodePools"), i);
                if list.len() > 1 && !names.insert(p.name.as_str()) {
                    ctx.err(join(&pool_path(), "name"), format!("node pool {} appears twice", echo(&p.name)));
                }
                pools.extend(build_pool(ctx, p, &pool_path, version));
            }
            pools
        }
    };
    let windows = [
        (&m.aks_managed_auto_upgrade_schedule, "aksManagedAutoUpgradeSchedule"),
        (&m.aks_managed_node_os_upgrade_schedule, "aksManagedNodeOSUpgradeSchedule"),
    ]
    .map(|(w, field)| {
        w.as_ref().and_then(|w| {
            let problems = w.validate(&join(path, field));
            let ok = problems.is_empty();
            ctx.problems.extend(problems);
            ok.then(|| w.compile(ctx.start))
        })
    });
    if ctx.problems.len() > before {
        return None;
    }
    let [auto_upgrade_window, node_os_window] = windows;
    let (long_term_support, stopped) = (m.long_term_support, m.stopped);
    let name_key = name_key(&m.name);
    let own = |(k, _): &(String, String)| !is_fleet_label(k);
    let (name, region, group, labels) = match dto {
        Cow::Owned(m) => (m.name, m.region, m.group, m.labels.into_iter().filter(own).collect()),
        Cow::Borrowed(m) => (
            m.name.clone(),
            m.region.clone(),
            m.group.clone(),
            m.labels.iter().map(|(k, v)| (k.clone(), v.clone())).filter(own).collect(),
        ),
    };
    Some(Member {
        name,
        name_key,
        region,
        group,
        labels,
        cluster,
        kubernetes_version: version?,
        node_pools: pools,
        auto_upgrade_window: auto_upgrade_window.map(Arc::new),
        node_os_window: node_os_window.map(Arc::new),
        long_term_support,
        stopped,
    })
}

/// A `fleet.azure.com/*` label the scenario sets: the service owns it, so only the value it would
/// show is accepted (regions compare as Azure compares them: `East US` = `eastus`).
///
/// `path` makes the label's JSON pointer, only for a problem: a member imported from Azure carries
/// five of these labels, and a key's `/` is escaped in a pointer.
fn check_fleet_label(
    ctx: &mut Ctx,
    m: &MemberDto,
    cluster: Option<&ClusterRef>,
    key: &str,
    value: &str,
    path: impl FnOnce() -> String,
) {
    let expected = match key {
        FLEET_LOCATION => {
            if normalize_region(value) == normalize_region(&m.region) {
                return;
            }
            m.region.as_str()
        }
        FLEET_MEMBER_NAME => m.name.as_str(),
        FLEET_CLUSTER_NAME => cluster.map_or(m.name.as_str(), |c| c.name.as_str()),
        FLEET_RESOURCE_GROUP => cluster.map_or(DEFAULT_RESOURCE_GROUP, |c| c.resource_group.as_str()),
        _ => cluster.map_or(DEFAULT_SUBSCRIPTION_ID, |c| c.subscription_id.as_str()),
    };
    // ARM names and ids compare case-insensitively; member names are lowercase already.
    let same = if key == FLEET_MEMBER_NAME { value == expected } else { value.eq_ignore_ascii_case(expected) };
    if !same {
        ctx.err(
            path(),
            format!("{key} is set by Fleet Manager: for this member it is {}, not {} (remove it, or give the service's value)", echo(expected), echo(value)),
        );
    }
}

/// The first 16 bytes of `name` as a big-endian number, zero-padded: of two names whose numbers
/// differ, the one with the smaller number comes first. (At the first byte where the numbers
/// differ, either both names have a byte, or the shorter name has ended there and the longer has
/// a byte above zero after the same bytes: it comes after.)
pub(crate) fn name_prefix(name: &str) -> u128 {
    let mut bytes = [0u8; 16];
    let len = name.len().min(16);
    bytes[..len].copy_from_slice(&name.as_bytes()[..len]);
    u128::from_be_bytes(bytes)
}
