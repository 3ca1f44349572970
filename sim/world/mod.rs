//! What the simulated environment does: release availability per region, upgrade durations,
//! failures, approvals. All randomness of a replication lives here, in named streams of the seed tree
//! (SEMANTICS §10); the world never makes scheduling decisions.

pub mod dist;
pub mod models;
pub mod regions;
pub mod releases;
pub mod rollout;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::engine::{Duration, Purpose, SeedTree, Time, name_key};
use crate::fleet::window::{MaintenanceWindow, WindowClass, WindowState};
use crate::fleet::{KubernetesVersion, Member, MemberId, NodeImageVersion, Surge};
use crate::orchestrator::{Facts, GateRef, Note, Outcome, RunId};

pub use dist::DurationDist;
pub use models::{
    BadRelease, DurationModel, FailureCode, FailureModel, FailurePoint, ForcedOutcome, Models, Override,
    RegionalIncident,
};
pub use releases::{Availability, ImageRelease, KubernetesRelease, ReleaseCalendar};

/// `ManagedClusterUpgradeSpec.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpgradeType {
    Full,
    ControlPlaneOnly,
    NodeImageOnly,
}

impl UpgradeType {
    pub fn api_name(self) -> &'static str {
        match self {
            UpgradeType::Full => "Full",
            UpgradeType::ControlPlaneOnly => "ControlPlaneOnly",
            UpgradeType::NodeImageOnly => "NodeImageOnly",
        }
    }

    fn touches_control_plane(self) -> bool {
        matches!(self, UpgradeType::Full | UpgradeType::ControlPlaneOnly)
    }

    fn touches_pools(self) -> bool {
        matches!(self, UpgradeType::Full | UpgradeType::NodeImageOnly)
    }
}

/// `NodeImageSelection.type` (SEMANTICS §8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageSelection {
    Latest,
    Consistent,
    /// Versions by image family; pools of other families are not upgraded.
    Custom(BTreeMap<String, NodeImageVersion>),
}

impl ImageSelection {
    pub fn api_name(&self) -> &'static str {
        match self {
            ImageSelection::Latest => "Latest",
            ImageSelection::Consistent => "Consistent",
            ImageSelection::Custom(_) => "Custom",
        }
    }
}

/// `ManagedClusterUpdate` of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeSpec {
    pub kind: UpgradeType,
    pub kubernetes_version: Option<KubernetesVersion>,
    pub images: ImageSelection,
    /// SecurityPatch auto-upgrade runs: Linux pools only (SEMANTICS §8).
    pub security_patch: bool,
}

/// What to do with a member more than one minor behind the target (SEMANTICS §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinorSkipRule {
    /// The upgrade fails with `UpgradeVersionSkipNotAllowed` (default).
    Fail,
    /// The member is `Skipped` when examined.
    Skip,
}

/// World-side settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorldSettings {
    /// Node images older than this at upgrade fail (SEMANTICS §8: 90 days).
    pub node_image_max_age: Duration,
    pub minor_skip: MinorSkipRule,
    /// SEMANTICS §5.4: "opens within 4 h".
    pub window_lookahead: Duration,
}

/// One pool's image before and after an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolChange {
    pub pool: String,
    pub from: Option<NodeImageVersion>,
    pub to: Option<NodeImageVersion>,
}

/// What an attempt changed on the cluster, for `members.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeRecord {
    pub from_version: KubernetesVersion,
    pub to_version: KubernetesVersion,
    pub pools: Vec<PoolChange>,
    /// The attempt's target included a release marked bad.
    pub received_bad_release: bool,
}

/// The world's answer to "this member starts upgrading now".
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub duration: Duration,
    pub outcome: Outcome,
}

/// A pool's current image: borrowed from the fleet or the release calendar (no copy per
/// replication), owned only for an image the calendar does not list.
#[derive(Clone, Debug)]
struct PoolState<'a> {
    image: Option<Cow<'a, NodeImageVersion>>,
    from_snapshot: bool,
}

#[derive(Clone, Debug)]
struct MemberState<'a> {
    kubernetes_version: KubernetesVersion,
    pools: Vec<PoolState<'a>>,
    /// The run currently upgrading this member (AKS rejects concurrent operations).
    busy_with: Option<RunId>,
    /// Counts finished attempts: facts cached about the member's versions hold for one epoch.
    epoch: u32,
}

/// What one run needs from the world.
#[derive(Clone, Debug)]
pub struct RunContext {
    pub name: String,
    pub spec: UpgradeSpec,
    /// `Consistent`: selected per family at the run's first start (SEMANTICS §8).
    pub selected_images: Option<BTreeMap<String, NodeImageVersion>>,
    pub approval_policy: Option<DurationDist>,
    name_key: u64,
}

/// A component of an in-flight upgrade that completes at `at` (offset from the start).
#[derive(Clone, Debug)]
struct InFlight<'a> {
    started: Time,
    /// Control plane target and when it is done.
    control_plane: Option<(KubernetesVersion, Duration)>,
    /// (pool index, target image or `None` for a Kubernetes-only roll, done offset).
    pools: Vec<(usize, Option<Cow<'a, NodeImageVersion>>, Duration)>,
    record: UpgradeRecord,
}

/// One member's window state, valid for `[from, until)`: the scheduler asks for classes at every
/// decision, and a calendar answer stays the same until the window opens or closes.
#[derive(Clone, Debug)]
struct WindowFact {
    from: Time,
    until: Time,
    state: WindowState,
    /// The `Pending` note of a closed window, made once.
    note: Option<Note>,
}

/// The availability answer (SEMANTICS §5.5c) of one member in one run, valid for `[from, until)`
/// while the member's versions are those of `epoch`.
#[derive(Clone, Debug)]
struct AvailabilityFact {
    epoch: u32,
    from: Time,
    until: Time,
    answer: Option<(Note, Option<Time>)>,
}

/// What the world remembers about one member in one run, so that the scheduler's repeated
/// examinations of waiting members (every poll) cost little.
#[derive(Clone, Debug, Default)]
struct RunMemberFacts {
    availability: Option<AvailabilityFact>,
    /// §5.5b answer once the `Consistent` selection is made.
    consistent: Option<Option<Note>>,
}

/// Window kinds, the index of the per-kind caches.
const AUTO_UPGRADE: usize = 0;
const NODE_OS: usize = 1;

/// The simulated environment of one replication.
pub struct World<'a> {
    fleet: &'a [Member],
    releases: &'a ReleaseCalendar,
    models: &'a Models,
    settings: WorldSettings,
    tree: SeedTree,
    members: Vec<MemberState<'a>>,
    runs: Vec<RunContext>,
    in_flight: BTreeMap<(RunId, MemberId), InFlight<'a>>,
    attempts: BTreeMap<(RunId, MemberId), u64>,
    /// Per window kind, per member (allocated on first use).
    window_facts: [Vec<Option<WindowFact>>; 2],
    /// Per run, per member (allocated on first use).
    run_facts: Vec<Vec<RunMemberFacts>>,
    /// `Pending` notes of closed windows by (window kind, next opening).
    window_notes: BTreeMap<(usize, Option<Time>), Note>,
}

impl<'a> World<'a> {
    pub fn new(
        fleet: &'a [Member],
        releases: &'a ReleaseCalendar,
        models: &'a Models,
        settings: WorldSettings,
        tree: SeedTree,
    ) -> World<'a> {
        let members = fleet
            .iter()
            .map(|m| MemberState {
                kubernetes_version: m.kubernetes_version,
                pools: m
                    .node_pools
                    .iter()
                    .map(|p| PoolState {
                        image: p.node_image_version.as_ref().map(Cow::Borrowed),
                        from_snapshot: p.from_snapshot,
                    })
                    .collect(),
                busy_with: None,
                epoch: 0,
            })
            .collect();
        World {
            fleet,
            releases,
            models,
            settings,
            tree,
            members,
            runs: Vec::new(),
            in_flight: BTreeMap::new(),
            attempts: BTreeMap::new(),
            window_facts: [Vec::new(), Vec::new()],
            run_facts: Vec::new(),
            window_notes: BTreeMap::new(),
        }
    }

    /// Registers a run; its id is its position.
    pub fn add_run(&mut self, name: &str, spec: UpgradeSpec, approval_policy: Option<DurationDist>) -> RunId {
        self.runs.push(RunContext {
            name: name.to_string(),
            spec,
            selected_images: None,
            approval_policy,
            name_key: name_key(name),
        });
        self.run_facts.push(Vec::new());
        (self.runs.len() - 1) as RunId
    }

    pub fn run(&self, run: RunId) -> &RunContext {
        &self.runs[run as usize]
    }

    pub fn member(&self, id: MemberId) -> &Member {
        &self.fleet[id.index()]
    }

    pub fn current_kubernetes_version(&self, id: MemberId) -> KubernetesVersion {
        self.members[id.index()].kubernetes_version
    }

    pub fn current_images(&self, id: MemberId) -> Vec<Option<NodeImageVersion>> {
        self.members[id.index()].pools.iter().map(|p| p.image.as_deref().cloned()).collect()
    }

    /// `Consistent` selection at the run's first start: per image family used by the run's members,
    /// the newest version released in every region of those members (SEMANTICS §8).
    pub fn run_started(&mut self, run: RunId, members: &[MemberId], now: Time) {
        let context = &self.runs[run as usize];
        if context.spec.images != ImageSelection::Consistent
            || context.selected_images.is_some()
            || !context.spec.kind.touches_pools()
        {
            return;
        }
        // Sets: thousands of members share a few regions and families.
        let regions: BTreeSet<&str> = members.iter().map(|m| self.fleet[m.index()].region.as_str()).collect();
        let families: BTreeSet<&str> = members
            .iter()
            .flat_map(|m| self.fleet[m.index()].node_pools.iter().map(|p| p.image_family.as_str()))
            .collect();
        let selected = families
            .into_iter()
            .filter_map(|family| {
                self.releases
                    .newest_image_everywhere(family, regions.iter().copied(), now)
                    .map(|r| (family.to_string(), r.version.clone()))
            })
            .collect();
        self.runs[run as usize].selected_images = Some(selected);
    }

    /// The delay after which the approval policy approves an Approval gate (`None`: no policy).
    pub fn approval_delay(&self, run: RunId, gate: GateRef) -> Option<Duration> {
        let policy = self.runs[run as usize].approval_policy.as_ref()?;
        let position = (u64::from(gate.stage) << 40)
            | (u64::from(gate.group.map_or(0xFFFF, |g| g)) << 24)
            | ((gate.timing as u64) << 16)
            | u64::from(gate.index);
        let mut rng = self.tree.stream(Purpose::Approval, [self.runs[run as usize].name_key, position, 0]);
        Some(policy.sample(&mut rng))
    }

    /// SEMANTICS §5.4: NodeImageOnly (and SecurityPatch) consult the node-OS schedule, other types
    /// the auto-upgrade schedule.
    fn window_kind(&self, run: RunId) -> usize {
        let spec = &self.runs[run as usize].spec;
        if spec.kind == UpgradeType::NodeImageOnly || spec.security_patch { NODE_OS } else { AUTO_UPGRADE }
    }

    fn window_for(&self, run: RunId, member: MemberId) -> Option<&'a MaintenanceWindow> {
        let m = &self.fleet[member.index()];
        match self.window_kind(run) {
            NODE_OS => m.node_os_window.as_ref(),
            _ => m.auto_upgrade_window.as_ref(),
        }
    }

    /// The member's window state at `now` for the window `run` consults (`None`: no such window),
    /// answered from the cache while it holds. Identical to `MaintenanceWindow::state_at` in what the
    /// scheduler reads: open or not, and the next opening.
    fn window_fact(&mut self, run: RunId, member: MemberId, now: Time) -> Option<&mut WindowFact> {
        let window = self.window_for(run, member)?;
        let facts = &mut self.window_facts[self.window_kind(run)];
        if facts.is_empty() {
            facts.resize(self.fleet.len(), None);
        }
        let slot = &mut facts[member.index()];
        let fresh = slot.as_ref().is_some_and(|fact| fact.from <= now && now < fact.until);
        if !fresh {
            let state = window.state_at(now);
            let until = match state {
                WindowState::Open { until } => until,
                WindowState::Closed { next_open: Some(t) } => t,
                // "Not within the search horizon" may change with the instant asked: no reuse.
                WindowState::Closed { next_open: None } => now + Duration(1),
            };
            *slot = Some(WindowFact { from: now, until, state, note: None });
        }
        slot.as_mut()
    }

    /// Pools the run upgrades and their target images at `now` (SEMANTICS §8). `None` target: the
    /// pool is left alone.
    fn pool_targets(&self, run: RunId, member: MemberId, now: Time) -> Vec<Option<NodeImageVersion>> {
        (0..self.fleet[member.index()].node_pools.len())
            .map(|i| self.pool_target(run, member, i, now).cloned())
            .collect()
    }

    /// The target image of pool `i` (see [`pool_targets`](Self::pool_targets)), without copying.
    fn pool_target(&self, run: RunId, member: MemberId, i: usize, now: Time) -> Option<&NodeImageVersion> {
        let context = &self.runs[run as usize];
        let m = &self.fleet[member.index()];
        let pool = &m.node_pools[i];
        if !context.spec.kind.touches_pools() || (context.spec.security_patch && pool.os_sku.is_windows()) {
            return None;
        }
        match &context.spec.images {
            ImageSelection::Latest if self.members[member.index()].pools[i].from_snapshot => None,
            ImageSelection::Latest => {
                self.releases.newest_image(&pool.image_family, &m.region, now).map(|r| &r.version)
            }
            ImageSelection::Consistent => context.selected_images.as_ref().and_then(|s| s.get(&pool.image_family)),
            ImageSelection::Custom(versions) => versions.get(&pool.image_family),
        }
    }

    fn behind(current: &Option<Cow<'_, NodeImageVersion>>, target: &NodeImageVersion) -> bool {
        match current {
            None => true,
            Some(c) => c.compare(target).is_none_or(|o| o.is_lt()),
        }
    }

    fn minor_skip_blocked(&self, run: RunId, member: MemberId) -> Option<KubernetesVersion> {
        let spec = &self.runs[run as usize].spec;
        let target = spec.kubernetes_version.filter(|_| spec.kind.touches_control_plane())?;
        let m = &self.fleet[member.index()];
        let current = self.members[member.index()].kubernetes_version;
        let behind = current.minor_version().minors_behind(target.minor_version());
        // LTS clusters may skip minors, but only to an LTS-eligible release (aks-models.md §3).
        let may_skip = m.long_term_support && self.releases.kubernetes_release(target).is_none_or(|r| r.lts_eligible);
        (behind > 1 && !may_skip).then_some(target)
    }

    /// SEMANTICS §5.5c at `now`: the first target (Kubernetes version, then each pool's image) not
    /// yet released in the member's region, and until when that answer holds (the next instant one
    /// of the targets reaches the region). Availability only ever grows, so the answer is a pure
    /// function of time between two such instants while the member's versions stay the same.
    fn availability_at(&self, run: RunId, member: MemberId, now: Time) -> (Option<(Note, Option<Time>)>, Time) {
        let spec = &self.runs[run as usize].spec;
        let m = &self.fleet[member.index()];
        let state = &self.members[member.index()];
        let mut until = Time(i64::MAX);
        let mut answer = None;
        let mut consider = |at: Option<Time>, note: &dyn Fn() -> Note| {
            if let Some(t) = at
                && t > now
            {
                until = until.min(t);
            }
            if answer.is_none() && at.is_none_or(|t| t > now) {
                answer = Some((note(), at));
            }
        };
        if let Some(target) =
            spec.kubernetes_version.filter(|t| spec.kind.touches_control_plane() && *t > state.kubernetes_version)
        {
            let at = self.releases.kubernetes_available_at(target, &m.region);
            consider(at, &|| {
                Note::error(
                    "KubernetesVersionNotAvailable",
                    format!("target Kubernetes version \"{target}\" is not available in region \"{}\"", m.region),
                )
            });
        }
        // `Latest` picks among released images, so it never waits for one.
        if !matches!(spec.images, ImageSelection::Latest) {
            for (i, pool) in m.node_pools.iter().enumerate() {
                let Some(target) = self.pool_target(run, member, i, now) else { continue };
                if !Self::behind(&state.pools[i].image, target) {
                    continue;
                }
                let at = self.releases.image_available_at(target, &m.region);
                consider(at, &|| {
                    Note::error(
                        "NodeImageVersionNotAvailable",
                        format!(
                            "target upgrade node image version \"{target}\" for agent pool {} is not available in region \"{}\"",
                            pool.name, m.region
                        ),
                    )
                });
            }
        }
        (answer, until)
    }

    fn skip_message(&self, member: MemberId, current: KubernetesVersion, target: KubernetesVersion) -> String {
        if self.fleet[member.index()].long_term_support {
            format!(
                "upgrading from {current} to {target} skips a minor version; {target} is not LTS-eligible, so even LTS clusters cannot"
            )
        } else {
            format!("upgrading from {current} to {target} skips a minor version, which non-LTS clusters cannot do")
        }
    }

    /// A member starts upgrading in `run` at `now`: decide how long it takes and how it ends.
    pub fn start_upgrade(&mut self, run: RunId, member: MemberId, now: Time) -> Attempt {
        let attempt = {
            let counter = self.attempts.entry((run, member)).or_insert(0);
            *counter += 1;
            *counter
        };
        let m = &self.fleet[member.index()];
        let context = &self.runs[run as usize];
        let current = self.members[member.index()].kubernetes_version;
        let mut record = UpgradeRecord {
            from_version: current,
            to_version: current,
            pools: Vec::new(),
            received_bad_release: false,
        };
        let member_key = name_key(&m.name);
        let keys = [member_key, context.name_key, attempt];

        let immediate = |code: &str, message: String| Attempt {
            duration: Duration::ZERO,
            outcome: Outcome::Failed(Note::error(code, message)),
        };
        if let Some(other) = self.members[member.index()].busy_with {
            let message = format!(
                "another operation (update run \"{}\") is in progress on the managed cluster; concurrent operations are not allowed",
                self.runs[other as usize].name
            );
            return self.begin(run, member, now, immediate("OperationNotAllowed", message), None, Vec::new(), record);
        }
        if m.stopped {
            let message = "the managed cluster is stopped; start it before upgrading".to_string();
            return self.begin(run, member, now, immediate("OperationNotAllowed", message), None, Vec::new(), record);
        }
        if let Some(target) = self.minor_skip_blocked(run, member) {
            let message = self.skip_message(member, current, target);
            return self.begin(
                run,
                member,
                now,
                immediate("UpgradeVersionSkipNotAllowed", message),
                None,
                Vec::new(),
                record,
            );
        }

        let control_plane =
            context.spec.kubernetes_version.filter(|t| context.spec.kind.touches_control_plane() && *t > current);
        // SEMANTICS §8: a Full upgrade that changes the Kubernetes version rolls every pool (its nodes
        // move to the new version even when their image is already at target); otherwise only pools
        // whose image is behind their target are upgraded.
        let rolls_all = control_plane.is_some() && context.spec.kind == UpgradeType::Full;
        let releases: &'a ReleaseCalendar = self.releases;
        let mut pools: Vec<(usize, Option<Cow<'a, NodeImageVersion>>)> = Vec::new();
        // The first pool whose target image is past its validity (SEMANTICS §8).
        let mut expired: Option<(usize, &'a ImageRelease)> = None;
        for i in 0..m.node_pools.len() {
            let image = self
                .pool_target(run, member, i, now)
                .filter(|t| Self::behind(&self.members[member.index()].pools[i].image, t))
                .map(|t| match releases.image_release(t) {
                    Some(release) if release.version.as_str() == t.as_str() => {
                        if expired.is_none() && now - release.published > self.settings.node_image_max_age {
                            expired = Some((i, release));
                        }
                        Cow::Borrowed(&release.version)
                    }
                    _ => Cow::Owned(t.clone()),
                });
            if image.is_some() || rolls_all {
                pools.push((i, image));
            }
        }
        if let Some((i, release)) = expired {
            let message = format!(
                "target node image version \"{}\" for agent pool {} was published {} and is older than the {} days images stay valid",
                release.version,
                m.node_pools[i].name,
                release.published,
                self.settings.node_image_max_age.as_seconds() / 86_400
            );
            return self.begin(
                run,
                member,
                now,
                immediate("NodeImageVersionExpired", message),
                None,
                Vec::new(),
                record,
            );
        }

        // One stream per attempt gives the failure decision, then the durations; details of a
        // failure (which code, when) come from a second stream made only when needed: a stream
        // costs a block of keystream, and most attempts need one number of it.
        let mut duration_rng = self.tree.stream(Purpose::UpgradeDuration, keys);
        let failure_draw: f64 = duration_rng.random();
        // Durations: control plane, then pools one after another (aks-models.md §4.1–4.2).
        let model = self.models.duration_for(member);
        let mut elapsed = Duration::ZERO;
        let mut cp_done = None;
        let mut pool_done = Vec::new();
        if let Some(member_dist) = &model.member {
            elapsed = member_dist.sample(&mut duration_rng);
            // The simple model has no components: a failed attempt applies nothing.
            cp_done = control_plane.map(|_| elapsed);
            pool_done = pools.iter().map(|(i, t)| (*i, t.clone(), elapsed)).collect();
        } else {
            if control_plane.is_some() {
                elapsed = elapsed + model.control_plane.sample(&mut duration_rng);
                cp_done = Some(elapsed);
            }
            for (i, target) in &pools {
                let pool = &m.node_pools[*i];
                if context.spec.security_patch {
                    elapsed = elapsed + model.security_patch_pool.sample(&mut duration_rng);
                } else {
                    // The pool upgrades after the control plane: AKS's default surge follows the
                    // version the cluster is at by then.
                    let at_version = control_plane.unwrap_or(current);
                    let surge = pool.max_surge.unwrap_or(default_surge(at_version)).nodes_for(pool.node_count);
                    let batches = pool.node_count.div_ceil(surge).max(1);
                    let dist = if pool.os_sku.is_windows() { &model.windows_batch } else { &model.linux_batch };
                    elapsed = elapsed + dist.sample_sum(&mut duration_rng, batches);
                }
                pool_done.push((*i, target.clone(), elapsed));
            }
        }
        let total = elapsed.max(Duration(1));

        // Bad releases reached by this attempt.
        let bad = self.bad_release_hit(control_plane, &pools, member, keys);
        record.received_bad_release = bad.is_some();

        let over = self
            .models
            .overrides
            .iter()
            .find(|o| o.member == member && o.run.as_deref().is_none_or(|r| r == context.name));
        let failure_rng = || self.tree.stream(Purpose::UpgradeFailure, keys);
        let (mut duration, mut outcome) = match over.and_then(|o| o.outcome.clone()) {
            Some(ForcedOutcome::Completed) => (total, Outcome::Completed(Note::default())),
            Some(ForcedOutcome::Failed { code, message }) => (total, Outcome::Failed(Note::error(code, message))),
            None => match bad {
                Some((code, message)) => {
                    let at = Duration(failure_rng().random_range(total.as_seconds() / 2..=total.as_seconds()).max(1));
                    (at, Outcome::Failed(Note::error(code, message)))
                }
                None => self.random_outcome(
                    member,
                    control_plane.is_some_and(|t| t.minor_version() != current.minor_version()),
                    total,
                    cp_done,
                    &pool_done,
                    now,
                    failure_draw,
                    &failure_rng,
                ),
            },
        };
        if let Some(forced) = over.and_then(|o| o.duration) {
            duration = forced;
        }
        if let Outcome::Completed(note) = &mut outcome
            && !rolls_all
        {
            *note = self.completion_note(run, member, now);
        }
        let cp = control_plane.zip(cp_done);
        self.begin(run, member, now, Attempt { duration, outcome }, cp, pool_done, record)
    }

    #[allow(clippy::too_many_arguments)]
    /// A random attempt's outcome: `draw` decides whether it fails (aks-models.md §4.4); `details`
    /// makes the stream for what else a failure or an incident needs.
    fn random_outcome(
        &self,
        member: MemberId,
        minor: bool,
        total: Duration,
        cp_done: Option<Duration>,
        pools: &[(usize, Option<Cow<'a, NodeImageVersion>>, Duration)],
        now: Time,
        draw: f64,
        details: &dyn Fn() -> ChaCha8Rng,
    ) -> (Duration, Outcome) {
        let model = &self.models.failure;
        let region = &self.fleet[member.index()].region;
        let base = if minor { model.minor_probability } else { model.patch_probability };
        let incident = self.models.incidents.iter().find(|i| i.region == *region && i.from <= now && now < i.to);
        let stall = incident.and_then(|i| i.stall).unwrap_or(Duration::ZERO);
        if incident.is_none() && draw >= base {
            return (total + stall, Outcome::Completed(Note::default()));
        }
        let rng = &mut details();
        if let Some(incident) = incident {
            let incident_draw: f64 = rng.random();
            if incident_draw < incident.failure_probability {
                let at = Duration(rng.random_range(1..=total.as_seconds().max(1)));
                let message = format!("regional incident in {region}: the upgrade operation failed");
                return (at + stall, Outcome::Failed(Note::error(incident.code.clone(), message)));
            }
        }
        if draw >= base {
            return (total + stall, Outcome::Completed(Note::default()));
        }
        let eligible: Vec<&FailureCode> = model.codes.iter().filter(|c| minor || !c.minor_only).collect();
        let weight_total: u32 = eligible.iter().map(|c| c.weight).sum();
        if weight_total == 0 {
            return (total + stall, Outcome::Failed(Note::error("UpgradeFailed", "the upgrade failed")));
        }
        let mut pick = rng.random_range(0..weight_total);
        let code = eligible
            .iter()
            .find(|c| {
                if pick < c.weight {
                    return true;
                }
                pick -= c.weight;
                false
            })
            .expect("weights sum to weight_total");
        let pool_start = |k: usize| {
            if k == 0 { cp_done.unwrap_or(Duration::ZERO) } else { pools[k - 1].2 }
        };
        let at = match code.point {
            FailurePoint::PreCheck => Duration(60.min(total.as_seconds())),
            FailurePoint::SurgeAllocation if !pools.is_empty() => {
                let k = rng.random_range(0..pools.len() as u32) as usize;
                pool_start(k) + Duration(rng.random_range(60..=300))
            }
            FailurePoint::Drain if !pools.is_empty() => {
                let k = rng.random_range(0..pools.len() as u32) as usize;
                let span = (pools[k].2 - pool_start(k)).as_seconds().max(1);
                pool_start(k) + Duration(rng.random_range(0..span)) + self.models.duration_for(member).drain_timeout
            }
            _ => Duration(rng.random_range(1..=total.as_seconds().max(1))),
        };
        (at + stall, Outcome::Failed(Note::error(code.code.clone(), code.message.clone())))
    }

    /// Did this attempt reach a release marked bad, and does it fail because of it?
    fn bad_release_hit(
        &self,
        control_plane: Option<KubernetesVersion>,
        pools: &[(usize, Option<Cow<'a, NodeImageVersion>>)],
        member: MemberId,
        keys: [u64; 3],
    ) -> Option<(String, String)> {
        let m = &self.fleet[member.index()];
        for bad in &self.models.bad_releases {
            let hits = control_plane.is_some_and(|v| v.to_string() == bad.version)
                || pools.iter().any(|(_, t)| t.as_ref().is_some_and(|t| t.as_str() == bad.version));
            if !hits || !bad.selector.as_ref().is_none_or(|s| s.matches(&m.labels)) {
                continue;
            }
            // Stream keyed by the member and the release, not the run: the same clusters are hurt by a
            // bad release whatever strategy delivers it (common random numbers).
            let mut rng = self.tree.stream(Purpose::BadRelease, [keys[0], name_key(&bad.version), 0]);
            let draw: f64 = rng.random();
            if draw < bad.failure_fraction {
                return Some((bad.code.clone(), bad.message.clone()));
            }
        }
        None
    }

    /// Whether the attempt delivers a release marked bad. The blast radius counts every member that
    /// received it, whether or not it broke (the selector only says which ones break).
    fn exposes_bad_release(
        &self,
        control_plane: Option<KubernetesVersion>,
        pools: &[(usize, Option<Cow<'a, NodeImageVersion>>, Duration)],
    ) -> bool {
        self.models.bad_releases.iter().any(|bad| {
            control_plane.is_some_and(|v| v.to_string() == bad.version)
                || pools.iter().any(|(_, t, _)| t.as_ref().is_some_and(|t| t.as_str() == bad.version))
        })
    }

    /// The `Completed` message listing pools already at or ahead of target (MONITOR sample).
    fn completion_note(&self, run: RunId, member: MemberId, now: Time) -> Note {
        let m = &self.fleet[member.index()];
        let targets = self.pool_targets(run, member, now);
        let current: Vec<String> = m
            .node_pools
            .iter()
            .zip(&targets)
            .zip(&self.members[member.index()].pools)
            .filter_map(|((pool, target), state)| {
                let target = target.as_ref()?;
                (!Self::behind(&state.image, target)).then(|| {
                    format!(
                        "{}: current node image version \"{}\" is already at or ahead of target \"{}\"",
                        pool.name,
                        state.image.as_ref().map_or("", |i| i.as_str()),
                        target
                    )
                })
            })
            .collect();
        let mut current = current;
        if self.runs[run as usize].spec.security_patch {
            // SEMANTICS §8: SecurityPatch touches Linux pools only.
            current.extend(
                m.node_pools
                    .iter()
                    .filter(|p| p.os_sku.is_windows())
                    .map(|p| format!("{}: Windows node pools are not updated by SecurityPatch", p.name)),
            );
        }
        if current.is_empty() {
            Note::default()
        } else {
            Note::message(format!("Skipped upgrade of following agent pool(s): {}", current.join("; ")))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn begin(
        &mut self,
        run: RunId,
        member: MemberId,
        now: Time,
        attempt: Attempt,
        control_plane: Option<(KubernetesVersion, Duration)>,
        pools: Vec<(usize, Option<Cow<'a, NodeImageVersion>>, Duration)>,
        mut record: UpgradeRecord,
    ) -> Attempt {
        if !record.received_bad_release {
            record.received_bad_release = self.exposes_bad_release(control_plane.map(|c| c.0), &pools);
        }
        if self.members[member.index()].busy_with.is_none() {
            self.members[member.index()].busy_with = Some(run);
        }
        self.in_flight.insert((run, member), InFlight { started: now, control_plane, pools, record });
        attempt
    }

    /// The attempt ended: apply what finished before the end (a failed upgrade keeps the components
    /// it completed) and return what changed.
    pub fn finish_upgrade(&mut self, run: RunId, member: MemberId, outcome: &Outcome, now: Time) -> UpgradeRecord {
        let flight = self.in_flight.remove(&(run, member)).expect("finish follows start");
        let state = &mut self.members[member.index()];
        state.epoch = state.epoch.wrapping_add(1);
        if state.busy_with == Some(run) {
            state.busy_with = None;
        }
        let completed = matches!(outcome, Outcome::Completed(_));
        let elapsed = now - flight.started;
        let mut record = flight.record;
        if let Some((version, done)) = flight.control_plane
            && (completed || elapsed > done)
        {
            state.kubernetes_version = version;
        }
        let pools = &self.fleet[member.index()].node_pools;
        for (i, target, done) in flight.pools {
            // A pool rolled only for the Kubernetes version keeps its image.
            if let Some(target) = target
                && (completed || elapsed > done)
            {
                let from = state.pools[i].image.replace(target.clone()).map(Cow::into_owned);
                state.pools[i].from_snapshot = false;
                record.pools.push(PoolChange { pool: pools[i].name.clone(), from, to: Some(target.into_owned()) });
            }
        }
        if completed
            && let Some(v) = self.runs[run as usize]
                .spec
                .kubernetes_version
                .filter(|_| self.runs[run as usize].spec.kind.touches_control_plane())
        {
            state.kubernetes_version = state.kubernetes_version.max(v);
        }
        record.to_version = state.kubernetes_version;
        record
    }

    /// Whether the member's in-flight attempt in `run` targets a release marked bad.
    pub fn in_flight_received_bad(&self, run: RunId, member: MemberId) -> bool {
        self.in_flight.get(&(run, member)).is_some_and(|f| f.record.received_bad_release)
    }

    pub fn is_busy(&self, member: MemberId) -> bool {
        self.members[member.index()].busy_with.is_some()
    }
}

/// AKS default `maxSurge`: 10 % for Kubernetes ≥ 1.32, else 1 node (aks-models.md §4.1).
pub fn default_surge(version: KubernetesVersion) -> Surge {
    if version >= KubernetesVersion::new(1, 32, 0) { Surge::Percent(10) } else { Surge::Nodes(1) }
}

impl Facts for World<'_> {
    fn has_window(&mut self, run: RunId, member: MemberId) -> bool {
        self.window_for(run, member).is_some()
    }

    fn window_class(&mut self, run: RunId, member: MemberId, now: Time) -> WindowClass {
        self.window_class_until(run, member, now).0
    }

    /// Same class as `class_of(window, now, lookahead)`, from the cached state, with the instant it
    /// next changes: the window closes (`OpenNow`), comes within the lookahead of opening
    /// (`Closed` → `OpensSoon`) or opens (`OpensSoon` → `OpenNow`).
    fn window_class_until(&mut self, run: RunId, member: MemberId, now: Time) -> (WindowClass, Time) {
        let lookahead = self.settings.window_lookahead;
        match self.window_fact(run, member, now).map(|f| (f.state, f.until)) {
            None => (WindowClass::NoWindow, Time(i64::MAX)),
            Some((WindowState::Open { .. }, until)) => (WindowClass::OpenNow, until),
            Some((WindowState::Closed { next_open: Some(t) }, _)) if t - now <= lookahead => {
                (WindowClass::OpensSoon, t)
            }
            Some((WindowState::Closed { next_open: Some(t) }, _)) => (WindowClass::Closed, t - lookahead),
            Some((WindowState::Closed { next_open: None }, until)) => (WindowClass::Closed, until),
        }
    }

    fn already_at_target(&mut self, run: RunId, member: MemberId, now: Time) -> Option<Note> {
        let spec = &self.runs[run as usize].spec;
        let current = self.members[member.index()].kubernetes_version;
        let k8s_done = match spec.kubernetes_version {
            Some(target) if spec.kind.touches_control_plane() => current >= target,
            _ => true,
        };
        if !k8s_done {
            return None;
        }
        let pools_done = (0..self.members[member.index()].pools.len()).all(|i| {
            self.pool_target(run, member, i, now)
                .is_none_or(|t| !Self::behind(&self.members[member.index()].pools[i].image, t))
        });
        if !pools_done {
            return None;
        }
        let message = match (spec.kind, spec.kubernetes_version) {
            (UpgradeType::ControlPlaneOnly, Some(t)) => {
                format!("Kubernetes version {current} is already at or ahead of target {t}")
            }
            (UpgradeType::Full, Some(t)) => format!(
                "Kubernetes version {current} is already at or ahead of target {t} and every agent pool's node image is already at or ahead of target"
            ),
            _ => "every agent pool's node image is already at or ahead of target".to_string(),
        };
        Some(Note::message(message))
    }

    fn validation_skip(&mut self, run: RunId, member: MemberId) -> Option<Note> {
        if self.settings.minor_skip != MinorSkipRule::Skip {
            return None;
        }
        let target = self.minor_skip_blocked(run, member)?;
        let current = self.members[member.index()].kubernetes_version;
        Some(Note::error("UpgradeVersionSkipNotAllowed", self.skip_message(member, current, target)))
    }

    fn missing_consistent_image(&mut self, run: RunId, member: MemberId) -> Option<Note> {
        let context = &self.runs[run as usize];
        if context.spec.images != ImageSelection::Consistent || !context.spec.kind.touches_pools() {
            return None;
        }
        let selected = context.selected_images.as_ref()?;
        // The selection is made once per run and pool families never change: one answer per member.
        if let Some(facts) = self.run_facts[run as usize].get(member.index())
            && let Some(answer) = &facts.consistent
        {
            return answer.clone();
        }
        let m = &self.fleet[member.index()];
        let answer = m
            .node_pools
            .iter()
            .find(|p| {
                !selected.contains_key(&p.image_family) && (!context.spec.security_patch || !p.os_sku.is_windows())
            })
            .map(|pool| {
                Note::message(format!(
                    "no consistent node image version was selected for image family \"{}\" of agent pool {}",
                    pool.image_family, pool.name
                ))
            });
        let facts = &mut self.run_facts[run as usize];
        if facts.is_empty() {
            facts.resize(self.fleet.len(), RunMemberFacts::default());
        }
        facts[member.index()].consistent = Some(answer.clone());
        answer
    }

    fn not_available(&mut self, run: RunId, member: MemberId, now: Time) -> Option<(Note, Option<Time>)> {
        let epoch = self.members[member.index()].epoch;
        let facts = &mut self.run_facts[run as usize];
        if facts.is_empty() {
            facts.resize(self.fleet.len(), RunMemberFacts::default());
        }
        if let Some(fact) = &facts[member.index()].availability
            && fact.epoch == epoch
            && fact.from <= now
            && now < fact.until
        {
            return fact.answer.clone();
        }
        let (answer, until) = self.availability_at(run, member, now);
        self.run_facts[run as usize][member.index()].availability =
            Some(AvailabilityFact { epoch, from: now, until, answer: answer.clone() });
        answer
    }

    fn window_closed(&mut self, run: RunId, member: MemberId, now: Time) -> Option<(Note, Option<Time>)> {
        let kind = match self.window_kind(run) {
            NODE_OS => "aksManagedNodeOSUpgradeSchedule",
            _ => "aksManagedAutoUpgradeSchedule",
        };
        let window_kind = self.window_kind(run);
        let fact = self.window_fact(run, member, now)?;
        let WindowState::Closed { next_open } = fact.state else { return None };
        if let Some(note) = &fact.note {
            return Some((note.clone(), next_open));
        }
        // Members whose windows open at the same instant share one note.
        let note = self
            .window_notes
            .entry((window_kind, next_open))
            .or_insert_with(|| match next_open {
                Some(t) => Note::message(format!("maintenance window {kind} is closed; it next opens at {t}")),
                None => Note::message(format!("maintenance window {kind} is closed and does not open again")),
            })
            .clone();
        if let Some(fact) = self.window_facts[window_kind][member.index()].as_mut() {
            fact.note = Some(note.clone());
        }
        Some((note, next_open))
    }
}

/// Shared, cheap-to-clone text.
pub type Text = Arc<str>;
