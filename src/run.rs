//! One run, start to finish, shared by `cargo bench` (criterion drives the
//! fetches) and `blobrace measure` (a fixed-time loop drives them):
//! cap the process → load what is missing → per size and engine: evict, open,
//! warm up, measure, record → results written after each step.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cap::{self, CapGuard, CapReport};
use crate::config::RunConfig;
use crate::container::ContainerWatch;
use crate::dataset::{DatasetSpec, DatasetState};
use crate::diskio::DiskReadCounter;
use crate::diskprobe::{DiskProbe, DiskProbes};
use crate::engine::{AnyEngine, Engine, EngineKind};
use crate::error::InputError;
use crate::evict::EvictionReport;
use crate::load::ensure_loaded;
use crate::load_gen::{LoadMeasured, LoadPoint, LoadSettings, SaturationStep, rate_label};
use crate::machine::MachineFacts;
use crate::measure::FetchLoop;
use crate::memory_fit::{Budget, SkippedLoad};
use crate::report::export::{AnyExporter, Csv};
use crate::results::{
    DatasetFacts, EngineResult, FailedStage, LoadFacts, LoadResult, RESULTS_SCHEMA_VERSION, Regime,
    RunResults, SaturationResult, Scenario, StepFailure, new_run_id, write_atomic,
};
use crate::server_caps::ServerCaps;
use crate::size::format_bytes;
use crate::stats::precision::PrecisionReport;
use crate::stats::{format_ns, hit_ratio_label};
use crate::steady::{AnyGauge, CacheGauge, CacheState, CgroupGauge, ServerGauge, SteadyReport};
use crate::store::{Store, StoreKind};
use crate::summary::{interval_label, unavailable_or};

/// One engine at one size class, ready to measure: opened cold, counters attached.
pub struct Prepared {
    pub fetch_loop: FetchLoop<AnyEngine>,
    eviction: EvictionReport,
    started_at: String,
    /// A server's container, sampled before the warm-up.
    container: Option<ContainerWatch>,
    /// The disk probed before the warm-up (None: probing off).
    disk_before: Option<Result<DiskProbe, String>>,
    pub scenario: Scenario,
    /// How steady state was reached (steady scenarios).
    steady: Option<SteadyReport>,
    /// Since when the step's cgroup memory peaks count (`cap::start_step`).
    memory_since: String,
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

/// How long the disk's own throughput is read at each size and client count.
const DISK_LIMIT_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

/// Warm-up of each open-loop step of a saturation search, at most.
const SATURATE_STEP_WARM_UP: std::time::Duration = std::time::Duration::from_millis(500);
/// Measurement of each step, at least (else half the run's measurement).
const SATURATE_STEP_MIN_MEASURE: std::time::Duration = std::time::Duration::from_secs(1);

pub struct Run {
    pub results: RunResults,
    /// Dropped first: the servers go back to their own caps when the run ends.
    server_caps: ServerCaps,
    _cap_guard: CapGuard,
}

/// The stores the engines read, each once.
pub fn stores_for(engines: &[EngineKind]) -> Vec<StoreKind> {
    let mut stores: Vec<StoreKind> = engines.iter().map(|e| e.store()).collect();
    stores.sort();
    stores.dedup();
    stores
}

/// Drop server engines whose server cannot be reached, with one line each saying
/// why and how to start it; an engine asked for by name must run, so there it is an error.
pub async fn reachable_engines(config: &mut RunConfig) -> Result<()> {
    let mut unreachable: Vec<(StoreKind, String)> = Vec::new();
    for store in stores_for(&config.engines)
        .into_iter()
        .filter(|s| s.is_server())
    {
        let server = store.server().expect("a server store");
        let at = config.locations();
        let probe = async {
            let url = server.require_url(at.server_url(server))?;
            server.probe(&url).await
        };
        if let Err(e) = probe.await {
            if config.engines_explicit {
                return Err(e);
            }
            unreachable.push((store, format!("{e:#}")));
        }
    }
    for (store, why) in unreachable {
        let skipped: Vec<&str> = config
            .engines
            .iter()
            .filter(|e| e.store() == store)
            .map(|e| e.name())
            .collect();
        eprintln!("skipping {}: {why}", skipped.join(", "));
        config.engines.retain(|e| e.store() != store);
    }
    Ok(())
}

/// Set the run's servers to its cap (see `server_caps`): call after `reachable_engines`.
pub async fn fit_servers(config: &RunConfig) -> Result<ServerCaps> {
    let at = config.locations();
    let servers: Vec<_> = stores_for(&config.engines)
        .into_iter()
        .filter_map(|s| s.server())
        .filter_map(|server| Some((server, at.server_url(server)?.to_string())))
        .collect();
    let largest_blob = config.sizes.iter().map(|s| s.bytes()).max().unwrap_or(0);
    crate::server_caps::fit_servers(&servers, config.cap, largest_blob).await
}

/// Apply the cap and report it. Must run before any thread is spawned and before
/// any data is touched, so every page this process caches is charged to the cap.
/// A requested memory cap that cannot be had stops the run (exit code 2).
pub fn apply_cap(config: &RunConfig) -> Result<(CapReport, CapGuard)> {
    match cap::apply(config.cap) {
        Ok((report, guard)) => {
            print_cap(&report);
            Ok((report, guard))
        }
        Err(unavailable) => {
            print_cap(&unavailable.report);
            Err(InputError::from(unavailable).into())
        }
    }
}

/// One line for the cap in force and how it came about, then its notes.
pub fn print_cap(report: &CapReport) {
    eprintln!(
        "cap: memory {}, cpu {} ({}, cgroup {} {})",
        report.memory_label(),
        report.cpu_label(),
        report.how(),
        report.cgroup_version,
        report.cgroup
    );
    for note in &report.notes {
        eprintln!("cap: {note}");
    }
    for done in &report.housekeeping {
        eprintln!("cap: {done}");
    }
}

impl Run {
    /// Cap the process and describe the run. Call before building the tokio runtime.
    pub fn start(config: RunConfig, driver: &str) -> Result<Self> {
        let (cap, guard) = apply_cap(&config)?;
        let machine = MachineFacts::collect(&config.data_dir);
        crate::machine::one_malloc_arena_per_cpu(
            cap.cpu_limit.unwrap_or(machine.logical_cpus.max(1) as f64),
        );
        if machine.data_filesystem == "tmpfs" {
            eprintln!(
                "warning: the data directory is on tmpfs: that is RAM, not disk, and the cap will not see it as page cache"
            );
        }
        let results = RunResults {
            schema_version: RESULTS_SCHEMA_VERSION,
            run_id: new_run_id(),
            started_at: crate::now_rfc3339(),
            finished_at: None,
            complete: false,
            driver: driver.into(),
            // URLs carry passwords: recorded without them.
            command: std::env::args()
                .map(|a| crate::server::redact_url(&a))
                .collect::<Vec<_>>()
                .join(" "),
            config,
            cap,
            machine,
            runner_image: None,
            server_fits: Vec::new(),
            loads: Vec::new(),
            results: Vec::new(),
            load_results: Vec::new(),
            saturations: Vec::new(),
            skipped_loads: Vec::new(),
            disk_limits: Vec::new(),
            profiles: Vec::new(),
            failures: Vec::new(),
        };
        Ok(Self {
            results,
            server_caps: ServerCaps::default(),
            _cap_guard: guard,
        })
    }

    pub fn config(&self) -> &RunConfig {
        &self.results.config
    }

    /// Load every dataset the run needs (skipping complete ones); with
    /// `drop_after`, only check that the disk can take the largest size class
    /// (each is loaded by `before_size`).
    pub async fn load(&mut self) -> Result<()> {
        self.results.runner_image = crate::docker::own_container_image().await;
        reachable_engines(&mut self.results.config).await?;
        self.server_caps = fit_servers(&self.results.config).await?;
        self.results.server_fits = self.server_caps.fits();
        let config = &self.results.config;
        let stores = stores_for(&config.engines);
        if config.drop_after {
            crate::load::plan(&config.locations(), &stores, &config.datasets(), true).await?;
            return Ok(());
        }
        let (loads, failed) = ensure_loaded(
            &config.locations(),
            &stores,
            &config.datasets(),
            config.fail_fast,
        )
        .await?;
        self.results.loads = loads;
        self.record_failed_loads(failed);
        self.write()?;
        Ok(())
    }

    fn record_failed_loads(&mut self, failed: Vec<crate::load::FailedLoad>) {
        for f in failed {
            self.results.failures.push(StepFailure::new(
                FailedStage::Load,
                f.store.name().to_string(),
                f.spec.size,
                &f.error,
            ));
        }
    }

    /// Whether `engine`'s store failed to load `spec` in this run: nothing to measure.
    pub fn load_failed(&self, engine: EngineKind, spec: DatasetSpec) -> bool {
        let store = engine.store().name();
        self.results
            .failures
            .iter()
            .any(|f| f.stage == FailedStage::Load && f.who == store && f.size == spec.size)
    }

    /// Record a step that failed for one engine or store and go on (or, with
    /// `--fail-fast`, stop the run with it). The run exits non-zero at its end.
    pub fn step_failed(
        &mut self,
        stage: FailedStage,
        who: String,
        spec: DatasetSpec,
        error: anyhow::Error,
    ) -> Result<()> {
        if self.config().fail_fast || error.downcast_ref::<InputError>().is_some() {
            return Err(error);
        }
        let failure = StepFailure::new(stage, who, spec.size, &error);
        eprintln!("error: {}; going on with the rest", failure.line());
        self.results.failures.push(failure);
        self.write()?;
        Ok(())
    }

    /// Rewrite results.json, results.csv (the summary table) and, with loads, loads.csv
    /// atomically.
    pub fn write(&self) -> Result<PathBuf> {
        let dir = self.results.write()?;
        let rows = crate::summary::rows(&self.results);
        let csv = AnyExporter::Csv(Csv);
        write_atomic(&dir.join("results.csv"), &csv.serialize(&rows)?)?;
        if !(self.results.load_results.is_empty()
            && self.results.skipped_loads.is_empty()
            && self.results.saturations.is_empty())
        {
            let loads = crate::summary::loads_csv(&self.results);
            write_atomic(&dir.join("loads.csv"), loads.as_bytes())?;
        }
        Ok(dir)
    }

    /// Before measuring a size class: with `drop_after`, load it now.
    pub async fn before_size(&mut self, spec: DatasetSpec) -> Result<()> {
        if !self.config().drop_after {
            return Ok(());
        }
        let config = &self.results.config;
        let (loads, failed) = ensure_loaded(
            &config.locations(),
            &stores_for(&config.engines),
            &[spec],
            config.fail_fast,
        )
        .await?;
        self.results.loads.extend(loads);
        self.record_failed_loads(failed);
        self.write()?;
        Ok(())
    }

    /// After measuring a size class: with `drop_after`, delete its datasets.
    pub async fn after_size(&mut self, spec: DatasetSpec) -> Result<()> {
        if !self.config().drop_after {
            return Ok(());
        }
        let at = self.config().locations();
        for kind in stores_for(&self.config().engines) {
            let mut store = kind.open(&at, spec);
            let dropped = async {
                if store.state().await? == DatasetState::Absent {
                    return Ok(false);
                }
                store
                    .remove()
                    .await
                    .with_context(|| format!("cannot drop {}", store.location().display()))?;
                anyhow::Ok(true)
            };
            match dropped.await {
                Ok(true) => eprintln!("dropped {} (--drop-after)", store.location().display()),
                Ok(false) => {}
                Err(e) => self.step_failed(FailedStage::Drop, kind.name().into(), spec, e)?,
            }
        }
        Ok(())
    }

    /// Evict the engine's dataset from the page cache, open the engine on it, and
    /// attach the counters that see its storage reads. For a steady scenario, then
    /// prefill its cache and warm it up until the hit ratio is steady (`steady`).
    pub async fn prepare(
        &self,
        engine: EngineKind,
        spec: DatasetSpec,
        scenario: Scenario,
    ) -> Result<Prepared> {
        let at = self.config().locations();
        // Pages of datasets measured earlier are charged to this cgroup too and would
        // shrink the cache left for this engine: empty the cap's cache first, then make
        // sure this dataset's own pages (perhaps charged elsewhere) are gone as well.
        let cgroup_reclaim = cap::reclaim_page_cache(&self.results.cap);
        if scenario.repeat <= 1
            && let Some(why) = crate::fs_pressure::pressure(
                engine,
                spec.rows,
                spec.size.bytes(),
                self.results.cap.memory_limit_bytes,
            )
        {
            eprintln!("note: {} {}: {why}", engine.name(), spec.size);
        }
        let mut store = engine.store().open(&at, spec);
        let mut eviction = store.evict().await.with_context(|| {
            format!(
                "cannot evict {} from the page cache",
                store.location().display()
            )
        })?;
        eviction.cgroup_reclaim = cgroup_reclaim;
        eviction.cgroup_cache_after_bytes = cap::cgroup_page_cache_bytes(&self.results.cap);
        // The step's memory peaks count from here: after the cap's cache was emptied,
        // before the engine opens.
        let memory_since = cap::start_step(&self.results.cap);
        let disk_before = self.probe_disk(spec);
        let steady_start = match scenario.cache {
            CacheState::Cold => None,
            CacheState::Steady => {
                let (mut gauge, limit) = self.gauge(engine).await?;
                let prefill = crate::steady::prefill(
                    &mut store,
                    &mut gauge,
                    Some(limit),
                    self.config().steady_limit,
                )
                .await
                .with_context(|| format!("{}: the steady-state prefill failed", engine.name()))?;
                eprintln!(
                    "{} {}: prefilled {} in {:.1} s ({}); cache {} -> {}",
                    engine.name(),
                    spec.size,
                    format_bytes(prefill.bytes_read),
                    prefill.seconds,
                    prefill.stopped,
                    unavailable_or(prefill.cache_bytes_before.map(format_bytes)),
                    unavailable_or(prefill.cache_bytes_after.map(format_bytes)),
                );
                Some((gauge, limit, prefill, crate::steady::stored_bytes(&store)))
            }
        };
        drop(store);
        let opened = engine.open(&at, spec).await?;
        // A server reads in its own container: this process's /proc/self/io never
        // sees that, its container's processes do. Opened after the engine, so the
        // server process serving our connection is among them.
        let (disk, container) = match engine.store().server() {
            None => (DiskReadCounter::open_self(), None),
            Some(server) => crate::container::attach(server.name(), server.process_env()).await?,
        };
        if let Err(why) = &disk {
            eprintln!(
                "note: {}: disk bytes per fetch and hit/miss are unavailable: {why}",
                engine.name()
            );
        }
        let started_at = crate::now_rfc3339();
        let mut fetch_loop = FetchLoop::new(opened, engine.name(), spec, disk);
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
                    model_hit_ratio: crate::steady::model_hit_ratio(cached, stored),
                    model_basis: format!("{} ÷ {} stored", gauge.basis(), format_bytes(stored)),
                    fits_in_memory: stored <= limit,
                };
                eprintln!(
                    "{} {}: settled after {} fetches in {:.1} s: {}; hit ratio {}, model {}{}",
                    engine.name(),
                    spec.size,
                    report.settle_fetches,
                    report.settle_seconds,
                    match report.converged {
                        Some(true) => "steady",
                        Some(false) => "NOT steady (time limit)",
                        None => "steadiness unknown (no disk counter)",
                    },
                    unavailable_or(
                        report
                            .round_hit_ratios
                            .last()
                            .map(|r| format!("{:.1}%", r * 100.0))
                    ),
                    hit_ratio_label(report.model_hit_ratio),
                    if report.fits_in_memory {
                        " (the dataset fits in the cache: fits in memory)"
                    } else {
                        ""
                    },
                );
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
        })
    }

    /// The gauge of the cache an engine reads through, and that cache's limit: the
    /// memory cap of this process or of the server's container (else the machine's RAM).
    async fn gauge(&self, engine: EngineKind) -> Result<(AnyGauge, u64)> {
        let ram = self.results.machine.ram_bytes;
        let Some(server) = engine.store().server() else {
            let cap = &self.results.cap;
            let limit = cap.memory_limit_bytes.unwrap_or(ram);
            return Ok((AnyGauge::Cgroup(CgroupGauge(cap.clone())), limit));
        };
        let docker = crate::docker::connect().await?;
        let (container_id, container_name, _) = crate::docker::find_service(&docker, server.name())
            .await?
            .with_context(|| format!("no running compose container for {}", server.name()))?;
        let url = server.require_url(self.config().locations().server_url(server))?;
        let limit = self
            .cap_of(engine)
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
            limit,
        ))
    }

    /// Probe the disk with O_DIRECT reads of this size class's block from a local
    /// dataset file (see `diskprobe`); None when probing is off.
    fn probe_disk(&self, spec: DatasetSpec) -> Option<Result<DiskProbe, String>> {
        let budget = self.config().disk_probe;
        if budget.is_zero() {
            return None;
        }
        let block = crate::diskprobe::block_for(spec.size.bytes());
        Some(match self.local_dataset_file(spec, block) {
            Some(path) => crate::diskprobe::probe(&path, block, budget, spec.seed),
            None => Err(format!(
                "no local dataset file of {} to read (the floor's or SQLite's: run them too)",
                spec.size
            )),
        })
    }

    /// The disk's own random-read throughput at `spec`'s block with `clients` reads in
    /// flight, once per size and client count in a run, right after the first load
    /// of them: the physical limit those loads are compared with. Off with --disk-probe 0.
    pub fn measure_disk_limit(&mut self, spec: DatasetSpec, clients: u32) -> Result<()> {
        let size = spec.size.bytes();
        if clients < 2
            || self.config().disk_probe.is_zero()
            || self.results.disk_limit(size, clients).is_some()
        {
            return Ok(());
        }
        let block = crate::diskprobe::block_for(size);
        let throughput = match self.local_dataset_file(spec, block) {
            Some(path) => {
                crate::diskprobe::throughput(&path, block, clients, DISK_LIMIT_BUDGET, spec.seed)
            }
            None => Err(format!(
                "no local dataset file of {} to read (the floor's or SQLite's: run them too)",
                spec.size
            )),
        };
        match &throughput {
            Ok(t) => eprintln!(
                "disk {} {}: {} O_DIRECT reads at once: {:.0}/s ({:.1} MB/s), p99 {}",
                spec.size,
                crate::size::format_bytes(block),
                clients,
                t.reads_per_s,
                t.mb_per_s,
                format_ns(t.p99_ns as f64)
            ),
            Err(why) => eprintln!(
                "disk {} at {clients} reads at once: unavailable: {why}",
                spec.size
            ),
        }
        self.results.disk_limits.push(crate::results::DiskLimit {
            size_bytes: size,
            size: spec.size.to_string(),
            queue_depth: clients,
            measured_at: crate::now_rfc3339(),
            throughput,
        });
        self.write()?;
        Ok(())
    }

    /// A dataset file of `spec` on this machine's data disk, at least `block` long:
    /// the floor's, else SQLite's (servers keep their files inside their containers).
    fn local_dataset_file(&self, spec: DatasetSpec, block: u64) -> Option<PathBuf> {
        let at = self.config().locations();
        [StoreKind::Floor, StoreKind::Sqlite]
            .into_iter()
            .map(|kind| kind.open(&at, spec).location().to_path_buf())
            .find(|path| std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= block))
    }

    /// After an engine is measured: drop its dataset from the page cache now, so its
    /// pages do not sit in the cap and shrink the cache the next engine gets. The cap's
    /// own cgroup cannot always be emptied between engines (an inherited cgroup such as
    /// the compose runner's, a scope this user may not reclaim). Servers cache in their
    /// own containers, which are restarted and evicted before each server engine.
    pub async fn release(&self, engine: EngineKind, spec: DatasetSpec) -> Result<()> {
        if engine.store().is_server() {
            return Ok(());
        }
        let mut store = engine.store().open(&self.config().locations(), spec);
        store.evict().await.with_context(|| {
            format!(
                "cannot drop {} from the page cache",
                store.location().display()
            )
        })?;
        Ok(())
    }

    /// The cap an engine runs under: this process's, or its server container's.
    async fn cap_of(&self, engine: EngineKind) -> Option<CapReport> {
        match engine.store().server() {
            None => Some(self.results.cap.clone()),
            Some(server) => {
                crate::container::service_cap_or_note(server.name(), self.results.config.cap).await
            }
        }
    }

    /// Record one engine's measurement, print it, and rewrite the results files.
    pub async fn record(
        &mut self,
        engine: EngineKind,
        spec: DatasetSpec,
        prepared: &Prepared,
        criterion_samples: Option<u64>,
    ) -> Result<()> {
        let fetch_loop = &prepared.fetch_loop;
        let result = self
            .result_of(
                engine,
                spec,
                prepared,
                fetch_loop.disk_source().to_string(),
                fetch_loop.warm_up.summary(),
                fetch_loop.measured.summary_with_intervals(),
                criterion_samples,
            )
            .await;
        eprintln!("{}", one_line(&result, self.config()));
        if let Some(changed) = result.disk_probes.as_ref().and_then(DiskProbes::changed) {
            eprintln!("note: {}: {changed}", engine.name());
        }
        self.results.results.push(result);
        self.write()?;
        Ok(())
    }

    /// What every result records around its fetches: the dataset, settings, cap,
    /// regime, eviction, disk probes (probed again now) and the server's container.
    #[allow(clippy::too_many_arguments)]
    async fn result_of(
        &self,
        engine: EngineKind,
        spec: DatasetSpec,
        prepared: &Prepared,
        disk_counter: String,
        warm_up: crate::stats::Summary,
        measured: crate::stats::Summary,
        criterion_samples: Option<u64>,
    ) -> EngineResult {
        let location = engine
            .store()
            .open(&self.config().locations(), spec)
            .location()
            .display()
            .to_string();
        let disk_probes = prepared.disk_before.clone().map(|before| DiskProbes {
            before,
            after: self
                .probe_disk(spec)
                .expect("probing is on: it probed before"),
        });
        let cap = self.cap_of(engine).await;
        let container = match &prepared.container {
            Some(watch) => watch.finish_or_note().await,
            None => None,
        };
        // The server process's environment that shapes reads (GOMEMLIMIT) beside
        // the settings the server reports itself.
        let mut settings = prepared.fetch_loop.engine().settings();
        if let Some(watch) = &prepared.container {
            settings.extend(watch.process_env.clone());
        }
        EngineResult {
            engine,
            scenario: prepared.scenario,
            steady: prepared.steady.clone(),
            size_bytes: spec.size.bytes(),
            size: spec.size.to_string(),
            dataset: DatasetFacts {
                rows: spec.rows,
                bytes: spec.bytes(),
                seed: spec.seed,
                location,
            },
            settings,
            regime: Regime::of(spec.bytes(), cap.as_ref(), self.results.machine.ram_bytes),
            cap,
            eviction: prepared.eviction.clone(),
            disk_counter,
            disk_probes,
            container,
            warm_up,
            precision: match (self.config().precision, prepared.fetch_loop.stopped) {
                (Some(asked), Some((stopped, took))) => Some(PrecisionReport {
                    past_plan_fetches: prepared.fetch_loop.past_plan_fetches,
                    ..PrecisionReport::of(
                        asked,
                        &measured,
                        stopped,
                        self.config().measure.as_secs_f64(),
                        self.config().measure_limit.as_secs_f64(),
                        took.as_secs_f64(),
                    )
                }),
                _ => None,
            },
            measured,
            criterion_samples,
            process_peak_rss_bytes: crate::machine::peak_rss_bytes(),
            step_memory: Some(cap::read_step(
                &self.results.cap,
                prepared.memory_since.clone(),
            )),
            started_at: prepared.started_at.clone(),
            finished_at: crate::now_rfc3339(),
        }
    }

    /// `--profile-fetches`: fetch on with the prepared engine under a CPU profiler,
    /// after its 1-client measurement is recorded; the flame graph goes to
    /// `profiles/<engine>-<size>-<cache>.svg` in the run directory. Off: nothing.
    pub fn profile_fetches(
        &mut self,
        rt: &tokio::runtime::Runtime,
        engine: EngineKind,
        spec: DatasetSpec,
        prepared: &mut Prepared,
    ) -> Result<()> {
        let Some(budget) = self.config().profile_fetches else {
            return Ok(());
        };
        let dir = self.results.dir().join("profiles");
        let cache = prepared.scenario.cache.name();
        let file = format!("{}-{}-{cache}.svg", engine.name(), spec.size);
        // A server with a Go pprof endpoint (Dolt) profiles itself over the same
        // seconds: the request runs on the runtime while the client fetches.
        let server_job = match (engine.store().server(), &prepared.container) {
            (Some(server), Some(watch)) => server.pprof().map(|pprof| {
                let seconds = budget.as_secs_f64().ceil().max(1.0) as u64;
                let (id, port) = (watch.id.clone(), pprof.port);
                let request = rt.spawn(async move {
                    let docker = crate::docker::connect().await?;
                    let path = format!("/debug/pprof/profile?seconds={seconds}");
                    crate::docker::http_get_inside(&docker, &id, port, &path).await
                });
                (pprof, seconds, request)
            }),
            _ => None,
        };
        let fetch_loop = &mut prepared.fetch_loop;
        let mut profile = crate::profile::profile(
            (engine.name(), &spec.size.to_string(), cache),
            &dir,
            &file,
            || rt.block_on(fetch_loop.fetch_for(budget)),
        )
        .with_context(|| format!("{} {}: the CPU profile failed", engine.name(), spec.size))?;
        eprintln!("profile {}", profile.line());
        if let Some((pprof, seconds, request)) = server_job {
            use crate::profile::go_pprof;
            let server_file = format!("{}-{}-{cache}-server.svg", engine.name(), spec.size);
            let title = format!("{} server, {} {cache}: CPU", engine.name(), spec.size);
            let analysed = rt
                .block_on(request)
                .map_err(anyhow::Error::from)
                .and_then(|response| {
                    let response = response?;
                    let body = go_pprof::http_body(&response)?;
                    go_pprof::analyse(body, seconds, pprof.parts, &title, &dir, &server_file)
                });
            match analysed {
                Ok(server) => {
                    eprintln!("profile {} {}: {}", engine.name(), spec.size, server.line());
                    profile.server = Some(server);
                }
                Err(e) => {
                    let why = format!("{e:#}; to profile the server, {}", pprof.how_to_enable);
                    eprintln!(
                        "profile {} {}: server profile unavailable: {why}",
                        engine.name(),
                        spec.size
                    );
                    profile.server_unavailable = Some(why);
                }
            }
        }
        self.results.profiles.push(profile);
        self.write()?;
        Ok(())
    }

    /// How a load runs under this run's settings.
    pub fn load_settings(&self) -> LoadSettings {
        self.config().load_settings(self.cpus())
    }

    /// CPUs this process may use: its cap, else the machine's.
    fn cpus(&self) -> f64 {
        self.results
            .cap
            .cpu_limit
            .unwrap_or(self.results.machine.logical_cpus.max(1) as f64)
    }

    /// Why `point`'s fetches in flight would not fit under the caps (`memory_fit`):
    /// this process's (every engine's client side), and a server's container's.
    /// None when they fit, or when nothing is capped.
    pub async fn load_misfit(
        &self,
        engine: EngineKind,
        spec: DatasetSpec,
        point: LoadPoint,
    ) -> Option<String> {
        crate::machine::release_freed_memory();
        let mut budgets = vec![Budget {
            what: "the measuring process",
            // /proc/self/status is always there on Linux; 0 would only make the check lenient.
            base_bytes: crate::machine::rss_bytes().unwrap_or(0),
            copies: engine.def().client_copies,
            per_client_bytes: crate::memory_fit::CLIENT_FIXED_BYTES,
            cap_bytes: self.results.cap.memory_limit_bytes,
        }];
        if let Some(server) = engine.store().server() {
            let cap = self.cap_of(engine).await.and_then(|c| c.memory_limit_bytes);
            let largest = self.config().sizes.iter().map(|s| s.bytes()).max();
            // The cache this run set, else what the server gets under that cap.
            let cache = self
                .results
                .server_fits
                .iter()
                .find(|f| f.server == server)
                .and_then(|f| f.after.cache_bytes)
                .or_else(|| Some(server.cache_bytes_for_cap(cap?, largest.unwrap_or(0))))
                .unwrap_or(0);
            budgets.push(Budget {
                what: "the server's container",
                base_bytes: cache + server.serving_memory_bytes(),
                copies: server.fetch_copies(),
                per_client_bytes: 0,
                cap_bytes: cap,
            });
        }
        crate::memory_fit::misfit(&budgets, point.clients, spec.size.bytes())
    }

    /// Record a load not run because it would not fit (`load_misfit`), and say so.
    pub fn skip_load(
        &mut self,
        engine: EngineKind,
        spec: DatasetSpec,
        point: LoadPoint,
        why: String,
    ) -> Result<()> {
        let skipped = SkippedLoad {
            engine,
            size_bytes: spec.size.bytes(),
            size: spec.size.to_string(),
            point,
            why,
        };
        eprintln!("{}", skipped.line());
        self.results.skipped_loads.push(skipped);
        self.write()?;
        Ok(())
    }

    /// Run one load on a prepared engine (`load_gen`): `point.clients` more engines
    /// opened on the same dataset, each in its own thread; the disk counter attached
    /// once they are connected (a server's new connections are new processes).
    /// Call outside `rt.block_on`: the clients run their own runtimes.
    pub fn drive_load(
        &self,
        rt: &tokio::runtime::Runtime,
        engine: EngineKind,
        spec: DatasetSpec,
        prepared: &Prepared,
        point: LoadPoint,
        settings: LoadSettings,
    ) -> Result<LoadMeasured> {
        let at = self.config().locations();
        let counter = || match engine.store().server() {
            None => DiskReadCounter::open_self(),
            Some(server) => match rt.block_on(crate::container::attach(
                server.name(),
                server.process_env(),
            )) {
                Ok((counter, _)) => counter,
                Err(e) => Err(format!("{e:#}")),
            },
        };
        let measured = crate::load_gen::run_load(
            |_| engine.open(&at, spec),
            engine.name(),
            spec,
            point,
            settings,
            counter,
        );
        measured.map_err(|e| rt.block_on(prepared.explain(e)))
    }

    /// Record one load's measurement, print it, and rewrite the results files.
    pub async fn record_load(
        &mut self,
        engine: EngineKind,
        spec: DatasetSpec,
        prepared: &Prepared,
        point: LoadPoint,
        measured: &LoadMeasured,
    ) -> Result<()> {
        let mut summary = measured.measured.summary_with_intervals();
        // Totals only: no fetch is a hit or a miss when others read at the same time.
        summary.disk_bytes_total = measured.disk.bytes;
        summary.disk_bytes_per_fetch = measured.disk.per_fetch(summary.count);
        let result = self
            .result_of(
                engine,
                spec,
                prepared,
                measured.disk.source.clone(),
                measured.warm_up.summary(),
                summary,
                None,
            )
            .await;
        let load = LoadFacts::of(measured, point, self.config().max_in_flight);
        eprintln!("{}", load_line(&result, &load, self.config()));
        if load.limit_reached {
            eprintln!(
                "note: {} {}: the backlog reached --max-in-flight {} after {:.1} s of measurement (warm-up not counted): {} does not serve {}/s here; stopped there",
                engine.name(),
                spec.size,
                load.max_in_flight,
                load.measured_seconds,
                engine.name(),
                point.rate.map(rate_label).unwrap_or_default()
            );
        }
        self.results.load_results.push(LoadResult { result, load });
        self.write()?;
        Ok(())
    }

    /// The sustainable rate of a prepared engine with `clients` clients: a closed
    /// loop gives the most they serve, then open-loop steps bisect below it for the
    /// highest rate whose p99 response time meets the target (`load_gen::search`).
    pub fn saturate(
        &mut self,
        rt: &tokio::runtime::Runtime,
        engine: EngineKind,
        spec: DatasetSpec,
        prepared: &Prepared,
        clients: u32,
    ) -> Result<()> {
        let closed = self.drive_load(
            rt,
            engine,
            spec,
            prepared,
            LoadPoint::closed(clients),
            self.load_settings(),
        )?;
        eprintln!(
            "{} {} c{clients}: closed loop {:.0} fetches/s",
            engine.name(),
            spec.size,
            closed.achieved_rate()
        );
        self.search_sustainable(rt, engine, spec, prepared, clients, &closed)
    }

    /// The open-loop search below `closed`, a closed loop of `clients` clients just
    /// measured on this prepared engine (by `saturate`, or as a load of the run: the
    /// same measurement, so a latency run does not start the engine cold again for it).
    /// The search's start is the prepared engine's: where that closed loop began.
    pub fn search_sustainable(
        &mut self,
        rt: &tokio::runtime::Runtime,
        engine: EngineKind,
        spec: DatasetSpec,
        prepared: &Prepared,
        clients: u32,
        closed: &LoadMeasured,
    ) -> Result<()> {
        let config = self.config().clone();
        let settings = self.load_settings();
        let capacity = closed.achieved_rate();
        eprintln!(
            "{} {} c{clients}: searching below the closed loop's {:.0} fetches/s ({} steps, p99 response <= {})",
            engine.name(),
            spec.size,
            capacity,
            config.saturate_steps,
            format_ns(config.target_p99.as_nanos() as f64)
        );
        let search = crate::load_gen::search(capacity, config.saturate_steps, |rate| {
            let point = LoadPoint::open(clients, rate, config.arrivals);
            // A backlog of rate x target means a new arrival waits about the target:
            // twice that is overload whatever --max-in-flight says, and a fast engine's
            // backlog may pass --max-in-flight well within the target.
            let limit = (rate * config.target_p99.as_secs_f64() * 2.0).ceil() as u32;
            // The closed loop before warmed the engine and its caches: a step needs
            // little warm-up, and half the measurement still holds thousands of fetches
            // at the rates where the search is decided.
            let settings = LoadSettings {
                max_in_flight: settings.max_in_flight.max(limit),
                warm_up: settings.warm_up.min(SATURATE_STEP_WARM_UP),
                measure: (settings.measure / 2).max(SATURATE_STEP_MIN_MEASURE),
                ..settings
            };
            let m = self.drive_load(rt, engine, spec, prepared, point, settings)?;
            let step = SaturationStep::of(rate, &m, config.target_p99);
            eprintln!(
                "  {}/s offered: {:.0}/s done, p99 response {}{} -> {}",
                rate_label(rate),
                step.achieved,
                format_ns(step.response.p99_ns as f64),
                if step.limit_reached {
                    " (in-flight limit reached)"
                } else {
                    ""
                },
                if step.met { "meets" } else { "misses" }
            );
            Ok(step)
        })?;
        let cap = rt.block_on(self.cap_of(engine));
        let result = SaturationResult {
            engine,
            scenario: prepared.scenario,
            size_bytes: spec.size.bytes(),
            size: spec.size.to_string(),
            clients,
            arrivals: config.arrivals,
            target_p99: config.target_p99,
            sustainable_mb_per_s: search
                .sustainable
                .map(|r| r * spec.size.bytes() as f64 / 1e6),
            search,
            settings: prepared.fetch_loop.engine().settings(),
            regime: Regime::of(spec.bytes(), cap.as_ref(), self.results.machine.ram_bytes),
            cap,
            started_at: prepared.started_at.clone(),
            finished_at: crate::now_rfc3339(),
        };
        eprintln!(
            "{:<13} {:>7}: sustainable {} with {clients} clients (closed loop {:.0}/s)",
            engine.name(),
            spec.size,
            match (result.search.sustainable, result.sustainable_mb_per_s) {
                (Some(r), Some(mb)) => format!("{}/s ({mb:.1} MB/s)", rate_label(r)),
                _ => "none: no rate met the target".into(),
            },
            result.search.capacity
        );
        self.results.saturations.push(result);
        self.write()?;
        Ok(())
    }

    /// Mark the run complete, write the files and the report, print where they are.
    pub fn finish(&mut self) -> Result<PathBuf> {
        self.results.complete = true;
        self.results.finished_at = Some(crate::now_rfc3339());
        let dir = self.write()?;
        eprintln!("{}", crate::summary::terminal_table(&self.results));
        for failure in &self.results.failures {
            eprintln!("FAILED: {}", failure.line());
        }
        for beat in crate::floor_check::beating_the_floor(&self.results) {
            eprintln!("NOTE: {}", beat.line());
        }
        eprintln!("results: {}", dir.join("results.json").display());
        let options = crate::report::ReportOptions {
            target_p99: self.results.config.target_p99,
            ..Default::default()
        };
        let rendered = crate::report::render(&dir, None, &options).with_context(|| {
            format!(
                "the results are saved in {}, but the report failed (retry with `blobrace report --run {}`)",
                dir.display(),
                self.results.run_id
            )
        })?;
        eprintln!(
            "report: {} ({} charts in {:.1}s)",
            rendered.index.display(),
            rendered.charts,
            rendered.seconds
        );
        // A rate asked for that could not be offered is an error, after everything
        // measured is saved and reported.
        let unreachable: Vec<String> = self
            .results
            .load_results
            .iter()
            .filter(|l| l.load.limit_reached)
            .map(|l| {
                format!(
                    "{} {} {}",
                    l.result.engine,
                    l.result.size,
                    l.load.point.label()
                )
            })
            .collect();
        if !self.results.failures.is_empty() {
            let what: Vec<String> = self
                .results
                .failures
                .iter()
                .map(|f| format!("{} of {} at {}", f.stage, f.who, f.size))
                .collect();
            anyhow::bail!(
                "{} step(s) failed and were left out (the reasons are above, in results.json and in the report; everything else was measured): {}",
                what.len(),
                what.join(", ")
            );
        }
        if !unreachable.is_empty() {
            anyhow::bail!(
                "the in-flight limit ({}) was reached, so the rate asked for could not be offered, at: {}. The engine serves less than that rate under this cap: lower --rate, or find the highest rate it sustains with `blobrace saturate`; raise --max-in-flight only to see how far the queue grows",
                self.results.config.max_in_flight,
                unreachable.join(", ")
            );
        }
        Ok(dir)
    }
}

/// One load's line: throughput, the headline percentiles (which ones), CPU, disk.
fn load_line(r: &EngineResult, load: &LoadFacts, config: &RunConfig) -> String {
    let service = &r.measured.latency;
    if r.measured.count == 0 {
        return format!(
            "{:<13} {:>7} {:>12}: no fetch measured: {}",
            r.scenario.label(r.engine, &config.cache, config.repeat),
            r.size,
            load.point.label(),
            load.no_fetch_why()
        );
    }
    let head = load.headline(service);
    format!(
        "{:<13} {:>7} {:>12}: {:.0} fetches/s ({:.1} MB/s), {} p50 {} p99 {} p99.9 {}{} | cpu {:.0}% of {} | disk/fetch {}",
        r.scenario.label(r.engine, &config.cache, config.repeat),
        r.size,
        load.point.label(),
        load.fetches_per_s,
        load.mb_per_s,
        load.headline_word(),
        format_ns(head.p50_ns as f64),
        format_ns(head.p99_ns as f64),
        format_ns(head.p999_ns as f64),
        if load.response.is_some() {
            format!(" (service p99 {})", format_ns(service.p99_ns as f64))
        } else {
            String::new()
        },
        load.cpu.share() * 100.0,
        load.cpu.cpus,
        r.measured.disk_per_fetch_label(),
    )
}

fn one_line(r: &EngineResult, config: &RunConfig) -> String {
    let m = &r.measured;
    let precision = match &r.precision {
        Some(p) => format!(" | {}", p.label()),
        None => String::new(),
    };
    format!(
        "{:<13} {:>7}: n={} mean {} p50 {} ({}) p99 {} ({}) p99.9 {} | hit ratio {} | disk/fetch {} | disk probe {} | {}",
        r.scenario.label(r.engine, &config.cache, config.repeat),
        r.size,
        m.count,
        format_ns(m.latency.mean_ns),
        format_ns(m.latency.p50_ns as f64),
        interval_label(m.intervals.as_ref().and_then(|i| i.p50)),
        format_ns(m.latency.p99_ns as f64),
        interval_label(m.intervals.as_ref().and_then(|i| i.p99)),
        format_ns(m.latency.p999_ns as f64),
        m.hit_ratio_label(),
        m.disk_per_fetch_label(),
        crate::summary::SummaryRow::disk_probe_label(r),
        r.regime.label(),
    ) + &precision
}
