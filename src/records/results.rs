//! What a run records: `<results-dir>/<run-id>/results.json`, everything.
//! Rewritten atomically after every measurement (with `results.csv`, the summary
//! table: see `run::Run::write`), so a crash leaves the last complete state,
//! never half a file.

pub use super::run_id::new_run_id;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::atomic_file::write_atomic;
use crate::cap::CapReport;
use crate::config::RunConfig;
use crate::db::engine::EngineSettings;
use crate::db::registry::EngineKind;
use crate::disk::evict::EvictionReport;
use crate::docker::container::ContainerStats;
use crate::load::LoadReport;
use crate::load_gen::{Arrivals, CpuUse, DiskTotals, LoadMeasured, LoadPoint, Saturation};
use crate::machine::MachineFacts;
use crate::size::SizeClass;
use crate::stats::{LogHistogram, Percentiles, Summary};
use crate::workload::steady::{CacheState, SteadyReport};

pub use crate::records::regime::{MemoryBasis, Regime, RegimeVerdict};

pub const RESULTS_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResults {
    pub schema_version: u32,
    pub run_id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// False while the run is going (or if it died): some results are missing.
    pub complete: bool,
    /// How the fetches were driven: "criterion" (cargo bench) or "blobrace measure".
    pub driver: String,
    /// The command line that produced this run.
    pub command: String,
    pub config: RunConfig,
    /// The cap the measuring process ran under (embedded engines and baselines).
    pub cap: CapReport,
    pub machine: MachineFacts,
    /// blobrace's version and commit, and the variables that changed the run; None
    /// in runs made before it was recorded, and in a merged run (each run it merged
    /// keeps its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<super::provenance::Provenance>,
    /// The image (name, id) of the container this ran in, when it ran in one (the compose runner).
    #[serde(default)]
    pub runner_image: Option<String>,
    /// Server containers (and their caches) this run set to its cap before loading.
    #[serde(default)]
    pub server_fits: Vec<crate::server_caps::ServerFit>,
    pub loads: Vec<LoadReport>,
    /// What deflate and zstd make of each dataset's blobs, sampled when the run began (none in
    /// results from before it was measured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compressibility: Vec<crate::dataset::compressibility::Compressibility>,
    /// One client, closed loop: criterion's (or `measure`'s) fetches.
    pub results: Vec<EngineResult>,
    /// More clients, or a rate offered: the load generator's (`load_gen`).
    #[serde(default)]
    pub load_results: Vec<LoadResult>,
    /// The highest rate each engine sustained within the target (`--mode saturate`).
    #[serde(default)]
    pub saturations: Vec<SaturationResult>,
    /// Loads not run: their fetches in flight would not fit under a cap (`memory_fit`).
    #[serde(default)]
    pub skipped_loads: Vec<crate::load_gen::memory_fit::SkippedLoad>,
    /// The disk's own random-read throughput per size and client count of the loads
    /// (O_DIRECT, queue depth = clients): their physical limit, measured in the run.
    #[serde(default)]
    pub disk_limits: Vec<DiskLimit>,
    /// CPU profiles of one client's fetches (`--profile-fetches`).
    #[serde(default)]
    pub profiles: Vec<crate::cpu_profile::FetchProfile>,
    /// The time to the first bytes of blobs >= 1 MiB, per engine, size and cache state.
    #[serde(default)]
    pub first_bytes: Vec<crate::measure::first_bytes::FirstBytes>,
    /// Steps that failed for one store or engine while the run went on with the
    /// others (without `--fail-fast`): the run exits non-zero naming them.
    #[serde(default)]
    pub failures: Vec<StepFailure>,
    /// The runs this one was merged from (`blobrace merge`); empty for a measured run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<crate::records::merged_run::MergedRun>,
    /// What a later run with the same flags must match to continue this one
    /// (`run::resume`); empty in merged runs and results from before.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resume_key: String,
    /// The processes that measured this run, in order: one, or more where a stopped
    /// run was continued (`run_parts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<crate::records::run_parts::RunPart>,
    /// The cells measured to their end, and by which part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done_cells: Vec<crate::records::run_parts::DoneCell>,
    /// The readahead of each disk the run read from (`--readahead`); None in results
    /// from before it was set (the host's, `machine.data_read_ahead_kb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readahead: Option<crate::cap::readahead::ReadaheadReport>,
    /// The network put between the engines and their servers (`--network-rtt`); None:
    /// loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::deploy::network::NetworkReport>,
    /// The emulated disk the data directory was on (`--disk-latency`); None: the
    /// machine's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_disk: Option<crate::deploy::slow_disk::SlowDiskReport>,
}

/// The part of a run a failure stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailedStage {
    /// Loading a dataset into a store: none of its engines is measured at that size.
    Load,
    /// Preparing, measuring or recording one engine in one scenario.
    Measure,
    /// Dropping a size class's dataset (`--drop-after`).
    Drop,
}

impl fmt::Display for FailedStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::serde_name(self))
    }
}

/// One step that failed for one store or engine at one size, and why (Docker's or
/// the database's reason where there is one).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepFailure {
    pub stage: FailedStage,
    /// The store (load, drop) or the engine's scenario label (measure).
    pub who: String,
    pub size: SizeClass,
    pub why: String,
    pub at: String,
}

impl StepFailure {
    pub fn new(stage: FailedStage, who: String, size: SizeClass, error: &anyhow::Error) -> Self {
        Self {
            stage,
            who,
            size,
            why: format!("{error:#}"),
            at: crate::now_rfc3339(),
        }
    }

    /// `load of mariadb at 64KiB failed: ...`
    pub fn line(&self) -> String {
        format!(
            "{} of {} at {} failed: {}",
            self.stage, self.who, self.size, self.why
        )
    }
}

/// One engine at one size under one load (`LoadPoint`): the context every result
/// records (`result`; its `measured` holds the service times, with disk bytes as
/// totals and no hit/miss split), and what the load adds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadResult {
    pub result: EngineResult,
    pub load: LoadFacts,
}

/// What a load measured beyond service times.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadFacts {
    pub point: LoadPoint,
    pub max_in_flight: u32,
    pub measured_seconds: f64,
    /// Fetches completed per second of measurement.
    pub fetches_per_s: f64,
    /// Blob bytes returned per second, in MB (10^6).
    pub mb_per_s: f64,
    /// Open loop: intended start → end, the arrivals due in the measurement.
    pub response: Option<Percentiles>,
    pub response_histogram: Option<LogHistogram>,
    /// Open loop: the exact response-time histogram (`stats::hdr`); None in closed
    /// loop and in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_hdr: Option<String>,
    /// Open loop: how late fetches started.
    pub lag: Option<Percentiles>,
    pub offered: Option<u64>,
    pub unserved: u64,
    pub backlog_max: u64,
    pub limit_reached: bool,
    /// This process's CPU while measuring (the load generator; in-process engines too).
    pub cpu: CpuUse,
    pub disk: DiskTotals,
}

impl LoadFacts {
    pub fn of(m: &LoadMeasured, point: LoadPoint, max_in_flight: u32) -> Self {
        let seconds = m.measured_seconds.max(1e-9);
        Self {
            point,
            max_in_flight,
            measured_seconds: m.measured_seconds,
            fetches_per_s: m.achieved_rate(),
            mb_per_s: m.measured.bytes_returned as f64 / seconds / 1e6,
            response: m.response.as_ref().map(Percentiles::of),
            response_histogram: m.response.as_ref().map(LogHistogram::of),
            response_hdr: m.response.as_ref().map(crate::stats::hdr::encode),
            lag: m.lag.as_ref().map(Percentiles::of),
            offered: m.offered,
            unserved: m.unserved,
            backlog_max: m.backlog_max,
            limit_reached: m.limit_reached,
            cpu: m.cpu,
            disk: m.disk.clone(),
        }
    }

    /// The headline: response time in open loop, else the service time.
    pub fn headline<'a>(&'a self, service: &'a Percentiles) -> &'a Percentiles {
        self.response.as_ref().unwrap_or(service)
    }

    /// Why a load measured no fetch.
    pub fn no_fetch_why(&self) -> String {
        if self.limit_reached {
            format!(
                "the backlog reached the in-flight limit ({}) during the warm-up: the engine does not serve this rate",
                self.max_in_flight
            )
        } else if let Some(rate) = self.point.rate.filter(|r| r * self.measured_seconds < 1.0) {
            // At a low rate the measurement can hold no arrival at all.
            format!(
                "at {rate}/s, {:.1} s of measurement holds less than one arrival: measure for {:.0} s or more (--measure), or offer a higher rate",
                self.measured_seconds,
                (5.0 / rate).ceil()
            )
        } else {
            "no fetch started inside the measurement (every client was still busy with a fetch begun in the warm-up): measure longer (--measure)".to_string()
        }
    }

    /// What the headline percentiles are.
    pub fn headline_word(&self) -> &'static str {
        if self.response.is_some() {
            "response"
        } else {
            "service"
        }
    }
}

/// The disk's own throughput at one size class's block and one queue depth.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DiskLimit {
    pub size_bytes: u64,
    pub size: String,
    pub queue_depth: u32,
    pub measured_at: String,
    /// The throughput, or why it could not be measured.
    pub throughput: Result<crate::disk::probe::DiskThroughput, String>,
}

impl RunResults {
    /// The disk's throughput at a size and queue depth, if measured.
    pub fn disk_limit(&self, size_bytes: u64, queue_depth: u32) -> Option<&DiskLimit> {
        self.disk_limits
            .iter()
            .find(|d| d.size_bytes == size_bytes && d.queue_depth == queue_depth)
    }
}

/// The sustainable rate of one engine at one size with a number of clients.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SaturationResult {
    pub engine: EngineKind,
    #[serde(flatten)]
    pub scenario: Scenario,
    pub size_bytes: u64,
    pub size: String,
    pub clients: u32,
    pub arrivals: Arrivals,
    pub target_p99: Duration,
    pub search: Saturation,
    /// The sustainable rate in MB/s of blobs (None when no rate met the target).
    pub sustainable_mb_per_s: Option<f64>,
    pub settings: EngineSettings,
    pub cap: Option<CapReport>,
    pub regime: Regime,
    pub started_at: String,
    pub finished_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatasetFacts {
    pub rows: u64,
    pub bytes: u64,
    pub seed: u64,
    pub location: String,
    /// What its blobs hold (`--content`); random where not said.
    #[serde(
        default,
        skip_serializing_if = "crate::dataset::documents::Content::is_random"
    )]
    pub content: crate::dataset::documents::Content,
    /// The bytes the store keeps for the dataset, measured when the result was recorded
    /// (a server's own count, a local store's blocks on disk); absent where it could not
    /// be read. Below `bytes` where the store compressed the blobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_bytes: Option<u64>,
}

/// Which measurement of an engine at a size this is: its cache state, and which
/// repeat of the engine list (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Scenario {
    pub cache: CacheState,
    pub repeat: u32,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            cache: CacheState::Cold,
            repeat: 1,
        }
    }
}

impl Scenario {
    /// `sqlite-raw`, `sqlite-raw.steady`, `sqlite-raw.cold.r2`: criterion's id and
    /// the terminal's name (the plain name for a cold first repeat, as before). No
    /// `/`: criterion splits ids and names directories on it.
    pub fn label(self, engine: EngineKind, run_caches: &[CacheState], repeats: u32) -> String {
        let mut label = engine.name().to_string();
        if run_caches.len() > 1 || self.cache != CacheState::Cold {
            label = format!("{label}.{}", self.cache.name());
        }
        if repeats > 1 {
            label = format!("{label}.r{}", self.repeat);
        }
        label
    }
}

/// One engine at one size class.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineResult {
    pub engine: EngineKind,
    /// Cache state and repeat (results from before them: cold, repeat 1).
    #[serde(flatten)]
    pub scenario: Scenario,
    /// How steady state was reached and whether it was (steady results only).
    #[serde(default)]
    pub steady: Option<SteadyReport>,
    pub size_bytes: u64,
    pub size: String,
    pub dataset: DatasetFacts,
    pub settings: EngineSettings,
    /// The cap this engine ran under: the measuring process's for embedded engines,
    /// the container's (read through Docker) for servers; None when it cannot be known.
    pub cap: Option<CapReport>,
    pub regime: Regime,
    /// What was done to start cold.
    pub eviction: EvictionReport,
    /// What counted the bytes read from storage per fetch, or "unavailable: why".
    #[serde(default)]
    pub disk_counter: String,
    /// The disk probed (O_DIRECT) right before the warm-up and right after the
    /// measurement; None when probing was off (or in results from before probes).
    #[serde(default)]
    pub disk_probes: Option<crate::disk::probe::DiskProbes>,
    /// A server's container before and after (warm-up included): memory, page cache,
    /// CPU time, reads. None for embedded engines, or when Docker could not say.
    #[serde(default)]
    pub container: Option<ContainerStats>,
    pub warm_up: Summary,
    pub measured: Summary,
    /// Under `--precision`: the precision asked, got, and why the measurement stopped;
    /// None for a fixed measuring time (and in results from before).
    #[serde(default)]
    pub precision: Option<crate::stats::precision::PrecisionReport>,
    /// criterion measurement calls behind `measured` (its sample count), when criterion drove.
    pub criterion_samples: Option<u64>,
    /// Peak resident memory of the measuring process during this step (VmHWM, reset
    /// when the step starts; in results before that, the peak so far): memory the
    /// harness holds inside the cap is memory the page cache cannot use.
    pub process_peak_rss_bytes: Option<u64>,
    /// This step's own memory peaks (the process, its cgroup, the kernel's share);
    /// None in results written before they were recorded.
    #[serde(default)]
    pub step_memory: Option<crate::cap::StepMemory>,
    /// The writer replacing rows while this was measured (`--write-rate`); None
    /// without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<crate::workload::live::WriterReport>,
    pub started_at: String,
    pub finished_at: String,
    /// A server blobrace does not manage (`db::server::place`): why it is taken as
    /// one, its URL without the password. None for the compose containers and
    /// embedded engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// A server's round trip (`SELECT 1` timed on a connection of its own) right
    /// before the warm-up; None for embedded engines, or where it could not be had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip: Option<crate::db::server::round_trip::RoundTrip>,
    /// The runs whose fetches this holds, in a merged run (`blobrace merge`); empty
    /// in a measured run (it is its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
}

/// Held while results.json is written (`RunResults::write`, `run::interrupt`).
pub static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl RunResults {
    /// The result of one engine at one size class, if it was measured (the first
    /// scenario's: use on a `view` where a run has several).
    pub fn result(&self, engine: EngineKind, size_bytes: u64) -> Option<&EngineResult> {
        self.results
            .iter()
            .find(|r| r.engine == engine && r.size_bytes == size_bytes)
    }

    /// Another engine's result in the same scenario and size as `r` (the floor of the
    /// same round, an ORM engine's raw twin).
    pub fn twin(&self, r: &EngineResult, engine: EngineKind) -> Option<&EngineResult> {
        self.results.iter().find(|o| {
            o.engine == engine && o.size_bytes == r.size_bytes && o.scenario == r.scenario
        })
    }

    /// One engine at one size and cache state pooled over every repeat measured.
    pub fn pooled(
        &self,
        engine: EngineKind,
        size_bytes: u64,
        cache: CacheState,
    ) -> crate::stats::Pooled {
        self.pooled_at(engine, size_bytes, cache, 0.95)
    }

    /// `pooled` with intervals at `confidence`.
    pub fn pooled_at(
        &self,
        engine: EngineKind,
        size_bytes: u64,
        cache: CacheState,
        confidence: f64,
    ) -> crate::stats::Pooled {
        crate::stats::pool_at(&self.repeats_of(engine, size_bytes, cache), confidence)
    }

    /// The measured summaries of every repeat of one engine at one size and cache
    /// state, repeat 1 first.
    pub fn repeats_of(
        &self,
        engine: EngineKind,
        size_bytes: u64,
        cache: CacheState,
    ) -> Vec<&Summary> {
        let mut repeats: Vec<&EngineResult> = self
            .results
            .iter()
            .filter(|r| {
                r.engine == engine && r.size_bytes == size_bytes && r.scenario.cache == cache
            })
            .collect();
        repeats.sort_by_key(|r| r.scenario.repeat);
        repeats.into_iter().map(|r| &r.measured).collect()
    }

    /// The cache states measured, in the order of the run.
    pub fn caches(&self) -> Vec<CacheState> {
        let mut caches: Vec<CacheState> = self
            .results
            .iter()
            .map(|r| r.scenario.cache)
            .chain(self.load_results.iter().map(|l| l.result.scenario.cache))
            .chain(self.saturations.iter().map(|s| s.scenario.cache))
            .collect();
        caches.sort();
        caches.dedup();
        caches
    }

    /// Repeats of the engine list in the results.
    pub fn repeats(&self) -> u32 {
        self.results
            .iter()
            .map(|r| r.scenario.repeat)
            .max()
            .unwrap_or(1)
    }

    /// The run as if it had measured one cache state once: its first repeat. The
    /// report draws one view per cache state; repeats show as their spread.
    pub fn view(&self, cache: CacheState) -> RunResults {
        let mut view = self.clone();
        let first = |s: &Scenario| s.cache == cache && s.repeat == 1;
        view.results.retain(|r| first(&r.scenario));
        view.load_results.retain(|l| first(&l.result.scenario));
        view.saturations.retain(|s| first(&s.scenario));
        view.first_bytes.retain(|f| f.cache == cache.name());
        view
    }

    pub fn dir(&self) -> PathBuf {
        self.config.results_dir.join(&self.run_id)
    }

    /// Write results.json into the run's directory (created if needed).
    pub fn write(&self) -> Result<PathBuf> {
        // One writer at a time: the run, or its interrupt marking the part stopped.
        let _writing = WRITING.lock();
        let dir = self.dir();
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        write_atomic(&dir.join("results.json"), &serde_json::to_vec_pretty(self)?)?;
        Ok(dir)
    }

    /// The run directory `id` names: `id` itself where it holds a results.json, else
    /// the run of that id under `results_dir` (which may not exist).
    pub fn dir_named(id: &str, results_dir: &Path) -> PathBuf {
        let dir = Path::new(id);
        if dir.join("results.json").exists() {
            dir.to_path_buf()
        } else {
            results_dir.join(id)
        }
    }

    /// A results file of another schema is refused with both versions: fields it
    /// names differently would otherwise read as missing, silently.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&bytes, path)
    }

    /// results.json's `bytes` (read from `path`), checked for its schema first.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Self> {
        #[derive(Deserialize)]
        struct Schema {
            schema_version: Option<u32>,
        }
        if let Ok(Schema {
            schema_version: Some(found),
        }) = serde_json::from_slice::<Schema>(bytes)
            && found != RESULTS_SCHEMA_VERSION
        {
            anyhow::bail!(
                "{} is a results file of schema {found}, and this blobrace reads schema {RESULTS_SCHEMA_VERSION}: read it with the blobrace version that wrote it, or measure again",
                path.display()
            );
        }
        serde_json::from_slice(bytes).with_context(|| {
            format!(
                "{} is not a blobrace results file (corrupt or from another tool)",
                path.display()
            )
        })
    }
}
