//! Load: many clients at once (closed loop), or fetches offered at a rate whether
//! or not earlier ones finished (open loop), and the search for the highest rate an
//! engine sustains within a latency target (`saturate`). criterion times one fetch
//! at a time; this is blobrace's own loop for everything else.
//!
//! ```text
//! client thread k (k = 0..clients), each with its own engine (connection, file, pool
//! of one) and its own current-thread runtime:
//!   closed loop:  id = next of stream k; start = now; fetch; service = now - start
//!   open loop:    i = next arrival (shared schedule); wait until intended_i;
//!                 start = now; fetch; end = now
//!                 service = end - start   response = end - intended_i   lag = start - intended_i
//! main thread:    sample the disk counter and completions every 200 ms; watch the backlog
//!                 (arrivals due - fetches done) against --max-in-flight; CPU of this process
//! ```
//!
//! Response time counts from when the fetch was due, so a stall delays every fetch
//! queued behind it in the figures too (coordinated omission: wrk2, YCSB's
//! `measurement.interval=intended`). Arrivals still waiting when the run ends are
//! recorded with the time they had waited so far (a lower bound) and counted as unserved.
//!
//! With concurrent fetches a storage read cannot be charged to one fetch: disk bytes
//! are totals per 200 ms window, divided by the fetches completed in it. Hit/miss per
//!
//! `schedule.rs` draws the ids and arrival times, `clients.rs` runs the client threads
//! and the watcher and merges what they measured, `saturate.rs` searches the
//! sustainable rate.

mod clients;
pub mod memory_fit;
mod saturate;
mod schedule;
#[cfg(test)]
mod tests;

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::stats::{FetchStats, Percentiles, rate_label};

pub use clients::run_load;
pub use saturate::{Saturation, SaturationStep, search};

/// How arrivals are spaced in the open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process, as pgbench --rate): independent users.
    Poisson,
    /// Equal gaps (wrk2 -R): the steadiest load.
    Constant,
}

impl Arrivals {
    /// As the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Poisson => "poisson",
            Arrivals::Constant => "constant",
        }
    }
}

/// One load: how many clients, and whether they are offered a rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadPoint {
    pub clients: u32,
    /// Fetches/s offered (open loop); None: each client fetches as soon as its last
    /// fetch ended (closed loop).
    pub rate: Option<f64>,
    pub arrivals: Arrivals,
}

impl LoadPoint {
    pub fn closed(clients: u32) -> Self {
        Self {
            clients,
            rate: None,
            arrivals: Arrivals::Poisson,
        }
    }

    pub fn open(clients: u32, rate: f64, arrivals: Arrivals) -> Self {
        Self {
            clients,
            rate: Some(rate),
            arrivals,
        }
    }

    /// One client, closed loop: what criterion and `measure::FetchLoop` measure.
    pub fn is_single_closed(&self) -> bool {
        self.clients == 1 && self.rate.is_none()
    }

    /// `c16` (closed), `c16@500/s` (open).
    pub fn label(&self) -> String {
        match self.rate {
            None => format!("c{}", self.clients),
            Some(rate) => format!("c{}@{}/s", self.clients, rate_label(rate)),
        }
    }
}

/// How long a load runs and its limit.
#[derive(Debug, Clone, Copy)]
pub struct LoadSettings {
    pub warm_up: Duration,
    pub measure: Duration,
    /// Open loop: most arrivals due but not finished before the load is called
    /// beyond what the engine serves and stopped.
    pub max_in_flight: u32,
    /// CPUs the process may use (its cap, else the machine's): the CPU share's base.
    pub cpus: f64,
    /// Which ids the clients ask for.
    pub access: crate::workload::access::Access,
}

/// CPU time of this process while measuring: the load generator's own (and, for an
/// engine inside this process, the engine's too).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    pub process_seconds: f64,
    pub wall_seconds: f64,
    pub cpus: f64,
}

impl CpuUse {
    /// Share of the CPUs the process may use, 0..1.
    pub fn share(&self) -> f64 {
        self.process_seconds / (self.wall_seconds * self.cpus).max(1e-9)
    }
}

/// Storage bytes read in one 200 ms window of the measurement, and fetches done in it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DiskWindow {
    pub start_s: f64,
    pub bytes: u64,
    pub fetches: u64,
}

/// Disk reads of a load, as totals (no per-fetch attribution with concurrent fetches).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskTotals {
    /// What counted them, or "unavailable: why".
    pub source: String,
    /// Bytes read during the measurement; None when unavailable.
    pub bytes: Option<u64>,
    pub windows: Vec<DiskWindow>,
}

impl DiskTotals {
    /// Bytes read ÷ fetches completed, over the measurement.
    pub fn per_fetch(&self, fetches: u64) -> Option<f64> {
        self.bytes
            .filter(|_| fetches > 0)
            .map(|b| b as f64 / fetches as f64)
    }
}

/// What one load measured.
pub struct LoadMeasured {
    pub warm_up: FetchStats,
    /// Service times (start → end) of the measured fetches, in windows.
    pub measured: FetchStats,
    /// Open loop: response times (intended start → end) of the arrivals due in the
    /// measurement, unserved ones at the time they had waited.
    pub response: Option<Histogram<u64>>,
    /// Open loop: how late fetches started (start - intended).
    pub lag: Option<Histogram<u64>>,
    pub measured_seconds: f64,
    /// Open loop: arrivals due during the measurement.
    pub offered: Option<u64>,
    /// Open loop: of those, arrivals never started when the load ended.
    pub unserved: u64,
    /// Open loop: the largest backlog (arrivals due, not finished) seen.
    pub backlog_max: u64,
    /// Open loop: the backlog reached `max_in_flight` and the load was stopped there.
    pub limit_reached: bool,
    pub cpu: CpuUse,
    pub disk: DiskTotals,
}

impl LoadMeasured {
    /// Fetches completed per second of measurement.
    pub fn achieved_rate(&self) -> f64 {
        self.measured.count() as f64 / self.measured_seconds.max(1e-9)
    }

    /// The headline percentiles: response time in open loop, service time in closed.
    pub fn headline(&self) -> Percentiles {
        match &self.response {
            Some(h) => Percentiles::of(h),
            None => Percentiles::of(&self.measured.all),
        }
    }
}
