//! What each `blobrace` subcommand does, over the library's layers below; the binary
//! (src/main.rs) only parses the command line and says how it ended.

pub mod cli;
mod compare;
mod env;
mod load;
mod stored;

use anyhow::{Context, Result};

use crate::config::{Mode, RunConfig};
use crate::run::Run;
use crate::run::drive::{FixedTime, measure_all};
use crate::run::reachable_engines;
use cli::{Command, EnvArgs};

/// Run one subcommand to its end.
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Load(args) => load::load(args.resolve()?),
        Command::Measure(args) => measure_or_plan(args.run.resolve()?, args.dry_run),
        Command::Saturate(args) => {
            let mut config = args.run.resolve()?;
            config.mode = Mode::Saturate;
            measure_or_plan(config, args.dry_run)
        }
        Command::Verify(args) => {
            let mut config = args.resolve()?;
            let rt = runtime()?;
            rt.block_on(reachable_engines(&mut config))?;
            rt.block_on(crate::load::verify::verify(&config))
        }
        Command::Drop(args) => {
            let mut config = args.resolve()?;
            let rt = runtime()?;
            // Default engines whose server is not up have nothing here to drop.
            rt.block_on(reachable_engines(&mut config))?;
            rt.block_on(crate::load::drop::drop_datasets(&config))
        }
        Command::Report(args) => stored::report(args),
        Command::Variants(args) => stored::variants(args),
        Command::Merge(args) => stored::merge(args),
        Command::Compare(args) => compare::compare(args),
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
        Command::Env(EnvArgs { run, .. }) => env::env(&run.resolve()?),
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
        return crate::run::plan::dry_run(config);
    }
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
