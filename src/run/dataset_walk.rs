//! One dataset at a time, where the disk cannot hold even one size class
//! (`disk_room::DatasetWalk`): in each size class, each store's dataset is loaded
//! just before the first of its engines' cells and dropped after the last, so the
//! disk holds one dataset beside whatever the run found there.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::dataset::DatasetSpec;
use crate::db::registry::StoreKind;
use crate::size::format_bytes_approx;

use super::plan::{Cell, Plan, format_duration};
use super::{Progress, Run};

impl Run {
    /// Go dataset by dataset where `rooms` cannot take one size class at a time, and
    /// say so with the arithmetic before loading; refused, with the numbers, where
    /// even the largest single dataset does not fit.
    pub(super) fn walk_datasets(
        &mut self,
        rooms: &crate::disk_room::Rooms,
        sizes: Vec<DatasetSpec>,
    ) -> Result<()> {
        let walk = rooms.dataset_walk(sizes.len(), |i| sizes[i].size_label())?;
        let mut lines: Vec<String> = walk
            .rooms
            .iter()
            .map(|room| {
                let (store, i) = room.peak_at;
                format!(
                    "disk plan: {} has {} free; one size class at a time would add {} at its largest, so the run goes dataset by dataset: each store's dataset is loaded, its engines measured, and it is dropped before the next one loads: the peak is {} (loading {} {}), with {} kept free",
                    room.label,
                    format_bytes_approx(room.available),
                    format_bytes_approx(room.one_size_at_a_time),
                    format_bytes_approx(room.peak),
                    store.name(),
                    sizes[i].size_label(),
                    format_bytes_approx(crate::disk_room::slack_bytes(room.peak)),
                )
            })
            .collect();
        let loads: f64 = walk
            .order
            .iter()
            .flat_map(|&i| walk.stores_of(i).iter().map(move |&s| (s, i)))
            .map(|(store, i)| self.load_plan.load_seconds(store, sizes[i]))
            .sum();
        lines.push(format!(
            "disk plan: nothing is kept for the next run, which loads every dataset again (about {} here); the engines of one store are measured together in each size class (--repeat's rotation included). Room for one size class (`blobrace env` lists what takes the disk) keeps the datasets dearest to load again",
            format_duration(Duration::from_secs_f64(loads))
        ));
        self.progress(Progress::DiskPlan(&lines));
        if let Some(part) = self.results.parts.last_mut() {
            part.disk_plan = lines;
        }
        self.measure_in_order(&walk.order, &sizes);
        self.load_plan.walk(walk, sizes);
        Ok(())
    }

    /// `spec`'s cells in the order they are measured: the plan's, or, one dataset at a
    /// time, grouped by store in the walk's order (each group in the plan's order).
    pub(super) fn cells_in_order<'p>(&self, plan: &'p Plan, spec: DatasetSpec) -> Vec<&'p Cell> {
        let mut cells: Vec<&Cell> = plan.cells_at(spec).collect();
        if let Some(stores) = self.load_plan.walked_stores(spec) {
            cells.sort_by_key(|c| stores.iter().position(|&s| s == c.engine.store()));
        }
        cells
    }

    /// One dataset at a time: load `store`'s dataset of `spec` before its engines'
    /// cells. A load that fails, or no longer finds room (another program took the
    /// disk), fails that store's cells alone.
    pub(super) async fn before_dataset(
        &mut self,
        spec: DatasetSpec,
        store: StoreKind,
    ) -> Result<()> {
        let mut mark = Instant::now();
        self.say_where_it_stands(&format!(
            "it was loading {} {}",
            store.name(),
            spec.size_label()
        ));
        let failed = self.load_one_dataset(store, spec, &mut mark).await?;
        self.loads_ended(failed, mark)
    }

    /// One dataset at a time: drop `store`'s dataset of `spec` once its cells are measured.
    pub(super) async fn after_dataset(
        &mut self,
        spec: DatasetSpec,
        store: StoreKind,
    ) -> Result<()> {
        self.drop_dataset(store, spec, "the disk plan: one dataset at a time")
            .await
    }
}
