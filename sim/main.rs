//! The `fleetsim` command line. Exit codes: 0 the simulation ran (even if a simulated run failed),
//! 2 invalid input, 1 any other error (PRODUCT.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use fleetsim::report::{self, ReportContext};
use fleetsim::scenario::{self, LoadError};
use fleetsim::simulation::{SimOptions, simulate};

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
        /// Report folder (default: reports/<scenario name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check scenario files; print every problem with its JSON path; exit 2 if any is invalid.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format (for editors).
    Schema,
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
        Command::Run { scenario, seed, out, quiet } => run(&scenario, seed, out, quiet),
        Command::Validate { files } => validate(&files),
        Command::Schema => schema(),
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

fn run(path: &Path, seed: Option<u64>, out: Option<PathBuf>, quiet: bool) -> Result<(), Failure> {
    let scenario = load(path, seed)?;
    let result = simulate(&scenario, SimOptions::default());
    let ctx = ReportContext::new(&scenario, &result);
    let files = report::render(&ctx)?;
    let out = out.unwrap_or_else(|| Path::new("reports").join(&scenario.name));
    report::write_folder(&out, &files)?;
    if !quiet {
        println!(
            "{} (seed {}): {} members, simulated until {}",
            scenario.name,
            scenario.seed,
            scenario.fleet.len(),
            result.end
        );
        for run in &result.runs {
            let total: usize = run.stages.iter().flat_map(|s| s.groups.iter()).map(|g| g.members.len()).sum();
            let completed = report::tables::count_state(run, fleetsim::orchestrator::UpdateState::Completed);
            let makespan = run
                .start_time
                .map(|s| format!("{:.1} h", (run.completed_time.unwrap_or(result.end) - s).as_hours_f64()));
            println!(
                "  run {}: {} after {}, {completed}/{total} members completed, failureCount {}",
                run.name,
                run.state,
                makespan.unwrap_or_else(|| "never started".to_string()),
                run.failure_count
            );
        }
        for (t, note) in &result.notes {
            println!("  note: {t}: {note}");
        }
        println!("report: {}", out.display());
    }
    Ok(())
}

fn validate(files: &[PathBuf]) -> Result<(), Failure> {
    let mut lines = Vec::new();
    for file in files {
        match load(file, None) {
            Ok(s) => println!(
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

fn schema() -> Result<(), Failure> {
    let schema = schemars::schema_for!(fleetsim::scenario::ScenarioDto);
    println!("{}", serde_json::to_string_pretty(&schema).map_err(anyhow::Error::from)?);
    Ok(())
}
