//! `blobrace`: load datasets, measure without criterion, verify, drop, inspect.
//! The main job is `cargo bench` (benches/fetch.rs); this binary shares its knobs.

// Every line shown goes through the one terminal writer (say.rs): `say!`, `show!`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use blobrace::config::{RunArgs, RunConfig, parse_args, parse_duration, parse_percent};
use blobrace::dataset::DatasetState;
use blobrace::dataset::lock::{Access, release, take};
use blobrace::db::registry::stores_for;
use blobrace::db::server::{COMPOSE_UP, Server};
use blobrace::error::InputError;
use blobrace::load::{LoadOutcome, ensure_loaded};
use blobrace::machine::MachineFacts;
use blobrace::run::drive::{FixedTime, measure_all};
use blobrace::run::{Run, apply_cap, fit_servers, print_cap, reachable_engines};
use blobrace::{say, show};

#[derive(Parser)]
#[command(
    name = "blobrace",
    version,
    about = "How fast can I fetch a blob of size S from database E when the database has far less RAM than data?",
    long_about = "How fast can I fetch a blob of size S from database E when the database has far less RAM than data?\n\n\
Each size class is a dataset of uniformly random blobs (ids 1..N, 3GiB by default, three times the 1GiB cap). \
A fetch is one random-id read of one whole blob, timed alone. The main job is `cargo bench` (criterion); \
this tool loads, measures without criterion, verifies and drops datasets with the same settings. \
Every flag can also be set through the BLOBRACE_* environment variable named in its help.",
    after_help = "Examples:\n  blobrace load --profile quick\n  blobrace measure --engines sqlite,floor --sizes 64KiB --dataset-bytes 512MiB --cap 128MiB\n  blobrace measure --clients 1,4,16,64 --sizes 64KiB,4MiB\n  blobrace measure --clients 16 --rate 500,1000 --arrivals poisson\n  blobrace saturate --clients 16 --sizes 64KiB\n  blobrace verify --profile quick\n  blobrace report                      # the newest run\n  blobrace report --baseline 20261122-101500-4242\n  blobrace env"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// A run's flags, and whether to only print its plan.
#[derive(clap::Args)]
struct MeasureArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Print the run's plan and stop: every cell (size, repeat, engine, cache state,
    /// what it measures) and the time the presets give it, then the total. Nothing is
    /// capped, loaded or measured. `cargo bench` takes BLOBRACE_DRY_RUN=1.
    #[arg(long, env = "BLOBRACE_DRY_RUN", value_parser = clap::builder::BoolishValueParser::new())]
    dry_run: bool,
}

#[derive(Subcommand)]
enum Command {
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
    /// and bytes on disk as a ratio to the engine's default layout, a table per engine
    /// and a chart per size.
    Variants(VariantsArgs),
    /// One run and report from runs made apart: the shares of a split run
    /// (`--share i/n` on each machine), or the same cells measured at different
    /// times. A cell measured in several runs is one cell of all their fetches (exact
    /// histograms added); one measured on other data or under another cap is refused,
    /// saying what differs. Every cell names the run, machine and cap it came from.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
struct EnvArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Print only the disk cap (--disk-cap) as a compose service's `blkio_config` on
    /// DEVICE, the whole disk under Docker's root on its host (`/dev/vda`), and stop:
    /// what scripts/compose-run.sh gives every container of a capped run, since Docker
    /// sets a container's disk limits only when it creates it.
    #[arg(long, value_name = "DEVICE")]
    compose_blkio: Option<String>,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// Run ids (directories under the results directory) or run directories.
    #[arg(required = true, num_args = 2..)]
    runs: Vec<String>,
    /// Where the runs are stored; the merged run is written here as a run of its own.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    results_dir: std::path::PathBuf,
}

#[derive(clap::Args)]
struct VariantsArgs {
    /// Run ids (directories under the results directory) or run directories, one per
    /// layout; include a run of the default layout for the ratios.
    #[arg(required = true, num_args = 2..)]
    runs: Vec<String>,
    /// Where runs are stored; the page goes to `<results-dir>/variants-<id>/`.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    results_dir: std::path::PathBuf,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Run id (a directory under the results directory). Default: the newest run.
    #[arg(long)]
    run: Option<String>,
    /// An earlier run to compare with: ratio per engine, size and percentile.
    #[arg(long)]
    baseline: Option<String>,
    /// Latency target of the verdict (largest size whose p99 meets it). Default: the run's own.
    #[arg(long, value_parser = parse_duration)]
    target_p99: Option<std::time::Duration>,
    /// In a comparison, ratios within 1 ± this are noise, e.g. "10%".
    #[arg(long, value_parser = parse_percent, default_value = "10%")]
    noise: f64,
    /// Where runs are stored.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    results_dir: std::path::PathBuf,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Output to a pipe its reader closed (`blobrace env | head -n 1`) ends the process
/// quietly, as a tool killed by SIGPIPE does (exit 141), not with a panic and a
/// backtrace. SIGPIPE itself stays ignored (Rust's default): a server closing a socket
/// must be an error the run handles, not a silent death.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if payload.starts_with("failed printing to std") && payload.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = match parse_args::<Cli>(std::env::args_os()) {
        Ok(cli) => cli,
        Err(line) => {
            say!("{line}");
            return ExitCode::from(2);
        }
    };
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            say!("Error: {err:#}");
            if err.downcast_ref::<InputError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Load(args) => {
            let mut config = args.resolve()?;
            // The loader runs under the cap too: pages it caches are charged to it.
            let (_cap, _guard) = apply_cap(&config)?;
            let rt = runtime()?;
            rt.block_on(reachable_engines(&mut config))?;
            // Put back to their own caps when the load ends (dropped), however it ends.
            let _server_caps = rt.block_on(fit_servers(&mut config))?;
            let (reports, failed) = rt.block_on(ensure_loaded(
                &config.locations(),
                (
                    &stores_for(&config.engines),
                    &config.datasets(),
                    blobrace::load::Wanted::Every,
                ),
                config.fail_fast,
                |_| Ok(()),
            ))?;
            let loaded = reports
                .iter()
                .filter(|r| r.outcome != LoadOutcome::AlreadyLoaded)
                .count();
            say!(
                "{loaded} dataset(s) loaded, {} already complete",
                reports.len() - loaded
            );
            if !failed.is_empty() {
                let what: Vec<String> = failed
                    .iter()
                    .map(|f| format!("{} {}", f.store.name(), f.spec.size))
                    .collect();
                bail!(
                    "{} load(s) failed (the reasons are above): {}; fix each reason; a load cut short (killed, a server gone, a full disk) is resumed, or loaded afresh where it was removed, by the same command again",
                    failed.len(),
                    what.join(", ")
                );
            }
            Ok(())
        }
        Command::Measure(args) => {
            let config = args.run.resolve()?;
            measure_or_plan(config, args.dry_run)
        }
        Command::Saturate(args) => {
            let mut config = args.run.resolve()?;
            config.mode = blobrace::config::Mode::Saturate;
            measure_or_plan(config, args.dry_run)
        }
        Command::Verify(args) => {
            let mut config = args.resolve()?;
            runtime()?.block_on(reachable_engines(&mut config))?;
            verify(config)
        }
        Command::Drop(args) => {
            let mut config = args.resolve()?;
            // Default engines whose server is not up have nothing here to drop.
            runtime()?.block_on(reachable_engines(&mut config))?;
            runtime()?.block_on(drop_datasets(&config))
        }
        Command::Report(args) => report(args),
        Command::Variants(args) => variants(args),
        Command::Merge(args) => merge(args),
        Command::Env(EnvArgs {
            compose_blkio: Some(device),
            run,
        }) => {
            let config = run.resolve()?;
            let Some(disk) = &config.disk_cap else {
                anyhow::bail!(blobrace::error::InputError::Value {
                    what: "--compose-blkio",
                    input: device,
                    why: "it prints the disk cap, and none is asked: give --disk-cap (BLOBRACE_DISK_CAP)".into(),
                });
            };
            show!(
                "{}",
                blobrace::cap::docker_blkio::compose_blkio(&disk.limits, &device).trim_end()
            );
            Ok(())
        }
        Command::Env(EnvArgs { run: args, .. }) => {
            let config = args.resolve()?;
            // Shows what is in force even when the asked-for cap cannot be had, then fails.
            let scope_disk = config
                .disk_cap
                .as_ref()
                .and_then(|d| blobrace::cap::disk::ScopeDisk::of(d, &config.data_dir));
            let (cap, _guard, unavailable) =
                match blobrace::cap::apply(config.cap, scope_disk.as_ref()) {
                    Ok((mut cap, mut guard)) => {
                        if let Some(disk) = &config.disk_cap {
                            blobrace::cap::apply_disk(&mut cap, &mut guard, disk, &config.data_dir);
                        }
                        (cap, Some(guard), None)
                    }
                    Err(e) => (*e.report.clone(), None, Some(e)),
                };
            print_cap(&cap);
            let machine = MachineFacts::collect(&config.data_dir);
            let servers = runtime()?.block_on(server_caps(&config));
            show!(
                "{}",
                serde_json::to_string_pretty(
                    &serde_json::json!({ "cap": cap, "machine": machine, "servers": servers })
                )?
            );
            runtime()?.block_on(async {
                // A server that does not answer is said once, not once per size.
                let mut stores = stores_for(&config.engines);
                let at = config.locations();
                let mut down = Vec::new();
                for kind in &stores {
                    if let Some(server) = kind.server() {
                        let answers = match server.require_url(at.server_url(server)) {
                            Ok(url) => server.probe(&url).await,
                            Err(e) => Err(e),
                        };
                        if let Err(e) = answers {
                            show!("{:<7} not reachable: {e:#}", kind.name());
                            down.push(*kind);
                        }
                    }
                }
                stores.retain(|k| !down.contains(k));
                for spec in config.datasets() {
                    for &kind in &stores {
                        let mut store = kind.open(&config.locations(), spec);
                        let state = match blobrace::load::state_at_a_glance(&mut store).await {
                            Ok(s) => format!("{s:?}"),
                            Err(e) => format!("error: {e:#}"),
                        };
                        show!(
                            "{:<7} {:>7} {:<60} {state}",
                            kind.name(),
                            spec.size.to_string(),
                            store.location().display()
                        );
                    }
                }
                // Everything loaded, whatever flags loaded it: what there is to drop.
                let down: Vec<Server> = down.iter().filter_map(|k| k.server()).collect();
                let inventory = blobrace::load::inventory::take(&at, &down).await;
                show!("datasets on disk (all sizes, rows and layouts found):");
                for line in inventory.lines() {
                    show!("  {line}");
                }
                anyhow::Ok(())
            })?;
            match unavailable {
                Some(e) => Err(InputError::from(e).into()),
                None => Ok(()),
            }
        }
    }
}

/// Per server: the cap Docker enforces on its container, or why it is unknown.
async fn server_caps(config: &RunConfig) -> serde_json::Value {
    let mut servers = serde_json::Map::new();
    let at = config.locations();
    for server in Server::all() {
        if let Some(url) = at.server_url(server)
            && let blobrace::db::server::place::Place::Remote { why } =
                blobrace::db::server::place::locate(server, url).await
        {
            servers.insert(
                server.name().to_string(),
                serde_json::json!(format!("not controlled: remote ({why})")),
            );
            continue;
        }
        let value = match blobrace::docker::service_cap(server.name(), config.cap).await {
            Ok(Some(cap)) => serde_json::to_value(cap).unwrap_or_default(),
            Ok(None) => serde_json::json!(format!("not running: start it with `{COMPOSE_UP}`")),
            Err(e) => serde_json::json!(format!("unavailable: {e:#}")),
        };
        servers.insert(server.name().to_string(), value);
    }
    servers.into()
}

fn report(args: ReportArgs) -> Result<()> {
    use blobrace::report::{self, ReportOptions};
    let noise = args.noise;
    let run_dir = report::run_dir(&args.results_dir, args.run.as_deref())?;
    let run = report::load_run(&run_dir)?;
    let target_p99 = args.target_p99.unwrap_or(run.config.target_p99);
    let baseline = args
        .baseline
        .as_deref()
        .map(|id| report::run_dir(&args.results_dir, Some(id)))
        .transpose()?;
    let options = ReportOptions { target_p99, noise };
    if let Some(dir) = &baseline {
        let baseline = report::load_run(dir)?;
        for cache in run.caches() {
            let comparison = report::compare::Comparison::of(&baseline, &run, cache, noise);
            blobrace::say::show_text(&comparison.table());
        }
    }
    let rendered = report::render(&run_dir, baseline.as_deref(), &options).with_context(|| {
        format!(
            "the report of {} is not finished (its results are untouched, and each file is whole or not written): fix the cause below and run this command again",
            run_dir.display()
        )
    })?;
    say!("{}", rendered.line());
    Ok(())
}

fn merge(args: MergeArgs) -> Result<()> {
    use blobrace::records::merge;
    use blobrace::report;
    let runs = merge::read_runs(&args.runs, &args.results_dir)?;
    let merged = merge::merge(runs, &args.results_dir)?;
    let dir = merged.write()?;
    for (id, cells) in merge::cells_by_run(&merged) {
        say!("merged: {cells} one-client result(s) from run {id}");
    }
    let options = report::ReportOptions {
        target_p99: merged.config.target_p99,
        noise: 0.10,
    };
    let rendered = report::render(&dir, None, &options)?;
    say!("{}", rendered.line());
    Ok(())
}

fn variants(args: VariantsArgs) -> Result<()> {
    use blobrace::report;
    let runs = args
        .runs
        .iter()
        .map(|id| {
            let dir = std::path::Path::new(id);
            let dir = if dir.join("results.json").exists() {
                dir.to_path_buf()
            } else {
                report::run_dir(&args.results_dir, Some(id))?
            };
            report::load_run(&dir)
        })
        .collect::<Result<Vec<_>>>()?;
    let dir = args.results_dir.join(format!(
        "variants-{}",
        blobrace::records::results::new_run_id()
    ));
    let written = report::variants::write(&runs, &dir)?;
    say!(
        "variants: {} ({} rows, {} charts)",
        written.index.display(),
        written.rows,
        written.charts
    );
    Ok(())
}

/// `--dry-run`: the plan, nothing run; else the run.
fn measure_or_plan(config: RunConfig, dry_run: bool) -> Result<()> {
    if dry_run {
        return blobrace::run::plan::dry_run(config);
    }
    measure(config)
}

fn measure(config: RunConfig) -> Result<()> {
    let mut driver = FixedTime {
        warm_up: config.warmup,
        measure: config.measure,
        min_fetches: config.min_fetches,
        precision: config.precision_goal(),
    };
    let mut run = Run::start(config, "blobrace measure")?;
    let rt = runtime()?;
    rt.block_on(run.load())?;
    measure_all(&mut run, &rt, &mut driver)?;
    run.finish()?;
    Ok(())
}

/// Remove every dataset of `config`'s engines that is there, each said on its own line
/// (removed, not there, or why it could not be), then one line for the whole: Err when
/// any could not be removed. One store that fails does not keep the others.
async fn drop_datasets(config: &RunConfig) -> Result<()> {
    let (mut removed, mut absent, mut failed) = (0, 0, Vec::new());
    let at = config.locations();
    for spec in config.datasets() {
        for kind in stores_for(&config.engines) {
            let mut store = kind.open(&at, spec);
            let location = store.location().display().to_string();
            let dropped = async {
                take(store.location(), Access::Write, "dropping", at.lock_waiting)?;
                // A dataset of other settings, or one changed since, is still blobrace's
                // own at this place: what a drop with these flags is asked to remove.
                let there = match store.state().await {
                    Ok(state) => state != DatasetState::Absent,
                    Err(e)
                        if matches!(
                            e.downcast_ref::<InputError>(),
                            Some(
                                InputError::DatasetMismatch { .. }
                                    | InputError::DatasetDamaged { .. }
                            )
                        ) =>
                    {
                        true
                    }
                    // Files at the dataset's own place that its store cannot recognise
                    // (a header overwritten, or not blobrace's): named, and removed as
                    // asked, so a damaged dataset can always go.
                    Err(e) => match e.downcast_ref::<InputError>() {
                        Some(InputError::ForeignFile { path, why }) => {
                            say!(
                                "{}: {why}, damaged or not blobrace's; it is at this dataset's place, so it goes as drop was asked",
                                path.display()
                            );
                            true
                        }
                        _ => return Err(e),
                    },
                };
                if there {
                    store.remove().await?;
                }
                let aside = store.remove_leftovers().await?;
                release(store.location());
                anyhow::Ok((there, aside))
            }
            .await;
            match dropped {
                Ok((there, aside)) => {
                    if let Some(aside) = aside {
                        say!("removed {} (an earlier drop cut short)", aside.display());
                    }
                    if there {
                        say!("removed {location}");
                        removed += 1;
                    } else {
                        say!("not there: {location}");
                        absent += 1;
                    }
                }
                Err(e) => {
                    say!("cannot remove {location}: {e:#}");
                    failed.push(location);
                }
            }
        }
    }
    let whole = format!(
        "{removed} dataset(s) removed, {absent} not there, {} could not be removed",
        failed.len()
    );
    if !failed.is_empty() {
        bail!("{whole} (the reasons are above): {}", failed.join(", "));
    }
    say!("{whole}");
    Ok(())
}

fn verify(config: RunConfig) -> Result<()> {
    runtime()?.block_on(blobrace::load::verify::verify(&config))
}
