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
use crate::fleet::{KubernetesVersion, Member, MemberLabels};
use crate::world::{DurationModel, ReleaseCalendar};

use super::ctx::{Ctx, check_name, is_region_name, is_resource_name};
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
            build_member(ctx, Cow::Borrowed(m), Vec::new(), &path, Known::NOTHING).map(|member| FleetEntry {
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
        let GeneratedMember { dto: member, labels, kubernetes_version } = generator.draw(&own, i, calendar, keep_dtos);
        let known = Known { valid_label_keys: generator.valid_label_keys(), kubernetes_version };
        // The DTO's text moves into the member unless `--dump-fleet` keeps the DTO.
        let (built, dto) = if keep_dtos {
            (build_member(&mut own, Cow::Borrowed(&member), labels, "", known), Some(Box::new(member)))
        } else {
            (build_member(&mut own, Cow::Owned(member), labels, "", known), None)
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

/// The fleet in name order, with what each member carries beside it.
pub(crate) struct NameOrder {
    pub members: Vec<Member>,
    /// Each member's own duration model, or empty when no member has one.
    pub durations: Vec<Option<Arc<DurationModel>>>,
    /// Each member's DTO with every label as the service shows it, Fleet's own among them (what
    /// `--dump-fleet` writes), or empty when DTOs were not kept.
    pub dtos: Vec<MemberDto>,
}

/// Sorts the fleet by name and tells every name defined twice (at the later of the two definitions,
/// in the order they were defined; the names in name order). Entries are sorted as (name's first
/// 16 bytes as one number, entry's index) pairs, each number made where its member was built (a
/// generated one on the thread that drew it, while its name was at hand): names are compared in
/// full only where the numbers are equal, so where names differ within their first 16 bytes a
/// comparison, or a pair checked for duplicates, reads neither the entries nor the names. Then
/// each entry, a large record, is moved once, from where it lies to its place in name order. A
/// large fleet's pairs are made, checked and taken on the pool's threads (on one thread, checking
/// and taking a million members was about 375 ms of the 1.3 s of loading them).
pub(crate) fn into_name_order(ctx: &mut Ctx, entries: Vec<FleetEntry>, keep_dtos: bool) -> NameOrder {
    let parallel = entries.len() >= PARALLEL_ORDER_FROM;
    let pair = |(i, e): (usize, &FleetEntry)| (e.name_prefix, i);
    let mut order: Vec<(u128, usize)> = if parallel {
        entries.par_iter().enumerate().map(pair).collect()
    } else {
        entries.iter().enumerate().map(pair).collect()
    };
    // Stable, so duplicates keep their order (the second is the one reported).
    order.par_sort_by(|a, b| a.0.cmp(&b.0).then_with(|| entries[a.1].member.name.cmp(&entries[b.1].member.name)));
    let twice = |p: &[(u128, usize)]| {
        (p[0].0 == p[1].0 && entries[p[0].1].member.name == entries[p[1].1].member.name).then_some((p[0].1, p[1].1))
    };
    let defined_twice: Vec<(usize, usize)> = if parallel {
        order.par_windows(2).filter_map(twice).collect()
    } else {
        order.windows(2).filter_map(twice).collect()
    };
    for (first, second) in defined_twice {
        let (first, second) = (&entries[first], &entries[second]);
        let which = |e: &FleetEntry| match e.origin {
            Origin::Generated { number, .. } => format!("as generated member {number} of {}", e.origin.path()),
            Origin::Explicit(_) => format!("at {}", e.origin.path()),
        };
        let this = match second.origin {
            Origin::Generated { number, .. } => format!(" (generated member {number})"),
            Origin::Explicit(_) => String::new(),
        };
        ctx.err(
            second.origin.path(),
            format!("member {}{this} is defined twice (also {})", echo(&second.member.name), which(first)),
        );
    }
    // What goes beside the members is taken only when some member has it (a list of a million
    // empty places would be 16 MB of fresh pages).
    let own_durations = |e: &FleetEntry| e.durations.is_some();
    let with_durations =
        if parallel { entries.par_iter().any(own_durations) } else { entries.iter().any(own_durations) };
    let (members, durations, dtos) = if with_durations || keep_dtos {
        let (members, beside): (Vec<Member>, Vec<_>) =
            take_in_order(entries, &order, parallel, |e| (e.member, (e.durations, e.dto)));
        let (durations, dtos): (Vec<_>, Vec<_>) = beside.into_iter().unzip();
        (members, if with_durations { durations } else { Vec::new() }, dtos)
    } else {
        let (members, _): (Vec<Member>, Vec<()>) = take_in_order(entries, &order, parallel, |e| (e.member, ()));
        (members, Vec::new(), Vec::new())
    };
    let dtos = members
        .iter()
        .zip(dtos)
        .filter_map(|(m, dto)| dto.map(|d| MemberDto { labels: m.all_labels(), ..*d }))
        .collect();
    NameOrder { members, durations, dtos }
}

/// A fleet of at least this many members is put in name order on the pool's threads.
const PARALLEL_ORDER_FROM: usize = 1 << 14;

/// `items` in the order `order` gives (the k-th is `items[order[k].1]`), each moved once and split
/// in two; on the pool's threads if `parallel`. Panics, before moving any, unless `order` names
/// every item exactly once.
fn take_in_order<T: Send, A: Send, B: Send>(
    mut items: Vec<T>,
    order: &[(u128, usize)],
    parallel: bool,
    split: impl Fn(T) -> (A, B) + Sync + Send,
) -> (Vec<A>, Vec<B>) {
    let mut named = vec![0u64; items.len().div_ceil(64)];
    let once = order.len() == items.len()
        && order.iter().all(|&(_, i)| {
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            let fresh = named.get(word).is_some_and(|w| w & bit == 0 && i < items.len());
            if fresh {
                named[word] |= bit;
            }
            fresh
        });
    assert!(once, "the order names every item once");
    /// The items' buffer, read by any thread, each place once.
    struct Places<T>(*const T);
    // SAFETY: each place is read by one thread only (`order` names it once), which then owns the
    // item: sending the items to other threads is what `T: Send` allows.
    unsafe impl<T: Send> Sync for Places<T> {}
    impl<T> Places<T> {
        /// SAFETY: `i` is below the buffer's length and no other call reads place `i`.
        unsafe fn take(&self, i: usize) -> T {
            unsafe { self.0.add(i).read() }
        }
    }
    let places = Places(items.as_ptr());
    // SAFETY: the items now belong to the reads below, which take each once (checked above). If
    // `split` panics, the items not yet taken are leaked, never dropped twice; the vector frees
    // only its buffer.
    unsafe { items.set_len(0) };
    let take = |&(_, i): &(u128, usize)| split(unsafe { places.take(i) });
    let (mut a, mut b) = (Vec::new(), Vec::new());
    if parallel {
        order.par_iter().map(take).unzip_into_vecs(&mut a, &mut b);
    } else {
        (a, b) = order.iter().map(take).unzip();
    }
    drop(items);
    (a, b)
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
///
/// `drawn_labels`: a generated member's labels drawn beside its DTO (in key order, each key once),
/// which are checked and taken as the DTO's own are; empty for a member whose DTO holds its labels.
pub(crate) fn build_member(
    ctx: &mut Ctx,
    dto: Cow<'_, MemberDto>,
    drawn_labels: Vec<(Box<str>, Box<str>)>,
    path: &str,
    known: Known,
) -> Option<Member> {
    let m = dto.as_ref();
    let before = ctx.problems.len();
    // Paths are made only for a problem: this runs for every generated member.
    if !is_resource_name(&m.name) {
        check_name(ctx, &m.name, &join(path, "name"), "member");
    }
    if !is_region_name(&m.region) {
        ctx.err(join(path, "region"), format!("{} is not an Azure region name like \"westeurope\"", echo(&m.region)));
    }
    if let Some(group) = m.group.as_ref().filter(|g| !is_resource_name(g)) {
        check_name(ctx, group, &join(path, "group"), "update group");
    }
    let cluster = m
        .cluster_resource_id
        .as_deref()
        .and_then(|id| ClusterRef::parse(id).map_err(|e| ctx.err(join(path, "clusterResourceId"), e)).ok());
    let drawn = drawn_labels.iter().map(|(k, v)| (&**k, &**v));
    for (key, value) in m.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).chain(drawn) {
        let label_path = || join(&join(path, "labels"), key);
        if is_fleet_label(key) {
            check_fleet_label(ctx, m, cluster.as_ref(), key, value, label_path);
            continue;
        }
        if !known.valid_label_keys.iter().any(|k| k == key)
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
    // The DTO's labels, then the drawn ones (a generated member has one or the other), less
    // Fleet's own. A generated member's drawn labels become its labels without another list.
    let mut pairs = drawn_labels;
    let (name, region, group) = match dto {
        Cow::Owned(m) => {
            if !m.labels.is_empty() {
                let own = m.labels.into_iter().map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str()));
                pairs = own.chain(pairs).collect();
            }
            (m.name, m.region, m.group)
        }
        Cow::Borrowed(m) => {
            if !m.labels.is_empty() {
                pairs = m.labels.iter().map(|(k, v)| (k.as_str().into(), v.as_str().into())).chain(pairs).collect();
            }
            (m.name.clone(), m.region.clone(), m.group.clone())
        }
    };
    pairs.retain(|(k, _)| !is_fleet_label(k));
    let labels = MemberLabels::from_pairs(pairs);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    /// An item: its index, and a reference counted with the others.
    type Counted = (usize, Arc<()>);

    /// `n` items, each holding a counted reference, and an order of them (a multiplicative
    /// shuffle: `7` and `n` share no factor for the sizes below).
    fn items(n: usize) -> (Arc<()>, Vec<Counted>, Vec<(u128, usize)>) {
        let count = Arc::new(());
        let items = (0..n).map(|i| (i, Arc::clone(&count))).collect();
        let order = (0..n).map(|k| (0, (k * 7 + 3) % n)).collect();
        (count, items, order)
    }

    #[test]
    fn takes_each_item_once_into_its_place_on_one_thread_or_many() {
        for n in [0, 1, 2, 100, PARALLEL_ORDER_FROM + 5] {
            for parallel in [false, true] {
                let (count, items, order) = items(n);
                let (places, counts) = take_in_order(items, &order, parallel, |(i, c)| (i, c));
                let expected: Vec<usize> = order.iter().map(|&(_, i)| i).collect();
                assert_eq!(places, expected, "n {n}, parallel {parallel}");
                // Every item moved, none copied or dropped on the way.
                assert_eq!(Arc::strong_count(&count), n + 1);
                drop(counts);
                assert_eq!(Arc::strong_count(&count), 1);
            }
        }
    }

    #[test]
    fn a_split_that_panics_drops_each_item_at_most_once() {
        let n = PARALLEL_ORDER_FROM + 5;
        for parallel in [false, true] {
            let (count, items, order) = items(n);
            let fail_at = order[n / 2].1;
            let taken = catch_unwind(AssertUnwindSafe(|| {
                take_in_order(items, &order, parallel, |(i, c)| {
                    assert_ne!(i, fail_at, "planted");
                    (i, c)
                })
            }));
            assert!(taken.is_err());
            // The items taken, the one in hand among them, were dropped once; the others leaked.
            let left = Arc::strong_count(&count) - 1;
            if parallel {
                assert!(left < n, "{left}");
            } else {
                assert_eq!(left, n - n / 2 - 1);
            }
        }
    }

    /// A member's own labels are the scenario's, never Fleet's (those it shows from the member
    /// itself): from its DTO or drawn beside it, converted from a DTO it owns or borrows, in key
    /// order, the later of a repeated key kept.
    #[test]
    fn a_member_keeps_its_own_labels_in_key_order_and_not_fleets() {
        let start = crate::engine::Time::parse_rfc3339("2026-01-05T00:00:00Z").unwrap();
        let boxed = |pairs: &[(&str, &str)]| -> Vec<(Box<str>, Box<str>)> {
            pairs.iter().map(|&(k, v)| (k.into(), v.into())).collect()
        };
        let dto = |labels: &[(&str, &str)]| MemberDto {
            name: "m1".to_string(),
            region: "eastus".to_string(),
            kubernetes_version: "1.33.1".to_string(),
            labels: labels.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect(),
            ..MemberDto::default()
        };
        let expected = [("ring", "canary"), ("tier", "web")];
        let cases = [
            // In the DTO, Fleet's among them.
            (dto(&[("tier", "web"), (FLEET_LOCATION, "eastus"), ("ring", "canary")]), Vec::new()),
            // Drawn beside a DTO without labels, in key order, Fleet's among them.
            (dto(&[]), boxed(&[(FLEET_LOCATION, "eastus"), ("ring", "canary"), ("tier", "web")])),
            // Drawn only Fleet's, the DTO's own labels besides, one of them drawn again.
            (dto(&[("ring", "canary"), ("tier", "db")]), boxed(&[(FLEET_MEMBER_NAME, "m1"), ("tier", "web")])),
        ];
        for (i, (dto, drawn)) in cases.into_iter().enumerate() {
            for owned in [false, true] {
                let mut ctx = Ctx::new(start);
                let member = if owned {
                    build_member(&mut ctx, Cow::Owned(dto.clone()), drawn.clone(), "", Known::NOTHING)
                } else {
                    build_member(&mut ctx, Cow::Borrowed(&dto), drawn.clone(), "", Known::NOTHING)
                };
                assert!(ctx.problems.is_empty(), "case {i}, owned {owned}: {:?}", ctx.problems);
                let member = member.expect("a member without problems");
                assert_eq!(member.labels.iter().collect::<Vec<_>>(), expected, "case {i}, owned {owned}");
            }
        }
    }

    #[test]
    fn refuses_an_order_that_does_not_name_every_item_once() {
        let n = 50;
        let (_, _, good) = items(n);
        let mut repeated = good.clone();
        repeated[10].1 = repeated[11].1;
        let mut beyond = good.clone();
        beyond[10].1 = n;
        let short = good[1..].to_vec();
        for (what, order) in [("repeated", repeated), ("beyond", beyond), ("short", short)] {
            for parallel in [false, true] {
                let (count, items, _) = items(n);
                let taken = catch_unwind(AssertUnwindSafe(|| take_in_order(items, &order, parallel, |x| (x, ()))));
                assert!(taken.is_err(), "{what}");
                // Refused before any item moved: each was dropped with the list, once.
                assert_eq!(Arc::strong_count(&count), 1, "{what}");
            }
        }
    }
}
