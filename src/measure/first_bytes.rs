//! The time to the first bytes of a large blob: a page that serves a 32 MiB blob
//! streams it, so how soon its first piece arrives matters as much as the whole
//! fetch (MinIO's `warp` reports time to first byte for this reason). After an
//! engine's measurement, on the same engine and cache state, blobs are fetched in
//! pieces (`Engine::fetch_streamed`), each timed at its first piece and at its last,
//! and checked like every fetch.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::FetchLoop;
use crate::db::engine::{Engine, Streaming};
use crate::db::registry::EngineKind;
use crate::stats::new_histogram;

/// Blobs from this size on are streamed.
pub const FROM_BYTES: u64 = 1 << 20;
/// The piece a streamed read asks for.
pub const CHUNK_BYTES: usize = 64 << 10;
/// At least this many streamed fetches, however short the time asked for.
const MIN_FETCHES: u64 = 20;

/// One engine's streamed fetches at one size and cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FirstBytes {
    pub engine: EngineKind,
    pub size: String,
    pub size_bytes: u64,
    /// The cache state the engine was in (`cold`, `steady`).
    pub cache: String,
    pub chunk_bytes: u64,
    /// How the engine read its pieces, or why it reads whole values only.
    pub how: String,
    /// None where the engine reads whole values only (`how` says why).
    pub measured: Option<FirstBytesMeasured>,
}

/// Percentiles of the streamed fetches, in nanoseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct FirstBytesMeasured {
    pub fetches: u64,
    pub first_p50_ns: u64,
    pub first_p99_ns: u64,
    pub whole_p50_ns: u64,
    pub whole_p99_ns: u64,
}

impl FirstBytesMeasured {
    /// A p99 as text: under 100 fetches the 99th percentile is the largest one seen,
    /// and it says so (MariaDB's 32 MiB streamed cold took 13.8 s a fetch: 2 fit).
    pub fn p99_text(&self, ns: u64) -> String {
        let value = crate::stats::format_ns(ns as f64);
        if self.fetches < 100 {
            format!("{value} (largest of {})", self.fetches)
        } else {
            value
        }
    }
}

impl FirstBytes {
    /// One terminal line.
    pub fn line(&self) -> String {
        let fmt = |ns: u64| crate::stats::format_ns(ns as f64);
        match &self.measured {
            Some(m) => format!(
                "{} {} {}: first bytes p50 {} p99 {}, whole p50 {} p99 {} ({} streamed fetches)",
                self.engine.name(),
                self.size,
                self.cache,
                fmt(m.first_p50_ns),
                m.p99_text(m.first_p99_ns),
                fmt(m.whole_p50_ns),
                m.p99_text(m.whole_p99_ns),
                m.fetches
            ),
            None => format!(
                "{} {} {}: {}",
                self.engine.name(),
                self.size,
                self.cache,
                self.how
            ),
        }
    }
}

impl<E: Engine> FetchLoop<E> {
    /// Streamed fetches for `budget` (at least `MIN_FETCHES`, at most four times the
    /// budget): the first piece's and the whole blob's latency. None where the engine
    /// reads whole values only (with why).
    pub async fn first_bytes_for(
        &mut self,
        budget: Duration,
    ) -> Result<Result<FirstBytesMeasured, &'static str>> {
        if let Streaming::No(why) = self.engine.streaming() {
            return Ok(Err(why));
        }
        let (mut first, mut whole) = (new_histogram(), new_histogram());
        let started = Instant::now();
        let mut fetches = 0;
        while (started.elapsed() < budget || fetches < MIN_FETCHES)
            && started.elapsed() < budget * 4
        {
            let id = self.access.next(&mut self.ids);
            let (to_first, to_end) = self
                .step
                .fetch_streamed(&mut self.engine, id, CHUNK_BYTES)
                .await?;
            first.saturating_record(to_first.as_nanos() as u64);
            whole.saturating_record(to_end.as_nanos() as u64);
            fetches += 1;
        }
        Ok(Ok(FirstBytesMeasured {
            fetches,
            first_p50_ns: first.value_at_quantile(0.5),
            first_p99_ns: first.value_at_quantile(0.99),
            whole_p50_ns: whole.value_at_quantile(0.5),
            whole_p99_ns: whole.value_at_quantile(0.99),
        }))
    }
}

/// How an engine streams, for the record.
pub fn how(streaming: Streaming) -> String {
    match streaming {
        Streaming::Chunks(how) | Streaming::No(how) => how.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::FirstBytesMeasured;

    #[test]
    fn a_p99_of_under_100_fetches_is_said_to_be_their_largest() {
        let mut m = FirstBytesMeasured {
            fetches: 2,
            first_p50_ns: 188_000_000,
            first_p99_ns: 194_000_000,
            whole_p50_ns: 13_780_000_000,
            whole_p99_ns: 13_910_000_000,
        };
        assert!(m.p99_text(m.whole_p99_ns).ends_with(" (largest of 2)"));
        m.fetches = 100;
        assert!(!m.p99_text(m.whole_p99_ns).contains("largest"));
    }
}
