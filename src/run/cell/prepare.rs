//! One engine at one size made ready to measure: its cache emptied (cold) or filled
//! and settled (steady), opened, counters and probes attached; released after.

use anyhow::{Context, Result};

use crate::cap::{self, CapReport};
use crate::config::RunConfig;
use crate::dataset::DatasetSpec;
use crate::db::any_engine::AnyEngine;
use crate::db::registry::EngineKind;
use crate::disk::evict::EvictionReport;
use crate::disk::io::DiskReadCounter;
use crate::disk::probe::DiskProbe;
use crate::docker::container::ContainerWatch;
use crate::measure::FetchLoop;
use crate::records::results::{RunResults, Scenario};
use crate::size::format_bytes;
use crate::workload::steady::{
    AnyGauge, CacheGauge, CacheState, CgroupGauge, ServerGauge, SteadyReport,
};

use super::super::Progress;
use super::CellRun;

/// Files of a file-per-blob dataset the probe of its own bytes reads among, each once
/// before any again (a few files read over and over would be served by a device's
/// cache); opening them is not timed.
const OWN_FILES: usize = 4096;

/// One engine at one size class, ready to measure: opened cold, counters attached.
pub struct Prepared {
    pub fetch_loop: FetchLoop<AnyEngine>,
    pub(super) eviction: EvictionReport,
    pub(super) started_at: String,
    /// A server's container, sampled before the warm-up.
    pub(super) container: Option<ContainerWatch>,
    /// The disk probed before the warm-up (None: probing off).
    pub(super) disk_before: Option<Result<DiskProbe, String>>,
    pub scenario: Scenario,
    /// How steady state was reached (steady scenarios).
    pub(super) steady: Option<SteadyReport>,
    /// Since when the step's cgroup memory peaks count (`cap::start_step`).
    pub(super) memory_since: String,
    /// A dataset written while measured: its change counts (`live.rs`).
    pub(super) live: Option<std::sync::Arc<crate::workload::live::LiveCount>>,
    /// What the writer did during this measurement (`--write-rate` above 0).
    pub(super) writer: Option<crate::workload::live::WriterReport>,
    /// A server's round trip, timed before the warm-up (`round_trip`).
    pub(super) round_trip: Option<crate::db::server::round_trip::RoundTrip>,
}

impl Prepared {
    /// A failed fetch, with the reason when the server's container went down under it.
    pub async fn explain(&self, error: anyhow::Error) -> anyhow::Error {
        match &self.container {
            Some(watch) => watch.explain(error).await,
            None => error,
        }
    }
}

impl CellRun<'_> {
    /// Evict the engine's dataset from the page cache, open the engine on it, and
    /// attach the counters that see its storage reads. For a steady scenario, then
    /// prefill its cache and warm it up until the hit ratio is steady (`steady`).
    pub async fn prepare(&self) -> Result<Prepared> {
        let (engine, spec, scenario) = (self.engine, self.spec, self.scenario);
        let at = self.config().locations();
        // Pages of datasets measured earlier, and the dentries and inodes of files they
        // opened, are charged to this cgroup too and would shrink the cache left for
        // this engine. The store's eviction below drops this dataset's pages wherever
        // they are charged, but opens every file to do so (fs: one per blob), which
        // charges their dentries and inodes here: the cap is emptied after it, so a
        // cold cell starts with neither (fs at 1 KiB, 65,536 files: 88 MB of kernel
        // memory left by its eviction, 15 MB after emptying; 15 MB is this process's
        // own).
        let kernel_before = cap::cgroup_kernel_bytes(&self.run.cap);
        if scenario.repeat <= 1
            && let Some(pressure) = crate::records::fs_pressure::pressure(
                engine,
                spec.rows,
                spec.mean_blob_bytes(),
                self.run.cap.memory_limit_bytes,
            )
        {
            self.progress(Progress::MetadataPressure {
                engine,
                size: spec.size_label(),
                why: &crate::report::words::fs_pressure::why(&pressure),
            });
        }
        let mut store = engine.store().open(&at, spec);
        // A dataset written while measured: where its changes stand, for its readers'
        // checks and its writer (the floor is never written).
        let live = if spec.live && engine.store().changes_rows() {
            let applied = store
                .churning()?
                .churn_applied()
                .await
                .with_context(|| format!("{}: reading its count of changes", engine.name()))?
                .applied;
            Some(crate::workload::live::publish(spec, applied))
        } else {
            None
        };
        let mut eviction = store.evict().await.with_context(|| {
            format!(
                "cannot evict {} from the page cache",
                store.location().display()
            )
        })?;
        eviction.cgroup_reclaim = cap::reclaim_page_cache(&self.run.cap);
        eviction.cgroup_cache_after_bytes = cap::cgroup_page_cache_bytes(&self.run.cap);
        eviction.cgroup_kernel_before_bytes = kernel_before;
        eviction.cgroup_kernel_after_bytes = cap::cgroup_kernel_bytes(&self.run.cap);
        if engine.store().server().is_some() {
            self.progress(Progress::StartedCold {
                engine,
                size: spec.size_label(),
                seconds: eviction.seconds,
                how: &eviction.method,
            });
        }
        // The step's memory peaks count from here: after the cap's cache was emptied,
        // before the engine opens.
        let memory_since = cap::start_step(&self.run.cap);
        let disk_before = self.probe_disk();
        let steady_start = match scenario.cache {
            CacheState::Cold => None,
            CacheState::Steady => {
                let (mut gauge, limit) = self.gauge().await?;
                let prefill = crate::workload::steady::prefill(
                    &mut *store,
                    &mut gauge,
                    limit,
                    self.config().steady_limit,
                    self.config().access,
                )
                .await
                .with_context(|| format!("{}: the steady-state prefill failed", engine.name()))?;
                self.progress(Progress::Prefilled {
                    engine,
                    size: spec.size_label(),
                    prefill: &prefill,
                });
                let stored = crate::workload::stored::stored_bytes(&mut store).await;
                Some((gauge, limit, prefill, stored))
            }
        };
        drop(store);
        let opened = engine.open(&at, spec).await?;
        // A server reads in its own container: this process's /proc/self/io never
        // sees that, its container's processes do. Opened after the engine, so the
        // server process serving our connection is among them.
        let (disk, container) = match engine.store().server() {
            None => (DiskReadCounter::open_self(), None),
            Some(server) if at.places.remote(server).is_some() => {
                (Err(crate::db::server::place::NO_DISK_COUNTER.into()), None)
            }
            Some(server) => {
                crate::docker::container::attach(server.name(), server.recording().process_env())
                    .await?
            }
        };
        let round_trip = match engine.store().server() {
            None => None,
            Some(server) => self.round_trip(server).await,
        };
        if let Err(why) = &disk {
            self.progress(Progress::NoDiskCounter { engine, why });
        }
        let started_at = crate::now_rfc3339();
        let read = engine.store().dataset_read(spec);
        let mut fetch_loop =
            FetchLoop::new(opened, engine.name(), read, disk).with_access(self.config().access);
        let steady = match steady_start {
            None => None,
            Some((mut gauge, limit, prefill, stored)) => {
                let settled = fetch_loop.settle(self.config().steady_limit).await?;
                let cached = gauge.cached_bytes().await;
                let report = SteadyReport {
                    prefill,
                    settle_fetches: settled.fetches,
                    settle_seconds: settled.seconds,
                    round_hit_ratios: settled.round_hit_ratios,
                    converged: settled.converged,
                    tolerance: settled.tolerance,
                    model_hit_ratio: crate::workload::steady::model_hit_ratio(
                        cached,
                        stored,
                        self.config().access,
                        spec.rows,
                    ),
                    model_basis: match self.config().access {
                        crate::workload::access::Access::Uniform => {
                            format!("{} ÷ {} stored", gauge.basis(), format_bytes(stored))
                        }
                        skewed => format!(
                            "an LRU cache of {} ÷ {} stored under {skewed} (Che's approximation)",
                            gauge.basis(),
                            format_bytes(stored)
                        ),
                    },
                    // A remote server's memory is not known: not said to fit.
                    fits_in_memory: limit.is_some_and(|limit| stored <= limit),
                };
                self.progress(Progress::Settled {
                    engine,
                    size: spec.size_label(),
                    report: &report,
                });
                Some(report)
            }
        };
        Ok(Prepared {
            fetch_loop,
            eviction,
            started_at,
            container,
            disk_before,
            scenario,
            steady,
            memory_since,
            live,
            writer: None,
            round_trip,
        })
    }

    /// The gauge of the cache an engine reads through, and that cache's limit: the
    /// memory cap of this process or of the server's container (else the machine's
    /// RAM); neither for a remote server.
    async fn gauge(&self) -> Result<(AnyGauge, Option<u64>)> {
        let engine = self.engine;
        let ram = self.run.machine.ram_bytes;
        let Some(server) = engine.store().server() else {
            let cap = &self.run.cap;
            let limit = cap.memory_limit_bytes.unwrap_or(ram);
            return Ok((AnyGauge::Cgroup(CgroupGauge(cap.clone())), Some(limit)));
        };
        if self.config().places.remote(server).is_some() {
            // Its cache cannot be read from here; its pod's limit, where read, bounds it.
            let limit = self.cap_of().await.and_then(|c| c.memory_limit_bytes);
            return Ok((AnyGauge::Unreadable, limit));
        }
        let docker = crate::docker::connect().await?;
        let (container_id, container_name, _) = crate::docker::find_service(&docker, server.name())
            .await?
            .with_context(|| format!("no running compose container for {}", server.name()))?;
        let url = server.require_url(self.config().locations().server_url(server))?;
        let limit = self
            .cap_of()
            .await
            .and_then(|c| c.memory_limit_bytes)
            .unwrap_or(ram);
        Ok((
            AnyGauge::Server(ServerGauge {
                docker,
                container_id,
                container_name,
                server,
                url,
            }),
            Some(limit),
        ))
    }

    /// A server's round trip right before it is measured; None, after saying why,
    /// where it cannot be had.
    async fn round_trip(
        &self,
        server: crate::db::server::Server,
    ) -> Option<crate::db::server::round_trip::RoundTrip> {
        let engine = self.engine;
        // Through the run's network, as its engines fetch.
        let url = self.config().locations().fetch_url(server)?.to_string();
        match crate::db::server::round_trip::measure(server, &url).await {
            Ok(rt) => rt,
            Err(e) => {
                say!(
                    "note: {}: its round trip is unavailable ({e:#})",
                    engine.name()
                );
                None
            }
        }
    }

    /// Probe the disk with O_DIRECT reads of this size class's block from a local
    /// dataset file (see `disk::probe`); None when probing is off.
    pub(super) fn probe_disk(&self) -> Option<Result<DiskProbe, String>> {
        let spec = self.spec;
        let budget = self.config().disk_probe;
        if budget.is_zero() {
            return None;
        }
        let block = crate::disk::probe::block_for(spec.mean_blob_bytes());
        // No local dataset of this size class here (yet): the probe's own file on the
        // same disk, so every cell is set beside the disk's state.
        Some(
            self.probe_file(block)
                .and_then(|path| crate::disk::probe::probe(&path, block, budget, spec.seed)),
        )
    }

    /// Right after the floor's file is probed after a cell: the engine's own dataset,
    /// read the same way (`diskprobe::probe_files`), so a disk that serves one dataset
    /// slower than another in the same minute is seen, not guessed at. After the cell
    /// only: before it, opening its files would cache their metadata in a cold cell.
    /// None for the floor (its own file is the one probed).
    pub(super) fn probe_own_files(&self) -> Option<Result<DiskProbe, String>> {
        let (engine, spec) = (self.engine, self.spec);
        if engine.store().is_floor() {
            return None;
        }
        let budget = self.config().disk_probe;
        let block = crate::disk::probe::block_for(spec.mean_blob_bytes());
        let mut store = engine.store().open(&self.config().locations(), spec);
        Some(
            store.own_files(OWN_FILES, spec.seed).and_then(|files| {
                crate::disk::probe::probe_files(&files, block, budget, spec.seed)
            }),
        )
    }

    /// The cap an engine runs under: this process's, or its server container's.
    pub(super) async fn cap_of(&self) -> Option<CapReport> {
        cap_of(self.run, self.engine).await
    }
}

/// The cap `engine` runs under in `run`: this process's, or its server container's.
pub(super) async fn cap_of(run: &RunResults, engine: EngineKind) -> Option<CapReport> {
    let config = &run.config;
    match engine.store().server() {
        None => Some(run.cap.clone()),
        // Not controlled: the compose container's cap would not be its. A server's
        // pod in a cluster has limits the API gives.
        Some(server) if config.places.remote(server).is_some() => {
            config.places.remote_cap(server, config.cap)
        }
        Some(server) => {
            crate::docker::container::service_cap_or_note(server.name(), config.cap).await
        }
    }
}

/// After an engine is measured: drop its dataset from the page cache now, so its
/// pages do not sit in the cap and shrink the cache the next engine gets. The cap's
/// own cgroup cannot always be emptied between engines (an inherited cgroup such as
/// the compose runner's, a scope this user may not reclaim). Servers cache in their
/// own containers, which are restarted and evicted before each server engine.
pub async fn release(config: &RunConfig, engine: EngineKind, spec: DatasetSpec) -> Result<()> {
    if engine.store().is_server() {
        return Ok(());
    }
    let mut store = engine.store().open(&config.locations(), spec);
    store.evict().await.with_context(|| {
        format!(
            "cannot drop {} from the page cache",
            store.location().display()
        )
    })?;
    Ok(())
}
