//! The `fleetsim` command line. Exit codes: 0 the simulation ran (even if a simulated run failed),
//! 2 invalid input, 1 any other error (PRODUCT.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `println!` that ignores a closed pipe.
macro_rules! say {
    ($($arg:tt)*) => {
        say_line(&format!($($arg)*))
    };
}

use fleetsim::output::{self, OutputError};
use fleetsim::report::{self, ReportContext};
use fleetsim::scenario::{self, LoadError};
use fleetsim::simulation::{SimOptions, simulate};
use fleetsim::sweep::{self, Shard, SweepError};

#[derive(Parser)]
#[command(name = "fleetsim", version, about = "Deterministic simulator of Azure Kubernetes Fleet Manager update runs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate one scenario and write its report folder.
    Run(RunArgs),
    /// Run a parameter sweep; rerun into the same folder to resume an interrupted one.
    Sweep {
        /// Sweep file (JSON).
        sweep: PathBuf,
        /// Output folder (default: reports/<sweep name>/, or reports/<sweep name>-shard-K-of-N/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads, at least 1 (default: the number of CPUs).
        #[arg(long, value_parser = parse_threads)]
        threads: Option<usize>,
        /// Run only shard K of N (the jobs whose index modulo N is K-1); merge the shards with `merge`.
        #[arg(long, value_parser = Shard::parse)]
        shard: Option<Shard>,
        /// Treat every warning as an error (exit 2, nothing run).
        #[arg(long)]
        strict: bool,
        /// No progress bar, no warnings and no closing line.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Combine the shard folders of one sweep into the folder an unsharded run writes:
    /// `merge --out DIR SHARD_DIR...` (or `merge DIR SHARD_DIR...`).
    Merge {
        /// Output folder (without it, the first folder given is the output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Every shard folder of the sweep.
        #[arg(required = true, value_name = "SHARD_DIR")]
        folders: Vec<PathBuf>,
        #[arg(long, short)]
        quiet: bool,
    },
    /// Search strategies for the fastest one within a risk budget (a tune file).
    Tune {
        /// Tune file (JSON).
        tune: PathBuf,
        /// Output folder (default: reports/<tune name>/). It must not exist, be empty, or be a folder
        /// fleetsim wrote; it is replaced whole.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads, at least 1 (default: the number of CPUs).
        #[arg(long, value_parser = parse_threads)]
        threads: Option<usize>,
        /// Run only shard K of N of the current round (its jobs whose index modulo N is K-1), from
        /// the rounds merged in --from; then merge the shards with --merge.
        #[arg(long, value_parser = Shard::parse)]
        shard: Option<Shard>,
        /// With --shard: the merged folder of the earlier rounds (absent or empty for round 1).
        #[arg(long, value_name = "MERGED_DIR", requires = "shard")]
        from: Option<PathBuf>,
        /// Join these shard folders into --out and decide the next round (or write the results).
        #[arg(long, value_name = "SHARD_DIR", num_args = 1.., conflicts_with_all = ["shard", "from"])]
        merge: Option<Vec<PathBuf>>,
        /// No progress bar, no round lines and no closing line.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check scenario, sweep or tune files; print every problem with its JSON path; exit 2 if any is invalid.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Treat every warning as an error (exit 2): for CI checks of strategy files.
        #[arg(long)]
        strict: bool,
    },
    /// Build a scenario from what az, ARM and Resource Graph print for a fleet: members, clusters,
    /// maintenance configurations, strategies, runs, auto-upgrade profiles. Writes the scenario to
    /// --out (default: standard output) and a summary of what was imported and left out to standard error.
    Import {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Scenario file to write (`-` or absent: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Scenario name (default: the fleet's name in the resources' ids).
        #[arg(long)]
        name: Option<String>,
        /// Scenario start, RFC 3339 (default: the earliest start of an imported run, else the latest change to a resource).
        #[arg(long)]
        start: Option<String>,
        #[arg(long, short)]
        quiet: bool,
    },
    /// Write a strategy as `az fleet updatestrategy create --stages FILE` takes it.
    Export {
        /// Scenario file (JSON), or a `fleetsim tune` folder or its recommendation.json.
        scenario: PathBuf,
        /// A strategy of updateStrategies, or a run whose strategy to export (required for a
        /// scenario); for a tune's recommendation: `recommended` (default) or `baseline`.
        #[arg(long)]
        strategy: Option<String>,
        /// File to write (`-` or absent: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// When will a run in progress finish? Simulates the rest of the run from its status (the output
    /// of `az fleet updaterun show`, ARM's GET, or a status/<run>.json fleetsim wrote) many times and
    /// writes forecast.json and index.html with a fan chart.
    Forecast {
        /// Scenario file with the fleet and the run (e.g. from `fleetsim import`).
        scenario: PathBuf,
        /// The run's status: its UpdateRun GET resource (az-flattened or ARM-nested).
        #[arg(long)]
        status: PathBuf,
        /// Replications, at least 1.
        #[arg(long, default_value_t = fleetsim::forecast::DEFAULT_REPLICATIONS, value_parser = parse_replications)]
        replications: u64,
        /// Forecast from this instant, RFC 3339 (default: the latest time in the status).
        #[arg(long)]
        now: Option<String>,
        /// Override the scenario's seed.
        #[arg(long, value_parser = parse_seed, allow_hyphen_values = true)]
        seed: Option<u64>,
        /// Worker threads, at least 1 (default: the number of CPUs); the answer does not depend on it.
        #[arg(long, value_parser = parse_threads)]
        threads: Option<usize>,
        /// Output folder (default: reports/<scenario name>-<run>-forecast/). It must not exist, be
        /// empty, or be a folder fleetsim wrote; it is replaced whole.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the --out folder even if fleetsim did not write it.
        #[arg(long)]
        force: bool,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the JSON Schema of scenario and sweep files (for editors); or of one of them.
    Schema {
        #[arg(value_enum)]
        format: Option<SchemaFormat>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Scenario file (JSON).
    scenario: PathBuf,
    /// Override the scenario's seed.
    #[arg(long, value_parser = parse_seed, allow_hyphen_values = true)]
    seed: Option<u64>,
    /// Replication number: the random streams of replication R of a sweep.
    #[arg(long, default_value_t = 0, value_parser = parse_replication, allow_hyphen_values = true)]
    replication: u64,
    /// Report folder (default: reports/<scenario name>/). It must not exist, be empty, or be a report
    /// folder fleetsim wrote (it has a .fleetsim-report file); it is replaced whole.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the --out folder even if fleetsim did not write it (everything in it is lost).
    #[arg(long)]
    force: bool,
    /// Treat every warning as an error (exit 2, nothing written).
    #[arg(long)]
    strict: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
    /// Also write every member (explicit and generated) as a JSON array in the scenario's
    /// member format, to paste back or inspect (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    dump_fleet: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SchemaFormat {
    Scenario,
    Sweep,
    Tune,
}

/// A fleetsim input file: a scenario, a sweep over a scenario, or a tune file (`fleetsim schema
/// scenario` / `sweep` / `tune` print one).
#[derive(schemars::JsonSchema)]
#[schemars(title = "fleetsim scenario, sweep or tune file")]
#[serde(untagged)]
#[allow(dead_code)]
enum InputFile {
    Scenario(Box<fleetsim::scenario::ScenarioDto>),
    Sweep(Box<sweep::SweepDto>),
    Tune(Box<fleetsim::tune::TuneDto>),
}

/// An error that decides the exit code.
enum Failure {
    Invalid(Vec<String>),
    Other(anyhow::Error),
    /// A signal stopped the writing of an output (what was staged is gone).
    Interrupted,
}

impl From<OutputError> for Failure {
    fn from(e: OutputError) -> Self {
        match e {
            OutputError::Refused(line) => Failure::Invalid(vec![line]),
            OutputError::Interrupted => Failure::Interrupted,
            other => Failure::Other(other.into()),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Other(e)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    clean_up_on_signals();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Sweep { sweep, out, threads, shard, strict, quiet } => {
            run_sweep(&sweep, out, threads, shard, Warn { strict, quiet })
        }
        Command::Merge { out, folders, quiet } => merge(out, folders, quiet),
        Command::Tune { tune, out, threads, shard, from, merge, quiet } => {
            run_tune(&tune, out, threads, TuneRole { shard, from, merge }, quiet)
        }
        Command::Validate { files, strict } => validate(&files, Warn { strict, quiet: false }),
        Command::Schema { format } => schema(format),
        Command::Import { files, out, name, start, quiet } => import(&files, out, name, start, quiet),
        Command::Export { scenario, strategy, out } => export(&scenario, strategy.as_deref(), out),
        Command::Forecast { scenario, status, replications, now, seed, threads, out, force, quiet } => {
            forecast(&scenario, &status, ForecastArgs { replications, now, seed, threads, out, force, quiet })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Invalid(lines)) => {
            for line in lines {
                eprintln!("{line}");
            }
            ExitCode::from(2)
        }
        Err(Failure::Other(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted) => ExitCode::from(130),
    }
}

/// SIGINT and SIGTERM remove the staging folder of an output being written, then end the process
/// with the usual 128 + signal status. Without this, an interrupted report left its staging folder
/// behind for good.
#[cfg(unix)]
fn clean_up_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else { return };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            output::remove_staged();
            std::process::exit(128 + signal);
        }
    });
}

#[cfg(not(unix))]
fn clean_up_on_signals() {}

fn load(path: &Path, seed: Option<u64>) -> Result<scenario::Scenario, Failure> {
    scenario::load_file(path, seed).map_err(|e| match e {
        LoadError::Io(message) => Failure::Invalid(vec![message]),
        LoadError::Invalid(problems) => Failure::Invalid(problem_lines(path, &problems)),
    })
}

/// The problems of the file at `path`, one line each.
fn problem_lines(path: &Path, problems: &[scenario::Problem]) -> Vec<String> {
    problems.iter().map(|p| format!("{}: {p}", path.display())).collect()
}

/// The file at `path` parsed once, and its kind told from its keys; text that does not parse is
/// told from the keys before the error (a sweep or tune file is named as such, however broken). The
/// text is not kept: a large fleet's text is as large as the fleet.
fn read_document(path: &Path) -> Result<(Result<serde_json::Value, scenario::Problem>, sweep::FileKind), Failure> {
    let text = read_text(path)?;
    let parsed = scenario::parse_json(&text);
    let kind = match &parsed {
        Ok(value) => sweep::FileKind::of_value(value),
        Err(_) => sweep::file_kind(&text),
    };
    Ok((parsed, kind))
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure::Invalid(vec![format!("{}: cannot read: {e}", path.display())]))
}

fn run(args: RunArgs) -> Result<(), Failure> {
    let path = args.scenario.as_path();
    let shown = path.display();
    let (parsed, kind) = read_document(path)?;
    match kind {
        sweep::FileKind::Sweep => {
            return Err(Failure::Invalid(vec![format!("{shown}: a sweep file: run it with `fleetsim sweep {shown}`")]));
        }
        sweep::FileKind::Tune => {
            return Err(Failure::Invalid(vec![format!("{shown}: a tune file: run it with `fleetsim tune {shown}`")]));
        }
        _ => {}
    }
    // A fleet written to standard output is not mixed with the run summary.
    let quiet = args.quiet || args.dump_fleet.as_deref() == Some(Path::new("-"));
    let loaded = match &args.dump_fleet {
        None => scenario::from_parsed(parsed, args.seed).map(|scenario| (scenario, Vec::new())),
        Some(_) => scenario::from_parsed_with_fleet(parsed, args.seed),
    };
    let (scenario, fleet) = loaded.map_err(|problems| Failure::Invalid(problem_lines(path, &problems)))?;
    let out = args.out.unwrap_or_else(|| Path::new("reports").join(&scenario.name));
    let replace = if args.force { report::Replace::AnyFolder } else { report::Replace::Reports };
    // Before anything is simulated or written: a folder fleetsim may not replace is refused at once.
    report::check_folder(&out, replace)?;
    if let Some(target) = &args.dump_fleet {
        check_dump_target(target, path, &out)?;
    }
    let warn = Warn { strict: args.strict, quiet: args.quiet };
    let file = path.display().to_string();
    let mut warnings = scenario::warnings::warnings(&scenario);
    warn.check(warnings.iter().map(|w| format!("{file}: {w}")).collect())?;
    let result = simulate(&scenario, SimOptions { replication: args.replication, ..SimOptions::default() });
    let cut = report::summary::horizon_warnings(&scenario, &result);
    warn.check(cut.iter().map(|w| format!("{file}: {w}")).collect())?;
    warnings.extend(cut);
    if let Some(target) = &args.dump_fleet {
        dump_fleet(target, &fleet)?;
    }
    let mut ctx = ReportContext::new(&scenario, &result);
    ctx.warnings = warnings;
    report::write_report(&ctx, &out, replace)?;
    if !quiet {
        print_run_summary(&ctx, args.replication, &out);
    }
    // The process ends here and its memory goes back to the system whole: the fleet, the result and
    // what the report kept of them are not freed piece by piece first (a million members' records,
    // pools and timeline rows took about a third of a second to free). Nothing of them has a drop
    // that does more than free memory: the report folder is written and its files closed.
    std::mem::forget(ctx);
    std::mem::forget(result);
    std::mem::forget(scenario);
    std::mem::forget(fleet);
    Ok(())
}

/// What to do with warnings: print them (`warning: FILE: /pointer: message` on standard error), or
/// with `--strict` fail with them as errors.
#[derive(Clone, Copy)]
struct Warn {
    strict: bool,
    quiet: bool,
}

impl Warn {
    fn check(self, lines: Vec<String>) -> Result<(), Failure> {
        if self.strict && !lines.is_empty() {
            return Err(Failure::Invalid(lines));
        }
        if !self.quiet {
            for line in lines {
                eprintln!("warning: {line}");
            }
        }
        Ok(())
    }
}

/// Runs listed on the terminal at most; `runs.csv` has them all.
const RUNS_SHOWN: usize = 12;

fn print_run_summary(ctx: &ReportContext, replication: u64, out: &Path) {
    let (scenario, result) = (ctx.scenario, ctx.result);
    let replication = if replication > 0 { format!(", replication {replication}") } else { String::new() };
    let mut lines = vec![format!(
        "{} (seed {}{replication}): {} members, simulated until {}",
        scenario.name,
        scenario.seed,
        scenario.fleet.len(),
        result.end
    )];
    // The critical paths of `summary.json`, made when the report was written (making them again
    // took about 0.2 s at a million members).
    let summary = ctx.summary();
    for (r, run) in result.runs.iter().enumerate().take(RUNS_SHOWN) {
        let total: usize = run.stages.iter().flat_map(|s| s.groups.iter()).map(|g| g.members.len()).sum();
        let completed = report::tables::count_state(run, fleetsim::orchestrator::UpdateState::Completed);
        let state = match run.start_time {
            Some(s) => {
                format!("{} after {:.1} h", run.state, (run.completed_time.unwrap_or(result.end) - s).as_hours_f64())
            }
            None => "never started".to_string(),
        };
        lines.push(format!(
            "  run {}: {state}, {completed}/{total} members completed, failureCount {}",
            run.name, run.failure_count
        ));
        lines.extend(summary.runs[r].critical_path.lines().into_iter().map(|l| format!("    {l}")));
        if let Some(blocked) = report::summary::blocked(run, &result.specs[r]) {
            lines.push(format!("    {}", blocked.text));
        }
    }
    if result.runs.len() > RUNS_SHOWN {
        lines.push(format!("  … and {} more runs (runs.csv lists every run)", result.runs.len() - RUNS_SHOWN));
    }
    for (t, note) in &result.notes {
        lines.push(format!("  note: {t}: {note}"));
    }
    lines.push(format!("report: {}", out.display()));
    say_line(&lines.join("\n"));
}

/// Prints a line to standard output; a closed pipe (`fleetsim run … | head`) is not an error.
fn say_line(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// Writes the fleet whole or not at all ([`output::write_file`]), or to standard output.
/// `--dump-fleet FILE` never replaces the scenario being run, never lands inside the report folder
/// (the report replaces that folder whole), and needs a folder that exists.
fn check_dump_target(target: &Path, scenario: &Path, out: &Path) -> Result<(), Failure> {
    if target == Path::new("-") {
        return Ok(());
    }
    let shown = target.display();
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    if canonical(target).is_some() && canonical(target) == canonical(scenario) {
        return Err(Failure::Invalid(vec![format!(
            "{shown}: --dump-fleet names the scenario file itself; give another file so the scenario is kept"
        )]));
    }
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let folder = canonical(parent);
    let inside = match (canonical(out), &folder) {
        (Some(out), Some(folder)) => folder.starts_with(out),
        _ => parent.starts_with(out),
    };
    if inside {
        return Err(Failure::Invalid(vec![format!(
            "{shown}: --dump-fleet is inside the report folder {}, which the report replaces whole; write the fleet elsewhere",
            out.display()
        )]));
    }
    if folder.is_none() {
        return Err(Failure::Invalid(vec![format!(
            "{shown}: the folder {} does not exist; create it first or give another --dump-fleet file",
            parent.display()
        )]));
    }
    Ok(())
}

fn dump_fleet(target: &Path, fleet: &[scenario::dto::MemberDto]) -> Result<(), Failure> {
    let mut bytes = serde_json::to_vec_pretty(fleet).map_err(anyhow::Error::from)?;
    bytes.push(b'\n');
    if target == Path::new("-") {
        return Ok(output::write_stdout(&bytes)?);
    }
    Ok(output::write_file(target, &bytes)?)
}

fn validate(files: &[PathBuf], warn: Warn) -> Result<(), Failure> {
    let mut lines = Vec::new();
    for (f, file) in files.iter().enumerate() {
        let (parsed, kind) = match read_document(file) {
            Ok(document) => document,
            Err(Failure::Invalid(mut l)) => {
                lines.append(&mut l);
                continue;
            }
            Err(other) => return Err(other),
        };
        if kind == sweep::FileKind::Tune {
            match fleetsim::tune::load(file) {
                Ok(plan) => say!(
                    "{}: valid tune file \"{}\": {} candidates{} × {} worlds of scenario \"{}\", run \"{}\", budget {} simulations",
                    file.display(),
                    plan.name,
                    plan.initial.len(),
                    if plan.sampled {
                        format!(
                            " (a Latin-hypercube sample of {} combinations, refined around the best)",
                            plan.combinations
                        )
                    } else {
                        String::new()
                    },
                    plan.worlds.len(),
                    plan.scenario_name,
                    plan.run,
                    plan.budget.total
                ),
                Err(problems) => lines.extend(problems.iter().map(|p| p.to_string())),
            }
            continue;
        }
        if kind == sweep::FileKind::Sweep {
            match sweep::load(file) {
                Ok(plan) => {
                    let warnings: Vec<String> = plan.warnings().iter().map(|w| w.to_string()).collect();
                    if warn.strict && !warnings.is_empty() {
                        lines.extend(warnings);
                        continue;
                    }
                    say!(
                        "{}: valid sweep \"{}\": {} points × {} replications = {} replications of scenario \"{}\"",
                        file.display(),
                        plan.name,
                        plan.points.len(),
                        plan.replications,
                        plan.jobs(),
                        plan.scenario_name
                    );
                    warn.check(warnings)?;
                }
                Err(problems) => lines.extend(problems.iter().map(|p| p.to_string())),
            }
            continue;
        }
        match scenario::from_parsed(parsed, None) {
            Ok(s) => {
                let warnings: Vec<String> =
                    scenario::warnings::warnings(&s).iter().map(|w| format!("{}: {w}", file.display())).collect();
                if warn.strict && !warnings.is_empty() {
                    lines.extend(warnings);
                    continue;
                }
                let count = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
                say!(
                    "{}: valid scenario \"{}\" ({}, {})",
                    file.display(),
                    s.name,
                    count(s.fleet.len(), "member", "members"),
                    count(s.runs.len(), "run", "runs")
                );
                warn.check(warnings)?;
                // The last file's scenario is not freed before the process ends, as in `run` (a
                // million members took about 0.45 s to free).
                if f + 1 == files.len() {
                    std::mem::forget(s);
                }
            }
            Err(problems) => lines.extend(problem_lines(file, &problems)),
        }
    }
    if lines.is_empty() { Ok(()) } else { Err(Failure::Invalid(lines)) }
}

fn import(
    files: &[PathBuf],
    out: Option<PathBuf>,
    name: Option<String>,
    start: Option<String>,
    quiet: bool,
) -> Result<(), Failure> {
    use fleetsim::azure::import::{ImportOptions, Input};
    let mut inputs = Vec::new();
    let mut problems = Vec::new();
    for path in files {
        let file = path.display().to_string();
        match std::fs::read_to_string(path) {
            Err(e) => problems.push(format!("{file}: cannot read: {e}")),
            Ok(text) => match scenario::parse_json(&text) {
                Ok(value) => inputs.push(Input { file, value }),
                Err(p) => problems.push(format!("{file}: {p}")),
            },
        }
    }
    if !problems.is_empty() {
        return Err(Failure::Invalid(problems));
    }
    let imported =
        fleetsim::azure::import::import(&inputs, &ImportOptions { name, start }).map_err(Failure::Invalid)?;
    let mut bytes = serde_json::to_vec_pretty(&imported.scenario).map_err(anyhow::Error::from)?;
    bytes.push(b'\n');
    write_single(out.as_deref(), &bytes)?;
    if !quiet {
        for line in &imported.summary {
            eprintln!("{line}");
        }
    }
    Ok(())
}

fn export(path: &Path, name: Option<&str>, out: Option<PathBuf>) -> Result<(), Failure> {
    // A tune folder exports its recommendation.
    if path.is_dir() && !path.join("recommendation.json").is_file() {
        return Err(Failure::Invalid(vec![format!(
            "{}: a folder without recommendation.json: give a scenario file, or a `fleetsim tune` folder or its recommendation.json",
            path.display()
        )]));
    }
    let path = if path.is_dir() { path.join("recommendation.json") } else { path.to_path_buf() };
    let path = path.as_path();
    let text = read_text(path)?;
    let invalid = |problems: Vec<scenario::Problem>| Failure::Invalid(problem_lines(path, &problems));
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
        && fleetsim::azure::export::is_recommendation(&value)
    {
        let strategy = fleetsim::azure::export::recommended_strategy(&value, name)
            .map_err(|lines| Failure::Invalid(lines.iter().map(|l| format!("{}: {l}", path.display())).collect()))?;
        return write_single(out.as_deref(), &fleetsim::azure::export::stages_file(&strategy));
    }
    let (dto, moves) = scenario::parse_dto(&text).map_err(invalid)?;
    // Only a valid scenario's strategy is exported: the service would reject the others.
    scenario::build::build(&dto, None).map_err(|p| invalid(moves.locate(p)))?;
    let Some(name) = name else {
        let known: Vec<String> = dto.update_strategies.keys().map(|k| format!("\"{k}\"")).collect();
        return Err(Failure::Invalid(vec![format!(
            "{}: --strategy NAME is required for a scenario (its strategies: {})",
            path.display(),
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        )]));
    };
    let strategy = fleetsim::azure::export::strategy(&dto, name)
        .map_err(|e| Failure::Invalid(vec![format!("{}: --strategy: {e}", path.display())]))?;
    write_single(out.as_deref(), &fleetsim::azure::export::stages_file(strategy))
}

/// The options of `fleetsim forecast` besides its two files.
struct ForecastArgs {
    replications: u64,
    now: Option<String>,
    seed: Option<u64>,
    threads: Option<usize>,
    out: Option<PathBuf>,
    force: bool,
    quiet: bool,
}

fn forecast(path: &Path, status_path: &Path, args: ForecastArgs) -> Result<(), Failure> {
    use fleetsim::forecast::{self, Prepared};
    let scenario = load(path, args.seed)?;
    let file = status_path.display().to_string();
    let located = |problems: Vec<scenario::Problem>| {
        Failure::Invalid(
            scenario::problem::collapse_problems(problems).iter().map(|p| format!("{file}: {p}")).collect(),
        )
    };
    let text = std::fs::read_to_string(status_path)
        .map_err(|e| Failure::Invalid(vec![format!("{file}: cannot read: {e}")]))?;
    let value = scenario::parse_json(&text).map_err(|p| located(vec![p]))?;
    let status = forecast::status::read(&value).map_err(located)?;
    let now = match &args.now {
        None => None,
        Some(text) => Some(
            fleetsim::engine::Time::parse_rfc3339(text).map_err(|e| Failure::Invalid(vec![format!("--now: {e}")]))?,
        ),
    };
    let prepared = forecast::prepare(&scenario, &status, now).map_err(located)?;
    let out =
        args.out.unwrap_or_else(|| Path::new("reports").join(format!("{}-{}-forecast", scenario.name, status.name)));
    let replace = if args.force { report::Replace::AnyFolder } else { report::Replace::Reports };
    report::check_folder(&out, replace)?;
    let setup = match prepared {
        Prepared::Finished(finished) => {
            // Nothing to forecast: the finished facts are written, and the status is refused as input.
            let facts = forecast::report::finished(&scenario.name, scenario.seed, &finished);
            report::write_folder(&out, &forecast::report::render(&facts)?, replace)?;
            if !args.quiet {
                say!("{}\nreport: {}", forecast::report::lines(&facts).join("\n"), out.display());
            }
            return Err(located(vec![finished.problem]));
        }
        Prepared::InProgress(setup) => setup,
    };
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let replications = forecast::replicate(&setup, args.replications, threads).map_err(located)?;
    let result = forecast::report::forecast(&setup, &replications);
    report::write_folder(&out, &forecast::report::render(&result)?, replace)?;
    if !args.quiet {
        say!("{}\nreport: {}", forecast::report::lines(&result).join("\n"), out.display());
    }
    Ok(())
}

/// A single output file ([`output::write_file`]), or standard output for `-` or none.
fn write_single(target: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match target {
        None => Ok(output::write_stdout(bytes)?),
        Some(p) if p == Path::new("-") => Ok(output::write_stdout(bytes)?),
        Some(p) => Ok(output::write_file(p, bytes)?),
    }
}

fn schema(format: Option<SchemaFormat>) -> Result<(), Failure> {
    let schema = match format {
        None => schemars::schema_for!(InputFile),
        Some(SchemaFormat::Scenario) => schemars::schema_for!(fleetsim::scenario::ScenarioDto),
        Some(SchemaFormat::Sweep) => schemars::schema_for!(sweep::SweepDto),
        Some(SchemaFormat::Tune) => schemars::schema_for!(fleetsim::tune::TuneDto),
    };
    say!("{}", serde_json::to_string_pretty(&schema).map_err(anyhow::Error::from)?);
    Ok(())
}

fn sweep_failure(e: SweepError) -> Failure {
    match e {
        SweepError::Invalid(problems) => Failure::Invalid(problems.iter().map(|p| p.to_string()).collect()),
        SweepError::Conflict(message) => Failure::Invalid(vec![format!("error: {message}")]),
        SweepError::Io(e) => Failure::Other(e.into()),
        SweepError::Output(e) => e.into(),
    }
}

fn run_sweep(
    path: &Path,
    out: Option<PathBuf>,
    threads: Option<usize>,
    shard: Option<Shard>,
    warn: Warn,
) -> Result<(), Failure> {
    let shown = path.display();
    match std::fs::read_to_string(path).map(|text| sweep::file_kind(&text)) {
        Ok(sweep::FileKind::Scenario) => {
            return Err(Failure::Invalid(vec![format!(
                "{shown}: a scenario file: run it with `fleetsim run {shown}`"
            )]));
        }
        Ok(sweep::FileKind::Tune) => {
            return Err(Failure::Invalid(vec![format!("{shown}: a tune file: run it with `fleetsim tune {shown}`")]));
        }
        _ => {}
    }
    let quiet = warn.quiet;
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    // Validation builds every point's scenario: on the same number of threads as the sweep.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(anyhow::Error::from)?;
    let plan = pool.install(|| sweep::load(path)).map_err(|p| sweep_failure(SweepError::Invalid(p)))?;
    warn.check(pool.install(|| plan.warnings()).iter().map(|w| w.to_string()).collect())?;
    let out = out.unwrap_or_else(|| match shard {
        None => Path::new("reports").join(&plan.name),
        Some(s) => Path::new("reports").join(format!("{}-shard-{}-of-{}", plan.name, s.index, s.count)),
    });
    let options = sweep::ExecOptions { threads, shard, progress: !quiet };
    let report = sweep::run(&plan, &out, options).map_err(sweep_failure)?;
    if !quiet {
        let what = shard.map_or(String::new(), |s| format!(" shard {s}"));
        let rate = report.ran as f64 / report.elapsed.as_secs_f64().max(1e-9);
        say!(
            "sweep {}{what}: {} points × {} replications; {} of {} replications run now ({} found done) in {:.1} s, {:.0} replications/s on {threads} thread{}",
            plan.name,
            plan.points.len(),
            plan.replications,
            report.ran,
            report.jobs,
            report.already_done,
            report.elapsed.as_secs_f64(),
            rate,
            if threads == 1 { "" } else { "s" }
        );
        if report.unreadable_lines > 0 {
            say!("  {} unreadable journal lines were ignored; their replications ran again", report.unreadable_lines);
        }
        let files = if report.finalized { "results.csv, summary.csv" } else { "journal.jsonl (merge the shards)" };
        say!("output: {} ({files})", out.display());
    }
    Ok(())
}

/// How a `fleetsim tune` process takes part: the whole search, one shard of a round, or a merge.
struct TuneRole {
    shard: Option<Shard>,
    from: Option<PathBuf>,
    merge: Option<Vec<PathBuf>>,
}

fn run_tune(
    path: &Path,
    out: Option<PathBuf>,
    threads: Option<usize>,
    role: TuneRole,
    quiet: bool,
) -> Result<(), Failure> {
    use fleetsim::tune::{Outcome, folder};
    let kind = std::fs::read_to_string(path).map(|text| sweep::file_kind(&text)).ok();
    let shown = path.display();
    match kind {
        Some(sweep::FileKind::Scenario) => {
            return Err(Failure::Invalid(vec![format!(
                "{shown}: a scenario file: run it with `fleetsim run {shown}`"
            )]));
        }
        Some(sweep::FileKind::Sweep) => {
            return Err(Failure::Invalid(vec![format!("{shown}: a sweep file: run it with `fleetsim sweep {shown}`")]));
        }
        _ => {}
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(anyhow::Error::from)?;
    let plan = pool
        .install(|| fleetsim::tune::load(path))
        .map_err(|problems| Failure::Invalid(problems.iter().map(|p| p.to_string()).collect()))?;
    let out = out.unwrap_or_else(|| match role.shard {
        None => Path::new("reports").join(&plan.name),
        Some(s) => Path::new("reports").join(format!("{}-shard-{}-of-{}", plan.name, s.index, s.count)),
    });
    let started = std::time::Instant::now();
    // One line per round where there is no terminal to draw the bar on; above the bar otherwise.
    let on_round = |round: &fleetsim::tune::search::Round, bar: &indicatif::ProgressBar| {
        if quiet {
            return;
        }
        let best = round.best.map_or("none feasible yet".to_string(), |(c, v)| format!("candidate {c} at {v:.2}"));
        let added =
            if round.added > 0 { format!(", {} neighbours of the best join", round.added) } else { String::new() };
        let line = format!(
            "round: {} replications each, {} of {} candidates still racing, {} simulations spent; best: {best}{added}",
            round.replications, round.alive, round.racing, round.spent
        );
        bar.set_message(format!("{} candidates racing, best: {best}", round.alive));
        if bar.is_hidden() { eprintln!("{line}") } else { bar.println(line) }
    };
    let report = match &role.merge {
        Some(shards) => folder::merge(&plan, &out, shards, on_round),
        None => {
            let bar = folder::progress_bar(plan.budget.total, !quiet);
            folder::run(&plan, &out, threads, role.shard, role.from.as_deref(), bar, on_round)
        }
    }
    .map_err(sweep_failure)?;
    if quiet {
        return Ok(());
    }
    match &report.outcome {
        Outcome::Done(result) => {
            say!("{}", fleetsim::tune::write::summary_words(&plan, result));
            say!(
                "tune {}: {} candidates × {} worlds, {} simulations ({} run now, {} from the journal) in {:.1} s on {threads} threads; output: {}",
                plan.name,
                result.candidates.len(),
                plan.worlds.len(),
                result.spent,
                report.ran,
                report.reused,
                started.elapsed().as_secs_f64(),
                out.display()
            );
        }
        Outcome::Stopped { round, jobs, .. } => match (role.shard, &role.merge) {
            (Some(s), _) => say!(
                "tune {} shard {s}: round {round} ({jobs} simulations in all): {} run now, {} found done; when every shard is done: fleetsim tune {shown} --out MERGED_DIR --merge SHARD_DIR...",
                plan.name,
                report.ran,
                report.reused
            ),
            _ => say!(
                "tune {}: merged into {}; round {round} needs {jobs} simulations: run its shards with --from {}, then merge again",
                plan.name,
                out.display(),
                out.display()
            ),
        },
    }
    if report.unreadable > 0 {
        say!("  {} unusable journal lines were ignored; their simulations ran again", report.unreadable);
    }
    Ok(())
}

fn merge(out: Option<PathBuf>, mut folders: Vec<PathBuf>, quiet: bool) -> Result<(), Failure> {
    let out = match out {
        Some(out) => out,
        None if folders.len() >= 2 => folders.remove(0),
        None => {
            return Err(Failure::Invalid(vec![
                "merge: give the output folder and the shard folders: fleetsim merge --out DIR SHARD_DIR...".into(),
            ]));
        }
    };
    if let Some(m) = folders.first().and_then(|d| fleetsim::tune::folder::TuneManifest::read(d)) {
        return Err(Failure::Invalid(vec![format!(
            "error: {} is a folder of tune \"{}\": merge tune shards with `fleetsim tune TUNE.json --out MERGED_DIR --merge SHARD_DIR...`",
            folders[0].display(),
            m.tune
        )]));
    }
    let report = sweep::merge(&out, &folders).map_err(sweep_failure)?;
    if !quiet {
        say!("merged {} shards, {} replications: {}", report.shards, report.jobs, out.display());
    }
    Ok(())
}

/// `--seed N`: a whole number from 0 to 18446744073709551615.
fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("\"{text}\" is not a seed: give a whole number from 0 to {}", u64::MAX))
}

/// `--replication R`: a whole number ≥ 0.
fn parse_replication(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("\"{text}\" is not a replication number: give a whole number of at least 0"))
}

/// `--replications N`: a whole number of at least 1.
fn parse_replications(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("\"{text}\" is not a number of replications: give a whole number of at least 1")),
    }
}

/// `--threads N`: a whole number of at least 1.
fn parse_threads(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("\"{text}\" is not a number of worker threads: give a whole number of at least 1")),
    }
}
