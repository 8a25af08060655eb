//! What a run writes: `<results-dir>/<run-id>/results.json` (everything) and
//! `results.csv` (one row per engine and size). Rewritten atomically after every
//! measurement, so a crash leaves the last complete state, never half a file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::cap::CapReport;
use crate::config::RunConfig;
use crate::container::ContainerStats;
use crate::engine::{EngineKind, EngineSettings};
use crate::evict::EvictionReport;
use crate::load::LoadReport;
use crate::machine::MachineFacts;
use crate::stats::Summary;

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
    /// The image (name, id) of the container this ran in, when it ran in one (the compose runner).
    #[serde(default)]
    pub runner_image: Option<String>,
    pub loads: Vec<LoadReport>,
    pub results: Vec<EngineResult>,
}

/// Whether the data can sit in memory: the question the cap is there to answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Regime {
    pub dataset_bytes: u64,
    /// The cap if there is one, else the machine's RAM.
    pub effective_memory_bytes: u64,
    /// "cap" or "ram (uncapped)".
    pub basis: String,
    pub ratio: f64,
    /// "disk-bound" (dataset larger than memory) or "fits-in-memory".
    pub verdict: String,
}

impl Regime {
    pub fn of(dataset_bytes: u64, cap: Option<&CapReport>, ram_bytes: u64) -> Self {
        let (effective, basis) = match cap.and_then(|c| c.memory_limit_bytes) {
            Some(limit) => (limit, "cap".to_string()),
            None => (ram_bytes, "ram (uncapped)".to_string()),
        };
        let ratio = dataset_bytes as f64 / effective.max(1) as f64;
        Self {
            dataset_bytes,
            effective_memory_bytes: effective,
            basis,
            ratio,
            verdict: if ratio > 1.0 {
                "disk-bound"
            } else {
                "fits-in-memory"
            }
            .into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatasetFacts {
    pub rows: u64,
    pub bytes: u64,
    pub seed: u64,
    pub location: String,
}

/// One engine at one size class.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineResult {
    pub engine: EngineKind,
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
    /// A server's container before and after (warm-up included): memory, page cache,
    /// CPU time, reads. None for embedded engines, or when Docker could not say.
    #[serde(default)]
    pub container: Option<ContainerStats>,
    pub warm_up: Summary,
    pub measured: Summary,
    /// criterion measurement calls behind `measured` (its sample count), when criterion drove.
    pub criterion_samples: Option<u64>,
    /// Peak resident memory of the measuring process so far (VmHWM): memory the
    /// harness holds inside the cap is memory the page cache cannot use.
    pub process_peak_rss_bytes: Option<u64>,
    pub started_at: String,
    pub finished_at: String,
}

/// `20261122-103105-4242`: sortable, unique per process.
pub fn new_run_id() -> String {
    format!(
        "{}-{}",
        chrono::Utc::now().format("%Y%m%d-%H%M%S"),
        std::process::id()
    )
}

/// Write to `<path>.tmp`, then rename: readers never see half a file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} into place", path.display()))
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|v| v.to_string())
        .unwrap_or_else(|| "unavailable".into())
}

/// "uncapped" when the engine has no such limit, "unavailable" when its cap is unknown.
fn cap_field(cap: Option<&CapReport>, value: impl Fn(&CapReport) -> Option<String>) -> String {
    match cap {
        Some(c) => value(c).unwrap_or_else(|| "uncapped".into()),
        None => "unavailable".into(),
    }
}

impl RunResults {
    pub fn dir(&self) -> PathBuf {
        self.config.results_dir.join(&self.run_id)
    }

    pub fn write(&self) -> Result<PathBuf> {
        let dir = self.dir();
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        write_atomic(&dir.join("results.json"), &serde_json::to_vec_pretty(self)?)?;
        write_atomic(&dir.join("results.csv"), self.to_csv().as_bytes())?;
        Ok(dir)
    }

    pub fn read(path: &Path) -> Result<Self> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a blobrace results file", path.display()))
    }

    /// One row per (engine, size); latencies in nanoseconds; "unavailable" where unknown.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "run_id,engine,size_bytes,rows,count,mean_ns,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,hit_ratio,hit_p50_ns,miss_p50_ns,miss_p99_ns,disk_bytes_per_fetch,cap_memory_bytes,cap_cpus,regime_ratio,regime\n",
        );
        for r in &self.results {
            let m = &r.measured;
            let _ = writeln!(
                out,
                "{},{},{},{},{},{:.0},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{}",
                self.run_id,
                r.engine,
                r.size_bytes,
                r.dataset.rows,
                m.count,
                m.latency.mean_ns,
                m.latency.p50_ns,
                m.latency.p90_ns,
                m.latency.p99_ns,
                m.latency.p999_ns,
                m.latency.max_ns,
                opt(m.hit_ratio.map(|h| format!("{h:.4}"))),
                opt(m.hits.map(|h| h.p50_ns)),
                opt(m.misses.map(|h| h.p50_ns)),
                opt(m.misses.map(|h| h.p99_ns)),
                opt(m.disk_bytes_per_fetch.map(|d| format!("{d:.0}"))),
                cap_field(r.cap.as_ref(), |c| c
                    .memory_limit_bytes
                    .map(|b| b.to_string())),
                cap_field(r.cap.as_ref(), |c| c.cpu_limit.map(|c| c.to_string())),
                r.regime.ratio,
                r.regime.verdict,
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cap::{CapOrigin, CapRequest};

    fn cap(limit: Option<u64>) -> CapReport {
        CapReport {
            requested: CapRequest {
                memory_bytes: Some(1 << 30),
                cpus: Some(2.0),
            },
            memory_limit_bytes: limit,
            cpu_limit: None,
            origin: if limit.is_some() {
                CapOrigin::Created
            } else {
                CapOrigin::Uncapped
            },
            cgroup_version: "v1".into(),
            cgroup: "/x".into(),
            notes: vec![],
        }
    }

    #[test]
    fn regime_compares_data_with_the_cap_or_ram() {
        let r = Regime::of(3 << 30, Some(&cap(Some(1 << 30))), 24 << 30);
        assert_eq!(
            (r.ratio, r.verdict.as_str(), r.basis.as_str()),
            (3.0, "disk-bound", "cap")
        );
        let r = Regime::of(3 << 30, Some(&cap(None)), 24 << 30);
        assert_eq!(r.verdict, "fits-in-memory");
        assert_eq!(r.basis, "ram (uncapped)");
        assert_eq!(r.ratio, 0.125);
    }
}
