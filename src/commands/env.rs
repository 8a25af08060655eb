//! `blobrace env`: the cap this process would run under, the machine, the servers'
//! caps, and every dataset's state; or only the disk cap as a compose `blkio_config`.

use anyhow::Result;

use crate::config::RunConfig;
use crate::db::registry::stores_for;
use crate::db::server::{COMPOSE_UP, Server};
use crate::error::InputError;
use crate::machine::MachineFacts;
use crate::run::print_cap;

/// `--compose-blkio DEVICE`: the disk cap as a compose service's `blkio_config`.
pub(super) fn compose_blkio(config: &RunConfig, device: String) -> Result<()> {
    let Some(disk) = &config.disk_cap else {
        anyhow::bail!(InputError::Value {
            what: "--compose-blkio",
            input: device,
            why: "it prints the disk cap, and none is asked: give --disk-cap (BLOBRACE_DISK_CAP)"
                .into(),
        });
    };
    show!(
        "{}",
        crate::cap::docker_blkio::compose_blkio(&disk.limits, &device).trim_end()
    );
    Ok(())
}

/// Shows what is in force even when the asked-for cap cannot be had, then fails.
pub(super) fn env(config: &RunConfig) -> Result<()> {
    let (cap, _guard, unavailable) = match crate::cap::apply_whole(
        config.process_cap(),
        config.disk_cap.as_ref(),
        &config.data_dir,
    ) {
        Ok((cap, guard)) => (cap, Some(guard), None),
        Err(e) => (*e.report.clone(), None, Some(e)),
    };
    print_cap(&cap);
    let machine = MachineFacts::collect(&config.data_dir);
    let servers = super::runtime()?.block_on(server_caps(config));
    show!(
        "{}",
        serde_json::to_string_pretty(
            &serde_json::json!({ "cap": cap, "machine": machine, "servers": servers })
        )?
    );
    super::runtime()?.block_on(datasets(config))?;
    match unavailable {
        Some(e) => Err(InputError::from(e).into()),
        None => Ok(()),
    }
}

/// Each dataset of the run's engines and sizes at a glance, then everything on disk.
async fn datasets(config: &RunConfig) -> Result<()> {
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
            let state = match crate::load::state_at_a_glance(&mut store).await {
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
    let inventory = crate::load::inventory::take(&at, &down).await;
    show!("datasets on disk (all sizes, rows and layouts found):");
    for line in inventory.lines() {
        show!("  {line}");
    }
    Ok(())
}

/// Per server: the cap Docker enforces on its container, or why it is unknown.
async fn server_caps(config: &RunConfig) -> serde_json::Value {
    let mut servers = serde_json::Map::new();
    let at = config.locations();
    let mut places = crate::db::server::place::Places::default();
    for server in Server::all() {
        if let Some(url) = at.server_url(server)
            && let crate::db::server::place::Place::Remote { why } =
                places.locate(server, url).await
        {
            let value = match places.remote_cap(server, config.cap) {
                Some(cap) => serde_json::to_value(cap).unwrap_or_default(),
                None => serde_json::json!(format!("not controlled: remote ({why})")),
            };
            servers.insert(server.name().to_string(), value);
            continue;
        }
        let value = match crate::docker::service_cap(server.name(), config.cap).await {
            Ok(Some(cap)) => serde_json::to_value(cap).unwrap_or_default(),
            Ok(None) => serde_json::json!(format!("not running: start it with `{COMPOSE_UP}`")),
            Err(e) => serde_json::json!(format!("unavailable: {e:#}")),
        };
        servers.insert(server.name().to_string(), value);
    }
    servers.into()
}
