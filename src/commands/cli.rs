//! The command line: `blobrace`'s subcommands and the flags of each that are not a
//! run's (a run's are `config::RunArgs`, shared with `cargo bench`).

use clap::{Parser, Subcommand};

use crate::config::{RunArgs, parse_duration, parse_percent};

#[derive(Parser)]
#[command(
    name = "blobrace",
    version,
    about = "How fast can I fetch a blob of size S from database E when the database has far less RAM than data?",
    long_about = "How fast can I fetch a blob of size S from database E when the database has far less RAM than data?\n\n\
Each size class is a dataset of blobs (ids 1..N, uniformly random bytes unless --content says otherwise, 3GiB by default, three times the 1GiB cap). \
A fetch is one random-id read of one whole blob, timed alone. The main job is `cargo bench` (criterion); \
this tool loads, measures without criterion, verifies and drops datasets with the same settings. \
Every flag can also be set through the BLOBRACE_* environment variable named in its help.",
    after_help = "Examples:\n  blobrace load --profile quick\n  blobrace measure --engines sqlite,floor --sizes 64KiB --dataset-bytes 512MiB --cap 128MiB\n  blobrace measure --clients 1,4,16,64 --sizes 64KiB,4MiB\n  blobrace measure --clients 16 --rate 500,1000 --arrivals poisson\n  blobrace saturate --clients 16 --sizes 64KiB\n  blobrace verify --profile quick\n  blobrace report                      # the newest run\n  blobrace report --baseline 20261122-101500-4242\n  blobrace env"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// A run's flags, and whether to only print its plan.
#[derive(clap::Args)]
pub struct MeasureArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Print the run's plan and stop: every cell (size, repeat, engine, cache state,
    /// what it measures) and the time the presets give it, then the total. Nothing is
    /// capped, loaded or measured. `cargo bench` takes BLOBRACE_DRY_RUN=1.
    #[arg(long, env = "BLOBRACE_DRY_RUN", value_parser = clap::builder::BoolishValueParser::new())]
    pub dry_run: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Load every dataset the engines need (skips complete ones, resumes partial ones).
    Load(RunArgs),
    /// Load what is missing, then measure every engine and size without criterion.
    Measure(MeasureArgs),
    /// Find each engine's sustainable rate per size: the highest fetches/s whose p99
    /// response time meets --target-p99, with each --clients count (same as
    /// `measure --mode saturate`).
    Saturate(MeasureArgs),
    /// Check datasets row by row: ids exactly 1..=N, every blob's full content.
    Verify(RunArgs),
    /// Delete the datasets of the given engines and sizes.
    Drop(RunArgs),
    /// Show the cap this process would run under, the machine, and the datasets' state.
    Env(EnvArgs),
    /// Draw the charts and write the HTML report of a stored run (the newest by default),
    /// optionally compared with an earlier run.
    Report(ReportArgs),
    /// How should I store my blobs? Runs of the same engines under different dataset
    /// layouts (--key, --sqlite-page-size, --sqlite-mmap-size, --pg-storage: one run
    /// each, see scripts/variants.sh) side by side: each layout's p50, p99, load MB/s
    /// and bytes on disk as a ratio to the engine's default layout, a table per engine;
    /// first, a chart per size of each engine's p50 and p99 per layout.
    Variants(VariantsArgs),
    /// One run and report from runs made apart: the shares of a split run
    /// (`--share i/n` on each machine), or the same cells measured at different
    /// times. A cell measured in several runs is one cell of all their fetches (exact
    /// histograms added); one measured on other data or under another cap is refused,
    /// saying what differs. Every cell names the run, machine and cap it came from.
    Merge(MergeArgs),
    /// Did it get slower, beyond noise? Runs compared cell by cell with the first (the
    /// baseline): p50 and p99 with their intervals, an engine's p50 judged against its
    /// own run's floor (what stays when the disk moved). Runs measured on another
    /// dataset, layout, workload, cap, disk cap, deployment, machine or engine version
    /// are refused unless --vary names the difference that is the point.
    Compare(CompareArgs),
    /// One static page from many runs (machines, deployments, dates): each engine's
    /// p50 and p99 per size beside its own run's floor, a score normalised by that floor,
    /// filters by machine, deployment and date, every run's failures, each figure linked
    /// to its run's report. No server: a folder to publish.
    Site(SiteArgs),
    /// Write the tables of README.md and docs/ that come from results (each between a
    /// `<!-- table KIND results=... -->` marker and `<!-- /table -->`: verdict, engines,
    /// sizes, side-by-side), or with --check fail naming each that no longer matches.
    /// --add-run keeps a run's results (without histograms) for a page to cite.
    Tables(super::tables::TablesArgs),
}

#[derive(clap::Args)]
pub struct EnvArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Print only the disk cap (--disk-cap) as a compose service's `blkio_config` on
    /// DEVICE, the whole disk under Docker's root on its host (`/dev/vda`), and stop:
    /// what scripts/compose-run.sh gives every container of a capped run, since Docker
    /// sets a container's disk limits only when it creates it.
    #[arg(long, value_name = "DEVICE")]
    pub compose_blkio: Option<String>,
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// Run ids (directories under the results directory) or run directories.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    /// Where the runs are stored; the merged run is written here as a run of its own.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: std::path::PathBuf,
}

#[derive(clap::Args)]
pub struct VariantsArgs {
    /// Run ids (directories under the results directory) or run directories, one per
    /// layout; include a run of the default layout for the ratios.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    /// Where runs are stored; the page goes to `<results-dir>/variants-<id>/`.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: std::path::PathBuf,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Run ids (directories under the results directory) or run directories: the
    /// baseline first, then each run to compare with it.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    /// The difference between the runs that is the point of the comparison; any other
    /// is refused. Repeat it for several.
    #[arg(long, value_name = "DIMENSION", value_parser = crate::records::comparable::DIMENSIONS.map(|(name, _)| name))]
    pub vary: Vec<String>,
    /// Exit non-zero (1), naming them, where cells got slower beyond noise by more
    /// than this, e.g. "10%".
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub fail_on_regression: Option<f64>,
    /// Exit non-zero (1) where a p50 or p99 cell could not be judged (too few fetches
    /// or too short a measurement for an interval), naming each with its raw ratio.
    /// Without it such cells are listed, those slower by more than the threshold by
    /// their raw figures first, and the gate passes over them.
    #[arg(long)]
    pub fail_on_unjudged: bool,
    /// Where runs are stored.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: std::path::PathBuf,
}

#[derive(clap::Args)]
pub struct SiteArgs {
    /// Run directories (holding results.json), or results directories holding runs.
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<std::path::PathBuf>,
    /// Where the page goes (`<out>/index.html`); it links to each run's report where it
    /// is, so publish the folder that holds both.
    #[arg(long, default_value = "site")]
    pub out: std::path::PathBuf,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    /// Run id (a directory under the results directory). Default: the newest run.
    #[arg(long)]
    pub run: Option<String>,
    /// An earlier run to compare with: ratio per engine, size and percentile.
    #[arg(long)]
    pub baseline: Option<String>,
    /// Latency target of the verdict (largest size whose p99 meets it). Default: the run's own.
    #[arg(long, value_parser = parse_duration)]
    pub target_p99: Option<std::time::Duration>,
    /// In a comparison, ratios within 1 ± this are noise, e.g. "10%".
    #[arg(long, value_parser = parse_percent, default_value = "10%")]
    pub noise: f64,
    /// Where runs are stored.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: std::path::PathBuf,
}
