//! `cargo bench`: random-id fetch latency per engine and size class, under the cap.
//!
//! Knobs are the `BLOBRACE_*` environment variables (docs/knobs.md, `blobrace --help`),
//! e.g. `BLOBRACE_PROFILE=quick cargo bench`. Criterion's own flags still work after
//! `--` (e.g. `cargo bench -- sqlite` runs only matching benchmarks).
//!
//! Each criterion iteration is one fetch; `iter_custom` times each fetch alone and
//! returns the sum, while the same fetches go into our per-fetch histograms.

// Every line shown goes through the one terminal writer (say.rs): `say!`, `show!`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use clap::Parser;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use tokio::runtime::Runtime;

use blobrace::config::{RunArgs, RunConfig, parse_args};
use blobrace::dataset::DatasetSpec;
use blobrace::measure::{CriterionPhases, PrecisionGoal};
use blobrace::run::drive::{Driven, Driver, SizeScope, measure_all};
use blobrace::run::{Prepared, Run};
use blobrace::say;

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
        say!(
            "Error: criterion's --quick samples differently and would mix warm-up into the results; use BLOBRACE_PROFILE=quick"
        );
        std::process::exit(2);
    }
    // criterion's charts need a font: the bundled one (plotters has no system fonts here).
    if let Err(e) = blobrace::report::charts::register_font() {
        say!("Error: {e:#}");
        std::process::exit(1);
    }
    // Under --profile-time criterion runs the routine without measuring: nothing to record.
    let profiling = args.iter().any(|a| a == "--profile-time");
    let config = parse_args::<EnvOnly>(["fetch".into()])
        .and_then(|cli| cli.run.resolve().map_err(|e| format!("Error: {e}")));
    let config = match config {
        Ok(config) => config,
        Err(line) => {
            say!("{line}");
            flags_are_variables_here(&line);
            std::process::exit(2);
        }
    };
    // BLOBRACE_DRY_RUN=1: the plan and the time the presets give it, nothing run.
    // The same words as the flags' variables take (clap's BoolishValueParser).
    if std::env::var("BLOBRACE_DRY_RUN").is_ok_and(|v| {
        !matches!(
            v.to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "f" | "no" | "n" | "off"
        )
    }) {
        if let Err(e) = blobrace::run::dry_run::dry_run(config) {
            say!("Error: {e:#}");
            let input = e.downcast_ref::<blobrace::error::InputError>().is_some();
            std::process::exit(if input { 2 } else { 1 });
        }
        return;
    }
    if let Err(e) = bench(config, !profiling) {
        say!("Error: {e:#}");
        let input = e.downcast_ref::<blobrace::error::InputError>().is_some();
        if input {
            flags_are_variables_here(&format!("{e:#}"));
        }
        std::process::exit(if input { 2 } else { 1 });
    }
}

/// An error's advice names blobrace's flags; `cargo bench` takes none of them.
fn flags_are_variables_here(said: &str) {
    if said.contains(" --") {
        say!(
            "note: under `cargo bench` each flag is set by its variable (--churn by BLOBRACE_CHURN, --sizes by BLOBRACE_SIZES): docs/knobs.md lists them"
        );
    }
}

/// criterion drives the fetches: one benchmark group per size class,
/// `BenchmarkId(engine, size)`, each iteration one fetch timed alone.
struct CriterionDriver {
    criterion: Criterion,
    warm_up: std::time::Duration,
    precision: Option<PrecisionGoal>,
    record: bool,
}

struct SizeGroup<'a> {
    group: BenchmarkGroup<'a, WallTime>,
    spec: DatasetSpec,
    warm_up: std::time::Duration,
    precision: Option<PrecisionGoal>,
    record: bool,
}

/// criterion's own warm-up under `--precision`, after ours: at least this long (at most
/// ten times it) and as long as this many fetches take, for it to time a fetch and plan
/// its samples.
const CRITERION_WARM_UP: Duration = Duration::from_millis(200);
const CRITERION_WARM_UP_FETCHES: u32 = 40;

impl Driver for CriterionDriver {
    type Size<'a> = SizeGroup<'a>;
    fn size(&mut self, spec: DatasetSpec) -> SizeGroup<'_> {
        let mut group = self
            .criterion
            .benchmark_group(format!("fetch-{}", spec.size));
        group
            .sampling_mode(SamplingMode::Flat)
            .throughput(Throughput::Bytes(spec.size.bytes()));
        SizeGroup {
            group,
            spec,
            warm_up: self.warm_up,
            precision: self.precision,
            record: self.record,
        }
    }
}

impl SizeScope for SizeGroup<'_> {
    fn drive(
        &mut self,
        rt: &Runtime,
        label: &str,
        prepared: &mut Prepared,
    ) -> anyhow::Result<Driven> {
        // Under --precision criterion's plan is fixed before it measures: warm up here,
        // and give it the time the warm-up's fetches say the precision needs. criterion
        // turns that time into fetches by the wall time per fetch of its own warm-up, so
        // that warm-up spans at least `CRITERION_WARM_UP_FETCHES` fetches: 200 ms of it
        // planned 80 fetches of MariaDB's 512 KiB blobs for 2.6 s (33 ms each, from a
        // few slow ones), where they took 6 ms each.
        let mut phases = CriterionPhases::new(self.warm_up);
        if let Some(goal) = self.precision {
            let took = match rt.block_on(prepared.fetch_loop.warm_up_for(self.warm_up)) {
                Ok(took) => took,
                Err(e) => return Err(rt.block_on(prepared.explain(e))),
            };
            let planned = goal.planned_time(&prepared.fetch_loop.warm_up, took);
            let per_fetch = took / prepared.fetch_loop.warm_up.count().max(1) as u32;
            let warm_up = (per_fetch * CRITERION_WARM_UP_FETCHES)
                .clamp(CRITERION_WARM_UP, CRITERION_WARM_UP * 10);
            self.group.warm_up_time(warm_up).measurement_time(planned);
            phases = CriterionPhases::new(warm_up);
        }
        let mut failed: Option<anyhow::Error> = None;
        self.group
            .bench_function(BenchmarkId::new(label, self.spec.size), |b| {
                b.iter_custom(|iters| {
                    // criterion cannot carry an error out, nor be stopped: after a failed
                    // fetch its remaining calls return at once, claiming 1 ns a fetch, and
                    // the error goes to the run once criterion is done with this engine.
                    if failed.is_some() {
                        return Duration::from_nanos(iters);
                    }
                    let phase = phases.next();
                    let wall = Instant::now();
                    match rt.block_on(prepared.fetch_loop.run(iters, phase)) {
                        Ok(timed) => {
                            phases.finished(phase, wall.elapsed());
                            timed
                        }
                        Err(e) => {
                            failed = Some(rt.block_on(prepared.explain(e)));
                            Duration::from_nanos(iters)
                        }
                    }
                })
            });
        if let Some(e) = failed {
            say!(
                "criterion's figures for {label} just above are not measurements: its fetches failed"
            );
            return Err(e);
        }
        // criterion's plan, fixed from its warm-up, can fall short (30 of the 500 fetches a
        // p99 needs, where its warm-up met a few slow fetches): blobrace's own loop goes on
        // to the precision, within the limit; the result says how many fetches it added,
        // and criterion's figures above cover its plan only.
        let measured = self.record && prepared.fetch_loop.measured.count() > 0;
        if let (Some(goal), true) = (self.precision, measured) {
            let more = prepared
                .fetch_loop
                .measure_past_plan(goal, phases.measured_wall());
            if let Err(e) = rt.block_on(more) {
                return Err(rt.block_on(prepared.explain(e)));
            }
        }
        // Nothing measured: filtered out by criterion's command-line filter.
        Ok(if measured {
            Driven::Measured {
                criterion_samples: Some(phases.measured_calls()),
            }
        } else {
            Driven::Skipped
        })
    }

    fn finish(self) {
        self.group.finish();
    }
}

fn bench(config: RunConfig, record: bool) -> anyhow::Result<()> {
    // Cap first: before the runtime's threads and before any data is touched.
    let starting = Run::start(config.clone(), "criterion")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut run = rt.block_on(starting.settle())?;
    rt.block_on(run.load())?;
    // Our timings go last: criterion's own --warm-up-time etc. would desynchronise
    // the warm-up/measurement split in `CriterionPhases`. Use BLOBRACE_* instead.
    let mut driver = CriterionDriver {
        // criterion's own per-benchmark charts are off unless asked for (`cargo bench --
        // --plotting-backend plotters`): drawing them took about 4 s of CPU after every
        // cell, more than a quick cell measures, and the run's report draws its charts
        // from every fetch anyway.
        criterion: Criterion::default()
            .without_plots()
            .configure_from_args()
            .warm_up_time(config.warmup)
            .measurement_time(config.measure)
            .sample_size(config.criterion_samples()),
        warm_up: config.warmup,
        precision: config.precision_goal(),
        record,
    };
    measure_all(&mut run, &rt, &mut driver)?;
    if record {
        run.finish()?;
    }
    driver.criterion.final_summary();
    Ok(())
}
