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
        /// Also write every member (explicit and generated) as a JSON array in the scenario's
        /// member format, to paste back or inspect (`-` for standard output).
        #[arg(long, value_name = "FILE")]
        dump_fleet: Option<PathBuf>,
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
        Command::Run { scenario, seed, out, quiet, dump_fleet } => run(&scenario, seed, out, quiet, dump_fleet),
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

fn run(
    path: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    quiet: bool,
    dump: Option<PathBuf>,
) -> Result<(), Failure> {
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
