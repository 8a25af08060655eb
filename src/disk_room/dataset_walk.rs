//! One dataset at a time, where the disk cannot hold even one size class: each
//! store's dataset of a size class is loaded, that store's engines measured, and the
//! dataset dropped before the next store's loads. The full profile's 512 KiB class
//! took 67.85 GiB at its peak with 16 engines on a machine with 70.13 GiB free; one
//! more store and `cargo bench` refused there, with nothing measured.

use crate::db::registry::StoreKind;
use crate::error::InputError;
use crate::size::format_bytes_approx;

use super::{Room, Rooms, cell, on_disk_first, slack_bytes};

/// The order a run loads, measures and drops its datasets, one at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetWalk {
    /// Size class indices in the order they are measured (`Rooms::order`).
    pub order: Vec<usize>,
    /// Per size class index: its stores in the order they are loaded and measured,
    /// those already on disk first (measured and dropped, they make room).
    pub stores: Vec<Vec<StoreKind>>,
    /// Each file system whose free space is known and that the walk loads onto.
    pub rooms: Vec<WalkedRoom>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WalkedRoom {
    pub label: String,
    pub available: u64,
    /// The most the walk adds at once, over the disk as it is now.
    pub peak: u64,
    /// (store, size class index) whose load is that peak.
    pub peak_at: (StoreKind, usize),
    /// What one size class at a time would add at its largest.
    pub one_size_at_a_time: u64,
}

impl DatasetWalk {
    /// The stores of size class number `size_index` in the order they are walked.
    pub fn stores_of(&self, size_index: usize) -> &[StoreKind] {
        self.stores.get(size_index).map_or(&[], Vec::as_slice)
    }
}

impl Rooms {
    /// The walk over `sizes` size classes one dataset at a time, or a refusal with
    /// the numbers where even the largest single load does not fit beside what is on
    /// disk. `size_label` names a size class by its index.
    pub fn dataset_walk(
        &self,
        sizes: usize,
        size_label: impl Fn(usize) -> String,
    ) -> Result<DatasetWalk, InputError> {
        let mut walk = DatasetWalk {
            order: self.order(sizes),
            stores: (0..sizes).map(|i| self.stores_in_order(i)).collect(),
            rooms: Vec::new(),
        };
        for room in &self.rooms {
            let Some((peak, (store, i))) = room.walk_peak(&walk) else {
                continue;
            };
            let at = format!("at the most, {}'s {} alone", store.name(), size_label(i));
            let Some(available) = room.available else {
                say!(
                    "note: the free space of {} is unavailable: its loads ({at}: {}) are not checked against it",
                    room.label,
                    format_bytes_approx(peak)
                );
                continue;
            };
            let slack = slack_bytes(peak);
            if peak + slack > available {
                return Err(InputError::NotEnoughDisk {
                    room: room.label.clone(),
                    needed: format_bytes_approx(peak),
                    breakdown: at,
                    slack: format_bytes_approx(slack),
                    available: format_bytes_approx(available),
                    stepwise: true,
                });
            }
            walk.rooms.push(WalkedRoom {
                label: room.label.clone(),
                available,
                peak,
                peak_at: (store, i),
                one_size_at_a_time: room.needed(true, &walk.order),
            });
        }
        Ok(walk)
    }

    /// The run's stores at size class `i`: those whose dataset is there whole first,
    /// then in part (most bytes first), then the rest, each group in the run's order
    /// (as `order` does for size classes, and for the same reason).
    fn stores_in_order(&self, i: usize) -> Vec<StoreKind> {
        let mut placed = self.of_store.clone();
        placed.sort_by_key(|&(store, at)| {
            let room = &self.rooms[at];
            on_disk_first(cell(&room.needed, store, i), cell(&room.on_disk, store, i))
        });
        placed.into_iter().map(|(store, _)| store).collect()
    }
}

impl Room {
    /// The most that loading one dataset at a time in `walk`'s order adds here, each
    /// dropped once measured (those already here freeing their bytes too), and whose
    /// load that is; None where the walk loads nothing here.
    fn walk_peak(&self, walk: &DatasetWalk) -> Option<(u64, (StoreKind, usize))> {
        let (mut usage, mut peak) = (0i128, None::<(i128, (StoreKind, usize))>);
        for &i in &walk.order {
            for &store in walk.stores_of(i) {
                let needed = cell(&self.needed, store, i) as i128;
                let there = cell(&self.on_disk, store, i) as i128;
                if needed > 0 {
                    usage += needed;
                    let at_most = usage + self.scratch_of(store) as i128;
                    if peak.is_none_or(|(p, _)| at_most > p) {
                        peak = Some((at_most, (store, i)));
                    }
                }
                usage -= needed + there;
            }
        }
        peak.map(|(p, at)| (p.max(0) as u64, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(stores: &[StoreKind]) -> Vec<&'static str> {
        stores.iter().map(|s| s.name()).collect()
    }

    #[test]
    fn a_disk_too_small_for_one_size_class_is_walked_one_dataset_at_a_time() {
        let [sqlite, fs, floor] = ["sqlite", "fs", "floor"].map(|n| StoreKind::named(n).unwrap());
        // Two size classes of 3 GiB per store: one size class needs 9 GiB, 5 GiB free.
        let mut rooms = Rooms::on_one_disk(5 << 30, &[sqlite, fs, floor]);
        for i in 0..2 {
            for store in [sqlite, fs, floor] {
                rooms.add(store, i, 3 << 30);
            }
        }
        assert!(rooms.check(true).is_err());
        let label = |i: usize| ["1KiB", "8KiB"][i].to_string();
        let walk = rooms.dataset_walk(2, label).unwrap();
        assert_eq!(walk.order, [0, 1]);
        assert_eq!(names(walk.stores_of(0)), ["sqlite", "fs", "floor"]);
        let room = &walk.rooms[0];
        assert_eq!((room.peak, room.peak_at), (3 << 30, (sqlite, 0)));
        assert_eq!(room.one_size_at_a_time, 9 << 30);
        // fs's 8 KiB is on disk already (the last run kept it) and 1 GiB is free: it
        // goes first in its class and its drop makes room; its size class first too.
        rooms.rooms[0].needed.iter_mut().for_each(|(s, b)| {
            if *s == fs {
                b[1] = 0;
            }
        });
        rooms.found(fs, 1, 3 << 30);
        rooms.rooms[0].available = Some((3 << 30) + (200 << 20));
        let walk = rooms.dataset_walk(2, label).unwrap();
        assert_eq!(walk.order, [1, 0]);
        assert_eq!(names(walk.stores_of(1)), ["fs", "sqlite", "floor"]);
        // Measured and dropped first, fs's 8 KiB frees what each load after it adds.
        assert_eq!(walk.rooms[0].peak, 0);
        // Not even one dataset fits: refused, naming it (7 GiB, 3 of them freed).
        rooms.add(floor, 0, 4 << 30);
        let refused = rooms.dataset_walk(2, label).unwrap_err().to_string();
        assert!(
            refused.contains("4.00GiB more there (at the most, floor's 1KiB alone)")
                && refused.contains("Even one dataset at a time does not fit"),
            "{refused}"
        );
    }
}
