//! The run's data directory on a disk that answers in milliseconds (`--disk-latency`,
//! `deploy::slow_disk`): mounted before the cap and before anything is read, the run's
//! data directory moved onto it, taken down when the run ends. Where it cannot be had
//! the run is refused in one line before any work.

use anyhow::Result;

use crate::config::RunConfig;
use crate::deploy::slow_disk::SlowDisk;
use crate::error::InputError;

/// Mount the emulated disk and move the run's data directory onto it.
pub fn attach(config: &mut RunConfig) -> Result<Option<SlowDisk>> {
    let Some(latency) = config.disk_latency else {
        return Ok(None);
    };
    let mut disk = SlowDisk::attach(&config.data_dir, latency).map_err(|why| {
        anyhow::Error::from(InputError::Value {
            what: "disk latency",
            input: latency.to_string(),
            why,
        })
    })?;
    config.data_dir = disk.report.mount.clone();
    if config.engines.iter().any(|e| e.store().server().is_some()) {
        disk.report.notes.push(
            "the servers' volumes stay on the machine's own disk: their reads are not delayed (not controlled)".into(),
        );
    }
    say!("{}", disk.report.label());
    for note in &disk.report.notes {
        say!("disk latency: {note}");
    }
    Ok(Some(disk))
}
