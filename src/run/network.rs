//! The run's network between its engines and their servers (`--network-rtt`,
//! `deploy::network`): the proxy started with the run, before any work (a missing
//! program refuses the run in one line), and each server routed through it once the
//! servers are known and fitted to the cap.

use anyhow::Result;

use crate::config::RunConfig;
use crate::deploy::network::{self, LatencyProxy, NetworkReport};
use crate::error::InputError;

/// Start the proxy where a round trip is asked. On the thread that runs the run: the
/// proxy dies with it.
pub fn start(config: &RunConfig) -> Result<Option<LatencyProxy>> {
    let Some(rtt) = config.network_rtt else {
        return Ok(None);
    };
    LatencyProxy::start().map(Some).map_err(|why| {
        InputError::Value {
            what: "network round trip",
            input: rtt.to_string(),
            why,
        }
        .into()
    })
}

/// Route every server of the run through the proxy: its engines (and the round
/// trip measured beside each result) fetch through it from here on. What it did,
/// for the record; None without a round trip asked.
pub(super) fn route_servers(
    proxy: Option<&LatencyProxy>,
    config: &mut RunConfig,
) -> Result<Option<NetworkReport>> {
    let (Some(proxy), Some(rtt)) = (proxy, config.network_rtt) else {
        return Ok(None);
    };
    let mut report = NetworkReport {
        asked: rtt,
        proxy: proxy.version.clone(),
        servers: Vec::new(),
    };
    for store in super::stores_for(&config.engines) {
        let Some(server) = store.server() else {
            continue;
        };
        let Some(url) = config.server_urls.get(&server).cloned() else {
            continue;
        };
        let fail = |why: String| InputError::Value {
            what: "network round trip",
            input: rtt.to_string(),
            why: format!("{}: {why}", server.name()),
        };
        let upstream = network::host_port(&url)
            .ok_or_else(|| fail("its URL names no host to proxy".into()))?;
        let proxied = proxy.add(server.name(), &upstream, rtt).map_err(fail)?;
        let through = network::through(&url, &proxied.listen)
            .ok_or_else(|| fail("its URL names no host to proxy".into()))?;
        config.fetch_urls.insert(server, through);
        report.servers.push(proxied);
    }
    say!("{}", report.label());
    for s in &report.servers {
        say!(
            "network: {} through {} → {} ({})",
            s.server,
            s.listen,
            s.upstream,
            s.toxics
        );
    }
    Ok(Some(report))
}
