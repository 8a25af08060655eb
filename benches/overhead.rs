//! Harness overhead: the fetch loop around an engine that does nothing but copy
//! a ready blob. Shows (1) what the timed span adds to every recorded latency
//! (clock reads, dispatch) and (2) the whole per-fetch cost of the loop
//! (id, /proc/self/io twice, checks, recording), which only stretches wall time.
//!
//! `cargo bench --bench overhead`

// Every line shown goes through the one terminal writer (say.rs): `say!`, `show!`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use anyhow::Result;
use criterion::{Criterion, criterion_group, criterion_main};

use blobrace::content::fill_blob;
use blobrace::dataset::DatasetSpec;
use blobrace::db::engine::{Engine, EngineSettings};
use blobrace::diskio::DiskReadCounter;
use blobrace::measure::{FetchLoop, Phase};
use blobrace::say;
use blobrace::size::SizeClass;
use blobrace::stats::format_ns;

/// Blobs already in memory: `fetch` is one small copy.
struct ReadyBlobs {
    blobs: Vec<Vec<u8>>,
}

impl Engine for ReadyBlobs {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.extend_from_slice(&self.blobs[id as usize - 1]);
        Ok(())
    }
    fn settings(&self) -> EngineSettings {
        EngineSettings::new()
    }
}

fn overhead(c: &mut Criterion) {
    let spec = DatasetSpec {
        size: SizeClass::new(1024).unwrap(),
        rows: 256,
        seed: 1,
        key: Default::default(),
        churn: None,
        live: false,
        mix: None,
    };
    let blobs = (1..=spec.rows)
        .map(|id| {
            let mut b = vec![0; spec.size.as_usize()];
            fill_blob(spec.seed, spec.size, id, &mut b);
            b
        })
        .collect();
    // criterion's charts need the bundled font (plotters has no system fonts here).
    blobrace::report::charts::register_font().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut fetch_loop = FetchLoop::new(
        ReadyBlobs { blobs },
        "ready-blobs",
        spec,
        DiskReadCounter::open_self(),
    );
    c.bench_function("harness/loop-per-fetch", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            rt.block_on(fetch_loop.run(iters, Phase::Measured)).unwrap();
            start.elapsed()
        })
    });
    let timed = fetch_loop.measured.summary().latency;
    say!(
        "harness: timed span of a 1 KiB in-memory copy: p50 {} p99 {} mean {} over {} fetches",
        format_ns(timed.p50_ns as f64),
        format_ns(timed.p99_ns as f64),
        format_ns(timed.mean_ns),
        timed.count
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = overhead
}
criterion_main!(benches);
