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
    Run {
        /// Scenario file (JSON).
        scenario: PathBuf,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Replication number: the random streams of replication R of a sweep (default 0).
        #[arg(long, default_value_t = 0)]
        replication: u64,
        /// Report folder (default: reports/<scenario name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
        /// Also write every member (explicit and generated) as a JSON array in the scenario's
        /// member format, to paste back or inspect (`-` for standard output).
        #[arg(long, value_name = "FILE")]
        dump_fleet: Option<PathBuf>,
    },
    /// Run a parameter sweep; rerun into the same folder to resume an interrupted one.
    Sweep {
        /// Sweep file (JSON).
        sweep: PathBuf,
        /// Output folder (default: reports/<sweep name>/, or reports/<sweep name>-shard-K-of-N/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (default: the number of CPUs).
        #[arg(long)]
        threads: Option<usize>,
        /// Run only shard K of N (the jobs whose index modulo N is K-1); merge the shards with `merge`.
        #[arg(long, value_parser = Shard::parse)]
        shard: Option<Shard>,
        /// No progress bar and no closing line.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Combine the shard folders of one sweep into the folder an unsharded run writes.
    Merge {
        /// Output folder.
        out: PathBuf,
        /// Every shard folder of the sweep.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check scenario or sweep files; print every problem with its JSON path; exit 2 if any is invalid.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the JSON Schema of scenario and sweep files (for editors); or of one of them.
    Schema {
        #[arg(value_enum)]
        format: Option<SchemaFormat>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SchemaFormat {
    Scenario,
    Sweep,
}

/// A fleetsim input file: a scenario, or a sweep over a scenario (`fleetsim schema scenario` / `sweep` print one).
#[derive(schemars::JsonSchema)]
#[schemars(title = "fleetsim scenario or sweep file")]
#[serde(untagged)]
#[allow(dead_code)]
enum InputFile {
    Scenario(Box<fleetsim::scenario::ScenarioDto>),
    Sweep(Box<sweep::SweepDto>),
}

/// An error that decides the exit code.
enum Failure {
    Invalid(Vec<String>),
    Other(anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Other(e)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { scenario, seed, replication, out, quiet, dump_fleet } => {
            run(&scenario, seed, replication, out, quiet, dump_fleet)
        }
        Command::Sweep { sweep, out, threads, shard, quiet } => run_sweep(&sweep, out, threads, shard, quiet),
        Command::Merge { out, shards, quiet } => merge(&out, &shards, quiet),
        Command::Validate { files } => validate(&files),
        Command::Schema { format } => schema(format),
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
    }
}

fn load(path: &Path, seed: Option<u64>) -> Result<scenario::Scenario, Failure> {
    scenario::load_file(path, seed).map_err(|e| match e {
        LoadError::Io(message) => Failure::Invalid(vec![message]),
        LoadError::Invalid(problems) => {
            Failure::Invalid(problems.iter().map(|p| format!("{}: {p}", path.display())).collect())
        }
    })
}

fn run(
    path: &Path,
    seed: Option<u64>,
    replication: u64,
    out: Option<PathBuf>,
    quiet: bool,
    dump: Option<PathBuf>,
) -> Result<(), Failure> {
    if std::fs::read_to_string(path).is_ok_and(|text| sweep::is_sweep_text(&text)) {
        let shown = path.display();
        return Err(Failure::Invalid(vec![format!("{shown}: a sweep file: run it with `fleetsim sweep {shown}`")]));
    }
    // A fleet written to standard output is not mixed with the run summary.
    let quiet = quiet || dump.as_deref() == Some(Path::new("-"));
    let scenario = match &dump {
        None => load(path, seed)?,
        Some(target) => {
            let (scenario, fleet) = load_with_fleet(path, seed)?;
            dump_fleet(target, &fleet)?;
            scenario
        }
    };
    let result = simulate(&scenario, SimOptions { replication, ..SimOptions::default() });
    let ctx = ReportContext::new(&scenario, &result);
    let files = report::render(&ctx)?;
    let out = out.unwrap_or_else(|| Path::new("reports").join(&scenario.name));
    report::write_folder(&out, &files)?;
    if !quiet {
        print_run_summary(&scenario, &result, replication, &out);
    }
    Ok(())
}

/// Runs listed on the terminal at most; `runs.csv` has them all.
const RUNS_SHOWN: usize = 12;

fn print_run_summary(
    scenario: &scenario::Scenario,
    result: &fleetsim::simulation::SimResult,
    replication: u64,
    out: &Path,
) {
    let replication = if replication > 0 { format!(", replication {replication}") } else { String::new() };
    let mut lines = vec![format!(
        "{} (seed {}{replication}): {} members, simulated until {}",
        scenario.name,
        scenario.seed,
        scenario.fleet.len(),
        result.end
    )];
    for (r, run) in result.runs.iter().enumerate().take(RUNS_SHOWN) {
        let total: usize = run.stages.iter().flat_map(|s| s.groups.iter()).map(|g| g.members.len()).sum();
        let completed = report::tables::count_state(run, fleetsim::orchestrator::UpdateState::Completed);
        let makespan =
            run.start_time.map(|s| format!("{:.1} h", (run.completed_time.unwrap_or(result.end) - s).as_hours_f64()));
        lines.push(format!(
            "  run {}: {} after {}, {completed}/{total} members completed, failureCount {}",
            run.name,
            run.state,
            makespan.unwrap_or_else(|| "never started".to_string()),
            run.failure_count
        ));
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

fn load_with_fleet(
    path: &Path,
    seed: Option<u64>,
) -> Result<(scenario::Scenario, Vec<scenario::dto::MemberDto>), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Invalid(vec![format!("{}: cannot read: {e}", path.display())]))?;
    scenario::parse_str_with_fleet(&text, seed)
        .map_err(|problems| Failure::Invalid(problems.iter().map(|p| format!("{}: {p}", path.display())).collect()))
}

/// Writes the fleet whole or not at all (a temporary sibling file renamed over the target).
fn dump_fleet(target: &Path, fleet: &[scenario::dto::MemberDto]) -> Result<(), Failure> {
    let mut bytes = serde_json::to_vec_pretty(fleet).map_err(anyhow::Error::from)?;
    bytes.push(b'\n');
    if target == Path::new("-") {
        use std::io::Write;
        std::io::stdout().write_all(&bytes).map_err(anyhow::Error::from)?;
        return Ok(());
    }
    let mut partial = target.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, &bytes)
        .and_then(|()| std::fs::rename(&partial, target))
        .map_err(|e| anyhow::anyhow!("cannot write the fleet to {}: {e}", target.display()))?;
    Ok(())
}

fn validate(files: &[PathBuf]) -> Result<(), Failure> {
    let mut lines = Vec::new();
    for file in files {
        if std::fs::read_to_string(file).is_ok_and(|text| sweep::is_sweep_text(&text)) {
            match sweep::load(file) {
                Ok(plan) => say!(
                    "{}: valid sweep \"{}\": {} points × {} replications = {} replications of scenario \"{}\"",
                    file.display(),
                    plan.name,
                    plan.points.len(),
                    plan.replications,
                    plan.jobs(),
                    plan.scenario_name
                ),
                Err(problems) => lines.extend(problems.iter().map(|p| p.to_string())),
            }
            continue;
        }
        match load(file, None) {
            Ok(s) => say!(
                "{}: valid scenario \"{}\" ({} members, {} runs)",
                file.display(),
                s.name,
                s.fleet.len(),
                s.runs.len()
            ),
            Err(Failure::Invalid(mut l)) => lines.append(&mut l),
            Err(other) => return Err(other),
        }
    }
    if lines.is_empty() { Ok(()) } else { Err(Failure::Invalid(lines)) }
}

fn schema(format: Option<SchemaFormat>) -> Result<(), Failure> {
    let schema = match format {
        None => schemars::schema_for!(InputFile),
        Some(SchemaFormat::Scenario) => schemars::schema_for!(fleetsim::scenario::ScenarioDto),
        Some(SchemaFormat::Sweep) => schemars::schema_for!(sweep::SweepDto),
    };
    say!("{}", serde_json::to_string_pretty(&schema).map_err(anyhow::Error::from)?);
    Ok(())
}

fn sweep_failure(e: SweepError) -> Failure {
    match e {
        SweepError::Invalid(problems) => Failure::Invalid(problems.iter().map(|p| p.to_string()).collect()),
        SweepError::Conflict(message) => Failure::Invalid(vec![format!("error: {message}")]),
        SweepError::Io(e) => Failure::Other(e.into()),
    }
}

fn run_sweep(
    path: &Path,
    out: Option<PathBuf>,
    threads: Option<usize>,
    shard: Option<Shard>,
    quiet: bool,
) -> Result<(), Failure> {
    if std::fs::read_to_string(path).is_ok_and(|text| sweep::is_scenario_text(&text)) {
        let shown = path.display();
        return Err(Failure::Invalid(vec![format!("{shown}: a scenario file: run it with `fleetsim run {shown}`")]));
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    // Validation builds every point's scenario: on the same number of threads as the sweep.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(anyhow::Error::from)?;
    let plan = pool.install(|| sweep::load(path)).map_err(|p| sweep_failure(SweepError::Invalid(p)))?;
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
            "sweep {}{what}: {} points × {} replications; {} of {} replications run now ({} found done) in {:.1} s, {:.0} replications/s on {threads} threads",
            plan.name,
            plan.points.len(),
            plan.replications,
            report.ran,
            report.jobs,
            report.already_done,
            report.elapsed.as_secs_f64(),
            rate
        );
        if report.unreadable_lines > 0 {
            say!("  {} unreadable journal lines were ignored; their replications ran again", report.unreadable_lines);
        }
        let files = if report.finalized { "results.csv, summary.csv" } else { "journal.jsonl (merge the shards)" };
        say!("output: {} ({files})", out.display());
    }
    Ok(())
}

fn merge(out: &Path, shards: &[PathBuf], quiet: bool) -> Result<(), Failure> {
    let report = sweep::merge(out, shards).map_err(sweep_failure)?;
    if !quiet {
        say!("merged {} shards, {} replications: {}", report.shards, report.jobs, out.display());
    }
    Ok(())
}
