//! Which datasets stay on disk once their size class is measured, where the disk
//! cannot hold every size class at once but can hold one.

use crate::db::registry::StoreKind;

use super::{Rooms, cell, size_total, slack_bytes};

/// Which datasets stay on disk once their size class is measured, where the disk
/// cannot hold every size class at once but can hold one (`Rooms::keep_plan`). The
/// run goes size class by size class; what is kept is there for the next run, which
/// does not load it again.
#[derive(Debug, Clone, PartialEq)]
pub struct KeepPlan {
    /// (store, size class index): kept after measuring.
    pub keep: Vec<(StoreKind, usize)>,
    /// (store, size class index): dropped after measuring.
    pub drop: Vec<(StoreKind, usize)>,
    /// Per file system: its free bytes, what every size class at once would need, and
    /// the plan's peak (at which size class index).
    pub rooms: Vec<PlannedRoom>,
    /// The size class indices in the order they are measured (`Rooms::order`).
    pub order: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRoom {
    pub label: String,
    pub available: u64,
    pub all_at_once: u64,
    pub peak: u64,
    pub peak_at: usize,
}

impl KeepPlan {
    pub fn keeps(&self, store: StoreKind, size_index: usize) -> bool {
        self.keep.contains(&(store, size_index))
    }
}

impl Rooms {
    /// Keep the datasets dearest to load again (`cost`: seconds to load a store's
    /// size class), as far as each file system allows, the size classes measured in
    /// `order` (`Rooms::order`): loading the one at step `j` must fit beside what is
    /// kept of the steps before it, less what was dropped of those already on disk,
    /// with the slack kept free. The last size class is kept whole (nothing is loaded
    /// after it). Greedy, dearest first. Call where `check(true)` passed: one size
    /// class at a time fits.
    pub fn keep_plan(&self, sizes: usize, cost: impl Fn(StoreKind, usize) -> f64) -> KeepPlan {
        let order = self.order(sizes);
        let step_of = |i: usize| order.iter().position(|&o| o == i).unwrap_or(i);
        let mut plan = KeepPlan {
            keep: Vec::new(),
            drop: Vec::new(),
            rooms: Vec::new(),
            order: order.clone(),
        };
        for room in &self.rooms {
            // base[j]: what step j adds to the disk as it is now, every earlier step's
            // datasets dropped (those already there freeing their bytes).
            let mut freed = 0i128;
            let base: Vec<i128> = order
                .iter()
                .map(|&i| {
                    let b = size_total(&room.needed, i) as i128 - freed;
                    freed += size_total(&room.on_disk, i) as i128;
                    b
                })
                .collect();
            // Keeping a dataset past its step holds what it added and what was there.
            let bytes = |store: StoreKind, i: usize| -> u64 {
                cell(&room.needed, store, i) + cell(&room.on_disk, store, i)
            };
            let mut candidates: Vec<(StoreKind, usize)> = room
                .needed
                .iter()
                .chain(&room.on_disk)
                .map(|(store, _)| *store)
                .fold(Vec::new(), |mut stores, s| {
                    if !stores.contains(&s) {
                        stores.push(s);
                    }
                    stores
                })
                .into_iter()
                .flat_map(|store| (0..sizes).map(move |i| (store, i)))
                .collect();
            let Some(available) = room.available else {
                plan.keep.extend(candidates); // Its free space is unknown: not planned.
                continue;
            };
            // A step that loads holds its loads' scratch too (RocksDB's WAL), once.
            let scratch: Vec<i128> = order
                .iter()
                .map(|&i| room.scratch_at(Some(i)) as i128)
                .collect();
            let peak =
                |kept: &[i128], j: usize| -> u64 { (base[j] + kept[j] + scratch[j]).max(0) as u64 };
            // kept[j]: bytes kept of the steps before j.
            let mut kept = vec![0i128; sizes + 1];
            let fits = |kept: &[i128]| {
                (0..sizes).all(|j| peak(kept, j) + slack_bytes(peak(kept, j)) <= available)
            };
            candidates.sort_by(|a, b| {
                cost(b.0, b.1)
                    .total_cmp(&cost(a.0, a.1))
                    .then(bytes(a.0, a.1).cmp(&bytes(b.0, b.1)))
            });
            for (store, i) in candidates {
                let (b, step) = (bytes(store, i), step_of(i));
                if step + 1 == sizes || b == 0 {
                    plan.keep.push((store, i));
                    continue;
                }
                let mut trial = kept.clone();
                for k in trial.iter_mut().skip(step + 1) {
                    *k += b as i128;
                }
                if fits(&trial) {
                    kept = trial;
                    plan.keep.push((store, i));
                } else {
                    plan.drop.push((store, i));
                }
            }
            let (peak_step, peak) = (0..sizes)
                .map(|j| (j, peak(&kept, j)))
                .max_by_key(|&(_, p)| p)
                .unwrap_or((0, 0));
            plan.rooms.push(PlannedRoom {
                label: room.label.clone(),
                available,
                all_at_once: (0..sizes).map(|i| size_total(&room.needed, i)).sum(),
                peak,
                peak_at: order.get(peak_step).copied().unwrap_or(0),
            });
        }
        plan.keep.sort();
        plan.drop.sort();
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_keeps_the_dearest_datasets_the_disk_allows_and_drops_the_rest() {
        let [sqlite, fs, floor] = ["sqlite", "fs", "floor"].map(|n| StoreKind::named(n).unwrap());
        // Three size classes of 10 GiB per store, 70 GiB free: all at once needs 90.
        let mut rooms = Rooms::on_one_disk(70 << 30, &[sqlite, fs, floor]);
        for i in 0..3 {
            for store in [sqlite, fs, floor] {
                rooms.add(store, i, 10 << 30);
            }
        }
        assert!(rooms.check(false).is_err() && rooms.check(true).is_ok());
        // fs's small files are dearest, then SQLite; the floor is cheap.
        let cost = |store: StoreKind, i: usize| {
            let per_store = if store == fs {
                100.0
            } else if store == sqlite {
                10.0
            } else {
                1.0
            };
            per_store / (i + 1) as f64
        };
        let plan = rooms.keep_plan(3, cost);
        let names = |list: &[(StoreKind, usize)]| -> Vec<String> {
            list.iter()
                .map(|(s, i)| format!("{} {i}", s.name()))
                .collect()
        };
        // Size 2 (the last) is kept whole; before it, 70 GiB less 30 GiB for size 2
        // less the slack leaves room for three more 10 GiB datasets: fs 0, fs 1 and
        // SQLite 0 (the dearest), never the floor.
        assert_eq!(
            names(&plan.keep),
            ["sqlite 0", "sqlite 2", "fs 0", "fs 1", "fs 2", "floor 2"]
        );
        assert_eq!(names(&plan.drop), ["sqlite 1", "floor 0", "floor 1"]);
        let room = &plan.rooms[0];
        assert_eq!(room.all_at_once, 90 << 30);
        assert_eq!((room.peak, room.peak_at), (60 << 30, 2));
        assert!(room.peak + slack_bytes(room.peak) <= 70 << 30);
        // Unknown free space: nothing is planned away.
        rooms.rooms[0].available = None;
        assert!(rooms.keep_plan(3, cost).drop.is_empty());
    }
}
