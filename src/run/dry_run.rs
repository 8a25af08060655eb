//! `--dry-run`: a run's plan and its time, loads included, with nothing capped,
//! loaded or written. Its own file: it stands on the plan, the loads' outlook and the
//! resume record, which know nothing of it.

use crate::config::RunConfig;

/// `--dry-run` (`BLOBRACE_DRY_RUN` for `cargo bench`): the plan and its time, nothing
/// loaded or written. The engines the run would leave out are left out here too, saying
/// why (a store this machine lacks, a server that does not answer, one over the cap):
/// the dry run listed cells of engines the real run then dropped.
pub fn dry_run(mut config: RunConfig) -> anyhow::Result<()> {
    use anyhow::Context;
    super::leave_out_servers_over_cap(&mut config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(super::reachable_engines(&mut config))?;
    crate::say::show_text(&super::plan::Plan::of(&config).describe(&config));
    // The loads left, estimated as the run will at its start: from the loads recorded
    // in the results directory, else each store's own figures.
    let earlier_runs = super::resume::earlier_runs(&config.results_dir);
    let rates = super::resume::LoadRates::of(&earlier_runs);
    let key = super::resume::resume_key(&config);
    let earlier = super::resume::to_continue(&config, &key, earlier_runs);
    let is_done = |cell: &_| earlier.as_ref().is_some_and(|e| e.is_done(cell));
    let outlook = runtime.block_on(super::loading::outlook(&config, is_done, &rates));
    for line in outlook.lines().iter().skip(1) {
        show!("{line}");
    }
    if let Some(earlier) = &earlier {
        show!("{}", super::resume::continue_line(earlier));
    }
    Ok(())
}
