//! `cargo bench`: random-id fetch latency per engine and size class, under the cap.
//!
//! Knobs are the `BLOBRACE_*` environment variables (see README / `blobrace --help`),
//! e.g. `BLOBRACE_PROFILE=quick cargo bench`. Criterion's own flags still work after
//! `--` (e.g. `cargo bench -- sqlite` runs only matching benchmarks).
//!
//! Each criterion iteration is one fetch; `iter_custom` times each fetch alone and
//! returns the sum, while the same fetches go into our per-fetch histograms.

use std::time::Instant;

use clap::Parser;
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};

use blobrace::config::RunArgs;
use blobrace::measure::CriterionPhases;
use blobrace::run::Run;

/// Only the environment: cargo's and criterion's own arguments are criterion's.
#[derive(Parser)]
struct EnvOnly {
    #[command(flatten)]
    run: RunArgs,
}

fn main() {
    let args = std::env::args().collect::<Vec<_>>();
    if args.iter().any(|a| a == "--list") {
        // `cargo bench -- --list` must not load gigabytes.
        return;
    }
    if args.iter().any(|a| a == "--quick") {
        eprintln!(
            "Error: criterion's --quick samples differently and would mix warm-up into the results; use BLOBRACE_PROFILE=quick"
        );
        std::process::exit(2);
    }
    // criterion's charts need a font: the bundled one (plotters has no system fonts here).
    if let Err(e) = blobrace::report::charts::register_font() {
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
    // Under --profile-time criterion runs the routine without measuring: nothing to record.
    let profiling = args.iter().any(|a| a == "--profile-time");
    let config = match EnvOnly::try_parse_from(["fetch"])
        .map_err(|e| e.to_string())
        .and_then(|c| c.run.resolve().map_err(|e| e.to_string()))
    {
        Ok(config) => config,
        Err(e) => {
            eprintln!("Error: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = bench(config, !profiling) {
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}

fn bench(config: blobrace::config::RunConfig, record: bool) -> anyhow::Result<()> {
    // Cap first: before the runtime's threads and before any data is touched.
    let mut run = Run::start(config.clone(), "criterion");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(run.load())?;
    // Loading dropped any server engine whose server is not reachable.
    let config = run.config().clone();

    // Our timings go last: criterion's own --warm-up-time etc. would desynchronise
    // the warm-up/measurement split in `CriterionPhases`. Use BLOBRACE_* instead.
    let mut criterion = Criterion::default()
        .configure_from_args()
        .warm_up_time(config.warmup)
        .measurement_time(config.measure)
        .sample_size(config.samples);
    for spec in config.datasets() {
        rt.block_on(run.before_size(spec))?;
        let mut group = criterion.benchmark_group(format!("fetch-{}", spec.size));
        group
            .sampling_mode(SamplingMode::Flat)
            .throughput(Throughput::Bytes(spec.size.bytes()));
        for &engine in &config.engines {
            let mut prepared = rt.block_on(run.prepare(engine, spec))?;
            let mut phases = CriterionPhases::new(config.warmup);
            group.bench_function(BenchmarkId::new(engine.name(), spec.size), |b| {
                b.iter_custom(|iters| {
                    let phase = phases.next();
                    let wall = Instant::now();
                    let timed = match rt.block_on(prepared.fetch_loop.run(iters, phase)) {
                        Ok(timed) => timed,
                        Err(e) => {
                            // criterion cannot carry an error out: stop the whole run with it.
                            let e = rt.block_on(prepared.explain(e));
                            eprintln!("Error: {e:#}");
                            std::process::exit(1);
                        }
                    };
                    phases.finished(phase, wall.elapsed());
                    timed
                })
            });
            // Nothing measured: filtered out by criterion's command-line filter.
            if record && prepared.fetch_loop.measured.count() > 0 {
                let samples = Some(phases.measured_calls());
                rt.block_on(run.record(engine, spec, &prepared, samples))?;
            }
            rt.block_on(prepared.fetch_loop.close())?;
            rt.block_on(run.release(engine, spec))?;
        }
        group.finish();
        rt.block_on(run.after_size(spec))?;
    }
    if record {
        run.finish()?;
    }
    criterion.final_summary();
    Ok(())
}
