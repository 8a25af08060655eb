//! The one loop over sizes and engines, shared by `cargo bench` (criterion drives
//! the fetches: benches/fetch.rs) and `blobrace measure` (`FixedTime` below):
//!
//! ```text
//! for each size:         load it (--drop-after) · open the driver's scope (criterion: a group)
//!   for each repeat:     the engine list, rotated one further each repeat (--repeat)
//!     for each engine:
//!       for each cache:  one cell (cell::CellRun::measure), which hands back what it
//!                        found: evict, open, attach counters; steady: prefill +
//!                        settle; warm up + measure (the Driver; more clients or a
//!                        rate: load_gen), with --write-rate a writer beside them;
//!                        --saturate-sizes: the sustainable-rate search; saturate
//!                        mode: a cold start, a closed loop, then the search;
//!                        --profile-fetches: a CPU profile; blobs >= 1 MiB: the time
//!                        to the first bytes
//!                        record what it found, rewrite results (Run::record)
//!       after its loads: drop its pages if the cap cannot be emptied (cell::release)
//!       a step that fails: recorded (Run::step_failed), the run goes on (--fail-fast: stops)
//!   drop the size's datasets (--drop-after)
//!
//! Where the disk cannot hold one size class, the engines of a size go store by
//! store, each store's dataset loaded before its first cell and dropped after its
//! last (run/dataset_walk.rs).
//! ```

use std::time::{Duration, Instant};

use anyhow::Result;
use tokio::runtime::Runtime;

use crate::dataset::DatasetSpec;
use crate::records::results::FailedStage;

use super::cell::CellRun;
pub use super::driver::{Driven, Driver, SizeScope};
use super::plan::{Cell, Plan};
use super::{Prepared, Progress, Run};

/// Every engine at every size of the run, in the run's order: in latency mode each
/// load of `RunConfig::load_points` (1 client through the driver, more through the
/// load generator), in saturate mode a saturation search per client count. Cells an
/// earlier part of this run measured to their end are not measured again (`resume`);
/// a size none of whose cells is left is neither loaded nor measured.
pub fn measure_all<D: Driver>(run: &mut Run, rt: &Runtime, driver: &mut D) -> Result<()> {
    let measured = measure_sizes(run, rt, driver);
    if let Err(e) = &measured {
        // Said in results.json: the next part names how this one ended.
        run.part_ended_by(e);
    }
    measured
}

fn measure_sizes<D: Driver>(run: &mut Run, rt: &Runtime, driver: &mut D) -> Result<()> {
    let config = run.config().clone();
    let plan = Plan::of(&config);
    for spec in run.load_plan.sizes_in_order(&plan) {
        let left: Vec<&Cell> = run
            .cells_in_order(&plan, spec)
            .into_iter()
            .filter(|c| !run.results.is_done(&c.key()))
            .collect();
        if left.is_empty() {
            // Measured by an earlier part: with --drop-after its datasets go now if that
            // part stopped before dropping them.
            rt.block_on(run.after_size(spec))?;
            continue;
        }
        rt.block_on(run.before_size(spec))?;
        let walking = run.load_plan.walks();
        let mut scope = driver.size(spec);
        for (k, cell) in left.iter().enumerate() {
            // One dataset at a time: a store's dataset is there from its first cell
            // of this size to its last (`cells_in_order` groups them).
            let store = cell.engine.store();
            if walking && (k == 0 || left[k - 1].engine.store() != store) {
                rt.block_on(run.before_dataset(spec, store))?;
            }
            measure_left_cell(run, rt, &mut scope, (&plan, &config), cell)?;
            if walking
                && left
                    .get(k + 1)
                    .is_none_or(|next| next.engine.store() != store)
            {
                rt.block_on(run.after_dataset(spec, store))?;
            }
        }
        scope.finish();
        rt.block_on(run.after_size(spec))?;
    }
    Ok(())
}

/// One cell of a size class still to measure: measured (`cell::CellRun`) and what it
/// found recorded, or skipped where its store's load failed; a failure is its own,
/// and the run goes on.
fn measure_left_cell<S: SizeScope>(
    run: &mut Run,
    rt: &Runtime,
    scope: &mut S,
    (plan, config): (&Plan, &crate::config::RunConfig),
    cell: &Cell,
) -> Result<()> {
    let (engine, spec, scenario) = (cell.engine, cell.spec, cell.scenario);
    let label = scenario.label(engine, &config.cache, config.repeat);
    if run.load_failed(engine, spec) {
        run.progress(Progress::NotLoaded {
            cell: &label,
            size: spec.size_label(),
        });
        return Ok(());
    }
    run.cell_starts(plan, cell, &label);
    let started = Instant::now();
    let measured = CellRun::new(&run.results, &run.sinks, cell).measure(rt, scope, &cell.work);
    for found in measured.found {
        run.record(found)?;
    }
    // One engine's failure (its server OOM-killed or gone, a lost connection)
    // is recorded and the run goes on with the others.
    let whole = measured.whole && measured.failed.is_none();
    run.cell_ended(config, cell, started.elapsed(), whole)?;
    if let Some(e) = measured.failed {
        run.step_failed(FailedStage::Measure, label, spec, e)?;
    }
    // Once its loads are done: each of them started by evicting anyway
    // (786k files of 1 KiB take 6 s to evict).
    if let Err(e) = rt.block_on(super::cell::release(config, engine, spec)) {
        run.step_failed(FailedStage::Measure, engine.name().into(), spec, e)?;
    }
    Ok(())
}

/// `blobrace measure`: warm up for a fixed time, then measure for a fixed time, or
/// until `min_fetches` within twice that time.
pub struct FixedTime {
    pub warm_up: Duration,
    pub measure: Duration,
    pub min_fetches: u64,
    /// Measure to a precision instead (`--precision`).
    pub precision: Option<crate::measure::PrecisionGoal>,
}

impl Driver for FixedTime {
    type Size<'a> = &'a FixedTime;
    fn size(&mut self, _spec: DatasetSpec) -> &FixedTime {
        self
    }
}

impl SizeScope for &FixedTime {
    fn drive(&mut self, rt: &Runtime, _label: &str, prepared: &mut Prepared) -> Result<Driven> {
        let fetch_loop = &mut prepared.fetch_loop;
        let measured = rt.block_on(async {
            match self.precision {
                Some(goal) => fetch_loop.run_to_precision(self.warm_up, goal).await,
                None => {
                    fetch_loop
                        .run_for(self.warm_up, self.measure, self.min_fetches)
                        .await
                }
            }
        });
        match measured {
            Ok(()) => Ok(Driven::Measured {
                criterion_samples: None,
            }),
            Err(e) => Err(rt.block_on(prepared.explain(e))),
        }
    }

    fn finish(self) {}
}
