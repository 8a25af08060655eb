//! Harness overhead: the fetch loop around an engine that does nothing but copy
//! a ready blob. Shows (1) what the timed span adds to every recorded latency
//! (clock reads, dispatch) and (2) the whole per-fetch cost of the loop
//! (id, /proc/self/io twice, checks, recording), which only stretches wall time, and
//! (3) the whole-content check of a row's first fetch at 1 KiB, 64 KiB and 4 MiB.
//!
//! `cargo bench --bench overhead`

// Every line shown goes through the one terminal writer (say.rs): `say!`, `show!`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use anyhow::Result;
use criterion::{Criterion, criterion_group, criterion_main};

use blobrace::dataset::DatasetSpec;
use blobrace::dataset::content::{check_blob, fill_blob};
use blobrace::dataset::documents::Content;
use blobrace::db::engine::{Engine, EngineSettings};
use blobrace::disk::io::DiskReadCounter;
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
        content: Content::Random,
    };
    let blobs = (1..=spec.rows)
        .map(|id| {
            let mut b = vec![0; spec.size.as_usize()];
            fill_blob(spec.seed, spec.size, spec.content, id, &mut b);
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

/// The whole-content check a row's first fetch in a cell gets (and every 64th fetch),
/// outside the clock: the expected blob regenerated and compared. It stretches a cell's
/// wall time, never a recorded latency; at sizes where each row is fetched about once
/// (cold cells of large blobs), every fetch pays it.
fn full_check(c: &mut Criterion) {
    for bytes in [1u64 << 10, 64 << 10, 4 << 20] {
        let size = SizeClass::new(bytes).unwrap();
        let mut blob = vec![0; size.as_usize()];
        fill_blob(1, size, Content::Random, 7, &mut blob);
        let mut scratch = Vec::with_capacity(size.as_usize());
        c.bench_function(&format!("harness/full-check/{size}"), |b| {
            b.iter(|| {
                let wrong = check_blob(
                    1,
                    size,
                    Content::Random,
                    (7, bytes),
                    &blob,
                    Some(0),
                    &mut scratch,
                );
                assert!(wrong.is_none());
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = overhead, full_check
}
criterion_main!(benches);
