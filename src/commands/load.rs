//! `blobrace load`: every dataset the run's engines need, under the run's cap.

use anyhow::{Result, bail};

use crate::config::RunConfig;
use crate::db::registry::stores_for;
use crate::load::{LoadOutcome, Wanted, ensure_loaded};
use crate::run::{apply_cap, fit_servers, reachable_engines};

pub(super) fn load(mut config: RunConfig) -> Result<()> {
    // Where a run with these flags reads: the emulated disk, with --disk-latency.
    let mut disk = super::data_disk(&mut config)?;
    // The loader runs under the cap too: pages it caches are charged to it.
    let (_cap, _guard) = apply_cap(&config)?;
    let rt = super::runtime()?;
    rt.block_on(reachable_engines(&mut config))?;
    rt.block_on(super::servers_onto(&mut disk, &config));
    refuse_in_ram(&config, &rt)?;
    // Put back to their own caps when the load ends (dropped), however it ends.
    let _server_caps = rt.block_on(fit_servers(&mut config))?;
    let (reports, failed) = rt.block_on(ensure_loaded(
        &config.locations(),
        (
            &stores_for(&config.engines),
            &config.datasets(),
            Wanted::Every,
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

/// A data directory in RAM the loads would overflow the cap with: refused as `measure`
/// refuses it (`Rooms::check_in_ram`), not killed inside its own cap.
fn refuse_in_ram(config: &RunConfig, rt: &tokio::runtime::Runtime) -> Result<()> {
    let stores = stores_for(&config.engines);
    let datasets = config.datasets();
    let (_, rooms) = rt.block_on(crate::load::rooms_of(
        &config.locations(),
        &stores,
        &datasets,
        Wanted::Every,
    ))?;
    let (filesystem, _) = crate::machine::filesystem_of(&config.data_dir);
    Ok(rooms.check_in_ram(
        &filesystem,
        config.process_cap().memory_bytes,
        crate::config::MIN_CAP_BYTES,
        (&config.data_dir, false, datasets.len()),
    )?)
}
