//! The one loop over sizes and engines, shared by `cargo bench` (criterion drives
//! the fetches: benches/fetch.rs) and `blobrace measure` (`FixedTime` below):
//!
//! ```text
//! for each size:         load it (--drop-after) · open the driver's scope (criterion: a group)
//!   for each repeat:     the engine list, rotated one further each repeat (--repeat)
//!     for each engine:
//!       for each cache:  evict, open, attach counters; steady: prefill + settle (Run::prepare)
//!                        warm up + measure                  (the Driver; more clients
//!                                                            or a rate: load_gen), with
//!                                                            --write-rate a writer beside
//!                                                            them (writer.rs)
//!                        --saturate-sizes: after the closed loop of its client count,
//!                        the sustainable-rate search on the same state; saturate mode:
//!                        a cold start, a closed loop, then the search (load_gen::search)
//!                        record, rewrite results            (Run::record)
//!                        --profile-fetches: fetch on under a CPU profiler (profile)
//!                        blobs >= 1 MiB: streamed fetches, time to the first bytes
//!                        close
//!       after its loads: drop its pages if the cap cannot be emptied (Run::release)
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
use crate::db::registry::EngineKind;
use crate::load_gen::LoadPoint;
use crate::records::results::{FailedStage, Scenario};

use super::plan::{Cell, Plan, Work};
use super::{Prepared, Progress, Run};

/// What the driver did with one engine at one size.
pub enum Driven {
    /// Measured; with criterion, the number of its measurement calls (samples).
    Measured { criterion_samples: Option<u64> },
    /// Nothing to record (criterion's filter skipped it, or it only profiled).
    Skipped,
}

/// Drives the fetches of each engine. `size` opens a scope per size class.
pub trait Driver {
    type Size<'a>: SizeScope
    where
        Self: 'a;
    fn size(&mut self, spec: DatasetSpec) -> Self::Size<'_>;
}

pub trait SizeScope {
    /// Warm up and measure one engine, prepared in its scenario; `label` names it
    /// (`Scenario::label`).
    fn drive(&mut self, rt: &Runtime, label: &str, prepared: &mut Prepared) -> Result<Driven>;
    fn finish(self);
}

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

/// One cell of a size class still to measure: measured and recorded, or skipped where
/// its store's load failed; a failure is its own, and the run goes on.
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
    // One engine's failure (its server OOM-killed or gone, a lost connection)
    // is recorded and the run goes on with the others.
    match measure_cell(run, rt, scope, cell) {
        Ok(whole) => run.cell_ended(config, cell, started.elapsed(), whole)?,
        Err(e) => {
            run.cell_ended(config, cell, started.elapsed(), false)?;
            run.step_failed(FailedStage::Measure, label, spec, e)?;
        }
    }
    // Once its loads are done: each of them started by evicting anyway
    // (786k files of 1 KiB take 6 s to evict).
    if let Err(e) = rt.block_on(run.release(engine, spec)) {
        run.step_failed(FailedStage::Measure, engine.name().into(), spec, e)?;
    }
    Ok(())
}

/// Every load of one cell: in latency mode each load (1 client through the driver,
/// more through the load generator), then, for `--saturate-sizes`, the search; in
/// saturate mode a saturation search per client count. True where every load was
/// measured or skipped for the cap; false where the driver left one out (criterion's
/// filter, `--profile-time`): the cell is then not done, and a later run measures it.
fn measure_cell<S: SizeScope>(
    run: &mut Run,
    rt: &Runtime,
    scope: &mut S,
    cell: &Cell,
) -> Result<bool> {
    let mut whole = true;
    let (engine, spec, scenario) = (cell.engine, cell.spec, cell.scenario);
    match &cell.work {
        Work::Latency { loads, search } => {
            // --saturate-sizes: the search goes on from the closed loop of its client
            // count, a load measured here anyway.
            let mut saturate = search.then(|| most_clients_that_fit(run, rt, engine, spec));
            for &point in loads {
                let then_search = saturate.filter(|&c| point == LoadPoint::closed(c) && c > 1);
                let one = (engine, spec, scenario, point);
                let measured = measure_one(run, rt, scope, one, then_search)?;
                if measured.searched {
                    saturate = None;
                }
                whole &= measured.driven;
            }
            if let Some(clients) = saturate {
                saturate_one(run, rt, engine, spec, scenario, clients)?;
            }
        }
        Work::Saturate { clients } => {
            for &clients in clients {
                saturate_one(run, rt, engine, spec, scenario, clients)?;
            }
        }
    }
    Ok(whole)
}

/// What `measure_one` did.
struct One {
    /// The sustainable-rate search followed the closed loop.
    searched: bool,
    /// False where the driver measured nothing (criterion's filter skipped it).
    driven: bool,
}

/// One engine at one size, in one scenario, under one load: prepared from its cache
/// state (evicted, or prefilled and settled), measured, recorded, closed. With
/// `then_search`, a closed loop of that many clients is followed on the same prepared
/// engine by the sustainable-rate search below it.
fn measure_one<S: SizeScope>(
    run: &mut Run,
    rt: &Runtime,
    scope: &mut S,
    (engine, spec, scenario, point): (EngineKind, DatasetSpec, Scenario, LoadPoint),
    then_search: Option<u32>,
) -> Result<One> {
    if !point.is_single_closed()
        && let Some(why) = rt.block_on(run.load_misfit(engine, spec, point))
    {
        run.skip_load(engine, spec, point, why)?;
        return Ok(One {
            searched: false,
            driven: true,
        });
    }
    let mut driven = true;
    let config = run.config();
    let mut label = scenario.label(engine, &config.cache, config.repeat);
    let mut prepared = rt.block_on(run.prepare(engine, spec, scenario))?;
    let mut searched = false;
    if point.is_single_closed() {
        let driven_by = run.beside_writer(engine, spec, &mut prepared, |_, prepared| {
            scope.drive(rt, &label, prepared)
        })?;
        match driven_by {
            Driven::Measured { criterion_samples } => {
                rt.block_on(run.record(engine, spec, &prepared, criterion_samples))?;
                run.profile_fetches(rt, engine, spec, &mut prepared)?;
                run.time_first_bytes(rt, engine, spec, &mut prepared)?;
            }
            Driven::Skipped => driven = false,
        }
    } else {
        label = format!("{label}.{}", point.label());
        run.progress(Progress::UnderLoad {
            cell: &label,
            size: spec.size_label(),
            engine,
        });
        let measured = run.beside_writer(engine, spec, &mut prepared, |run, prepared| {
            run.drive_load(rt, engine, spec, prepared, point, run.load_settings())
        })?;
        rt.block_on(run.record_load(engine, spec, &prepared, point, &measured))?;
        run.measure_disk_limit(spec, point.clients)?;
        if let Some(clients) = then_search {
            run.search_sustainable(rt, engine, spec, &prepared, clients, &measured)?;
            searched = true;
        }
    }
    rt.block_on(prepared.fetch_loop.close())?;
    Ok(One { searched, driven })
}

/// The most of the run's client counts whose fetches in flight fit under the caps
/// (`Run::load_misfit`), for `--saturate-sizes`: 64 clients of 4 MiB blobs do not fit
/// a 1 GiB process, 16 do. None fit: the most, which `saturate_one` then skips, saying why.
fn most_clients_that_fit(run: &Run, rt: &Runtime, engine: EngineKind, spec: DatasetSpec) -> u32 {
    let mut counts = run.config().clients.clone();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts
        .iter()
        .copied()
        .find(|&c| {
            rt.block_on(run.load_misfit(engine, spec, LoadPoint::closed(c)))
                .is_none()
        })
        .unwrap_or(counts.first().copied().unwrap_or(1))
}

/// The sustainable rate of one engine at one size with `clients` clients, prepared
/// from its cache state; skipped when their fetches would not fit under the caps.
fn saturate_one(
    run: &mut Run,
    rt: &Runtime,
    engine: EngineKind,
    spec: DatasetSpec,
    scenario: Scenario,
    clients: u32,
) -> Result<()> {
    let point = LoadPoint::closed(clients);
    if let Some(why) = rt.block_on(run.load_misfit(engine, spec, point)) {
        return run.skip_load(engine, spec, point, why);
    }
    let prepared = rt.block_on(run.prepare(engine, spec, scenario))?;
    run.saturate(rt, engine, spec, &prepared, clients)?;
    run.measure_disk_limit(spec, clients)?;
    rt.block_on(prepared.fetch_loop.close())?;
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
