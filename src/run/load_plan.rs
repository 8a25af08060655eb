//! A run's plan of its loads: what each load will take (the rates of the loads recorded
//! in the results directory, learnt from this run's as they land), the loads left per
//! size class, and, where the disk cannot hold every dataset at once, which datasets
//! are kept once measured (`KeepPlan`) or loaded and dropped one at a time
//! (`DatasetWalk`), and the order of the size classes that follows from either.

use crate::dataset::DatasetSpec;
use crate::db::registry::StoreKind;
use crate::disk_room::{DatasetWalk, KeepPlan};

use super::outlook::LoadsOutlook;
use super::plan::Plan;
use super::resume::LoadRates;

pub(super) struct LoadPlan {
    /// Rows a second each store loaded at each size, as recorded in the results
    /// directory and by this run's loads.
    rates: LoadRates,
    /// The loads still to make when the run started, per size (`outlook`).
    pub(super) outlook: LoadsOutlook,
    /// Where the disk cannot hold every dataset at once: which are kept after their
    /// size class is measured (the sizes it indexes).
    keep: Option<(KeepPlan, Vec<DatasetSpec>)>,
    /// Where the disk cannot hold even one size class: the order each store's dataset
    /// is loaded, measured and dropped in (the sizes it indexes).
    walk: Option<(DatasetWalk, Vec<DatasetSpec>)>,
    /// The size classes in the order they are measured, where loading them one at a
    /// time put those already on disk first; empty: the plan's order.
    size_order: Vec<DatasetSpec>,
}

impl LoadPlan {
    pub(super) fn new(rates: LoadRates) -> Self {
        Self {
            rates,
            outlook: LoadsOutlook::default(),
            keep: None,
            walk: None,
            size_order: Vec::new(),
        }
    }

    /// Seconds to load `store`'s whole dataset of `spec`: from the loads recorded in the
    /// results directory, else from the store's own figure (`Database::load_cost`).
    pub(super) fn load_seconds(&self, store: StoreKind, spec: DatasetSpec) -> f64 {
        self.rates
            .seconds(store, spec.mean_blob_bytes(), spec.rows)
            .unwrap_or_else(|| store.load_cost().seconds(spec.rows, spec.bytes()))
    }

    pub(super) fn rates(&self) -> &LoadRates {
        &self.rates
    }

    pub(super) fn learn(&mut self, store: StoreKind, size_bytes: u64, rows: u64, seconds: f64) {
        self.rates.learn(store, size_bytes, rows, seconds);
    }

    /// Loads go size class by size class, whether every one is dropped after it is
    /// measured (`--drop-after`), some are kept (`keep`), or each dataset is loaded and
    /// dropped in turn (`walk`).
    pub(super) fn one_size_at_a_time(&self, drop_after: bool) -> bool {
        drop_after || self.keep.is_some() || self.walk.is_some()
    }

    /// Whether the run loads and drops one dataset at a time.
    pub(super) fn walks(&self) -> bool {
        self.walk.is_some()
    }

    pub(super) fn keep(&mut self, plan: KeepPlan, sizes: Vec<DatasetSpec>) {
        self.keep = Some((plan, sizes));
    }

    pub(super) fn walk(&mut self, walk: DatasetWalk, sizes: Vec<DatasetSpec>) {
        self.walk = Some((walk, sizes));
    }

    /// Measure `sizes` in `order`; the sizes in that order.
    pub(super) fn order_sizes(&mut self, order: &[usize], sizes: &[DatasetSpec]) -> &[DatasetSpec] {
        self.size_order = order.iter().map(|&i| sizes[i]).collect();
        &self.size_order
    }

    /// The size classes of `plan` in the order they are measured: the plan's, unless
    /// loading one at a time put those already on disk first (`order_sizes`). Those it
    /// did not order (measured whole by earlier parts) keep their places ahead, so a
    /// continued run's cells keep their numbers.
    pub(super) fn sizes_in_order(&self, plan: &Plan) -> Vec<DatasetSpec> {
        let mut sizes: Vec<DatasetSpec> = plan
            .sizes()
            .iter()
            .copied()
            .filter(|s| !self.size_order.contains(s))
            .collect();
        sizes.extend(self.size_order.iter().filter(|s| plan.sizes().contains(s)));
        sizes
    }

    /// Whether `kind`'s dataset of `spec` stays once measured: every one unless
    /// `--drop-after`; with a plan of what to keep, all but those it drops (a dataset no
    /// cell of this part read is not in the plan, and stays).
    pub(super) fn keeps(&self, kind: StoreKind, spec: DatasetSpec, drop_after: bool) -> bool {
        match &self.keep {
            Some((plan, sizes)) => sizes
                .iter()
                .position(|s| *s == spec)
                .is_none_or(|i| !plan.drop.contains(&(kind, i))),
            None => !drop_after,
        }
    }

    /// One dataset at a time: the stores of `spec` in the order they are walked.
    pub(super) fn walked_stores(&self, spec: DatasetSpec) -> Option<&[StoreKind]> {
        let (walk, sizes) = self.walk.as_ref()?;
        let i = sizes.iter().position(|s| *s == spec)?;
        Some(walk.stores_of(i))
    }
}
