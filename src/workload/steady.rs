//! The steady-state cache scenario (`--cache steady`): a cache filled to what a
//! long-running service would hold, instead of one emptied right before measuring.
//!
//! Right after eviction the hit ratio climbs for as long as it takes misses to fill
//! the cache: at 1 KiB over 3 GiB under a 1 GiB cap that is minutes, so a short
//! warm-up measures a transient. Steady state is reached in two steps:
//!
//! 1. **Prefill** (`prefill`): read random chunks of the dataset the way its engine's
//!    cache sees them (`Store::read_chunk`: the files' pages from inside the capped
//!    process, or range reads through a server into its buffers and its container's
//!    page cache) until the cache stops growing: full.
//! 2. **Settle** (`measure::FetchLoop::settle`): warm-up fetches in rounds until the
//!    hit ratio of the last `STABLE_ROUNDS` rounds agrees (`stable`), or a time limit.
//!
//! The result records whether it converged, the hit ratio reached and the model's
//! expectation for a uniform random read: cache held ÷ dataset.

use std::time::{Duration, Instant};

use anyhow::Result;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::db::store::Store;
use crate::workload::access::Access;

/// The state of the engine's cache when measuring starts.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum CacheState {
    /// Right after eviction: the cache fills while it is measured.
    #[default]
    Cold,
    /// Prefilled and settled: what a long-running service holds.
    Steady,
}

impl CacheState {
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Cold => "cold",
            CacheState::Steady => "steady",
        }
    }
}

/// Bytes one prefill read asks for (a whole blob when blobs are larger).
pub const CHUNK_BYTES: u64 = 1 << 20;
/// Chunks the prefill asks for at once (`Store::read_chunks`): a server measured to
/// reach the same steady state sooner that way reads them on connections of its own
/// (`SqlServer::prefill_connections`); every other store one after the other. Random
/// chunks either way, drawn in the same order.
const CHUNKS_AT_ONCE: u64 = 4;
/// The cache is read after every this many bytes of prefill.
const GAUGE_EVERY_BYTES: u64 = 64 << 20;
/// The cache counts as full once a gauge step grew it by less than this share of the step.
const FULL_GROWTH: f64 = 1.0 / 16.0;
/// Never read more than this many times the cache limit: a cache that still grows
/// after that is not filling from this dataset.
const MAX_READ_OF_LIMIT: u64 = 3;

/// Settling: a round is at least this long and this many fetches...
pub const ROUND_MIN: Duration = Duration::from_secs(1);
pub const ROUND_MIN_FETCHES: u64 = 200;
/// ... and the last this many rounds must agree.
pub const STABLE_ROUNDS: usize = 3;
/// Agreement: every round within this many points of their mean, or within two
/// standard errors of a round's binomial noise where fetches are few.
pub const STABLE_POINTS: f64 = 0.02;

/// How many bytes of the dataset the engine's cache holds now, as its cgroup or
/// container reports it; None when that cannot be read.
#[allow(async_fn_in_trait)]
pub trait CacheGauge {
    async fn cached_bytes(&mut self) -> Option<u64>;
    /// What the figure is (for the result).
    fn basis(&self) -> String;
}

/// The page cache charged to this process's cgroup: what SQLite, `fs` and the floor
/// read through. Includes a little that is not the dataset (the binary, SQLite's WAL).
pub struct CgroupGauge(pub crate::cap::CapReport);

impl CacheGauge for CgroupGauge {
    async fn cached_bytes(&mut self) -> Option<u64> {
        crate::cap::cgroup_page_cache_bytes(&self.0)
    }
    fn basis(&self) -> String {
        format!("page cache charged to cgroup {}", self.0.cgroup)
    }
}

/// A server's cache: its container's page cache (PostgreSQL's shared_buffers are
/// shared memory and counted there; pages cached twice are counted twice, so the
/// model is an upper bound) plus what the server caches privately (MariaDB's
/// buffer pool).
pub struct ServerGauge {
    pub docker: bollard::Docker,
    pub container_id: String,
    pub container_name: String,
    pub server: crate::db::server::Server,
    pub url: String,
}

impl CacheGauge for ServerGauge {
    async fn cached_bytes(&mut self) -> Option<u64> {
        let page_cache = crate::docker::container::sample(&self.docker, &self.container_id)
            .await
            .ok()?
            .page_cache_bytes?;
        let private = match self.server.memory().private_cache_sql() {
            None => 0,
            Some(sql) => {
                use sea_orm::ConnectionTrait;
                let db = self.server.connect(&self.url, None).await.ok()?;
                let row = db
                    .query_one_raw(sea_orm::Statement::from_string(
                        db.get_database_backend(),
                        sql.to_string(),
                    ))
                    .await
                    .ok()??;
                let n = row.try_get::<i64>("", "n").ok()?;
                let _ = db.close().await;
                n.max(0) as u64
            }
        };
        Some(page_cache + private)
    }
    fn basis(&self) -> String {
        match self.server.memory().private_cache_sql() {
            None => format!(
                "page cache of container {} (shared buffers included; pages cached twice count twice)",
                self.container_name
            ),
            Some(_) => format!(
                "page cache of container {} + data in the server's own buffer pool",
                self.container_name
            ),
        }
    }
}

/// The gauge of an engine's cache: its own cgroup's, or its server's.
pub enum AnyGauge {
    Cgroup(CgroupGauge),
    Server(ServerGauge),
    /// A remote server's cache cannot be read from here.
    Unreadable,
}

impl CacheGauge for AnyGauge {
    async fn cached_bytes(&mut self) -> Option<u64> {
        match self {
            AnyGauge::Cgroup(g) => g.cached_bytes().await,
            AnyGauge::Server(g) => g.cached_bytes().await,
            AnyGauge::Unreadable => None,
        }
    }
    fn basis(&self) -> String {
        match self {
            AnyGauge::Cgroup(g) => g.basis(),
            AnyGauge::Server(g) => g.basis(),
            AnyGauge::Unreadable => {
                "unavailable (a remote server's cache is not seen from here)".into()
            }
        }
    }
}

/// What the prefill did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prefill {
    pub bytes_read: u64,
    pub seconds: f64,
    pub cache_bytes_before: Option<u64>,
    pub cache_bytes_after: Option<u64>,
    /// Why it stopped: full, the read limit, the time limit, the whole dataset read.
    pub stopped: String,
    /// What it read: random chunks (a uniform access), or blobs drawn by the run's
    /// skewed access, as its service would have held them (results from before: chunks).
    #[serde(default)]
    pub reads: String,
}

/// What reaching steady state did and found, recorded with a steady result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    pub prefill: Prefill,
    /// Warm-up fetches and seconds spent settling (before criterion's own warm-up).
    pub settle_fetches: u64,
    pub settle_seconds: f64,
    /// Hit ratio of each settling round, in order.
    pub round_hit_ratios: Vec<f64>,
    /// Whether the last rounds agreed; None when hits cannot be told from misses.
    pub converged: Option<bool>,
    /// The agreement asked of the last rounds (± this share).
    pub tolerance: Option<f64>,
    /// The model: cache held ÷ dataset (at most 1), for a uniform random read.
    pub model_hit_ratio: Option<f64>,
    /// What "cache held" was read from.
    pub model_basis: String,
    /// The dataset is smaller than the cache: the cache cannot be filled, every
    /// blob can be cached.
    pub fits_in_memory: bool,
}

/// A settled hit ratio under this share of the model's, and under it by more than
/// `BELOW_MODEL_POINTS`, is not the steady state the model describes.
const BELOW_MODEL_SHARE: f64 = 0.75;
const BELOW_MODEL_POINTS: f64 = 0.05;

impl SteadyReport {
    /// The hit ratio the settling ended at: the mean of its last agreeing rounds.
    pub fn settled_hit_ratio(&self) -> Option<f64> {
        let last: Vec<f64> = self
            .round_hit_ratios
            .iter()
            .rev()
            .take(STABLE_ROUNDS)
            .copied()
            .collect();
        (!last.is_empty()).then(|| last.iter().sum::<f64>() / last.len() as f64)
    }

    /// (settled, model) where rounds that agree settled far below the model's hit
    /// ratio: the cache holds less of this dataset than the model counts (a server's
    /// pool that keeps a prefill's pages in its old sublist, pages cached twice), or
    /// the ratio still climbs slower than the rounds can see. Not steady as the model
    /// means it, and said so.
    pub fn below_model(&self) -> Option<(f64, f64)> {
        let (settled, model) = (self.settled_hit_ratio()?, self.model_hit_ratio?);
        (self.converged == Some(true)
            && settled < model * BELOW_MODEL_SHARE
            && model - settled > BELOW_MODEL_POINTS)
            .then_some((settled, model))
    }

    /// A line for the report's yellow box, or None when steady state was reached.
    pub fn problem(&self) -> Option<String> {
        if let Some((settled, model)) = self.below_model() {
            return Some(format!(
                "settled at {:.1}% hits, far below the model's {:.1}% ({}): its rounds agree, but the cache holds less of this dataset than the model counts, or the hit ratio still climbs slower than the rounds see; read it as a lower bound of the steady state",
                settled * 100.0,
                model * 100.0,
                self.model_basis
            ));
        }
        match self.converged {
            Some(true) => None,
            Some(false) => Some(format!(
                "did not reach a steady hit ratio in {:.0} s of settling (last rounds: {}): measured while the cache was still changing",
                self.settle_seconds,
                self.round_hit_ratios
                    .iter()
                    .rev()
                    .take(STABLE_ROUNDS)
                    .rev()
                    .map(|r| format!("{:.1}%", r * 100.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            None => Some(
                "steadiness cannot be judged: hits cannot be told from misses without a disk counter"
                    .into(),
            ),
        }
    }
}

/// Fill the engine's cache: random chunks of the dataset (under a uniform access) or
/// the blobs the run's skewed `access` draws, one by one (what a service read that way
/// holds), until the cache stops growing (it is full, or holds what that access keeps
/// hot), `MAX_READ_OF_LIMIT` times the cache limit is read, or `time_limit` passes. A
/// dataset no larger than the limit (`cache_limit` None: uncapped) is read until every
/// chunk was likely read (3x its size).
pub async fn prefill(
    store: &mut dyn Store,
    gauge: &mut impl CacheGauge,
    cache_limit: Option<u64>,
    time_limit: Duration,
    access: Access,
) -> Result<Prefill> {
    let spec = *store.spec();
    let skewed = (access != Access::Uniform).then(|| access.sampler(spec.rows));
    let reads = match access {
        Access::Uniform => format!(
            "random {} chunks",
            crate::size::format_bytes(CHUNK_BYTES.max(spec.size.bytes()))
        ),
        skewed => format!("blobs drawn {skewed}"),
    };
    let setting = store.prefill_begin().await?;
    let read = fill(store, gauge, cache_limit, time_limit, skewed.as_ref()).await;
    // Put back whatever the fill ends with.
    let put_back = store.prefill_end().await;
    let mut prefill = read?;
    put_back?;
    prefill.reads = match setting {
        Some(note) => format!("{reads} ({note})"),
        None => reads,
    };
    Ok(prefill)
}

/// `prefill`'s reads, until the cache is full or a limit.
async fn fill(
    store: &mut dyn Store,
    gauge: &mut impl CacheGauge,
    cache_limit: Option<u64>,
    time_limit: Duration,
    skewed: Option<&crate::workload::access::Sampler>,
) -> Result<Prefill> {
    let spec = *store.spec();
    let dataset = spec.bytes();
    let fits = cache_limit.is_none_or(|limit| dataset <= limit);
    let read_limit = match cache_limit {
        Some(limit) if !fits => MAX_READ_OF_LIMIT * limit,
        _ => 3 * dataset,
    };
    let chunk = CHUNK_BYTES.max(spec.size.bytes());
    // Chunks asked at once, never more than a gauge step holds.
    let group = (GAUGE_EVERY_BYTES / chunk).clamp(1, CHUNKS_AT_ONCE) as usize;
    let mut chunks = Vec::with_capacity(group);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed ^ 0x7072_6566_696c_6c00);
    let started = Instant::now();
    let before = gauge.cached_bytes().await;
    let mut last_gauge = before;
    let mut read = 0u64;
    let mut since_gauge = 0u64;
    let stopped = loop {
        if read >= read_limit {
            break if fits {
                format!(
                    "read {} of random chunks, 3x the dataset: it fits in the cache",
                    crate::size::format_bytes(read)
                )
            } else {
                format!(
                    "read {}x the cache limit and the cache still grew",
                    MAX_READ_OF_LIMIT
                )
            };
        }
        if started.elapsed() >= time_limit {
            break format!("time limit {:.0} s", time_limit.as_secs_f64());
        }
        chunks.clear();
        chunks.extend((0..group).map(|_| match skewed {
            None => (rng.random(), chunk),
            // The drawn blob's place in the dataset, read about its own length.
            Some(sampler) => {
                let id = sampler.next(&mut rng);
                let at = (id - 1) as f64 / (spec.rows - 1).max(1) as f64;
                (at, spec.blob_bytes(id))
            }
        }));
        let n = store.read_chunks(&chunks).await?;
        read += n.max(1);
        since_gauge += n.max(1);
        if since_gauge >= GAUGE_EVERY_BYTES && !fits {
            let now = gauge.cached_bytes().await;
            if let (Some(then), Some(now)) = (last_gauge, now)
                && (now.saturating_sub(then) as f64) < FULL_GROWTH * since_gauge as f64
            {
                let why = if skewed.is_some() {
                    "holds what the access keeps hot"
                } else {
                    "full"
                };
                break format!(
                    "{why}: the cache grew by less than 1/16 of the last {} read",
                    crate::size::format_bytes(since_gauge)
                );
            }
            last_gauge = now;
            since_gauge = 0;
        }
    };
    Ok(Prefill {
        bytes_read: read,
        seconds: started.elapsed().as_secs_f64(),
        cache_bytes_before: before,
        cache_bytes_after: gauge.cached_bytes().await,
        stopped,
        reads: String::new(),
    })
}

/// Whether the last `STABLE_ROUNDS` rounds, each (hits, fetches), agree on the hit
/// ratio; returns the tolerance used. Fewer rounds: not yet.
pub fn stable(rounds: &[(u64, u64)]) -> (bool, f64) {
    if rounds.len() < STABLE_ROUNDS {
        return (false, STABLE_POINTS);
    }
    let last = &rounds[rounds.len() - STABLE_ROUNDS..];
    let ratios: Vec<f64> = last
        .iter()
        .map(|&(hits, n)| hits as f64 / n.max(1) as f64)
        .collect();
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    let fewest = last.iter().map(|&(_, n)| n).min().unwrap_or(1).max(1) as f64;
    let noise = 2.0 * (mean * (1.0 - mean) / fewest).sqrt();
    let tolerance = STABLE_POINTS.max(noise);
    (
        ratios.iter().all(|r| (r - mean).abs() <= tolerance),
        tolerance,
    )
}

/// The model's hit ratio: for a uniform random read, cache held ÷ the dataset's bytes
/// as stored (SQLite's pages, files rounded up to blocks), at most 1; for a skewed
/// `access`, an LRU cache holding that share of the blobs under its popularity (Che's
/// approximation; the page cache is only roughly LRU, and the result shows how far).
pub fn model_hit_ratio(
    cached_bytes: Option<u64>,
    stored_bytes: u64,
    access: crate::workload::access::Access,
    rows: u64,
) -> Option<f64> {
    let held = (cached_bytes? as f64 / stored_bytes.max(1) as f64).min(1.0);
    match access {
        crate::workload::access::Access::Uniform => Some(held),
        skewed => crate::workload::access::che_hit_ratio(
            &skewed.sampler(rows).popularity(),
            held * rows as f64,
        )
        .or(Some(0.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_that_agree_are_stable_and_a_climb_is_not() {
        assert!(
            !stable(&[(300, 1000), (300, 1000)]).0,
            "two rounds are too few"
        );
        assert!(stable(&[(100, 1000), (300, 1000), (305, 1000), (295, 1000)]).0);
        let (climbing, tolerance) = stable(&[(200, 2000), (400, 2000), (600, 2000)]);
        assert!(!climbing);
        assert_eq!(tolerance, STABLE_POINTS);
        // 40 fetches a round: binomial noise (2 SE ~ 14 points) sets the tolerance.
        let (few, tolerance) = stable(&[(10, 40), (14, 40), (12, 40)]);
        assert!(few && tolerance > 0.1, "{tolerance}");
    }

    fn settled(rounds: &[f64], converged: Option<bool>, model: Option<f64>) -> SteadyReport {
        SteadyReport {
            prefill: Prefill {
                bytes_read: 0,
                seconds: 0.0,
                cache_bytes_before: None,
                cache_bytes_after: None,
                stopped: "full".into(),
                reads: String::new(),
            },
            settle_fetches: 3510,
            settle_seconds: 5.0,
            round_hit_ratios: rounds.to_vec(),
            converged,
            tolerance: Some(STABLE_POINTS),
            model_hit_ratio: model,
            model_basis: "page cache + pool ÷ 3GiB stored".into(),
            fits_in_memory: false,
        }
    }

    /// MariaDB at 64 KiB in the full profile: rounds agreeing at 8.6% against a model of
    /// 20.1% were called steady without a word.
    #[test]
    fn rounds_that_agree_far_below_the_model_are_said_to() {
        let far = settled(&[0.05, 0.085, 0.086, 0.087], Some(true), Some(0.201));
        let (at, model) = far.below_model().expect("far below");
        assert!((at - 0.086).abs() < 1e-9 && model == 0.201, "{at} {model}");
        let problem = far.problem().expect("said");
        assert!(
            problem.contains("8.6%")
                && problem.contains("20.1%")
                && problem.contains("lower bound"),
            "{problem}"
        );
        // At the model, or near it in points where both are small: steady, no word.
        assert_eq!(
            settled(&[0.19, 0.2, 0.2], Some(true), Some(0.201)).problem(),
            None
        );
        assert_eq!(
            settled(&[0.02, 0.02, 0.02], Some(true), Some(0.05)).below_model(),
            None
        );
        // Rounds that never agreed say that instead; no model, nothing to be below.
        let climbing = settled(&[0.05, 0.08, 0.1], Some(false), Some(0.201));
        assert!(climbing.below_model().is_none());
        assert!(climbing.problem().unwrap().contains("did not reach"));
        assert_eq!(
            settled(&[0.05, 0.05, 0.05], Some(true), None).problem(),
            None
        );
    }

    #[test]
    fn the_model_is_the_cached_share_of_the_dataset() {
        let uniform = crate::workload::access::Access::Uniform;
        assert_eq!(
            model_hit_ratio(Some(256 << 20), 1 << 30, uniform, 1024),
            Some(0.25)
        );
        assert_eq!(
            model_hit_ratio(Some(2 << 30), 1 << 30, uniform, 1024),
            Some(1.0)
        );
        assert_eq!(model_hit_ratio(None, 1 << 30, uniform, 1024), None);
        // A quarter of the blobs cached under zipfian 0.99 serves most reads.
        let zipfian = crate::workload::access::Access::Zipfian { theta: 0.99 };
        let skewed = model_hit_ratio(Some(256 << 20), 1 << 30, zipfian, 1024).unwrap();
        assert!((0.6..0.95).contains(&skewed), "{skewed}");
    }
}
