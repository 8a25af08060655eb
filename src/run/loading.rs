//! Filling the datasets a run needs: all at once, or one size class at a time
//! (`--drop-after`), and which engines lost theirs.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::config::RunConfig;
use crate::dataset::lock::{Access, release, take};
use crate::dataset::{DatasetSpec, DatasetState};
use crate::db::registry::{EngineKind, StoreKind};
use crate::load::{LoadOutcome, Wanted, ensure_loaded};
use crate::records::results::{FailedStage, StepFailure};
use crate::records::run_parts::CellKey;
use crate::size::format_bytes_approx;

use super::outlook::{LoadsOutlook, Outlook};
use super::plan::{Estimate, Plan, format_duration};
use super::resume::LoadRates;
use super::{Finding, Progress, Run, stores_for};

impl Run {
    /// Load every dataset the run needs (skipping complete ones); with
    /// `drop_after`, only check that the disk can take the largest size class
    /// (each is loaded by `before_size`).
    pub async fn load(&mut self) -> Result<()> {
        let started = Instant::now();
        let outlook = self.outlook().await;
        self.progress(Progress::Outlook(&outlook));
        self.load_plan.outlook = outlook.loads;
        self.say_where_it_stands("it was loading");
        let stores = stores_for(&self.config().engines);
        // Sizes an earlier part measured whole are not loaded again.
        let sizes = self.sizes_left();
        let wanted = self.datasets_left();
        let wanted = Wanted::Only(&wanted);
        let at = self.config().locations();
        let (_, rooms) = crate::load::rooms_of(&at, &stores, &sizes, wanted).await?;
        self.check_data_in_ram_fits(&rooms, sizes.len())?;
        if self.config().drop_after {
            if rooms.check(true).is_err() {
                // Not even one size class at a time fits: one dataset at a time, or
                // refused with the numbers.
                return self.walk_datasets(&rooms, sizes);
            }
            self.measure_in_order(&rooms.order(sizes.len()), &sizes);
            return Ok(());
        }
        if !self.config().keep_all && rooms.check(false).is_err() {
            if rooms.check(true).is_err() {
                return self.walk_datasets(&rooms, sizes);
            }
            self.plan_what_to_keep(&rooms, sizes);
            return Ok(());
        }
        let fail_fast = self.config().fail_fast;
        let mut mark = started;
        let (_, failed) = ensure_loaded(&at, (&stores, &sizes, wanted), fail_fast, |load| {
            self.loaded_one(load.clone(), &mut mark)
        })
        .await?;
        self.loads_ended(failed, mark)
    }

    /// A data directory in RAM that the loads would overflow the cap with: refused
    /// (`Rooms::check_in_ram`, which `blobrace load` asks too).
    fn check_data_in_ram_fits(&self, rooms: &crate::disk_room::Rooms, sizes: usize) -> Result<()> {
        let config = self.config();
        Ok(rooms.check_in_ram(
            &self.results.machine.data_filesystem,
            config.process_cap().memory_bytes,
            crate::config::MIN_CAP_BYTES,
            (&config.data_dir, config.drop_after, sizes),
        )?)
    }

    /// One size class at a time, those already on disk go first (`Rooms::order`): the
    /// run measures `sizes` in `order`, and says so where that is not its own order.
    pub(super) fn measure_in_order(&mut self, order: &[usize], sizes: &[DatasetSpec]) {
        let ordered = self.load_plan.order_sizes(order, sizes);
        if order.windows(2).any(|w| w[0] > w[1]) {
            let names: Vec<String> = ordered.iter().map(|s| s.size.to_string()).collect();
            let line = format!(
                "disk plan: size classes in the order {}: those already on disk first, so that dropping them once measured makes room for the loads after them",
                names.join(", ")
            );
            self.progress(Progress::DiskPlan(std::slice::from_ref(&line)));
            if let Some(part) = self.results.parts.last_mut() {
                part.disk_plan.push(line);
            }
        }
    }

    /// Loads go size class by size class (`LoadPlan::one_size_at_a_time`).
    pub(super) fn one_size_at_a_time(&self) -> bool {
        self.load_plan.one_size_at_a_time(self.config().drop_after)
    }

    /// The disk cannot hold every size class at once but can hold one: go size class
    /// by size class, keeping what is dearest to load again as far as the disk allows
    /// (`Rooms::keep_plan`), and say so with the arithmetic before loading.
    fn plan_what_to_keep(&mut self, rooms: &crate::disk_room::Rooms, sizes: Vec<DatasetSpec>) {
        let cost = |store: StoreKind, spec: &DatasetSpec| self.load_plan.load_seconds(store, *spec);
        let plan = rooms.keep_plan(sizes.len(), |store, i| cost(store, &sizes[i]));
        let name = |list: &[(StoreKind, usize)]| -> String {
            let names: Vec<String> = list
                .iter()
                .map(|&(store, i)| {
                    format!(
                        "{} {} (~{})",
                        store.name(),
                        sizes[i].size,
                        format_duration(Duration::from_secs_f64(cost(store, &sizes[i])))
                    )
                })
                .collect();
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        };
        let mut lines: Vec<String> = plan
            .rooms
            .iter()
            .map(|room| {
                format!(
                    "disk plan: {} has {} free; every size class at once would add {}, so the run goes size class by size class: its peak is {} (loading {}), with {} kept free",
                    room.label,
                    format_bytes_approx(room.available),
                    format_bytes_approx(room.all_at_once),
                    format_bytes_approx(room.peak),
                    sizes[room.peak_at].size,
                    format_bytes_approx(crate::disk_room::slack_bytes(room.peak)),
                )
            })
            .collect();
        lines.push(format!(
            "disk plan: kept once measured, dearest to load again first (the next run reuses them): {}",
            name(&plan.keep)
        ));
        lines.push(format!(
            "disk plan: dropped once measured (load times from the loads recorded here, else the stores' own figures): {}",
            name(&plan.drop)
        ));
        lines.push(
            "disk plan: --keep-all (BLOBRACE_KEEP_ALL=true) refuses instead; --drop-after drops every size class once measured".into(),
        );
        self.progress(Progress::DiskPlan(&lines));
        if let Some(part) = self.results.parts.last_mut() {
            part.disk_plan = lines;
        }
        self.measure_in_order(&plan.order, &sizes);
        self.load_plan.keep(plan, sizes);
    }

    /// The datasets a cell left to measure reads: (store, size class), each once. A
    /// continued run loads these and no others.
    pub(super) fn datasets_left(&self) -> Vec<(StoreKind, DatasetSpec)> {
        datasets_left(self.config(), |cell| self.results.is_done(cell))
    }

    /// Load `store`'s dataset of `spec` alone. A load that fails, or no longer finds
    /// room (another program took the disk), is returned to fail that store's cells
    /// alone; any other error ends the run.
    pub(super) async fn load_one_dataset(
        &mut self,
        store: StoreKind,
        spec: DatasetSpec,
        mark: &mut Instant,
    ) -> Result<Vec<crate::load::FailedLoad>> {
        let config = &self.results.config;
        let (at, fail_fast) = (config.locations(), config.fail_fast);
        let only = (&[store][..], &[spec][..], Wanted::Every);
        let loaded = ensure_loaded(&at, only, fail_fast, |load| {
            self.loaded_one(load.clone(), mark)
        })
        .await;
        match loaded {
            Ok((_, failed)) => Ok(failed),
            Err(error) if no_room(&error) => {
                Ok(vec![crate::load::FailedLoad { store, spec, error }])
            }
            Err(e) => Err(e),
        }
    }

    /// The run's size classes with a cell left to measure (all of them unless an
    /// earlier part of this run measured some whole).
    fn sizes_left(&self) -> Vec<DatasetSpec> {
        sizes_left(self.config(), |cell| self.results.is_done(cell))
    }

    /// What the run will do: its cells, those earlier parts measured, the presets'
    /// time for the rest, and the loads still to make, estimated from the loads
    /// recorded in the results directory.
    async fn outlook(&self) -> Outlook {
        outlook(
            self.config(),
            |cell| self.results.is_done(cell),
            self.load_plan.rates(),
        )
        .await
    }

    /// A load just made (or found made), saved at once, so a run stopped during the
    /// next load keeps it (its figures are the next run's load estimates): recorded
    /// beside those of earlier parts, which keep a first load's figures over this
    /// part's "already loaded". `mark` is when the loading time last counted.
    pub(super) fn loaded_one(
        &mut self,
        load: crate::load::LoadReport,
        mark: &mut Instant,
    ) -> Result<()> {
        let rows = load.rows.saturating_sub(load.resumed_from_row);
        if load.outcome != LoadOutcome::AlreadyLoaded {
            self.load_plan
                .learn(load.store, load.size_bytes, rows, load.seconds);
        }
        let same =
            |l: &crate::load::LoadReport| l.store == load.store && l.size_bytes == load.size_bytes;
        match self.results.loads.iter_mut().find(|l| same(l)) {
            Some(earlier)
                if earlier.outcome != LoadOutcome::AlreadyLoaded
                    && load.outcome == LoadOutcome::AlreadyLoaded => {}
            Some(earlier) => *earlier = load,
            None => self.results.loads.push(load),
        }
        self.loading_took(mark.elapsed());
        *mark = Instant::now();
        self.found(|_| Finding::Loads)
    }

    /// The loads of a step are over: the failed ones recorded, the time since the last
    /// one counted.
    pub(super) fn loads_ended(
        &mut self,
        failed: Vec<crate::load::FailedLoad>,
        mark: Instant,
    ) -> Result<()> {
        self.record_failed_loads(failed);
        self.loading_took(mark.elapsed());
        self.found(|_| Finding::Loads)
    }

    pub(super) fn record_failed_loads(&mut self, failed: Vec<crate::load::FailedLoad>) {
        for f in failed {
            self.results.failures.push(StepFailure::new(
                FailedStage::Load,
                f.store.name().to_string(),
                f.spec.size,
                &f.error,
            ));
        }
    }

    /// Whether `engine`'s store failed to load `spec` in this run: nothing to measure.
    pub fn load_failed(&self, engine: EngineKind, spec: DatasetSpec) -> bool {
        let store = engine.store().name();
        self.results
            .failures
            .iter()
            .any(|f| f.stage == FailedStage::Load && f.who == store && f.size == spec.size)
    }

    /// Before measuring a size class: with `drop_after`, load it now.
    pub async fn before_size(&mut self, spec: DatasetSpec) -> Result<()> {
        // One dataset at a time: each store's is loaded before its cells (`before_dataset`).
        if !self.one_size_at_a_time() || self.load_plan.walks() {
            return Ok(());
        }
        let mut mark = Instant::now();
        self.say_where_it_stands(&format!("it was loading {}", spec.size_label()));
        let wanted = self.datasets_left();
        let config = &self.results.config;
        let at = config.locations();
        let stores = Wanted::Only(&wanted).stores_at(&stores_for(&config.engines), spec);
        let fail_fast = config.fail_fast;
        let loaded = ensure_loaded(&at, (&stores, &[spec], Wanted::Every), fail_fast, |load| {
            self.loaded_one(load.clone(), &mut mark)
        })
        .await;
        let failed = match loaded {
            Err(e) if no_room(&e) => {
                // The plan had room for this size class at the start: something holds it
                // now (a drop that failed, another program). Not the user's input, so not
                // the end of the run: each store loads where it still fits, one by one,
                // and the others fail alone, saying why (a re-run continues them).
                say!(
                    "note: {} no longer fits as planned ({e}): its stores load one by one where there is room",
                    spec.size_label()
                );
                let mut failed = Vec::new();
                for store in stores {
                    failed.extend(self.load_one_dataset(store, spec, &mut mark).await?);
                }
                failed
            }
            loaded => loaded?.1,
        };
        self.loads_ended(failed, mark)
    }

    /// After measuring a size class: with `drop_after`, delete its datasets; with a
    /// plan of what to keep, those it plans to drop (a dataset no cell of this part
    /// read is not in the plan, and stays: SeaweedFS's 1 KiB takes 40 min to load
    /// again). One dataset at a time, each went after its last cell (`after_dataset`).
    pub async fn after_size(&mut self, spec: DatasetSpec) -> Result<()> {
        let drop_after = self.config().drop_after;
        if self.load_plan.walks() && !drop_after {
            return Ok(());
        }
        let why = if self.config().drop_after {
            "--drop-after"
        } else {
            "the disk plan: cheaper to load again than others"
        };
        for kind in stores_for(&self.config().engines) {
            if !self.load_plan.keeps(kind, spec, drop_after) {
                self.drop_dataset(kind, spec, why).await?;
            }
        }
        Ok(())
    }

    /// Delete `kind`'s dataset of `spec` once measured, if it is there, saying `why`;
    /// a drop that fails is recorded as that store's step failure.
    pub(super) async fn drop_dataset(
        &mut self,
        kind: StoreKind,
        spec: DatasetSpec,
        why: &'static str,
    ) -> Result<()> {
        let at = self.config().locations();
        let mut store = kind.open(&at, spec);
        let dropped = async {
            // Its reads end here: another process reading it keeps it (we wait).
            take(store.location(), Access::Write, "dropping", at.lock_waiting)?;
            if store.state().await? == DatasetState::Absent {
                return Ok(false);
            }
            store
                .remove()
                .await
                .with_context(|| format!("cannot drop {}", store.location().display()))?;
            release(store.location());
            anyhow::Ok(true)
        };
        match dropped.await {
            Ok(true) => self.progress(Progress::Dropped {
                location: store.location(),
                why,
            }),
            Ok(false) => {}
            Err(e) => self.step_failed(FailedStage::Drop, kind.name().into(), spec, e)?,
        }
        Ok(())
    }
}

/// The disk's room check refused a load.
pub(super) fn no_room(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<crate::error::InputError>(),
        Some(crate::error::InputError::NotEnoughDisk { .. })
    )
}

/// The datasets the cells not yet measured (`is_done` false) read: (store, size
/// class), each once.
fn datasets_left(
    config: &RunConfig,
    is_done: impl Fn(&CellKey) -> bool,
) -> Vec<(StoreKind, DatasetSpec)> {
    let mut pairs = Vec::new();
    for cell in Plan::of(config).cells() {
        let pair = (cell.engine.store(), cell.spec);
        if !is_done(&cell.key()) && !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    pairs
}

/// The size classes with a cell not yet measured.
fn sizes_left(config: &RunConfig, is_done: impl Fn(&CellKey) -> bool) -> Vec<DatasetSpec> {
    let plan = Plan::of(config);
    plan.sizes()
        .iter()
        .copied()
        .filter(|&spec| plan.cells_at(spec).any(|c| !is_done(&c.key())))
        .collect()
}

/// A run's outlook before it starts (its own, or a dry run's): its cells, those an
/// earlier part measured (`is_done`), the presets' time for the rest, and the loads
/// still to make, from the loads recorded (`rates`), else each store's own figures.
pub(super) async fn outlook(
    config: &RunConfig,
    is_done: impl Fn(&CellKey) -> bool,
    rates: &LoadRates,
) -> Outlook {
    let plan = Plan::of(config);
    let left: Vec<_> = plan.cells().iter().filter(|c| !is_done(&c.key())).collect();
    let measuring = left.iter().fold(Estimate::default(), |sum, c| {
        sum + Plan::estimate(config, c)
    });
    let at = config.locations();
    let mut loads = LoadsOutlook::default();
    let wanted = datasets_left(config, &is_done);
    for spec in sizes_left(config, &is_done) {
        let mut seconds = 0.0;
        for kind in Wanted::Only(&wanted).stores_at(&stores_for(&config.engines), spec) {
            let rows = match crate::load::state_at_a_glance(&mut kind.open(&at, spec)).await {
                Ok(DatasetState::Complete) => 0,
                Ok(DatasetState::Partial { rows_done }) => spec.rows.saturating_sub(rows_done),
                Ok(DatasetState::Absent) | Err(_) => spec.rows,
            };
            if rows == 0 {
                continue;
            }
            loads.datasets += 1;
            loads.bytes += rows * spec.mean_blob_bytes();
            // The disk plan's figures: a store with no load recorded here is
            // estimated by its own cost (SeaweedFS's 1 KiB is most of a full run).
            seconds += match rates.seconds(kind, spec.mean_blob_bytes(), rows) {
                Some(s) => s,
                None => {
                    let name = format!("{} {}", kind.name(), spec.size_label());
                    loads.from_store_figures.push(name);
                    kind.load_cost()
                        .seconds(rows, rows * spec.mean_blob_bytes())
                }
            };
        }
        loads.seconds += seconds;
        loads.per_size.push((spec.size, seconds));
    }
    Outlook {
        shape: format!(
            "{} size(s) × {} repeat(s) × {} engine(s) × {} cache state(s)",
            plan.sizes().len(),
            config.repeat,
            config.engines.len(),
            config.cache.len()
        ),
        cells: plan.cells().len(),
        done_before: plan.cells().len() - left.len(),
        measuring,
        loads,
    }
}
