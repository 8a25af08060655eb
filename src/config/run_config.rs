//! What a run resolves to: validated settings, recorded with its results.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cap::CapRequest;
use crate::cap::disk::DiskCap;
use crate::dataset::DatasetSpec;
use crate::dataset::lock::Waiting;
use crate::db::locations::Locations;
use crate::db::registry::{DatabaseKnobs, EngineKind};
use crate::db::server::Server;

/// The workload of a written dataset (`--write-rate 0`) read without its writer.
pub const NO_WRITER: &str = "live dataset, no writer";
use crate::dataset::key::KeyType;
use crate::load_gen::{Arrivals, LoadPoint, LoadSettings};
use crate::size::SizeClass;
use crate::stats::precision::Targets;
use crate::workload::steady::CacheState;

use super::DEFAULT_TARGET_P99;
use super::args::Mode;
use super::preset::Preset;

/// Default engines a run left out (`run::leave_out`): their names and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LeftOut {
    pub engines: Vec<String>,
    pub why: String,
}

/// Validated settings of one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    /// The preset the run started from (`--profile`; results.json says `profile`).
    #[serde(rename = "profile")]
    pub preset: Preset,
    pub engines: Vec<EngineKind>,
    /// Engines named on the command line must run; defaults may be skipped (servers not up).
    pub engines_explicit: bool,
    /// Default engines this run left out, and why (a server not up, one needing a
    /// larger cap, one that did not come up under the run's cap): said in the report,
    /// never a silent gap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// One size class per dataset, or, with `size_mix`, the mix's largest blob alone.
    pub sizes: Vec<SizeClass>,
    /// Blobs of many sizes in one dataset (`--size-mix`), instead of size classes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_mix: Option<crate::dataset::mix::MixRef>,
    pub dataset_bytes: u64,
    /// The cap asked for the servers' containers, and for this process unless
    /// `uncapped_in_process` (`process_cap`).
    pub cap: CapRequest,
    /// `--uncapped-in-process`: `cap` holds for the servers only (the seed's post's
    /// conditions).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncapped_in_process: bool,
    /// The disk cap of the measuring process (`--disk-cap`), None for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_cap: Option<DiskCap>,
    /// The readahead asked for the data's disk (`--readahead`); results from before it
    /// existed ran at the host's.
    #[serde(default)]
    pub readahead: crate::cap::readahead::Readahead,
    /// `--readahead` was given: a value that cannot be set refuses the run, where the
    /// default is only said.
    #[serde(skip)]
    pub readahead_explicit: bool,
    /// The round trip added between the engines and their servers (`--network-rtt`),
    /// None for loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_rtt: Option<crate::deploy::network::NetworkRtt>,
    /// Where each server's engines fetch through once the run set its proxy up (with
    /// passwords: never recorded).
    #[serde(skip)]
    pub fetch_urls: BTreeMap<Server, String>,
    /// Where each server was found once the run saw it answer (`reachable_engines`):
    /// its compose container or remote. Results record it per result (`remote`).
    #[serde(skip)]
    pub places: crate::db::server::place::Places,
    /// Each read and write of the data's disk delayed (`--disk-latency`): the data
    /// directory on an emulated disk; None for the machine's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_latency: Option<crate::deploy::slow_disk::DiskLatency>,
    /// The deployment the run named (`--deployment`), its parts in the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<crate::deploy::presets::DeploymentRef>,
    pub seed: u64,
    pub data_dir: PathBuf,
    pub results_dir: PathBuf,
    pub warmup: Duration,
    pub measure: Duration,
    /// How long each disk probe reads (0: none).
    #[serde(default)]
    pub disk_probe: Duration,
    /// Cache states measured, in order (results from before: cold only).
    #[serde(default = "cold_only")]
    pub cache: Vec<CacheState>,
    #[serde(default)]
    pub steady_limit: Duration,
    /// Times the engine list is measured (rotating order).
    #[serde(default = "one")]
    pub repeat: u32,
    /// Fetches a measurement keeps going for, within twice `measure` (0: time only).
    #[serde(default)]
    pub min_fetches: u64,
    /// `--precision`; None: a fixed `measure` (and results from before). Then
    /// `measure` is the least time, `measure_limit` the most.
    #[serde(default)]
    pub precision: Option<Targets>,
    #[serde(default)]
    pub measure_limit: Duration,
    pub samples: usize,
    /// Each database's own settings (`pg_storage`, `sqlite_page_size`, ...: the names
    /// each database's folder gives them, at the top of the settings).
    #[serde(flatten)]
    pub database_knobs: DatabaseKnobs,
    #[serde(default)]
    pub key: KeyType,
    /// What the blobs hold (`--content`); random in results from before it existed.
    #[serde(
        default,
        skip_serializing_if = "crate::dataset::documents::Content::is_random"
    )]
    pub content: crate::dataset::documents::Content,
    #[serde(default = "default_target_p99")]
    pub target_p99: Duration,
    #[serde(default)]
    pub drop_after: bool,
    /// `--keep-all`: refuse where every dataset does not fit at once, rather than
    /// plan which to keep (`disk_room::KeepPlan`).
    #[serde(default)]
    pub keep_all: bool,
    /// Refuse, instead of waiting, where another process holds a dataset.
    #[serde(default)]
    pub no_wait: bool,
    /// Stop at the first failing engine instead of recording it and going on.
    #[serde(default)]
    pub fail_fast: bool,
    /// `--fresh`: never continue an earlier run (`run::resume`). Not recorded: a part
    /// started fresh is a run like any other.
    #[serde(skip)]
    pub fresh: bool,
    /// Client counts (results from before: 1).
    #[serde(default = "one_client")]
    pub clients: Vec<u32>,
    /// Open-loop rates, fetches/s (empty: closed loop).
    #[serde(default)]
    pub rates: Vec<f64>,
    #[serde(default = "poisson")]
    pub arrivals: Arrivals,
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: u32,
    #[serde(default)]
    pub mode: Mode,
    /// Open-loop steps of each saturation search.
    #[serde(default)]
    pub saturate_steps: u32,
    /// Latency runs: sizes that also get a saturation search, with the most clients.
    #[serde(default)]
    pub saturate_sizes: Vec<SizeClass>,
    /// CPU profile of each engine's fetches for this long after its 1-client measurement.
    #[serde(default)]
    pub profile_fetches: Option<Duration>,
    /// Streamed fetches of blobs >= 1 MiB for this long after each 1-client measurement
    /// (the time to their first bytes); zero: none.
    #[serde(default)]
    pub first_bytes: Duration,
    /// Which ids the fetches ask for (results from before: uniform).
    #[serde(default)]
    pub access: crate::workload::access::Access,
    /// The churn applied to every dataset after its load (`--churn`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub churn: Option<crate::dataset::churn::Churn>,
    /// Reads while writing (`--write-rate`): the writer's changes a second, on the
    /// datasets' live copies; Some(0): those copies without a writer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_rate: Option<f64>,
    /// Where the run's progress is served as OpenMetrics (`--metrics-addr`), if asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// `--share i/n`: `sizes` are this machine's share of the sizes asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<super::Share>,
    /// Server URLs carry passwords: never written to results.
    #[serde(skip)]
    pub server_urls: BTreeMap<Server, String>,
}

fn cold_only() -> Vec<CacheState> {
    vec![CacheState::Cold]
}

fn one() -> u32 {
    1
}

fn one_client() -> Vec<u32> {
    vec![1]
}

fn poisson() -> Arrivals {
    Arrivals::Poisson
}

fn default_max_in_flight() -> u32 {
    256
}

fn default_target_p99() -> Duration {
    DEFAULT_TARGET_P99
}

impl RunConfig {
    /// The largest blob of the run's sizes (0 with none): what the servers' memory
    /// must hold.
    pub fn largest_blob(&self) -> u64 {
        self.sizes.iter().map(|s| s.bytes()).max().unwrap_or(0)
    }

    /// The cap asked for this process, and so for every store read in it: the run's,
    /// or none under `--uncapped-in-process`.
    pub fn process_cap(&self) -> CapRequest {
        if self.uncapped_in_process {
            CapRequest {
                memory_bytes: None,
                cpus: None,
            }
        } else {
            self.cap
        }
    }

    pub fn locations(&self) -> Locations {
        Locations {
            data_dir: self.data_dir.clone(),
            server_urls: self.server_urls.clone(),
            fetch_urls: self.fetch_urls.clone(),
            places: self.places.clone(),
            knobs: self.database_knobs.knobs(),
            memory_cap_bytes: self.process_cap().memory_bytes,
            lock_waiting: if self.no_wait {
                Waiting::Refuse
            } else {
                Waiting::Wait
            },
        }
    }

    /// The dataset layout and read settings of this run, for the report, led by its
    /// access distribution where that is not uniform (`blobrace variants` compares
    /// runs that differ in these): `key int · SQLite page 4096 B, mmap 0 · PostgreSQL
    /// storage extended · RocksDB blob files, min_blob_size 0 B`, `access zipfian:0.99 ·
    /// key int · …`.
    /// The engines asked for, sorted: those measured and those the run left out (a
    /// server not up), since a run's recorded engines are after it left some out.
    pub fn engines_asked(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .engines
            .iter()
            .map(|e| e.name().to_string())
            .chain(self.left_out.iter().flat_map(|l| l.engines.iter().cloned()))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    pub fn layout_label(&self) -> String {
        let workload: String = self.workload().iter().map(|w| format!("{w} · ")).collect();
        format!(
            "{workload}key {} · {}",
            self.key,
            self.database_knobs.label()
        )
    }

    /// How this run's datasets were read and changed, where that is not the default
    /// (uniform reads of a fresh dataset from the machine's own disk, nothing writing):
    /// `access zipfian:0.99`, `churn 30% replace`, `writer 50/s`, `live dataset, no
    /// writer` or `disk cap gp3`.
    pub fn workload(&self) -> Vec<String> {
        let mut parts = Vec::new();
        // Documents instead of random bytes: `variants` sets the contents side by side.
        if !self.content.is_random() {
            parts.push(format!("content {}", self.content));
        }
        if self.access != crate::workload::access::Access::Uniform {
            parts.push(format!("access {}", self.access));
        }
        if let Some(churn) = self.churn {
            parts.push(churn.to_string());
        }
        match self.write_rate {
            None => {}
            Some(rate) if rate > 0.0 => parts.push(format!("writer {rate}/s")),
            Some(_) => parts.push(NO_WRITER.into()),
        }
        // Read from another disk: `variants` sets a disk cap beside the machine's own.
        if let Some(disk) = &self.disk_cap {
            parts.push(format!("disk cap {}", disk.asked));
        }
        // A deployment by its name where it changes anything (nvme-host is the defaults:
        // the reference the others are divided by).
        let defaults = self.disk_cap.is_none()
            && self.disk_latency.is_none()
            && self.network_rtt.is_none()
            && self.readahead
                == crate::cap::readahead::Readahead::Kib(crate::cap::readahead::DEFAULT_KB);
        if let Some(d) = self.deployment.as_ref().filter(|_| !defaults) {
            parts.push(format!("deployment {}", d.name));
        }
        if let Some(latency) = self.disk_latency {
            parts.push(format!("disk latency {latency}"));
        }
        if let Some(rtt) = self.network_rtt {
            parts.push(format!("network rtt {rtt}"));
        }
        // The host's readahead beside Linux's default: another disk's behaviour.
        if self.readahead
            != crate::cap::readahead::Readahead::Kib(crate::cap::readahead::DEFAULT_KB)
        {
            parts.push(format!("readahead {}", self.readahead));
        }
        parts
    }

    /// The loads of a latency run, in order: each client count closed loop, or with
    /// `--rate`, each client count at each rate (open loop).
    pub fn load_points(&self) -> Vec<LoadPoint> {
        let mut points = Vec::new();
        for &clients in &self.clients {
            if self.rates.is_empty() {
                points.push(LoadPoint::closed(clients));
            }
            for &rate in &self.rates {
                points.push(LoadPoint::open(clients, rate, self.arrivals));
            }
        }
        points
    }

    /// `--precision`'s bounds, or None for a fixed measuring time.
    pub fn precision_goal(&self) -> Option<crate::measure::PrecisionGoal> {
        Some(crate::measure::PrecisionGoal {
            targets: self.precision?,
            min: self.measure,
            min_fetches: self.min_fetches,
            limit: self.measure_limit.max(self.measure),
        })
    }

    /// How a load runs: the run's timings, limit and CPUs.
    pub fn load_settings(&self, cpus: f64) -> LoadSettings {
        LoadSettings {
            warm_up: self.warmup,
            measure: self.measure,
            max_in_flight: self.max_in_flight,
            cpus,
            access: self.access,
        }
    }

    pub fn datasets(&self) -> Vec<DatasetSpec> {
        if let Some(mix) = self.size_mix {
            return vec![DatasetSpec {
                content: self.content,
                ..DatasetSpec::of_mix(mix, self.dataset_bytes, self.seed, self.key)
            }];
        }
        self.sizes
            .iter()
            .map(|&size| {
                let spec = DatasetSpec::new(size, self.dataset_bytes, self.seed, self.key);
                DatasetSpec {
                    churn: self.churn,
                    live: self.write_rate.is_some(),
                    content: self.content,
                    ..spec.expect("validated")
                }
            })
            .collect()
    }
}

impl RunConfig {
    /// criterion's sample count: `samples`, raised to the smallest n whose linear plan
    /// (1, 2, ... n iterations: n(n+1)/2 fetches at least) holds `min_fetches`.
    /// criterion keeps that plan while it fits in twice the measurement time
    /// (`SamplingMode::Auto`), and otherwise samples flat: fewer fetches, said in the
    /// result as "too few fetches" where a p99 needs more.
    pub fn criterion_samples(&self) -> usize {
        let mut n = self.samples.max(1) as u64;
        while n * (n + 1) / 2 < self.min_fetches {
            n += 1;
        }
        n as usize
    }
}
