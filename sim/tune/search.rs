//! The search: racing by successive doubling over common random numbers.
//!
//! Round 1 gives every candidate `initial` replications in every world; each later round doubles
//! the replications of every candidate still in the race, up to `maxPerCandidate` or until the
//! budget is spent. A space too large to enumerate starts from a Latin-hypercube sample, and after
//! every round the neighbours of the best candidate (one field's value one step up or down) join
//! the race with `initial` replications, until the best has no new neighbour or the budget is spent. Replication r of every candidate in every world uses the same random streams
//! (the streams depend only on the seed and r), so candidates are compared on the same futures.
//! After each round a candidate leaves the race when its confidence bounds show it cannot win:
//! a constraint whose interval lies wholly above its limit (infeasible), or an objective whose
//! interval lies wholly above the interval of a candidate that surely meets every constraint, or
//! of one that is surely no worse in every constraint, replication by replication (eliminated). The base strategy stays in the race: it is what the recommendation is compared
//! with, replication by replication.
//!
//! Deterministic at any thread count: jobs are fixed by the round before it runs, results are
//! gathered in job order (never in the order threads finish), and every statistic is a function of
//! values in replication order. The search is a function of the figures alone: where they come
//! from ([`Simulations`]: computed now, or read from a tune folder's journal) changes nothing, which
//! is what makes a tune resumable and its rounds shardable ([`super::folder`]).

use std::collections::HashSet;

use rayon::prelude::*;

use crate::simulation::Simulator;
use crate::sweep::exec::{replications_per_piece, run_replication};
use crate::sweep::stats::{percentile, quantile_ci, summarize, summarize_indicator};

use super::plan::{COLLECTED, Candidate, Criterion, Missing, Statistic, TunePlan, is_indicator, missing_of};

/// The figures of one replication of the tuned run, as the journal holds them: one text cell per
/// collected metric (empty when it has none).
pub type Cells = Vec<String>;

/// One simulation of a round: candidate (an index into the search's candidates), world, replication.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Job {
    pub candidate: usize,
    pub world: usize,
    pub replication: u64,
}

/// Where the figures of a round come from.
pub trait Simulations {
    /// The cells of every job of the round, in job order; `None` when this process stops before
    /// the round is complete (a shard that ran its share, a merge that lacks some).
    fn round(&mut self, plan: &TunePlan, candidates: &[Candidate], jobs: &[Job])
    -> std::io::Result<Option<Vec<Cells>>>;
}

/// Computes jobs on `pool`, one scenario build per candidate and world; `done` is told of every
/// finished job (from worker threads). Results are in job order.
pub fn compute(
    plan: &TunePlan,
    candidates: &[Candidate],
    jobs: &[Job],
    pool: &rayon::ThreadPool,
    done: &(dyn Fn(&Job, &Cells) + Sync),
) -> Vec<Cells> {
    // Consecutive jobs of one candidate in one world share a build.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        match groups.last_mut() {
            Some((start, end)) if jobs[*start].candidate == job.candidate && jobs[*start].world == job.world => {
                *end = i + 1
            }
            _ => groups.push((i, i + 1)),
        }
    }
    pool.install(|| {
        let parts: Vec<Vec<Cells>> = groups
            .par_iter()
            .map(|&(start, end)| {
                let first = jobs[start];
                let scenario = plan.build(&candidates[first.candidate], first.world);
                let pieces: Vec<Vec<Cells>> = jobs[start..end]
                    .par_chunks(replications_per_piece(end - start))
                    .map(|piece| {
                        let mut simulator = Simulator::new(&scenario);
                        piece
                            .iter()
                            .map(|job| {
                                let cells = cells(plan, &mut simulator, job.replication);
                                done(job, &cells);
                                cells
                            })
                            .collect()
                    })
                    .collect();
                pieces.into_iter().flatten().collect::<Vec<Cells>>()
            })
            .collect();
        parts.into_iter().flatten().collect()
    })
}

/// Computes every job in memory: no folder, nothing kept (tests, and `evaluate`).
pub struct Compute<'a> {
    pub pool: rayon::ThreadPool,
    pub done: &'a (dyn Fn(&Job, &Cells) + Sync),
}

impl Compute<'static> {
    pub fn new(threads: usize) -> std::io::Result<Compute<'static>> {
        Ok(Compute { pool: pool(threads)?, done: &|_, _| {} })
    }
}

impl Simulations for Compute<'_> {
    fn round(
        &mut self,
        plan: &TunePlan,
        candidates: &[Candidate],
        jobs: &[Job],
    ) -> std::io::Result<Option<Vec<Cells>>> {
        Ok(Some(compute(plan, candidates, jobs, &self.pool, self.done)))
    }
}

/// A local pool of `threads` workers (the global rayon pool is left alone).
pub fn pool(threads: usize) -> std::io::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("fleetsim-tune-{i}"))
        .build()
        .map_err(std::io::Error::other)
}

/// `samples[world][measure][replication]`: the tuned run's figures, `None` where it had none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    pub samples: Vec<Vec<Vec<Option<f64>>>>,
}

impl Evaluation {
    pub fn replications(&self) -> u64 {
        self.samples.first().and_then(|m| m.first()).map_or(0, |r| r.len() as u64)
    }

    pub fn estimate(&self, c: &Criterion) -> Option<Estimate> {
        estimate(&self.samples[c.world][c.measure], c.measure, c.statistic)
    }
}

/// A statistic with its 95 % confidence interval; `reached` is the share of replications with a
/// finite value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// Replications that counted.
    pub n: usize,
    pub reached: f64,
}

/// The statistic of one measure over replications in order (see [`Missing`] for those without a
/// value). Means over a sample with an infinite value are infinite; percentiles use the
/// distribution-free interval of `summary.csv`.
pub fn estimate(samples: &[Option<f64>], measure: usize, statistic: Statistic) -> Option<Estimate> {
    let values: Vec<f64> = samples
        .iter()
        .filter_map(|v| match (v, missing_of(measure)) {
            (Some(x), _) => Some(*x),
            (None, Missing::Infinite) => Some(f64::INFINITY),
            (None, Missing::Zero) => Some(0.0),
            (None, Missing::Skipped) => None,
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let reached = values.iter().filter(|x| x.is_finite()).count() as f64 / values.len() as f64;
    let n = values.len();
    match statistic {
        Statistic::Mean if values.iter().any(|x| x.is_infinite()) => {
            Some(Estimate { value: f64::INFINITY, low: f64::INFINITY, high: f64::INFINITY, n, reached })
        }
        Statistic::Mean => {
            let s = if is_indicator(measure) {
                summarize_indicator(&values.iter().map(|x| *x > 0.5).collect::<Vec<_>>())
            } else {
                summarize(&values)
            }
            .expect("values are not empty");
            let (low, high) = s.ci95.unwrap_or((s.mean, s.mean));
            Some(Estimate { value: s.mean, low, high, n, reached })
        }
        Statistic::Percentile(q) => {
            let mut sorted = values;
            sorted.sort_by(f64::total_cmp);
            let (low, high) = quantile_ci(&sorted, q);
            Some(Estimate { value: percentile_of(&sorted, q), low, high, n, reached })
        }
    }
}

/// [`percentile`], where an infinite neighbour makes the percentile infinite (not NaN).
fn percentile_of(sorted: &[f64], q: u32) -> f64 {
    let position = (sorted.len() - 1) as f64 * f64::from(q) / 100.0;
    let below = position.floor() as usize;
    if position == below as f64 {
        return sorted[below];
    }
    if sorted[(below + 1).min(sorted.len() - 1)].is_infinite() {
        return f64::INFINITY;
    }
    percentile(sorted, q)
}

/// Where a candidate ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The best objective among the candidates that meet every constraint.
    Recommended,
    /// Meets every constraint and no other such candidate is at least as good in every criterion.
    Pareto,
    /// Meets every constraint, but another is at least as good in every criterion and better in one.
    Dominated,
    /// Breaks a constraint (proven by its interval during the race, or by its estimate at the end).
    Infeasible,
    /// Left the race: its objective was surely worse than a candidate that surely meets every
    /// constraint.
    Eliminated,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Recommended => "recommended",
            Status::Pareto => "pareto",
            Status::Dominated => "dominated",
            Status::Infeasible => "infeasible",
            Status::Eliminated => "eliminated",
        }
    }
}

/// One round of the race.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// The most replications a candidate still in the race has, after this round.
    pub replications: u64,
    /// Candidates in the race during this round.
    pub racing: usize,
    /// Candidates still in the race after it.
    pub alive: usize,
    /// Simulations spent so far.
    pub spent: u64,
    /// Simulations of this round.
    pub simulations: u64,
    /// The best candidate meeting every constraint by its estimates, and its objective.
    pub best: Option<(usize, f64)>,
    /// Neighbours of the best that join the race in the next round (sampled spaces).
    pub added: usize,
}

/// Where the search ended.
#[derive(Clone, Debug)]
pub enum Outcome {
    Done(SearchResult),
    /// The figures of round `round` are not all there (a shard ran its share, a merge lacks some).
    Stopped {
        round: usize,
        /// Simulations of that round.
        jobs: usize,
        /// The rounds completed before it.
        rounds: Vec<Round>,
        spent: u64,
    },
}

/// What the search found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// Every candidate raced: the plan's initial ones, then the neighbours added in rounds.
    pub candidates: Vec<Candidate>,
    pub evaluations: Vec<Evaluation>,
    pub status: Vec<Status>,
    /// The round after which a candidate left the race (1-based), if it did.
    pub left_in_round: Vec<Option<usize>>,
    pub rounds: Vec<Round>,
    pub recommended: Option<usize>,
    pub spent: u64,
}

/// One replication of the tuned run: its cells.
fn cells(plan: &TunePlan, simulator: &mut Simulator, replication: u64) -> Cells {
    let runs = run_replication(simulator, replication, &COLLECTED);
    let run = runs.into_iter().find(|r| r.run == plan.run).expect("the tuned run is in every candidate's scenario");
    run.cells
}

/// The figures of cells: `runState` becomes 1 for `Failed`, 0 otherwise.
pub fn figures(cells: &[String]) -> [Option<f64>; 9] {
    std::array::from_fn(|m| {
        let cell = &cells[m];
        if m == 7 { Some(if cell == "Failed" { 1.0 } else { 0.0 }) } else { cell.parse::<f64>().ok() }
    })
}

/// Candidate `c` evaluated in replications `0..replications` of every world (the exhaustive check
/// of tests).
pub fn evaluate(plan: &TunePlan, c: &Candidate, replications: u64) -> Evaluation {
    let jobs: Vec<Job> = (0..plan.worlds.len())
        .flat_map(|w| (0..replications).map(move |r| Job { candidate: 0, world: w, replication: r }))
        .collect();
    let pool = pool(std::thread::available_parallelism().map_or(1, |n| n.get())).expect("a thread pool");
    let cells = compute(plan, std::slice::from_ref(c), &jobs, &pool, &|_, _| {});
    let mut e = Evaluation::empty(plan);
    for (job, cells) in jobs.iter().zip(cells) {
        e.push(job.world, &cells);
    }
    e
}

impl Evaluation {
    fn empty(plan: &TunePlan) -> Evaluation {
        Evaluation { samples: vec![vec![Vec::new(); COLLECTED.len()]; plan.worlds.len()] }
    }

    fn push(&mut self, world: usize, cells: &[String]) {
        for (m, x) in figures(cells).into_iter().enumerate() {
            self.samples[world][m].push(x);
        }
    }
}

/// Whether every constraint's estimate holds.
pub fn feasible(plan: &TunePlan, e: &Evaluation) -> bool {
    plan.constraints.iter().all(|k| e.estimate(&k.criterion).is_some_and(|x| x.value <= k.max))
}

/// How far a candidate is from meeting the constraints: the sum of relative excesses.
pub fn violation(plan: &TunePlan, e: &Evaluation) -> f64 {
    plan.constraints
        .iter()
        .map(|k| match e.estimate(&k.criterion) {
            Some(x) => (x.value - k.max).max(0.0) / k.max.abs().max(1.0),
            None => f64::INFINITY,
        })
        .sum()
}

fn objective(plan: &TunePlan, e: &Evaluation) -> f64 {
    e.estimate(&plan.objective).map_or(f64::INFINITY, |x| x.value)
}

/// The best candidate meeting every constraint by its estimates (lowest objective, then lowest index).
fn best_feasible(plan: &TunePlan, evaluations: &[Evaluation], among: &[usize]) -> Option<(usize, f64)> {
    among.iter().filter(|c| feasible(plan, &evaluations[**c])).map(|c| (*c, objective(plan, &evaluations[*c]))).fold(
        None,
        |best: Option<(usize, f64)>, (c, v)| match best {
            Some((_, b)) if b <= v => best,
            _ => Some((c, v)),
        },
    )
}

/// Runs the race computing every simulation in memory with `threads` worker threads; `progress`
/// is told after every round.
pub fn search(plan: &TunePlan, threads: usize, progress: impl FnMut(&Round)) -> std::io::Result<SearchResult> {
    match search_with(plan, &mut Compute::new(threads)?, progress)? {
        Outcome::Done(result) => Ok(result),
        Outcome::Stopped { .. } => unreachable!("computing in memory never stops"),
    }
}

/// Runs the race on figures from `simulations`; `progress` is told after every round.
pub fn search_with(
    plan: &TunePlan,
    simulations: &mut dyn Simulations,
    mut progress: impl FnMut(&Round),
) -> std::io::Result<Outcome> {
    let worlds = plan.worlds.len();
    let budget = plan.budget;
    let mut candidates: Vec<Candidate> = plan.initial.clone();
    let mut known: HashSet<Candidate> = candidates.iter().cloned().collect();
    let mut evaluations: Vec<Evaluation> = vec![Evaluation::empty(plan); candidates.len()];
    let mut status: Vec<Option<Status>> = vec![None; candidates.len()];
    let mut left_in_round: Vec<Option<usize>> = vec![None; candidates.len()];
    let mut rounds: Vec<Round> = Vec::new();
    let mut spent = 0u64;
    loop {
        let alive: Vec<usize> = (0..candidates.len()).filter(|c| status[*c].is_none()).collect();
        let per_round = alive.len() as u64 * worlds as u64;
        // Every candidate doubles its own replications (new ones start at `initial`); when the
        // budget cannot pay for that, every one gets the same number of new replications.
        let cap = (budget.total - spent) / per_round.max(1);
        let increments: Vec<(usize, u64, u64)> = alive
            .iter()
            .map(|&c| {
                let n = evaluations[c].replications();
                let target = if n == 0 { budget.initial } else { n * 2 }.min(budget.max_per_candidate);
                (c, n, target.saturating_sub(n).min(cap))
            })
            .collect();
        let jobs: Vec<Job> = increments
            .iter()
            .flat_map(|&(c, n, inc)| {
                (0..worlds).flat_map(move |w| (n..n + inc).map(move |r| Job { candidate: c, world: w, replication: r }))
            })
            .collect();
        if jobs.is_empty() {
            break;
        }
        let Some(cells) = simulations.round(plan, &candidates, &jobs)? else {
            return Ok(Outcome::Stopped { round: rounds.len() + 1, jobs: jobs.len(), rounds, spent });
        };
        for (job, cells) in jobs.iter().zip(&cells) {
            evaluations[job.candidate].push(job.world, cells);
        }
        spent += jobs.len() as u64;
        let round = rounds.len() + 1;
        eliminate(plan, &evaluations, &alive, &mut status, &mut left_in_round, round);
        let still: Vec<usize> = (0..candidates.len()).filter(|c| status[*c].is_none()).collect();
        let best = best_feasible(plan, &evaluations, &still);
        let mut added = 0;
        if plan.sampled && spent < budget.total {
            let pivot = best.map(|(c, _)| c).or_else(|| closest_alive(plan, &evaluations, &still));
            let affordable =
                ((budget.total - spent) / (worlds as u64 * budget.initial)).saturating_sub(still.len() as u64);
            let fresh: Vec<Candidate> = pivot
                .map(|p| plan.neighbours(&candidates[p]))
                .unwrap_or_default()
                .into_iter()
                .filter(|n| !known.contains(n) && !plan.is_baseline(n))
                .collect();
            // A neighbour the scenario rules refuse in some world is left out, as if not in the space.
            let valid: Vec<bool> = fresh.par_iter().map(|n| plan.problems(n).is_empty()).collect();
            for (n, ok) in fresh.into_iter().zip(valid) {
                known.insert(n.clone());
                if ok && (added as u64) < affordable {
                    candidates.push(n);
                    evaluations.push(Evaluation::empty(plan));
                    status.push(None);
                    left_in_round.push(None);
                    added += 1;
                }
            }
        }
        rounds.push(Round {
            replications: still.iter().map(|c| evaluations[*c].replications()).max().unwrap_or(0),
            racing: alive.len(),
            alive: still.len(),
            spent,
            simulations: jobs.len() as u64,
            best,
            added,
        });
        progress(rounds.last().expect("just pushed"));
        let growing = still.iter().any(|c| evaluations[*c].replications() < budget.max_per_candidate);
        if spent >= budget.total || (!growing && added == 0) {
            break;
        }
    }
    let count = candidates.len();
    let alive: Vec<usize> = (0..count).filter(|c| status[*c].is_none()).collect();
    let recommended = best_feasible(plan, &evaluations, &alive).map(|(c, _)| c);
    let criteria = |c: usize| -> Vec<f64> {
        let mut v = vec![objective(plan, &evaluations[c])];
        v.extend(
            plan.constraints.iter().map(|k| evaluations[c].estimate(&k.criterion).map_or(f64::INFINITY, |x| x.value)),
        );
        v
    };
    let feasible_alive: Vec<usize> = alive.iter().copied().filter(|c| feasible(plan, &evaluations[*c])).collect();
    for &c in &alive {
        status[c] = Some(if Some(c) == recommended {
            Status::Recommended
        } else if !feasible(plan, &evaluations[c]) {
            Status::Infeasible
        } else {
            let mine = criteria(c);
            let dominated = feasible_alive.iter().any(|&d| {
                let theirs = criteria(d);
                d != c && theirs.iter().zip(&mine).all(|(t, m)| t <= m) && theirs.iter().zip(&mine).any(|(t, m)| t < m)
            });
            if dominated { Status::Dominated } else { Status::Pareto }
        });
    }
    Ok(Outcome::Done(SearchResult {
        candidates,
        evaluations,
        status: status.into_iter().map(|s| s.expect("every candidate has a status")).collect(),
        left_in_round,
        rounds,
        recommended,
        spent,
    }))
}

/// The candidate closest to meeting the constraints (least violation, then objective, then index).
fn closest_alive(plan: &TunePlan, evaluations: &[Evaluation], among: &[usize]) -> Option<usize> {
    among.iter().copied().min_by(|a, b| {
        let key = |c: usize| (violation(plan, &evaluations[c]), objective(plan, &evaluations[c]));
        let (ka, kb) = (key(*a), key(*b));
        ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(a.cmp(b))
    })
}

/// Takes out of the race the candidates whose intervals show they cannot win (see the module
/// documentation). The base strategy (candidate 0) always stays.
fn eliminate(
    plan: &TunePlan,
    evaluations: &[Evaluation],
    alive: &[usize],
    status: &mut [Option<Status>],
    left_in_round: &mut [Option<usize>],
    round: usize,
) {
    let surely_feasible = |c: usize| {
        plan.constraints.iter().all(|k| evaluations[c].estimate(&k.criterion).is_some_and(|x| x.high <= k.max))
    };
    let objective_bounds =
        |c: usize| evaluations[c].estimate(&plan.objective).map_or((f64::INFINITY, f64::INFINITY), |x| (x.low, x.high));
    let best_high =
        alive.iter().filter(|c| surely_feasible(**c)).map(|c| objective_bounds(*c).1).fold(f64::INFINITY, f64::min);
    let bounds: Vec<(f64, f64)> = alive.iter().map(|c| objective_bounds(*c)).collect();
    let mut leaving: Vec<(usize, Status)> = Vec::new();
    for (i, &c) in alive.iter().enumerate().filter(|(_, c)| **c != 0) {
        let infeasible =
            plan.constraints.iter().any(|k| evaluations[c].estimate(&k.criterion).is_some_and(|x| x.low > k.max));
        // Surely slower than a candidate that is surely no worse in every constraint: whenever
        // this one meets the constraints, that one does too, so this one cannot be the best.
        let beaten = || {
            alive.iter().enumerate().any(|(j, &d)| {
                d != c
                    && bounds[j].1 < bounds[i].0
                    && plan.constraints.iter().all(|k| surely_no_worse(&evaluations[d], &evaluations[c], &k.criterion))
            })
        };
        if infeasible {
            leaving.push((c, Status::Infeasible));
        } else if bounds[i].0 > best_high || beaten() {
            leaving.push((c, Status::Eliminated));
        }
    }
    // Decided on the round's figures alone, then applied: the order of candidates changes nothing.
    for (c, s) in leaving {
        status[c] = Some(s);
        left_in_round[c] = Some(round);
    }
}

/// Whether `better` is surely no worse than `worse` in a criterion, replication by replication
/// (common random numbers pair them): for a mean, every paired difference is at most 0 or the upper
/// end of their Student's t interval is; for a percentile, `better` is at most `worse` in every
/// replication, so every percentile of its values is too.
fn surely_no_worse(better: &Evaluation, worse: &Evaluation, c: &Criterion) -> bool {
    let value = |x: Option<f64>| match (x, missing_of(c.measure)) {
        (Some(x), _) => Some(x),
        (None, Missing::Infinite) => Some(f64::INFINITY),
        (None, Missing::Zero) => Some(0.0),
        (None, Missing::Skipped) => None,
    };
    let pairs: Vec<(Option<f64>, Option<f64>)> = better.samples[c.world][c.measure]
        .iter()
        .zip(&worse.samples[c.world][c.measure])
        .map(|(b, w)| (value(*b), value(*w)))
        .collect();
    // A replication counted for one and not the other cannot be compared.
    if pairs.iter().any(|(b, w)| b.is_some() != w.is_some()) {
        return false;
    }
    let pairs: Vec<(f64, f64)> = pairs.into_iter().filter_map(|(b, w)| Some((b?, w?))).collect();
    if pairs.iter().all(|(b, w)| b <= w) {
        return true;
    }
    match c.statistic {
        Statistic::Percentile(_) => false,
        Statistic::Mean => {
            let diffs: Vec<f64> = pairs.iter().map(|(b, w)| b - w).collect();
            diffs.iter().all(|d| d.is_finite())
                && summarize(&diffs).and_then(|s| s.ci95).is_some_and(|(_, high)| high <= 0.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_that_never_get_there_are_infinitely_slow() {
        // Hours to 100 %: two of ten replications never got there, so p90 lies between a finite
        // value and infinity, and is infinite; p50 is finite; the mean is infinite.
        let mut samples: Vec<Option<f64>> = (1..=8).map(|h| Some(f64::from(h))).collect();
        samples.extend([None, None]);
        let p90 = estimate(&samples, 2, Statistic::Percentile(90)).unwrap();
        assert!(p90.value.is_infinite() && p90.reached == 0.8 && p90.n == 10);
        let p50 = estimate(&samples, 2, Statistic::Percentile(50)).unwrap();
        assert_eq!(p50.value, 5.5);
        assert!(estimate(&samples, 2, Statistic::Mean).unwrap().value.is_infinite());
    }

    #[test]
    fn false_halts_without_a_value_are_left_out() {
        // falseHalt is empty in futures with a bad release: the mean is over the others, with
        // Wilson's interval.
        let samples = [Some(1.0), Some(0.0), None, Some(0.0), Some(0.0)];
        let e = estimate(&samples, 3, Statistic::Mean).unwrap();
        assert_eq!((e.value, e.n), (0.25, 4));
        assert!(e.low > 0.0 && e.high < 1.0);
        assert!(estimate(&[None, None], 3, Statistic::Mean).is_none());
        // Blast radius fraction with nothing at risk counts as nothing reached.
        assert_eq!(estimate(&[None, Some(0.5)], 5, Statistic::Mean).unwrap().value, 0.25);
    }
}
