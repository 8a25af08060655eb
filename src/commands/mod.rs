//! What each `blobrace` subcommand does, over the library's layers below; the binary
//! (src/main.rs) only parses the command line and says how it ended.

pub mod cli;
mod compare;
mod env;
mod load;
mod stored;
pub mod tables;

use anyhow::{Context, Result};

use crate::config::{Mode, RunConfig};
use crate::run::Run;
use crate::run::drive::{FixedTime, measure_all};
use crate::run::reachable_engines;
use cli::{Command, EnvArgs};

/// Run one subcommand to its end.
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Load(args) => load::load(serves_no_metrics(args.resolve()?, "load")?),
        Command::Measure(args) => measure_or_plan(args.run.resolve()?, args.dry_run),
        Command::Saturate(args) => {
            let mut config = args.run.resolve()?;
            config.mode = Mode::Saturate;
            measure_or_plan(config, args.dry_run)
        }
        Command::Verify(args) => {
            let mut config = serves_no_metrics(args.resolve()?, "verify")?;
            let mut disk = data_disk(&mut config)?;
            let rt = runtime()?;
            rt.block_on(reachable_engines(&mut config))?;
            rt.block_on(servers_onto(&mut disk, &config));
            rt.block_on(crate::load::verify::verify(&config))
        }
        Command::Drop(args) => {
            let mut config = serves_no_metrics(args.resolve()?, "drop")?;
            let mut disk = data_disk(&mut config)?;
            let rt = runtime()?;
            // Default engines whose server is not up have nothing here to drop.
            rt.block_on(reachable_engines(&mut config))?;
            rt.block_on(servers_onto(&mut disk, &config));
            rt.block_on(crate::load::drop::drop_datasets(&config))
        }
        Command::Report(args) => stored::report(args),
        Command::Variants(args) => stored::variants(args),
        Command::Merge(args) => stored::merge(args),
        Command::Compare(args) => compare::compare(args),
        Command::Tables(args) => tables::tables(args),
        Command::Site(args) => {
            let runs = crate::report::site::find_runs(&args.dirs)?;
            let site = crate::report::site::write(&runs, &args.out)?;
            say!(
                "site: {} ({} runs, {} figures)",
                site.index.display(),
                site.runs,
                site.rows
            );
            Ok(())
        }
        Command::Env(EnvArgs {
            compose_blkio: Some(device),
            run,
        }) => env::compose_blkio(&run.resolve()?, device),
        Command::Env(EnvArgs { run, .. }) => {
            let mut config = run.resolve()?;
            // A look, not a run: a disk another run has is refused at once, not waited for.
            let no_wait = std::mem::replace(&mut config.no_wait, true);
            let mut disk = data_disk(&mut config)?;
            config.no_wait = no_wait;
            if disk.is_some() {
                runtime()?.block_on(async {
                    let mut reached = config.clone();
                    reachable_engines(&mut reached).await?;
                    servers_onto(&mut disk, &reached).await;
                    anyhow::Ok(())
                })?;
            }
            env::env(&config)
        }
    }
}

/// The data's disk as a run with the same flags has it: with `--disk-latency` (or a
/// `--deployment` that has one), the emulated disk mounted and the data directory moved
/// onto it, so that `load`, `verify`, `drop` and `env` work on the datasets that run
/// reads, not on a directory it never reads. Before the cap: its processes are the
/// disk's, not this one's. Taken down when dropped.
fn data_disk(config: &mut RunConfig) -> Result<Option<crate::deploy::slow_disk::SlowDisk>> {
    crate::run::slow_disk::attach(config)
}

/// The local servers' volumes onto the emulated disk, once they are reached.
async fn servers_onto(disk: &mut Option<crate::deploy::slow_disk::SlowDisk>, config: &RunConfig) {
    if let Some(disk) = disk.as_mut() {
        crate::run::slow_disk::hold_servers(disk, config).await;
    }
}

/// `--metrics-addr` promises a scrape endpoint, which only a run (measure, saturate,
/// `cargo bench`) serves: refused where the command serves none, not ignored.
fn serves_no_metrics(config: RunConfig, command: &str) -> Result<RunConfig> {
    match config.metrics_addr {
        Some(addr) => Err(crate::error::InputError::Value {
            what: "--metrics-addr (BLOBRACE_METRICS_ADDR)",
            input: addr.to_string(),
            why: format!(
                "`blobrace {command}` serves no metrics: a run's progress is served by `blobrace measure`, `blobrace saturate` and `cargo bench`; leave it out (unset BLOBRACE_METRICS_ADDR)"
            ),
        }
        .into()),
        None => Ok(config),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `--dry-run`: the plan, nothing run; else the run, its cells timed for a fixed time
/// (criterion's plan is `cargo bench`'s).
fn measure_or_plan(config: RunConfig, dry_run: bool) -> Result<()> {
    if dry_run {
        return crate::run::dry_run::dry_run(config);
    }
    let mut driver = FixedTime {
        warm_up: config.warmup,
        measure: config.measure,
        min_fetches: config.min_fetches,
        precision: config.precision_goal(),
    };
    let starting = Run::start(config, "blobrace measure")?;
    let rt = runtime()?;
    let mut run = rt.block_on(starting.settle())?;
    rt.block_on(run.load())?;
    measure_all(&mut run, &rt, &mut driver)?;
    run.finish()?;
    Ok(())
}
