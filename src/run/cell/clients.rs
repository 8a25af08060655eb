//! Many clients at once: whether their fetches in flight fit the caps, the load
//! itself, the disk's own limit at that queue depth, and the sustainable-rate search.

use std::path::PathBuf;

use anyhow::Result;

use crate::db::engine::Engine;
use crate::db::registry::StoreKind;
use crate::disk::io::DiskReadCounter;
use crate::load_gen::memory_fit::{Budget, SkippedLoad};
use crate::load_gen::{LoadMeasured, LoadPoint, LoadSettings, SaturationStep};
use crate::records::results::{LoadFacts, LoadResult, Regime, SaturationResult};

use super::super::Progress;
use super::{CellRun, Found, Prepared};

/// How long the disk's own throughput is read at each size and client count.
const DISK_LIMIT_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

/// Warm-up of each open-loop step of a saturation search, at most.
const SATURATE_STEP_WARM_UP: std::time::Duration = std::time::Duration::from_millis(500);
/// Measurement of each step, at least (else half the run's measurement).
const SATURATE_STEP_MIN_MEASURE: std::time::Duration = std::time::Duration::from_secs(1);

impl CellRun<'_> {
    /// How a load runs under this run's settings.
    pub(super) fn load_settings(&self) -> LoadSettings {
        self.config().load_settings(self.cpus())
    }

    /// CPUs this process may use: its cap, else the machine's.
    fn cpus(&self) -> f64 {
        self.run
            .cap
            .cpu_limit
            .unwrap_or(self.run.machine.logical_cpus.max(1) as f64)
    }

    /// Why `point`'s fetches in flight would not fit under the caps (`memory_fit`):
    /// this process's (every engine's client side), and a server's container's.
    /// None when they fit, or when nothing is capped.
    pub(super) async fn load_misfit(&self, point: LoadPoint) -> Option<String> {
        let (engine, spec) = (self.engine, self.spec);
        crate::machine::release_freed_memory();
        let mut budgets = vec![Budget {
            what: "the measuring process",
            // /proc/self/status is always there on Linux; 0 would only make the check lenient.
            base_bytes: crate::machine::rss_bytes().unwrap_or(0),
            copies: engine.def().client_copies,
            per_client_bytes: crate::load_gen::memory_fit::CLIENT_FIXED_BYTES,
            cap_bytes: self.run.cap.memory_limit_bytes,
        }];
        if let Some(server) = engine.store().server() {
            let cap = self.cap_of().await.and_then(|c| c.memory_limit_bytes);
            let largest = self.config().sizes.iter().map(|s| s.bytes()).max();
            // The cache this run set, else what the server gets under that cap.
            let cache = self
                .run
                .server_fits
                .iter()
                .find(|f| f.server == server)
                .and_then(|f| f.after.cache_bytes)
                .or_else(|| {
                    Some(
                        server
                            .memory()
                            .cache_bytes_for_cap(cap?, largest.unwrap_or(0)),
                    )
                })
                .unwrap_or(0);
            budgets.push(Budget {
                what: "the server's container",
                base_bytes: cache + server.memory().serving_memory_bytes(),
                copies: server.memory().fetch_copies(),
                per_client_bytes: 0,
                cap_bytes: cap,
            });
        }
        crate::load_gen::memory_fit::misfit(&budgets, point.clients, spec.size.bytes())
    }

    /// A load not run because it would not fit (`load_misfit`), and why.
    pub(super) fn skip_load(&mut self, point: LoadPoint, why: String) {
        self.found.push(Found::SkippedLoad(SkippedLoad {
            engine: self.engine,
            size_bytes: self.spec.size.bytes(),
            size: self.spec.size_label(),
            point,
            why,
        }));
    }

    /// Run one load on a prepared engine (`load_gen`): `point.clients` more engines
    /// opened on the same dataset, each in its own thread; the disk counter attached
    /// once they are connected (a server's new connections are new processes).
    /// Call outside `rt.block_on`: the clients run their own runtimes.
    pub(super) fn drive_load(
        &self,
        rt: &tokio::runtime::Runtime,
        prepared: &Prepared,
        point: LoadPoint,
        settings: LoadSettings,
    ) -> Result<LoadMeasured> {
        let (engine, spec) = (self.engine, self.spec);
        let at = self.config().locations();
        let counter = || match engine.store().server() {
            None => DiskReadCounter::open_self(),
            Some(server) if at.places.remote(server).is_some() => {
                Err(crate::db::server::place::NO_DISK_COUNTER.into())
            }
            Some(server) => match rt.block_on(crate::docker::container::attach(
                server.name(),
                server.recording().process_env(),
            )) {
                Ok((counter, _)) => counter,
                Err(e) => Err(format!("{e:#}")),
            },
        };
        let measured = crate::load_gen::run_load(
            |_| engine.open(&at, spec),
            engine.name(),
            engine.store().dataset_read(spec),
            point,
            settings,
            counter,
        );
        measured.map_err(|e| rt.block_on(prepared.explain(e)))
    }

    /// The result of one load's measurement.
    pub(super) async fn load_result(
        &self,
        prepared: &Prepared,
        point: LoadPoint,
        measured: &LoadMeasured,
    ) -> LoadResult {
        let mut summary = measured.measured.summary_with_intervals();
        // Totals only: no fetch is a hit or a miss when others read at the same time.
        summary.disk_bytes_total = measured.disk.bytes;
        summary.disk_bytes_per_fetch = measured.disk.per_fetch(summary.count);
        let result = self
            .result_of(
                prepared,
                measured.disk.source.clone(),
                measured.warm_up.summary(),
                summary,
                None,
            )
            .await;
        let load = LoadFacts::of(measured, point, self.config().max_in_flight);
        LoadResult { result, load }
    }

    /// The disk's own random-read throughput at `spec`'s block with `clients` reads in
    /// flight, once per size and client count in a run, right after the first load
    /// of them: the physical limit those loads are compared with. Off with --disk-probe 0.
    pub(super) fn measure_disk_limit(&mut self, clients: u32) {
        let spec = self.spec;
        let size = spec.size.bytes();
        let this_cell_s = self.found.iter().any(|f| {
            matches!(f, Found::DiskLimit(d) if d.size_bytes == size && d.queue_depth == clients)
        });
        if clients < 2
            || self.config().disk_probe.is_zero()
            || self.run.disk_limit(size, clients).is_some()
            || this_cell_s
        {
            return;
        }
        // A mix's reads are of its mean blob, not its largest (the key, `size`).
        let block = crate::disk::probe::block_for(spec.mean_blob_bytes());
        let throughput = self.probe_file(block).and_then(|path| {
            crate::disk::probe::throughput(&path, block, clients, DISK_LIMIT_BUDGET, spec.seed)
        });
        self.found
            .push(Found::DiskLimit(crate::records::results::DiskLimit {
                size_bytes: size,
                size: spec.size_label(),
                queue_depth: clients,
                measured_at: crate::now_rfc3339(),
                throughput,
            }));
    }

    /// The file the disk probes read for `spec`: a local dataset's, or, where none is
    /// here (yet), the probe's own file on the same disk (`diskprobe::own_file`).
    pub(super) fn probe_file(&self, block: u64) -> Result<PathBuf, String> {
        match self.local_dataset_file(block) {
            Some(path) => Ok(path),
            None => crate::disk::probe::own_file(&self.config().data_dir),
        }
    }

    /// A dataset file of `spec` on this machine's data disk, at least `block` long:
    /// the floor's, else SQLite's (servers keep their files inside their containers).
    fn local_dataset_file(&self, block: u64) -> Option<PathBuf> {
        let spec = self.spec;
        let at = self.config().locations();
        let mut local: Vec<StoreKind> = StoreKind::all().filter(|k| !k.is_server()).collect();
        local.sort_by_key(|k| !k.is_floor());
        local
            .into_iter()
            .map(|kind| kind.open(&at, spec).location().to_path_buf())
            .find(|path| std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= block))
    }

    /// The sustainable rate of a prepared engine with `clients` clients: a closed
    /// loop gives the most they serve, then open-loop steps bisect below it for the
    /// highest rate whose p99 response time meets the target (`load_gen::search`).
    pub(super) fn saturate(
        &mut self,
        rt: &tokio::runtime::Runtime,
        prepared: &Prepared,
        clients: u32,
    ) -> Result<()> {
        let (engine, spec) = (self.engine, self.spec);
        let closed = self.drive_load(
            rt,
            prepared,
            LoadPoint::closed(clients),
            self.load_settings(),
        )?;
        self.progress(Progress::ClosedLoop {
            engine,
            size: spec.size_label(),
            clients,
            fetches_per_s: closed.achieved_rate(),
        });
        self.search_sustainable(rt, prepared, clients, &closed)
    }

    /// The open-loop search below `closed`, a closed loop of `clients` clients just
    /// measured on this prepared engine (by `saturate`, or as a load of the run: the
    /// same measurement, so a latency run does not start the engine cold again for it).
    /// The search's start is the prepared engine's: where that closed loop began.
    pub(super) fn search_sustainable(
        &mut self,
        rt: &tokio::runtime::Runtime,
        prepared: &Prepared,
        clients: u32,
        closed: &LoadMeasured,
    ) -> Result<()> {
        let (engine, spec) = (self.engine, self.spec);
        let config = self.config();
        let settings = self.load_settings();
        let capacity = closed.achieved_rate();
        self.progress(Progress::Searching {
            engine,
            size: spec.size_label(),
            clients,
            capacity,
            steps: config.saturate_steps,
            target: config.target_p99,
        });
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
            let m = self.drive_load(rt, prepared, point, settings)?;
            let step = SaturationStep::of(rate, &m, config.target_p99);
            self.progress(Progress::SearchStep(&step));
            Ok(step)
        })?;
        let cap = rt.block_on(self.cap_of());
        let result = SaturationResult {
            engine,
            scenario: prepared.scenario,
            size_bytes: spec.size.bytes(),
            size: spec.size_label(),
            clients,
            arrivals: config.arrivals,
            target_p99: config.target_p99,
            sustainable_mb_per_s: search
                .sustainable
                .map(|r| r * spec.mean_blob_bytes() as f64 / 1e6),
            search,
            settings: prepared.fetch_loop.engine().settings(),
            regime: Regime::of(
                spec.bytes(),
                // Not measured for a rate search: its blobs' bytes.
                None,
                cap.as_ref(),
                self.run.machine.ram_bytes,
            ),
            cap,
            started_at: prepared.started_at.clone(),
            finished_at: crate::now_rfc3339(),
        };
        self.found.push(Found::Saturation(Box::new(result)));
        Ok(())
    }
}
