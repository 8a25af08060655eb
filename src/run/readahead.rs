//! The run's readahead (`--readahead`, `cap::readahead`): held on the data directory's
//! disk from before anything is read to the run's end, and on the disks of the servers'
//! volumes once they are known (`hold_servers`). A value asked for that cannot be set
//! refuses the run before any work; the default is said and recorded.

use std::path::Path;

use anyhow::Result;

use crate::cap::disk::BlockDevice;
use crate::cap::readahead::{self, DeviceReadahead, Hold, Readahead, ReadaheadReport};
use crate::config::RunConfig;
use crate::error::InputError;

/// Hold the data directory's disk at the asked readahead.
pub fn hold(config: &RunConfig) -> Result<(ReadaheadReport, Vec<Hold>)> {
    let mut report = ReadaheadReport {
        asked: config.readahead,
        devices: Vec::new(),
        notes: Vec::new(),
    };
    let mut holds = Vec::new();
    match crate::cap::disk::block_device(&config.data_dir, Path::new("/sys")) {
        Ok(device) => {
            hold_one(config, &device, "data directory", &mut report, &mut holds)?;
        }
        Err(why) => {
            let why = format!("no disk under the data directory: {why}");
            refuse_if_asked(config, &why)?;
            report.notes.push(why);
        }
    }
    say!("{}", report.label());
    for note in &report.notes {
        say!("readahead: {note}");
    }
    Ok((report, holds))
}

/// The servers' volumes (`(what, device)`), each disk held once: most share the data
/// directory's.
pub fn hold_servers(
    config: &RunConfig,
    volumes: &[(String, BlockDevice)],
    report: &mut ReadaheadReport,
    holds: &mut Vec<Hold>,
) -> Result<()> {
    for (what, device) in volumes {
        let label = format!("{} ({})", device.name, device.major_minor);
        if let Some(known) = report.devices.iter_mut().find(|d| d.device == label) {
            known.holds.push(what.clone());
            continue;
        }
        hold_one(config, device, what, report, holds)?;
        if let Some(d) = report.devices.last() {
            say!("readahead of {what}'s disk: {}", device_line(d));
        }
    }
    Ok(())
}

fn hold_one(
    config: &RunConfig,
    device: &BlockDevice,
    what: &str,
    report: &mut ReadaheadReport,
    holds: &mut Vec<Hold>,
) -> Result<()> {
    let (mut found, hold, notes) = readahead::hold(
        config.readahead,
        device,
        Path::new("/sys"),
        &readahead::state_dir(),
    )
    .map_err(|why| refusal(config, why))?;
    if let Some(why) = &found.why_not {
        refuse_if_asked(config, why)?;
    }
    found.holds.push(what.into());
    report.devices.push(found);
    report.notes.extend(notes);
    holds.extend(hold);
    Ok(())
}

fn device_line(d: &DeviceReadahead) -> String {
    let kb = |v: Option<u64>| v.map_or("unavailable".into(), |k| format!("{k} KiB"));
    match &d.why_not {
        Some(why) => format!("{} {} (not set: {why})", d.device, kb(d.in_force_kb)),
        None => format!("{} {}", d.device, kb(d.in_force_kb)),
    }
}

fn refusal(config: &RunConfig, why: String) -> anyhow::Error {
    InputError::Value {
        what: "readahead",
        input: config.readahead.to_string(),
        why,
    }
    .into()
}

/// A value asked for by name that cannot be had stops the run; the default goes on,
/// said and recorded.
fn refuse_if_asked(config: &RunConfig, why: &str) -> Result<()> {
    if config.readahead_explicit && config.readahead != Readahead::Host {
        return Err(refusal(
            config,
            format!(
                "{why}. Run as root on the host, or measure at the disk's own with --readahead host"
            ),
        ));
    }
    Ok(())
}

/// The readahead on the disks of the servers' data volumes this process can see
/// (from inside a container it cannot: said), before anything is loaded or read;
/// what it did goes into `report`, what it set into `holds`.
pub(super) async fn hold_servers_readahead(
    config: &RunConfig,
    report: &mut ReadaheadReport,
    holds: &mut Vec<Hold>,
) -> Result<()> {
    let mut volumes = Vec::new();
    for store in super::stores_for(&config.engines) {
        let Some(server) = store.server() else {
            continue;
        };
        if config.places.remote(server).is_some() {
            continue; // Not a disk of this machine.
        }
        let what = format!("{}'s volume", server.name());
        match crate::server_caps::volume_device(server).await {
            Ok(device) => volumes.push((what, device)),
            Err(why) => {
                let note = format!("{what}: readahead not controlled ({why:#})");
                say!("readahead: {note}");
                report.notes.push(note);
            }
        }
    }
    hold_servers(config, &volumes, report, holds)
}
